// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The stat model without BPF: merging, percentiles, roll-up, output. */
#define _GNU_SOURCE
#include <optrace/abi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"
#include "testlib.h"
#include "output/json.h"
#include "output/stat_print.h"

static void record(struct latency *latency, __u64 ns, __u64 self_ns)
{
	int slot = 0;

	while (slot + 1 < STAT_HIST_SLOTS && (1ULL << (slot + 1)) <= ns)
		slot++;
	latency->hist[slot]++;
	if (!latency->count || ns < latency->min_ns)
		latency->min_ns = ns;
	if (ns > latency->max_ns)
		latency->max_ns = ns;
	latency->count++;
	latency->total_ns += ns;
	latency->self_ns += self_ns;
}

START_TEST(test_merge_and_percentiles)
{
	struct latency a = { 0 }, b = { 0 }, sum = { 0 };
	double p50, p99;

	for (int i = 0; i < 99; i++)
		record(&a, 1000, 1000); /* slot 9: [512, 1024) */
	record(&b, 1000000, 10);
	latency_merge(&sum, &a);
	latency_merge(&sum, &b);
	ck_assert_uint_eq(sum.count, 100);
	ck_assert_uint_eq(sum.total_ns, 99 * 1000 + 1000000);
	ck_assert_uint_eq(sum.self_ns, 99 * 1000 + 10);
	ck_assert_uint_eq(sum.min_ns, 1000);
	ck_assert_uint_eq(sum.max_ns, 1000000);
	p50 = latency_percentile(&sum, 0.5);
	p99 = latency_percentile(&sum, 0.99);
	ck_assert_msg(p50 >= 1000 && p50 <= 1024, "p50 %f", p50);
	ck_assert_msg(p99 >= 1000 && p99 <= 1024, "p99 %f", p99);
	/* The bound of the bucket, not a guess inside it: at most 2^10. */
	ck_assert(p50 == 1024 && p99 == 1024);
	ck_assert(latency_percentile(&sum, 1.0) == 1000000);
	ck_assert(latency_percentile(&(struct latency){ 0 }, 0.5) == 0);
	latency_merge(&sum, &(struct latency){ 0 }); /* an empty CPU changes nothing */
	ck_assert_uint_eq(sum.min_ns, 1000);
}
END_TEST

static const char mean_name[] = "demo.mean", sum_name[] = "demo.sum", evil[] = "evil\"\n\xff$|";

static void add_string(struct stat_snapshot *s, __u32 tgid, const char *text, int truncated)
{
	struct string_row *row;

	s->strings = realloc(s->strings, (s->string_count + 1) * sizeof(*s->strings));
	row = &s->strings[s->string_count++];
	memset(row, 0, sizeof(*row));
	row->key.tgid = tgid;
	row->key.address = (__u64)(unsigned long)text;
	snprintf(row->value.text, sizeof(row->value.text), "%s", text);
	row->value.truncated = (__u8)truncated;
}

static struct op_row *add_op(struct stat_snapshot *s, __u32 tgid, const char *name,
			     const char *parent, __u32 depth, int mode, int reason, int status)
{
	struct op_row *row;

	s->ops = realloc(s->ops, (s->op_count + 1) * sizeof(*s->ops));
	row = &s->ops[s->op_count++];
	memset(row, 0, sizeof(*row));
	row->key = (struct op_key){ .tgid = tgid,
				    .depth = depth,
				    .name = (__u64)(unsigned long)name,
				    .parent_name = (__u64)(unsigned long)parent,
				    .root_name = (__u64)(unsigned long)parent,
				    .mode = (__u8)mode,
				    .mode_reason = (__u8)reason,
				    .status = (__u8)status };
	return row;
}

static struct stat_snapshot sample(void)
{
	struct stat_snapshot s = { 0 };

