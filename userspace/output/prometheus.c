// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stat's aggregates as Prometheus metrics, in the text exposition format
 * 0.0.4 (https://prometheus.io/docs/instrumenting/exposition_formats/).
 * Each kind of row becomes a table of series, one per label text: rows
 * whose labels print alike are summed, so that no series is written twice.
 */
#include <errno.h>
#include <optrace/abi.h>
#include <stdlib.h>
#include <string.h>

#include "common/idmap.h"
#include "common/utf8.h"
#include "model/gpu_aggregates.h"
#include "output/prometheus.h"

#define NS_PER_S 1000000000ULL

/* A label set and the values of the metrics that share it. */
struct series {
	char *labels; /* owned: name="value",... */
	__u64 values[3];
};

struct table {
	struct series *items;
	size_t count, capacity;
};

/* Text that grows; failed once memory ran out. */
struct text {
	char *data;
	size_t length, capacity;
	bool failed;
};

struct render {
	const struct stat_snapshot *snapshot;
	struct idmap processes; /* (tgid, 0) -> its process row */
	struct idmap strings;	/* (tgid, address) -> its string row */
	struct text labels;	/* the series being built */
	bool failed;
};

static void text_add(struct text *text, const char *bytes, size_t length)
{
	if (text->failed)
		return;
	if (text->length + length + 1 > text->capacity) {
		size_t capacity = text->capacity ? text->capacity : 256;
		char *grown;

		while (capacity < text->length + length + 1)
			capacity *= 2;
		grown = realloc(text->data, capacity);
		if (!grown) {
			text->failed = true;
			return;
		}
		text->data = grown;
		text->capacity = capacity;
	}
	memcpy(text->data + text->length, bytes, length);
	text->length += length;
	text->data[text->length] = '\0';
}

/*
 * A label value: valid UTF-8, with backslash, double quote and newline
 * escaped, and other controls (utf8_is_control()) as U+FFFD.
 */
static void add_value(struct text *text, const char *value)
{
	const unsigned char *s = (const unsigned char *)value;

	while (*s) {
		unsigned int length = utf8_sequence_length(s);

		if (!length) {
			text_add(text, UTF8_REPLACEMENT, UTF8_REPLACEMENT_LEN);
			s++;
			continue;
		}
		if (*s != '\n' && utf8_is_control(s, length))
			/* Nothing a scraper's terminal would act on (ESC, C1, bidi). */
			text_add(text, UTF8_REPLACEMENT, UTF8_REPLACEMENT_LEN);
		else if (*s == '\\')
			text_add(text, "\\\\", 2);
		else if (*s == '"')
			text_add(text, "\\\"", 2);
		else if (*s == '\n')
			text_add(text, "\\n", 2);
		else
			text_add(text, (const char *)s, length);
		s += length;
	}
}

static void add_label(struct text *text, const char *name, const char *value)
{
	if (text->length)
		text_add(text, ",", 1);
	text_add(text, name, strlen(name));
	text_add(text, "=\"", 2);
	add_value(text, value);
	text_add(text, "\"", 1);
}

static void index_rows(struct render *r)
{
	const struct stat_snapshot *s = r->snapshot;

	for (size_t i = 0; i < s->process_count && !r->failed; i++)
		r->failed =
			idmap_put(&r->processes, s->processes[i].tgid, 0, &s->processes[i]) != 0;
	for (size_t i = 0; i < s->string_count && !r->failed; i++)
		r->failed = idmap_put(&r->strings, s->strings[i].key.tgid,
				      s->strings[i].key.address, &s->strings[i]) != 0;
}

/*
 * The name at address as report prints it (stat_string), found through the
 * index: stat_string is handed the one row, not the whole list to scan.
 */
static const char *name_of(struct render *r, __u32 tgid, __u64 address, char *buffer)
{
	struct string_row *row = address ? idmap_get(&r->strings, tgid, address) : NULL;
	struct stat_snapshot one = { .strings = row, .string_count = row ? 1 : 0 };

	return stat_string(&one, tgid, address, buffer, STAT_TEXT_MAX);
}

/* A new series of process tgid: its command, pid and rank ("" when not known). */
static void begin_series(struct render *r, __u32 tgid)
{
	const struct process_row *process = idmap_get(&r->processes, tgid, 0);
	char command[sizeof(process->info.comm) + 1] = "", pid[16], rank[16] = "";

	if (process) {
		memcpy(command, process->info.comm, sizeof(process->info.comm));
		if (process->rank_count > 0)
			snprintf(rank, sizeof(rank), "%d", process->rank);
	}
	snprintf(pid, sizeof(pid), "%u", tgid);
	r->labels.length = 0;
	add_label(&r->labels, "command", command);
	add_label(&r->labels, "pid", pid);
	add_label(&r->labels, "rank", rank);
}

/* The series begun, with its values, into table. */
static void end_series(struct render *r, struct table *table, __u64 a, __u64 b, __u64 c)
{
	struct series *series;

	r->failed = r->failed || r->labels.failed;
	if (r->failed)
		return;
	if (table->count == table->capacity) {
		size_t capacity = table->capacity ? table->capacity * 2 : 64;
		struct series *grown = realloc(table->items, capacity * sizeof(*grown));

		if (!grown) {
			r->failed = true;
			return;
		}
		table->items = grown;
		table->capacity = capacity;
	}
	series = &table->items[table->count];
	series->labels = strdup(r->labels.data);
	if (!series->labels) {
		r->failed = true;
		return;
	}
	series->values[0] = a;
	series->values[1] = b;
	series->values[2] = c;
	table->count++;
}

static int compare_series(const void *a, const void *b)
{
	return strcmp(((const struct series *)a)->labels, ((const struct series *)b)->labels);
}

/* Sorted by labels, and rows of one label set summed into one series. */
static void merge(struct table *table)
{
	size_t kept = 0;

	if (!table->count)
		return;
	qsort(table->items, table->count, sizeof(*table->items), compare_series);
	for (size_t i = 1; i < table->count; i++) {
		struct series *last = &table->items[kept], *next = &table->items[i];

		if (strcmp(last->labels, next->labels)) {
			table->items[++kept] = *next;
			continue;
		}
		for (int v = 0; v < 3; v++)
			last->values[v] += next->values[v];
		free(next->labels);
	}
	table->count = kept + 1;
}

static void table_free(struct table *table)
{
	for (size_t i = 0; i < table->count; i++)
		free(table->items[i].labels);
	free(table->items);
}

static void collect_ops(struct render *r, struct table *table)
{
	char name[STAT_TEXT_MAX], root[STAT_TEXT_MAX], depth[16];

	for (size_t i = 0; i < r->snapshot->op_count; i++) {
		const struct op_row *row = &r->snapshot->ops[i];
		const struct op_key *key = &row->key;

		begin_series(r, key->tgid);
		name_of(r, key->tgid, key->name, name);
		add_label(&r->labels, "op", name);
		/* The operation the user called: itself at depth 0. */
		add_label(&r->labels, "root",
			  key->depth ? name_of(r, key->tgid, key->root_name, root) : name);
		snprintf(depth, sizeof(depth), "%u", key->depth);
		add_label(&r->labels, "depth", depth);
		add_label(&r->labels, "mode",
			  key->mode == STAT_MODE_UNSET ? "unset" : optrace_mode_name(key->mode));
		add_label(&r->labels, "mode_reason", optrace_mode_reason_name(key->mode_reason));
		add_label(&r->labels, "status", optrace_status_name(key->status));
		end_series(r, table, row->latency.count, row->latency.total_ns,
			   row->latency.self_ns);
	}
}

static void collect_fallbacks(struct render *r, struct table *table)
{
	char name[STAT_TEXT_MAX];

	for (size_t i = 0; i < r->snapshot->fallback_count; i++) {
		const struct fallback_row *row = &r->snapshot->fallbacks[i];

		begin_series(r, row->key.tgid);
		add_label(&r->labels, "op", name_of(r, row->key.tgid, row->key.name, name));
		add_label(&r->labels, "reason", optrace_fallback_reason_name((int)row->key.reason));
		end_series(r, table, row->count, 0, 0);
	}
}

static void collect_tasks(struct render *r, struct table *table)
{
	char name[STAT_TEXT_MAX];

	for (size_t i = 0; i < r->snapshot->task_count; i++) {
		const struct task_row *row = &r->snapshot->tasks[i];

		begin_series(r, row->key.tgid);
		add_label(&r->labels, "task", name_of(r, row->key.tgid, row->key.name, name));
		add_label(&r->labels, "variant", optrace_variant_name((int)row->key.variant));
		add_label(&r->labels, "root", name_of(r, row->key.tgid, row->key.root_name, name));
		end_series(r, table, row->latency.count, row->latency.total_ns, 0);
	}
}

static void collect_launches(struct render *r, struct table *table)
{
	char name[STAT_TEXT_MAX];

	for (size_t i = 0; i < r->snapshot->launch_count; i++) {
		const struct launch_row *row = &r->snapshot->launches[i];

		begin_series(r, row->key.tgid);
		add_label(&r->labels, "task", name_of(r, row->key.tgid, row->key.name, name));
		add_label(&r->labels, "root", name_of(r, row->key.tgid, row->key.root_name, name));
		end_series(r, table, row->stats.count, row->stats.points, 0);
	}
}

static void collect_waits(struct render *r, struct table *table)
{
	char name[STAT_TEXT_MAX];

	for (size_t i = 0; i < r->snapshot->wait_count; i++) {
		const struct wait_row *row = &r->snapshot->waits[i];

		begin_series(r, row->key.tgid);
		add_label(&r->labels, "kind", optrace_wait_kind_name((int)row->key.kind));
		/* Outside any operation: no root. */
		add_label(&r->labels, "root",
			  row->key.root_name ? name_of(r, row->key.tgid, row->key.root_name, name)
					     : "");
		end_series(r, table, row->latency.count, row->latency.total_ns, 0);
	}
}

/* --cuda: two tables, counts (kernels, copies, memsets) and amounts (ns, bytes). */
static void collect_gpu(struct render *r, struct table *counts, struct table *amounts,
			struct table *drops)
{
	char name[STAT_TEXT_MAX];

	for (size_t i = 0; i < r->snapshot->gpu_count; i++) {
		const struct gpu_row *row = &r->snapshot->gpus[i];
		const char *root, *variant;

		/* Waiting for its launch, it may still move to its operation: a
		 * counter must not go down. Served once attributed. */
		if (!row->key.root_name && row->key.op_name == STAT_GPU_NOT_LAUNCHED)
			continue;
		root = row->key.root_name ? name_of(r, row->key.tgid, row->key.root_name, name)
					  : "(launched outside any operation)";
		variant = row->key.variant == STAT_GPU_NO_VARIANT
				  ? "-"
				  : optrace_variant_name((int)row->key.variant);
		for (int table = 0; table < 2; table++) {
			begin_series(r, row->key.tgid);
			add_label(&r->labels, "root", root);
			add_label(&r->labels, "variant", variant);
			if (table == 0)
				end_series(r, counts, row->totals.kernels, row->totals.copies,
					   row->totals.memsets);
			else
				end_series(r, amounts, row->totals.gpu_ns, row->totals.bytes, 0);
		}
	}
	for (size_t i = 0; i < r->snapshot->gpu_drop_count; i++) {
		const struct gpu_drop_row *row = &r->snapshot->gpu_drops[i];
		const char *source = stat_gpu_drop_name(row->key.source);

		if (!source)
			continue;
		begin_series(r, row->key.tgid);
		add_label(&r->labels, "source", source);
		end_series(r, drops, row->count, 0, 0);
	}
}

static void write_header(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void write_counter(FILE *out, const char *name, const char *help, const struct table *table,
			  int value, bool seconds);

static void write_gpu(FILE *out, const struct table *counts, const struct table *amounts,
		      const struct table *drops)
{
	write_counter(out, "optrace_gpu_kernels_total",
		      "GPU kernels, by process, root (the operation the user called) and the "
		      "variant of the task point that launched (-: the operation's own thread).",
		      counts, 0, false);
	write_counter(out, "optrace_gpu_copies_total", "GPU memory copies, as kernels.", counts, 1,
		      false);
	write_counter(out, "optrace_gpu_memsets_total", "GPU memory sets, as kernels.", counts, 2,
		      false);
	write_counter(out, "optrace_gpu_seconds_total", "Device time of those activities.", amounts,
		      0, true);
	write_counter(out, "optrace_gpu_bytes_total", "Bytes those copies and sets moved.", amounts,
		      1, false);
	write_counter(out, "optrace_gpu_dropped_total",
		      "GPU records lost, by source (activity_buffer: CUPTI's; api_callback: "
		      "launches not marked; kernel_maps: optrace's; malformed).",
		      drops, 0, false);
}

/* The counter name: values[value] of every series, in seconds if seconds (ns kept). */
static void write_counter(FILE *out, const char *name, const char *help, const struct table *table,
			  int value, bool seconds)
{
	if (!table->count)
		return; /* as a client library writes a labelled family with no series */
	write_header(out, name, "counter", help);
	for (size_t i = 0; i < table->count; i++) {
		unsigned long long v = table->items[i].values[value];

		if (seconds)
			fprintf(out, "%s{%s} %llu.%09llu\n", name, table->items[i].labels,
				v / NS_PER_S, v % NS_PER_S);
		else
			fprintf(out, "%s{%s} %llu\n", name, table->items[i].labels, v);
	}
}

static void write_processes(FILE *out, const struct stat_snapshot *snapshot,
			    const struct prometheus_options *options)
{
	size_t exited = 0;

	for (size_t i = 0; options && options->exited && i < snapshot->process_count; i++) {
		if (options->exited(options->ctx, snapshot->processes[i].tgid))
			exited++;
	}
	write_header(out, "optrace_processes", "gauge",
		     "Traced processes whose series are exported: running, or exited and kept "
		     "for the retention period.");
	fprintf(out, "optrace_processes{state=\"running\"} %zu\n",
		snapshot->process_count - exited);
	fprintf(out, "optrace_processes{state=\"exited\"} %zu\n", exited);
}

/* Per running process: how long its oldest operation and task point have been open. */
static void write_oldest_open(FILE *out, struct render *r, const struct prometheus_options *options)
{
	const struct stat_snapshot *s = r->snapshot;

	if (!options || !options->oldest_open)
		return;
	write_header(out, "optrace_oldest_open_seconds", "gauge",
		     "How long the oldest operation (kind=operation) or task point "
		     "(kind=task_point) open now in the process has been open; 0 when none "
		     "began while optrace was attached. A stuck rank's rises: optrace dump -p "
		     "PID shows its threads.");
	for (size_t i = 0; i < s->process_count && !r->failed; i++) {
		__u32 tgid = s->processes[i].tgid;
		uint64_t ages[2];
		static const char *const kinds[2] = { "operation", "task_point" };

		if ((options->exited && options->exited(options->ctx, tgid)) ||
		    !options->oldest_open(options->ctx, tgid, &ages[0], &ages[1]))
			continue;
		for (int k = 0; k < 2; k++) {
			begin_series(r, tgid);
			add_label(&r->labels, "kind", kinds[k]);
			if (r->labels.failed)
				break;
			fprintf(out, "optrace_oldest_open_seconds{%s} %.6f\n", r->labels.data,
				(double)ages[k] / 1e9);
		}
	}
	r->failed = r->failed || r->labels.failed;
}

/* Per process, 0 included: what its quota of the kernel's tables refused it. */
static void write_refused(FILE *out, struct render *r)
{
	const struct stat_snapshot *s = r->snapshot;

	write_header(out, "optrace_rows_refused_total", "counter",
		     "Rows and names refused to a process past its share of the kernel's tables "
		     "(a quarter of each), by process.");
	for (size_t i = 0; i < s->process_count && !r->failed; i++) {
		begin_series(r, s->processes[i].tgid);
		if (r->labels.failed)
			break;
		fprintf(out, "optrace_rows_refused_total{%s} %llu\n", r->labels.data,
			(unsigned long long)s->processes[i].info.refused);
	}
	r->failed = r->failed || r->labels.failed;
}

/* Every cause, 0 included, so that each counter exists from the start. */
static void write_losses(FILE *out, struct render *r)
{
	const struct stat_snapshot *s = r->snapshot;

	write_header(out, "optrace_events_lost_total", "counter",
		     "Events the kernel side could not count, by cause.");
	for (int i = 0; i < STAT_LOSS__COUNT; i++)
		fprintf(out, "optrace_events_lost_total{cause=\"%s\"} %llu\n", stat_loss_name(i),
			(unsigned long long)s->losses[i]);
	for (size_t i = 0; i < s->more_loss_count; i++) {
		r->labels.length = 0;
		add_label(&r->labels, "cause", s->more_losses[i].name);
		if (r->labels.failed)
			break;
		fprintf(out, "optrace_events_lost_total{%s} %llu\n", r->labels.data,
			(unsigned long long)s->more_losses[i].value);
	}
	r->failed = r->failed || r->labels.failed;
}

int prometheus_write(FILE *out, const struct stat_snapshot *snapshot,
		     const struct prometheus_options *options)
{
	struct render r = { .snapshot = snapshot };
	struct table ops = { 0 }, fallbacks = { 0 }, tasks = { 0 }, launches = { 0 }, waits = { 0 };
	struct table gpu_counts = { 0 }, gpu_amounts = { 0 }, gpu_drops = { 0 };

	index_rows(&r);
	collect_ops(&r, &ops);
	collect_fallbacks(&r, &fallbacks);
	collect_tasks(&r, &tasks);
	collect_launches(&r, &launches);
	collect_waits(&r, &waits);
	collect_gpu(&r, &gpu_counts, &gpu_amounts, &gpu_drops);
	if (!r.failed) {
		merge(&gpu_counts);
		merge(&gpu_amounts);
		merge(&gpu_drops);
		merge(&ops);
		merge(&fallbacks);
		merge(&tasks);
		merge(&launches);
		merge(&waits);
		write_processes(out, snapshot, options);
		write_counter(out, "optrace_operations_total",
			      "Operations that ended, helpers included, by process, operation, "
			      "root (the operation the user called), depth, mode, mode reason "
			      "and status.",
			      &ops, 0, false);
		write_counter(out, "optrace_operation_seconds_total",
			      "Time in those operations; a helper's is also in its callers'.", &ops,
			      1, true);
		write_counter(out, "optrace_operation_self_seconds_total",
			      "Their time less that of the operations they called: summed by "
			      "root, the time of the operations the user called.",
			      &ops, 2, true);
		write_counter(out, "optrace_fallbacks_total",
			      "Reference (fallback) paths run, by process, operation and reason.",
			      &fallbacks, 0, false);
		write_counter(out, "optrace_task_points_total",
			      "Task points run, by process, task, variant (cpu, omp, gpu, "
			      "fallback) and root.",
			      &tasks, 0, false);
		write_counter(out, "optrace_task_seconds_total",
			      "Time those task points ran, summed over the workers.", &tasks, 1,
			      true);
		write_counter(out, "optrace_task_launches_total",
			      "Task launches, by process, task and root.", &launches, 0, false);
		write_counter(out, "optrace_task_launch_points_total",
			      "Points those launches asked for.", &launches, 1, false);
		write_counter(out, "optrace_waits_total",
			      "Times a caller blocked, by process, kind (future, inline_map, "
			      "fence, other) and root (empty: outside any operation).",
			      &waits, 0, false);
		write_counter(out, "optrace_wait_seconds_total", "Time the callers blocked.",
			      &waits, 1, true);
		write_oldest_open(out, &r, options);
		if (snapshot->gpu_traced)
			write_gpu(out, &gpu_counts, &gpu_amounts, &gpu_drops);
		write_refused(out, &r);
		write_losses(out, &r);
	}
	table_free(&gpu_counts);
	table_free(&gpu_amounts);
	table_free(&gpu_drops);
	table_free(&ops);
	table_free(&fallbacks);
	table_free(&tasks);
	table_free(&launches);
	table_free(&waits);
	idmap_free(&r.processes);
	idmap_free(&r.strings);
	free(r.labels.data);
	return r.failed ? -ENOMEM : 0;
}
