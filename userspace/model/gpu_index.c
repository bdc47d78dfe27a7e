// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <linux/types.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <optrace/gpu.h>

#include "model/gpu_index.h"

void gpu_index_init(struct gpu_index *index)
{
	memset(index, 0, sizeof(*index));
}

void gpu_index_free(struct gpu_index *index)
{
	for (size_t i = 0; i < index->names.capacity; i++)
		free(index->names.slots[i].value);
	for (size_t i = 0; i < index->threads.capacity; i++)
		free(index->threads.slots[i].value);
	idmap_free(&index->names);
	idmap_free(&index->threads);
	free(index->activities);
	free(index->launches);
	free(index->by_launch);
	memset(index, 0, sizeof(*index));
}

static void *grow(void *array, size_t *capacity, size_t count, size_t size)
{
	size_t wanted = *capacity ? *capacity * 2 : 1024;
	void *grown;

	if (count < *capacity)
		return array;
	grown = realloc(array, wanted * size);
	if (grown)
		*capacity = wanted;
	return grown;
}

static struct gpu_activity *new_activity(struct gpu_index *index, uint32_t tgid)
{
	struct gpu_activity *grown = grow(index->activities, &index->activity_capacity,
					  index->activity_count, sizeof(*grown));
	struct gpu_activity *activity;

	if (!grown)
		return NULL;
	index->activities = grown;
	activity = &index->activities[index->activity_count++];
	memset(activity, 0, sizeof(*activity));
	activity->tgid = tgid;
	activity->launch = GPU_NO_LAUNCH;
	return activity;
}

/*
 * CUPTI gives 0 or INT64_MIN for times it lacks (Legion issue #1800); a
 * record from the traced process may hold anything. Negative as int64 is
 * never a monotonic time, and would wrap sums of durations.
 */
static bool times_valid(const struct optrace_gpu_head *head, uint64_t start_ns, uint64_t end_ns)
{
	return !(head->flags & OPTRACE_GPU_F_TIME_INVALID) && start_ns && end_ns >= start_ns &&
	       (int64_t)start_ns > 0 && (int64_t)end_ns > 0;
}

static void set_times(struct gpu_index *index, struct gpu_activity *activity,
		      const struct optrace_gpu_head *head, uint64_t start_ns, uint64_t end_ns)
{
	activity->kind = head->type;
	activity->start_ns = start_ns;
	activity->end_ns = end_ns;
	/* The collector zeroes them already; a record from elsewhere may not. */
	if (!times_valid(head, start_ns, end_ns)) {
		activity->time_invalid = true;
		activity->start_ns = activity->end_ns = 0;
		index->stats.invalid_times++;
	}
}

static int add_kernel(struct gpu_index *index, uint32_t tgid, const struct optrace_gpu_kernel *k)
{
	struct gpu_activity *activity = new_activity(index, tgid);

	if (!activity)
		return -ENOMEM;
	set_times(index, activity, &k->head, k->start_ns, k->end_ns);
	activity->correlation_id = k->correlation_id;
	activity->device_id = k->device_id;
	activity->context_id = k->context_id;
	activity->stream_id = k->stream_id;
	activity->name_id = k->name_id;
	activity->grid[0] = k->grid_x;
	activity->grid[1] = k->grid_y;
	activity->grid[2] = k->grid_z;
	activity->block[0] = k->block_x;
	activity->block[1] = k->block_y;
	activity->block[2] = k->block_z;
	index->stats.kernels++;
	return 0;
}

static int add_memcpy(struct gpu_index *index, uint32_t tgid, const struct optrace_gpu_memcpy *m)
{
	struct gpu_activity *activity = new_activity(index, tgid);

	if (!activity)
		return -ENOMEM;
	set_times(index, activity, &m->head, m->start_ns, m->end_ns);
	activity->correlation_id = m->correlation_id;
	activity->runtime_correlation_id = m->runtime_correlation_id;
	activity->device_id = m->device_id;
	activity->context_id = m->context_id;
	activity->stream_id = m->stream_id;
	activity->copy_kind = m->copy_kind;
	activity->bytes = m->bytes;
	index->stats.copies++;
	return 0;
}

static int add_memset(struct gpu_index *index, uint32_t tgid, const struct optrace_gpu_memset *m)
{
	struct gpu_activity *activity = new_activity(index, tgid);

	if (!activity)
		return -ENOMEM;
	set_times(index, activity, &m->head, m->start_ns, m->end_ns);
	activity->correlation_id = m->correlation_id;
	activity->device_id = m->device_id;
	activity->context_id = m->context_id;
	activity->stream_id = m->stream_id;
	activity->bytes = m->bytes;
	index->stats.memsets++;
	return 0;
}

