// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Profiles written with optrace's Legion Prof writer for its tests: the
 * shared/legion/ reference files, scratch files, and the small profile of
 * one process that most tests write and read back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "legion_write.h"
#include "testlib.h"

const char *shared_legion_file(const char *name)
{
	const char *shared = getenv("OPTRACE_SHARED_DIR");
	static char path[4096];

	if (shared && *shared) {
		snprintf(path, sizeof(path), "%s/legion/%s", shared, name);
		return path;
	}
	snprintf(path, sizeof(path), "%s/../../shared/legion/%s", OPTRACE_BUILD_DIR, name);
	if (access(path, R_OK))
		snprintf(path, sizeof(path), "../shared/legion/%s", name);
	return path;
}

const char *scratch_path(struct scratch *scratch, const char *name)
{
	if (!scratch->dir) {
		scratch->dir = make_temp_dir();
		ck_assert_ptr_nonnull(scratch->dir);
	}
	snprintf(scratch->path, sizeof(scratch->path), "%s/%s", scratch->dir, name);
	return scratch->path;
}

void scratch_free(struct scratch *scratch)
{
	rm_rf(scratch->dir);
	free(scratch->dir);
}

const struct legion_prof_options fixed_options = {
	.hostname = "h",
	.host_id = 0x0102030405060708ULL,
	.process_id = 42,
	.zero_time_ns = 1000,
	.raw = true,
};

const struct profile_strings plain_strings = {
	.hostname = "node-a",
	.task_name = "demo.add_kernel",
	.variant_name = "fallback",
	.op_name = "demo.add",
	.mode = "deferred",
	.call_site = "main.c:12",
	.title = "demo.add [deferred; CPU×2 OMP×1 GPU×1] main.c:12",
	.helper_title = "demo.broadcast main.c:13",
	.meta_name = "optrace dispatch",
	.op_kind_name = "Index Task",
};

/*
 * What optrace export writes for one process: a Python thread holding the
 * top-level span, one range per operation (one with a nested helper), and
 * for each operation a task on two CPUs, an OpenMP processor and a GPU,
 * each with a JSON provenance; a wait; a meta-task on a Utility processor.
 */
