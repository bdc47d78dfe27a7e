// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Legion Prof writer against shared/legion/FORMAT.md: the preamble and
 * each record byte for byte, and whole profiles read back by the independent
 * reader of tests/lib/legion_read.c, written from FORMAT.md's layouts, which
 * checks every rule of §3.4.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "legion_popup.h"
#include "legion_read.h"
#include "testlib.h"
#include "output/json.h"
#include "output/legion_prof.h"

/* preamble_v1008.txt: its size and CRC-32, for when shared/ is not there. */
#define PREAMBLE_1008_SIZE 8202
#define PREAMBLE_1008_CRC32 0x2b473244UL
#define REDISTRICT_LINE                                                                           \
	"InstanceRedistrictInfo {id:57, result:unsigned long long:8, precondition:unsigned long " \
	"long:8, previous:unsigned long long:8, next:unsigned long long:8, "                      \
	"performed:timestamp_t:8}\n"
#define NO_EVENT_GRAPH 0

/*
 * shared/legion/: $OPTRACE_SHARED_DIR/legion if set (.ci/run sets it for a
 * clone made away from shared/), else beside the repository, found from the
 * build directory.
 */
static const char *shared_legion_file(const char *name)
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

/* The file passes every rule of the test reader. */
#define ck_assert_valid(file, version, strict)                                            \
	do {                                                                              \
		struct legion_check *checked_ = legion_check_read(file, version, strict); \
		ck_assert_msg(!legion_check_error(checked_)[0], "invalid profile: %s",    \
			      legion_check_error(checked_));                              \
		legion_check_free(checked_);                                              \
	} while (0)

/* ---- writing ------------------------------------------------------------- */

struct scratch {
	char *dir;
	char path[4096];
};

static const char *scratch_path(struct scratch *scratch, const char *name)
{
	if (!scratch->dir) {
		scratch->dir = make_temp_dir();
		ck_assert_ptr_nonnull(scratch->dir);
	}
	snprintf(scratch->path, sizeof(scratch->path), "%s/%s", scratch->dir, name);
	return scratch->path;
}

static void scratch_free(struct scratch *scratch)
{
	rm_rf(scratch->dir);
	free(scratch->dir);
}

static const struct legion_prof_options fixed_options = {
	.hostname = "h",
	.host_id = 0x0102030405060708ULL,
	.process_id = 42,
	.zero_time_ns = 1000,
	.raw = true,
};

/* The strings a profile is written with; the hostile test swaps them all. */
struct profile_strings {
	const char *hostname;
	const char *task_name;
	const char *variant_name;
	const char *op_name;
	const char *mode;
	const char *call_site;
	const char *title;
	const char *helper_title;
	const char *meta_name;
	const char *op_kind_name;
};

