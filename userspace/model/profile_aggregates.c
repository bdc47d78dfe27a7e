// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "model/profile_aggregates.h"

enum table { TABLE_OPS, TABLE_TASKS, TABLE_LAUNCHES, TABLE_FALLBACKS, TABLE_WAITS };

static uint64_t hash_key(enum table table, const void *key, size_t size)
{
	return hash_bytes(HASH_SEED ^ table, key, size);
}

/*
 * The row of table with this key (rows are key then value), added zeroed
 * when new. Rows are found through a hash of the key; a collision falls back
 * to a scan.
 */
static void *find_row(struct report_builder *builder, enum table table, void **rows, size_t *count,
		      size_t row_size, const void *key, size_t key_size, uint32_t tgid)
{
	uint64_t hash = hash_key(table, key, key_size);
	uintptr_t found = (uintptr_t)idmap_get(&builder->index, tgid, hash);
	char *row;

	if (found && !memcmp((char *)*rows + (found - 1) * row_size, key, key_size))
		return (char *)*rows + (found - 1) * row_size;
	if (found) {
		for (size_t i = 0; i < *count; i++) {
			row = (char *)*rows + i * row_size;
			if (!memcmp(row, key, key_size))
				return row;
		}
	}
	if ((*count & (*count - 1)) == 0) {
		void *grown = realloc(*rows, (*count ? *count * 2 : 16) * row_size);

		if (!grown)
			goto nomem;
		*rows = grown;
	}
	row = (char *)*rows + *count * row_size;
	memset(row, 0, row_size);
	memcpy(row, key, key_size);
	(*count)++;
	if (!found && idmap_put(&builder->index, tgid, hash, (void *)(uintptr_t)*count))
		goto nomem;
	return row;

nomem:
	builder->error = -ENOMEM;
	return NULL;
}

#define FIND(builder, table, array, counter, key)                                          \
	find_row(builder, table, (void **)&(builder)->snapshot.array,                      \
		 &(builder)->snapshot.counter, sizeof(*(builder)->snapshot.array), &(key), \
		 sizeof(key), (key).tgid)

/* One duration into a row: its histogram, and the duration itself for exact percentiles. */
static void record_latency(struct report_builder *builder, struct latency *latency,
			   struct durations **durations, uint64_t duration_ns, uint64_t self_ns)
{
	struct latency one = { .count = 1,
			       .total_ns = duration_ns,
			       .self_ns = self_ns,
			       .min_ns = duration_ns,
			       .max_ns = duration_ns };
	int slot = 0;

	while (slot + 1 < STAT_HIST_SLOTS && (1ULL << (slot + 1)) <= duration_ns)
		slot++;
	one.hist[slot] = 1;
	latency_merge(latency, &one);
	if (durations_add(durations, duration_ns))
		builder->error = -ENOMEM;
}

/* The call site an operation's row is keyed by: with --by-site, and a helper's with --internal. */
static __u64 keyed_callsite(const struct report_builder *builder, const struct profile_op *op)
{
	return (op->depth ? builder->internal : builder->by_site) ? op->callsite : 0;
}

/*
 * The path of parent's children: its ancestors are open while it is, and
 * each keeps its own children's path once known, so that the report is
 * linear in depth (40,000 nested levels took minutes when each op walked
 * all its ancestors). The ancestors that do not know theirs yet are taken
 * from the outermost down, without recursion: a chain may be long.
 */
