// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `optrace stat`'s report of a snapshot, as text (JSON: stat_json.c). Every
 * table groups its rows by the operation the user called, helpers rolled
 * in; --show-helpers splits them by helper, named "ROOT via HELPER".
 */
#define _GNU_SOURCE /* qsort_r */
#include <optrace/abi.h>
#include <stdlib.h>
#include <string.h>

#include "output/json.h"
#include "output/stat_gpu.h"
#include "output/stat_json.h"
#include "output/stat_print.h"
#include "output/text_table.h"

#define MAX_PROCESSES 1024

/* A duration as "61.0us", "~61.0us" (within 0.4%) or "<=65.5us" (a log2 bound). */
static const char *stat_print_duration(struct stat_quantile q, char *buffer, size_t size)
{
	static const struct {
		double scale;
		const char *unit;
	} units[] = { { 1e9, "s" }, { 1e6, "ms" }, { 1e3, "us" }, { 1, "ns" } };
	const char *prefix = q.precision == STAT_AT_MOST  ? "<="
			     : q.precision == STAT_WITHIN ? "~"
							  : "";
	size_t u = 0;
	double value;

	while (u + 1 < sizeof(units) / sizeof(units[0]) && q.ns < units[u].scale)
		u++;
	value = q.ns / units[u].scale;
	if (units[u].scale == 1 || value >= 100)
		snprintf(buffer, size, "%s%.0f%s", prefix, value, units[u].unit);
	else
		snprintf(buffer, size, "%s%.*f%s", prefix, value >= 10 ? 1 : 2, value,
			 units[u].unit);
	return buffer;
}

/* "ROOT", or "ROOT via HELPER" (helper not 0); not yet made printable. */
static const char *stat_print_label(const struct stat_snapshot *snapshot, __u32 tgid, __u64 root,
				    __u64 helper, char *buffer, size_t size)
{
	char name[2][STAT_TEXT_MAX];

	stat_string(snapshot, tgid, root, name[0], sizeof(name[0]));
	if (!helper) {
		snprintf(buffer, size, "%s", name[0]);
		return buffer;
	}
	if (helper == STAT_OP_NOT_SEEN) {
		/* stat counted the run before its launch: launched by it or a helper. */
		snprintf(buffer, size, "%s (launch not seen)", name[0]);
		return buffer;
	}
	stat_string(snapshot, tgid, helper, name[1], sizeof(name[1]));
	snprintf(buffer, size, "%s via %s", name[0], name[1]);
	return buffer;
}

/* "mode:reason=calls, ...": the reason only where it adds to the mode. */
static void format_modes(const struct op_summary *s, char *buffer, size_t size)
{
	size_t used = 0;

	buffer[0] = '\0';
	for (int m = 0; m <= OPTRACE_MODE__COUNT; m++) {
		for (int r = 0; r <= OPTRACE_MODE_REASON__COUNT; r++) {
			unsigned long long calls = s->reasons[m][r];
			const char *sep = used ? ", " : "";

			if (!calls || used >= size)
				continue;
			if (m == OPTRACE_MODE__COUNT)
				used += (size_t)snprintf(buffer + used, size - used,
							 "%snot announced=%llu", sep, calls);
			else if (r == OPTRACE_MODE_REASON_NONE ||
				 (m == OPTRACE_MODE_FALLBACK && r == OPTRACE_MODE_REASON_FALLBACK))
				used += (size_t)snprintf(buffer + used, size - used, "%s%s=%llu",
							 sep, optrace_mode_name(m), calls);
			else
				used += (size_t)snprintf(buffer + used, size - used, "%s%s:%s=%llu",
							 sep, optrace_mode_name(m),
							 optrace_mode_reason_name(r), calls);
		}
	}
}

/* The operation table's columns: GPU(ms) only where there is a GPU. */
enum op_column {
	OP_NAME,
	OP_CALLS,
	OP_CALL,
	OP_TASK,
	OP_GPU,
	OP_P50,
	OP_P99,
	OP_SELF,
	OP_EAGER,
	OP_DEFERRED,
	OP_MIXED,
	OP_FALLBACK,
	OP_ERRORS,
	OP_MODES,
	OP__COUNT
};

