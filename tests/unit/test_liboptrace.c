// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * liboptrace as a runtime uses it: ids, nesting, tasks, waits and rt_init,
 * observed through its probes by the in-process tracer (no root needed).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <optrace/optrace.h>

#include "self_trace.h"
#include "testlib.h"

static const struct self_event *events;
static size_t event_count;

static void collect(void)
{
	events = self_trace_events(&event_count);
}

/* The index-th event of probe, or fail. */
static const struct self_event *nth(const char *probe, int index)
{
	for (size_t i = 0; i < event_count; i++) {
		if (!strcmp(events[i].probe, probe) && index-- == 0)
			return &events[i];
	}
	ck_abort_msg("no %s event #%d", probe, index);
	return NULL;
}

static int count_of(const char *probe)
{
	int n = 0;

	for (size_t i = 0; i < event_count; i++)
		n += !strcmp(events[i].probe, probe);
	return n;
}

static void start_tracing(void)
{
	int err = self_trace_start();

	ck_assert_msg(err == 0, "self_trace_start: %s", strerror(-err));
}

START_TEST(test_untraced_calls_fire_nothing)
{
	ck_assert(!optrace_enabled());
	ck_assert_uint_eq(optrace_op_begin("a", OPTRACE_CALLSITE), 0);
	/* untraced: an id of its own kind (its name kept for dump), no probe fired */
	ck_assert(optrace_task_launch(0, "t", 4) & OPTRACE_TASK_UNTRACED);
	optrace_op_end(0, OPTRACE_STATUS_OK);
}
END_TEST

START_TEST(test_enabled_follows_the_tracer)
{
	start_tracing();
	ck_assert(optrace_enabled());
	self_trace_stop();
	ck_assert(!optrace_enabled());
}
END_TEST

/* What an adapter launches tasks under: the innermost open operation, 0 untraced. */
START_TEST(test_current_op_is_the_innermost)
{
	uint64_t outer, inner;

	ck_assert_uint_eq(optrace_current_op(), 0);
	optrace_op_begin("untraced", OPTRACE_CALLSITE);
	ck_assert_uint_eq(optrace_current_op(), 0);
	optrace_op_end(0, OPTRACE_STATUS_OK);
	start_tracing();
	outer = optrace_op_begin("outer", OPTRACE_CALLSITE);
	ck_assert_uint_eq(optrace_current_op(), outer);
	inner = optrace_op_begin("inner", OPTRACE_CALLSITE);
	ck_assert_uint_eq(optrace_current_op(), inner);
	optrace_op_end(inner, OPTRACE_STATUS_OK);
	ck_assert_uint_eq(optrace_current_op(), outer);
	optrace_op_end(outer, OPTRACE_STATUS_OK);
	ck_assert_uint_eq(optrace_current_op(), 0);
	self_trace_stop();
}
END_TEST

START_TEST(test_nesting_gives_parent_and_depth)
{
	static const char site[] = "main.py:12";
	uint64_t a, b, c, d;

	start_tracing();
	a = optrace_op_begin("mean", site);
	b = optrace_op_begin("sum", site);
	c = optrace_op_begin("fill", site);
	optrace_op_end(c, OPTRACE_STATUS_OK);
	optrace_op_end(b, OPTRACE_STATUS_ERROR);
	d = optrace_op_begin("divide", site);
	optrace_op_end(d, OPTRACE_STATUS_OK);
	optrace_op_end(a, OPTRACE_STATUS_OK);
	self_trace_stop();
	collect();

	ck_assert(a && b && c && d);
	ck_assert(a != b && b != c && c != d && a != d);
	ck_assert_int_eq(count_of("op_begin"), 4);
	ck_assert_int_eq(count_of("op_end"), 4);
	/* op_begin(op, parent, depth, name, callsite) */
	ck_assert_uint_eq(nth("op_begin", 0)->args[0], a);
	ck_assert_uint_eq(nth("op_begin", 0)->args[1], 0);
	ck_assert_uint_eq(nth("op_begin", 0)->args[2], 0);
	ck_assert_str_eq((const char *)nth("op_begin", 0)->args[3], "mean");
	ck_assert_ptr_eq((const char *)nth("op_begin", 0)->args[4], site);
	ck_assert_uint_eq(nth("op_begin", 1)->args[1], a);
	ck_assert_uint_eq(nth("op_begin", 1)->args[2], 1);
	ck_assert_uint_eq(nth("op_begin", 2)->args[1], b);
	ck_assert_uint_eq(nth("op_begin", 2)->args[2], 2);
	ck_assert_uint_eq(nth("op_begin", 3)->args[0], d);
	ck_assert_uint_eq(nth("op_begin", 3)->args[1], a);
	ck_assert_uint_eq(nth("op_begin", 3)->args[2], 1);
	/* op_end(op, status), in end order; status is signed 32-bit */
	ck_assert_uint_eq(nth("op_end", 0)->args[0], c);
	ck_assert_uint_eq(nth("op_end", 1)->args[0], b);
	ck_assert_int_eq((int64_t)nth("op_end", 1)->args[1], OPTRACE_STATUS_ERROR);
	ck_assert_uint_eq(nth("op_end", 3)->args[0], a);
}
END_TEST

