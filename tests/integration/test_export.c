// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace export against the demo runtime's ground truth: the demo is
 * recorded, its capture exported as Legion Prof logs (read back by the
 * independent reader of tests/lib/legion_read.c) and as Chrome trace JSON,
 * and what they hold is compared with what the demo counted. A capture
 * written by hand with hostile strings and an operation left open checks
 * that both exports stay valid for any input.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <linux/types.h>
#include <math.h>
#include <optrace/abi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <signal.h>
#include <unistd.h>

#include "json_read.h"
#include "legion_colour.h"
#include "legion_popup.h"
#include "legion_read.h"
#include "testlib.h"
#include "bpf/events.h"
#include "capture/capture.h"

#define MAX_PROCESSES 4
#define TIMES "\xc3\x97" /* "×" in titles: "CPU×2" */

static const char *const mode_names[] = { "eager", "deferred", "mixed", "fallback", "none" };
static const char *const fallback_names[] = { "unimplemented_api", "unsupported_arguments",
					      "unsupported_dtype", "no_variant", "other" };
/* How titles name variants ("CPU×2") and what Legion Prof calls them ("cpu"). */
static const char *const variant_titles[] = { "CPU", "OMP", "GPU", "host" };
static const char *const variant_names[] = { "cpu", "omp", "gpu", "fallback" };

/* ---- running optrace ---------------------------------------------------------- */

static void run_ok(char *const argv[])
{
	char *err_path = test_path("stderr.txt"), *text;
	int status = run_command(argv, NULL, err_path, 120);

	text = read_file(err_path);
	ck_assert_msg(status == 0, "%s %s failed (status %d):\n%.2000s", argv[0], argv[1], status,
		      text ? text : "");
	free(text);
	free(err_path);
}

/* optrace report CAPTURE names a process with label. */
static void report_says(const char *capture, const char *label)
{
	char *argv[] = { OPTRACE, "report", (char *)capture, NULL };
	char *out_path = test_path("report.txt"), *text;

	ck_assert_int_eq(run_command(argv, out_path, NULL, 120), 0);
	text = read_file(out_path);
	ck_assert_ptr_nonnull(text);
	if (!strstr(text, label)) /* the processes' headings, to see which it is */
		for (char *line = strstr(text, "\n== "); line; line = strstr(line + 1, "\n== "))
			fprintf(stderr, "%.*s\n", (int)strcspn(line + 1, "\n"), line + 1);
	ck_assert_msg(strstr(text, label), "no \"%s\" in the report", label);
	free(text);
	free(out_path);
}

static void record_demo(const char *const demo_args[], const char *capture, const char *truth)
{
	char *argv[40];
	int argc = 0;

	argv[argc++] = OPTRACE;
	argv[argc++] = "record";
	argv[argc++] = "-q";
	argv[argc++] = "-o";
	argv[argc++] = (char *)capture;
	argv[argc++] = "--";
	argv[argc++] = DEMO;
	for (int i = 0; demo_args[i]; i++)
		argv[argc++] = (char *)demo_args[i];
	argv[argc++] = "--truth";
	argv[argc++] = (char *)truth;
	argv[argc++] = "-q";
	argv[argc] = NULL;
	run_ok(argv);
}

/* optrace export OPTIONS... -o OUT CAPTURE */
static void export(const char *const options[], const char *out, const char *capture)
{
	char *argv[16];
	int argc = 0;

	argv[argc++] = OPTRACE;
	argv[argc++] = "export";
	for (int i = 0; options[i]; i++)
		argv[argc++] = (char *)options[i];
	argv[argc++] = "-o";
	argv[argc++] = (char *)out;
	argv[argc++] = (char *)capture;
	argv[argc] = NULL;
	run_ok(argv);
}

/* ---- the truth, one block per process ------------------------------------------ */

struct truth_block {
	pid_t pid;
	struct counts counts;
};

/* Splits the truth into its blocks and parses each; returns how many. */
static int truth_blocks(const char *path, struct truth_block *blocks, int max)
{
	char *text = read_file(path), *begin, *end, *block_path;
	int count = 0;
	FILE *file;

	ck_assert_ptr_nonnull(text);
	for (begin = strstr(text, "\nbegin "); begin; begin = strstr(end, "\nbegin ")) {
		ck_assert_int_lt(count, max);
		end = strstr(begin, "\nend ");
		ck_assert_ptr_nonnull(end);
		end = strchrnul(end + 1, '\n');
		blocks[count].pid = atoi(begin + 7);
		ck_assert_int_gt(asprintf(&block_path, "%s/truth.%d", test_dir, count), 0);
		file = fopen(block_path, "w");
		ck_assert_ptr_nonnull(file);
		fprintf(file, "%.*s\n", (int)(end - begin - 1), begin + 1);
		fclose(file);
		memset(&blocks[count].counts, 0, sizeof(blocks[count].counts));
		ck_assert_int_eq(truth_parse(block_path, &blocks[count].counts), 1);
		free(block_path);
		count++;
	}
	free(text);
	return count;
}

static void truth_blocks_free(struct truth_block *blocks, int count)
{
	for (int i = 0; i < count; i++)
		counts_free(&blocks[i].counts);
}

/* Only the keys of truth that start with prefix. */
static void counts_select(const struct counts *truth, const char *prefix, struct counts *out)
{
	for (size_t i = 0; i < truth->length; i++)
		if (!strncmp(truth->entries[i].key, prefix, strlen(prefix)))
			counts_add(out, truth->entries[i].key, truth->entries[i].count);
}

static void assert_counts_equal(const struct counts *expected, const struct counts *got,
				const char *what)
{
	char message[8192];

	ck_assert_msg(counts_diff(expected, got, message, sizeof(message)) == 0, "%s:\n%s", what,
		      message);
}

/* Every operation name of the truth ("op NAME DEPTH COUNT" keys). */
static int truth_op_names(const struct counts *truth, char names[][64], int max)
{
	int count = 0;

	for (size_t i = 0; i < truth->length; i++) {
		char name[64];
		bool seen = false;

		if (sscanf(truth->entries[i].key, "op %63s", name) != 1)
			continue;
		for (int k = 0; k < count && !seen; k++)
			seen = !strcmp(names[k], name);
		if (seen)
			continue;
		ck_assert_int_lt(count, max);
		strcpy(names[count++], name);
	}
	return count;
}

static long truth_ops(const struct counts *truth, const char *name, int only_depth)
{
	long total = 0;

	for (size_t i = 0; i < truth->length; i++) {
		char key_name[64];
		int depth;

		if (sscanf(truth->entries[i].key, "op %63s %d", key_name, &depth) == 2 &&
		    !strcmp(key_name, name) && (only_depth < 0 || depth == only_depth))
			total += truth->entries[i].count;
	}
	return total;
}