/* Dropped at a short width: the mode split first (MODE:REASON says it), then the detail. */
static const struct text_column op_columns[OP__COUNT] = {
	[OP_NAME] = { "OPERATION", 0, true, true, false },
	[OP_CALLS] = { "CALLS", 0, false, false, false },
	[OP_CALL] = { "CALL(ms)", 0, false, false, false },
	[OP_TASK] = { "TASK(ms)", 0, false, false, false },
	[OP_GPU] = { "GPU(ms)", 2, false, false, false },
	[OP_P50] = { "P50", 6, false, false, false },
	[OP_P99] = { "P99", 4, false, false, false },
	[OP_SELF] = { "SELF(ms)", 5, false, false, false },
	[OP_EAGER] = { "EAGER", 8, false, false, false },
	[OP_DEFERRED] = { "DEFERRED", 8, false, false, false },
	[OP_MIXED] = { "MIXED", 9, false, false, false },
	[OP_FALLBACK] = { "FALLBACK", 3, false, false, false },
	[OP_ERRORS] = { "ERRORS", 3, false, false, false },
	[OP_MODES] = { "MODE:REASON=CALLS", 0, true, false, true },
};

static void add_op_row(struct text_table *table, const struct stat_snapshot *snapshot, __u32 tgid,
		       struct op_summary *s, int indent)
{
	char name[STAT_TEXT_MAX], safe[STAT_TEXT_MAX], column[STAT_TEXT_MAX + 2 * STAT_STACK_MAX];
	char modes[STAT_TEXT_MAX + 256], task[32] = "-", gpu[32] = "", p50[32], p99[32];
	char numbers[OP__COUNT][32];
	const char *cells[OP__COUNT];
	size_t n = 0;

	stat_string(snapshot, tgid, s->name, name, sizeof(name));
	snprintf(column, sizeof(column), "%*s%s", indent * 2, "",
		 printable_text(name, safe, sizeof(safe)));
	format_modes(s, modes, sizeof(modes));
	if (s->callsite) {
		char site[STAT_TEXT_MAX], safe_site[STAT_TEXT_MAX];
		size_t used = strlen(modes);

		stat_string(snapshot, tgid, s->callsite, site, sizeof(site));
		snprintf(modes + used, sizeof(modes) - used, "  @ %s",
			 printable_text(site, safe_site, sizeof(safe_site)));
	}
	if (s->work_known)
		snprintf(task, sizeof(task), "%.3f", s->work.task_ns / 1e6);
	snprintf(gpu, sizeof(gpu), "%.3f", s->work.gpu_ns / 1e6);
	stat_print_duration(stat_quantile(&s->latency, s->durations, 0.50), p50, sizeof(p50));
	stat_print_duration(stat_quantile(&s->latency, s->durations, 0.99), p99, sizeof(p99));
	snprintf(numbers[OP_CALLS], 32, "%llu", (unsigned long long)s->latency.count);
	snprintf(numbers[OP_CALL], 32, "%.3f", s->latency.total_ns / 1e6);
	snprintf(numbers[OP_SELF], 32, "%.3f", s->latency.self_ns / 1e6);
	snprintf(numbers[OP_EAGER], 32, "%llu", (unsigned long long)s->modes[OPTRACE_MODE_EAGER]);
	snprintf(numbers[OP_DEFERRED], 32, "%llu",
		 (unsigned long long)s->modes[OPTRACE_MODE_DEFERRED]);
	snprintf(numbers[OP_MIXED], 32, "%llu", (unsigned long long)s->modes[OPTRACE_MODE_MIXED]);
	snprintf(numbers[OP_FALLBACK], 32, "%llu",
		 (unsigned long long)s->modes[OPTRACE_MODE_FALLBACK]);
	snprintf(numbers[OP_ERRORS], 32, "%llu", (unsigned long long)s->errors);
	for (int c = 0; c < OP__COUNT; c++) {
		const char *text = numbers[c];

		if (c == OP_GPU && !snapshot->has_gpu)
			continue;
		text = c == OP_NAME    ? column
		       : c == OP_TASK  ? task
		       : c == OP_GPU   ? gpu
		       : c == OP_P50   ? p50
		       : c == OP_P99   ? p99
		       : c == OP_MODES ? modes
				       : text;
		cells[n++] = text;
	}
	text_table_add(table, cells);
}

