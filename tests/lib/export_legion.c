// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Legion Prof logs of optrace export against the demo's ground truth:
 * each file valid for the reader of legion_read.h, its tasks the truth's
 * on the processors of their variants, its operations' titles and popups
 * in both viewers (legion_popup.h) what the truth counted.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export_legion.h"
#include "export_truth.h"
#include "legion_popup.h"

void read_summary(const char *path, uint32_t version, struct legion_summary *summary)
{
	char why[512];

	ck_assert_msg(legion_summary_read(path, version, summary, why, sizeof(why)) == 0,
		      "%s is not a valid Legion Prof log: %s", path, why);
}

/* One TaskKind per task, one TaskVariant per (task, variant): declared once. */
static void check_declared_once(const struct legion_summary *s)
{
	ck_assert_uint_eq(s->records[LEGION_TASK_KIND], s->task_kind_count);
	ck_assert_msg(s->records[LEGION_TASK_VARIANT] == s->variant_count,
		      "%zu TaskVariant records for %zu (task, variant) pairs",
		      s->records[LEGION_TASK_VARIANT], s->variant_count);
}

bool is_op(const struct legion_task *t)
{
	struct legion_popup popup;

	if (!t->provenance)
		return false;
	legion_popup_viewer(t->provenance, &popup);
	return legion_popup_value(&popup, "ran on") != NULL;
}

static const struct legion_task *task_of_op(const struct legion_summary *s, uint64_t op_id)
{
	for (size_t i = 0; i < s->task_count; i++)
		if (s->tasks[i].op_id == op_id)
			return &s->tasks[i];
	return NULL;
}

/* TaskInfo per (name, variant) = the truth's; processors by variant; parent and creator the op. */
static void check_tasks(const struct legion_summary *s, const struct counts *truth)
{
	struct counts expected = { 0 }, got = { 0 };
	long created_by_op = 0, runs = 0;
	char key[256];

	for (size_t i = 0; i < s->task_count; i++) {
		const struct legion_task *t = &s->tasks[i], *op;
		struct legion_popup popup;
		const char *who;

		ck_assert_ptr_nonnull(t->task_name);
		ck_assert_ptr_nonnull(t->variant_name);
		ck_assert(!t->gpu);
		if (is_op(t))
			continue;
		runs++;
		snprintf(key, sizeof(key), "task %s %s", t->task_name, t->variant_name);
		counts_add(&got, key, 1);
		/* OpenMP processors run exactly the omp variant; cpu and fallback run on CPUs */
		ck_assert_msg((t->proc_kind == 7) == !strcmp(t->variant_name, "omp"),
			      "%s [%s] on a processor of kind %d", t->task_name, t->variant_name,
			      t->proc_kind);
		ck_assert_int_eq(t->proc_kind, !strcmp(t->variant_name, "omp") ? 7 : 2);
		/* its popup names its operation, once, and its mode; the title its variant */
		ck_assert_ptr_nonnull(t->provenance);
		legion_popup_viewer(t->provenance, &popup);
		who = legion_popup_value(&popup, "op");
		ck_assert_msg(who && !strncmp(who, "demo.", 5), "provenance of %s [%s]: %s",
			      t->task_name, t->variant_name, t->provenance);
		ck_assert_ptr_null(legion_popup_value(&popup, "variant"));
		ck_assert(legion_popup_value(&popup, "mode") ||
			  legion_popup_value(&popup, "fallback"));
		ck_assert_int_le(legion_popup_width(&popup), 80);
		/* "Operation"/"Initiator": the operation the user called, drawn on its thread */
		op = task_of_op(s, t->parent_op);
		ck_assert_msg(op && is_op(op), "%s [%s]: its parent %llu is not an operation",
			      t->task_name, t->variant_name, (unsigned long long)t->parent_op);
		/* "demo.median via demo.sort": the root, or with --show-helpers the helper */
		ck_assert_msg(strstr(who, op->task_name),
			      "%s's op line \"%s\" against its parent %s", t->task_name, who,
			      op->task_name);
		/* "Creator": the operation, when the run was created inside it */
		ck_assert(!t->creator || t->creator == op->fevent);
		if (t->creator) {
			ck_assert(t->create >= op->start && t->create < op->stop);
			created_by_op++;
		}
	}
	ck_assert_msg(created_by_op * 10 >= runs * 9, "%ld of %ld runs name their op as creator",
		      created_by_op, runs);
	counts_select(truth, "task ", &expected);
	assert_counts_equal(&expected, &got, "TaskInfo records against the truth");
	counts_free(&expected);
	counts_free(&got);
}

/* How deep an operation's task is: helpers' parents are the operations that called them. */
static unsigned int op_depth(const struct legion_summary *s, const struct legion_task *t)
{
	unsigned int depth = 0;

	while ((t = task_of_op(s, t->parent_op)) && is_op(t))
		depth++;
	return depth;
}

/*
 * An operation's popup, in both viewers, against its title (the human part):
 * mode and why, fallback and why, where its work ran, the tasks it launched.
 */
