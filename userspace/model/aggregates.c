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

#include "common/hash.h"
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
	for (size_t i = 0; i < snapshot->op_count; i++)
		durations_free(snapshot->ops[i].durations);
	for (size_t i = 0; i < snapshot->task_count; i++)
		durations_free(snapshot->tasks[i].durations);
	for (size_t i = 0; i < snapshot->wait_count; i++)
		durations_free(snapshot->waits[i].durations);
	for (size_t i = 0; i < snapshot->string_count; i++)
		free(snapshot->strings[i].text);
	for (size_t i = 0; i < snapshot->more_loss_count; i++)
		free(snapshot->more_losses[i].name);
	free(snapshot->more_losses);
	free(snapshot->processes);
	free(snapshot->gpus);
	free(snapshot->gpu_drops);
	free(snapshot->ops);
	free(snapshot->tasks);
	free(snapshot->launches);
	free(snapshot->fallbacks);
	free(snapshot->waits);
	free(snapshot->strings);
	memset(snapshot, 0, sizeof(*snapshot));
}

int stat_derive_fallbacks(struct stat_snapshot *snapshot)
{
	struct fallback_row *rows = calloc(snapshot->op_count + 1, sizeof(*rows));
	size_t count = 0;

	if (!rows)
		return -ENOMEM;
	for (size_t i = 0; i < snapshot->op_count; i++) {
		const struct op_key *op = &snapshot->ops[i].key;
		struct fallback_key key = {
			.tgid = op->tgid,
			.reason = op->fallback_reason,
			.name = op->name,
			.detail = op->fallback_detail,
			.root_name = op->depth ? op->root_name : 0,
		};
		size_t j;

		if (op->fallback_reason == OPTRACE_FALLBACK_NONE)
			continue;
		for (j = 0; j < count && memcmp(&rows[j].key, &key, sizeof(key)); j++)
			;
		if (j == count)
			rows[count++].key = key;
		rows[j].count += snapshot->ops[i].latency.count;
	}
	free(snapshot->fallbacks);
	snapshot->fallbacks = rows;
	snapshot->fallback_count = count;
	return 0;
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
	double rank = p * (double)latency->count, seen = 0, high;

	if (!latency->count)
		return 0;
	if (latency->min_ns == latency->max_ns)
		return (double)latency->max_ns;
	for (int i = 0; i < STAT_HIST_SLOTS; i++) {
		seen += (double)latency->hist[i];
		if (!latency->hist[i] || seen < rank)
			continue;
		/* Slot i holds [2^i, 2^(i+1)); the last, anything longer. */
		high = i + 1 < STAT_HIST_SLOTS ? (double)(1ULL << (i + 1))
					       : (double)latency->max_ns;
		return high < (double)latency->max_ns ? high : (double)latency->max_ns;
	}
	return (double)latency->max_ns;
}