/* The helpers called under parent, within the tree of the root operation. */
static void add_helpers(struct text_table *table, const struct stat_snapshot *snapshot, __u32 tgid,
			struct op_summary *summaries, size_t count, const struct op_summary *parent,
			__u64 root_name, int indent)
{
	if (indent > STAT_STACK_MAX)
		return;
	for (size_t i = 0; i < count; i++) {
		struct op_summary *s = &summaries[i];

		if (!stat_summary_is_child(s, parent) || s->root_name != root_name)
			continue;
		add_op_row(table, snapshot, tgid, s, indent);
		add_helpers(table, snapshot, tgid, summaries, count, s, root_name, indent + 1);
	}
}

const char *stat_sort_name(enum stat_sort sort)
{
	static const char *const names[STAT_SORT__COUNT] = { "time",	  "calls",  "p99",
							     "fallbacks", "errors", "name" };

	return sort < STAT_SORT__COUNT ? names[sort] : "time";
}

/* What compare_by_sort() sorts by, and where the names are. */
struct sorting {
	const struct stat_snapshot *snapshot;
	__u32 tgid;
	enum stat_sort by;
};

/* The key asked for, largest first (names A to Z), then what the user waits for. */
static int compare_by_sort(const void *a, const void *b, void *ctx)
{
	const struct sorting *sorting = ctx;
	const struct op_summary *x = a, *y = b;
	char nx[STAT_TEXT_MAX], ny[STAT_TEXT_MAX];
	double kx = 0, ky = 0;
	int order;

	switch (sorting->by) {
	case STAT_SORT_CALLS:
		kx = (double)x->latency.count, ky = (double)y->latency.count;
		break;
	case STAT_SORT_P99:
		kx = stat_quantile(&x->latency, x->durations, 0.99).ns;
		ky = stat_quantile(&y->latency, y->durations, 0.99).ns;
		break;
	case STAT_SORT_FALLBACKS:
		kx = (double)x->modes[OPTRACE_MODE_FALLBACK];
		ky = (double)y->modes[OPTRACE_MODE_FALLBACK];
		break;
	case STAT_SORT_ERRORS:
		kx = (double)x->errors, ky = (double)y->errors;
		break;
	case STAT_SORT_NAME:
		order = strcmp(
			stat_string(sorting->snapshot, sorting->tgid, x->name, nx, sizeof(nx)),
			stat_string(sorting->snapshot, sorting->tgid, y->name, ny, sizeof(ny)));
		if (order)
			return order;
		break;
	default:
		break;
	}
	if (kx != ky)
		return kx > ky ? -1 : 1;
	return stat_compare_summaries(a, b);
}

/* How exact a table's percentiles are, for its legend. */
static const char *precision_words(const struct stat_snapshot *snapshot)
{
	return snapshot->work_per_op ? "exact (~X: within 0.4%)"
				     : "<=X: at most X (the kernel keeps log2 buckets)";
}