	add_string(&s, 7, mean_name, 0);
	add_string(&s, 7, sum_name, 0);
	add_string(&s, 7, evil, 1);
	/* mean (helpers: sum) in two modes; one error; sum nested under mean. */
	record(&add_op(&s, 7, mean_name, NULL, 0, OPTRACE_MODE_DEFERRED,
		       OPTRACE_MODE_REASON_HELPERS, OPTRACE_STATUS_OK)
			->latency,
	       5000, 1000);
	record(&add_op(&s, 7, mean_name, NULL, 0, OPTRACE_MODE_EAGER, OPTRACE_MODE_REASON_HELPERS,
		       OPTRACE_STATUS_ERROR)
			->latency,
	       3000, 500);
	record(&add_op(&s, 7, sum_name, mean_name, 1, OPTRACE_MODE_DEFERRED,
		       OPTRACE_MODE_REASON_ABOVE_THRESHOLD, OPTRACE_STATUS_OK)
			->latency,
	       4000, 4000);
	record(&add_op(&s, 7, evil, NULL, 0, STAT_MODE_UNSET, 0, OPTRACE_STATUS_OK)->latency, 10,
	       10);
	/* a helper whose caller began before attach */
	record(&add_op(&s, 7, sum_name, NULL, 1, OPTRACE_MODE_EAGER,
		       OPTRACE_MODE_REASON_BELOW_THRESHOLD, OPTRACE_STATUS_OK)
			->latency,
	       10, 10);
	s.losses[STAT_LOSS_STRING_TRUNCATED] = 1;
	return s;
}

/*
 * The numbers of the text row that starts with name (after its indentation):
 * CALLS, then the columns after P99: SELF(ms), EAGER, DEFERRED, MIXED,
 * FALLBACK, ERRORS into fields[0] and fields[1..6]; P50 and P99 as text.
 */
static bool op_row_fields(const char *text, const char *name, double fields[7], char p50[32],
			  char p99[32])
{
	char pattern[128], call[32], task[32];
	const char *line;

	snprintf(pattern, sizeof(pattern), "\n%s ", name);
	line = strstr(text, pattern);
	if (!line)
		return false;
	return sscanf(line + strlen(pattern), "%lf %31s %31s %31s %31s %lf %lf %lf %lf %lf %lf",
		      &fields[0], call, task, p50, p99, &fields[1], &fields[2], &fields[3],
		      &fields[4], &fields[5], &fields[6]) == 11;
}

static __attribute__((noinline)) char *print_to_string(struct stat_snapshot *s, bool json,
						       bool helpers)
{
	struct stat_print_options options = { .json = json, .show_helpers = helpers };
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	stat_print(out, s, &options);
	fclose(out);
	return json ? text : squeeze_spaces(text);
}

START_TEST(test_text_rolls_helpers_into_callers)
{
	struct stat_snapshot s = sample();
	char *plain = print_to_string(&s, false, false),
	     *helpers = print_to_string(&s, false, true);

	double fields[7];
	char p50[32], p99[32];

	ck_assert_msg(strstr(plain, "== process 7"), "%s", plain);
	/* mean: 2 calls, 1 eager 1 deferred, 1 error; slowest first */
	ck_assert_msg(op_row_fields(plain, "demo.mean", fields, p50, p99), "%s", plain);
	ck_assert(fields[0] == 2 && fields[2] == 1 && fields[3] == 1 && fields[6] == 1);
	ck_assert_msg(strstr(plain, "deferred:helpers=1"), "%s", plain);
	/* helpers only with --show-helpers, indented */
	ck_assert_msg(!strstr(plain, "  demo.sum"), "%s", plain);
	ck_assert_msg(strstr(helpers, "\n  demo.sum "), "%s", helpers);
	ck_assert_msg(strstr(plain, "1 helper calls of operations that began before optrace "
				    "attached"),
		      "%s", plain);
	/* an untrusted name cannot break the table's lines */
	ck_assert_msg(strstr(plain, "evil\"??$|..."), "%s", plain);
	ck_assert_msg(strstr(plain, "lost: string_truncated=1"), "%s", plain);
	free(plain);
	free(helpers);
	stat_snapshot_free(&s);
}
END_TEST