static void check_op_popup(const struct legion_task *t, const struct title *title)
{
	struct legion_popup viewer, legacy;
	const char *mode, *fallback, *ran_on;
	long points = 0, title_points = 0;

	legion_popup_viewer(t->provenance, &viewer);
	legion_popup_legacy(t->provenance, &legacy);
	ck_assert_int_eq(viewer.count, legacy.count);
	for (int i = 0; i < viewer.count; i++) {
		const char *colon = strchr(viewer.lines[i], ':');

		ck_assert(colon && !strncmp(viewer.lines[i], legacy.lines[i],
					    (size_t)(colon - viewer.lines[i]) + 1));
		if (!strncmp(viewer.lines[i], "task ", 5))
			points += atol(colon + 2);
		if (!strncmp(viewer.lines[i], "tasks, more: ", 13))
			points += atol(strstr(viewer.lines[i], ", ") + 2);
	}
	ck_assert_int_le(legion_popup_width(&viewer), 96);
	mode = legion_popup_value(&viewer, "mode");
	fallback = legion_popup_value(&viewer, "fallback");
	ran_on = legion_popup_value(&viewer, "ran on");
	/* the variant is the mode; a fallback's line says it once */
	if (strcmp(title->mode, "none"))
		ck_assert_str_eq(t->variant_name, title->mode);
	if (mode)
		ck_assert_str_eq(mode, title->mode);
	else
		ck_assert(!strcmp(title->mode, "none") ||
			  (!strcmp(title->mode, "fallback") && fallback));
	if (title->fallback[0]) {
		ck_assert_ptr_nonnull(fallback);
		ck_assert_str_eq(fallback, title->fallback);
	} else {
		ck_assert_ptr_null(fallback);
	}
	for (int v = 0; v < OPTRACE_VARIANT__COUNT; v++)
		title_points += title->points[v];
	ck_assert_msg(points == title_points, "%s: the task lines count %ld points, the title %ld",
		      t->task_name, points, title_points);
	ck_assert_ptr_nonnull(ran_on);
	if (!title_points)
		ck_assert_ptr_nonnull(strstr(ran_on, "calling thread"));
	ck_assert_ptr_nonnull(legion_popup_value(&viewer, "call site"));
}

/* Operations: tasks on their thread's processor, counted by title into keys. */
static void count_ops(const struct legion_summary *s, const struct legion_expect *e,
		      struct counts *got)
{
	int main_kind = e->python ? 8 : 2;

	for (size_t i = 0; i < s->task_count; i++) {
		const struct legion_task *t = &s->tasks[i];
		char human[512];
		struct title title;
		unsigned int depth;

		if (!is_op(t))
			continue;
		ck_assert_int_eq(t->proc_kind, main_kind);
		depth = op_depth(s, t);
		if (!e->show_helpers)
			ck_assert_uint_eq(depth, 0);
		legion_popup_human(t->provenance, human, sizeof(human));
		title_parse(human, &title);
		ck_assert_str_eq(title.name, t->task_name);
		ck_assert_msg(!strncmp(title.name, "demo.", 5), "operation %s", human);
		ck_assert_msg(!title.cut, "a demo operation was cut: %s", human);
		check_op_popup(t, &title);
		count_title(got, &title, depth);
	}
}

void check_legion_file(const char *path, const struct counts *truth, const struct legion_expect *e,
		       struct counts *ranges)
{
	struct legion_summary s;

	read_summary(path, e->version, &s);
	ck_assert_uint_eq(s.version, e->version);
	ck_assert_uint_eq(s.node_id, e->node);
	ck_assert_uint_eq(s.num_nodes, e->nodes);
	ck_assert_int_eq(s.process_id, e->pid);
	for (size_t i = 0; i < s.proc_count; i++)
		ck_assert_uint_eq(s.procs[i].id >> 40 & 0xffff, e->node);
	if (e->python)
		ck_assert_uint_eq(s.procs_by_kind[8], (size_t)e->threads);
	check_declared_once(&s);
	check_tasks(&s, truth);
	count_ops(&s, e, ranges);
	if (e->show_helpers) {
		check_all_depths("ranges with --show-helpers against the truth", ranges, truth);
	} else {
		check_depth0("ranges against the truth", ranges, truth);
		check_title_points("ranges", ranges, truth);
	}
	legion_summary_free(&s);
}

void check_file_names(const char *out, const uint32_t *nodes, int count)
{
	struct dirent *entry;
	DIR *d = opendir(out);
	int files = 0;

	ck_assert_ptr_nonnull(d);
	while ((entry = readdir(d))) {
		unsigned int node;
		char tail[8];
		bool expected = false;

		if (entry->d_name[0] == '.')
			continue;
		files++;
		ck_assert_msg(sscanf(entry->d_name, "prof_%u.g%7s", &node, tail) == 2 &&
				      !strcmp(tail, "z"),
			      "unexpected file %s in %s", entry->d_name, out);
		for (int i = 0; i < count; i++)
			expected = expected || nodes[i] == node;
		ck_assert_msg(expected, "%s: no process announced rank %u", entry->d_name, node);
	}
	closedir(d);
	ck_assert_int_eq(files, count);
}