static void print_ops_text(FILE *out, const struct stat_snapshot *snapshot, __u32 tgid,
			   const struct stat_print_options *options)
{
	struct op_summary *summaries;
	size_t count = stat_summarize_ops(snapshot, tgid, &summaries);
	struct text_column columns[OP__COUNT];
	struct text_table table;
	char legend[1024], line[160];
	size_t column_count = 0;
	__u64 orphans = 0;

	for (int c = 0; c < OP__COUNT; c++) {
		if (c != OP_GPU || snapshot->has_gpu)
			columns[column_count++] = op_columns[c];
	}
	text_table_init(&table, columns, column_count);
	snprintf(legend, sizeof(legend),
		 "CALL: time in the calls, on the calling thread; TASK: time their task points "
		 "ran, on all workers;%s\neach with their helpers' (shown indented with "
		 "--show-helpers); most first by the larger;\nSELF: CALL less nested operations; "
		 "P50, P99: of one call's CALL time, %s%s",
		 snapshot->has_gpu ? "\nGPU: device time of the kernels, copies and memsets they "
				     "launched;"
				   : "",
		 precision_words(snapshot),
		 snapshot->work_per_op ? "" : "; TASK -: not known to stat for a helper");
	if (options->sort != STAT_SORT_COST && count) {
		struct sorting sorting = { snapshot, tgid, options->sort };

		qsort_r(summaries, count, sizeof(*summaries), compare_by_sort, &sorting);
	}
	for (size_t i = 0; i < count; i++) {
		if (summaries[i].depth != 0) {
			if (!summaries[i].parent_name)
				orphans += summaries[i].latency.count;
			continue;
		}
		add_op_row(&table, snapshot, tgid, &summaries[i], 0);
		if (options->show_helpers)
			add_helpers(&table, snapshot, tgid, summaries, count, &summaries[i],
				    summaries[i].name, 1);
	}
	text_table_print(out, &table, options->width, options->no_legends ? NULL : legend);
	text_table_free(&table);
	if (orphans) {
		snprintf(line, sizeof(line),
			 "(%llu helper calls of operations that began before optrace attached "
			 "are not shown)",
			 (unsigned long long)orphans);
		text_wrap(out, "", "", line, options->width);
	}
	stat_summaries_free(summaries, count);
}

/* A table after the operations', a blank line before it; its legend unless top's. */
static void print_group_table(FILE *out, const struct text_table *table,
			      const struct stat_print_options *options, const char *legend)
{
	fputc('\n', out);
	text_table_print(out, table, options->width, options->no_legends ? NULL : legend);
}

static void print_fallbacks_text(FILE *out, const struct stat_snapshot *snapshot, __u32 tgid,
				 const struct stat_print_options *options)
{
	static const struct text_column columns[] = {
		{ "FALLBACK", 0, true, true, false },
		{ "REASON", 0, true, false, false },
		{ "COUNT", 0, false, false, false },
		{ "DETAIL", 0, true, false, true },
	};
	char label[2 * STAT_TEXT_MAX + 8], detail[STAT_TEXT_MAX], safe[2][2 * STAT_TEXT_MAX + 8];
	char count_text[32];
	struct stat_group *groups;
	size_t count = stat_group(snapshot, tgid, STAT_FALLBACKS, true, &groups);
	struct text_table table;

	text_table_init(&table, columns, 4);
	for (size_t i = 0; i < count; i++) {
		const struct stat_group *g = &groups[i];
		const char *cells[4];

		/* Under the operation the user called; the one that fell back named. */
		if (g->root_name)
			stat_print_label(snapshot, tgid, g->root_name, g->name, label,
					 sizeof(label));
		else
			stat_string(snapshot, tgid, g->name, label, sizeof(label));
		snprintf(count_text, sizeof(count_text), "%llu", (unsigned long long)g->count);
		cells[0] = printable_text(label, safe[0], sizeof(safe[0]));
		cells[1] = optrace_fallback_reason_name((int)g->kind);
		cells[2] = count_text;
		cells[3] = printable_text(
			stat_string(snapshot, tgid, g->detail, detail, sizeof(detail)), safe[1],
			sizeof(safe[1]));
		text_table_add(&table, cells);
	}
	if (count)
		print_group_table(
			out, &table, options,
			"calls that ran a reference path, per operation (ROOT via HELPER: "
			"a helper it called fell back), reason and detail");
	text_table_free(&table);
	stat_groups_free(groups, count);
}

/* RUNS or COUNT, TOTAL(ms), P50 and P99 of a group's latency, into cells[0..3]. */
static void latency_cells(const struct stat_group *g, char text[4][32], const char *cells[4])
{
	snprintf(text[0], 32, "%llu", (unsigned long long)g->latency.count);
	snprintf(text[1], 32, "%.3f", g->latency.total_ns / 1e6);
	stat_print_duration(stat_quantile(&g->latency, g->durations, 0.50), text[2], 32);
	stat_print_duration(stat_quantile(&g->latency, g->durations, 0.99), text[3], 32);
	for (int i = 0; i < 4; i++)
		cells[i] = text[i];
}

