// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `optrace stat`'s report of a snapshot, as text or as JSON. */
#include <optrace/abi.h>
#include <stdlib.h>
#include <string.h>

#include "output/json.h"
#include "output/stat_print.h"

#define MAX_PROCESSES 1024

static void format_modes(const struct op_summary *s, char *buffer, size_t size)
{
	size_t used = 0;

	buffer[0] = '\0';
	for (int m = 0; m <= OPTRACE_MODE__COUNT; m++) {
		for (int r = 0; r <= OPTRACE_MODE_REASON__COUNT; r++) {
			if (!s->reasons[m][r] || used >= size)
				continue;
			used += (size_t)snprintf(
				buffer + used, size - used, "%s%s:%s=%llu", used ? " " : "",
				m < OPTRACE_MODE__COUNT ? optrace_mode_name(m) : "unset",
				optrace_mode_reason_name(r), (unsigned long long)s->reasons[m][r]);
		}
	}
}

static void print_op_line(FILE *out, const struct stat_snapshot *snapshot, __u32 tgid,
			  const struct op_summary *s, int indent)
{
	char name[STAT_TEXT_MAX], safe[STAT_TEXT_MAX], column[STAT_TEXT_MAX + 2 * STAT_STACK_MAX];
	char modes[STAT_TEXT_MAX + 256];

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
	fprintf(out, "%-32s %8llu %8llu %8llu %8llu %8llu %6llu %11.3f %11.3f %10.1f %10.1f  %s\n",
		column, (unsigned long long)s->latency.count,
		(unsigned long long)s->modes[OPTRACE_MODE_EAGER],
		(unsigned long long)s->modes[OPTRACE_MODE_DEFERRED],
		(unsigned long long)s->modes[OPTRACE_MODE_MIXED],
		(unsigned long long)s->modes[OPTRACE_MODE_FALLBACK], (unsigned long long)s->errors,
		s->latency.total_ns / 1e6, s->latency.self_ns / 1e6,
		latency_percentile(&s->latency, 0.50) / 1e3,
		latency_percentile(&s->latency, 0.99) / 1e3, modes);
}

/* The helpers called under parent, within the tree of the root operation. */
static void print_helpers(FILE *out, const struct stat_snapshot *snapshot, __u32 tgid,
			  const struct op_summary *summaries, size_t count,
			  const struct op_summary *parent, __u64 root_name, int indent)
{
	if (indent > STAT_STACK_MAX)
		return;
	for (size_t i = 0; i < count; i++) {
		const struct op_summary *s = &summaries[i];

		if (s->depth != parent->depth + 1 || s->parent_name != parent->name ||
		    s->root_name != root_name)
			continue;
		print_op_line(out, snapshot, tgid, s, indent);
		print_helpers(out, snapshot, tgid, summaries, count, s, root_name, indent + 1);
	}
}

static void print_ops_text(FILE *out, const struct stat_snapshot *snapshot, __u32 tgid,
			   const struct stat_print_options *options)
{
	struct op_summary *summaries;
	size_t count = stat_summarize_ops(snapshot, tgid, &summaries);
	__u64 orphans = 0;

	if (count) /* summaries is NULL when out of memory */
		qsort(summaries, count, sizeof(*summaries), stat_compare_summaries);
	fprintf(out, "%-32s %8s %8s %8s %8s %8s %6s %11s %11s %10s %10s  %s\n", "OPERATION",
		"COUNT", "EAGER", "DEFERRED", "MIXED", "FALLBACK", "ERRORS", "TOTAL(ms)",
		"SELF(ms)", "P50(us)", "P99(us)", "MODE:REASON=COUNT");
	for (size_t i = 0; i < count; i++) {
		if (summaries[i].depth != 0) {
			if (!summaries[i].parent_name)
				orphans += summaries[i].latency.count;
			continue;
		}
		print_op_line(out, snapshot, tgid, &summaries[i], 0);
		if (options->show_helpers)
			print_helpers(out, snapshot, tgid, summaries, count, &summaries[i],
				      summaries[i].name, 1);
	}
	if (orphans)
		fprintf(out,
			"(%llu helper calls of operations that began before optrace attached "
			"are not shown)\n",
			(unsigned long long)orphans);
	free(summaries);
}