/* "mode NAME MODE" of the truth, summed over reasons; "none": ops that said no mode. */
static long truth_mode(const struct counts *truth, const char *name, const char *mode)
{
	long total = 0, all = 0;

	for (size_t i = 0; i < truth->length; i++) {
		char key_name[64], key_mode[32];

		if (sscanf(truth->entries[i].key, "mode %63s %31s", key_name, key_mode) != 2 ||
		    strcmp(key_name, name))
			continue;
		all += truth->entries[i].count;
		if (!strcmp(key_mode, mode))
			total += truth->entries[i].count;
	}
	return strcmp(mode, "none") ? total : truth_ops(truth, name, -1) - all;
}

static long truth_fallback(const struct counts *truth, const char *name, const char *reason)
{
	char key[160];

	snprintf(key, sizeof(key), "fallback %.63s %.63s", name, reason);
	return counts_get(truth, key);
}

/* Task points per variant, over every task of the truth. */
static long truth_points(const struct counts *truth, const char *variant)
{
	long total = 0;

	for (size_t i = 0; i < truth->length; i++) {
		char task[64], key_variant[32];

		if (sscanf(truth->entries[i].key, "task %63s %31s", task, key_variant) == 2 &&
		    !strcmp(key_variant, variant))
			total += truth->entries[i].count;
	}
	return total;
}

/*
 * The truth counts modes and fallbacks over every depth; a profile without
 * helpers shows depth 0 only. Of all total operations of a name, depth0 are
 * at depth 0; of those with a property (count of them), at least
 * count - (total - depth0) and at most min(count, depth0) are at depth 0:
 * exact when every one of that name is at depth 0 or every one has it.
 */
static void assert_depth0_share(const char *what, const char *name, const char *property, long got,
				long count, long total, long depth0)
{
	long low = count - (total - depth0), high = count < depth0 ? count : depth0;

	if (low < 0)
		low = 0;
	ck_assert_msg(got >= low && got <= high,
		      "%s: %ld depth-0 %s with %s; the truth allows %ld to %ld (%ld of %ld %s "
		      "ops have it, %ld at depth 0)",
		      what, got, name, property, low, high, count, total, name, depth0);
}

/* ---- titles --------------------------------------------------------------------- */

/* "demo.add [deferred; fallback: unsupported_dtype; CPU×2 OMP×1] (cut) site" */
struct title {
	char name[128];
	char mode[32]; /* "none" when the title says none */
	char fallback[64];
	long points[OPTRACE_VARIANT__COUNT];
	bool cut;
};

static void title_tokens(const char *inside, struct title *t)
{
	char copy[512], *token, *save = NULL;
	bool first = true;

	snprintf(copy, sizeof(copy), "%s", inside);
	for (token = strtok_r(copy, ";", &save); token; token = strtok_r(NULL, ";", &save)) {
		char *word, *save_word = NULL;

		token += *token == ' ';
		if (!strncmp(token, "fallback: ", 10)) {
			snprintf(t->fallback, sizeof(t->fallback), "%s", token + 10);
		} else if (first && !strstr(token, TIMES)) {
			snprintf(t->mode, sizeof(t->mode), "%s", token);
		} else {
			for (word = strtok_r(token, " ", &save_word); word;
			     word = strtok_r(NULL, " ", &save_word)) {
				char *times = strstr(word, TIMES);

				ck_assert_msg(times, "a title's bracket holds \"%s\"", word);
				*times = '\0';
				for (int v = 0; v < OPTRACE_VARIANT__COUNT; v++)
					if (!strcmp(word, variant_titles[v]))
						t->points[v] += atol(times + strlen(TIMES));
			}
		}
		first = false;
	}
}

static void title_parse(const char *text, struct title *t)
{
	const char *space = strchrnul(text, ' '), *close;

	memset(t, 0, sizeof(*t));
	strcpy(t->mode, "none");
	snprintf(t->name, sizeof(t->name), "%.*s", (int)(space - text), text);
	if (!strncmp(space, " [", 2)) {
		close = strchr(space, ']');
		ck_assert_msg(close, "title without ']': %s", text);
		char inside[512];

		snprintf(inside, sizeof(inside), "%.*s", (int)(close - space - 2), space + 2);
		title_tokens(inside, t);
		space = close + 1;
	}
	/* "[fallback: reason]" says the mode once */
	if (t->fallback[0] && !strcmp(t->mode, "none"))
		strcpy(t->mode, "fallback");
	t->cut = !strncmp(space, " (cut)", 6);
}

/*
 * A range's or op event's title counted into keys "op NAME DEPTH", "mode
 * NAME MODE", "fallback NAME REASON", and for depth 0 also "mode0 NAME
 * MODE", "fallback0 NAME REASON" and "points VARIANT" (its tree's points).
 */
static void count_title(struct counts *counts, const struct title *t, unsigned int depth)
{
	char key[256];

	snprintf(key, sizeof(key), "op %s %u", t->name, depth);
	counts_add(counts, key, 1);
	snprintf(key, sizeof(key), "mode %s %s", t->name, t->mode);
	counts_add(counts, key, 1);
	if (t->fallback[0]) {
		snprintf(key, sizeof(key), "fallback %s %s", t->name, t->fallback);
		counts_add(counts, key, 1);
	}
	if (depth)
		return;
	/* depth 0 alone: what a profile without helpers shows */
	snprintf(key, sizeof(key), "mode0 %s %s", t->name, t->mode);
	counts_add(counts, key, 1);
	if (t->fallback[0]) {
		snprintf(key, sizeof(key), "fallback0 %s %s", t->name, t->fallback);
		counts_add(counts, key, 1);
	}
	for (int v = 0; v < OPTRACE_VARIANT__COUNT; v++) {
		snprintf(key, sizeof(key), "points %s", variant_names[v]);
		if (t->points[v])
			counts_add(counts, key, t->points[v]);
	}
}

/* ---- what a profile shows, against the truth ------------------------------------------ */