static void print_tasks_text(FILE *out, const struct stat_snapshot *snapshot, __u32 tgid,
			     const struct stat_print_options *options)
{
	static const struct text_column columns[] = {
		{ "TASK", 0, true, false, false },	 { "VARIANT", 0, true, false, false },
		{ "OPERATION", 0, true, true, false },	 { "RUNS", 0, false, false, false },
		{ "TOTAL(ms)", 0, false, false, false }, { "P50", 6, false, false, false },
		{ "P99", 4, false, false, false },
	};
	char name[STAT_TEXT_MAX], label[2 * STAT_TEXT_MAX + 8], numbers[4][32];
	char safe[2][2 * STAT_TEXT_MAX + 8], legend[512];
	struct stat_group *groups;
	size_t count = stat_group(snapshot, tgid, STAT_TASKS, options->show_helpers, &groups);
	struct text_table table;

	text_table_init(&table, columns, 7);
	for (size_t i = 0; i < count; i++) {
		struct stat_group *g = &groups[i];
		const char *cells[7];

		stat_print_label(snapshot, tgid, g->root_name, g->op_name, label, sizeof(label));
		cells[0] = printable_text(stat_string(snapshot, tgid, g->name, name, sizeof(name)),
					  safe[0], sizeof(safe[0]));
		cells[1] = optrace_variant_name((int)g->kind);
		cells[2] = printable_text(label, safe[1], sizeof(safe[1]));
		latency_cells(g, numbers, &cells[3]);
		text_table_add(&table, cells);
	}
	if (count) {
		snprintf(legend, sizeof(legend),
			 "RUNS: task points run; TOTAL: their run time on all workers; OPERATION: "
			 "the one the user called%s;\nP50, P99: of one run, %s",
			 options->show_helpers ? " (ROOT via HELPER: launched by a helper)" : "",
			 precision_words(snapshot));
		print_group_table(out, &table, options, legend);
	}
	text_table_free(&table);
	stat_groups_free(groups, count);
}

static void print_waits_text(FILE *out, const struct stat_snapshot *snapshot, __u32 tgid,
			     const struct stat_print_options *options)
{
	static const struct text_column columns[] = {
		{ "WAIT", 0, true, false, false },   { "OPERATION", 0, true, true, false },
		{ "COUNT", 0, false, false, false }, { "TOTAL(ms)", 0, false, false, false },
		{ "P50", 6, false, false, false },   { "P99", 4, false, false, false },
	};
	char label[2 * STAT_TEXT_MAX + 8], safe[2 * STAT_TEXT_MAX + 8], numbers[4][32];
	char legend[512];
	struct stat_group *groups;
	size_t count = stat_group(snapshot, tgid, STAT_WAITS, options->show_helpers, &groups);
	struct text_table table;

	text_table_init(&table, columns, 6);
	for (size_t i = 0; i < count; i++) {
		struct stat_group *g = &groups[i];
		const char *cells[6];

		if (g->root_name || g->op_name)
			stat_print_label(snapshot, tgid, g->root_name, g->op_name, label,
					 sizeof(label));
		else
			snprintf(label, sizeof(label), "(outside operations)");
		cells[0] = optrace_wait_kind_name((int)g->kind);
		cells[1] = printable_text(label, safe, sizeof(safe));
		latency_cells(g, numbers, &cells[2]);
		text_table_add(&table, cells);
	}
	if (count) {
		snprintf(legend, sizeof(legend),
			 "the calling thread blocked, per kind and the operation the user called "
			 "that was open%s;\n(outside operations): between calls, as when reading "
			 "a result (what it waited for is TASK time above);\nP50, P99: of one "
			 "wait, %s",
			 options->show_helpers ? " (ROOT via HELPER: in a helper)" : "",
			 precision_words(snapshot));
		print_group_table(out, &table, options, legend);
	}
	text_table_free(&table);
	stat_groups_free(groups, count);
}

