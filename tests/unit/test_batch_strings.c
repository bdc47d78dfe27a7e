// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The batch probe's list of strings (ABI 4): record's BPF sends a batch's
 * strings from it instead of looking at each event, so every string address
 * that a STRING field of the batch's events names must be listed, once, or
 * the list must say it is incomplete. Observed through the in-process tracer
 * (no root needed): each workload runs on a thread of its own, whose exit
 * hands its buffer over and leaves it, list included, as it was handed over.
 * The flush bound is raised so that only a full buffer or the exit hands
 * one over, however slow the machine.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <optrace/optrace.h>

#include "self_trace.h"
#include "testlib.h"

#define DISTINCT_NAMES 100

static char names[DISTINCT_NAMES][16];

/*
 * The last batch thread tid handed over, or NULL; with over, also how many
 * of its batches said their list was incomplete.
 */
static const struct self_event *last_batch(pid_t tid, int *over)
{
	const struct self_event *events, *found = NULL;
	size_t count;

	events = self_trace_events(&count);
	for (size_t i = 0; i < count; i++) {
		if (strcmp(events[i].probe, "batch") ||
		    (uint32_t)events[i].args[2] != (uint32_t)tid)
			continue;
		found = &events[i];
		if (over)
			*over += events[i].args[5] > OPTRACE_BATCH_STRINGS;
	}
	return found;
}

static bool listed(const struct self_event *batch, uint64_t address)
{
	const uint64_t *list = (const uint64_t *)(uintptr_t)batch->args[4];

	for (uint64_t i = 0; i < batch->args[5]; i++) {
		if (list[i] == address)
			return true;
	}
	return false;
}

/*
 * A batch handed over with a whole list: each STRING field of its events
 * is listed, and nothing is listed twice or is not named.
 */
static void check_list(const struct self_event *batch)
{
	const struct optrace_event *events = (const void *)(uintptr_t)batch->args[0];
	const uint64_t *list = (const uint64_t *)(uintptr_t)batch->args[4];
	uint64_t string_count = batch->args[5];

	ck_assert_int_eq(batch->argc, 6);
	ck_assert_uint_le(string_count, OPTRACE_BATCH_STRINGS);
	for (uint32_t i = 0; i < batch->args[1]; i++) {
		uint64_t strings[OPTRACE_EVENT_MAX_STRINGS];
		unsigned int n = optrace_event_strings(&events[i], false, strings);

		for (unsigned int k = 0; k < n; k++)
			ck_assert_msg(!strings[k] || listed(batch, strings[k]),
				      "event %u (kind %u) names %#llx, not listed", i,
				      events[i].kind, (unsigned long long)strings[k]);
	}
	for (uint64_t i = 0; i < string_count; i++) {
		bool named = false;

		ck_assert_uint_ne(list[i], 0);
		for (uint64_t j = 0; j < i; j++)
			ck_assert_msg(list[j] != list[i], "%#llx listed twice",
				      (unsigned long long)list[i]);
		for (uint32_t e = 0; e < batch->args[1] && !named; e++) {
			uint64_t strings[OPTRACE_EVENT_MAX_STRINGS];
			unsigned int n = optrace_event_strings(&events[e], false, strings);

			for (unsigned int k = 0; k < n; k++)
				named |= strings[k] == list[i];
		}
		ck_assert_msg(named, "%#llx listed but named by no event",
			      (unsigned long long)list[i]);
	}
}

static void *every_kind_with_strings(void *unused)
{
	(void)unused;
	for (int round = 0; round < 3; round++) {
		uint64_t op = optrace_op_begin("strings.outer", OPTRACE_CALLSITE);
		uint64_t inner = optrace_op_begin("strings.inner", NULL);

		optrace_op_fallback(inner, OPTRACE_FALLBACK_UNSUPPORTED_DTYPE, "complex128");
		optrace_op_fallback(inner, OPTRACE_FALLBACK_OTHER, NULL);
		optrace_task_launch(inner, "strings.task", 2);
		optrace_op_end(inner, OPTRACE_STATUS_OK);
		optrace_op_end(op, OPTRACE_STATUS_OK);
	}
	return (void *)(uintptr_t)gettid();
}

/* More operations than a buffer holds: the last batch lists its names anew. */
static void *one_name_over_batches(void *unused)
{
	(void)unused;
	for (int i = 0; i < OPTRACE_BATCH_EVENTS + 44; i++)
		optrace_op_end(optrace_op_begin("strings.loop", OPTRACE_CALLSITE),
			       OPTRACE_STATUS_OK);
	return (void *)(uintptr_t)gettid();
}

static void *many_names(void *unused)
{
	(void)unused;
	for (int i = 0; i < DISTINCT_NAMES; i++)
		optrace_op_end(optrace_op_begin(names[i], NULL), OPTRACE_STATUS_OK);
	return (void *)(uintptr_t)gettid();
}

static const struct self_event *run_traced(void *(*workload)(void *), int *over)
{
	pthread_t thread;
	void *result;
	int err = self_trace_start();

	ck_assert_msg(err == 0, "self_trace_start: %s", strerror(-err));
	ck_assert_int_eq(pthread_create(&thread, NULL, workload, NULL), 0);
	ck_assert_int_eq(pthread_join(thread, &result), 0);
	return last_batch((pid_t)(uintptr_t)result, over);
}

START_TEST(test_each_string_listed_once)
{
	const struct self_event *batch = run_traced(every_kind_with_strings, NULL);

	ck_assert_ptr_nonnull(batch);
	ck_assert_uint_eq(batch->args[1], 3 * 7);
	check_list(batch);
	/* outer, its callsite, inner, the detail, the task: NULLs are not strings */
	ck_assert_uint_eq(batch->args[5], 5);
	self_trace_stop();
}
END_TEST

START_TEST(test_a_new_batch_lists_again)
{
	const struct self_event *batch = run_traced(one_name_over_batches, NULL);

	ck_assert_ptr_nonnull(batch);
	ck_assert_uint_lt(batch->args[1], OPTRACE_BATCH_EVENTS);
	check_list(batch);
	ck_assert_uint_eq(batch->args[5], 2);
	self_trace_stop();
}
END_TEST

START_TEST(test_too_many_strings_say_so)
{
	const struct self_event *batch;
	int over = 0;

	for (int i = 0; i < DISTINCT_NAMES; i++)
		snprintf(names[i], sizeof(names[i]), "strings.%d", i);
	batch = run_traced(many_names, &over);
	ck_assert_ptr_nonnull(batch);
	/* 100 names in one batch of 200 events: more than the list holds */
	ck_assert_int_eq(over, 1);
	ck_assert_uint_eq(batch->args[1], 2 * DISTINCT_NAMES);
	ck_assert_uint_eq(batch->args[5], OPTRACE_BATCH_STRINGS + 1);
	self_trace_stop();
}
END_TEST

int main(int argc, char **argv)
{
	Suite *suite = suite_create("batch_strings");
	TCase *tc = tcase_create("list");

	/* liboptrace reads its flush bound as it loads: run again with 1 s */
	(void)argc;
	if (!getenv("OPTRACE_FLUSH_US")) {
		setenv("OPTRACE_FLUSH_US", "1000000", 1);
		execv("/proc/self/exe", argv);
		perror("test_batch_strings: execv /proc/self/exe");
		return 1;
	}

	tcase_add_test(tc, test_each_string_listed_once);
	tcase_add_test(tc, test_a_new_batch_lists_again);
	tcase_add_test(tc, test_too_many_strings_say_so);
	suite_add_tcase(suite, tc);

	return run_suite(suite);
}