/* Depth-0 operations only: counts per name exact, modes and fallbacks within the truth's share. */
static void check_depth0(const char *what, const struct counts *got, const struct counts *truth)
{
	struct counts expected = { 0 }, ops = { 0 };
	char names[64][64], key[256];
	int name_count = truth_op_names(truth, names, 64);

	for (int i = 0; i < name_count; i++) {
		snprintf(key, sizeof(key), "op %.63s 0", names[i]);
		if (truth_ops(truth, names[i], 0))
			counts_add(&expected, key, truth_ops(truth, names[i], 0));
	}
	counts_select(got, "op ", &ops);
	assert_counts_equal(&expected, &ops, what);
	for (size_t i = 0; i < got->length; i++) {
		char name[64], value[64];
		const char *key_text = got->entries[i].key;
		long total, depth0;

		if (!strncmp(key_text, "mode ", 5) &&
		    sscanf(key_text + 5, "%63s %63s", name, value) == 2) {
			total = truth_ops(truth, name, -1);
			depth0 = truth_ops(truth, name, 0);
			assert_depth0_share(what, name, value, got->entries[i].count,
					    truth_mode(truth, name, value), total, depth0);
		} else if (!strncmp(key_text, "fallback ", 9) &&
			   sscanf(key_text + 9, "%63s %63s", name, value) == 2) {
			total = truth_ops(truth, name, -1);
			depth0 = truth_ops(truth, name, 0);
			assert_depth0_share(what, name, value, got->entries[i].count,
					    truth_fallback(truth, name, value), total, depth0);
		}
	}
	/* a mode the truth has but no title shows must fit too (its share may be 0) */
	for (int i = 0; i < name_count; i++) {
		long total = truth_ops(truth, names[i], -1), depth0 = truth_ops(truth, names[i], 0);

		for (size_t m = 0; m < sizeof(mode_names) / sizeof(mode_names[0]); m++) {
			snprintf(key, sizeof(key), "mode %.63s %s", names[i], mode_names[m]);
			assert_depth0_share(what, names[i], mode_names[m], counts_get(got, key),
					    truth_mode(truth, names[i], mode_names[m]), total,
					    depth0);
		}
		for (size_t f = 0; f < sizeof(fallback_names) / sizeof(fallback_names[0]); f++) {
			snprintf(key, sizeof(key), "fallback %.63s %s", names[i],
				 fallback_names[f]);
			assert_depth0_share(what, names[i], fallback_names[f], counts_get(got, key),
					    truth_fallback(truth, names[i], fallback_names[f]),
					    total, depth0);
		}
	}
	counts_free(&expected);
	counts_free(&ops);
}

/* Every operation at every depth: per (name, depth), per mode and per fallback exact. */
static void check_all_depths(const char *what, const struct counts *got, const struct counts *truth)
{
	struct counts expected = { 0 }, shown = { 0 };
	char names[64][64], key[256];
	int name_count = truth_op_names(truth, names, 64);

	counts_select(truth, "op ", &expected);
	counts_select(truth, "fallback ", &expected);
	for (int i = 0; i < name_count; i++) {
		for (size_t m = 0; m < sizeof(mode_names) / sizeof(mode_names[0]); m++) {
			long count = truth_mode(truth, names[i], mode_names[m]);

			snprintf(key, sizeof(key), "mode %.63s %s", names[i], mode_names[m]);
			if (count)
				counts_add(&expected, key, count);
		}
	}
	counts_select(got, "op ", &shown);
	counts_select(got, "mode ", &shown);
	counts_select(got, "fallback ", &shown);
	assert_counts_equal(&expected, &shown, what);
	counts_free(&expected);
	counts_free(&shown);
}

/* Task points in depth-0 titles, per variant: every task point of the truth. */
static void check_title_points(const char *what, const struct counts *got,
			       const struct counts *truth)
{
	char key[64];

	for (int v = 0; v < OPTRACE_VARIANT__COUNT; v++) {
		snprintf(key, sizeof(key), "points %s", variant_names[v]);
		ck_assert_msg(counts_get(got, key) == truth_points(truth, variant_names[v]),
			      "%s: titles say %ld %s points, the truth %ld", what,
			      counts_get(got, key), variant_names[v],
			      truth_points(truth, variant_names[v]));
	}
}

/* ---- Legion Prof logs ---------------------------------------------------------------- */

struct legion_expect {
	uint32_t version;
	uint32_t node;
	uint32_t nodes;
	pid_t pid;
	int threads; /* issuing threads: one top-level task each */
	bool python;
	bool show_helpers;
};

static void read_summary(const char *path, uint32_t version, struct legion_summary *summary)
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

/* An operation drawn as a task: its popup says where its work ran. */
static bool is_op(const struct legion_task *t)
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

static void check_legion_file(const char *path, const struct counts *truth,
			      const struct legion_expect *e, struct counts *ranges)
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

/* The prof_*.gz of an export directory: exactly the nodes expected. */
static void check_file_names(const char *out, const uint32_t *nodes, int count)
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

/* ---- the demo's processes in the capture ------------------------------------------------ */

struct process {
	pid_t pid;
	int rank;
	bool ops;
};

/* The processes that ran operations, and the rank each announced. */
static int capture_processes(const char *path, struct process *processes, int max)
{
	struct capture_reader *reader;
	struct capture_record record;
	char why[256];
	int count = 0, kept = 0, err;

	ck_assert_msg(capture_reader_open(&reader, path, why, sizeof(why)) == 0, "%s", why);
	while ((err = capture_next(reader, &record)) > 0) {
		const struct record_event *event = record.data;
		int i;

		if (record.size < sizeof(*event) ||
		    (event->type != RECORD_RT_INIT && event->type != RECORD_OP_BEGIN))
			continue;
		for (i = 0; i < count && processes[i].pid != (pid_t)event->tgid; i++)
			;
		if (i == count) {
			ck_assert_int_lt(count, max);
			processes[count++] = (struct process){ (pid_t)event->tgid, -1, false };
		}
		if (event->type == RECORD_RT_INIT)
			processes[i].rank = (int)event->rt_init.rank;
		else
			processes[i].ops = true;
	}
	ck_assert_int_eq(err, 0);
	capture_reader_close(reader);
	/* keep those that ran operations: the parent of --procs runs none */
	for (int i = 0; i < count; i++)
		if (processes[i].ops)
			processes[kept++] = processes[i];
	return kept;
}

/* ---- Chrome trace JSON ---------------------------------------------------------------- */

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

/* The document: strict JSON, UTF-8, and what json_read makes of it. */
static struct jv *chrome_read(const char *path, char **text)
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
	struct counts per_pid[MAX_PROCESSES]; /* by the order of pids */
	struct counts flows;		      /* "s ID", "f ID" */
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

static void check_chrome(const char *path, const struct truth_block *blocks, int count,
			 bool show_helpers)
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

/* ---- one recorded run, every export ---------------------------------------------------- */

struct demo_run {
	const char *const *args;
	int processes;
	int threads; /* issuing threads per process */
	bool python; /* also export with --python */
};