static int add_api(struct gpu_index *index, uint32_t tgid, const struct optrace_gpu_api *a)
{
	struct gpu_launch *grown =
		grow(index->launches, &index->launch_capacity, index->launch_count, sizeof(*grown));
	struct gpu_launch *launch;

	if (!grown)
		return -ENOMEM;
	index->launches = grown;
	launch = &index->launches[index->launch_count++];
	memset(launch, 0, sizeof(*launch));
	/* The record's own pid is CUPTI's view; the probe's process is the kernel's. */
	launch->tgid = tgid;
	launch->tid = a->tid;
	launch->correlation_id = a->correlation_id;
	launch->cbid = a->cbid;
	launch->api_kind = a->api_kind;
	/* A launch without a usable time belongs to no frame: start 0 says so. */
	if (times_valid(&a->head, a->start_ns, a->end_ns)) {
		launch->start_ns = a->start_ns;
		launch->end_ns = a->end_ns;
	}
	index->stats.launches++;
	return 0;
}

/* The size a record must have for the fields read here. */
static size_t size_needed(uint8_t type)
{
	switch (type) {
	case OPTRACE_GPU_REC_KERNEL:
		return sizeof(struct optrace_gpu_kernel);
	case OPTRACE_GPU_REC_MEMCPY:
		return sizeof(struct optrace_gpu_memcpy);
	case OPTRACE_GPU_REC_MEMSET:
		return sizeof(struct optrace_gpu_memset);
	case OPTRACE_GPU_REC_API:
		return sizeof(struct optrace_gpu_api);
	case OPTRACE_GPU_REC_SYNC:
		return sizeof(struct optrace_gpu_sync);
	case OPTRACE_GPU_REC_DROPPED:
		return sizeof(struct optrace_gpu_dropped);
	default:
		return sizeof(struct optrace_gpu_head);
	}
}

int gpu_index_add(struct gpu_index *index, uint32_t tgid, const void *record, size_t size)
{
	struct optrace_gpu_head head;
	/* Copied out: a capture's record data is 8-byte aligned, a file's is not. */
	union {
		struct optrace_gpu_kernel kernel;
		struct optrace_gpu_memcpy memcpy;
		struct optrace_gpu_memset memset;
		struct optrace_gpu_api api;
		struct optrace_gpu_dropped dropped;
	} r;

	if (size < sizeof(head)) {
		index->stats.malformed++;
		return 0;
	}
	memcpy(&head, record, sizeof(head));
	/* A newer record is longer: its first fields are these. */
	if (head.version < 1 || head.size < size_needed(head.type) ||
	    size < size_needed(head.type)) {
		index->stats.malformed++;
		return 0;
	}
	memcpy(&r, record, size_needed(head.type) < sizeof(r) ? size_needed(head.type) : sizeof(r));
	switch (head.type) {
	case OPTRACE_GPU_REC_KERNEL:
		return add_kernel(index, tgid, &r.kernel);
	case OPTRACE_GPU_REC_MEMCPY:
		return add_memcpy(index, tgid, &r.memcpy);
	case OPTRACE_GPU_REC_MEMSET:
		return add_memset(index, tgid, &r.memset);
	case OPTRACE_GPU_REC_API:
		return add_api(index, tgid, &r.api);
	case OPTRACE_GPU_REC_SYNC:
		index->stats.syncs++;
		return 0;
	case OPTRACE_GPU_REC_DROPPED:
		index->stats.dropped += r.dropped.count;
		return 0;
	default:
		return 0; /* a kind this optrace does not know: skipped */
	}
}

int gpu_index_add_name(struct gpu_index *index, uint32_t tgid, uint32_t name_id, const char *name)
{
	char *copy = strdup(name), *old;

	if (!copy)
		return -ENOMEM;
	old = idmap_get(&index->names, tgid, name_id);
	if (idmap_put(&index->names, tgid, name_id, copy)) {
		free(copy);
		return -ENOMEM;
	}
	free(old);
	return 0;
}

/* ---- sealing ------------------------------------------------------------------ */

static int by_thread_then_time(const void *a, const void *b)
{
	const struct gpu_launch *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	if (x->api_kind != y->api_kind)
		return (int)x->api_kind - (int)y->api_kind;
	if (x->correlation_id != y->correlation_id)
		return x->correlation_id < y->correlation_id ? -1 : 1;
	return 0;
}

