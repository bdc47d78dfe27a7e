// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The profile model on hand-built record sequences. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feed.h"
#include "testlib.h"
#include "model/profile.h"
#include "model/profile_aggregates.h"
#include "output/stat_print.h"

#define PID 100
#define MAIN 100
#define WORKER 101

/* What the consumer was handed, in order. */
static struct profile_op done[64];
static int done_count;
static struct profile_run runs[64];
static int run_count;
static struct profile_wait waits[8];
static int wait_count;
static char done_names[64][32];

static void on_op_done(void *ctx, const struct profile *profile, const struct profile_op *op)
{
	(void)ctx;
	ck_assert_int_lt(done_count, 64);
	snprintf(done_names[done_count], sizeof(done_names[0]), "%s",
		 profile_string(profile, op->tgid, op->name));
	done[done_count++] = *op;
}

static void on_task_run(void *ctx, const struct profile *profile, const struct profile_run *run)
{
	(void)ctx;
	(void)profile;
	ck_assert_int_lt(run_count, 64);
	runs[run_count++] = *run;
}

static void on_wait(void *ctx, const struct profile *profile, const struct profile_wait *wait)
{
	(void)ctx;
	(void)profile;
	waits[wait_count++] = *wait;
}

static struct profile profile;

static void setup(void)
{
	struct profile_consumer consumer = {
		.op_done = on_op_done,
		.task_run = on_task_run,
		.wait = on_wait,
	};

	done_count = run_count = wait_count = 0;
	profile_init(&profile, &consumer);
}

static void teardown(void)
{
	profile_free(&profile);
}

static void feed(uint64_t ts, uint32_t tid, int type, uint64_t a0, uint64_t a1, uint64_t a2,
		 uint64_t a3, uint64_t a4)
{
	feed_event(&profile, PID, ts, tid, type, a0, a1, a2, a3, a4);
}

/* Names are addresses in the traced process; these stand for them. */
enum { MEAN = 0x1000, SUM = 0x2000, DIVIDE = 0x3000, SITE = 0x4000, REDUCE = 0x5000 };

static void feed_string(uint64_t address, const char *text)
{
	feed_text(&profile, PID, address, text);
}

static void strings(void)
{
	feed_string(MEAN, "mean");
	feed_string(SUM, "sum");
	feed_string(DIVIDE, "divide");
	feed_string(SITE, "main.py:3");
	feed_string(REDUCE, "Reduce");
}

START_TEST(test_nesting_and_self_time)
{
	strings();
	feed(100, MAIN, RECORD_OP_BEGIN, 1, 0, 0, MEAN, SITE);
	feed(110, MAIN, RECORD_OP_BEGIN, 2, 1, 1, SUM, SITE);
	feed(111, MAIN, RECORD_OP_MODE, 2, OPTRACE_MODE_EAGER, OPTRACE_MODE_REASON_BELOW_THRESHOLD,
	     0, 0);
	feed(150, MAIN, RECORD_OP_END, 2, 0, 0, 0, 0);
	feed(160, MAIN, RECORD_OP_BEGIN, 3, 1, 1, DIVIDE, SITE);
	feed(170, MAIN, RECORD_OP_END, 3, 1, 0, 0, 0);
	feed(200, MAIN, RECORD_OP_END, 1, 0, 0, 0, 0);
	profile_finish(&profile);

	/* Done innermost first: a helper before the op that called it. */
	ck_assert_int_eq(done_count, 3);
	ck_assert_str_eq(done_names[0], "sum");
	ck_assert_str_eq(done_names[1], "divide");
	ck_assert_str_eq(done_names[2], "mean");
	ck_assert_int_eq(done[0].depth, 1);
	ck_assert_uint_eq(done[0].parent_name, MEAN);
	ck_assert_uint_eq(done[0].root_name, MEAN);
	ck_assert_int_eq(done[0].mode, OPTRACE_MODE_EAGER);
	ck_assert_int_eq(done[1].status, 1);
	ck_assert_int_eq(done[2].mode, PROFILE_MODE_UNSET);
	ck_assert_uint_eq(done[2].end_ns - done[2].begin_ns, 100);
	ck_assert_uint_eq(done[2].child_ns, 50); /* 40 in sum, 10 in divide */
	ck_assert_uint_eq(done[2].root_name, MEAN);
	ck_assert(!done[2].cut);
	ck_assert_uint_eq(profile.ops.count, 0); /* nothing kept */
}
END_TEST

