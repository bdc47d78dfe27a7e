// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Whole Legion Prof profiles against the independent reader of
 * tests/lib/legion_read.c: the small profile, the writer's invariants kept
 * whatever it is called with (random calls too), the sample of
 * shared/legion/, and defects the reader must catch.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "legion_read.h"
#include "legion_write.h"
#include "testlib.h"
#include "output/legion_prof.h"

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
	Suite *suite = suite_create("legion_prof_valid");
	TCase *tc = tcase_create("writer");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_small_profile_is_valid);
	tcase_add_test(tc, test_invariants_are_kept);
	tcase_add_test(tc, test_sample_decodes);
	tcase_add_test(tc, test_reader_catches_defects);
	tcase_add_loop_test(tc, test_random_calls_stay_valid, 0, 8);
	suite_add_tcase(suite, tc);

	return run_suite(suite);
}