static __u32 tree_path(struct report_builder *builder, const struct profile_op *parent)
{
	struct profile_op *few[64], **chain = few;
	struct profile_op *op = (struct profile_op *)parent;
	size_t unknown = 0, at = 0;
	__u32 path = 0;

	for (; op && !op->children_path_known; op = op->parent)
		unknown++;
	if (op)
		path = op->children_path;
	if (unknown > sizeof(few) / sizeof(few[0])) {
		chain = malloc(unknown * sizeof(*chain));
		if (!chain) {
			builder->error = -ENOMEM;
			return 0;
		}
	}
	for (op = (struct profile_op *)parent; at < unknown; op = op->parent)
		chain[at++] = op;
	while (at-- > 0) {
		path = stat_tree_path(path, chain[at]->name, keyed_callsite(builder, chain[at]));
		chain[at]->children_path = path;
		chain[at]->children_path_known = true;
	}
	if (chain != few)
		free(chain);
	return path;
}

static void on_op_done(void *ctx, const struct profile *profile, const struct profile_op *op)
{
	struct report_builder *builder = ctx;
	uint64_t duration = op->end_ns - op->begin_ns;
	struct op_key key = {
		.tgid = op->tgid,
		.depth = op->depth,
		.name = op->name,
		.parent_name = op->parent_name,
		.root_name = op->depth ? op->root_name : 0,
		.mode = op->mode == PROFILE_MODE_UNSET ? STAT_MODE_UNSET : (__u8)op->mode,
		.mode_reason = (__u8)op->mode_reason,
		.fallback_reason = (__u8)op->fallback_reason,
		.status = (__u8)op->status,
	};
	struct op_row *row;

	if (op->fallback_reason != OPTRACE_FALLBACK_NONE)
		key.fallback_detail = op->fallback_detail;
	key.callsite = keyed_callsite(builder, op);
	key.path = tree_path(builder, op->parent);
	row = FIND(builder, TABLE_OPS, ops, op_count, key);

	(void)profile;
	if (!row)
		return;
	record_latency(builder, &row->latency, &row->durations, duration,
		       duration > op->child_ns ? duration - op->child_ns : 0);
	/* What it set going, its helpers' included: all is known once it is done. */
	row->work.task_ns += op->tree_task_ns;
	row->work.task_runs += op->tree_runs;
	row->work.gpu_ns += op->tree_gpu_ns;
}

static void on_task_run(void *ctx, const struct profile *profile, const struct profile_run *run)
{
	struct report_builder *builder = ctx;
	struct task_key key = {
		.tgid = run->tgid,
		.variant = (__u32)run->variant,
		.name = run->task_name,
		.root_name = run->root_name,
		/* Launched by a helper, not by the operation the user called. */
		.op_name = run->op && run->op->depth ? run->op->name : 0,
	};
	struct task_row *row = FIND(builder, TABLE_TASKS, tasks, task_count, key);

	(void)profile;
	if (row)
		record_latency(builder, &row->latency, &row->durations, run->end_ns - run->begin_ns,
			       run->end_ns - run->begin_ns);
}

static void on_task_launch(void *ctx, const struct profile *profile, uint32_t tgid,
			   uint64_t task_name, const struct profile_op *op, uint64_t root_name,
			   uint32_t points)
{
	struct report_builder *builder = ctx;
	struct launch_key key = { .tgid = tgid,
				  .name = task_name,
				  .root_name = root_name,
				  .op_name = op && op->depth ? op->name : 0 };
	struct launch_row *row = FIND(builder, TABLE_LAUNCHES, launches, launch_count, key);

	(void)profile;
	if (row) {
		row->stats.count++;
		row->stats.points += points;
	}
}

static void on_wait(void *ctx, const struct profile *profile, const struct profile_wait *wait)
{
	struct report_builder *builder = ctx;
	struct wait_key key = { .tgid = wait->tgid,
				.kind = (__u32)wait->kind,
				.root_name = wait->root_name,
				.op_name = wait->op_name };
	struct wait_row *row = FIND(builder, TABLE_WAITS, waits, wait_count, key);

	(void)profile;
	if (row)
		record_latency(builder, &row->latency, &row->durations,
			       wait->end_ns - wait->begin_ns, wait->end_ns - wait->begin_ns);
}