START_TEST(test_json_is_valid_and_complete)
{
	struct stat_snapshot s = sample();
	char *text = print_to_string(&s, true, false);
	struct jv *root = jv_parse(text);
	const struct jv *ops, *mean = NULL;

	ck_assert_msg(root, "invalid JSON:\n%s", text);
	ops = jv_get(jv_get(root, "processes")->items[0], "operations");
	ck_assert_int_eq(ops->count, 4);
	for (size_t i = 0; i < ops->count; i++) {
		if (!strcmp(jv_string(ops->items[i], "name"), "demo.mean"))
			mean = ops->items[i];
	}
	ck_assert_ptr_nonnull(mean);
	ck_assert(jv_number(mean, "count") == 2);
	ck_assert(jv_number(mean, "errors") == 1);
	ck_assert(jv_number(mean, "total_ns") == 8000);
	ck_assert(jv_number(mean, "self_ns") == 1500);
	ck_assert_int_eq(jv_get(mean, "modes")->count, 2);
	ck_assert(jv_get(mean, "parent")->type == JV_NULL);
	ck_assert(jv_number(jv_get(root, "lost"), "string_truncated") == 1);
	jv_free(root);
	free(text);
	stat_snapshot_free(&s);
}
END_TEST

START_TEST(test_json_string_escapes_untrusted_text)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	json_string(out,
		    "a\"b\\c\n\x01\xff\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xc0\xaf\xed\xa0\x80");
	fclose(out);
	/* One writer for every output: short escapes, U+FFFD itself for each bad byte. */
	ck_assert_str_eq(text, "\"a\\\"b\\\\c\\n\\u0001\xef\xbf\xbd\xc3\xa9\xe2\x82\xac"
			       "\xf0\x9f\x98\x80\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
			       "\xef\xbf\xbd\"");
	free(text);
}
END_TEST

/*
 * Issue 41: C1 controls and the bidirectional controls that reorder what a
 * terminal or an editor shows ("Trojan Source") are escaped in JSON and
 * made '?' in text for a terminal, as C0 controls are.
 */
START_TEST(test_c1_and_bidi_controls_escaped)
{
	static const char hostile[] = "a\xc2\x9b"
				      "b\xe2\x80\xae"
				      "c\xe2\x81\xa6"
				      "d\xd8\x9c"
				      "e\xe2\x80\x8f"
				      "f\xc2\xa0g\xe2\x80\xaf";
	char *text = NULL, buffer[64];
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	json_string(out, hostile);
	fclose(out);
	/* U+00A0 and U+202F (spaces) stay. */
	ck_assert_str_eq(text,
			 "\"a\\u009bb\\u202ec\\u2066d\\u061ce\\u200ff\xc2\xa0g\xe2\x80\xaf\"");
	free(text);
	ck_assert_str_eq(printable_text(hostile, buffer, sizeof(buffer)),
			 "a?b?c?d?e?f\xc2\xa0g\xe2\x80\xaf");
}
END_TEST

START_TEST(test_strings_resolve_or_say_why)
{
	struct stat_snapshot s = { 0 };
	char buffer[80];

	add_string(&s, 1, mean_name, 0);
	s.strings[0].value.unreadable = 1;
	ck_assert_str_eq(stat_string(&s, 1, 0, buffer, sizeof(buffer)), "(unknown)");
	ck_assert_str_eq(
		stat_string(&s, 1, (__u64)(unsigned long)mean_name, buffer, sizeof(buffer)),
		"(unreadable)");
	/* the same address in another process is another string */
	ck_assert_str_eq(stat_string(&s, 2, 0x1234, buffer, sizeof(buffer)), "(0x1234)");
	stat_snapshot_free(&s);
}
END_TEST

/* Nothing at all: no rows (NULL arrays, which qsort() must not be given), still a report. */
START_TEST(test_empty_snapshot)
{
	struct stat_snapshot s = { 0 };
	char *text = print_to_string(&s, false, false), *json = print_to_string(&s, true, false);
	struct jv *root = jv_parse(json);

	ck_assert_msg(strstr(text, "no operations traced\n\nlost: nothing\n"), "%s", text);
	ck_assert_msg(root && jv_get(root, "processes")->count == 0, "%s", json);
	jv_free(root);
	free(text);
	free(json);
	stat_snapshot_free(&s);
}
END_TEST