struct recorded {
	char *capture;
	struct truth_block blocks[MAX_PROCESSES];
	int count;
	struct process processes[MAX_PROCESSES];
	uint32_t nodes[MAX_PROCESSES]; /* the rank of each block's process */
};

static void record_run(const struct demo_run *run, struct recorded *r)
{
	char *truth = test_path("truth.txt");
	int found;

	r->capture = test_path("run.capture");
	record_demo(run->args, r->capture, truth);
	r->count = truth_blocks(truth, r->blocks, MAX_PROCESSES);
	ck_assert_int_eq(r->count, run->processes);
	found = capture_processes(r->capture, r->processes, MAX_PROCESSES);
	ck_assert_int_eq(found, run->processes);
	for (int b = 0; b < r->count; b++) {
		int i;

		for (i = 0; i < found && r->processes[i].pid != r->blocks[b].pid; i++)
			;
		ck_assert_msg(i < found, "process %d of the truth is not in the capture",
			      r->blocks[b].pid);
		ck_assert_int_ge(r->processes[i].rank, 0);
		r->nodes[b] = (uint32_t)r->processes[i].rank;
	}
	free(truth);
}

/*
 * One Legion export of the recorded run into dir/name, each file checked
 * against its process's truth; ranges gets each file's ranges by title.
 */
static void check_legion_export(const struct demo_run *run, struct recorded *r,
				const struct legion_expect *base, const char *name,
				const char *const options[], struct counts *ranges)
{
	char *out = test_path(name), path[4096];

	export(options, out, r->capture);
	check_file_names(out, r->nodes, r->count);
	for (int b = 0; b < r->count; b++) {
		struct legion_expect e = *base;

		e.node = r->nodes[b];
		e.nodes = (uint32_t)r->count;
		e.pid = r->blocks[b].pid;
		e.threads = run->threads;
		snprintf(path, sizeof(path), "%s/prof_%u.gz", out, e.node);
		check_legion_file(path, &r->blocks[b].counts, &e, &ranges[b]);
	}
	free(out);
}

/* The hue of each "name [variant]" in an export's files, as Legion Prof colours them. */
static void export_hues(const char *name, struct recorded *r, struct counts *hues,
			double *neighbours)
{
	struct legion_summary files[MAX_PROCESSES];
	struct legion_colours colours;
	char *out = test_path(name), path[4096], key[512];
	double sum = 0;
	long pairs = 0;

	for (int b = 0; b < r->count; b++) {
		snprintf(path, sizeof(path), "%s/prof_%u.gz", out, r->nodes[b]);
		read_summary(path, 1008, &files[b]);
	}
	ck_assert_int_eq(legion_colours_of(files, (size_t)r->count, &colours), 0);
	for (int b = 0; b < r->count; b++) {
		const struct legion_summary *s = &files[b];

		for (size_t i = 0; i < s->task_count; i++) {
			const struct legion_task *t = &s->tasks[i], *next = NULL;
			double hue = legion_colour_hue(&colours, t->task_id, t->variant_id);

			ck_assert(hue >= 0);
			/* hues in millionths: counts hold integers */
			snprintf(key, sizeof(key), "%s [%s]", t->task_name, t->variant_name);
			if (!counts_get(hues, key))
				counts_add(hues, key, (long)(hue * 1e6) + 1);
			/* the next task drawn on the same processor, if of another kind */
			for (size_t j = i + 1; j < s->task_count && !next; j++)
				if (s->tasks[j].proc_id == t->proc_id)
					next = &s->tasks[j];
			if (next &&
			    (next->task_id != t->task_id || next->variant_id != t->variant_id)) {
				sum += legion_hue_distance(
					hue, legion_colour_hue(&colours, next->task_id,
							       next->variant_id));
				pairs++;
			}
		}
	}
	*neighbours = pairs ? sum / (double)pairs : 0.5;
	legion_colours_free(&colours);
	for (int b = 0; b < r->count; b++)
		legion_summary_free(&files[b]);
	free(out);
}

/*
 * Colours: each kind keeps its colour from one export of the job to the
 * next (with helpers or without), and kinds drawn one after the other on a
 * processor are far apart on the colour wheel (0.25 on average by chance, 0.28 to 0.43 on the
 * demo's workloads).
 */
static void check_colours(struct recorded *r)
{
	struct counts plain = { 0 }, helpers = { 0 };
	double plain_neighbours, helper_neighbours;

	export_hues("legion", r, &plain, &plain_neighbours);
	export_hues("helpers", r, &helpers, &helper_neighbours);
	for (size_t i = 0; i < plain.length; i++) {
		long other = counts_get(&helpers, plain.entries[i].key);

		ck_assert_msg(other == plain.entries[i].count,
			      "%s has hue %.3f, %.3f with --show-helpers", plain.entries[i].key,
			      (double)(plain.entries[i].count - 1) / 1e6,
			      (double)(other - 1) / 1e6);
	}
	ck_assert_msg(plain_neighbours >= 0.2, "neighbours' hues %.3f apart", plain_neighbours);
	counts_free(&plain);
	counts_free(&helpers);
}

static void counts_free_all(struct counts *counts, int count)
{
	for (int i = 0; i < count; i++)
		counts_free(&counts[i]);
}

/* The depth-0 ranges of --show-helpers are the ranges without it, title for title. */
static void check_same_depth0(const struct counts *plain, const struct counts *helpers)
{
	static const char *const prefixes[] = { "op ", "mode0 ", "fallback0 ", "points " };
	struct counts depth0 = { 0 }, shown = { 0 };

	for (size_t p = 0; p < sizeof(prefixes) / sizeof(prefixes[0]); p++) {
		counts_select(plain, prefixes[p], &shown);
		counts_select(helpers, prefixes[p], &depth0);
	}
	for (size_t i = 0; i < depth0.length; i++) {
		char name[128];
		unsigned int depth;

		if (sscanf(depth0.entries[i].key, "op %127s %u", name, &depth) == 2 && depth)
			depth0.entries[i].count = 0;
	}
	assert_counts_equal(&shown, &depth0, "depth-0 ranges with and without --show-helpers");
	counts_free(&depth0);
	counts_free(&shown);
}