static const struct profile_strings plain_strings = {
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
static void small_profile_file(const char *path, const struct profile_strings *s, bool raw,
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

/* ---- tests ------------------------------------------------------------ */

START_TEST(test_preamble_1008_is_legions)
{
	const char *reference = shared_legion_file("preamble_v1008.txt");
	struct scratch scratch = { 0 };
	struct legion_blob file, expected;
	struct legion_prof *prof;
	const char *path = scratch_path(&scratch, "prof_0.gz");

	ck_assert_int_eq(legion_prof_open(&prof, path, &fixed_options), 0);
	ck_assert_int_eq(legion_prof_close(prof), 0);
	ck_assert_int_eq(legion_blob_read(path, false, &file), 0);
	ck_assert_uint_gt(file.length, PREAMBLE_1008_SIZE + 4);
	/* the whole preamble, and the first record (MachineDesc, id 10) right after */
	ck_assert_uint_eq(crc32(0, file.data, PREAMBLE_1008_SIZE), PREAMBLE_1008_CRC32);
	ck_assert_mem_eq(file.data + PREAMBLE_1008_SIZE, "\x0a\0\0\0", 4);
	if (!legion_blob_read(reference, false, &expected)) {
		ck_assert_uint_eq(expected.length, PREAMBLE_1008_SIZE);
		ck_assert_mem_eq(file.data, expected.data, expected.length);
		legion_blob_free(&expected);
	}
	ck_assert_valid(&file, LEGION_PROF_VERSION, true);
	legion_blob_free(&file);
	scratch_free(&scratch);
}
END_TEST

/* Expected body of the byte-for-byte scenario, by record (FORMAT.md §2). */
// clang-format off
static const unsigned char expected_header_records[] = {
	/* MachineDesc: id 10, node 0, 1 node, version 1008, "h", host_id, pid 42 */
	0x0a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
	0xf0, 0x03, 0x00, 0x00, 0x68, 0x00, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03,
	0x02, 0x01, 0x2a, 0x00, 0x00, 0x00,
	/* ZeroTime: id 60, 1000 */
	0x3c, 0x00, 0x00, 0x00, 0xe8, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	/* OpDesc: id 5, kind 30, "Task" */
	0x05, 0x00, 0x00, 0x00, 0x1e, 0x00, 0x00, 0x00, 0x54, 0x61, 0x73, 0x6b,
	0x00,
};
// clang-format on

// clang-format off
static const unsigned char expected_records[] = {
	/* ProcDesc: id 6, proc 0x1d00000000000000, kind 2 (CPU), 16 uuid bytes of 0 */
	0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1d,
	0x02, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	/* TaskKind: id 11, task 2, "leaf", overwrite 0 */
	0x0b, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x6c, 0x65, 0x61, 0x66,
	0x00, 0x00,
	/* TaskVariant: id 12, task 2, variant 1, "cpu" */
	0x0c, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
	0x63, 0x70, 0x75, 0x00,
	/* Provenance: id 62, pid 1, "main.py:10" */
	0x3e, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x6d, 0x61, 0x69, 0x6e, 0x2e, 0x70, 0x79, 0x3a, 0x31, 0x30, 0x00,
	/* OperationInstance: id 13, op 2, parent none (u64 max), kind 30, provenance 1 */
	0x0d, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x1e, 0x00, 0x00, 0x00,
	0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	/* TaskInfo: FORMAT.md §1.2's worked example, verbatim */
	0x12, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x02, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x1d, 0x28, 0x23, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x1c, 0x25, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x27, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x30, 0x75, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x01, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x20, 0x00, 0x00, 0x00, 0x00, 0x80,
	/* TaskWaitInfo: id 16, op 2, task 2, variant 1, 12000, 13000, 14000, event idx 3 gen 1 */
	0x10, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x02, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0xe0, 0x2e, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0xc8, 0x32, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0xb0, 0x36, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x30, 0x00,
	0x00, 0x00, 0x00, 0x80,
	/* ProcDesc: proc 0x1d00000000000001, kind 1 (GPU), uuid 00 01 .. 0f */
	0x06, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1d,
	0x01, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x03,
	0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
	/* TaskVariant: task 2, variant 3, "gpu" */
	0x0c, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00,
	0x67, 0x70, 0x75, 0x00,
	/*
	 * GPUTaskInfo: id 29, op 3, task 2, variant 3, GPU proc, 100/200/300/400,
	 * gpu 350/600, creator = event 2, critical 0, fevent = event 4
	 */
	0x1d, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x02, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x1d, 0x64, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0xc8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2c, 0x01, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x90, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x5e, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x58, 0x02, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x20, 0x00, 0x00, 0x00, 0x00, 0x80,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x40, 0x00,
	0x00, 0x00, 0x00, 0x80,
	/* MetaDesc: id 4, kind 5, message 0, ordered_vc 0, "Scheduler" */
	0x04, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x53, 0x63,
	0x68, 0x65, 0x64, 0x75, 0x6c, 0x65, 0x72, 0x00,
	/* ProcDesc: proc 0x1d00000000000002, kind 3 (Utility) */
	0x06, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1d,
	0x03, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	/* MetaInfo: id 19, op 2, kind 5, Utility proc, 50/60/70/80, creator 0, critical 0, event 5
	 */
	0x13, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x05, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1d,
	0x32, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3c, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x46, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x50, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x01, 0x00, 0x50, 0x00, 0x00, 0x00, 0x00, 0x80,
	/* ProcDesc: proc 0x1d00000000000003, kind 8 (Python) */
	0x06, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1d,
	0x08, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	/* TaskKind: task 1, "top_level", overwrite 0 */
	0x0b, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x74, 0x6f, 0x70, 0x5f,
	0x6c, 0x65, 0x76, 0x65, 0x6c, 0x00, 0x00,
	/* TaskVariant: task 1, variant 1, "top_level" */
	0x0c, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
	0x74, 0x6f, 0x70, 0x5f, 0x6c, 0x65, 0x76, 0x65, 0x6c, 0x00,
	/* Provenance: pid 2, "add" (the range's title) */
	0x3e, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x61, 0x64, 0x64, 0x00,
	/* ApplicationCallInfo: id 27, pid 2, 2000, 3000, Python proc, fevent = event 6 */
	0x1b, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0xd0, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xb8, 0x0b, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1d,
	0x01, 0x00, 0x60, 0x00, 0x00, 0x00, 0x00, 0x80,
	/* TaskInfo of the span: op 4, task 1, variant 1, Python, 500/800/1000/5000, event 6 */
	0x12, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x1d, 0xf4, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x20, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe8, 0x03, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x88, 0x13, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x60, 0x00, 0x00, 0x00, 0x00, 0x80,
};
// clang-format on

/* The calls that must produce expected_records, in order. */
static void write_known_records(struct legion_prof *prof)
{
	static const uint8_t uuid[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
	uint64_t cpu, gpu, utility, python, op1, op2, op3, op4, e1, e2, provenance;
	struct legion_prof_wait wait = { 12000, 13000, 14000, 0 };
	struct legion_prof_task task;
	struct legion_prof_meta_task meta;
	struct legion_prof_span *span;

	ck_assert_int_eq(legion_prof_proc_desc(prof, LEGION_PROF_PROC_CPU, NULL, &cpu), 0);
	ck_assert_uint_eq(cpu, 0x1d00000000000000ULL);
	ck_assert_int_eq(legion_prof_task_kind(prof, 2, "leaf"), 0);
	ck_assert_int_eq(legion_prof_task_variant(prof, 2, 1, "cpu"), 0);
	ck_assert_int_eq(legion_prof_provenance(prof, "main.py:10", &provenance), 0);
	ck_assert_uint_eq(provenance, 1);
	ck_assert_int_eq(legion_prof_new_op(prof, &op1), 0);
	ck_assert_int_eq(legion_prof_new_op(prof, &op2), 0);
	ck_assert_uint_eq(op1, 1);
	ck_assert_uint_eq(op2, 2);
	ck_assert_int_eq(legion_prof_new_event(prof, &e1), 0);
	ck_assert_int_eq(legion_prof_new_event(prof, &e2), 0);
	ck_assert_uint_eq(e1, 0x8000000000100001ULL);
	ck_assert_uint_eq(e2, 0x8000000000200001ULL);
	ck_assert_int_eq(
		legion_prof_operation_instance(prof, op2, LEGION_PROF_NO_PARENT, 30, provenance),
		0);
	task = (struct legion_prof_task){ .op_id = op2,
					  .task_id = 2,
					  .variant_id = 1,
					  .proc_id = cpu,
					  .create = 9000,
					  .ready = 9500,
					  .start = 10000,
					  .stop = 30000,
					  .creator = e1,
					  .fevent = e2 };
	ck_assert_int_eq(legion_prof_task_info(prof, &task, &wait, 1), 0);

	ck_assert_int_eq(legion_prof_proc_desc(prof, LEGION_PROF_PROC_GPU, uuid, &gpu), 0);
	ck_assert_int_eq(legion_prof_task_variant(prof, 2, 3, "gpu"), 0);
	ck_assert_int_eq(legion_prof_new_op(prof, &op3), 0);
	task = (struct legion_prof_task){ .op_id = op3,
					  .task_id = 2,
					  .variant_id = 3,
					  .proc_id = gpu,
					  .create = 100,
					  .ready = 200,
					  .start = 300,
					  .stop = 400,
					  .gpu_start = 350,
					  .gpu_stop = 600,
					  .creator = e2 };
	ck_assert_int_eq(legion_prof_gpu_task_info(prof, &task, NULL, 0), 0);
	ck_assert_uint_eq(task.fevent, 0x8000000000400001ULL);

	ck_assert_int_eq(legion_prof_meta_desc(prof, 5, "Scheduler"), 0);
	ck_assert_int_eq(legion_prof_proc_desc(prof, LEGION_PROF_PROC_UTILITY, NULL, &utility), 0);
	meta = (struct legion_prof_meta_task){ .op_id = op2,
					       .kind = 5,
					       .proc_id = utility,
					       .create = 50,
					       .ready = 60,
					       .start = 70,
					       .stop = 80 };
	ck_assert_int_eq(legion_prof_meta_info(prof, &meta), 0);

	ck_assert_int_eq(legion_prof_proc_desc(prof, LEGION_PROF_PROC_PYTHON, NULL, &python), 0);
	ck_assert_int_eq(legion_prof_task_kind(prof, 1, "top_level"), 0);
	ck_assert_int_eq(legion_prof_task_variant(prof, 1, 1, "top_level"), 0);
	ck_assert_int_eq(legion_prof_new_op(prof, &op4), 0);
	task = (struct legion_prof_task){ .op_id = op4,
					  .task_id = 1,
					  .variant_id = 1,
					  .proc_id = python,
					  .create = 500,
					  .ready = 800,
					  .start = 1000 };
	ck_assert_int_eq(legion_prof_span_begin(prof, &task, &span), 0);
	ck_assert_int_eq(legion_prof_range_begin(span, 2000), 0);
	ck_assert_int_eq(legion_prof_range_end(span, "add", 3000), 0);
	ck_assert_int_eq(legion_prof_span_end(span, 5000), 0);
}

static void check_known_body(const struct legion_blob *file, size_t preamble_size)
{
	size_t header = sizeof(expected_header_records);

	ck_assert_uint_eq(file->length, preamble_size + header + sizeof(expected_records));
	for (size_t i = 0; i < sizeof(expected_records); i++)
		ck_assert_msg(file->data[preamble_size + header + i] == expected_records[i],
			      "byte %zu of the records: 0x%02x, expected 0x%02x", i,
			      file->data[preamble_size + header + i], expected_records[i]);
}

START_TEST(test_records_byte_for_byte)
{
	struct scratch scratch = { 0 };
	const char *path = scratch_path(&scratch, "known");
	struct legion_prof *prof;
	struct legion_blob file;

	ck_assert_int_eq(legion_prof_open(&prof, path, &fixed_options), 0);
	write_known_records(prof);
	ck_assert_int_eq(legion_prof_close(prof), 0);
	ck_assert_int_eq(legion_blob_read(path, false, &file), 0);
	ck_assert_mem_eq(file.data + PREAMBLE_1008_SIZE, expected_header_records,
			 sizeof(expected_header_records));
	check_known_body(&file, PREAMBLE_1008_SIZE);
	ck_assert_valid(&file, LEGION_PROF_VERSION, true);
	legion_blob_free(&file);
	scratch_free(&scratch);
}
END_TEST

START_TEST(test_version_1007)
{
	struct legion_prof_options options = fixed_options;
	size_t line = strlen(REDISTRICT_LINE), at;
	struct scratch scratch = { 0 };
	const char *path = scratch_path(&scratch, "v1007");
	struct legion_blob file, file_1008;
	struct legion_prof *prof;
	char *found;

	/* the 1008 file, for comparison */
	ck_assert_int_eq(legion_prof_open(&prof, path, &fixed_options), 0);
	write_known_records(prof);
	ck_assert_int_eq(legion_prof_close(prof), 0);
	ck_assert_int_eq(legion_blob_read(path, false, &file_1008), 0);

	options.version = LEGION_PROF_VERSION_1007;
	ck_assert_int_eq(legion_prof_open(&prof, path, &options), 0);
	write_known_records(prof);
	ck_assert_int_eq(legion_prof_close(prof), 0);
	ck_assert_int_eq(legion_blob_read(path, false, &file), 0);

	/* the 1008 preamble less InstanceRedistrictInfo, the one 1007 -> 1008 change (§3.2) */
	found = memmem(file_1008.data, PREAMBLE_1008_SIZE, REDISTRICT_LINE, line);
	ck_assert_ptr_nonnull(found);
	at = (size_t)(found - (char *)file_1008.data);
	ck_assert_ptr_null(memmem(file.data, PREAMBLE_1008_SIZE - line, "InstanceRedistrict", 18));
	ck_assert_mem_eq(file.data, file_1008.data, at);
	ck_assert_mem_eq(file.data + at, file_1008.data + at + line,
			 PREAMBLE_1008_SIZE - line - at);
	/* MachineDesc says 1007; every other byte is the same */
	ck_assert_uint_eq(file.length, file_1008.length - line);
	ck_assert_mem_eq(file.data + PREAMBLE_1008_SIZE - line + 12, "\xef\x03\0\0", 4);
	ck_assert_mem_eq(file.data + PREAMBLE_1008_SIZE - line + 16,
			 file_1008.data + PREAMBLE_1008_SIZE + 16,
			 file.length - (PREAMBLE_1008_SIZE - line + 16));
	ck_assert_valid(&file, LEGION_PROF_VERSION_1007, true);
	legion_blob_free(&file);

	small_profile_file(path, &plain_strings, true, LEGION_PROF_VERSION_1007, &file);
	ck_assert_valid(&file, LEGION_PROF_VERSION_1007, true);
	legion_blob_free(&file);
	legion_blob_free(&file_1008);
	scratch_free(&scratch);
}
END_TEST

START_TEST(test_ids_carry_the_node)
{
	struct legion_prof_options options = fixed_options;
	struct scratch scratch = { 0 };
	uint64_t id, event, proc, provenance;
	struct legion_prof *prof;

	ck_assert_uint_eq(legion_prof_proc_id(0, 0), 0x1d00000000000000ULL);
	ck_assert_uint_eq(legion_prof_proc_id(3, 7), 0x1d00030000000007ULL);
	ck_assert_uint_eq(legion_prof_event_id(0, 1, 1), 0x8000000000100001ULL);
	ck_assert_uint_eq(legion_prof_event_id(2, 5, 1), 0x8001000000500001ULL);

	/* node 2 of 4: op and provenance ids 2, 6, 10, ...; node bits in procs and events */
	options.node_id = 2;
	options.num_nodes = 4;
	ck_assert_int_eq(legion_prof_open(&prof, scratch_path(&scratch, "n2"), &options), 0);
	for (uint64_t expect = 2; expect <= 10; expect += 4) {
		ck_assert_int_eq(legion_prof_new_op(prof, &id), 0);
		ck_assert_uint_eq(id, expect);
	}
	ck_assert_int_eq(legion_prof_new_event(prof, &event), 0);
	ck_assert_uint_eq(event, legion_prof_event_id(2, 1, 1));
	ck_assert_int_eq(legion_prof_proc_desc(prof, LEGION_PROF_PROC_CPU, NULL, &proc), 0);
	ck_assert_uint_eq(proc, legion_prof_proc_id(2, 0));
	ck_assert_int_eq(legion_prof_provenance(prof, "a", &provenance), 0);
	ck_assert_uint_eq(provenance, 2);
	ck_assert_int_eq(legion_prof_provenance(prof, "b", &provenance), 0);
	ck_assert_uint_eq(provenance, 6);
	/* an op id of another node is refused */
	ck_assert_int_eq(legion_prof_operation_instance(prof, 3, LEGION_PROF_NO_PARENT, 30, 0),
			 -EINVAL);
	ck_assert_int_eq(legion_prof_close(prof), 0);

	/* node 0 starts at the stride: 0 would look like "none" */
	options.node_id = 0;
	ck_assert_int_eq(legion_prof_open(&prof, scratch_path(&scratch, "n0"), &options), 0);
	ck_assert_int_eq(legion_prof_new_op(prof, &id), 0);
	ck_assert_uint_eq(id, 4);
	ck_assert_int_eq(legion_prof_close(prof), 0);

	options.node_id = 4; /* not below num_nodes */
	ck_assert_int_eq(legion_prof_open(&prof, scratch_path(&scratch, "bad"), &options), -EINVAL);
	options.node_id = 0;
	options.version = 1006;
	ck_assert_int_eq(legion_prof_open(&prof, scratch_path(&scratch, "bad"), &options), -EINVAL);
	scratch_free(&scratch);
}
END_TEST

START_TEST(test_small_profile_is_valid)
{
	struct scratch scratch = { 0 };
	struct legion_check *checked;
	struct legion_blob file;

	small_profile_file(scratch_path(&scratch, "prof_0"), &plain_strings, true,
			   LEGION_PROF_VERSION, &file);
	checked = legion_check_read(&file, LEGION_PROF_VERSION, true);
	ck_assert_msg(!legion_check_error(checked)[0], "invalid profile: %s",
		      legion_check_error(checked));
	ck_assert_uint_eq(legion_check_count(checked, LEGION_PROC_DESC), 6);
	ck_assert_uint_eq(legion_check_count(checked, LEGION_TASK_INFO), 4 * 3 + 1);
	ck_assert_uint_eq(legion_check_count(checked, LEGION_GPU_TASK_INFO), 4);
	ck_assert_uint_eq(legion_check_count(checked, LEGION_TASK_WAIT_INFO), 4);
	ck_assert_uint_eq(legion_check_count(checked, LEGION_OPERATION_INSTANCE), 1 + 4 * 4);
	ck_assert_uint_eq(legion_check_count(checked, LEGION_APPLICATION_CALL_INFO), 5);
	ck_assert_uint_eq(legion_check_count(checked, LEGION_META_INFO), 1);
	/* one Provenance per distinct text: the JSON, the title, the helper's title */
	ck_assert_uint_eq(legion_check_count(checked, LEGION_PROVENANCE), 3);
	legion_check_free(checked);
	legion_blob_free(&file);
	scratch_free(&scratch);
}
END_TEST

static char *repeat(const char *unit, size_t total)
{
	size_t n = strlen(unit), i;
	char *text = malloc(total + 1);

	ck_assert_ptr_nonnull(text);
	for (i = 0; i + n <= total; i += n)
		memcpy(text + i, unit, n);
	text[i] = '\0';
	return text;
}

START_TEST(test_hostile_strings)
{
	/* invalid UTF-8 of every kind, and what breaks titles, TSV and JSON */
	static const char bad_utf8[] =
		"ok\xff\xfe|\xc0\x80|\xed\xa0\x80|\xf4\x90\x80\x80|"
		"\xe2\x82|\xf0\x9f\x98|\x80|é€😀|$|\"{},\n\t\r\x01\x7f\xc2\x85";
	char *huge_dollars = repeat("$|\"{},\n", 100 * 1024);
	char *huge_utf8 = repeat("é$\xff😀\\", 100 * 1024);
	char *huge_plain = repeat("x", 100 * 1024);
	struct profile_strings hostile = {
		.hostname = huge_utf8,
		.task_name = bad_utf8,
		.variant_name = huge_dollars,
		.op_name = huge_dollars,
		.mode = bad_utf8,
		.call_site = huge_utf8,
		.title = huge_dollars,
		.helper_title = bad_utf8,
		.meta_name = huge_plain,
		.op_kind_name = "$",
	};
	struct scratch scratch = { 0 };
	struct legion_blob file;

	small_profile_file(scratch_path(&scratch, "hostile"), &hostile, true, LEGION_PROF_VERSION,
			   &file);
	ck_assert_valid(&file, LEGION_PROF_VERSION, true);
	legion_blob_free(&file);

	/* every string as the provenance's text too */
	hostile.title = bad_utf8;
	hostile.op_name = huge_utf8;
	hostile.hostname = NULL;
	small_profile_file(scratch_path(&scratch, "hostile2"), &hostile, false, LEGION_PROF_VERSION,
			   &file);
	ck_assert_valid(&file, LEGION_PROF_VERSION, true);
	legion_blob_free(&file);
	free(huge_dollars);
	free(huge_utf8);
	free(huge_plain);
	scratch_free(&scratch);
}
END_TEST

START_TEST(test_sanitize)
{
	char out[LEGION_PROF_STRING_MAX + 1], small[10];
	char *huge = repeat("ab", 100 * 1024);
	size_t n;

	ck_assert_uint_eq(legion_prof_sanitize(out, sizeof(out), "a$b"), 5);
	ck_assert_str_eq(out, "a\xef\xbc\x84"
			      "b"); /* U+FF04 */
	legion_prof_sanitize(out, sizeof(out), "x\ny\tz\x7f\xc2\x85|");
	ck_assert_str_eq(out, "x y z  |");
	legion_prof_sanitize(out, sizeof(out), "\xff\xc0\x80\xed\xa0\x80\xf4\x90\x80\x80\xe2\x82");
	ck_assert_uint_eq(strlen(out), 12 * 3); /* each bad byte is one U+FFFD */
	ck_assert(legion_utf8_valid((unsigned char *)out, strlen(out)));
	legion_prof_sanitize(out, sizeof(out), "é€😀 ok");
	ck_assert_str_eq(out, "é€😀 ok");
	legion_prof_sanitize(out, sizeof(out), NULL);
	ck_assert_str_eq(out, "");
	/* cut at a character boundary, marked with "…" */
	legion_prof_sanitize(small, sizeof(small), "abcdefghijkl");
	ck_assert_str_eq(small, "abcdef\xe2\x80\xa6");
	legion_prof_sanitize(small, 8, "ééééé");
	ck_assert_str_eq(small, "éé\xe2\x80\xa6");
	legion_prof_sanitize(small, 3, "abc");
	ck_assert_str_eq(small, "ab");
	n = legion_prof_sanitize(out, sizeof(out), huge);
	ck_assert_uint_le(n, LEGION_PROF_STRING_MAX);
	ck_assert_uint_ge(n, LEGION_PROF_STRING_MAX - 3);
	ck_assert_str_eq(out + n - 3, "\xe2\x80\xa6");
	free(huge);
}
END_TEST

/* Both viewers show members lines "key: value", the same keys in the same order, none wide. */
static void check_popups(const char *provenance, int members)
{
	struct legion_popup viewer, legacy;

	legion_popup_viewer(provenance, &viewer);
	legion_popup_legacy(provenance, &legacy);
	ck_assert_int_eq(viewer.count, members);
	ck_assert_int_eq(legacy.count, members);
	for (int i = 0; i < members; i++) {
		size_t key = strcspn(viewer.lines[i], ":");

		ck_assert_msg(!strncmp(viewer.lines[i], legacy.lines[i], key + 2),
			      "line %d: \"%s\" against the legacy viewer's \"%s\"", i,
			      viewer.lines[i], legacy.lines[i]);
	}
	ck_assert_int_le(legion_popup_width(&viewer), 32 + 2 + 96);
	ck_assert_int_le(legion_popup_width(&legacy), 32 + 2 + 96);
}

START_TEST(test_json_escape_and_provenance)
{
	char out[LEGION_PROF_STRING_MAX + 1], small[4];
	struct legion_prof_kv pairs[] = { { "op", "add" }, { "mode", "deferred" } };
	struct legion_prof_kv hostile[8];
	char *huge = repeat("\"\\$\xff{},|\n", 100 * 1024);
	int n;

	json_escape_into(out, sizeof(out), "a\"b\\c\n\x01\xff/");
	ck_assert_str_eq(out, "a\\\"b\\\\c\\n\\u0001\xef\xbf\xbd/");
	/* never half an escape */
	ck_assert_uint_eq(json_escape_into(small, sizeof(small), "\"\""), 2);
	ck_assert_str_eq(small, "\\\"");
	ck_assert_uint_eq(json_escape_into(small, sizeof(small), "a€"), 1);

	n = legion_prof_provenance_json(out, sizeof(out), "add (main.c:12)", pairs, 2);
	/* sorted by key; the legacy viewer's pairs first, the ',' after the last hides the JSON */
	ck_assert_str_eq(out, "[\"add (main.c:12)$mode,deferred|op,add,\", "
			      "{\"mode\": \"deferred\", \"op\": \"add\"}]");
	ck_assert_int_eq(n, (int)strlen(out));
	ck_assert_int_eq(legion_provenance_members(out), 2);
	check_popups(out, 2);
	/* one '$', the split: the legacy viewer would split on any other */
	legion_prof_provenance_json(out, sizeof(out), "a$b",
				    (struct legion_prof_kv[]){ { "$", "$,|\"\\" } }, 1);
	ck_assert_ptr_eq(strchr(out, '$'), strrchr(out, '$'));
	ck_assert_int_eq(legion_provenance_members(out), 1);
	check_popups(out, 1);

	for (int i = 0; i < 8; i++)
		hostile[i] = (struct legion_prof_kv){ huge, huge };
	n = legion_prof_provenance_json(out, sizeof(out), huge, hostile, 8);
	ck_assert_int_le(n, LEGION_PROF_STRING_MAX);
	ck_assert_int_ge(legion_provenance_members(out), 1);
	check_popups(out, legion_provenance_members(out));
	ck_assert(legion_utf8_valid((unsigned char *)out, strlen(out)));
	n = legion_prof_provenance_json(out, 64, huge, hostile, 8);
	ck_assert_int_le(n, 63);
	ck_assert_int_ge(legion_provenance_members(out), 0);
	ck_assert_int_eq(legion_prof_provenance_json(out, 63, "a", NULL, 0), -ENOSPC);
	ck_assert_int_eq(legion_prof_provenance_json(out, 64, NULL, NULL, 0), 8);
	ck_assert_str_eq(out, "[\"\", {}]");
	free(huge);
}
END_TEST

START_TEST(test_invariants_are_kept)
{
	struct scratch scratch = { 0 };
	const char *path = scratch_path(&scratch, "invariants");
	uint64_t cpu, gpu, op, op2, op3, event, provenance;
	struct legion_prof_task task, copy;
	struct legion_prof_span *span;
	struct legion_prof *prof;
	struct legion_record r;
	struct legion_blob file;
	int err;

	ck_assert_int_eq(legion_prof_open(&prof, path, &fixed_options), 0);
	ck_assert_int_eq(legion_prof_proc_desc(prof, LEGION_PROF_PROC_CPU, NULL, &cpu), 0);
	ck_assert_int_eq(legion_prof_proc_desc(prof, LEGION_PROF_PROC_GPU, NULL, &gpu), 0);
	ck_assert_int_eq(legion_prof_proc_desc(prof, 9, NULL, &event), -EINVAL);
	ck_assert_int_eq(legion_prof_new_op(prof, &op), 0);
	ck_assert_int_eq(legion_prof_new_op(prof, &op2), 0);
	ck_assert_int_eq(legion_prof_new_op(prof, &op3), 0);

	/* times out of order: start kept, stop raised, ready and create lowered */
	task = (struct legion_prof_task){ .op_id = op,
					  .task_id = 77,
					  .variant_id = 9,
					  .proc_id = cpu,
					  .create = 900,
					  .ready = 800,
					  .start = 500,
					  .stop = 100 };
	copy = task;
	ck_assert_int_eq(legion_prof_task_info(prof, &task, NULL, 0), 0);
	/* one run per op, one owner per fevent */
	copy.fevent = 0;
	ck_assert_int_eq(legion_prof_task_info(prof, &copy, NULL, 0), -EEXIST);
	copy.op_id = op2;
	copy.fevent = task.fevent;
	ck_assert_int_eq(legion_prof_task_info(prof, &copy, NULL, 0), -EEXIST);
	/* ids this writer did not hand out */
	copy.fevent = legion_prof_event_id(0, 999, 1);
	ck_assert_int_eq(legion_prof_task_info(prof, &copy, NULL, 0), -EINVAL);
	copy.fevent = 0;
	copy.op_id = UINT64_MAX;
	ck_assert_int_eq(legion_prof_task_info(prof, &copy, NULL, 0), -EINVAL);
	copy.op_id = 1000;
	ck_assert_int_eq(legion_prof_task_info(prof, &copy, NULL, 0), -EINVAL);
	copy.op_id = op2;
	copy.proc_id = legion_prof_proc_id(0, 7); /* no ProcDesc */
	ck_assert_int_eq(legion_prof_task_info(prof, &copy, NULL, 0), -EINVAL);
	copy.proc_id = legion_prof_proc_id(1, 0); /* another node's */
	ck_assert_int_eq(legion_prof_task_info(prof, &copy, NULL, 0), -EINVAL);
	copy.proc_id = cpu;
	copy.creator = 0x8000000000000123ULL;
	ck_assert_int_eq(legion_prof_task_info(prof, &copy, NULL, 0), -EINVAL);
	copy.creator = 0;
	ck_assert_int_eq(legion_prof_gpu_task_info(prof, &copy, NULL, 0), -EINVAL); /* not a GPU */
	/* a GPU kernel that ends before it starts, and times beyond INT64_MAX */
	copy.proc_id = gpu;
	copy.gpu_start = 700;
	copy.gpu_stop = 0;
	copy.stop = UINT64_MAX;
	ck_assert_int_eq(legion_prof_gpu_task_info(prof, &copy, NULL, 0), 0);

	/* one OperationInstance per op; provenance and parent ids must exist */
	ck_assert_int_eq(legion_prof_operation_instance(prof, op, LEGION_PROF_NO_PARENT, 30, 0), 0);
	ck_assert_int_eq(legion_prof_operation_instance(prof, op, LEGION_PROF_NO_PARENT, 30, 0),
			 -EEXIST);
	ck_assert_int_eq(legion_prof_operation_instance(prof, op2, 999, 30, 0), -EINVAL);
	ck_assert_int_eq(legion_prof_operation_instance(prof, op2, op, 30, 5), -EINVAL);
	ck_assert_int_eq(legion_prof_operation_instance(prof, UINT64_MAX, op, 30, 0), -EINVAL);
	ck_assert_int_eq(legion_prof_operation_instance(prof, op2, op, 55, 0),
			 0); /* OpDesc 55 added */

	/* the same text twice is one Provenance */
	ck_assert_int_eq(legion_prof_provenance(prof, "same", &provenance), 0);
	ck_assert_int_eq(legion_prof_provenance(prof, "same", &event), 0);
	ck_assert_uint_eq(provenance, event);

	/* ranges: bad times, unbalanced ends, too deep, a span never ended */
	task = (struct legion_prof_task){
		.op_id = op3, .task_id = 1, .variant_id = 1, .proc_id = cpu, .start = 10000
	};
	ck_assert_int_eq(legion_prof_span_begin(prof, &task, &span), 0);
	ck_assert_int_eq(legion_prof_range_end(span, "nothing open", 1), -EINVAL);
	ck_assert_int_eq(legion_prof_range_begin(span, 5), 0); /* before the span: moved in */
	ck_assert_int_eq(legion_prof_range_end(span, "early", 20000), 0);
	ck_assert_int_eq(legion_prof_range_begin(span, 15000), 0); /* overlaps "early": moved */
	ck_assert_int_eq(legion_prof_range_begin(span, 30000), 0);
	ck_assert_int_eq(legion_prof_range_end(span, "child", 25000), 0);  /* ends before start */
	ck_assert_int_eq(legion_prof_range_end(span, "parent", 26000), 0); /* before its child */
	for (int i = 0; i < 300; i++) {
		err = legion_prof_range_begin(span, 40000 + (uint64_t)i);
		ck_assert_int_eq(err, i < 256 ? 0 : -ERANGE);
	}
	for (int i = 299; i >= 100; i--) {
		err = legion_prof_range_end(span, "deep", 50000 - (uint64_t)i);
		ck_assert_int_eq(err, i < 256 ? 0 : -ERANGE);
	}
	ck_assert_int_eq(legion_prof_close(prof), 0); /* 100 ranges and the span still open */

	ck_assert_int_eq(legion_blob_read(path, false, &file), 0);
	ck_assert_valid(&file, LEGION_PROF_VERSION, true);
	ck_assert(legion_find_task_record(&file, op, &r));
	ck_assert_uint_eq(r.v[4], 500); /* create */
	ck_assert_uint_eq(r.v[5], 500); /* ready */
	ck_assert_uint_eq(r.v[6], 500); /* start */
	ck_assert_uint_eq(r.v[7], 500); /* stop */
	ck_assert(legion_find_task_record(&file, op2, &r));
	ck_assert_uint_eq(r.kind, LEGION_GPU_TASK_INFO);
	ck_assert_uint_eq(r.v[7], INT64_MAX);
	ck_assert_uint_eq(r.v[8], 700);
	ck_assert_uint_eq(r.v[9], 700);
	ck_assert_ptr_nonnull(memmem(file.data, file.length, "task 77", 8)); /* placeholder names */
	ck_assert_ptr_nonnull(memmem(file.data, file.length, "variant 9", 10));
	ck_assert_ptr_nonnull(memmem(file.data, file.length, "(unfinished)", 13));
	legion_blob_free(&file);
	scratch_free(&scratch);
}
END_TEST

START_TEST(test_empty_profile_is_valid)
{
	struct scratch scratch = { 0 };
	const char *path = scratch_path(&scratch, "empty");
	struct legion_prof *prof;
	struct legion_blob file;

	/* only OpDesc "Task": a second colourable descriptor is added at close */
	ck_assert_int_eq(legion_prof_open(&prof, path, NULL), 0);
	ck_assert_int_eq(legion_prof_close(prof), 0);
	ck_assert_int_eq(legion_blob_read(path, true, &file), 0);
	ck_assert_valid(&file, LEGION_PROF_VERSION, true);
	legion_blob_free(&file);
	scratch_free(&scratch);
}
END_TEST

/* Inflates the whole file as gzip: one member, nothing after it. */
static void check_single_gzip_member(const char *path)
{
	unsigned char out[1 << 16];
	struct legion_blob compressed;
	z_stream stream = { 0 };
	int ret;

	ck_assert_int_eq(legion_blob_read(path, false, &compressed), 0);
	ck_assert_int_eq(inflateInit2(&stream, 15 + 16), Z_OK);
	stream.next_in = compressed.data;
	stream.avail_in = (unsigned int)compressed.length;
	do {
		stream.next_out = out;
		stream.avail_out = sizeof(out);
		ret = inflate(&stream, Z_NO_FLUSH);
	} while (ret == Z_OK);
	ck_assert_int_eq(ret, Z_STREAM_END);
	ck_assert_uint_eq(stream.avail_in, 0);
	inflateEnd(&stream);
	legion_blob_free(&compressed);
}

START_TEST(test_gzip_equals_raw)
{
	struct scratch scratch = { 0 };
	struct legion_blob raw, unzipped;
	char gz_path[4096];

	small_profile_file(scratch_path(&scratch, "raw"), &plain_strings, true, LEGION_PROF_VERSION,
			   &raw);
	snprintf(gz_path, sizeof(gz_path), "%s", scratch_path(&scratch, "prof_0.gz"));
	small_profile_file(gz_path, &plain_strings, false, LEGION_PROF_VERSION, &unzipped);
	ck_assert_uint_eq(unzipped.length, raw.length);
	ck_assert_mem_eq(unzipped.data, raw.data, raw.length);
	check_single_gzip_member(gz_path);
	legion_blob_free(&raw);
	legion_blob_free(&unzipped);
	scratch_free(&scratch);
}
END_TEST

/* Writes until the disk-full error shows; every later call says the same. */
static void fill_until_error(struct legion_prof *prof)
{
	uint64_t cpu, op;
	struct legion_prof_task task;
	int err = 0;

	ck_assert_int_eq(legion_prof_proc_desc(prof, LEGION_PROF_PROC_CPU, NULL, &cpu), 0);
	for (int i = 0; i < 2000000 && !err; i++) {
		err = legion_prof_new_op(prof, &op);
		if (err)
			break;
		task = (struct legion_prof_task){ .op_id = op,
						  .proc_id = cpu,
						  .start = (uint64_t)i,
						  .stop = (uint64_t)i * 7919 };
		err = legion_prof_task_info(prof, &task, NULL, 0);
		if (!err && i % 4096 == 0)
			err = legion_prof_flush(prof);
	}
	ck_assert_int_eq(err, -ENOSPC);
	ck_assert_int_eq(legion_prof_new_op(prof, &op), -ENOSPC);
	ck_assert_int_eq(legion_prof_task_kind(prof, 1, "x"), -ENOSPC);
	ck_assert_int_eq(legion_prof_flush(prof), -ENOSPC);
	ck_assert_int_eq(legion_prof_close(prof), -ENOSPC);
}

START_TEST(test_disk_full)
{
	struct legion_prof_options options = fixed_options;
	struct legion_prof *prof;
	int fd;

	if (access("/dev/full", W_OK))
		SKIP_TEST("no /dev/full");
	/* raw: the header is written at open, so open says it */
	ck_assert_int_eq(legion_prof_open(&prof, "/dev/full", &options), -ENOSPC);
	fd = open("/dev/full", O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(legion_prof_fdopen(&prof, fd, &options), -ENOSPC);
	ck_assert_int_ne(fcntl(fd, F_GETFD), -1); /* failure leaves the fd open */
	close(fd);
	/* gzip: zlib buffers, the error shows later, and sticks */
	options.raw = false;
	ck_assert_int_eq(legion_prof_open(&prof, "/dev/full", &options), 0);
	fill_until_error(prof);
}
END_TEST

START_TEST(test_sample_decodes)
{
	const char *sample = shared_legion_file("sample_v1008_node0.gz");
	struct legion_check *checked;
	struct legion_blob file;

	if (access(sample, R_OK))
		SKIP_TEST("%s is absent", sample);
	ck_assert_int_eq(legion_blob_read(sample, true, &file), 0);
	checked = legion_check_read(&file, LEGION_PROF_VERSION, false);
	ck_assert_msg(!legion_check_error(checked)[0], "the sample fails the test's reader: %s",
		      legion_check_error(checked));
	ck_assert_uint_gt(legion_check_count(checked, LEGION_TASK_INFO), 0);
	ck_assert_uint_gt(legion_check_count(checked, LEGION_GPU_TASK_INFO), 0);
	ck_assert_uint_gt(legion_check_count(checked, LEGION_APPLICATION_CALL_INFO), 0);
	legion_check_free(checked);
	legion_blob_free(&file);
}
END_TEST

/* A small deterministic generator (xorshift64*), so failures replay. */
static uint64_t next_random(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545f4914f6cdd1dULL;
}

static uint64_t random_time(uint64_t *state)
{
	switch (next_random(state) % 4) {
	case 0:
		return next_random(state);
	case 1:
		return UINT64_MAX - next_random(state) % 4;
	default:
		return next_random(state) % 100000;
	}
}

/* Any bytes but NUL, sometimes long. */
static const char *random_text(uint64_t *state, char *buffer, size_t size)
{
	size_t length = next_random(state) % (next_random(state) % 8 ? 64 : size - 1);

	for (size_t i = 0; i < length; i++)
		buffer[i] = (char)(next_random(state) % 255 + 1);
	buffer[length] = '\0';
	return buffer;
}

static uint64_t pick(uint64_t *state, const uint64_t *ids, size_t count)
{
	uint64_t r = next_random(state);

	if (!count || r % 10 == 0)
		return r % 3 ? next_random(state) : 0; /* sometimes not an id of this file */
	return ids[r / 10 % count];
}

static void random_task(uint64_t *state, const uint64_t ids[][256], const size_t *counts,
			struct legion_prof_task *task)
{
	*task = (struct legion_prof_task){
		.op_id = pick(state, ids[0], counts[0]),
		.task_id = (uint32_t)(next_random(state) % 6),
		.variant_id = (uint32_t)(next_random(state) % 6),
		.proc_id = pick(state, ids[2], counts[2]),
		.create = random_time(state),
		.ready = random_time(state),
		.start = random_time(state),
		.stop = random_time(state),
		.gpu_start = random_time(state),
		.gpu_stop = random_time(state),
		.creator = next_random(state) % 2 ? 0 : pick(state, ids[1], counts[1]),
		.fevent = next_random(state) % 2 ? 0 : pick(state, ids[1], counts[1]),
	};
}

/* Random calls with random ids, times and bytes: the file stays valid. */
START_TEST(test_random_calls_stay_valid)
{
	enum { OPS, EVENTS, PROCS, PROVENANCES_, ID_KINDS };
	static uint64_t ids[ID_KINDS][256];
	struct legion_prof_span *spans[4] = { 0 };
	struct legion_prof_options options = fixed_options;
	struct scratch scratch = { 0 };
	const char *path = scratch_path(&scratch, "random");
	uint64_t state = 0x9e3779b97f4a7c15ULL + (uint64_t)_i, id;
	size_t counts[ID_KINDS] = { 0 };
	struct legion_prof_wait waits[3];
	struct legion_prof_meta_task meta;
	struct legion_prof_task task;
	struct legion_prof *prof;
	static char text[9000];
	struct legion_blob file;
	int err = 0, s;

	options.raw = _i % 2;
	options.node_id = (uint32_t)_i % 3;
	options.num_nodes = 3;
	ck_assert_int_eq(legion_prof_open(&prof, path, &options), 0);
	for (int step = 0; step < 4000; step++) {
		uint64_t r = next_random(&state);

		s = (int)(next_random(&state) % 4);
		switch (r % 16) {
		case 0:
			err = legion_prof_new_op(prof, &id);
			if (!err && counts[OPS] < 256)
				ids[OPS][counts[OPS]++] = id;
			break;
		case 1:
			err = legion_prof_new_event(prof, &id);
			if (!err && counts[EVENTS] < 256)
				ids[EVENTS][counts[EVENTS]++] = id;
			break;
		case 2:
			err = legion_prof_proc_desc(prof, (enum legion_prof_proc_kind)(r / 16 % 10),
						    NULL, &id);
			if (!err && counts[PROCS] < 256)
				ids[PROCS][counts[PROCS]++] = id;
			break;
		case 3:
			err = legion_prof_provenance(prof, random_text(&state, text, sizeof(text)),
						     &id);
			if (!err && counts[PROVENANCES_] < 256)
				ids[PROVENANCES_][counts[PROVENANCES_]++] = id;
			break;
		case 4:
			err = legion_prof_operation_instance(
				prof, pick(&state, ids[OPS], counts[OPS]),
				r / 16 % 3 ? LEGION_PROF_NO_PARENT
					   : pick(&state, ids[OPS], counts[OPS]),
				(uint32_t)(r / 64 % 50),
				pick(&state, ids[PROVENANCES_], counts[PROVENANCES_]));
			break;
		case 5:
		case 6:
			random_task(&state, ids, counts, &task);
			for (int w = 0; w < 3; w++)
				waits[w] = (struct legion_prof_wait){
					random_time(&state), random_time(&state),
					random_time(&state),
					r % 3 ? 0 : pick(&state, ids[EVENTS], counts[EVENTS])
				};
			if (r % 16 == 5)
				err = legion_prof_task_info(prof, &task, waits, r / 16 % 4);
			else
				err = legion_prof_gpu_task_info(prof, &task, waits, r / 16 % 4);
			break;
		case 7:
			random_task(&state, ids, counts, &task);
			meta = (struct legion_prof_meta_task){
				task.op_id, task.task_id, task.proc_id, task.create, task.ready,
				task.start, task.stop,	  task.creator, task.fevent,
			};
			err = legion_prof_meta_info(prof, &meta);
			break;
		case 8:
			if (spans[s])
				break;
			random_task(&state, ids, counts, &task);
			err = legion_prof_span_begin(prof, &task, &spans[s]);
			if (err)
				spans[s] = NULL;
			break;
		case 9:
		case 10:
			if (spans[s])
				err = legion_prof_range_begin(spans[s], random_time(&state));
			break;
		case 11:
		case 12:
			if (spans[s])
				err = legion_prof_range_end(spans[s],
							    random_text(&state, text, sizeof(text)),
							    random_time(&state));
			break;
		case 13:
			if (spans[s])
				err = legion_prof_span_end(spans[s], random_time(&state));
			spans[s] = NULL;
			break;
		case 14:
			err = legion_prof_task_kind(prof, (uint32_t)(r / 16 % 6),
						    random_text(&state, text, sizeof(text)));
			if (!err)
				err = legion_prof_task_variant(
					prof, (uint32_t)(r / 16 % 6), (uint32_t)(r / 128 % 6),
					random_text(&state, text, sizeof(text)));
			break;
		default:
			err = r / 16 % 2
				      ? legion_prof_op_desc(prof, (uint32_t)(r / 32 % 50),
							    random_text(&state, text, sizeof(text)))
				      : legion_prof_meta_desc(
						prof, (uint32_t)(r / 32 % 50),
						random_text(&state, text, sizeof(text)));
			break;
		}
		/* refusals are fine, I/O errors are not */
		ck_assert_msg(err == 0 || err == -EINVAL || err == -EEXIST || err == -ERANGE,
			      "step %d: %d", step, err);
	}
	ck_assert_int_eq(legion_prof_close(prof), 0); /* ends the spans still open */
	ck_assert_int_eq(legion_blob_read(path, !options.raw, &file), 0);
	ck_assert_valid(&file, LEGION_PROF_VERSION, true);
	legion_blob_free(&file);
	scratch_free(&scratch);
}
END_TEST

/* The reader must catch what §3.4 lists, or its passing means little. */
START_TEST(test_reader_catches_defects)
{
	struct scratch scratch = { 0 };
	struct legion_check *checked;
	struct legion_blob file;
	size_t at;

	small_profile_file(scratch_path(&scratch, "defects"), &plain_strings, true,
			   LEGION_PROF_VERSION, &file);
	/* a truncated last record */
	file.length--;
	checked = legion_check_read(&file, LEGION_PROF_VERSION, true);
	ck_assert_ptr_nonnull(strstr(legion_check_error(checked), "truncated"));
	legion_check_free(checked);
	file.length++;
	/* the wrong version */
	checked = legion_check_read(&file, LEGION_PROF_VERSION_1007, true);
	ck_assert_ptr_nonnull(strstr(legion_check_error(checked), "version"));
	legion_check_free(checked);
	/* invalid UTF-8 in a string */
	at = (size_t)((unsigned char *)memmem(file.data, file.length, "python main", 11) -
		      file.data);
	file.data[at] = 0xff;
	checked = legion_check_read(&file, LEGION_PROF_VERSION, true);
	ck_assert_ptr_nonnull(strstr(legion_check_error(checked), "UTF-8"));
	legion_check_free(checked);
	file.data[at] = '$';
	checked = legion_check_read(&file, LEGION_PROF_VERSION, true);
	ck_assert_ptr_nonnull(strstr(legion_check_error(checked), "forbidden"));
	legion_check_free(checked);
	legion_blob_free(&file);
	scratch_free(&scratch);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("legion_prof");
	TCase *tc = tcase_create("writer");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_preamble_1008_is_legions);
	tcase_add_test(tc, test_records_byte_for_byte);
	tcase_add_test(tc, test_version_1007);
	tcase_add_test(tc, test_ids_carry_the_node);
	tcase_add_test(tc, test_small_profile_is_valid);
	tcase_add_test(tc, test_hostile_strings);
	tcase_add_test(tc, test_sanitize);
	tcase_add_test(tc, test_json_escape_and_provenance);
	tcase_add_test(tc, test_invariants_are_kept);
	tcase_add_test(tc, test_empty_profile_is_valid);
	tcase_add_test(tc, test_gzip_equals_raw);
	tcase_add_test(tc, test_disk_full);
	tcase_add_test(tc, test_sample_decodes);
	tcase_add_test(tc, test_reader_catches_defects);
	tcase_add_loop_test(tc, test_random_calls_stay_valid, 0, 8);
	suite_add_tcase(suite, tc);

	return run_suite(suite);
}
