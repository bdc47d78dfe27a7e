// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * tests/lib/legion_legacy.c, the legacy viewer's data files that
 * docs/legion.md's pictures are drawn from: a profile written with
 * optrace's writer (an operation on the issuing thread, two overlapping
 * tasks on an OpenMP processor, one that waited, a GPU task), laid out and
 * compared with what legion_prof legacy writes for it at legion-25.06.0.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "legion_legacy.h"
#include "legion_read.h"
#include "legion_write.h"
#include "testlib.h"
#include "output/legion_prof.h"

struct ids {
	uint64_t op, first, second, gpu_task;
};

static void write_profile(const char *path, struct ids *ids)
{
	struct legion_prof_kv pairs[] = { { "mode", "deferred" }, { "op", "demo.add" } };
	struct legion_prof_wait wait = { 2500, 3000, 3500, 0 };
	struct legion_prof_task task;
	uint64_t cpu, omp, gpu, provenance;
	struct legion_prof *prof;

	ck_assert_int_eq(legion_prof_open(&prof, path, &fixed_options), 0);
	ck_assert_int_eq(legion_prof_proc_desc(prof, LEGION_PROF_PROC_CPU, NULL, &cpu), 0);
	ck_assert_int_eq(legion_prof_proc_desc(prof, LEGION_PROF_PROC_OPENMP, NULL, &omp), 0);
	ck_assert_int_eq(legion_prof_proc_desc(prof, LEGION_PROF_PROC_GPU, NULL, &gpu), 0);
	ck_assert_int_eq(legion_prof_task_kind(prof, 1, "demo.add"), 0);
	ck_assert_int_eq(legion_prof_task_variant(prof, 1, 1, "deferred"), 0);
	ck_assert_int_eq(legion_prof_task_kind(prof, 2, "BinaryOp"), 0);
	ck_assert_int_eq(legion_prof_task_variant(prof, 2, 1, "omp"), 0);
	ck_assert_int_eq(legion_prof_task_variant(prof, 2, 2, "gpu"), 0);
	ck_assert_int_eq(legion_prof_provenance_fields(prof, "demo.add", pairs, 2, &provenance), 0);

	ck_assert_int_eq(legion_prof_new_op(prof, &ids->op), 0);
	ck_assert_int_eq(legion_prof_operation_instance(prof, ids->op, LEGION_PROF_NO_PARENT,
							LEGION_PROF_OP_KIND_TASK, provenance),
			 0);
	task = (struct legion_prof_task){ .op_id = ids->op,
					  .task_id = 1,
					  .variant_id = 1,
					  .proc_id = cpu,
					  .create = 1000,
					  .ready = 1000,
					  .start = 1000,
					  .stop = 1800 };
	ck_assert_int_eq(legion_prof_task_info(prof, &task, NULL, 0), 0);

	ck_assert_int_eq(legion_prof_new_op(prof, &ids->first), 0);
	ck_assert_int_eq(legion_prof_operation_instance(prof, ids->first, ids->op, 40, 0), 0);
	task = (struct legion_prof_task){ .op_id = ids->first,
					  .task_id = 2,
					  .variant_id = 1,
					  .proc_id = omp,
					  .create = 1100,
					  .ready = 1200,
					  .start = 2000,
					  .stop = 6000 };
	ck_assert_int_eq(legion_prof_task_info(prof, &task, &wait, 1), 0);

	/* overlaps the first on the same processor: stacked a level below */
	ck_assert_int_eq(legion_prof_new_op(prof, &ids->second), 0);
	ck_assert_int_eq(legion_prof_operation_instance(prof, ids->second, ids->op, 40, 0), 0);
	task = (struct legion_prof_task){ .op_id = ids->second,
					  .task_id = 2,
					  .variant_id = 1,
					  .proc_id = omp,
					  .create = 1100,
					  .ready = 1300,
					  .start = 3000,
					  .stop = 4000 };
	ck_assert_int_eq(legion_prof_task_info(prof, &task, NULL, 0), 0);

	ck_assert_int_eq(legion_prof_new_op(prof, &ids->gpu_task), 0);
	ck_assert_int_eq(legion_prof_operation_instance(prof, ids->gpu_task, ids->op, 40, 0), 0);
	task = (struct legion_prof_task){ .op_id = ids->gpu_task,
					  .task_id = 2,
					  .variant_id = 2,
					  .proc_id = gpu,
					  .create = 1100,
					  .ready = 1400,
					  .start = 1500,
					  .stop = 1700,
					  .gpu_start = 5000,
					  .gpu_stop = 9000 };
	ck_assert_int_eq(legion_prof_gpu_task_info(prof, &task, NULL, 0), 0);
	ck_assert_int_eq(legion_prof_close(prof), 0);
}