START_TEST(test_tasks_keep_their_operation_until_they_ran)
{
	strings();
	feed(100, MAIN, RECORD_OP_BEGIN, 1, 0, 0, MEAN, SITE);
	feed(110, MAIN, RECORD_OP_BEGIN, 2, 1, 1, SUM, SITE);
	feed(112, MAIN, RECORD_TASK_LAUNCH, 77, 2, 1, REDUCE, 2);
	feed(115, MAIN, RECORD_OP_END, 2, 0, 0, 0, 0);
	feed(120, MAIN, RECORD_OP_END, 1, 0, 0, 0, 0);
	/* Both ended, but their tasks have not run: nothing done yet. */
	ck_assert_int_eq(done_count, 0);
	/* The worker's clock is a little behind: order is per thread only. */
	feed(118, WORKER, RECORD_TASK_BEGIN, 77, 0, OPTRACE_VARIANT_OPENMP, 3, 0);
	feed(130, WORKER, RECORD_TASK_END, 77, 0, 0, 0, 0);
	ck_assert_int_eq(done_count, 0);
	feed(131, WORKER, RECORD_TASK_BEGIN, 77, 1, OPTRACE_VARIANT_CPU, 0, 0);
	feed(140, WORKER, RECORD_TASK_END, 77, 1, 0, 0, 0);
	ck_assert_int_eq(done_count, 2);

	ck_assert_int_eq(run_count, 2);
	ck_assert_uint_eq(runs[0].task_name, REDUCE);
	ck_assert_uint_eq(runs[0].root_name, MEAN);
	ck_assert_uint_eq(runs[0].op_name, SUM);
	ck_assert_int_eq(runs[0].variant, OPTRACE_VARIANT_OPENMP);
	ck_assert_uint_eq(runs[0].processor, 3);
	ck_assert_uint_eq(runs[1].end_ns - runs[1].begin_ns, 9);
	/* sum ran one point per variant; mean's tree counts them too. */
	ck_assert_str_eq(done_names[0], "sum");
	ck_assert_uint_eq(done[0].points[OPTRACE_VARIANT_OPENMP], 1);
	ck_assert_uint_eq(done[0].points[OPTRACE_VARIANT_CPU], 1);
	ck_assert_uint_eq(done[1].points[OPTRACE_VARIANT_CPU], 0);
	ck_assert_uint_eq(done[1].tree_points[OPTRACE_VARIANT_CPU], 1);
	ck_assert_uint_eq(done[1].tree_points[OPTRACE_VARIANT_OPENMP], 1);
	ck_assert_uint_eq(profile.tasks.count, 0);
}
END_TEST

START_TEST(test_open_at_the_end_is_closed_and_marked)
{
	strings();
	feed(100, MAIN, RECORD_OP_BEGIN, 1, 0, 0, MEAN, SITE);
	feed(110, MAIN, RECORD_OP_BEGIN, 2, 1, 1, SUM, SITE);
	feed(112, MAIN, RECORD_TASK_LAUNCH, 77, 2, 1, REDUCE, 3);
	feed(118, WORKER, RECORD_TASK_BEGIN, 77, 0, OPTRACE_VARIANT_CPU, 0, 0);
	feed(150, MAIN, RECORD_WAIT_BEGIN, 2, OPTRACE_WAIT_FUTURE, 0, 0, 0);
	profile_finish(&profile);

	/* The running point is cut, the two never run are dropped. */
	ck_assert_int_eq(run_count, 1);
	ck_assert(runs[0].cut);
	ck_assert_uint_eq(runs[0].end_ns, 150);
	ck_assert_int_eq(done_count, 2);
	ck_assert(done[0].cut && done[1].cut);
	ck_assert_uint_eq(done[1].end_ns, 150);
	ck_assert_uint_eq(profile.stats.cut_ops, 2);
	ck_assert_uint_eq(profile.stats.cut_runs, 1);
}
END_TEST