#define THREADS 4
#define ROOTS_PER_THREAD 2000

static void *nested_ops(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROOTS_PER_THREAD; i++) {
		uint64_t root = optrace_op_begin("root", OPTRACE_CALLSITE);
		uint64_t helper = optrace_op_begin("helper", OPTRACE_CALLSITE);

		optrace_op_end(helper, OPTRACE_STATUS_OK);
		optrace_op_end(root, OPTRACE_STATUS_OK);
	}
	return NULL;
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

START_TEST(test_ids_unique_and_parents_per_thread)
{
	pthread_t threads[THREADS];
	uint64_t *ids;
	size_t n = 0;

	start_tracing();
	for (int t = 0; t < THREADS; t++)
		ck_assert_int_eq(pthread_create(&threads[t], NULL, nested_ops, NULL), 0);
	for (int t = 0; t < THREADS; t++)
		pthread_join(threads[t], NULL);
	self_trace_stop();
	collect();

	ck_assert_int_eq(count_of("op_begin"), THREADS * ROOTS_PER_THREAD * 2);
	ids = calloc(event_count, sizeof(*ids));
	for (size_t i = 0; i < event_count; i++) {
		const struct self_event *e = &events[i];

		if (strcmp(e->probe, "op_begin"))
			continue;
		ids[n++] = e->args[0];
		if (!strcmp((const char *)e->args[3], "root")) {
			ck_assert_uint_eq(e->args[1], 0);
			ck_assert_uint_eq(e->args[2], 0);
			continue;
		}
		/* A helper's parent is the root begun just before on its thread. */
		ck_assert_uint_eq(e->args[2], 1);
		for (size_t j = i; j-- > 0;) {
			if (events[j].tid == e->tid && !strcmp(events[j].probe, "op_begin")) {
				ck_assert_uint_eq(e->args[1], events[j].args[0]);
				break;
			}
		}
	}
	qsort(ids, n, sizeof(*ids), compare_u64);
	for (size_t i = 1; i < n; i++)
		ck_assert_msg(ids[i] != ids[i - 1], "op id %lu given twice", (unsigned long)ids[i]);
	ck_assert_uint_ne(ids[0], 0);
	free(ids);
}
END_TEST

START_TEST(test_deep_nesting_keeps_depth)
{
	uint64_t ids[40];

	start_tracing();
	for (int i = 0; i < 40; i++)
		ids[i] = optrace_op_begin("deep", OPTRACE_CALLSITE);
	for (int i = 39; i >= 0; i--)
		optrace_op_end(ids[i], OPTRACE_STATUS_OK);
	ids[0] = optrace_op_begin("after", OPTRACE_CALLSITE);
	optrace_op_end(ids[0], OPTRACE_STATUS_OK);
	self_trace_stop();
	collect();

	for (int i = 0; i < 40; i++) {
		const struct self_event *e = nth("op_begin", i);

		ck_assert_uint_eq(e->args[2], (uint64_t)i);
		/* Past the stack's 32 entries the parent is unknown (0). */
		if (i > 0 && i <= 32)
			ck_assert_uint_eq(e->args[1], nth("op_begin", i - 1)->args[0]);
		if (i > 32)
			ck_assert_uint_eq(e->args[1], 0);
	}
	ck_assert_uint_eq(nth("op_begin", 40)->args[2], 0);
}
END_TEST

START_TEST(test_attach_mid_operation_keeps_depth)
{
	uint64_t outer = optrace_op_begin("outer", OPTRACE_CALLSITE), inner;

	start_tracing();
	inner = optrace_op_begin("inner", OPTRACE_CALLSITE);
	optrace_op_end(inner, OPTRACE_STATUS_OK);
	optrace_op_end(outer, OPTRACE_STATUS_OK);
	self_trace_stop();
	collect();

	ck_assert_uint_eq(outer, 0);
	ck_assert_int_eq(count_of("op_begin"), 1);
	ck_assert_uint_eq(nth("op_begin", 0)->args[1], 0); /* parent began untraced */
	ck_assert_uint_eq(nth("op_begin", 0)->args[2], 1);
	ck_assert_int_eq(count_of("op_end"), 1); /* none for the untraced outer op */
}
END_TEST

