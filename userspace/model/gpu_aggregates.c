// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <optrace/abi.h>
#include <optrace/gpu.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "model/gpu_aggregates.h"

#define OUTSIDE_OPS "(launched outside any operation)"
#define NO_LAUNCH "(launch not recorded)"
#define UNRECORDED_OP "(task of an operation not recorded)"

void gpu_report_init(struct gpu_report *report)
{
	memset(report, 0, sizeof(*report));
}

static uint64_t hash_key(const char *name, const char *op, int variant)
{
	static const unsigned char separator = 0xff; /* not in UTF-8 */
	uint64_t h = hash_text(HASH_SEED ^ (uint64_t)(variant + 2), name);

	h = hash_bytes(h, &separator, 1);
	return hash_text(h, op ? op : "");
}

static bool row_is(const struct gpu_report_row *row, const char *name, const char *op, int variant)
{
	return row->variant == variant && !strcmp(row->name, name) &&
	       !strcmp(row->op ? row->op : "", op ? op : "");
}

/*
 * The row for the key, made if new; NULL without memory. Found through a
 * hash of the key, as report.c finds its rows; a collision falls back to a
 * scan.
 */
static struct gpu_report_row *row_for(struct gpu_report_table *table, const char *name,
				      const char *op, int variant)
{
	uint64_t hash = hash_key(name, op, variant);
	uintptr_t found = (uintptr_t)idmap_get(&table->index, 0, hash);
	struct gpu_report_row *row;

	if (found && row_is(&table->rows[found - 1], name, op, variant))
		return &table->rows[found - 1];
	for (size_t i = 0; found && i < table->count; i++) {
		if (row_is(&table->rows[i], name, op, variant))
			return &table->rows[i];
	}
	if (table->count == table->capacity) {
		size_t capacity = table->capacity ? table->capacity * 2 : 32;
		struct gpu_report_row *rows = realloc(table->rows, capacity * sizeof(*rows));

		if (!rows)
			return NULL;
		table->rows = rows;
		table->capacity = capacity;
	}
	row = &table->rows[table->count];
	memset(row, 0, sizeof(*row));
	row->name = strdup(name);
	row->op = op ? strdup(op) : NULL;
	row->variant = variant;
	if (!row->name || (op && !row->op) ||
	    (!found && idmap_put(&table->index, 0, hash, (void *)(uintptr_t)(table->count + 1)))) {
		free(row->name);
		free(row->op);
		return NULL;
	}
	table->count++;
	return row;
}

static void count(struct gpu_report_row *row, const struct gpu_activity *activity)
{
	uint64_t duration = activity->end_ns - activity->start_ns;

	switch (activity->kind) {
	case OPTRACE_GPU_REC_KERNEL:
		row->kernels++;
		break;
	case OPTRACE_GPU_REC_MEMCPY:
		row->copies++;
		break;
	default:
		row->memsets++;
		break;
	}
	row->gpu_ns += duration;
	row->bytes += activity->bytes;
	if (duration > row->max_ns)
		row->max_ns = duration;
}

/* With helpers shown: the nested operation that launched, if not the one called. */
static const char *launched_by(const struct gpu_report *report, const struct profile *profile,
			       const struct profile_gpu *gpu)
{
	if (!report->show_helpers || !gpu->op || gpu->op_name == gpu->root_name)
		return NULL;
	return profile_string(profile, gpu->tgid, gpu->op_name);
}

void gpu_report_add(struct gpu_report *report, const struct profile *profile,
		    const struct profile_gpu *gpu)
{
	const char *op = gpu->op       ? profile_string(profile, gpu->tgid, gpu->root_name)
			 : gpu->launch ? OUTSIDE_OPS
				       : NO_LAUNCH;
	int variant = gpu->run ? gpu->run->variant : -1;
	struct gpu_report_row *row;

	report->activities++;
	row = row_for(&report->ops, op, launched_by(report, profile, gpu), variant);
	if (!row) {
		report->error = -ENOMEM;
		return;
	}
	count(row, gpu->activity);
	if (gpu->activity->kind != OPTRACE_GPU_REC_KERNEL)
		return;
	row = row_for(&report->kernels, gpu->name, op, -1);
	if (!row) {
		report->error = -ENOMEM;
		return;
	}
	count(row, gpu->activity);
}

static void add_totals(struct gpu_report_row *row, const struct gpu_totals *totals)
{
	row->kernels += totals->kernels;
	row->copies += totals->copies;
	row->memsets += totals->memsets;
	row->gpu_ns += totals->gpu_ns;
	row->bytes += totals->bytes;
	if (totals->max_ns > row->max_ns)
		row->max_ns = totals->max_ns;
}

/* The name of a stat row's operation, as report names its rows. */
static const char *stat_row_op(const struct stat_snapshot *snapshot, const struct gpu_key *key,
			       char *buffer, size_t size)
{
	if (key->root_name)
		return stat_string(snapshot, key->tgid, key->root_name, buffer, size);
	return key->op_name == STAT_GPU_NOT_LAUNCHED ? NO_LAUNCH : OUTSIDE_OPS;
}