static void print_fallbacks_text(FILE *out, const struct stat_snapshot *snapshot, __u32 tgid)
{
	char name[STAT_TEXT_MAX], detail[STAT_TEXT_MAX], safe[2][STAT_TEXT_MAX];
	bool header = false;

	for (size_t i = 0; i < snapshot->fallback_count; i++) {
		const struct fallback_row *row = &snapshot->fallbacks[i];

		if (row->key.tgid != tgid)
			continue;
		if (!header) {
			fprintf(out, "\n%-32s %-22s %8s  %s\n", "FALLBACK", "REASON", "COUNT",
				"DETAIL");
			header = true;
		}
		fprintf(out, "%-32s %-22s %8llu  %s\n",
			printable_text(
				stat_string(snapshot, tgid, row->key.name, name, sizeof(name)),
				safe[0], sizeof(safe[0])),
			optrace_fallback_reason_name((int)row->key.reason),
			(unsigned long long)row->count,
			printable_text(stat_string(snapshot, tgid, row->key.detail, detail,
						   sizeof(detail)),
				       safe[1], sizeof(safe[1])));
	}
}

static void print_tasks_text(FILE *out, const struct stat_snapshot *snapshot, __u32 tgid)
{
	char name[STAT_TEXT_MAX], root[STAT_TEXT_MAX], safe[2][STAT_TEXT_MAX];
	bool header = false;

	for (size_t i = 0; i < snapshot->task_count; i++) {
		const struct task_row *row = &snapshot->tasks[i];

		if (row->key.tgid != tgid)
			continue;
		if (!header) {
			fprintf(out, "\n%-24s %-8s %-24s %8s %11s %10s %10s\n", "TASK", "VARIANT",
				"OPERATION", "RUNS", "TOTAL(ms)", "P50(us)", "P99(us)");
			header = true;
		}
		fprintf(out, "%-24s %-8s %-24s %8llu %11.3f %10.1f %10.1f\n",
			printable_text(
				stat_string(snapshot, tgid, row->key.name, name, sizeof(name)),
				safe[0], sizeof(safe[0])),
			optrace_variant_name((int)row->key.variant),
			printable_text(
				stat_string(snapshot, tgid, row->key.root_name, root, sizeof(root)),
				safe[1], sizeof(safe[1])),
			(unsigned long long)row->latency.count, row->latency.total_ns / 1e6,
			latency_percentile(&row->latency, 0.50) / 1e3,
			latency_percentile(&row->latency, 0.99) / 1e3);
	}
}

static void print_waits_text(FILE *out, const struct stat_snapshot *snapshot, __u32 tgid)
{
	char root[STAT_TEXT_MAX], safe[STAT_TEXT_MAX];
	bool header = false;

	for (size_t i = 0; i < snapshot->wait_count; i++) {
		const struct wait_row *row = &snapshot->waits[i];

		if (row->key.tgid != tgid)
			continue;
		if (!header) {
			fprintf(out, "\n%-12s %-24s %8s %11s %10s\n", "WAIT", "OPERATION", "COUNT",
				"TOTAL(ms)", "P99(us)");
			header = true;
		}
		fprintf(out, "%-12s %-24s %8llu %11.3f %10.1f\n",
			optrace_wait_kind_name((int)row->key.kind),
			row->key.root_name
				? printable_text(stat_string(snapshot, tgid, row->key.root_name,
							     root, sizeof(root)),
						 safe, sizeof(safe))
				: "(outside operations)",
			(unsigned long long)row->latency.count, row->latency.total_ns / 1e6,
			latency_percentile(&row->latency, 0.99) / 1e3);
	}
}