struct stat_quantile stat_quantile(const struct latency *latency, struct durations *durations,
				   double p)
{
	struct stat_quantile q = { .precision = STAT_AT_MOST };

	if (durations && durations->count) {
		q.ns = durations_quantile(durations, p);
		q.precision = durations_exact(durations) ? STAT_EXACT : STAT_WITHIN;
		return q;
	}
	q.ns = latency_percentile(latency, p);
	if (latency->count && latency->min_ns == latency->max_ns)
		q.precision = STAT_EXACT;
	return q;
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

/* stat: the work of the operations the user called, from the task table. */
static void work_from_tasks(const struct stat_snapshot *snapshot, __u32 tgid, struct op_summary *s)
{
	s->work_known = s->depth == 0;
	for (size_t i = 0; s->work_known && i < snapshot->task_count; i++) {
		const struct task_row *row = &snapshot->tasks[i];

		if (row->key.tgid != tgid || row->key.root_name != s->name)
			continue;
		s->work.task_ns += row->latency.total_ns;
		s->work.task_runs += row->latency.count;
	}
	for (size_t i = 0; s->work_known && i < snapshot->gpu_count; i++) {
		const struct gpu_row *row = &snapshot->gpus[i];

		if (row->key.tgid == tgid && row->key.root_name == s->name)
			s->work.gpu_ns += row->totals.gpu_ns;
	}
}

__u32 stat_tree_path(__u32 parent_path, __u64 name, __u64 callsite)
{
	__u64 words[3] = { parent_path, name, callsite };
	__u64 h = hash_bytes(HASH_SEED, words, sizeof(words));

	h ^= h >> 32; /* folded */
	return (__u32)h ?: 1;
}

bool stat_summary_is_child(const struct op_summary *child, const struct op_summary *parent)
{
	if (child->depth != parent->depth + 1 || child->parent_name != parent->name)
		return false;
	return !child->path ||
	       child->path == stat_tree_path(parent->path, parent->name, parent->callsite);
}

/* What rows merge into one summary by: all of the key but mode, reason and status. */
static uint64_t summary_hash(const struct op_key *key)
{
	uint64_t words[6] = { key->name,      key->depth,    key->parent_name,
			      key->root_name, key->callsite, key->path };

	return hash_bytes(HASH_SEED, words, sizeof(words));
}

static bool summary_is(const struct op_summary *s, const struct op_key *key)
{
	return s->name == key->name && s->depth == key->depth &&
	       s->parent_name == key->parent_name && s->root_name == key->root_name &&
	       s->callsite == key->callsite && s->path == key->path;
}

size_t stat_summarize_ops(const struct stat_snapshot *snapshot, __u32 tgid, struct op_summary **out)
{
	struct op_summary *summaries = calloc(snapshot->op_count + 1, sizeof(*summaries));
	size_t count = 0, slots = 16;
	uint32_t *index; /* open addressing: a summary's number + 1, or 0 */
	int err = 0;

	/* One summary per row at most: a table twice that never fills (deep trees are many). */
	while (slots < 2 * (snapshot->op_count + 1))
		slots *= 2;
	index = calloc(slots, sizeof(*index));
	if (!index) {
		free(summaries);
		summaries = NULL;
	}
	for (size_t i = 0; summaries && i < snapshot->op_count; i++) {
		const struct op_row *row = &snapshot->ops[i];
		struct op_summary *s = NULL;
		size_t slot;

		if (row->key.tgid != tgid)
			continue;
		for (slot = summary_hash(&row->key) & (slots - 1); index[slot];
		     slot = (slot + 1) & (slots - 1)) {
			if (summary_is(&summaries[index[slot] - 1], &row->key)) {
				s = &summaries[index[slot] - 1];
				break;
			}
		}
		if (!s) {
			index[slot] = (uint32_t)count + 1;
			s = &summaries[count++];
			s->name = row->key.name;
			s->parent_name = row->key.parent_name;
			s->root_name = row->key.root_name;
			s->callsite = row->key.callsite;
			s->depth = row->key.depth;
			s->path = row->key.path;
		}
		latency_merge(&s->latency, &row->latency);
		err = err ?: durations_merge(&s->durations, row->durations);
		s->work.task_ns += row->work.task_ns;
		s->work.task_runs += row->work.task_runs;
		s->work.gpu_ns += row->work.gpu_ns;
		s->modes[stat_mode_slot(row->key.mode)] += row->latency.count;
		s->reasons[stat_mode_slot(row->key.mode)][stat_reason_slot(row->key.mode_reason)] +=
			row->latency.count;
		if (row->key.status != OPTRACE_STATUS_OK)
			s->errors += row->latency.count;
	}
	for (size_t i = 0; i < count; i++) {
		if (snapshot->work_per_op)
			summaries[i].work_known = true;
		else
			work_from_tasks(snapshot, tgid, &summaries[i]);
		/* Without its durations a percentile is the histogram's bound. */
		if (err) {
			durations_free(summaries[i].durations);
			summaries[i].durations = NULL;
		}
	}
	free(index);
	if (count)
		qsort(summaries, count, sizeof(*summaries), stat_compare_summaries);
	*out = summaries;
	return summaries ? count : 0;
}

void stat_summaries_free(struct op_summary *summaries, size_t count)
{
	for (size_t i = 0; summaries && i < count; i++)
		durations_free(summaries[i].durations);
	free(summaries);
}

__u64 stat_summary_cost(const struct op_summary *s)
{
	__u64 cost = s->latency.total_ns;

	if (s->work.task_ns > cost)
		cost = s->work.task_ns;
	if (s->work.gpu_ns > cost)
		cost = s->work.gpu_ns;
	return cost;
}

/* What the user waits for longest first; then by name, for a stable order. */
int stat_compare_summaries(const void *a, const void *b)
{
	const struct op_summary *x = a, *y = b;
	__u64 cx = stat_summary_cost(x), cy = stat_summary_cost(y);

	if (cx != cy)
		return cx > cy ? -1 : 1;
	if (x->latency.total_ns != y->latency.total_ns)
		return x->latency.total_ns > y->latency.total_ns ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

/* ---- the other tables, grouped ----------------------------------------------- */

/* Row i of table as a group of its own (split or not: op_name is the caller's to drop). */
static bool row_group(const struct stat_snapshot *snapshot, enum stat_table table, size_t i,
		      __u32 tgid, struct stat_group *g, struct durations **durations)
{
	memset(g, 0, sizeof(*g));
	*durations = NULL;
	switch (table) {
	case STAT_TASKS: {
		const struct task_row *row = &snapshot->tasks[i];

		if (row->key.tgid != tgid)
			return false;
		*g = (struct stat_group){ .name = row->key.name,
					  .kind = row->key.variant,
					  .root_name = row->key.root_name,
					  .op_name = row->key.op_name,
					  .latency = row->latency };
		*durations = row->durations;
		return true;
	}
	case STAT_LAUNCHES: {
		const struct launch_row *row = &snapshot->launches[i];

		if (row->key.tgid != tgid)
			return false;
		*g = (struct stat_group){ .name = row->key.name,
					  .root_name = row->key.root_name,
					  .op_name = row->key.op_name,
					  .count = row->stats.count,
					  .points = row->stats.points };
		return true;
	}
	case STAT_WAITS: {
		const struct wait_row *row = &snapshot->waits[i];

		if (row->key.tgid != tgid)
			return false;
		*g = (struct stat_group){ .kind = row->key.kind,
					  .root_name = row->key.root_name,
					  .op_name = row->key.op_name,
					  .latency = row->latency };
		*durations = row->durations;
		return true;
	}
	case STAT_FALLBACKS: {
		const struct fallback_row *row = &snapshot->fallbacks[i];

		if (row->key.tgid != tgid)
			return false;
		*g = (struct stat_group){ .name = row->key.name,
					  .kind = row->key.reason,
					  .root_name = row->key.root_name,
					  .detail = row->key.detail,
					  .count = row->count };
		return true;
	}
	}
	return false;
}

static size_t table_rows(const struct stat_snapshot *snapshot, enum stat_table table)
{
	switch (table) {
	case STAT_TASKS:
		return snapshot->task_count;
	case STAT_LAUNCHES:
		return snapshot->launch_count;
	case STAT_WAITS:
		return snapshot->wait_count;
	case STAT_FALLBACKS:
		return snapshot->fallback_count;
	}
	return 0;
}

static bool same_group(const struct stat_group *a, const struct stat_group *b)
{
	return a->name == b->name && a->kind == b->kind && a->root_name == b->root_name &&
	       a->op_name == b->op_name && a->detail == b->detail;
}

static __u64 group_weight(const struct stat_group *g)
{
	return g->latency.count ? g->latency.total_ns : g->count;
}

static int compare_groups(const void *a, const void *b)
{
	const struct stat_group *x = a, *y = b;
	__u64 wx = group_weight(x), wy = group_weight(y);

	if (wx != wy)
		return wx > wy ? -1 : 1;
	if (x->root_name != y->root_name)
		return x->root_name < y->root_name ? -1 : 1;
	if (x->op_name != y->op_name)
		return x->op_name < y->op_name ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

size_t stat_group(const struct stat_snapshot *snapshot, __u32 tgid, enum stat_table table,
		  bool split, struct stat_group **out)
{
	size_t rows = table_rows(snapshot, table), count = 0;
	struct stat_group *groups = calloc(rows + 1, sizeof(*groups));
	int err = 0;

	for (size_t i = 0; groups && i < rows; i++) {
		struct durations *durations;
		struct stat_group g, *into = NULL;

		if (!row_group(snapshot, table, i, tgid, &g, &durations))
			continue;
		if (!split && table != STAT_FALLBACKS)
			g.op_name = 0;
		for (size_t j = 0; j < count && !into; j++) {
			if (same_group(&groups[j], &g))
				into = &groups[j];
		}
		if (!into) {
			into = &groups[count++];
			*into = g;
			into->latency = (struct latency){ 0 };
			into->count = into->points = 0;
		}
		latency_merge(&into->latency, &g.latency);
		into->count += g.count;
		into->points += g.points;
		err = err ?: durations_merge(&into->durations, durations);
	}
	for (size_t i = 0; err && i < count; i++) {
		durations_free(groups[i].durations);
		groups[i].durations = NULL;
	}
	if (count)
		qsort(groups, count, sizeof(*groups), compare_groups);
	*out = groups;
	return groups ? count : 0;
}

void stat_groups_free(struct stat_group *groups, size_t count)
{
	for (size_t i = 0; groups && i < count; i++)
		durations_free(groups[i].durations);
	free(groups);
}

__u64 stat_rows_refused(const struct stat_snapshot *snapshot)
{
	__u64 refused = 0;

	for (size_t i = 0; i < snapshot->process_count; i++)
		refused += snapshot->processes[i].info.refused;
	return refused;
}