int gpu_report_from_stat(struct gpu_report *report, const struct stat_snapshot *snapshot,
			 __u32 tgid)
{
	struct gpu_summary *summary = &report->summary;

	report->present = snapshot->gpu_traced;
	summary->ring_buffer = stat_gpu_drop_name(STAT_GPU_DROP_MAP_FULL);
	for (size_t i = 0; i < snapshot->gpu_count; i++) {
		const struct gpu_row *row = &snapshot->gpus[i];
		const struct gpu_key *key = &row->key;
		char op[STAT_TEXT_MAX], helper[STAT_TEXT_MAX];
		const char *launched_by = NULL;
		uint64_t activities;
		struct gpu_report_row *out;

		if (key->tgid != tgid)
			continue;
		if (report->show_helpers && key->root_name && key->op_name)
			launched_by = key->op_name == STAT_OP_NOT_SEEN
					      ? "(launch not seen)"
					      : stat_string(snapshot, tgid, key->op_name, helper,
							    sizeof(helper));
		out = row_for(&report->ops, stat_row_op(snapshot, key, op, sizeof(op)), launched_by,
			      key->variant == STAT_GPU_NO_VARIANT ? -1 : (int)key->variant);
		if (!out)
			return -ENOMEM;
		add_totals(out, &row->totals);
		activities = row->totals.kernels + row->totals.copies + row->totals.memsets;
		summary->kernels += row->totals.kernels;
		summary->copies += row->totals.copies;
		summary->memsets += row->totals.memsets;
		summary->invalid_times += row->totals.invalid_times;
		if (key->root_name)
			summary->in_ops += activities;
		else if (key->op_name == STAT_GPU_NOT_LAUNCHED)
			summary->unlaunched += activities;
		else
			summary->outside += activities;
	}
	for (size_t i = 0; i < snapshot->gpu_drop_count; i++) {
		const struct gpu_drop_row *row = &snapshot->gpu_drops[i];

		if (row->key.tgid != tgid)
			continue;
		if (row->key.source == STAT_GPU_DROP_MALFORMED)
			summary->malformed += row->count;
		else if (row->key.source < GPU_DROP_SOURCES)
			summary->dropped[row->key.source] += row->count;
	}
	return 0;
}

void gpu_report_summarize(struct gpu_report *report, const struct profile *profile,
			  uint64_t ring_buffer_lost)
{
	struct gpu_summary *summary = &report->summary;
	const struct gpu_index_stats *s;

	report->present = profile->gpu != NULL;
	if (!profile->gpu)
		return;
	s = &profile->gpu->stats;
	*summary = (struct gpu_summary){
		.kernels = s->kernels,
		.copies = s->copies,
		.memsets = s->memsets,
		.in_ops = profile->stats.gpu_in_ops,
		.outside = profile->stats.gpu_outside,
		.unlaunched = profile->stats.gpu_unlaunched,
		.invalid_times = s->invalid_times,
		.malformed = s->malformed,
		.dropped = { s->dropped, s->dropped_launches, ring_buffer_lost },
		.ring_buffer = "ring_buffer",
	};
}

const char *stat_gpu_drop_name(unsigned int source)
{
	static const char *const names[STAT_GPU_DROP__COUNT] = {
		[STAT_GPU_DROP_ACTIVITY_BUFFER] = "activity_buffer",
		[STAT_GPU_DROP_API_CALLBACK] = "api_callback",
		[STAT_GPU_DROP_MAP_FULL] = "kernel_maps",
		[STAT_GPU_DROP_MALFORMED] = "malformed",
	};

	return source < STAT_GPU_DROP__COUNT ? names[source] : NULL;
}

const char *gpu_drop_source_key(const struct gpu_summary *summary, int source)
{
	switch (source) {
	case GPU_DROP_ACTIVITY_BUFFER:
		return "activity_buffer";
	case GPU_DROP_API_CALLBACK:
		return "api_callback";
	default:
		return summary->ring_buffer ? summary->ring_buffer : "ring_buffer";
	}
}

const char *gpu_drop_source_text(const struct gpu_summary *summary, int source)
{
	switch (source) {
	case GPU_DROP_ACTIVITY_BUFFER:
		return "dropped by CUPTI (its activity buffers were full)";
	case GPU_DROP_API_CALLBACK:
		return "launches the API callback could not mark";
	default:
		return summary->ring_buffer && strcmp(summary->ring_buffer, "ring_buffer")
			       ? "lost in the kernel's maps (full)"
			       : "lost in the ring buffer (optrace fell behind)";
	}
}

static int by_gpu_time(const void *a, const void *b)
{
	const struct gpu_report_row *x = a, *y = b;

	if (x->gpu_ns != y->gpu_ns)
		return x->gpu_ns < y->gpu_ns ? 1 : -1;
	return strcmp(x->name, y->name);
}

void gpu_report_sort(struct gpu_report *report)
{
	struct gpu_report_table *tables[] = { &report->ops, &report->kernels };

	for (size_t i = 0; i < 2; i++) {
		if (tables[i]->count)
			qsort(tables[i]->rows, tables[i]->count, sizeof(*tables[i]->rows),
			      by_gpu_time);
		idmap_free(&tables[i]->index); /* no more adds: positions changed */
	}
}

static void free_table(struct gpu_report_table *table)
{
	for (size_t i = 0; i < table->count; i++) {
		free(table->rows[i].name);
		free(table->rows[i].op);
	}
	free(table->rows);
	idmap_free(&table->index);
}

void gpu_report_free(struct gpu_report *report)
{
	free_table(&report->ops);
	free_table(&report->kernels);
	memset(report, 0, sizeof(*report));
}