/* A whole text kept beside the row (report's); losses the kernel does not count. */
START_TEST(test_whole_names_and_more_losses)
{
	struct stat_snapshot s = sample();
	char name[128], buffer[STAT_TEXT_MAX], *text, *json;
	struct jv *root;

	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	memcpy(name, "demo.", 5);
	s.strings[0].text = strdup(name); /* demo.mean's row */
	ck_assert_str_eq(stat_string(&s, s.strings[0].key.tgid, s.strings[0].key.address, buffer,
				     sizeof(buffer)),
			 name);
	ck_assert_int_eq(stat_add_loss(&s, "ringbuf_full", 3699), 0);
	ck_assert_int_eq(stat_add_loss(&s, "unwritten", 0), 0);
	ck_assert_int_eq(stat_add_loss(&s, "batch_missing", 5), 0); /* stat's own */
	s.lost_note = "the file ends 10 bytes into chunk 3";
	text = print_to_string(&s, false, false);
	json = print_to_string(&s, true, false);
	ck_assert_msg(strstr(text, name), "%s", text);
	ck_assert_msg(strstr(text, "\nlost: string_truncated=1 batch_missing=5 ringbuf_full=3699; "
				   "the file ends 10 bytes into chunk 3\n"),
		      "%s", text);
	root = jv_parse(json);
	ck_assert_msg(root, "invalid JSON:\n%s", json);
	ck_assert(jv_number(jv_get(root, "lost"), "ringbuf_full") == 3699);
	ck_assert(jv_number(jv_get(root, "lost"), "batch_missing") == 5);
	ck_assert(jv_get(jv_get(root, "lost"), "unwritten")->type == JV_NUMBER);
	ck_assert_msg(strstr(json, name), "%s", json);
	jv_free(root);
	free(text);
	free(json);
	stat_snapshot_free(&s);
}
END_TEST

/* ---- issue 15: what the tables rank by, how they group, what they print ---------------- */

static const char median_name[] = "demo.median", sort_name[] = "demo.sort",
		  host_task[] = "HostReference", detail_text[] = "sort is not implemented";

static __u64 addr(const char *text)
{
	return (__u64)(unsigned long)text;
}

static struct task_row *add_task(struct stat_snapshot *s, const char *name, const char *root,
				 const char *helper, __u64 ns, int runs)
{
	struct task_row *row;

	s->tasks = realloc(s->tasks, (s->task_count + 1) * sizeof(*s->tasks));
	row = &s->tasks[s->task_count++];
	memset(row, 0, sizeof(*row));
	row->key = (struct task_key){ .tgid = 7,
				      .variant = OPTRACE_VARIANT_HOST_REFERENCE,
				      .name = addr(name),
				      .root_name = addr(root),
				      .op_name = helper == (const char *)STAT_OP_NOT_SEEN
							 ? STAT_OP_NOT_SEEN
							 : addr(helper) };
	for (int i = 0; i < runs; i++)
		record(&row->latency, ns, ns);
	return row;
}

static void add_fallback(struct stat_snapshot *s, const char *name, const char *root, __u64 count)
{
	struct fallback_row *row;

	s->fallbacks = realloc(s->fallbacks, (s->fallback_count + 1) * sizeof(*s->fallbacks));
	row = &s->fallbacks[s->fallback_count++];
	memset(row, 0, sizeof(*row));
	row->key = (struct fallback_key){ .tgid = 7,
					  .reason = OPTRACE_FALLBACK_UNIMPLEMENTED_API,
					  .name = addr(name),
					  .detail = addr(detail_text),
					  .root_name = addr(root) };
	row->count = count;
}

/*
 * stat's view of the demo's fallback workload: sort called by the user 10
 * times, and 5 times by median; median's own call is short, its tasks long.
 */
static struct stat_snapshot grouped_sample(void)
{
	struct stat_snapshot s = { 0 };