static void print_losses_text(FILE *out, const struct stat_snapshot *snapshot)
{
	bool any = false;

	fprintf(out, "\nlost:");
	for (int i = 0; i < STAT_LOSS__COUNT; i++) {
		if (!snapshot->losses[i])
			continue;
		fprintf(out, " %s=%llu", stat_loss_name(i),
			(unsigned long long)snapshot->losses[i]);
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
	fprintf(out, "%s\n", any ? "" : " nothing");
}

/* ---- JSON ---- */

static void json_name(FILE *out, const struct stat_snapshot *snapshot, __u32 tgid, __u64 address)
{
	char buffer[STAT_TEXT_MAX];

	if (!address)
		fputs("null", out);
	else
		json_string(out, stat_string(snapshot, tgid, address, buffer, sizeof(buffer)));
}

static void json_latency(FILE *out, const struct latency *latency)
{
	fprintf(out,
		"\"count\":%llu,\"total_ns\":%llu,\"self_ns\":%llu,\"min_ns\":%llu,\"max_ns\":%llu,"
		"\"p50_ns\":%.0f,\"p99_ns\":%.0f",
		(unsigned long long)latency->count, (unsigned long long)latency->total_ns,
		(unsigned long long)latency->self_ns, (unsigned long long)latency->min_ns,
		(unsigned long long)latency->max_ns, latency_percentile(latency, 0.50),
		latency_percentile(latency, 0.99));
}

static void print_ops_json(FILE *out, const struct stat_snapshot *snapshot, __u32 tgid)
{
	struct op_summary *summaries;
	size_t count = stat_summarize_ops(snapshot, tgid, &summaries);

	if (count) /* summaries is NULL when out of memory */
		qsort(summaries, count, sizeof(*summaries), stat_compare_summaries);
	fputs("\"operations\":[", out);
	for (size_t i = 0; i < count; i++) {
		const struct op_summary *s = &summaries[i];
		bool first = true;

		fprintf(out, "%s{\"name\":", i ? "," : "");
		json_name(out, snapshot, tgid, s->name);
		fprintf(out, ",\"depth\":%u,\"parent\":", s->depth);
		json_name(out, snapshot, tgid, s->parent_name);
		fputs(",\"root\":", out);
		json_name(out, snapshot, tgid, s->root_name);
		if (s->callsite) {
			fputs(",\"callsite\":", out);
			json_name(out, snapshot, tgid, s->callsite);
		}
		fputc(',', out);
		json_latency(out, &s->latency);
		fprintf(out, ",\"errors\":%llu,\"modes\":[", (unsigned long long)s->errors);
		for (int m = 0; m <= OPTRACE_MODE__COUNT; m++) {
			for (int r = 0; r <= OPTRACE_MODE_REASON__COUNT; r++) {
				if (!s->reasons[m][r])
					continue;
				fprintf(out, "%s{\"mode\":\"%s\",\"reason\":\"%s\",\"count\":%llu}",
					first ? "" : ",",
					m < OPTRACE_MODE__COUNT ? optrace_mode_name(m) : "unset",
					optrace_mode_reason_name(r),
					(unsigned long long)s->reasons[m][r]);
				first = false;
			}
		}
		fputs("]}", out);
	}
	fputs("]", out);
	free(summaries);
}

static void print_process_json(FILE *out, const struct stat_snapshot *snapshot, __u32 tgid)
{
	bool first;

	fprintf(out, "{\"pid\":%u,", tgid);
	if (stat_process(snapshot, tgid)) {
		const struct process_row *process = stat_process(snapshot, tgid);
		char comm[17];

		memcpy(comm, process->info.comm, 16);
		comm[16] = '\0';
		fputs("\"command\":", out);
		json_string(out, comm);
		fputc(',', out);
		if (process->rank_count > 0)
			fprintf(out, "\"rank\":%d,\"rank_count\":%d,", process->rank,
				process->rank_count);
	}
	print_ops_json(out, snapshot, tgid);

	fputs(",\"fallbacks\":[", out);
	first = true;
	for (size_t i = 0; i < snapshot->fallback_count; i++) {
		const struct fallback_row *row = &snapshot->fallbacks[i];

		if (row->key.tgid != tgid)
			continue;
		fprintf(out, "%s{\"operation\":", first ? "" : ",");
		json_name(out, snapshot, tgid, row->key.name);
		fprintf(out, ",\"reason\":\"%s\",\"count\":%llu,\"detail\":",
			optrace_fallback_reason_name((int)row->key.reason),
			(unsigned long long)row->count);
		json_name(out, snapshot, tgid, row->key.detail);
		fputc('}', out);
		first = false;
	}

	fputs("],\"tasks\":[", out);
	first = true;
	for (size_t i = 0; i < snapshot->task_count; i++) {
		const struct task_row *row = &snapshot->tasks[i];

		if (row->key.tgid != tgid)
			continue;
		fprintf(out, "%s{\"name\":", first ? "" : ",");
		json_name(out, snapshot, tgid, row->key.name);
		fprintf(out, ",\"variant\":\"%s\",\"operation\":",
			optrace_variant_name((int)row->key.variant));
		json_name(out, snapshot, tgid, row->key.root_name);
		fputc(',', out);
		json_latency(out, &row->latency);
		fputc('}', out);
		first = false;
	}

	fputs("],\"launches\":[", out);
	first = true;
	for (size_t i = 0; i < snapshot->launch_count; i++) {
		const struct launch_row *row = &snapshot->launches[i];

		if (row->key.tgid != tgid)
			continue;
		fprintf(out, "%s{\"name\":", first ? "" : ",");
		json_name(out, snapshot, tgid, row->key.name);
		fputs(",\"operation\":", out);
		json_name(out, snapshot, tgid, row->key.root_name);
		fprintf(out, ",\"count\":%llu,\"points\":%llu}",
			(unsigned long long)row->stats.count,
			(unsigned long long)row->stats.points);
		first = false;
	}

	fputs("],\"waits\":[", out);
	first = true;
	for (size_t i = 0; i < snapshot->wait_count; i++) {
		const struct wait_row *row = &snapshot->waits[i];

		if (row->key.tgid != tgid)
			continue;
		fprintf(out, "%s{\"kind\":\"%s\",\"operation\":", first ? "" : ",",
			optrace_wait_kind_name((int)row->key.kind));
		json_name(out, snapshot, tgid, row->key.root_name);
		fputc(',', out);
		json_latency(out, &row->latency);
		fputc('}', out);
		first = false;
	}
	fputs("]}", out);
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

static int compare_task_rows(const void *a, const void *b)
{
	const struct task_row *x = a, *y = b;

	if (x->latency.total_ns != y->latency.total_ns)
		return x->latency.total_ns > y->latency.total_ns ? -1 : 1;
	return 0;
}

static int compare_wait_rows(const void *a, const void *b)
{
	const struct wait_row *x = a, *y = b;

	if (x->latency.total_ns != y->latency.total_ns)
		return x->latency.total_ns > y->latency.total_ns ? -1 : 1;
	return 0;
}

void stat_print(FILE *out, struct stat_snapshot *snapshot, const struct stat_print_options *options)
{
	__u32 tgids[MAX_PROCESSES];
	size_t count = stat_processes(snapshot, tgids, MAX_PROCESSES);

	/* Where the time went, first (qsort() must not be given NULL, even for 0 rows). */
	if (snapshot->task_count)
		qsort(snapshot->tasks, snapshot->task_count, sizeof(*snapshot->tasks),
		      compare_task_rows);
	if (snapshot->wait_count)
		qsort(snapshot->waits, snapshot->wait_count, sizeof(*snapshot->waits),
		      compare_wait_rows);
	if (options->json) {
		fputs("{\"processes\":[", out);
		for (size_t i = 0; i < count; i++) {
			if (i)
				fputc(',', out);
			print_process_json(out, snapshot, tgids[i]);
		}
		fputs("],\"lost\":{", out);
		for (int i = 0; i < STAT_LOSS__COUNT; i++)
			fprintf(out, "%s\"%s\":%llu", i ? "," : "", stat_loss_name(i),
				(unsigned long long)snapshot->losses[i]);
		for (size_t i = 0; i < snapshot->more_loss_count; i++) {
			fputc(',', out);
			json_string(out, snapshot->more_losses[i].name);
			fprintf(out, ":%llu", (unsigned long long)snapshot->more_losses[i].value);
		}
		fputc('}', out);
		if (options->json_members)
			options->json_members(out, options->json_members_ctx);
		fputs("}\n", out);
		return;
	}
	if (!count)
		fprintf(out, "no operations traced\n");
	for (size_t i = 0; i < count; i++) {
		fprintf(out, "%s== process %u%s\n", i ? "\n" : "", tgids[i],
			process_name(snapshot, tgids[i]));
		print_ops_text(out, snapshot, tgids[i], options);
		print_fallbacks_text(out, snapshot, tgids[i]);
		print_tasks_text(out, snapshot, tgids[i]);
		print_waits_text(out, snapshot, tgids[i]);
	}
	print_losses_text(out, snapshot);
}
