// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The GPU tables of `optrace report`, as text or as JSON. */
#include <optrace/abi.h>
#include <optrace/gpu.h>
#include <string.h>

#include "common/diag.h"
#include "output/gpu_tables.h"
#include "output/json.h"

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

static void print_summary(FILE *out, const struct gpu_report *report)
{
	const struct gpu_summary *s = &report->summary;
	uint64_t device_ns = 0;
	char lost[512];

	for (size_t i = 0; i < report->ops.count; i++)
		device_ns += report->ops.rows[i].gpu_ns;
	fprintf(out,
		"\n== GPU: %llu kernels, %llu copies, %llu memsets, %.3f ms on the device; "
		"%llu in operations, %llu launched outside any, %llu whose launch was not "
		"recorded\n",
		(unsigned long long)s->kernels, (unsigned long long)s->copies,
		(unsigned long long)s->memsets, device_ns / 1e6, (unsigned long long)s->in_ops,
		(unsigned long long)s->outside, (unsigned long long)s->unlaunched);
	if (gpu_drops_text(s, lost, sizeof(lost)))
		fprintf(out, "%s\n", lost);
	if (s->invalid_times)
		fprintf(out, "%llu activities had no valid CUPTI times: counted, 0 ns each\n",
			(unsigned long long)s->invalid_times);
	if (s->malformed)
		fprintf(out, "%llu GPU records were malformed or of an unknown version: skipped\n",
			(unsigned long long)s->malformed);
}

void gpu_report_print(FILE *out, struct gpu_report *report)
{
	if (!report->present)
		return;
	gpu_report_sort(report);
	print_summary(out, report);
	if (report->ops.count) {
		fprintf(out, "%-40s %-9s %8s %7s %7s %12s %12s %12s\n", "OPERATION", "VARIANT",
			"KERNELS", "COPIES", "MEMSETS", "GPU(ms)", "MAX(us)", "BYTES");
		fprintf(out,
			"# device time per operation the user called%s and variant of the "
			"task that launched (-: the operation's own thread); MAX: the longest "
			"activity; BYTES: copied or set\n",
			report->show_helpers ? " (ROOT via HELPER: launched by a helper)" : "");
	}
	for (size_t i = 0; i < report->ops.count; i++) {
		const struct gpu_report_row *row = &report->ops.rows[i];
		char name[256], helper[256], both[520];

		/* Names come from the traced process: one line a row, no escapes. */
		printable_text(row->name, name, sizeof(name));
		if (row->op)
			snprintf(both, sizeof(both), "%s via %s", name,
				 printable_text(row->op, helper, sizeof(helper)));
		fprintf(out, "%-40s %-9s %8llu %7llu %7llu %12.3f %12.1f %12llu\n",
			row->op ? both : name, variant_name(row->variant),
			(unsigned long long)row->kernels, (unsigned long long)row->copies,
			(unsigned long long)row->memsets, row->gpu_ns / 1e6, row->max_ns / 1e3,
			(unsigned long long)row->bytes);
	}
	if (report->kernels.count) {
		fprintf(out, "\n%-40s %8s %12s %12s  %s\n", "KERNEL", "CALLS", "GPU(ms)",
			"MEAN(us)", "OPERATION");
		fprintf(out, "# device time per kernel name and operation the user called\n");
	}
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