START_TEST(test_attached_mid_operation)
{
	strings();
	/* sum's caller began before the capture: parent 7 was never seen. */
	feed(110, MAIN, RECORD_OP_BEGIN, 2, 7, 1, SUM, SITE);
	feed(115, MAIN, RECORD_OP_END, 2, 0, 0, 0, 0);
	feed(120, MAIN, RECORD_OP_END, 7, 0, 0, 0, 0);
	feed(125, WORKER, RECORD_TASK_END, 99, 0, 0, 0, 0);
	feed(126, WORKER, RECORD_TASK_BEGIN, 99, 0, 0, 0, 0);
	profile_finish(&profile);

	ck_assert_int_eq(done_count, 1);
	ck_assert_uint_eq(done[0].depth, 1);
	ck_assert_uint_eq(done[0].parent_name, 0);
	ck_assert_uint_eq(done[0].root_name, 0);
	ck_assert_uint_eq(profile.stats.unmatched, 3);
	ck_assert_str_eq(profile_string(&profile, PID, 0x9999), "(not captured)");
	ck_assert_str_eq(profile_string(&profile, PID, 0), "(unknown)");
}
END_TEST

START_TEST(test_waits_and_bad_records)
{
	char junk[7] = { 0 };
	struct record_event odd = { .tgid = PID, .tid = MAIN, .type = 999 };

	strings();
	feed(100, MAIN, RECORD_OP_BEGIN, 1, 0, 0, MEAN, SITE);
	feed(110, MAIN, RECORD_WAIT_BEGIN, 1, OPTRACE_WAIT_FUTURE, 0, 0, 0);
	feed(130, MAIN, RECORD_WAIT_END, 1, OPTRACE_WAIT_FUTURE, 0, 0, 0);
	feed(140, MAIN, RECORD_OP_END, 1, 0, 0, 0, 0);
	ck_assert_int_eq(profile_feed(&profile, junk, sizeof(junk)), 0);
	ck_assert_int_eq(profile_feed(&profile, &odd, sizeof(odd)), 0);
	profile_finish(&profile);

	ck_assert_int_eq(wait_count, 1);
	ck_assert_int_eq(waits[0].kind, OPTRACE_WAIT_FUTURE);
	ck_assert_uint_eq(waits[0].end_ns - waits[0].begin_ns, 20);
	ck_assert_uint_eq(waits[0].root_name, MEAN);
	ck_assert_uint_eq(profile.stats.malformed, 2);
}
END_TEST

static void count_only(void *ctx, const struct profile *p, const struct profile_op *op)
{
	(void)p;
	(void)op;
	(*(long *)ctx)++;
}

START_TEST(test_many_ops_counted)
{
	long count = 0;
	struct profile_consumer consumer = { .ctx = &count, .op_done = count_only };

	profile_free(&profile);
	profile_init(&profile, &consumer);
	for (uint64_t i = 1; i <= 100000; i++) {
		feed(i * 10, MAIN, RECORD_OP_BEGIN, i, 0, 0, MEAN, SITE);
		feed(i * 10 + 5, MAIN, RECORD_OP_END, i, 0, 0, 0, 0);
	}
	/* Memory is bounded by what is open, not by the capture's length. */
	ck_assert_uint_eq(profile.ops.count, 0);
	profile_finish(&profile);
	ck_assert_int_eq(count, 100000);
}
END_TEST

START_TEST(test_runs_past_the_points_and_huge_counts)
{
	strings();
	feed(100, MAIN, RECORD_OP_BEGIN, 1, 0, 0, MEAN, SITE);
	/* A one-point task that two workers both run (a buggy runtime). */
	feed(110, MAIN, RECORD_TASK_LAUNCH, 7, 1, 1, REDUCE, 1);
	feed(120, WORKER, RECORD_TASK_BEGIN, 7, 0, OPTRACE_VARIANT_CPU, 0, 0);
	feed(121, WORKER + 1, RECORD_TASK_BEGIN, 7, 0, OPTRACE_VARIANT_CPU, 1, 0);
	/* A task claiming 2^32 - 1 points must not wrap the op's count. */
	feed(122, MAIN, RECORD_TASK_LAUNCH, 8, 1, 1, REDUCE, 0xffffffffULL);
	feed(130, WORKER, RECORD_TASK_END, 7, 0, 0, 0, 0);
	feed(140, MAIN, RECORD_OP_END, 1, 0, 0, 0, 0);
	feed(150, WORKER + 1, RECORD_TASK_END, 7, 0, 0, 0, 0);
	ck_assert_int_eq(done_count, 0); /* task 8's points hold it */
	profile_finish(&profile);

	ck_assert_int_eq(run_count, 2);
	ck_assert_ptr_nonnull(runs[0].op);
	ck_assert_ptr_null(runs[1].op); /* the task was complete: no stale op */
	ck_assert_int_eq(done_count, 1);
	ck_assert(!done[0].cut);
}
END_TEST