	add_string(&s, 7, median_name, 0);
	add_string(&s, 7, sort_name, 0);
	add_string(&s, 7, host_task, 0);
	add_string(&s, 7, detail_text, 0);
	for (int i = 0; i < 10; i++)
		record(&add_op(&s, 7, sort_name, NULL, 0, OPTRACE_MODE_FALLBACK,
			       OPTRACE_MODE_REASON_FALLBACK, OPTRACE_STATUS_OK)
				->latency,
		       100000, 100000); /* 1 ms of calls */
	for (int i = 0; i < 5; i++) {
		record(&add_op(&s, 7, median_name, NULL, 0, OPTRACE_MODE_MIXED,
			       OPTRACE_MODE_REASON_HELPERS, OPTRACE_STATUS_OK)
				->latency,
		       20000, 1000); /* 0.1 ms of calls */
		record(&add_op(&s, 7, sort_name, median_name, 1, OPTRACE_MODE_FALLBACK,
			       OPTRACE_MODE_REASON_FALLBACK, OPTRACE_STATUS_OK)
				->latency,
		       19000, 19000);
	}
	/* sort's own tasks: 2 ms; median's, through its sort helper: 50 ms */
	add_task(&s, host_task, sort_name, NULL, 200000, 10);
	add_task(&s, host_task, median_name, sort_name, 10000000, 3);
	add_task(&s, host_task, median_name, (const char *)STAT_OP_NOT_SEEN, 10000000, 2);
	add_fallback(&s, sort_name, NULL, 10);
	add_fallback(&s, sort_name, median_name, 5);
	return s;
}

/* Item 4: per operation its task time, ranked by the larger; the columns said. */
START_TEST(test_ops_rank_by_what_the_user_waits_for)
{
	struct stat_snapshot s = grouped_sample();
	char *text = print_to_string(&s, false, true), *json = print_to_string(&s, true, false);
	struct jv *root = jv_parse(json);
	const struct jv *ops;
	const char *median, *sort;
	struct op_summary *summaries;
	size_t count = stat_summarize_ops(&s, 7, &summaries);

	/* median: 0.1 ms of calls but 50 ms of tasks (its helper's rolled in) */
	ck_assert_uint_eq(count, 3);
	ck_assert_uint_eq(summaries[0].name, addr(median_name));
	ck_assert_uint_eq(summaries[0].work.task_ns, 50000000);
	ck_assert_uint_eq(summaries[0].work.task_runs, 5);
	ck_assert_uint_eq(stat_summary_cost(&summaries[0]), 50000000);
	ck_assert_uint_eq(summaries[1].name, addr(sort_name));
	ck_assert_uint_eq(summaries[1].work.task_ns, 2000000);
	ck_assert(summaries[0].work_known && summaries[1].work_known);
	ck_assert(!summaries[2].work_known); /* stat: a helper's is not known */
	stat_summaries_free(summaries, count);

	median = strstr(text, "\ndemo.median ");
	sort = strstr(text, "\ndemo.sort ");
	ck_assert_msg(median && sort && median < sort, "%s", text);
	ck_assert_msg(strstr(median, " 50.000 "), "%s", text);
	ck_assert_msg(strstr(text, "\n  demo.sort 5 0.095 - "), "%s", text);
	/* the header says what the columns are */
	ck_assert_msg(strstr(text, " CALL(ms) TASK(ms) "), "%s", text);
	ck_assert_msg(strstr(text, "\n# CALL: time in the calls, on the calling thread; TASK: time "
				   "their task points ran, on all workers;\n"),
		      "%s", text);
	ck_assert_msg(strstr(text, "\n# RUNS: task points run; TOTAL: "), "%s", text);
	ck_assert_msg(strstr(text, "\n# calls that ran a reference path, per operation (ROOT via "
				   "HELPER: a helper it called fell back)"),
		      "%s", text);

	ck_assert_msg(root, "invalid JSON:\n%s", json);
	ops = jv_get(jv_get(root, "processes")->items[0], "operations");
	ck_assert_str_eq(jv_string(ops->items[0], "name"), "demo.median");
	ck_assert(jv_number(ops->items[0], "task_ns") == 50000000);
	ck_assert(jv_number(ops->items[0], "task_count") == 5);
	ck_assert(jv_get(ops->items[2], "task_ns")->type == JV_NULL);
	jv_free(root);
	free(text);
	free(json);
	stat_snapshot_free(&s);
}
END_TEST

/* A TASK row of HostReference as the table prints it, up to RUNS. */
static const char *task_line(char line[160], const char *operation, int runs)
{
	snprintf(line, 160, "\nHostReference fallback %s %d ", operation, runs);
	return line;
}