/* A process past its share of the kernel's tables: said before its tables, which lack rows. */
static void print_refused_text(FILE *out, const struct stat_snapshot *snapshot, __u32 tgid,
			       int width)
{
	const struct process_row *process = stat_process(snapshot, tgid);

	if (!process || !process->info.refused)
		return;
	text_printf(out, width,
		    "LOST: %llu rows and names past this process's share of the kernel's tables "
		    "(%d of each table's 16384): its newest operations, tasks and names are "
		    "not all counted",
		    (unsigned long long)process->info.refused, STAT_ROWS_PER_PROCESS);
	fputc('\n', out);
}

static void print_losses_text(FILE *wrapped, const struct stat_snapshot *snapshot, int width)
{
	char *text = NULL;
	size_t length = 0;
	FILE *out = open_memstream(&text, &length);
	bool any = false;

	if (!out)
		return;
	fprintf(out, "lost:");
	for (int i = 0; i < STAT_LOSS__COUNT; i++) {
		if (!snapshot->losses[i])
			continue;
		fprintf(out, " %s=%llu", stat_loss_name(i),
			(unsigned long long)snapshot->losses[i]);
		any = true;
	}
	if (stat_rows_refused(snapshot)) {
		/* Each process's own is said above its tables. */
		fprintf(out, " rows_refused=%llu", (unsigned long long)stat_rows_refused(snapshot));
		any = true;
	}
	for (size_t i = 0; i < snapshot->more_loss_count; i++) {
		char safe[STAT_TEXT_MAX];

		if (!snapshot->more_losses[i].value)
			continue;
		/* Named by the file: not trusted. */
		fprintf(out, " %s=%llu",
			printable_text(snapshot->more_losses[i].name, safe, sizeof(safe)),
			(unsigned long long)snapshot->more_losses[i].value);
		any = true;
	}
	if (snapshot->lost_note && snapshot->lost_note[0]) {
		char safe[1024];

		fprintf(out, "%s %s", any ? ";" : "",
			printable_text(snapshot->lost_note, safe, sizeof(safe)));
		any = true;
	}
	fprintf(out, "%s", any ? "" : " nothing");
	fclose(out);
	/* One line a loss is too many; wrapped, it fits. */
	fputc('\n', wrapped);
	text_wrap(wrapped, "", "  ", text, width);
	free(text);
}

/* " (name) rank R of N" of process tgid, as far as known; made printable. */
static const char *process_name(const struct stat_snapshot *snapshot, __u32 tgid)
{
	const struct process_row *process = stat_process(snapshot, tgid);
	static char buffer[96];
	char comm[17], safe[64];
	int used;

	if (!process)
		return "";
	memcpy(comm, process->info.comm, 16);
	comm[16] = '\0';
	used = snprintf(buffer, sizeof(buffer), " (%s)", printable_text(comm, safe, sizeof(safe)));
	if (process->rank_count > 0)
		snprintf(buffer + used, sizeof(buffer) - (size_t)used, " rank %d of %d",
			 process->rank, process->rank_count);
	return buffer;
}

void stat_print(FILE *out, struct stat_snapshot *snapshot, const struct stat_print_options *options)
{
	__u32 tgids[MAX_PROCESSES];
	size_t count = stat_processes(snapshot, tgids, MAX_PROCESSES);

	if (options->json) {
		stat_json_print(out, snapshot, tgids, count, options);
		return;
	}
	if (!count)
		fprintf(out, "no operations traced\n");
	for (size_t i = 0, printed = 0; i < count; i++) {
		if (options->only_tgid && tgids[i] != options->only_tgid)
			continue;
		fprintf(out, "%s== process %u%s\n", printed++ ? "\n" : "", tgids[i],
			process_name(snapshot, tgids[i]));
		print_refused_text(out, snapshot, tgids[i], options->width);
		print_ops_text(out, snapshot, tgids[i], options);
		print_fallbacks_text(out, snapshot, tgids[i], options);
		print_tasks_text(out, snapshot, tgids[i], options);
		print_waits_text(out, snapshot, tgids[i], options);
		stat_gpu_print(out, snapshot, tgids[i], options);
	}
	print_losses_text(out, snapshot, options->width);
}
