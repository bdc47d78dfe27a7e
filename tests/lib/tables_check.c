// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>

#include "json_read.h"
#include "tables_check.h"
#include "testlib.h"

/* The demo's fallback detail longer than the 63 bytes stat once kept. */
static const char round_detail[] =
	"round with negative decimals is not supported; running the host reference";

/* How many calls of op ran in mode. */
static double mode_count(const struct jv *op, const char *mode)
{
	const struct jv *modes = jv_get(op, "modes");
	double count = 0;

	for (size_t i = 0; modes && i < modes->count; i++) {
		if (!strcmp(jv_string(modes->items[i], "mode"), mode))
			count += jv_number(modes->items[i], "count");
	}
	return count;
}

static double cost(const struct jv *op)
{
	double c = jv_number(op, "total_ns");

	if (jv_number(op, "task_ns") > c)
		c = jv_number(op, "task_ns");
	if (jv_number(op, "gpu_ns") > c)
		c = jv_number(op, "gpu_ns");
	return c;
}

/* Item 4: per operation its tasks' time, as the TASK table sums it; most first. */
static void check_ranking(const struct jv *process)
{
	const struct jv *ops = jv_get(process, "operations"), *tasks = jv_get(process, "tasks");
	bool deferred_larger = false;

	ck_assert_msg(ops && ops->count > 0, "no operations");
	for (size_t i = 0; i < ops->count; i++) {
		const struct jv *op = ops->items[i];
		double sum = 0;

		ck_assert_msg(i == 0 || cost(ops->items[i - 1]) >= cost(op), "%s ranked after %s",
			      jv_string(ops->items[i - 1], "name"), jv_string(op, "name"));
		if (jv_number(op, "depth") != 0)
			continue;
		ck_assert_msg(jv_get(op, "task_ns")->type == JV_NUMBER, "%s: no task_ns",
			      jv_string(op, "name"));
		for (size_t t = 0; t < tasks->count; t++) {
			if (!strcmp(jv_string(tasks->items[t], "operation"), jv_string(op, "name")))
				sum += jv_number(tasks->items[t], "total_ns");
		}
		ck_assert_msg(jv_number(op, "task_ns") == sum, "%s: task_ns %.0f, its tasks %.0f",
			      jv_string(op, "name"), jv_number(op, "task_ns"), sum);
		deferred_larger = deferred_larger || sum > jv_number(op, "total_ns");
	}
	/* the demo's deferred calls return before their tasks run */
	ck_assert_msg(deferred_larger, "no operation whose tasks took longer than its calls");
}

/* Item 5: the operation table's fallbacks are the FALLBACK table's, helpers named. */
static void check_fallbacks(const struct jv *process)
{
	const struct jv *ops = jv_get(process, "operations"),
			*fallbacks = jv_get(process, "fallbacks");
	double own = -1, helper = -1, listed_own = 0, listed_helper = 0;
	bool round_whole = false;

	for (size_t i = 0; i < ops->count; i++) {
		const struct jv *op = ops->items[i];

		if (strcmp(jv_string(op, "name"), "demo.sort"))
			continue;
		if (jv_number(op, "depth") == 0)
			own = mode_count(op, "fallback");
		else if (!strcmp(jv_string(op, "root"), "demo.median"))
			helper = mode_count(op, "fallback");
	}
	for (size_t i = 0; i < fallbacks->count; i++) {
		const struct jv *f = fallbacks->items[i];

		round_whole = round_whole || !strcmp(jv_string(f, "detail"), round_detail);
		if (strcmp(jv_string(f, "operation"), "demo.sort"))
			continue;
		if (jv_get(f, "root")->type == JV_NULL)
			listed_own += jv_number(f, "count");
		else if (!strcmp(jv_string(f, "root"), "demo.median"))
			listed_helper += jv_number(f, "count");
	}
	ck_assert_msg(own > 0 && own == listed_own, "demo.sort: %.0f fallbacks, %.0f listed", own,
		      listed_own);
	ck_assert_msg(helper > 0 && helper == listed_helper,
		      "demo.median's sorts: %.0f fallbacks, %.0f listed", helper, listed_helper);
	ck_assert_msg(round_whole, "demo.round's detail is not whole");
}

/* Item 6: percentiles as exact as they are. */
static void check_percentiles(const struct jv *process, bool exact)
{
	const struct jv *ops = jv_get(process, "operations");

	for (size_t i = 0; i < ops->count; i++) {
		const char *precision = jv_string(ops->items[i], "percentiles");

		if (exact)
			ck_assert_str_eq(precision, "exact");
		else
			ck_assert_msg(!strcmp(precision, "at_most") || !strcmp(precision, "exact"),
				      "%s", precision);
	}
}

void check_demo_tables(const char *json, const char *text, const char *helpers_text, bool exact)
{
	struct jv *root = jv_parse(json);
	const struct jv *processes = jv_get(root, "processes");

	ck_assert_msg(processes && processes->count == 1, "not one process:\n%.2000s", json);
	check_ranking(processes->items[0]);
	check_fallbacks(processes->items[0]);
	check_percentiles(processes->items[0], exact);
	/* stat and report of the same workload: no name cut, none counted cut */
	ck_assert(jv_number(jv_get(root, "lost"), "string_truncated") == 0);
	jv_free(root);

	/* the text: columns said, values in words, helpers named */
	ck_assert_msg(strstr(text, " CALL(ms) TASK(ms) ") && strstr(text, "\n# CALL: "), "%s",
		      text);
	ck_assert_msg(strstr(text, " not announced=") && strstr(text, "  fallback="), "%s", text);
	ck_assert_msg(!strstr(text, "unset") && !strstr(text, "fallback:fallback") &&
			      !strstr(text, ":none"),
		      "%s", text);
	ck_assert_msg(strstr(text, "\ndemo.median via demo.sort "), "%s", text);
	ck_assert_msg(strstr(text, round_detail), "%s", text);
	ck_assert_msg(!strstr(text, "string_truncated"), "%s", text);
	ck_assert_msg(exact ? !strstr(text, "<=") : !!strstr(text, "<="), "%s", text);
	/* --show-helpers splits the TASK table too */
	ck_assert_msg(!strstr(text, "fallback demo.median via demo.sort"), "%s", text);
	ck_assert_msg(strstr(helpers_text, "fallback demo.median via demo.sort") ||
			      strstr(helpers_text, "fallback demo.median (launch not seen)"),
		      "%s", helpers_text);
}