static void on_gpu(void *ctx, const struct profile *profile, const struct profile_gpu *gpu)
{
	struct report_builder *builder = ctx;

	gpu_report_add(&builder->gpu, profile, gpu);
}

void report_builder_init(struct report_builder *builder, struct profile_consumer *consumer,
			 bool by_site, bool internal)
{
	memset(builder, 0, sizeof(*builder));
	builder->by_site = by_site;
	builder->internal = internal;
	*consumer = (struct profile_consumer){
		.ctx = builder,
		.op_done = on_op_done,
		.task_run = on_task_run,
		.task_launch = on_task_launch,
		.wait = on_wait,
		.gpu = on_gpu,
	};
	gpu_report_init(&builder->gpu);
}

int report_builder_finish(struct report_builder *builder, const struct profile *profile)
{
	struct stat_snapshot *snapshot = &builder->snapshot;
	size_t count = 0;

	if (builder->error || builder->gpu.error)
		return builder->error ?: builder->gpu.error;
	snapshot->work_per_op = true;
	if (stat_derive_fallbacks(snapshot))
		return -ENOMEM;
	snapshot->has_gpu = profile->gpu != NULL;
	snapshot->strings = calloc(profile->strings.count + 1, sizeof(*snapshot->strings));
	if (!snapshot->strings)
		return -ENOMEM;
	for (size_t i = 0; i < profile->strings.capacity; i++) {
		const struct idmap_slot *slot = &profile->strings.slots[i];
		struct string_row *row;
		const char *text;
		size_t length;

		if (!slot->value)
			continue;
		row = &snapshot->strings[count++];
		row->key.tgid = slot->tgid;
		row->key.address = slot->id;
		text = profile_string(profile, slot->tgid, slot->id);
		row->value.unreadable = !strcmp(text, "(unreadable)");
		/*
		 * Whole, as the capture keeps it: a record holds 127 bytes, and
		 * the model adds "..." to one the kernel cut (a longer text).
		 */
		length = strlen(text);
		row->value.truncated = length >= RECORD_STRING_LEN;
		snapshot->losses[STAT_LOSS_STRING_UNREADABLE] += row->value.unreadable;
		snapshot->losses[STAT_LOSS_STRING_TRUNCATED] += row->value.truncated;
		row->text = strdup(text);
		if (!row->text)
			return -ENOMEM;
		if (length >= sizeof(row->value.text))
			length = sizeof(row->value.text) - 1;
		memcpy(row->value.text, text, length);
	}
	snapshot->string_count = count;
	snapshot->losses[STAT_LOSS_UNMATCHED] += profile->stats.unmatched;
	return 0;
}

/* What record.c counts as lost: in every report's JSON, 0 when it is not. */
static const char *const capture_losses[] = { "ringbuf_full", "strings", "gpu_unreadable",
					      "gpu_ringbuf_full" };

int report_builder_add_capture(struct report_builder *builder, const struct capture_status *status)
{
	struct stat_snapshot *snapshot = &builder->snapshot;
	const struct capture_trailer *trailer = &status->trailer;
	int err = 0;

	for (size_t i = 0; !err && i < sizeof(capture_losses) / sizeof(capture_losses[0]); i++)
		err = stat_add_loss(snapshot, capture_losses[i], 0);
	err = err
		      ?: stat_add_loss(snapshot, "unwritten",
				       status->has_trailer ? trailer->records_lost : 0);
	for (size_t i = 0; !err && status->has_trailer && i < trailer->counter_count; i++) {
		const struct capture_counter *counter = &trailer->counters[i];

		if (!strncmp(counter->name, "lost.", 5) && counter->name[5])
			err = stat_add_loss(snapshot, counter->name + 5, counter->value);
	}
	return err;
}

void report_builder_free(struct report_builder *builder)
{
	stat_snapshot_free(&builder->snapshot);
	idmap_free(&builder->index);
	gpu_report_free(&builder->gpu);
}