static void write_small_profile(struct legion_prof *prof, const struct profile_strings *s)
{
	uint64_t python, cpu[2], omp, gpu, utility, top_op, op, provenance;
	struct legion_prof_task top = { 0 }, task;
	struct legion_prof_meta_task meta = { 0 };
	struct legion_prof_span *span;
	char json[LEGION_PROF_STRING_MAX + 1];
	struct legion_prof_kv pairs[] = {
		{ "op", s->op_name },
		{ "mode", s->mode },
		{ "fallback", s->variant_name },
		{ "call site", s->call_site },
	};
	struct legion_prof_wait wait = { 0 };

	ck_assert_int_eq(legion_prof_proc_desc(prof, LEGION_PROF_PROC_PYTHON, NULL, &python), 0);
	ck_assert_int_eq(legion_prof_proc_desc(prof, LEGION_PROF_PROC_CPU, NULL, &cpu[0]), 0);
	ck_assert_int_eq(legion_prof_proc_desc(prof, LEGION_PROF_PROC_CPU, NULL, &cpu[1]), 0);
	ck_assert_int_eq(legion_prof_proc_desc(prof, LEGION_PROF_PROC_OPENMP, NULL, &omp), 0);
	ck_assert_int_eq(legion_prof_proc_desc(prof, LEGION_PROF_PROC_GPU, NULL, &gpu), 0);
	ck_assert_int_eq(legion_prof_proc_desc(prof, LEGION_PROF_PROC_UTILITY, NULL, &utility), 0);
	ck_assert_int_eq(legion_prof_task_kind(prof, 1, "python main"), 0);
	ck_assert_int_eq(legion_prof_task_variant(prof, 1, 1, "python main"), 0);
	ck_assert_int_eq(legion_prof_task_kind(prof, 2, s->task_name), 0);
	ck_assert_int_eq(legion_prof_task_variant(prof, 2, 1, "cpu"), 0);
	ck_assert_int_eq(legion_prof_task_variant(prof, 2, 2, "omp"), 0);
	ck_assert_int_eq(legion_prof_task_variant(prof, 2, 3, "gpu"), 0);
	ck_assert_int_eq(legion_prof_task_variant(prof, 2, 4, s->variant_name), 0);
	ck_assert_int_eq(legion_prof_meta_desc(prof, 1, s->meta_name), 0);
	ck_assert_int_eq(legion_prof_op_desc(prof, 40, s->op_kind_name), 0);

	ck_assert_int_eq(legion_prof_new_op(prof, &top_op), 0);
	top = (struct legion_prof_task){
		.op_id = top_op, .task_id = 1, .variant_id = 1, .proc_id = python, .start = 100
	};
	ck_assert_int_eq(legion_prof_span_begin(prof, &top, &span), 0);
	ck_assert_int_eq(legion_prof_operation_instance(prof, top_op, LEGION_PROF_NO_PARENT,
							LEGION_PROF_OP_KIND_TASK, 0),
			 0);
	ck_assert_int_ge(legion_prof_provenance_json(json, sizeof(json), s->title, pairs, 4), 0);
	ck_assert_int_eq(legion_prof_provenance(prof, json, &provenance), 0);

	for (uint64_t i = 0, base = 1000; i < 4; i++, base += 10000) {
		ck_assert_int_eq(legion_prof_range_begin(span, base), 0);
		if (i == 1) {
			ck_assert_int_eq(legion_prof_range_begin(span, base + 100), 0);
			ck_assert_int_eq(legion_prof_range_end(span, s->helper_title, base + 200),
					 0);
		}
		for (uint32_t w = 0; w < 4; w++) {
			uint64_t procs[4] = { cpu[0], cpu[1], omp, gpu };

			ck_assert_int_eq(legion_prof_new_op(prof, &op), 0);
			ck_assert_int_eq(
				legion_prof_operation_instance(prof, op, top_op, 40, provenance),
				0);
			task = (struct legion_prof_task){
				.op_id = op,
				.task_id = 2,
				.variant_id = w == 1 ? 4 : w + 1,
				.proc_id = procs[w],
				.create = base + 300,
				.ready = base + 400,
				.start = base + 500,
				.stop = base + 7000,
				.gpu_start = base + 900,
				.gpu_stop = base + 6000,
				.creator = top.fevent,
			};
			wait = (struct legion_prof_wait){ base + 1000, base + 1500, base + 2000,
							  0 };
			if (w == 3)
				ck_assert_int_eq(legion_prof_gpu_task_info(prof, &task, NULL, 0),
						 0);
			else
				ck_assert_int_eq(legion_prof_task_info(prof, &task, &wait, w == 0),
						 0);
		}
		ck_assert_int_eq(legion_prof_range_end(span, s->title, base + 8000), 0);
	}
	meta = (struct legion_prof_meta_task){ .op_id = top_op,
					       .kind = 1,
					       .proc_id = utility,
					       .create = 10,
					       .ready = 20,
					       .start = 30,
					       .stop = 90,
					       .creator = top.fevent };
	ck_assert_int_eq(legion_prof_meta_info(prof, &meta), 0);
	ck_assert_int_eq(legion_prof_span_end(span, 50000), 0);
}

/* Writes the small profile with s to path and reads the file back. */
void small_profile_file(const char *path, const struct profile_strings *s, bool raw,
			uint32_t version, struct legion_blob *file)
{
	struct legion_prof_options options = fixed_options;
	struct legion_prof *prof;

	options.raw = raw;
	options.version = version;
	options.hostname = s->hostname;
	ck_assert_int_eq(legion_prof_open(&prof, path, &options), 0);
	write_small_profile(prof, s);
	ck_assert_int_eq(legion_prof_close(prof), 0);
	ck_assert_int_eq(legion_blob_read(path, !raw, file), 0);
}