START_TEST(test_missed_ends_are_closed_where_found)
{
	strings();
	feed(100, MAIN, RECORD_OP_BEGIN, 1, 0, 0, MEAN, SITE);
	feed(110, MAIN, RECORD_OP_BEGIN, 2, 1, 1, SUM, SITE);
	/* sum's end was lost: mean's end closes it there. */
	feed(130, MAIN, RECORD_OP_END, 1, 0, 0, 0, 0);
	feed(140, MAIN, RECORD_OP_BEGIN, 3, 0, 0, MEAN, SITE);
	/* mean #3's end was lost too: the next op at depth 0 closes it. */
	feed(150, MAIN, RECORD_OP_BEGIN, 4, 0, 0, DIVIDE, SITE);
	feed(160, MAIN, RECORD_OP_END, 4, 0, 0, 0, 0);
	profile_finish(&profile);

	ck_assert_int_eq(done_count, 4);
	ck_assert_str_eq(done_names[0], "sum");
	ck_assert(done[0].cut);
	ck_assert_uint_eq(done[0].end_ns, 130);
	ck_assert(!done[1].cut); /* mean #1 ended properly */
	ck_assert(done[2].cut);
	ck_assert_uint_eq(done[2].end_ns, 150);
	ck_assert_str_eq(done_names[3], "divide");
	ck_assert_uint_eq(profile.stats.cut_ops, 2);
}
END_TEST

/* The report's rows: by name, or by name and call site. */
static size_t report_rows(bool by_site, bool internal, __u64 *sites)
{
	struct profile_consumer consumer;
	struct report_builder builder;
	size_t rows;

	profile_free(&profile);
	report_builder_init(&builder, &consumer, by_site, internal);
	profile_init(&profile, &consumer);
	strings();
	feed(100, MAIN, RECORD_OP_BEGIN, 1, 0, 0, MEAN, SITE);
	feed(110, MAIN, RECORD_OP_BEGIN, 2, 1, 1, SUM, DIVIDE);
	feed(120, MAIN, RECORD_OP_END, 2, 0, 0, 0, 0);
	feed(130, MAIN, RECORD_OP_END, 1, 0, 0, 0, 0);
	feed(140, MAIN, RECORD_OP_BEGIN, 3, 0, 0, MEAN, REDUCE);
	feed(150, MAIN, RECORD_OP_END, 3, 0, 0, 0, 0);
	profile_finish(&profile);
	ck_assert_int_eq(report_builder_finish(&builder, &profile), 0);
	rows = builder.snapshot.op_count;
	for (size_t i = 0; i < rows; i++)
		sites[i] = builder.snapshot.ops[i].key.callsite;
	ck_assert_int_eq(builder.snapshot.string_count, 5);
	report_builder_free(&builder);
	return rows;
}

START_TEST(test_report_groups_by_call_site)
{
	__u64 sites[8];

	/* By name: mean (twice) and sum. */
	ck_assert_uint_eq(report_rows(false, false, sites), 2);
	ck_assert_uint_eq(sites[0] | sites[1], 0);
	/* By site: mean at two sites; the helper still by name only. */
	ck_assert_uint_eq(report_rows(true, false, sites), 3);
	/* --internal: the helper's site too. */
	ck_assert_uint_eq(report_rows(true, true, sites), 3);
	ck_assert(sites[0] == DIVIDE || sites[1] == DIVIDE || sites[2] == DIVIDE);
}
END_TEST