/* Files of several processes combine: op ids and events unique across them. */
static void check_ids_across_files(struct recorded *r)
{
	struct counts ids = { 0 };
	char path[4096], key[64], *out = test_path("legion");

	for (int b = 0; b < r->count; b++) {
		struct legion_summary s;

		snprintf(path, sizeof(path), "%s/prof_%u.gz", out, r->nodes[b]);
		read_summary(path, 1008, &s);
		for (size_t i = 0; i < s.op_count; i++) {
			snprintf(key, sizeof(key), "op %llu", (unsigned long long)s.ops[i].op_id);
			counts_add(&ids, key, 1);
		}
		for (size_t i = 0; i < s.task_count; i++) {
			snprintf(key, sizeof(key), "event %llx",
				 (unsigned long long)s.tasks[i].fevent);
			counts_add(&ids, key, 1);
		}
		legion_summary_free(&s);
	}
	for (size_t i = 0; i < ids.length; i++)
		ck_assert_msg(ids.entries[i].count == 1, "%s is used in %ld places",
			      ids.entries[i].key, ids.entries[i].count);
	counts_free(&ids);
	free(out);
}

static void check_demo_run(const struct demo_run *run)
{
	static const char *const plain_options[] = { "--legion", NULL };
	static const char *const helper_options[] = { "--legion", "--show-helpers", NULL };
	static const char *const v1007_options[] = { "--legion", "--legion-version", "1007", NULL };
	static const char *const python_options[] = { "--legion", "--python", NULL };
	static const char *const chrome_options[] = { "--chrome", NULL };
	static const char *const chrome_helper_options[] = { "--chrome", "--show-helpers", NULL };
	struct counts plain[MAX_PROCESSES] = { 0 }, helpers[MAX_PROCESSES] = { 0 };
	struct legion_expect base = { .version = 1008 };
	struct recorded r = { 0 };
	char *json;

	record_run(run, &r);
	check_legion_export(run, &r, &base, "legion", plain_options, plain);
	base.show_helpers = true;
	check_legion_export(run, &r, &base, "helpers", helper_options, helpers);
	for (int b = 0; b < r.count; b++)
		check_same_depth0(&plain[b], &helpers[b]);
	check_colours(&r);
	counts_free_all(plain, r.count);
	counts_free_all(helpers, r.count);
	base.show_helpers = false;
	base.version = 1007;
	check_legion_export(run, &r, &base, "v1007", v1007_options, plain);
	counts_free_all(plain, r.count);
	if (run->python) {
		base.version = 1008;
		base.python = true;
		check_legion_export(run, &r, &base, "python", python_options, plain);
		counts_free_all(plain, r.count);
	}
	if (r.count > 1)
		check_ids_across_files(&r);

	json = test_path("trace.json");
	export(chrome_options, json, r.capture);
	check_chrome(json, r.blocks, r.count, false);
	export(chrome_helper_options, json, r.capture);
	check_chrome(json, r.blocks, r.count, true);
	free(json);
	truth_blocks_free(r.blocks, r.count);
	free(r.capture);
}

START_TEST(test_each_workload)
{
	static const char *const workloads[] = { "jacobi", "stats", "fallback" };
	const char *args[] = { "--workload", workloads[_i], NULL };
	struct demo_run run = { .args = args, .processes = 1, .threads = 1 };

	NEED_BPF();
	check_demo_run(&run);
}
END_TEST

START_TEST(test_mixed_threads_openmp)
{
	static const char *const args[] = { "--workload", "all", "--omp", "1",
					    "--threads",  "2",	 NULL };
	struct demo_run run = { .args = args, .processes = 1, .threads = 2, .python = true };

	NEED_BPF();
	check_demo_run(&run);
}
END_TEST

START_TEST(test_two_processes)
{
	static const char *const args[] = { "--workload", "all", "--procs", "2", NULL };
	struct demo_run run = { .args = args, .processes = 2, .threads = 1 };

	NEED_BPF();
	check_demo_run(&run);
}
END_TEST

/* ---- a capture written by hand, with hostile strings ------------------------------------ */

#define HOSTILE_PID 4242
#define WORKER_A 4243
#define WORKER_B 4244

/* String addresses in the hostile process; NOT_SENT never gets its text. */
enum {
	BAD_NAME = 0x1000,
	LONG_NAME = 0x2000,
	BAD_SITE = 0x3000,
	BAD_TASK = 0x4000,
	BAD_DETAIL = 0x5000,
	UNREADABLE = 0x6000,
	OPEN_NAME = 0x7000,
	NOT_SENT = 0x8000,
};

struct hand_capture {
	struct capture_writer *writer;
	uint64_t now;
	uint32_t tgid;
};

static void put_event(struct hand_capture *c, uint32_t tid, int type, uint64_t a0, uint64_t a1,
		      uint64_t a2, uint64_t a3, uint64_t a4)
{
	struct record_event e = {
		.timestamp = c->now += 1000,
		.tgid = c->tgid,
		.tid = tid,
		.type = (__u16)type,
		.args = { a0, a1, a2, a3, a4 },
	};

	ck_assert_int_eq(capture_write(c->writer, e.type, &e, sizeof(e)), 0);
}

static void hand_capture_open(struct hand_capture *c, const char *path,
			      const struct capture_writer_opts *opts)
{
	struct timespec ts;

	ck_assert_int_eq(capture_writer_open(&c->writer, path, opts), 0);
	/* events a little after the header's clock pair: time zero */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	c->now = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec + 1000000;
}

/* length bytes of text (at most RECORD_STRING_LEN - 1), as record.bpf.c sends them. */
static void put_string(struct hand_capture *c, uint64_t address, const char *text, size_t length,
		       bool truncated, bool unreadable)
{
	struct record_string s = {
		.timestamp = c->now += 1000,
		.tgid = c->tgid,
		.tid = c->tgid,
		.type = RECORD_STRING,
		.truncated = truncated,
		.unreadable = unreadable,
		.address = address,
	};

	ck_assert_uint_lt(length, sizeof(s.text));
	memcpy(s.text, text, length);
	ck_assert_int_eq(capture_write(c->writer, s.type, &s, sizeof(s)), 0);
}

static void put_text(struct hand_capture *c, uint64_t address, const char *text)
{
	put_string(c, address, text, strlen(text), false, false);
}

/* 127 bytes (the most a string record holds) that end inside a character, marked cut. */
static void put_long_name(struct hand_capture *c)
{
	char text[RECORD_STRING_LEN] = "demo.long$|\"\n";

	while (strlen(text) < RECORD_STRING_LEN - 1)
		strncat(text, "\xe2\x82\xac", RECORD_STRING_LEN - 1 - strlen(text)); /* "€" */
	ck_assert_uint_eq(strlen(text), RECORD_STRING_LEN - 1);
	put_string(c, LONG_NAME, text, strlen(text), true, false);
}