static int by_identity(const void *a, const void *b)
{
	const struct gpu_activity *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->correlation_id != y->correlation_id)
		return x->correlation_id < y->correlation_id ? -1 : 1;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	if (x->device_id != y->device_id)
		return x->device_id < y->device_id ? -1 : 1;
	return x->stream_id < y->stream_id ? -1 : x->stream_id > y->stream_id;
}

/*
 * The same record twice (a capture's and an OPTRACE_GPU_FILE's, when both
 * were written) counts once: sorted, then equal neighbours dropped.
 */
static size_t drop_duplicates(void *array, size_t count, size_t size,
			      int (*compare)(const void *, const void *))
{
	char *base = array;
	size_t kept = 0;

	if (!count)
		return 0;
	qsort(base, count, size, compare);
	for (size_t i = 1; i < count; i++) {
		if (!compare(base + kept * size, base + i * size))
			continue;
		kept++;
		if (kept != i)
			memcpy(base + kept * size, base + i * size, size);
	}
	return kept + 1;
}

/*
 * (tgid, correlation id) -> launch index + 1. CUPTI numbers correlations
 * densely per process, so each process gets a plain array; one whose ids
 * are sparse (not CUPTI's, or hostile) gets hashed instead.
 */
struct correlation_table {
	uint32_t tgid;
	uint32_t min;	     /* the smallest id, when dense (a late tracer sees large ones) */
	uint32_t max;	     /* the largest */
	uint32_t *launch_of; /* [id - min] -> launch + 1; NULL: sparse, in the hash */
};

struct correlations {
	struct correlation_table *tables; /* by process id, as the launches are sorted */
	size_t count;
	size_t capacity;
	size_t dense_slots; /* of all tables: bounded by the launches' count */
	struct idmap sparse;
	size_t last; /* the table of the last lookup: records come in runs of one process */
};

static int by_table_tgid(const void *key, const void *member)
{
	uint32_t tgid = *(const uint32_t *)key;
	const struct correlation_table *table = member;

	return tgid < table->tgid ? -1 : tgid > table->tgid;
}

static struct correlation_table *table_of(struct correlations *c, uint32_t tgid)
{
	struct correlation_table *table;

	if (c->count && c->tables[c->last].tgid == tgid)
		return &c->tables[c->last];
	table = c->count ? bsearch(&tgid, c->tables, c->count, sizeof(*c->tables), by_table_tgid)
			 : NULL;
	if (table)
		c->last = (size_t)(table - c->tables);
	return table;
}

static size_t correlation_get(struct correlations *c, uint32_t tgid, uint32_t id)
{
	struct correlation_table *table = table_of(c, tgid);

	if (!table || !id)
		return 0;
	if (!table->launch_of)
		return (uintptr_t)idmap_get(&c->sparse, tgid, id);
	return id >= table->min && id <= table->max ? table->launch_of[id - table->min] : 0;
}

static int correlation_put(struct correlations *c, uint32_t tgid, uint32_t id, size_t launch)
{
	struct correlation_table *table = table_of(c, tgid);

	if (table->launch_of) {
		table->launch_of[id - table->min] = (uint32_t)(launch + 1);
		return 0;
	}
	return idmap_put(&c->sparse, tgid, id, (void *)(uintptr_t)(launch + 1));
}

/*
 * One table per process of the launches (sorted by process first): a plain
 * array over its ids' range when CUPTI's dense numbering makes that small,
 * all arrays together at most 4 slots a launch; else hashed.
 */
static int correlation_tables(struct gpu_index *index, struct correlations *c)
{
	size_t budget = 4 * index->launch_count + 65536;

	for (size_t i = 0; i < index->launch_count;) {
		uint32_t tgid = index->launches[i].tgid, min = UINT32_MAX, max = 0;
		struct correlation_table *table;
		size_t slots;

		for (; i < index->launch_count && index->launches[i].tgid == tgid; i++) {
			uint32_t id = index->launches[i].correlation_id;

			if (!id)
				continue;
			min = id < min ? id : min;
			max = id > max ? id : max;
		}
		if (c->count == c->capacity) {
			size_t capacity = c->capacity ? c->capacity * 2 : 16;
			struct correlation_table *grown =
				realloc(c->tables, capacity * sizeof(*grown));

			if (!grown)
				return -ENOMEM;
			c->tables = grown;
			c->capacity = capacity;
		}
		table = &c->tables[c->count++];
		table->tgid = tgid;
		table->min = min;
		table->max = max;
		table->launch_of = NULL;
		slots = max >= min ? (size_t)(max - min) + 1 : 0;
		if (slots && c->dense_slots + slots <= budget && index->launch_count < UINT32_MAX) {
			table->launch_of = calloc(slots, sizeof(*table->launch_of));
			if (!table->launch_of)
				return -ENOMEM;
			c->dense_slots += slots;
		}
	}
	return 0;
}

