// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `optrace stat`'s and `report`'s JSON (docs/optrace.md, JSON): the tables as text groups them. */
#include <optrace/abi.h>
#include <stdlib.h>
#include <string.h>

#include "output/json.h"
#include "output/stat_gpu.h"
#include "output/stat_json.h"

static void json_name(FILE *out, const struct stat_snapshot *snapshot, __u32 tgid, __u64 address)
{
	char buffer[STAT_TEXT_MAX];

	if (!address)
		fputs("null", out);
	else
		json_string(out, stat_string(snapshot, tgid, address, buffer, sizeof(buffer)));
}

static const char *precision_name(enum stat_precision precision)
{
	switch (precision) {
	case STAT_EXACT:
		return "exact";
	case STAT_WITHIN:
		return "hdr";
	default:
		return "at_most";
	}
}

static void json_latency(FILE *out, const struct latency *latency, struct durations *durations)
{
	struct stat_quantile p50 = stat_quantile(latency, durations, 0.50),
			     p99 = stat_quantile(latency, durations, 0.99);

	/* The coarser of the two says how near both are. */
	fprintf(out,
		"\"count\":%llu,\"total_ns\":%llu,\"self_ns\":%llu,\"min_ns\":%llu,\"max_ns\":%llu,"
		"\"p50_ns\":%.0f,\"p99_ns\":%.0f,\"percentiles\":\"%s\"",
		(unsigned long long)latency->count, (unsigned long long)latency->total_ns,
		(unsigned long long)latency->self_ns, (unsigned long long)latency->min_ns,
		(unsigned long long)latency->max_ns, p50.ns, p99.ns,
		precision_name(p50.precision > p99.precision ? p50.precision : p99.precision));
}