/*
 * 40,000 nested levels (issue 41): every level a row of its own whose path
 * extends its parent's, and the summaries chain level to level. Each op's
 * path was its ancestors' walked again, and the summaries matched row by
 * row: 40,000 levels took minutes; this test's 30 s timeout catches that.
 */
START_TEST(test_report_linear_in_depth)
{
	enum { DEPTH = 40000 };
	struct profile_consumer consumer;
	struct report_builder deep;
	struct op_summary *summaries;
	const struct op_summary **by_depth;
	size_t count;

	profile_free(&profile);
	report_builder_init(&deep, &consumer, false, false);
	profile_init(&profile, &consumer);
	strings();
	for (uint64_t d = 0; d < DEPTH; d++)
		feed(100 + d, MAIN, RECORD_OP_BEGIN, d + 1, d, d, d ? SUM : MEAN, SITE);
	for (uint64_t d = DEPTH; d-- > 0;)
		feed(100 + 2 * DEPTH - d, MAIN, RECORD_OP_END, d + 1, 0, 0, 0, 0);
	profile_finish(&profile);
	ck_assert_int_eq(report_builder_finish(&deep, &profile), 0);
	ck_assert_uint_eq(deep.snapshot.op_count, DEPTH);
	count = stat_summarize_ops(&deep.snapshot, PID, &summaries);
	ck_assert_uint_eq(count, DEPTH);
	/* One summary a level, each the child of the level above. */
	by_depth = calloc(DEPTH, sizeof(*by_depth));
	ck_assert_ptr_nonnull(by_depth);
	for (size_t i = 0; i < count; i++) {
		ck_assert_uint_eq(summaries[i].latency.count, 1);
		ck_assert_uint_lt(summaries[i].depth, DEPTH);
		ck_assert_ptr_null(by_depth[summaries[i].depth]);
		by_depth[summaries[i].depth] = &summaries[i];
	}
	for (size_t d = 1; d < DEPTH; d++)
		ck_assert_msg(stat_summary_is_child(by_depth[d], by_depth[d - 1]), "level %zu", d);
	free(by_depth);
	stat_summaries_free(summaries, count);
	report_builder_free(&deep);
}
END_TEST

/* ---- issue 15: report's tables, from the profile ---------------------------------------- */

enum { MEDIAN = 0x6000, SORT = 0x7000, HOST = 0x8000, DETAIL = 0x9000 };

static struct report_builder builder;

/*
 * median (the user's call) sorts through a helper that falls back and runs
 * a 1000 ns task, while median's thread waits 1000 ns inside the helper; the
 * user's own sort falls back and runs a 500 ns task; a wait outside any
 * operation; a mean that fails before it announces a mode.
 */