/* Item 5: every table by the operation the user called; --show-helpers splits each. */
START_TEST(test_tables_group_alike)
{
	struct stat_snapshot s = grouped_sample();
	char *plain = print_to_string(&s, false, false), *split = print_to_string(&s, false, true);
	char *json = print_to_string(&s, true, false),
	     *split_json = print_to_string(&s, true, true);
	struct jv *root = jv_parse(json), *split_root = jv_parse(split_json);
	const struct jv *tasks, *fallbacks;
	char p50[32], p99[32], line[160];
	double fields[7];

	/* The operation table's 10 fallbacks of sort are the FALLBACK table's 10. */
	ck_assert_msg(op_row_fields(plain, "demo.sort", fields, p50, p99), "%s", plain);
	ck_assert(fields[5] == 10);
	ck_assert_msg(strstr(plain, "\ndemo.sort unimplemented_api 10 sort is not implemented\n"),
		      "%s", plain);
	ck_assert_msg(
		strstr(plain,
		       "\ndemo.median via demo.sort unimplemented_api 5 sort is not implemented\n"),
		"%s", plain);
	/* TASK: under median, helpers rolled in; split by the helper with --show-helpers */
	ck_assert_msg(strstr(plain, task_line(line, "demo.median", 5)), "%s", plain);
	ck_assert_msg(!strstr(plain, task_line(line, "demo.median via demo.sort", 3)), "%s", plain);
	ck_assert_msg(strstr(split, task_line(line, "demo.median via demo.sort", 3)), "%s", split);
	ck_assert_msg(strstr(split, task_line(line, "demo.median (launch not seen)", 2)), "%s",
		      split);

	ck_assert_msg(root && split_root, "invalid JSON:\n%s\n%s", json, split_json);
	tasks = jv_get(jv_get(root, "processes")->items[0], "tasks");
	ck_assert_uint_eq(tasks->count, 2); /* median's and sort's */
	ck_assert_ptr_null(jv_get(tasks->items[0], "launched_by"));
	tasks = jv_get(jv_get(split_root, "processes")->items[0], "tasks");
	ck_assert_uint_eq(tasks->count, 3);
	ck_assert_str_eq(jv_string(tasks->items[0], "launched_by"), "demo.sort");
	ck_assert(jv_get(tasks->items[1], "launch_seen")->type == JV_BOOL &&
		  jv_get(tasks->items[1], "launch_seen")->number == 0);
	fallbacks = jv_get(jv_get(root, "processes")->items[0], "fallbacks");
	ck_assert_uint_eq(fallbacks->count, 2);
	ck_assert_str_eq(jv_string(fallbacks->items[0], "operation"), "demo.sort");
	ck_assert(jv_get(fallbacks->items[0], "root")->type == JV_NULL);
	ck_assert_str_eq(jv_string(fallbacks->items[1], "root"), "demo.median");
	jv_free(root);
	jv_free(split_root);
	free(plain);
	free(split);
	free(json);
	free(split_json);
	stat_snapshot_free(&s);
}
END_TEST

/* Item 6: modes in words; stat's percentiles as the bound they are. */
START_TEST(test_odd_values_said_plainly)
{
	struct stat_snapshot s = sample();
	char *text, *json;
	struct jv *root;
	double fields[7];
	char p50[32], p99[32];

	record(&add_op(&s, 7, sum_name, NULL, 0, OPTRACE_MODE_FALLBACK,
		       OPTRACE_MODE_REASON_FALLBACK, OPTRACE_STATUS_OK)
			->latency,
	       4194304, 4194304);
	record(&add_op(&s, 7, sum_name, NULL, 0, OPTRACE_MODE_EAGER, OPTRACE_MODE_REASON_NONE,
		       OPTRACE_STATUS_OK)
			->latency,
	       3000000, 3000000);
	text = print_to_string(&s, false, false);
	json = print_to_string(&s, true, false);
	ck_assert_msg(strstr(text, " not announced=1\n"), "%s", text);
	ck_assert_msg(strstr(text, " eager=1, fallback=1\n"), "%s", text);
	ck_assert_msg(!strstr(text, "unset") && !strstr(text, "fallback:fallback") &&
			      !strstr(text, ":none"),
		      "%s", text);
	/* 3 ms and 2^22 ns: the log2 buckets say at most 2^22 ns, and that it is a bound */
	ck_assert_msg(op_row_fields(text, "demo.sum", fields, p50, p99), "%s", text);
	ck_assert_str_eq(p50, "<=4.19ms");
	ck_assert_str_eq(p99, "<=4.19ms");
	ck_assert_msg(strstr(text, "<=X: at most X"), "%s", text);
	/* one call: its time is known exactly */
	ck_assert_msg(op_row_fields(text, "evil\"??$|...", fields, p50, p99), "%s", text);
	ck_assert_str_eq(p50, "10ns");
	root = jv_parse(json);
	ck_assert_msg(root, "invalid JSON:\n%s", json);
	for (size_t i = 0; i < jv_get(jv_get(root, "processes")->items[0], "operations")->count;
	     i++) {
		const struct jv *op =
			jv_get(jv_get(root, "processes")->items[0], "operations")->items[i];

		if (!strcmp(jv_string(op, "name"), "demo.sum") && jv_number(op, "depth") == 0) {
			ck_assert(jv_number(op, "p50_ns") == 4194304);
			ck_assert_str_eq(jv_string(op, "percentiles"), "at_most");
		}
	}
	jv_free(root);
	free(text);
	free(json);
	stat_snapshot_free(&s);
}
END_TEST

