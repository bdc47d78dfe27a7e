// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The GPU tables of `optrace report`, as text or as JSON. */
#include <optrace/abi.h>
#include <optrace/gpu.h>
#include <string.h>

#include "common/diag.h"
#include "output/gpu_tables.h"
#include "output/json.h"
#include "output/text_table.h"

static const char *variant_name(int variant)
{
	return variant < 0 ? "-" : optrace_variant_name(variant);
}

bool gpu_drops_text(const struct gpu_summary *s, char *text, size_t size)
{
	size_t used = 0;

	text[0] = '\0';
	for (int i = 0; i < GPU_DROP_SOURCES; i++) {
		int n;

		if (!s->dropped[i])
			continue;
		n = snprintf(text + used, size - used, "%s%llu %s",
			     used ? "; " : "LOST: GPU records: ", (unsigned long long)s->dropped[i],
			     gpu_drop_source_text(s, i));
		if (n < 0 || (size_t)n >= size - used)
			break;
		used += (size_t)n;
	}
	return used > 0;
}

bool gpu_losses_note(const struct profile *profile, uint64_t ring_buffer_lost,
		     struct gpu_summary *summary)
{
	struct gpu_report report;
	char text[512];
	bool present;

	gpu_report_init(&report);
	gpu_report_summarize(&report, profile, ring_buffer_lost);
	*summary = report.summary;
	present = report.present;
	gpu_report_free(&report);
	if (present && gpu_drops_text(summary, text, sizeof(text)))
		diag("%s", text);
	return present;
}

static void print_summary(FILE *out, const struct gpu_report *report, int width)
{
	const struct gpu_summary *s = &report->summary;
	uint64_t device_ns = 0;
	char lost[512];

	for (size_t i = 0; i < report->ops.count; i++)
		device_ns += report->ops.rows[i].gpu_ns;
	fputc('\n', out);
	text_printf(out, width,
		    "== GPU: %llu kernels, %llu copies, %llu memsets, %.3f ms on the device; "
		    "%llu in operations, %llu launched outside any, %llu whose launch was not "
		    "recorded",
		    (unsigned long long)s->kernels, (unsigned long long)s->copies,
		    (unsigned long long)s->memsets, device_ns / 1e6, (unsigned long long)s->in_ops,
		    (unsigned long long)s->outside, (unsigned long long)s->unlaunched);
	if (gpu_drops_text(s, lost, sizeof(lost)))
		text_printf(out, width, "%s", lost);
	if (s->invalid_times)
		text_printf(out, width,
			    "%llu activities had no valid CUPTI times: counted, 0 ns each",
			    (unsigned long long)s->invalid_times);
	if (s->malformed)
		text_printf(out, width,
			    "%llu GPU records were malformed or of an unknown version: skipped",
			    (unsigned long long)s->malformed);
}

void gpu_report_print(FILE *out, struct gpu_report *report, int width)
{
	static const struct text_column op_columns[] = {
		{ "OPERATION", 0, true, true, false }, { "VARIANT", 0, true, false, false },
		{ "KERNELS", 0, false, false, false }, { "COPIES", 3, false, false, false },
		{ "MEMSETS", 4, false, false, false }, { "GPU(ms)", 0, false, false, false },
		{ "MAX(us)", 5, false, false, false }, { "BYTES", 2, false, false, false },
	};
	static const struct text_column kernel_columns[] = {
		{ "KERNEL", 0, true, true, false },    { "CALLS", 0, false, false, false },
		{ "GPU(ms)", 0, false, false, false }, { "MEAN(us)", 3, false, false, false },
		{ "OPERATION", 0, true, false, true },
	};
	struct text_table ops, kernels;
	char numbers[6][32], legend[256];

	if (!report->present)
		return;
	gpu_report_sort(report);
	print_summary(out, report, width);
	text_table_init(&ops, op_columns, 8);
	for (size_t i = 0; i < report->ops.count; i++) {
		const struct gpu_report_row *row = &report->ops.rows[i];
		char name[256], helper[256], both[520];
		const char *cells[8];

		/* Names come from the traced process: one line a row, no escapes. */
		printable_text(row->name, name, sizeof(name));
		if (row->op)
			snprintf(both, sizeof(both), "%s via %s", name,
				 printable_text(row->op, helper, sizeof(helper)));
		snprintf(numbers[0], 32, "%llu", (unsigned long long)row->kernels);
		snprintf(numbers[1], 32, "%llu", (unsigned long long)row->copies);
		snprintf(numbers[2], 32, "%llu", (unsigned long long)row->memsets);
		snprintf(numbers[3], 32, "%.3f", row->gpu_ns / 1e6);
		snprintf(numbers[4], 32, "%.1f", row->max_ns / 1e3);
		snprintf(numbers[5], 32, "%llu", (unsigned long long)row->bytes);
		cells[0] = row->op ? both : name;
		cells[1] = variant_name(row->variant);
		for (int c = 0; c < 6; c++)
			cells[2 + c] = numbers[c];
		text_table_add(&ops, cells);
	}
	if (report->ops.count) {
		snprintf(legend, sizeof(legend),
			 "device time per operation the user called%s and variant of the task that "
			 "launched (-: the operation's own thread); MAX: the longest activity; "
			 "BYTES: copied or set",
			 report->show_helpers ? " (ROOT via HELPER: launched by a helper)" : "");
		text_table_print(out, &ops, width, legend);
	}
	text_table_free(&ops);
	text_table_init(&kernels, kernel_columns, 5);
	for (size_t i = 0; i < report->kernels.count; i++) {
		const struct gpu_report_row *row = &report->kernels.rows[i];
		char name[256], op[256];
		const char *cells[5];

		snprintf(numbers[0], 32, "%llu", (unsigned long long)row->kernels);
		snprintf(numbers[1], 32, "%.3f", row->gpu_ns / 1e6);
		snprintf(numbers[2], 32, "%.1f",
			 row->kernels ? row->gpu_ns / 1e3 / row->kernels : 0.0);
		cells[0] = printable_text(row->name, name, sizeof(name));
		cells[1] = numbers[0];
		cells[2] = numbers[1];
		cells[3] = numbers[2];
		cells[4] = printable_text(row->op, op, sizeof(op));
		text_table_add(&kernels, cells);
	}
	if (report->kernels.count) {
		fputc('\n', out);
		text_table_print(out, &kernels, width,
				 "device time per kernel name and operation the user called");
	}
	text_table_free(&kernels);
}

void gpu_report_print_json(FILE *out, struct gpu_report *report)
{
	const struct gpu_summary *s = &report->summary;

	if (!report->present) {
		fputs("null", out);
		return;
	}
	gpu_report_sort(report);
	fprintf(out,
		"{\"kernels\":%llu,\"copies\":%llu,\"memsets\":%llu,\"in_ops\":%llu,"
		"\"outside\":%llu,\"unlaunched\":%llu,\"dropped\":{",
		(unsigned long long)s->kernels, (unsigned long long)s->copies,
		(unsigned long long)s->memsets, (unsigned long long)s->in_ops,
		(unsigned long long)s->outside, (unsigned long long)s->unlaunched);
	for (int i = 0; i < GPU_DROP_SOURCES; i++)
		fprintf(out, "%s\"%s\":%llu", i ? "," : "", gpu_drop_source_key(s, i),
			(unsigned long long)s->dropped[i]);
	fprintf(out, "},\"invalid_times\":%llu,\"ops\":[", (unsigned long long)s->invalid_times);
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