static void feed_fallbacks(void)
{
	struct profile_consumer consumer;

	profile_free(&profile);
	report_builder_init(&builder, &consumer, false, false);
	profile_init(&profile, &consumer);
	strings();
	feed_string(MEDIAN, "median");
	feed_string(SORT, "sort");
	feed_string(HOST, "HostReference");
	feed_string(DETAIL, "sort is not implemented");
	feed(100, MAIN, RECORD_OP_BEGIN, 1, 0, 0, MEDIAN, SITE);
	feed(105, MAIN, RECORD_OP_MODE, 1, OPTRACE_MODE_MIXED, OPTRACE_MODE_REASON_HELPERS, 0, 0);
	feed(110, MAIN, RECORD_OP_BEGIN, 2, 1, 1, SORT, SITE);
	feed(111, MAIN, RECORD_OP_MODE, 2, OPTRACE_MODE_FALLBACK, OPTRACE_MODE_REASON_FALLBACK, 0,
	     0);
	feed(112, MAIN, RECORD_OP_FALLBACK, 2, OPTRACE_FALLBACK_UNIMPLEMENTED_API, DETAIL, 0, 0);
	feed(113, MAIN, RECORD_TASK_LAUNCH, 50, 2, 1, HOST, 1);
	feed(115, WORKER, RECORD_TASK_BEGIN, 50, 0, OPTRACE_VARIANT_HOST_REFERENCE, 0, 0);
	feed(120, MAIN, RECORD_WAIT_BEGIN, 2, OPTRACE_WAIT_FUTURE, 0, 0, 0);
	feed(1115, WORKER, RECORD_TASK_END, 50, 0, 0, 0, 0);
	feed(1120, MAIN, RECORD_WAIT_END, 2, OPTRACE_WAIT_FUTURE, 0, 0, 0);
	feed(1130, MAIN, RECORD_OP_END, 2, 0, 0, 0, 0);
	feed(1140, MAIN, RECORD_OP_END, 1, 0, 0, 0, 0);
	feed(2000, MAIN, RECORD_OP_BEGIN, 3, 0, 0, SORT, SITE);
	feed(2001, MAIN, RECORD_OP_MODE, 3, OPTRACE_MODE_FALLBACK, OPTRACE_MODE_REASON_FALLBACK, 0,
	     0);
	feed(2002, MAIN, RECORD_OP_FALLBACK, 3, OPTRACE_FALLBACK_UNIMPLEMENTED_API, DETAIL, 0, 0);
	feed(2003, MAIN, RECORD_TASK_LAUNCH, 51, 3, 3, HOST, 1);
	feed(2005, WORKER, RECORD_TASK_BEGIN, 51, 0, OPTRACE_VARIANT_HOST_REFERENCE, 0, 0);
	feed(2010, MAIN, RECORD_OP_END, 3, 0, 0, 0, 0);
	feed(2505, WORKER, RECORD_TASK_END, 51, 0, 0, 0, 0);
	feed(3000, MAIN, RECORD_WAIT_BEGIN, 0, OPTRACE_WAIT_FUTURE, 0, 0, 0);
	feed(3100, MAIN, RECORD_WAIT_END, 0, OPTRACE_WAIT_FUTURE, 0, 0, 0);
	feed(4000, MAIN, RECORD_OP_BEGIN, 4, 0, 0, MEAN, SITE);
	feed(4010, MAIN, RECORD_OP_END, 4, OPTRACE_STATUS_ERROR, 0, 0, 0);
	profile_finish(&profile);
	ck_assert_int_eq(report_builder_finish(&builder, &profile), 0);
}

static __attribute__((noinline)) char *print_report(bool show_helpers)
{
	struct stat_print_options options = { .show_helpers = show_helpers };
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	stat_print(out, &builder.snapshot, &options);
	fclose(out);
	return squeeze_spaces(text);
}

/* Item 4: per operation its tasks' time, helpers' in; ranked by the larger. */
START_TEST(test_report_work_per_operation)
{
	struct op_summary *s;
	size_t count;

	feed_fallbacks();
	count = stat_summarize_ops(&builder.snapshot, PID, &s);
	ck_assert_uint_eq(count, 4);
	/* median: 1040 ns of call, 1000 of its helper's task */
	ck_assert_uint_eq(s[0].name, MEDIAN);
	ck_assert_uint_eq(s[0].latency.total_ns, 1040);
	ck_assert_uint_eq(s[0].work.task_ns, 1000);
	ck_assert_uint_eq(s[0].work.task_runs, 1);
	/* the helper (1020 ns of call) knows its own */
	ck_assert_uint_eq(s[1].name, SORT);
	ck_assert_uint_eq(s[1].depth, 1);
	ck_assert_uint_eq(s[1].work.task_ns, 1000);
	ck_assert(s[1].work_known);
	/* the user's sort: a 10 ns call, ranked by its 500 ns task, above mean's 10 ns */
	ck_assert_uint_eq(s[2].name, SORT);
	ck_assert_uint_eq(s[2].depth, 0);
	ck_assert_uint_eq(s[2].latency.total_ns, 10);
	ck_assert_uint_eq(s[2].work.task_ns, 500);
	ck_assert_uint_eq(stat_summary_cost(&s[2]), 500);
	ck_assert_uint_eq(s[3].name, MEAN);
	stat_summaries_free(s, count);
	report_builder_free(&builder);
}
END_TEST