static void put_strings(struct hand_capture *c)
{
	put_text(c, BAD_NAME, "demo.bad\xff\xfe$name|\"quoted\"\nline\ttab\\{}");
	put_long_name(c);
	put_text(c, BAD_SITE, "site\"$|\n\r\x01.c:12\xc3");
	put_text(c, BAD_TASK, "Task$|\"\xc0\x80\n\x7f\xed\xa0\x80");
	put_text(c, BAD_DETAIL, "detail \xf4\x90\x80\x80 $ \"\\\"");
	put_string(c, UNREADABLE, "", 0, false, true);
	put_text(c, OPEN_NAME, "demo.open$\"|");
}

/*
 * Root 1 (bad name) calls helper 2 (the long name, a fallback) that
 * launches task 10 on two workers, one with a variant out of range; root 3
 * has an unreadable name, a call site never sent, a mode and a status out
 * of range; a wait outside any operation; root 4 and its helper 5 are still
 * open at the end, with a task point still running.
 */
static void write_hostile_capture(const char *path)
{
	struct capture_writer_opts opts = { .target = "hand-made \"$|\n\xff",
					    .hostname = "h$\xff" };
	struct hand_capture c = { .tgid = HOSTILE_PID };
	const uint32_t issuer = HOSTILE_PID;

	hand_capture_open(&c, path, &opts);
	put_event(&c, issuer, RECORD_RT_INIT, OPTRACE_ABI_VERSION, 0, 1, 0, 0);
	put_strings(&c);
	put_event(&c, issuer, RECORD_OP_BEGIN, 1, 0, 0, BAD_NAME, BAD_SITE);
	put_event(&c, issuer, RECORD_OP_MODE, 1, OPTRACE_MODE_DEFERRED, OPTRACE_MODE_REASON_HELPERS,
		  0, 0);
	put_event(&c, issuer, RECORD_OP_BEGIN, 2, 1, 1, LONG_NAME, BAD_SITE);
	put_event(&c, issuer, RECORD_OP_MODE, 2, OPTRACE_MODE_FALLBACK,
		  OPTRACE_MODE_REASON_FALLBACK, 0, 0);
	put_event(&c, issuer, RECORD_OP_FALLBACK, 2, OPTRACE_FALLBACK_UNSUPPORTED_DTYPE, BAD_DETAIL,
		  0, 0);
	put_event(&c, issuer, RECORD_TASK_LAUNCH, 10, 2, 1, BAD_TASK, 2);
	put_event(&c, WORKER_A, RECORD_TASK_BEGIN, 10, 0, OPTRACE_VARIANT_CPU, 0, 0);
	put_event(&c, WORKER_B, RECORD_TASK_BEGIN, 10, 1, 99, 1, 0);
	put_event(&c, WORKER_A, RECORD_TASK_END, 10, 0, OPTRACE_STATUS_OK, 0, 0);
	put_event(&c, WORKER_B, RECORD_TASK_END, 10, 1, OPTRACE_STATUS_OK, 0, 0);
	put_event(&c, issuer, RECORD_OP_END, 2, OPTRACE_STATUS_OK, 0, 0, 0);
	put_event(&c, issuer, RECORD_OP_END, 1, OPTRACE_STATUS_OK, 0, 0, 0);
	put_event(&c, issuer, RECORD_OP_BEGIN, 3, 0, 0, UNREADABLE, NOT_SENT);
	put_event(&c, issuer, RECORD_OP_MODE, 3, 77, 99, 0, 0);
	put_event(&c, issuer, RECORD_OP_END, 3, 5, 0, 0, 0);
	put_event(&c, issuer, RECORD_WAIT_BEGIN, 0, OPTRACE_WAIT_FUTURE, 0, 0, 0);
	put_event(&c, issuer, RECORD_WAIT_END, 0, OPTRACE_WAIT_FUTURE, 0, 0, 0);
	put_event(&c, issuer, RECORD_OP_BEGIN, 4, 0, 0, OPEN_NAME, BAD_SITE);
	put_event(&c, issuer, RECORD_OP_MODE, 4, OPTRACE_MODE_DEFERRED,
		  OPTRACE_MODE_REASON_ABOVE_THRESHOLD, 0, 0);
	put_event(&c, issuer, RECORD_OP_BEGIN, 5, 4, 1, BAD_NAME, 0);
	put_event(&c, issuer, RECORD_TASK_LAUNCH, 11, 5, 4, BAD_TASK, 1);
	put_event(&c, WORKER_A, RECORD_TASK_BEGIN, 11, 0, OPTRACE_VARIANT_OPENMP, 2, 0);
	ck_assert_int_eq(capture_close(c.writer, NULL, 0), 0);
}

/* Titles that say "(cut)"; each must be the open root or its open helper. */
static size_t cut_titles(const char *const *titles, size_t count)
{
	size_t cut = 0;

	for (size_t i = 0; i < count; i++) {
		ck_assert_ptr_nonnull(titles[i]);
		if (!strstr(titles[i], "] (cut)"))
			continue;
		cut++;
		ck_assert_msg(!strncmp(titles[i], "demo.open", 9) ||
				      !strncmp(titles[i], "demo.bad", 8),
			      "%s is cut", titles[i]);
	}
	return cut;
}

static void check_hostile_legion(const char *capture, const char *name, uint32_t version,
				 const char *const options[], size_t ranges, size_t cut)
{
	char *out = test_path(name), path[4096], titles[16][512];
	const char *title_pointers[16];
	struct legion_summary s;
	uint32_t node = 0;
	size_t count = 0, last = 0;
	bool replaced = false;

	export(options, out, capture);
	check_file_names(out, &node, 1);
	snprintf(path, sizeof(path), "%s/prof_0.gz", out);
	read_summary(path, version, &s);
	ck_assert_int_eq(s.process_id, HOSTILE_PID);
	for (size_t i = 0; i < s.task_count; i++) {
		if (!is_op(&s.tasks[i]))
			continue;
		ck_assert_uint_lt(count, 16);
		legion_popup_human(s.tasks[i].provenance, titles[count], sizeof(titles[count]));
		/* the legacy viewer splits on '$': sanitised to U+FF04 but for its split */
		ck_assert_msg(!strchr(titles[count], '$'), "a '$' in title %s", titles[count]);
		ck_assert_msg(!strchr(s.tasks[i].task_name, '$'), "a '$' in %s",
			      s.tasks[i].task_name);
		last = count++;
	}
	ck_assert_uint_eq(count, ranges);
	for (size_t i = 0; i < count; i++)
		title_pointers[i] = titles[i];
	ck_assert_ptr_nonnull(strstr(titles[last], "demo.open\xef\xbc\x84"));
	ck_assert_uint_eq(cut_titles(title_pointers, count), cut);
	/* three task points (one cut) and the operations */
	ck_assert_uint_eq(s.task_count, 3 + count);
	for (size_t i = 0; i < count && !replaced; i++)
		replaced = strstr(titles[i], "\xef\xbf\xbd"); /* U+FFFD */
	ck_assert_msg(replaced, "no operation's title has the bad bytes replaced");
	legion_summary_free(&s);
	free(out);
}