static void correlations_free(struct correlations *c)
{
	for (size_t i = 0; i < c->count; i++)
		free(c->tables[i].launch_of);
	free(c->tables);
	idmap_free(&c->sparse);
}

/* The runtime call is the launch when the driver's call shares its id. */
static int map_correlations(struct gpu_index *index, struct correlations *c)
{
	int err = correlation_tables(index, c);

	for (size_t i = 0; !err && i < index->launch_count; i++) {
		const struct gpu_launch *launch = &index->launches[i];
		size_t old = correlation_get(c, launch->tgid, launch->correlation_id);

		if (!launch->correlation_id)
			continue;
		if (old) {
			index->stats.duplicate_apis++;
			if (index->launches[old - 1].api_kind <= launch->api_kind)
				continue;
		}
		err = correlation_put(c, launch->tgid, launch->correlation_id, i);
	}
	return err;
}

static int map_threads(struct gpu_index *index)
{
	for (size_t i = 0; i < index->launch_count;) {
		struct gpu_thread_launches *range = calloc(1, sizeof(*range));
		const struct gpu_launch *first = &index->launches[i];

		if (!range)
			return -ENOMEM;
		range->first = i;
		while (i < index->launch_count && index->launches[i].tgid == first->tgid &&
		       index->launches[i].tid == first->tid)
			i++;
		range->count = i - range->first;
		if (idmap_put(&index->threads, first->tgid, first->tid, range)) {
			free(range);
			return -ENOMEM;
		}
	}
	return 0;
}

/* The totals of what is left once duplicates are gone. */
static void recount(struct gpu_index *index)
{
	struct gpu_index_stats *stats = &index->stats;

	stats->kernels = stats->copies = stats->memsets = stats->invalid_times = 0;
	stats->launches = index->launch_count;
	for (size_t i = 0; i < index->activity_count; i++) {
		const struct gpu_activity *activity = &index->activities[i];

		stats->kernels += activity->kind == OPTRACE_GPU_REC_KERNEL;
		stats->copies += activity->kind == OPTRACE_GPU_REC_MEMCPY;
		stats->memsets += activity->kind == OPTRACE_GPU_REC_MEMSET;
		stats->invalid_times += activity->time_invalid;
	}
}

/*
 * Most API calls launch nothing (allocations, synchronizations, events):
 * once linked, only calls that launched work are kept, in their order, and
 * the arrays shrink to what they hold. Memory is what attribution needs.
 */
static int drop_idle_launches(struct gpu_index *index)
{
	size_t *renumbered = malloc((index->launch_count + 1) * sizeof(*renumbered));
	size_t kept = 0;
	void *shrunk;

	if (!renumbered)
		return -ENOMEM;
	for (size_t i = 0; i < index->launch_count; i++)
		renumbered[i] = GPU_NO_LAUNCH;
	for (size_t i = 0; i < index->activity_count; i++) {
		if (index->activities[i].launch != GPU_NO_LAUNCH)
			renumbered[index->activities[i].launch] = 0;
	}
	for (size_t i = 0; i < index->launch_count; i++) {
		if (renumbered[i] == GPU_NO_LAUNCH)
			continue;
		renumbered[i] = kept;
		index->launches[kept++] = index->launches[i];
	}
	for (size_t i = 0; i < index->activity_count; i++) {
		if (index->activities[i].launch != GPU_NO_LAUNCH)
			index->activities[i].launch = renumbered[index->activities[i].launch];
	}
	free(renumbered);
	index->launch_count = kept;
	shrunk = realloc(index->launches, (kept ? kept : 1) * sizeof(*index->launches));
	if (shrunk) {
		index->launches = shrunk;
		index->launch_capacity = kept ? kept : 1;
	}
	shrunk = realloc(index->activities, (index->activity_count ? index->activity_count : 1) *
						    sizeof(*index->activities));
	if (shrunk) {
		index->activities = shrunk;
		index->activity_capacity = index->activity_count ? index->activity_count : 1;
	}
	return 0;
}

/*
 * Each launch's activities side by side in by_launch, unlaunched ones last:
 * a counting sort of indices by launch (a comparison sort of millions of
 * records costs seconds), keeping each launch's in the order they came.
 */
