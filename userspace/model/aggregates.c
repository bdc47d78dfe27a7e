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

#include "model/aggregates.h"

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

const struct process_row *stat_process(const struct stat_snapshot *snapshot, __u32 tgid)
{
	for (size_t i = 0; i < snapshot->process_count; i++) {
		if (snapshot->processes[i].tgid == tgid)
			return &snapshot->processes[i];
	}
	return NULL;
}

int stat_mode_slot(int mode)
{
	return mode >= 0 && mode < OPTRACE_MODE__COUNT ? mode : OPTRACE_MODE__COUNT;
}

int stat_reason_slot(int reason)
{
	return reason >= 0 && reason < OPTRACE_MODE_REASON__COUNT ? reason
								  : OPTRACE_MODE_REASON__COUNT;
}

size_t stat_summarize_ops(const struct stat_snapshot *snapshot, __u32 tgid, struct op_summary **out)
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
		s->modes[stat_mode_slot(row->key.mode)] += row->latency.count;
		s->reasons[stat_mode_slot(row->key.mode)][stat_reason_slot(row->key.mode_reason)] +=
			row->latency.count;
		if (row->key.status != OPTRACE_STATUS_OK)
			s->errors += row->latency.count;
	}
	*out = summaries;
	return summaries ? count : 0;
}

/* Slowest first: what the user wants to see first. */
int stat_compare_summaries(const void *a, const void *b)
{
	const struct op_summary *x = a, *y = b;

	if (x->latency.total_ns != y->latency.total_ns)
		return x->latency.total_ns > y->latency.total_ns ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}
