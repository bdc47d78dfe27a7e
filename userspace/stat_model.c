// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * From the kernel's aggregates to what `optrace stat` prints. Operations the
 * user called (depth 0) carry the cost of the helpers they called: their
 * total includes their helpers' time, and self time is what remains.
 */
#include <errno.h>
#include <optrace/abi.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "stat_model.h"

#define MAX_PROCESSES 1024

static const char *const loss_names[STAT_LOSS__COUNT] = {
	[STAT_LOSS_MAP_FULL] = "map_full",
	[STAT_LOSS_THREADS_FULL] = "threads_full",
	[STAT_LOSS_STRING_UNREADABLE] = "string_unreadable",
	[STAT_LOSS_STRING_TRUNCATED] = "string_truncated",
	[STAT_LOSS_TOO_DEEP] = "too_deep",
	[STAT_LOSS_UNMATCHED] = "unmatched",
	[STAT_LOSS_BATCH_BAD] = "batch_malformed",
	[STAT_LOSS_BATCH_GAP] = "batch_missing",
};

const char *stat_loss_name(int loss)
{
	return loss >= 0 && loss < STAT_LOSS__COUNT ? loss_names[loss] : "unknown";
}

void stat_snapshot_free(struct stat_snapshot *snapshot)
{
	for (size_t i = 0; i < snapshot->string_count; i++)
		free(snapshot->strings[i].text);
	for (size_t i = 0; i < snapshot->more_loss_count; i++)
		free(snapshot->more_losses[i].name);
	free(snapshot->more_losses);
	free(snapshot->processes);
	free(snapshot->ops);
	free(snapshot->tasks);
	free(snapshot->launches);
	free(snapshot->fallbacks);
	free(snapshot->waits);
	free(snapshot->strings);
	memset(snapshot, 0, sizeof(*snapshot));
}

int stat_add_loss(struct stat_snapshot *snapshot, const char *name, __u64 value)
{
	struct stat_more_loss *grown;
	char *copy;

	for (int i = 0; i < STAT_LOSS__COUNT; i++) {
		if (!strcmp(loss_names[i], name)) {
			snapshot->losses[i] += value;
			return 0;
		}
	}
	for (size_t i = 0; i < snapshot->more_loss_count; i++) {
		if (!strcmp(snapshot->more_losses[i].name, name)) {
			snapshot->more_losses[i].value += value;
			return 0;
		}
	}
	grown = realloc(snapshot->more_losses,
			(snapshot->more_loss_count + 1) * sizeof(*snapshot->more_losses));
	if (!grown)
		return -ENOMEM;
	snapshot->more_losses = grown;
	copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	grown[snapshot->more_loss_count].name = copy;
	grown[snapshot->more_loss_count].value = value;
	snapshot->more_loss_count++;
	return 0;
}

void latency_merge(struct latency *into, const struct latency *from)
{
	if (!from->count)
		return;
	if (!into->count || from->min_ns < into->min_ns)
		into->min_ns = from->min_ns;
	if (from->max_ns > into->max_ns)
		into->max_ns = from->max_ns;
	into->count += from->count;
	into->total_ns += from->total_ns;
	into->self_ns += from->self_ns;
	for (int i = 0; i < STAT_HIST_SLOTS; i++)
		into->hist[i] += from->hist[i];
}

double latency_percentile(const struct latency *latency, double p)
{
	double rank = p * (double)latency->count, seen = 0, value;

	if (!latency->count)
		return 0;
	for (int i = 0; i < STAT_HIST_SLOTS; i++) {
		double low = i ? (double)(1ULL << i) : 0, high = (double)(1ULL << (i + 1));

		if (!latency->hist[i] || seen + (double)latency->hist[i] < rank) {
			seen += (double)latency->hist[i];
			continue;
		}
		value = low + (high - low) * (rank - seen) / (double)latency->hist[i];
		/* The bucket is coarse; the true extremes are known. */
		if (value < (double)latency->min_ns)
			value = (double)latency->min_ns;
		if (value > (double)latency->max_ns)
			value = (double)latency->max_ns;
		return value;
	}
	return (double)latency->max_ns;
}

const char *stat_string(const struct stat_snapshot *snapshot, __u32 tgid, __u64 address,
			char *buffer, size_t size)
{
	if (!address)
		return "(unknown)";
	for (size_t i = 0; i < snapshot->string_count; i++) {
		const struct string_row *row = &snapshot->strings[i];
		char text[STAT_NAME_LEN];

		if (row->key.tgid != tgid || row->key.address != address)
			continue;
		if (row->value.unreadable)
			return "(unreadable)";
		if (row->text) {
			snprintf(buffer, size, "%s", row->text);
			return buffer;
		}
		memcpy(text, row->value.text, sizeof(text));
		text[sizeof(text) - 1] = '\0';
		snprintf(buffer, size, "%s%s", text, row->value.truncated ? "..." : "");
		return buffer;
	}
	snprintf(buffer, size, "(0x%llx)", (unsigned long long)address);
	return buffer;
}