static int group_by_launch(struct gpu_index *index)
{
	size_t count = index->activity_count, next_free = 0;

	if (!count)
		return 0;
	index->by_launch = malloc(count * sizeof(*index->by_launch));
	if (!index->by_launch)
		return -ENOMEM;
	for (size_t i = 0; i < count; i++) {
		if (index->activities[i].launch != GPU_NO_LAUNCH)
			index->launches[index->activities[i].launch].activity_count++;
	}
	for (size_t i = 0; i < index->launch_count; i++) {
		index->launches[i].first_activity = next_free;
		next_free += index->launches[i].activity_count;
		index->launches[i].activity_count = 0;
	}
	for (size_t i = 0; i < count; i++) {
		struct gpu_launch *launch;

		if (index->activities[i].launch == GPU_NO_LAUNCH) {
			index->by_launch[next_free++] = i;
			continue;
		}
		launch = &index->launches[index->activities[i].launch];
		index->by_launch[launch->first_activity + launch->activity_count++] = i;
	}
	/* Each launch's by device time (an insertion sort: they are one or a few). */
	for (size_t l = 0; l < index->launch_count; l++) {
		size_t *run = index->by_launch + index->launches[l].first_activity;

		for (uint32_t i = 1; i < index->launches[l].activity_count; i++) {
			size_t moving = run[i];
			uint32_t j = i;

			for (; j > 0 && index->activities[run[j - 1]].start_ns >
						index->activities[moving].start_ns;
			     j--)
				run[j] = run[j - 1];
			run[j] = moving;
		}
	}
	return 0;
}

const struct gpu_activity *gpu_launch_activity(const struct gpu_index *index,
					       const struct gpu_launch *launch, uint32_t i)
{
	return &index->activities[index->by_launch[launch->first_activity + i]];
}

int gpu_index_seal(struct gpu_index *index)
{
	struct correlations by_correlation = { 0 };
	size_t count;
	int err;

	if (index->sealed)
		return 0;
	/* One source has no duplicates: sorting a million records for them costs seconds. */
	if (index->sources > 1) {
		count = drop_duplicates(index->activities, index->activity_count,
					sizeof(*index->activities), by_identity);
		index->stats.duplicate_records += index->activity_count - count;
		index->activity_count = count;
	}
	/* Launches sorted by thread and time, as the profile meets them. */
	count = drop_duplicates(index->launches, index->launch_count, sizeof(*index->launches),
				by_thread_then_time);
	index->stats.duplicate_records += index->launch_count - count;
	index->launch_count = count;
	if (index->stats.duplicate_records)
		recount(index);
	err = map_correlations(index, &by_correlation);
	for (size_t i = 0; !err && i < index->activity_count; i++) {
		struct gpu_activity *activity = &index->activities[i];
		size_t found =
			correlation_get(&by_correlation, activity->tgid, activity->correlation_id);

		/* A copy the driver made for a runtime call names that call too. */
		if (!found && activity->runtime_correlation_id)
			found = correlation_get(&by_correlation, activity->tgid,
						activity->runtime_correlation_id);
		activity->launch = found ? found - 1 : GPU_NO_LAUNCH;
		if (!found)
			index->stats.unlaunched++;
	}
	correlations_free(&by_correlation);
	err = err ?: drop_idle_launches(index);
	err = err ?: group_by_launch(index);
	err = err ?: map_threads(index);
	if (err)
		return err;
	index->sealed = true;
	return 0;
}

const struct gpu_thread_launches *gpu_index_thread(const struct gpu_index *index, uint32_t tgid,
						   uint32_t tid)
{
	return idmap_get(&index->threads, tgid, tid);
}

const char *gpu_activity_name(const struct gpu_index *index, const struct gpu_activity *activity)
{
	static const char *const copies[] = {
		"memcpy",      "memcpy HtoD", "memcpy DtoH", "memcpy HtoA",
		"memcpy AtoH", "memcpy AtoA", "memcpy AtoD", "memcpy DtoA",
		"memcpy DtoD", "memcpy HtoH", "memcpy PtoP",
	};
	const char *name;

	switch (activity->kind) {
	case OPTRACE_GPU_REC_KERNEL:
		name = activity->name_id
			       ? idmap_get(&index->names, activity->tgid, activity->name_id)
			       : NULL;
		return name ? name : "(kernel)";
	case OPTRACE_GPU_REC_MEMCPY:
		return activity->copy_kind < sizeof(copies) / sizeof(copies[0])
			       ? copies[activity->copy_kind]
			       : copies[0];
	case OPTRACE_GPU_REC_MEMSET:
		return "memset";
	default:
		return "(gpu)";
	}
}