/* Items 4 and 5: waits inside a helper count under the user's call; tables alike. */
START_TEST(test_report_tables_group_alike)
{
	struct stat_group *g;
	size_t count;
	char *plain, *split;

	feed_fallbacks();
	count = stat_group(&builder.snapshot, PID, STAT_WAITS, false, &g);
	ck_assert_uint_eq(count, 2);
	ck_assert_uint_eq(g[0].root_name, MEDIAN); /* 1000 ns, inside median's helper */
	ck_assert_uint_eq(g[0].op_name, 0);
	ck_assert_uint_eq(g[1].root_name, 0); /* 100 ns, outside */
	stat_groups_free(g, count);
	count = stat_group(&builder.snapshot, PID, STAT_WAITS, true, &g);
	ck_assert_uint_eq(g[0].op_name, SORT);
	stat_groups_free(g, count);
	count = stat_group(&builder.snapshot, PID, STAT_FALLBACKS, false, &g);
	ck_assert_uint_eq(count, 2);
	for (size_t i = 0; i < count; i++) {
		ck_assert_uint_eq(g[i].name, SORT);
		ck_assert_uint_eq(g[i].count, 1);
	}
	ck_assert_uint_eq(g[0].root_name | g[1].root_name, MEDIAN);
	stat_groups_free(g, count);
	count = stat_group(&builder.snapshot, PID, STAT_TASKS, false, &g);
	ck_assert_uint_eq(count, 2);
	ck_assert_uint_eq(g[0].root_name, MEDIAN);
	ck_assert_uint_eq(g[0].op_name, 0);
	stat_groups_free(g, count);
	count = stat_group(&builder.snapshot, PID, STAT_TASKS, true, &g);
	ck_assert_uint_eq(g[0].op_name, SORT);
	stat_groups_free(g, count);

	plain = print_report(false);
	split = print_report(true);
	ck_assert_msg(strstr(plain, "\nmedian via sort ") && strstr(plain, "\nsort "), "%s", plain);
	ck_assert_msg(strstr(plain, "\nfuture median ") &&
			      strstr(plain, "\nfuture (outside operations)"),
		      "%s", plain);
	ck_assert_msg(!strstr(plain, "fallback median via sort"), "%s", plain);
	ck_assert_msg(strstr(split, "fallback median via sort"), "%s", split);
	ck_assert_msg(strstr(split, "\nfuture median via sort "), "%s", split);
	free(plain);
	free(split);
	report_builder_free(&builder);
}
END_TEST

/* Item 6: exact percentiles, modes in words. */
START_TEST(test_report_values_exact_and_plain)
{
	char *text;

	feed_fallbacks();
	text = print_report(false);
	/* median's one call: 1040 ns exactly; nothing is a bound */
	ck_assert_msg(strstr(text, "\nmedian ") && strstr(strstr(text, "\nmedian "), " 1.04us "),
		      "%s", text);
	ck_assert_msg(!strstr(text, "<="), "%s", text);
	ck_assert_msg(strstr(text, " fallback=1\n"), "%s", text);
	ck_assert_msg(strstr(text, " not announced=1\n"), "%s", text);
	ck_assert_msg(strstr(text, " mixed:helpers=1\n"), "%s", text);
	ck_assert_msg(!strstr(text, "unset") && !strstr(text, "fallback:fallback"), "%s", text);
	free(text);
	report_builder_free(&builder);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("profile");
	TCase *tc = tcase_create("model");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_nesting_and_self_time);
	tcase_add_test(tc, test_tasks_keep_their_operation_until_they_ran);
	tcase_add_test(tc, test_open_at_the_end_is_closed_and_marked);
	tcase_add_test(tc, test_attached_mid_operation);
	tcase_add_test(tc, test_waits_and_bad_records);
	tcase_add_test(tc, test_many_ops_counted);
	tcase_add_test(tc, test_report_groups_by_call_site);
	tcase_add_test(tc, test_runs_past_the_points_and_huge_counts);
	tcase_add_test(tc, test_missed_ends_are_closed_where_found);
	tcase_add_test(tc, test_report_work_per_operation);
	tcase_add_test(tc, test_report_tables_group_alike);
	tcase_add_test(tc, test_report_values_exact_and_plain);
	tcase_add_test(tc, test_report_linear_in_depth);
	suite_add_tcase(suite, tc);

	return run_suite(suite);
}