static int compare_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

static size_t add_unique(__u32 *tgids, size_t count, size_t max, __u32 tgid)
{
	for (size_t i = 0; i < count; i++) {
		if (tgids[i] == tgid)
			return count;
	}
	if (count < max)
		tgids[count++] = tgid;
	return count;
}

size_t stat_processes(const struct stat_snapshot *snapshot, __u32 *tgids, size_t max)
{
	size_t count = 0;

	for (size_t i = 0; i < snapshot->op_count; i++)
		count = add_unique(tgids, count, max, snapshot->ops[i].key.tgid);
	for (size_t i = 0; i < snapshot->task_count; i++)
		count = add_unique(tgids, count, max, snapshot->tasks[i].key.tgid);
	for (size_t i = 0; i < snapshot->wait_count; i++)
		count = add_unique(tgids, count, max, snapshot->waits[i].key.tgid);
	if (count)
		qsort(tgids, count, sizeof(*tgids), compare_u32);
	return count;
}

static const struct process_row *process_of(const struct stat_snapshot *snapshot, __u32 tgid)
{
	for (size_t i = 0; i < snapshot->process_count; i++) {
		if (snapshot->processes[i].tgid == tgid)
			return &snapshot->processes[i];
	}
	return NULL;
}

/* ---- summaries of operations: one per (name, depth, parent name) ---- */

struct op_summary {
	__u64 name;
	__u64 parent_name;
	__u64 root_name;
	__u64 callsite;
	__u32 depth;
	struct latency latency;
	__u64 modes[OPTRACE_MODE__COUNT + 1]; /* the last: never announced */
	__u64 reasons[OPTRACE_MODE__COUNT + 1][OPTRACE_MODE_REASON__COUNT + 1];
	__u64 errors;
};

static int mode_slot(int mode)
{
	return mode >= 0 && mode < OPTRACE_MODE__COUNT ? mode : OPTRACE_MODE__COUNT;
}

static int reason_slot(int reason)
{
	return reason >= 0 && reason < OPTRACE_MODE_REASON__COUNT ? reason
								  : OPTRACE_MODE_REASON__COUNT;
}

static size_t summarize_ops(const struct stat_snapshot *snapshot, __u32 tgid,
			    struct op_summary **out)
{
	struct op_summary *summaries = calloc(snapshot->op_count + 1, sizeof(*summaries));
	size_t count = 0;

	for (size_t i = 0; summaries && i < snapshot->op_count; i++) {
		const struct op_row *row = &snapshot->ops[i];
		struct op_summary *s = NULL;

		if (row->key.tgid != tgid)
			continue;
		for (size_t j = 0; j < count; j++) {
			if (summaries[j].name == row->key.name &&
			    summaries[j].depth == row->key.depth &&
			    summaries[j].parent_name == row->key.parent_name &&
			    summaries[j].root_name == row->key.root_name &&
			    summaries[j].callsite == row->key.callsite) {
				s = &summaries[j];
				break;
			}
		}
		if (!s) {
			s = &summaries[count++];
			s->name = row->key.name;
			s->parent_name = row->key.parent_name;
			s->root_name = row->key.root_name;
			s->callsite = row->key.callsite;
			s->depth = row->key.depth;
		}
		latency_merge(&s->latency, &row->latency);
		s->modes[mode_slot(row->key.mode)] += row->latency.count;
		s->reasons[mode_slot(row->key.mode)][reason_slot(row->key.mode_reason)] +=
			row->latency.count;
		if (row->key.status != OPTRACE_STATUS_OK)
			s->errors += row->latency.count;
	}
	*out = summaries;
	return summaries ? count : 0;
}

/* Slowest first: what the user wants to see first. */
static int compare_summaries(const void *a, const void *b)
{
	const struct op_summary *x = a, *y = b;

	if (x->latency.total_ns != y->latency.total_ns)
		return x->latency.total_ns > y->latency.total_ns ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

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
	size_t count = summarize_ops(snapshot, tgid, &summaries);
	__u64 orphans = 0;

	if (count) /* summaries is NULL when out of memory */
		qsort(summaries, count, sizeof(*summaries), compare_summaries);
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
	size_t count = summarize_ops(snapshot, tgid, &summaries);

	if (count) /* summaries is NULL when out of memory */
		qsort(summaries, count, sizeof(*summaries), compare_summaries);
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
	if (process_of(snapshot, tgid)) {
		const struct process_row *process = process_of(snapshot, tgid);
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
	const struct process_row *process = process_of(snapshot, tgid);
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
