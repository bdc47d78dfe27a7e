// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <optrace/abi.h>
#include <optrace/gpu.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_report.h"
#include "json.h"

#define OUTSIDE_OPS "(launched outside any operation)"
#define NO_LAUNCH "(launch not recorded)"
#define UNRECORDED_OP "(task of an operation not recorded)"

void gpu_report_init(struct gpu_report *report)
{
	memset(report, 0, sizeof(*report));
}

static uint64_t hash_key(const char *name, const char *op, int variant)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ (uint64_t)(variant + 2);

	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	h = (h ^ 0xff) * 0x100000001b3ULL;
	for (const char *p = op ? op : ""; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	return h;
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

static int by_gpu_time(const void *a, const void *b)
{
	const struct gpu_report_row *x = a, *y = b;

	if (x->gpu_ns != y->gpu_ns)
		return x->gpu_ns < y->gpu_ns ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void sort_rows(struct gpu_report_table *table)
{
	if (table->count)
		qsort(table->rows, table->count, sizeof(*table->rows), by_gpu_time);
	idmap_free(&table->index); /* no more adds: positions changed */
}

static const char *variant_name(int variant)
{
	return variant < 0 ? "-" : optrace_variant_name(variant);
}

static void print_summary(FILE *out, const struct gpu_report *report, const struct profile *profile)
{
	const struct gpu_index_stats *s = &profile->gpu->stats;
	uint64_t device_ns = 0;

	for (size_t i = 0; i < report->ops.count; i++)
		device_ns += report->ops.rows[i].gpu_ns;
	fprintf(out,
		"\n== GPU: %llu kernels, %llu copies, %llu memsets, %.3f ms on the device; "
		"%llu in operations, %llu launched outside any, %llu whose launch was not "
		"recorded\n",
		(unsigned long long)s->kernels, (unsigned long long)s->copies,
		(unsigned long long)s->memsets, device_ns / 1e6,
		(unsigned long long)profile->stats.gpu_in_ops,
		(unsigned long long)profile->stats.gpu_outside,
		(unsigned long long)profile->stats.gpu_unlaunched);
	if (s->dropped)
		fprintf(out, "LOST: CUPTI dropped %llu records (its buffers were full)\n",
			(unsigned long long)s->dropped);
	if (s->invalid_times)
		fprintf(out, "%llu activities had no valid CUPTI times: counted, 0 ns each\n",
			(unsigned long long)s->invalid_times);
	if (s->malformed)
		fprintf(out, "%llu GPU records were malformed or of an unknown version: skipped\n",
			(unsigned long long)s->malformed);
}

void gpu_report_print(FILE *out, struct gpu_report *report, const struct profile *profile)
{
	if (!profile->gpu)
		return;
	sort_rows(&report->ops);
	sort_rows(&report->kernels);
	print_summary(out, report, profile);
	if (report->ops.count)
		fprintf(out, "%-40s %-9s %8s %7s %7s %12s %12s %12s\n", "OPERATION", "VARIANT",
			"KERNELS", "COPIES", "MEMSETS", "GPU(ms)", "MAX(us)", "BYTES");
	for (size_t i = 0; i < report->ops.count; i++) {
		const struct gpu_report_row *row = &report->ops.rows[i];
		char name[256], helper[256], both[520];

		/* Names come from the traced process: one line a row, no escapes. */
		printable_text(row->name, name, sizeof(name));
		if (row->op)
			snprintf(both, sizeof(both), "%s > %s", name,
				 printable_text(row->op, helper, sizeof(helper)));
		fprintf(out, "%-40s %-9s %8llu %7llu %7llu %12.3f %12.1f %12llu\n",
			row->op ? both : name, variant_name(row->variant),
			(unsigned long long)row->kernels, (unsigned long long)row->copies,
			(unsigned long long)row->memsets, row->gpu_ns / 1e6, row->max_ns / 1e3,
			(unsigned long long)row->bytes);
	}
	if (report->kernels.count)
		fprintf(out, "\n%-40s %8s %12s %12s  %s\n", "KERNEL", "CALLS", "GPU(ms)",
			"MEAN(us)", "OPERATION");
	for (size_t i = 0; i < report->kernels.count; i++) {
		const struct gpu_report_row *row = &report->kernels.rows[i];
		char name[256], op[256];

		fprintf(out, "%-40s %8llu %12.3f %12.1f  %s\n",
			printable_text(row->name, name, sizeof(name)),
			(unsigned long long)row->kernels, row->gpu_ns / 1e6,
			row->kernels ? row->gpu_ns / 1e3 / row->kernels : 0.0,
			printable_text(row->op, op, sizeof(op)));
	}
}

void gpu_report_print_json(FILE *out, struct gpu_report *report, const struct profile *profile)
{
	const struct gpu_index_stats *s;

	if (!profile->gpu) {
		fputs("null", out);
		return;
	}
	s = &profile->gpu->stats;
	sort_rows(&report->ops);
	sort_rows(&report->kernels);
	fprintf(out,
		"{\"kernels\":%llu,\"copies\":%llu,\"memsets\":%llu,\"in_ops\":%llu,"
		"\"outside\":%llu,\"unlaunched\":%llu,\"dropped\":%llu,\"invalid_times\":%llu,"
		"\"ops\":[",
		(unsigned long long)s->kernels, (unsigned long long)s->copies,
		(unsigned long long)s->memsets, (unsigned long long)profile->stats.gpu_in_ops,
		(unsigned long long)profile->stats.gpu_outside,
		(unsigned long long)profile->stats.gpu_unlaunched, (unsigned long long)s->dropped,
		(unsigned long long)s->invalid_times);
	for (size_t i = 0; i < report->ops.count; i++) {
		const struct gpu_report_row *row = &report->ops.rows[i];

		fputs(i ? ",{\"op\":" : "{\"op\":", out);
		json_string(out, row->name);
		if (row->op) {
			fputs(",\"launched_by\":", out);
			json_string(out, row->op);
		}
		fprintf(out,
			",\"variant\":\"%s\",\"kernels\":%llu,\"copies\":%llu,\"memsets\":%llu,"
			"\"gpu_ns\":%llu,\"max_ns\":%llu,\"bytes\":%llu}",
			variant_name(row->variant), (unsigned long long)row->kernels,
			(unsigned long long)row->copies, (unsigned long long)row->memsets,
			(unsigned long long)row->gpu_ns, (unsigned long long)row->max_ns,
			(unsigned long long)row->bytes);
	}
	fputs("],\"kernel_names\":[", out);
	for (size_t i = 0; i < report->kernels.count; i++) {
		const struct gpu_report_row *row = &report->kernels.rows[i];

		fputs(i ? ",{\"kernel\":" : "{\"kernel\":", out);
		json_string(out, row->name);
		fputs(",\"op\":", out);
		json_string(out, row->op);
		fprintf(out, ",\"calls\":%llu,\"gpu_ns\":%llu,\"max_ns\":%llu}",
			(unsigned long long)row->kernels, (unsigned long long)row->gpu_ns,
			(unsigned long long)row->max_ns);
	}
	fputs("]}", out);
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