static void check_hostile_chrome(const char *capture, const char *const options[],
				 size_t expect_ops, size_t cut)
{
	char *json = test_path("hostile.json"), *text;
	const char *titles[16];
	const struct jv *events;
	size_t ops = 0, tasks = 0, cut_args = 0;

	struct jv *root;

	export(options, json, capture);
	root = chrome_read(json, &text);
	events = jv_get(root, "traceEvents");
	for (size_t i = 0; i < events->count; i++) {
		const struct jv *event = events->items[i], *args = jv_get(event, "args");

		if (strcmp(jv_string(event, "ph"), "X"))
			continue;
		if (!strcmp(jv_string(event, "cat"), "task"))
			tasks++;
		if (strcmp(jv_string(event, "cat"), "op"))
			continue;
		ck_assert_uint_lt(ops, 16);
		titles[ops++] = jv_string(event, "name");
		cut_args += jv_get(args, "cut") != NULL;
	}
	ck_assert_uint_eq(ops, expect_ops);
	ck_assert_uint_eq(tasks, 3);
	ck_assert_uint_eq(cut_args, cut);
	ck_assert_uint_eq(cut_titles(titles, ops), cut);
	jv_free(root);
	free(text);
	free(json);
}

START_TEST(test_hostile_capture)
{
	static const char *const plain_options[] = { "--legion", NULL };
	static const char *const helper_options[] = { "--legion", "--show-helpers", NULL };
	static const char *const v1007_options[] = { "--legion", "--legion-version", "1007", NULL };
	static const char *const python_options[] = { "--legion", "--python", NULL };
	static const char *const chrome_options[] = { "--chrome", NULL };
	static const char *const chrome_helper_options[] = { "--chrome", "--show-helpers", NULL };
	char *capture = test_path("hostile.capture");

	write_hostile_capture(capture);
	check_hostile_legion(capture, "legion", 1008, plain_options, 3, 1);
	check_hostile_legion(capture, "helpers", 1008, helper_options, 5, 2);
	check_hostile_legion(capture, "v1007", 1007, v1007_options, 3, 1);
	check_hostile_legion(capture, "python", 1008, python_options, 3, 1);
	check_hostile_chrome(capture, chrome_options, 3, 1);
	check_hostile_chrome(capture, chrome_helper_options, 5, 2);
	free(capture);
}
END_TEST

/*
 * Ranks are announced (rt_init) before a process's first operation, and the
 * processes need not start in rank order: rank 1 runs first here, and a
 * parent that announces itself but runs nothing gets no file.
 */
START_TEST(test_ranks_name_files)
{
	static const char *const options[] = { "--legion", NULL };
	static const uint32_t pids[] = { 5000, 5002, 5001 }, ranks[] = { 0, 1, 0 };
	struct capture_writer_opts opts = { .target = "ranks" };
	char *capture = test_path("ranks.capture"), *out = test_path("ranks"), path[4096];
	uint32_t nodes[] = { 0, 1 };
	struct hand_capture c = { 0 };

	hand_capture_open(&c, capture, &opts);
	for (int i = 0; i < 3; i++) {
		c.tgid = pids[i];
		put_event(&c, c.tgid, RECORD_RT_INIT, OPTRACE_ABI_VERSION, ranks[i], i ? 2 : 1, 0,
			  0);
		put_text(&c, BAD_NAME, "demo.add");
		if (!i)
			continue;
		put_event(&c, c.tgid, RECORD_OP_BEGIN, 1, 0, 0, BAD_NAME, 0);
		put_event(&c, c.tgid, RECORD_OP_END, 1, OPTRACE_STATUS_OK, 0, 0, 0);
	}
	ck_assert_int_eq(capture_close(c.writer, NULL, 0), 0);
	export(options, out, capture);
	check_file_names(out, nodes, 2);
	for (uint32_t node = 0; node < 2; node++) {
		struct legion_summary s;

		snprintf(path, sizeof(path), "%s/prof_%u.gz", out, node);
		read_summary(path, 1008, &s);
		ck_assert_uint_eq(s.node_id, node);
		ck_assert_uint_eq(s.num_nodes, 2);
		ck_assert_uint_eq(s.process_id, (node ? 5002u : 5001u));
		ck_assert_uint_eq(s.task_count, 1);
		ck_assert(is_op(&s.tasks[0]));
		ck_assert_str_eq(s.tasks[0].task_name, "demo.add");
		legion_summary_free(&s);
	}
	free(capture);
	free(out);
}
END_TEST

/* ---- a job: ids that are the job's, invocations that are report's ---------------- */

/* A demo that runs until SIGTERM, with the workload given (tests/integration/test_cli.c's way). */
static pid_t start_forever(const char *workload)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		execl(DEMO, DEMO, "--forever", "--workload", workload, "--pause", "20", "-q",
		      "--truth", "/dev/null", (char *)NULL);
		_exit(127);
	}
	usleep(500 * 1000); /* past its start: it maps liboptrace */
	return pid;
}

/* report --json of the captures: "task NAME VARIANT" and "op NAME" (depth 0) counts. */
static void report_invocations(char *const captures[], int count, struct counts *counts)
{
	char *json_path = test_path("report.json"), *argv[8], *text;
	struct jv *report;
	int argc = 0;

	argv[argc++] = OPTRACE;
	argv[argc++] = "report";
	argv[argc++] = "--json";
	for (int i = 0; i < count; i++)
		argv[argc++] = captures[i];
	argv[argc] = NULL;
	ck_assert_int_eq(run_command(argv, json_path, NULL, 120), 0);
	text = read_file(json_path);
	report = jv_parse(text);
	ck_assert_ptr_nonnull(report);
	for (size_t p = 0; p < jv_get(report, "processes")->count; p++) {
		const struct jv *process = jv_get(report, "processes")->items[p];
		const struct jv *tasks = jv_get(process, "tasks");
		const struct jv *ops = jv_get(process, "operations");
		char key[256];

		for (size_t i = 0; i < tasks->count; i++) {
			snprintf(key, sizeof(key), "task %s %s", jv_string(tasks->items[i], "name"),
				 jv_string(tasks->items[i], "variant"));
			counts_add(counts, key, (long)jv_number(tasks->items[i], "count"));
		}
		for (size_t i = 0; i < ops->count; i++) {
			if (jv_number(ops->items[i], "depth") != 0)
				continue;
			snprintf(key, sizeof(key), "op %s", jv_string(ops->items[i], "name"));
			counts_add(counts, key, (long)jv_number(ops->items[i], "count"));
		}
	}
	jv_free(report);
	free(text);
	free(json_path);
}

