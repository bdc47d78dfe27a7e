// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Chrome trace JSON of optrace export against the demo's ground truth:
 * task events per process and variant, op events by title, flows from
 * operations to their task points, and each track's X events nested.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export_chrome.h"
#include "legion_read.h"
#include "testlib.h"

struct slice {
	long pid, tid;
	long long begin, end; /* ns */
};

static int compare_slices(const void *a, const void *b)
{
	const struct slice *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	return x->end > y->end ? -1 : x->end < y->end;
}

/* X events of one track are nested or disjoint. */
static void check_nesting(struct slice *slices, size_t count)
{
	size_t *stack = calloc(count + 1, sizeof(*stack)), depth = 0;

	ck_assert_ptr_nonnull(stack);
	qsort(slices, count, sizeof(*slices), compare_slices);
	for (size_t i = 0; i < count; i++) {
		const struct slice *s = &slices[i];

		while (depth && (slices[stack[depth - 1]].pid != s->pid ||
				 slices[stack[depth - 1]].tid != s->tid ||
				 slices[stack[depth - 1]].end <= s->begin))
			depth--;
		ck_assert_msg(!depth || s->end <= slices[stack[depth - 1]].end,
			      "X events overlap partially on pid %ld tid %ld: [%lld, %lld] and "
			      "[%lld, %lld] ns",
			      s->pid, s->tid, slices[stack[depth - 1]].begin,
			      slices[stack[depth - 1]].end, s->begin, s->end);
		stack[depth++] = i;
	}
	free(stack);
}

static long long us_to_ns(const struct jv *event, const char *key)
{
	return llround(jv_number(event, key) * 1000.0);
}

struct jv *chrome_read(const char *path, char **text)
{
	struct jv *root;

	*text = read_file(path);
	ck_assert_ptr_nonnull(*text);
	ck_assert_msg(legion_utf8_valid((unsigned char *)*text, strlen(*text)), "%s is not UTF-8",
		      path);
	ck_assert_msg(legion_json_valid(*text), "%s is not valid JSON", path);
	root = jv_parse(*text);
	ck_assert_ptr_nonnull(root);
	ck_assert_ptr_nonnull(jv_get(root, "traceEvents"));
	ck_assert_int_eq(jv_get(root, "traceEvents")->type, JV_ARRAY);
	return root;
}

struct chrome_counts {
	struct counts per_pid[DEMO_MAX_PROCESSES]; /* by the order of pids */
	struct counts flows;			   /* "s ID", "f ID" */
	struct slice *slices;
	size_t slice_count;
};

static int pid_index(const struct truth_block *blocks, int count, long pid)
{
	for (int i = 0; i < count; i++)
		if (blocks[i].pid == pid)
			return i;
	ck_abort_msg("an event of pid %ld, which is no demo process", pid);
	return -1;
}

static void chrome_op(struct counts *counts, const struct jv *event)
{
	const struct jv *args = jv_get(event, "args");
	const char *name = jv_string(args, "name"), *mode = jv_string(args, "mode");
	struct title t;

	title_parse(jv_string(event, "name"), &t);
	ck_assert_str_eq(t.name, name);
	snprintf(t.mode, sizeof(t.mode), "%s", strcmp(mode, "unset") ? mode : "none");
	snprintf(t.fallback, sizeof(t.fallback), "%s", jv_string(args, "fallback"));
	ck_assert(!jv_get(args, "cut"));
	count_title(counts, &t, (unsigned int)jv_number(args, "depth"));
}

static void chrome_event(struct chrome_counts *c, const struct jv *event,
			 const struct truth_block *blocks, int count)
{
	const char *ph = jv_string(event, "ph"), *cat = jv_string(event, "cat");
	long pid = (long)jv_number(event, "pid");
	char key[256];

	if (!strcmp(ph, "s") || !strcmp(ph, "f")) {
		snprintf(key, sizeof(key), "%s %.0f", ph, jv_number(event, "id"));
		counts_add(&c->flows, key, 1);
		return;
	}
	if (strcmp(ph, "X"))
		return;
	c->slices = realloc(c->slices, (c->slice_count + 1) * sizeof(*c->slices));
	ck_assert_ptr_nonnull(c->slices);
	c->slices[c->slice_count++] =
		(struct slice){ pid, (long)jv_number(event, "tid"), us_to_ns(event, "ts"),
				us_to_ns(event, "ts") + us_to_ns(event, "dur") };
	if (!strcmp(cat, "task")) {
		snprintf(key, sizeof(key), "task %s %s", jv_string(event, "name"),
			 jv_string(jv_get(event, "args"), "variant"));
		counts_add(&c->per_pid[pid_index(blocks, count, pid)], key, 1);
	} else if (!strcmp(cat, "op")) {
		chrome_op(&c->per_pid[pid_index(blocks, count, pid)], event);
	}
}

/* Every flow end has its start, and one flow per task point. */
static void check_flows(const struct counts *flows, long task_points)
{
	long ends = 0;

	for (size_t i = 0; i < flows->length; i++) {
		const char *key = flows->entries[i].key;
		char start[64];

		ck_assert_int_eq(flows->entries[i].count, 1);
		if (key[0] != 'f')
			continue;
		ends++;
		snprintf(start, sizeof(start), "s%s", key + 1);
		ck_assert_msg(counts_get(flows, start) == 1, "flow end %s without its start", key);
	}
	ck_assert_int_eq(ends, task_points);
}

void check_chrome(const char *path, const struct truth_block *blocks, int count, bool show_helpers)
{
	struct chrome_counts c = { 0 };
	const struct jv *events;
	struct jv *root;
	long points = 0;
	char *text;

	root = chrome_read(path, &text);
	events = jv_get(root, "traceEvents");
	for (size_t i = 0; i < events->count; i++)
		chrome_event(&c, events->items[i], blocks, count);
	for (int b = 0; b < count; b++) {
		struct counts tasks = { 0 }, expected = { 0 };

		counts_select(&c.per_pid[b], "task ", &tasks);
		counts_select(&blocks[b].counts, "task ", &expected);
		assert_counts_equal(&expected, &tasks, "Chrome task events against the truth");
		for (size_t i = 0; i < tasks.length; i++)
			points += tasks.entries[i].count;
		if (show_helpers) {
			check_all_depths("Chrome op events (--show-helpers) against the truth",
					 &c.per_pid[b], &blocks[b].counts);
		} else {
			check_depth0("Chrome op events against the truth", &c.per_pid[b],
				     &blocks[b].counts);
			check_title_points("Chrome op titles", &c.per_pid[b], &blocks[b].counts);
		}
		counts_free(&tasks);
		counts_free(&expected);
		counts_free(&c.per_pid[b]);
	}
	check_flows(&c.flows, points);
	check_nesting(c.slices, c.slice_count);
	counts_free(&c.flows);
	free(c.slices);
	jv_free(root);
	free(text);
}