START_TEST(test_a_skipped_end_does_not_nest_what_follows)
{
	uint64_t outer, inner, next;

	start_tracing();
	outer = optrace_op_begin("outer", OPTRACE_CALLSITE);
	inner = optrace_op_begin("inner", OPTRACE_CALLSITE);
	(void)inner; /* its end is skipped, as by an exception */
	optrace_op_end(outer, OPTRACE_STATUS_ERROR);
	next = optrace_op_begin("next", OPTRACE_CALLSITE);
	optrace_op_end(next, OPTRACE_STATUS_OK);
	self_trace_stop();
	collect();

	ck_assert_uint_eq(nth("op_begin", 2)->args[0], next);
	ck_assert_uint_eq(nth("op_begin", 2)->args[1], 0); /* a top-level op again */
	ck_assert_uint_eq(nth("op_begin", 2)->args[2], 0);
}
END_TEST

START_TEST(test_task_launch_carries_root)
{
	static const char task_name[] = "BinaryOp";
	uint64_t root, helper, task;

	start_tracing();
	root = optrace_op_begin("var", OPTRACE_CALLSITE);
	helper = optrace_op_begin("subtract", OPTRACE_CALLSITE);
	optrace_op_mode(helper, OPTRACE_MODE_DEFERRED, OPTRACE_MODE_REASON_ABOVE_THRESHOLD);
	task = optrace_task_launch(helper, task_name, 4);
	optrace_task_begin(task, 3, OPTRACE_VARIANT_OPENMP, 7);
	optrace_task_end(task, 3, OPTRACE_STATUS_OK);
	optrace_op_end(helper, OPTRACE_STATUS_OK);
	optrace_op_end(root, OPTRACE_STATUS_OK);
	self_trace_stop();
	collect();

	ck_assert_uint_ne(task, 0);
	/* task_launch(task, op, root op, name, points) */
	ck_assert_uint_eq(nth("task_launch", 0)->args[0], task);
	ck_assert_uint_eq(nth("task_launch", 0)->args[1], helper);
	ck_assert_uint_eq(nth("task_launch", 0)->args[2], root);
	ck_assert_ptr_eq((const char *)nth("task_launch", 0)->args[3], task_name);
	ck_assert_uint_eq(nth("task_launch", 0)->args[4], 4);
	/* task_begin(task, point, variant, processor), task_end(task, point, status) */
	ck_assert_uint_eq(nth("task_begin", 0)->args[1], 3);
	ck_assert_uint_eq(nth("task_begin", 0)->args[2], OPTRACE_VARIANT_OPENMP);
	ck_assert_uint_eq(nth("task_begin", 0)->args[3], 7);
	ck_assert_uint_eq(nth("task_end", 0)->args[0], task);
	ck_assert_uint_eq(nth("op_mode", 0)->args[1], OPTRACE_MODE_DEFERRED);
	ck_assert_uint_eq(nth("op_mode", 0)->args[2], OPTRACE_MODE_REASON_ABOVE_THRESHOLD);
}
END_TEST

START_TEST(test_fallback_and_waits)
{
	static const char detail[] = "sort is not implemented";
	uint64_t op;

	start_tracing();
	optrace_wait_begin(0, OPTRACE_WAIT_FENCE);
	optrace_wait_end(0, OPTRACE_WAIT_FENCE);
	op = optrace_op_begin("sort", OPTRACE_CALLSITE);
	optrace_op_fallback(op, OPTRACE_FALLBACK_UNIMPLEMENTED_API, detail);
	optrace_wait_begin(op, OPTRACE_WAIT_INLINE_MAP);
	optrace_wait_end(op, OPTRACE_WAIT_INLINE_MAP);
	optrace_op_end(op, OPTRACE_STATUS_OK);
	self_trace_stop();
	collect();

	ck_assert_uint_eq(nth("op_fallback", 0)->args[0], op);
	ck_assert_uint_eq(nth("op_fallback", 0)->args[1], OPTRACE_FALLBACK_UNIMPLEMENTED_API);
	ck_assert_ptr_eq((const char *)nth("op_fallback", 0)->args[2], detail);
	ck_assert_uint_eq(nth("wait_begin", 0)->args[0], 0);
	ck_assert_uint_eq(nth("wait_begin", 0)->args[1], OPTRACE_WAIT_FENCE);
	ck_assert_uint_eq(nth("wait_end", 1)->args[0], op);
	ck_assert_uint_eq(nth("wait_end", 1)->args[1], OPTRACE_WAIT_INLINE_MAP);
}
END_TEST

