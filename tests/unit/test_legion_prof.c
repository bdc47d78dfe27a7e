// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Legion Prof writer against docs/legion-format.md: the preamble and
 * each record byte for byte, versions 1007 and 1008, ids, gzip and a full
 * disk; the files are read back by the independent reader of
 * tests/lib/legion_read.c, written from docs/legion-format.md's layouts, which checks
 * every rule of §3.4. Strings: test_legion_prof_strings.c; profiles that
 * must stay valid: test_legion_prof_valid.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "legion_read.h"
#include "legion_write.h"
#include "testlib.h"
#include "output/legion_prof.h"

/* preamble_v1008.txt: its size and CRC-32, for when shared/ is not there. */
#define PREAMBLE_1008_SIZE 8202
#define PREAMBLE_1008_CRC32 0x2b473244UL
#define REDISTRICT_LINE                                                                           \
	"InstanceRedistrictInfo {id:57, result:unsigned long long:8, precondition:unsigned long " \
	"long:8, previous:unsigned long long:8, next:unsigned long long:8, "                      \
	"performed:timestamp_t:8}\n"
#define NO_EVENT_GRAPH 0

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

/* Expected body of the byte-for-byte scenario, by record (docs/legion-format.md §2). */
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
	/* TaskInfo: docs/legion-format.md §1.2's worked example, verbatim */
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

/* The reopen callback of test_released_descriptor: the file again, appending. */
struct reopened {
	const char *path;
	int count;
};

static int reopen_path(void *ctx)
{
	struct reopened *r = ctx;
	int fd = open(r->path, O_WRONLY | O_APPEND | O_CLOEXEC);

	r->count++;
	return fd < 0 ? -errno : fd;
}

/*
 * A writer whose descriptor is handed back again and again (as export
 * --legion does past ulimit -n) writes the same one gzip member: it opens
 * the file again when zlib has bytes for it, and the log reads whole.
 */
START_TEST(test_released_descriptor)
{
	struct scratch scratch = { 0 };
	const char *path = scratch_path(&scratch, "prof_0.gz");
	struct reopened reopened = { .path = path };
	struct legion_prof_options options = fixed_options;
	struct legion_prof *prof;
	struct legion_check *check;
	struct legion_blob file;
	uint64_t provenance;
	char text[64];
	int fd, released = 0;

	options.raw = false;
	ck_assert_int_eq(legion_prof_open(&prof, path, &options), 0);
	ck_assert_int_eq(legion_prof_release_fd(prof), -EINVAL); /* no way back: kept */
	ck_assert_int_eq(legion_prof_close(prof), 0);

	options.reopen = reopen_path;
	options.reopen_ctx = &reopened;
	ck_assert_int_eq(legion_prof_open(&prof, path, &options), 0);
	for (int i = 0; i < 100000; i++) {
		/* distinct and ill-compressible: zlib gives out bytes often */
		snprintf(text, sizeof(text), "range %d %08x", i, (unsigned int)(i * 2654435761u));
		ck_assert_int_eq(legion_prof_provenance(prof, text, &provenance), 0);
		fd = i % 1000 ? -1 : legion_prof_release_fd(prof);
		if (fd >= 0) {
			close(fd);
			released++;
		}
	}
	fd = legion_prof_release_fd(prof);
	if (fd >= 0)
		close(fd);
	ck_assert_int_eq(legion_prof_close(prof), 0); /* the gzip trailer: opened again */
	/* a descriptor is held again only once zlib's 128 KiB are full */
	ck_assert_int_ge(released, 5);
	ck_assert_int_eq(reopened.count, released); /* each, once, at the latest for the trailer */
	check_single_gzip_member(path);
	ck_assert_int_eq(legion_blob_read(path, true, &file), 0);
	check = legion_check_read(&file, LEGION_PROF_VERSION, true);
	ck_assert_str_eq(legion_check_error(check), "");
	ck_assert_uint_eq(legion_check_count(check, LEGION_PROVENANCE), 100000);
	legion_check_free(check);
	legion_blob_free(&file);
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

int main(void)
{
	Suite *suite = suite_create("legion_prof");
	TCase *tc = tcase_create("writer");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_preamble_1008_is_legions);
	tcase_add_test(tc, test_records_byte_for_byte);
	tcase_add_test(tc, test_version_1007);
	tcase_add_test(tc, test_ids_carry_the_node);
	tcase_add_test(tc, test_empty_profile_is_valid);
	tcase_add_test(tc, test_gzip_equals_raw);
	tcase_add_test(tc, test_disk_full);
	tcase_add_test(tc, test_released_descriptor);
	suite_add_tcase(suite, tc);

	return run_suite(suite);
}