static char *read_in(const char *dir, const char *name)
{
	char path[4096];
	char *text;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	text = read_file(path);
	ck_assert_msg(text, "%s was not written", path);
	return text;
}

/* The line of text that starts with start, or NULL. */
static const char *line_starting(const char *text, const char *start)
{
	for (const char *line = text; line && *line; line = strchr(line, '\n'), line += !!line)
		if (!strncmp(line, start, strlen(start)))
			return line;
	return NULL;
}

static void assert_line(const char *text, const char *expected)
{
	size_t n = strlen(expected);
	const char *line = line_starting(text, expected);

	ck_assert_msg(line && (line[n] == '\n' || !line[n]), "no line \"%s\" in:\n%s", expected,
		      text);
}

START_TEST(test_legacy_files)
{
	struct scratch scratch = { 0 };
	struct legion_summary summary = { 0 };
	struct ids ids;
	char why[512], dir[4096], line[512], *text;

	write_profile(scratch_path(&scratch, "prof_0"), &ids);
	ck_assert_msg(
		!legion_summary_read(scratch.path, LEGION_PROF_VERSION, &summary, why, sizeof(why)),
		"%s", why);
	snprintf(dir, sizeof(dir), "%s", scratch_path(&scratch, "legacy"));
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	ck_assert_msg(!legion_legacy_write(dir, &summary, 1, why, sizeof(why)), "%s", why);
	/* a second time into the same folder: it refuses, as legion_prof does */
	ck_assert_int_eq(legion_legacy_write(dir, &summary, 1, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "cannot create"));

	/* processors in id order, a GPU as its Device and Host rows, levels at least 1 */
	text = read_in(dir, "legion_prof_processor.tsv");
	ck_assert_str_eq(text, "full_text\ttext\ttsv\tlevels\n"
			       "CPU Processor 0x1d00000000000000\tCPU Proc 0\t"
			       "tsv/Proc_0x1d00000000000000.tsv\t1\n"
			       "OpenMP Processor 0x1d00000000000001\tOpenMP Proc 1\t"
			       "tsv/Proc_0x1d00000000000001.tsv\t2\n"
			       "GPU Device Processor 0x1d00000000000002\tGPU Device Proc 2\t"
			       "tsv/Proc_0x1d00000000000002_Device.tsv\t1\n"
			       "GPU Host Processor 0x1d00000000000002\tGPU Host Proc 2\t"
			       "tsv/Proc_0x1d00000000000002_Host.tsv\t1\n");
	free(text);

	/*
	 * The OpenMP rows: the first task on the top level, cut at its wait
	 * (waiting 0.15, ready 0.45), the one it overlaps a level below; the
	 * initiation is the operation, times are microseconds.
	 */
	text = read_in(dir, "tsv/Proc_0x1d00000000000001.tsv");
	ck_assert_ptr_nonnull(line_starting(text, "level\tlevel_ready\tready\tstart\tend\tcolor\t"
						  "opacity\ttitle\tinitiation\tin\tout\tchildren\t"
						  "parents\tprof_uid\top_id\tinstances\n"));
	snprintf(line, sizeof(line), "2\t2\t2.000\t2.000\t2.500\t#");
	ck_assert_ptr_nonnull(line_starting(text, line));
	snprintf(line, sizeof(line), "\t1.0\tBinaryOp [omp] <%llu>\t%llu\t",
		 (unsigned long long)ids.first, (unsigned long long)ids.op);
	ck_assert_ptr_nonnull(strstr(text, line));
	snprintf(line, sizeof(line), "\t0.15\tBinaryOp [omp] <%llu> (waiting)\t",
		 (unsigned long long)ids.first);
	ck_assert_ptr_nonnull(strstr(text, line));
	snprintf(line, sizeof(line), "\t0.45\tBinaryOp [omp] <%llu> (ready)\t",
		 (unsigned long long)ids.first);
	ck_assert_ptr_nonnull(strstr(text, line));
	ck_assert_ptr_nonnull(line_starting(text, "2\t2\t3.500\t3.500\t6.000\t#"));
	ck_assert_ptr_nonnull(line_starting(text, "1\t1\t1.300\t3.000\t4.000\t#"));
	free(text);

	/* the kernel on the Device row, the launch on the Host row */
	text = read_in(dir, "tsv/Proc_0x1d00000000000002_Device.tsv");
	snprintf(line, sizeof(line), "GPU Kernel(s) for BinaryOp [gpu] <%llu>\t\t",
		 (unsigned long long)ids.gpu_task);
	ck_assert_ptr_nonnull(strstr(text, line));
	ck_assert_ptr_nonnull(line_starting(text, "1\t1\t5.000\t5.000\t9.000\t#"));
	free(text);
	text = read_in(dir, "tsv/Proc_0x1d00000000000002_Host.tsv");
	ck_assert_ptr_nonnull(line_starting(text, "1\t1\t1.400\t1.500\t1.700\t#"));
	free(text);

	/* operations in id order: desc, processor, level + 2, the provenance quoted as TSV */
	text = read_in(dir, "legion_prof_ops.tsv");
	snprintf(line, sizeof(line),
		 "%llu\t\tdemo.add [deferred] <%llu>\tCPU Processor 0x1d00000000000000\t2\t"
		 "\"[\"\"demo.add$op,demo.add|mode,deferred,\"\", ",
		 (unsigned long long)ids.op, (unsigned long long)ids.op);
	ck_assert_msg(line_starting(text, line), "no \"%s\" in:\n%s", line, text);
	snprintf(line, sizeof(line),
		 "%llu\t%llu\tBinaryOp [omp] <%llu>\tOpenMP Processor 0x1d00000000000001\t3\t",
		 (unsigned long long)ids.second, (unsigned long long)ids.op,
		 (unsigned long long)ids.second);
	assert_line(text, line);
	free(text);

	/* busy OpenMP processors over all of them: idle while the task waits */
	text = read_in(dir, "tsv/0 (OpenMP)_util.tsv");
	ck_assert_str_eq(text, "time\tcount\n0.000\t0.00\n2.000\t1.00\n2.500\t0.00\n"
			       "3.000\t1.00\n6.000\t0.00\n");
	free(text);
	text = read_in(dir, "json/utils.json");
	ck_assert_str_eq(text, "{\"0\":[\"0 (GPU Device)\",\"0 (GPU Host)\",\"0 (CPU)\","
			       "\"0 (OpenMP)\"]}\n");
	free(text);
	text = read_in(dir, "json/scale.json");
	ck_assert_str_eq(text, "{\"start\":0.0,\"end\":9.1,\"stats_levels\":4,\"max_level\":10}\n");
	free(text);

	legion_summary_free(&summary);
	scratch_free(&scratch);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("legion_legacy");
	TCase *tc = tcase_create("files");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_legacy_files);
	suite_add_tcase(suite, tc);

	return run_suite(suite);
}