extern struct optrace_runtime_info optrace_runtime;

START_TEST(test_rt_init_takes_rank_from_launcher)
{
	setenv("OMPI_COMM_WORLD_RANK", "3", 1);
	setenv("OMPI_COMM_WORLD_SIZE", "8", 1);
	start_tracing();
	optrace_rt_init(-1, -1);
	optrace_rt_init(5, -1);
	self_trace_stop();
	collect();

	ck_assert_int_eq(count_of("rt_init"), 2);
	ck_assert_uint_eq(nth("rt_init", 0)->args[0], OPTRACE_ABI_VERSION);
	ck_assert_int_eq((int64_t)nth("rt_init", 0)->args[1], 3);
	ck_assert_int_eq((int64_t)nth("rt_init", 0)->args[2], 8);
	ck_assert_int_eq((int64_t)nth("rt_init", 1)->args[1], 5);
	ck_assert_int_eq(optrace_runtime.rank, 5);
	ck_assert_int_eq(optrace_runtime.rank_count, 8);
	ck_assert_uint_eq(optrace_runtime.initialized, 1);
}
END_TEST

START_TEST(test_rt_init_ignores_garbage_environment)
{
	setenv("OMPI_COMM_WORLD_RANK", "3x", 1);
	setenv("SLURM_PROCID", "-2", 1);
	setenv("PMI_RANK", "99999999999999999999", 1);
	unsetenv("OMPI_COMM_WORLD_SIZE");
	optrace_rt_init(-1, -1);
	ck_assert_int_eq(optrace_runtime.rank, 0);
	ck_assert_int_eq(optrace_runtime.rank_count, 1);
}
END_TEST

START_TEST(test_enum_names)
{
	ck_assert_str_eq(optrace_mode_name(OPTRACE_MODE_EAGER), "eager");
	ck_assert_str_eq(optrace_mode_name(OPTRACE_MODE_MIXED), "mixed");
	ck_assert_str_eq(optrace_mode_name(OPTRACE_MODE__COUNT), "unknown");
	ck_assert_str_eq(optrace_mode_name(-1), "unknown");
	ck_assert_str_eq(optrace_mode_reason_name(OPTRACE_MODE_REASON_INPUTS_DEFERRED),
			 "inputs_deferred");
	ck_assert_str_eq(optrace_mode_reason_name(99), "unknown");
	ck_assert_str_eq(optrace_fallback_reason_name(OPTRACE_FALLBACK_UNSUPPORTED_DTYPE),
			 "unsupported_dtype");
	ck_assert_str_eq(optrace_fallback_reason_name(OPTRACE_FALLBACK__COUNT), "unknown");
	ck_assert_str_eq(optrace_variant_name(OPTRACE_VARIANT_OPENMP), "omp");
	ck_assert_str_eq(optrace_variant_name(OPTRACE_VARIANT_HOST_REFERENCE), "fallback");
	ck_assert_str_eq(optrace_variant_name(OPTRACE_VARIANT_OPENCL), "opencl");
	ck_assert_str_eq(optrace_variant_name(OPTRACE_VARIANT__COUNT), "unknown");
	ck_assert_str_eq(optrace_wait_kind_name(OPTRACE_WAIT_INLINE_MAP), "inline_map");
	ck_assert_str_eq(optrace_status_name(OPTRACE_STATUS_ERROR), "error");
	ck_assert_str_eq(optrace_status_name(2), "unknown");
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("liboptrace");
	TCase *tc = tcase_create("api");

	tcase_add_test(tc, test_untraced_calls_fire_nothing);
	tcase_add_test(tc, test_enabled_follows_the_tracer);
	tcase_add_test(tc, test_current_op_is_the_innermost);
	tcase_add_test(tc, test_nesting_gives_parent_and_depth);
	tcase_add_test(tc, test_ids_unique_and_parents_per_thread);
	tcase_add_test(tc, test_deep_nesting_keeps_depth);
	tcase_add_test(tc, test_attach_mid_operation_keeps_depth);
	tcase_add_test(tc, test_a_skipped_end_does_not_nest_what_follows);
	tcase_add_test(tc, test_task_launch_carries_root);
	tcase_add_test(tc, test_fallback_and_waits);
	tcase_add_test(tc, test_rt_init_takes_rank_from_launcher);
	tcase_add_test(tc, test_rt_init_ignores_garbage_environment);
	tcase_add_test(tc, test_enum_names);
	suite_add_tcase(suite, tc);

	return run_suite(suite);
}