/* Item 6: report's percentiles, exact; past the bound, within 0.4%. */
START_TEST(test_exact_and_fine_percentiles)
{
	struct durations *d = NULL, *merged = NULL;
	struct latency latency = { 0 };
	struct stat_quantile q;
	double p;

	for (uint64_t v = 1; v <= 100; v++) {
		ck_assert_int_eq(durations_add(&d, v * 1000 + 7), 0);
		record(&latency, v * 1000 + 7, 0);
	}
	q = stat_quantile(&latency, d, 0.50);
	ck_assert(q.precision == STAT_EXACT);
	ck_assert(q.ns == 50007); /* nearest rank: the 50th of 100 */
	ck_assert(stat_quantile(&latency, d, 0.99).ns == 99007);
	ck_assert(stat_quantile(&latency, d, 1.0).ns == 100007);
	ck_assert(stat_quantile(&latency, NULL, 0.50).precision == STAT_AT_MOST);
	/* Past DURATIONS_EXACT_MAX values: folded, each percentile within 0.4%. */
	for (uint64_t v = 0; v < 3 * DURATIONS_EXACT_MAX; v++)
		ck_assert_int_eq(durations_add(&merged, 1000 + v * 37), 0);
	ck_assert(!durations_exact(merged));
	ck_assert_int_eq(durations_merge(&merged, d), 0);
	ck_assert_uint_eq(merged->count, 3 * DURATIONS_EXACT_MAX + 100);
	p = durations_quantile(merged, 0.5);
	/* the true median: the (count/2)-th of the merged values */
	ck_assert_msg(p > 1000 + 98300.0 * 37 * 0.996 && p < 1000 + 98300.0 * 37 * 1.004, "%f", p);
	ck_assert(durations_quantile(merged, 1.0) == 1000 + (3.0 * DURATIONS_EXACT_MAX - 1) * 37);
	q = stat_quantile(&latency, merged, 0.5);
	ck_assert(q.precision == STAT_WITHIN);
	durations_free(d);
	durations_free(merged);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("stat_model");
	TCase *tc = tcase_create("model");

	tcase_add_test(tc, test_merge_and_percentiles);
	tcase_add_test(tc, test_text_rolls_helpers_into_callers);
	tcase_add_test(tc, test_json_is_valid_and_complete);
	tcase_add_test(tc, test_json_string_escapes_untrusted_text);
	tcase_add_test(tc, test_c1_and_bidi_controls_escaped);
	tcase_add_test(tc, test_strings_resolve_or_say_why);
	tcase_add_test(tc, test_empty_snapshot);
	tcase_add_test(tc, test_whole_names_and_more_losses);
	tcase_add_test(tc, test_ops_rank_by_what_the_user_waits_for);
	tcase_add_test(tc, test_tables_group_alike);
	tcase_add_test(tc, test_odd_values_said_plainly);
	tcase_add_test(tc, test_exact_and_fine_percentiles);
	suite_add_tcase(suite, tc);

	return run_suite(suite);
}