static void print_ops_json(FILE *out, const struct stat_snapshot *snapshot, __u32 tgid)
{
	struct op_summary *summaries;
	size_t count = stat_summarize_ops(snapshot, tgid, &summaries);

	fputs("\"operations\":[", out);
	for (size_t i = 0; i < count; i++) {
		struct op_summary *s = &summaries[i];
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
		json_latency(out, &s->latency, s->durations);
		if (s->work_known)
			fprintf(out, ",\"task_ns\":%llu,\"task_count\":%llu",
				(unsigned long long)s->work.task_ns,
				(unsigned long long)s->work.task_runs);
		else
			fputs(",\"task_ns\":null,\"task_count\":null", out);
		if (snapshot->has_gpu)
			fprintf(out, ",\"gpu_ns\":%llu", (unsigned long long)s->work.gpu_ns);
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
	stat_summaries_free(summaries, count);
}

/* A member "name":S naming the helper, where the group has one. */
static void json_helper(FILE *out, const struct stat_snapshot *snapshot, __u32 tgid,
			const char *member, __u64 helper)
{
	if (!helper)
		return;
	if (helper == STAT_OP_NOT_SEEN) {
		fputs(",\"launch_seen\":false", out);
		return;
	}
	fprintf(out, ",\"%s\":", member);
	json_name(out, snapshot, tgid, helper);
}

static void print_groups_json(FILE *out, const struct stat_snapshot *snapshot, __u32 tgid,
			      enum stat_table table, bool split)
{
	struct stat_group *groups;
	size_t count = stat_group(snapshot, tgid, table, split, &groups);

	for (size_t i = 0; i < count; i++) {
		struct stat_group *g = &groups[i];

		fputs(i ? ",{" : "{", out);
		switch (table) {
		case STAT_FALLBACKS:
			fputs("\"operation\":", out);
			json_name(out, snapshot, tgid, g->name);
			fputs(",\"root\":", out);
			json_name(out, snapshot, tgid, g->root_name);
			fprintf(out, ",\"reason\":\"%s\",\"count\":%llu,\"detail\":",
				optrace_fallback_reason_name((int)g->kind),
				(unsigned long long)g->count);
			json_name(out, snapshot, tgid, g->detail);
			break;
		case STAT_TASKS:
			fputs("\"name\":", out);
			json_name(out, snapshot, tgid, g->name);
			fprintf(out, ",\"variant\":\"%s\",\"operation\":",
				optrace_variant_name((int)g->kind));
			json_name(out, snapshot, tgid, g->root_name);
			json_helper(out, snapshot, tgid, "launched_by", g->op_name);
			fputc(',', out);
			json_latency(out, &g->latency, g->durations);
			break;
		case STAT_LAUNCHES:
			fputs("\"name\":", out);
			json_name(out, snapshot, tgid, g->name);
			fputs(",\"operation\":", out);
			json_name(out, snapshot, tgid, g->root_name);
			json_helper(out, snapshot, tgid, "launched_by", g->op_name);
			fprintf(out, ",\"count\":%llu,\"points\":%llu",
				(unsigned long long)g->count, (unsigned long long)g->points);
			break;
		case STAT_WAITS:
			fprintf(out, "\"kind\":\"%s\",\"operation\":",
				optrace_wait_kind_name((int)g->kind));
			json_name(out, snapshot, tgid, g->root_name);
			json_helper(out, snapshot, tgid, "helper", g->op_name);
			fputc(',', out);
			json_latency(out, &g->latency, g->durations);
			break;
		}
		fputc('}', out);
	}
	stat_groups_free(groups, count);
}

static void print_process_json(FILE *out, const struct stat_snapshot *snapshot, __u32 tgid,
			       const struct stat_print_options *options)
{
	bool split = options->show_helpers;
	const struct process_row *process = stat_process(snapshot, tgid);

	fprintf(out, "{\"pid\":%u,", tgid);
	if (process) {
		char comm[17];

		memcpy(comm, process->info.comm, 16);
		comm[16] = '\0';
		fputs("\"command\":", out);
		json_string(out, comm);
		fputc(',', out);
		if (process->rank_count > 0)
			fprintf(out, "\"rank\":%d,\"rank_count\":%d,", process->rank,
				process->rank_count);
		/* Past its share of the kernel's tables: what it lost, not another's. */
		fprintf(out, "\"rows_refused\":%llu,", (unsigned long long)process->info.refused);
	}
	print_ops_json(out, snapshot, tgid);
	fputs(",\"fallbacks\":[", out);
	print_groups_json(out, snapshot, tgid, STAT_FALLBACKS, split);
	fputs("],\"tasks\":[", out);
	print_groups_json(out, snapshot, tgid, STAT_TASKS, split);
	fputs("],\"launches\":[", out);
	print_groups_json(out, snapshot, tgid, STAT_LAUNCHES, split);
	fputs("],\"waits\":[", out);
	print_groups_json(out, snapshot, tgid, STAT_WAITS, split);
	fputc(']', out);
	if (snapshot->gpu_traced) {
		fputs(",\"gpu\":", out);
		stat_gpu_print(out, snapshot, tgid, options);
	}
	fputc('}', out);
}

void stat_json_print(FILE *out, const struct stat_snapshot *snapshot, const __u32 *tgids,
		     size_t count, const struct stat_print_options *options)
{
	fputs("{\"processes\":[", out);
	for (size_t i = 0; i < count; i++) {
		if (i)
			fputc(',', out);
		print_process_json(out, snapshot, tgids[i], options);
	}
	fputs("],\"lost\":{", out);
	for (int i = 0; i < STAT_LOSS__COUNT; i++)
		fprintf(out, "%s\"%s\":%llu", i ? "," : "", stat_loss_name(i),
			(unsigned long long)snapshot->losses[i]);
	fprintf(out, ",\"rows_refused\":%llu", (unsigned long long)stat_rows_refused(snapshot));
	for (size_t i = 0; i < snapshot->more_loss_count; i++) {
		fputc(',', out);
		json_string(out, snapshot->more_losses[i].name);
		fprintf(out, ":%llu", (unsigned long long)snapshot->more_losses[i].value);
	}
	fputc('}', out);
	if (options->json_members)
		options->json_members(out, options->json_members_ctx);
	fputs("}\n", out);
}