/*
 * The files of one export: every task name and (name, variant) has one id
 * in all of them, and invocations per name are report's.
 */
static void check_job(const char *out, int files, const struct counts *expected)
{
	struct counts ids = { 0 }, got = { 0 };
	char path[4096], key[512];

	for (int f = 0; f < files; f++) {
		struct legion_summary s;

		snprintf(path, sizeof(path), "%s/prof_%d.gz", out, f);
		read_summary(path, 1008, &s);
		for (size_t i = 0; i < s.task_count; i++) {
			const struct legion_task *t = &s.tasks[i];

			/* the first id a name got, then every other use checked against it */
			snprintf(key, sizeof(key), "name %s", t->task_name);
			if (!counts_get(&ids, key))
				counts_add(&ids, key, t->task_id);
			ck_assert_msg(counts_get(&ids, key) == t->task_id,
				      "%s has task id %u in prof_%d.gz, %ld elsewhere",
				      t->task_name, t->task_id, f, counts_get(&ids, key));
			snprintf(key, sizeof(key), "variant %s %s", t->task_name, t->variant_name);
			if (!counts_get(&ids, key))
				counts_add(&ids, key, t->variant_id);
			ck_assert_msg(counts_get(&ids, key) == t->variant_id,
				      "%s [%s] has variant id %u in prof_%d.gz, %ld elsewhere",
				      t->task_name, t->variant_name, t->variant_id, f,
				      counts_get(&ids, key));
			if (is_op(t))
				snprintf(key, sizeof(key), "op %s", t->task_name);
			else
				snprintf(key, sizeof(key), "task %s %s", t->task_name,
					 t->variant_name);
			counts_add(&got, key, 1);
		}
		legion_summary_free(&s);
	}
	assert_counts_equal(expected, &got, "Legion Prof invocations against report --json");
	counts_free(&ids);
	counts_free(&got);
}

static void export_job(char *const captures[], int count, const char *out)
{
	char *argv[8];
	int argc = 0;

	argv[argc++] = OPTRACE;
	argv[argc++] = "export";
	argv[argc++] = "--legion";
	argv[argc++] = "-o";
	argv[argc++] = (char *)out;
	for (int i = 0; i < count; i++)
		argv[argc++] = captures[i];
	argv[argc] = NULL;
	run_ok(argv);
}

/* Two captures of processes whose tasks came in another order: one id per name for the job. */
START_TEST(test_job_of_two_captures)
{
	static const char *const stats[] = { "--workload", "stats", NULL };
	static const char *const jacobi[] = { "--workload", "all", NULL };
	char *captures[] = { test_path("a.capture"), test_path("b.capture") };
	char *truth = test_path("truth.txt"), *out = test_path("job");
	struct counts expected = { 0 };

	NEED_BPF();
	record_demo(stats, captures[0], truth);
	record_demo(jacobi, captures[1], truth);
	export_job(captures, 2, out);
	report_invocations(captures, 2, &expected);
	check_job(out, 2, &expected);
	counts_free(&expected);
	free(captures[0]);
	free(captures[1]);
	free(truth);
	free(out);
}
END_TEST

/* One capture of `record -p A -p B`. */
START_TEST(test_job_of_live_processes)
{
	char *capture = test_path("live.capture"), *out = test_path("job"), a_text[16], b_text[16];
	char *record[] = { OPTRACE, "record", "-q",   "-d", "2",    "-o",
			   capture, "-p",     a_text, "-p", b_text, NULL };
	struct counts expected = { 0 };
	pid_t a, b;

	NEED_BPF();
	/* Ranks 1 and 0 of 2, announced before the recording attached. */
	setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
	setenv("OMPI_COMM_WORLD_RANK", "1", 1);
	a = start_forever("stats");
	setenv("OMPI_COMM_WORLD_RANK", "0", 1);
	b = start_forever("all");
	unsetenv("OMPI_COMM_WORLD_RANK");
	unsetenv("OMPI_COMM_WORLD_SIZE");
	snprintf(a_text, sizeof(a_text), "%d", a);
	snprintf(b_text, sizeof(b_text), "%d", b);
	ck_assert_int_eq(run_command(record, NULL, NULL, 60), 0);
	reap_within(a, SIGTERM, 10);
	reap_within(b, SIGTERM, 10);
	export_job(&capture, 1, out);
	report_invocations(&capture, 1, &expected);
	check_job(out, 2, &expected);
	/* The ranks are kept: each process's file is its rank's. */
	for (int rank = 0; rank < 2; rank++) {
		char path[4096], label[64];
		struct legion_summary s;

		snprintf(path, sizeof(path), "%s/prof_%d.gz", out, rank);
		read_summary(path, 1008, &s);
		ck_assert_uint_eq(s.node_id, (unsigned)rank);
		ck_assert_uint_eq(s.num_nodes, 2);
		ck_assert_uint_eq(s.process_id, (unsigned)(rank ? a : b));
		legion_summary_free(&s);
		snprintf(label, sizeof(label), "%d (optrace-demo) rank %d of 2", rank ? a : b,
			 rank);
		report_says(capture, label);
	}
	counts_free(&expected);
	free(capture);
	free(out);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("export");
	TCase *demo = tcase_create("demo"), *hand = tcase_create("hand-made");

	/* libgomp's idle threads spin otherwise: slow on a machine with few cores */
	setenv("OMP_WAIT_POLICY", "passive", 0);
	tcase_set_timeout(demo, 240);
	tcase_add_checked_fixture(demo, test_dir_setup, test_dir_teardown);
	tcase_add_loop_test(demo, test_each_workload, 0, 3);
	tcase_add_test(demo, test_mixed_threads_openmp);
	tcase_add_test(demo, test_job_of_two_captures);
	tcase_add_test(demo, test_job_of_live_processes);
	tcase_add_test(demo, test_two_processes);
	suite_add_tcase(suite, demo);
	tcase_set_timeout(hand, 60);
	tcase_add_checked_fixture(hand, test_dir_setup, test_dir_teardown);
	tcase_add_test(hand, test_hostile_capture);
	tcase_add_test(hand, test_ranks_name_files);
	suite_add_tcase(suite, hand);

	return run_suite(suite);
}
