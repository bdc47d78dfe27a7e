// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The kernel's tables into a snapshot (stat_tables.h): per-CPU values
 * summed, rows taken out in the same step as they are read, the quotas of
 * what was taken reset. Every map access goes through the caller's
 * stat_map_access: libbpf's (stat_read.c), or a test's tables in memory.
 */
#define _GNU_SOURCE /* qsort_r */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/idmap.h"
#include "session/stat_tables.h"

#ifndef ENOTSUPP
#define ENOTSUPP 524 /* the kernel's "not supported", which libc does not name */
#endif

/* Per-CPU values come back as one 8-byte-aligned value per possible CPU. */
#define ROUND_UP8(x) (((x) + 7) & ~(size_t)7)

typedef void (*sum_fn)(void *into, const void *cpu_value);

static void sum_latency(void *into, const void *cpu_value)
{
	latency_merge(into, cpu_value);
}

static void sum_launch(void *into, const void *cpu_value)
{
	struct launch_stats *total = into;
	const struct launch_stats *value = cpu_value;

	total->count += value->count;
	total->points += value->points;
}

static void sum_gpu(void *into, const void *cpu_value)
{
	struct gpu_totals *total = into;
	const struct gpu_totals *value = cpu_value;

	total->kernels += value->kernels;
	total->copies += value->copies;
	total->memsets += value->memsets;
	total->gpu_ns += value->gpu_ns;
	total->bytes += value->bytes;
	total->invalid_times += value->invalid_times;
	if (value->max_ns > total->max_ns)
		total->max_ns = value->max_ns;
}

static void sum_u64(void *into, const void *cpu_value)
{
	*(__u64 *)into += *(const __u64 *)cpu_value;
}

/*
 * The value at key; with clear, taken out of the map in the same step, so
 * that nothing counted between a read and a delete is lost (kernels before
 * 5.14 lack that for per-CPU maps: there, read then delete at once).
 */
static int take(const struct stat_map_access *maps, int fd, const void *key, void *values,
		bool clear)
{
	int err;

	if (!clear)
		return maps->lookup(maps->ctx, fd, key, values);
	err = maps->lookup_and_delete(maps->ctx, fd, key, values);
	if (err != -EINVAL && err != -ENOTSUPP && err != -EOPNOTSUPP)
		return err;
	err = maps->lookup(maps->ctx, fd, key, values);
	if (!err)
		maps->delete_elem(maps->ctx, fd, key);
	return err;
}

/*
 * Reads every entry of a map into a new array of rows, each a key followed
 * by its value (summed over CPUs when sum is given).
 */
static int read_map(const struct stat_map_access *maps, int fd, size_t key_size, size_t value_size,
		    size_t value_offset, size_t row_size, sum_fn sum, bool clear, void **rows_out,
		    size_t *count_out)
{
	int cpus = sum ? maps->cpus : 1;
	size_t stride = sum ? ROUND_UP8(value_size) : value_size;
	char *values = NULL, *rows = NULL, key[64], next[64];
	size_t count = 0, capacity = 0;
	void *previous = NULL;
	int err = 0;

	if (cpus <= 0 || key_size > sizeof(key))
		return -EINVAL;
	values = malloc(stride * (size_t)cpus);
	if (!values)
		return -ENOMEM;
	while (maps->next_key(maps->ctx, fd, previous, next) == 0) {
		char *row;

		err = take(maps, fd, next, values, clear);
		/*
		 * A row deleted meanwhile: the walk goes on from the last row
		 * read, which still stands (from a missing key, the kernel
		 * would start it over and the rows read would come again).
		 */
		if (err == -ENOENT) {
			err = 0;
			continue;
		}
		memcpy(key, next, key_size);
		previous = key;
		if (err) {
			err = 0;
			continue;
		}
		if (count == capacity) {
			char *grown;

			capacity = capacity ? capacity * 2 : 64;
			grown = realloc(rows, capacity * row_size);
			if (!grown) {
				err = -ENOMEM;
				break;
			}
			rows = grown;
		}
		row = rows + count * row_size;
		memset(row, 0, row_size);
		memcpy(row, key, key_size);
		if (sum) {
			for (int cpu = 0; cpu < cpus; cpu++)
				sum(row + value_offset, values + (size_t)cpu * stride);
		} else {
			memcpy(row + value_offset, values, value_size);
		}
		count++;
	}
	free(values);
	if (err) {
		free(rows);
		return err;
	}
	*rows_out = rows;
	*count_out = count;
	return 0;
}

/* For qsort_r and the search: rows compared by their keys, the first key_size bytes. */
static int compare_keys(const void *a, const void *b, void *key_size)
{
	return memcmp(a, b, *(const size_t *)key_size);
}

/* The row of rows (count of them, sorted by key) with key, or NULL. */
static char *find_row(char *rows, size_t count, size_t row_size, size_t key_size, const void *key)
{
	size_t low = 0, high = count;

	while (low < high) {
		size_t middle = low + (high - low) / 2;
		int order = memcmp(rows + middle * row_size, key, key_size);

		if (!order)
			return rows + middle * row_size;
		if (order < 0)
			low = middle + 1;
		else
			high = middle;
	}
	return NULL;
}

/*
 * Adds the rows of extra (read from a table's overflow or reserve) to the
 * table's rows: a key may have a row in both (made in the reserve when the
 * table could not, in the table later), summed then. Sorts the table's rows.
 */
static int merge_rows(char **rows, size_t *count, const char *extra, size_t extra_count,
		      size_t key_size, size_t value_offset, size_t row_size, sum_fn sum)
{
	size_t sorted = *count;
	char *grown;

	if (!extra_count)
		return 0;
	/* Room for every extra row, whether or not its key has one here. */
	grown = realloc(*rows, (*count + extra_count) * row_size);
	if (!grown)
		return -ENOMEM;
	*rows = grown;
	qsort_r(grown, sorted, row_size, compare_keys, &key_size);
	for (size_t i = 0; i < extra_count; i++) {
		const char *row_extra = extra + i * row_size;
		/* Each key is once in extra: only the table's own rows are looked in. */
		char *row = find_row(grown, sorted, row_size, key_size, row_extra);

		if (row)
			sum(row + value_offset, row_extra + value_offset);
		else
			memcpy(grown + (*count)++ * row_size, row_extra, row_size);
	}
	return 0;
}

/*
 * A table read with the rows of its overflow and reserve (extra_fds, -1:
 * none; bpf/stat_state.bpf.h) added. Mostly those are empty, and the
 * table's rows keep the kernel's order.
 */
static int read_table(const struct stat_map_access *maps, int fd, const int extra_fds[2],
		      size_t key_size, size_t value_size, size_t value_offset, size_t row_size,
		      sum_fn sum, bool clear, void **rows_out, size_t *count_out)
{
	char *rows = NULL;
	size_t count = 0;
	int err;

	err = read_map(maps, fd, key_size, value_size, value_offset, row_size, sum, clear,
		       (void **)&rows, &count);
	for (int i = 0; !err && i < 2; i++) {
		char *extra = NULL;
		size_t extra_count = 0;

		if (extra_fds[i] < 0)
			continue;
		err = read_map(maps, extra_fds[i], key_size, value_size, value_offset, row_size,
			       sum, clear, (void **)&extra, &extra_count);
		err = err
			      ?: merge_rows(&rows, &count, extra, extra_count, key_size,
					    value_offset, row_size, sum);
		free(extra);
	}
	if (err) {
		free(rows);
		return err;
	}
	*rows_out = rows;
	*count_out = count;
	return 0;
}

unsigned int stat_preallocated_op_rows(int cpus, unsigned int max_rows)
{
	const unsigned long long budget = 64ULL << 20, least = 1024;
	unsigned long long rows;

	if (cpus < 1)
		cpus = 1;
	rows = budget / ((unsigned long long)cpus * ROUND_UP8(sizeof(struct latency)));
	if (rows < least)
		rows = least;
	return rows < max_rows ? (unsigned int)rows : max_rows;
}

/*
 * Activities whose launch has not come: one row per process. Only at the
 * end (not clear): in an interval their launch may still come.
 */
static int read_unlaunched(const struct stat_map_access *maps, int fd,
			   struct stat_snapshot *snapshot)
{
	struct gpu_correlation_key key, next;
	struct gpu_correlation value;
	struct idmap seen = { 0 }; /* a walk the map's evictions send back to its start */
	void *previous = NULL;
	int err = 0;

	while (!err && maps->next_key(maps->ctx, fd, previous, &next) == 0) {
		struct gpu_row *row = NULL;

		key = next;
		previous = &key;
		if (maps->lookup(maps->ctx, fd, &key, &value) || value.launched ||
		    !(value.waiting.kernels + value.waiting.copies + value.waiting.memsets) ||
		    idmap_get(&seen, key.tgid, key.correlation_id))
			continue;
		err = idmap_put(&seen, key.tgid, key.correlation_id, (void *)1);
		for (size_t i = 0; !err && i < snapshot->gpu_count && !row; i++) {
			if (snapshot->gpus[i].key.tgid == key.tgid &&
			    snapshot->gpus[i].key.op_name == STAT_GPU_NOT_LAUNCHED)
				row = &snapshot->gpus[i];
		}
		if (!err && !row) {
			struct gpu_row *grown =
				realloc(snapshot->gpus, (snapshot->gpu_count + 1) * sizeof(*grown));

			if (!grown) {
				err = -ENOMEM;
				break;
			}
			snapshot->gpus = grown;
			row = &grown[snapshot->gpu_count++];
			memset(row, 0, sizeof(*row));
			row->key = (struct gpu_key){ .tgid = key.tgid,
						     .variant = STAT_GPU_NO_VARIANT,
						     .op_name = STAT_GPU_NOT_LAUNCHED };
		}
		if (!err)
			sum_gpu(&row->totals, &value.waiting);
	}
	idmap_free(&seen);
	return err;
}

static int read_gpu(const struct stat_tables *tables, struct stat_snapshot *snapshot, bool clear)
{
	const struct stat_map_access *maps = tables->access;
	int err;

	snapshot->gpu_traced = tables->gpu_traced;
	snapshot->has_gpu = snapshot->gpu_traced;
	if (!snapshot->gpu_traced)
		return 0;
	err = read_table(maps, tables->fds[STAT_MAP_GPU],
			 (const int[]){ -1, tables->fds[STAT_MAP_GPU_RESERVE] },
			 sizeof(struct gpu_key), sizeof(struct gpu_totals),
			 offsetof(struct gpu_row, totals), sizeof(struct gpu_row), sum_gpu, clear,
			 (void **)&snapshot->gpus, &snapshot->gpu_count);
	err = err
		      ?: read_map(maps, tables->fds[STAT_MAP_GPU_DROPS],
				  sizeof(struct gpu_drop_key), sizeof(__u64),
				  offsetof(struct gpu_drop_row, count), sizeof(struct gpu_drop_row),
				  sum_u64, clear, (void **)&snapshot->gpu_drops,
				  &snapshot->gpu_drop_count);
	if (!err && !clear)
		err = read_unlaunched(maps, tables->fds[STAT_MAP_GPU_CORRELATIONS], snapshot);
	return err;
}

/*
 * The rows a read took out of the tables no longer count against their
 * processes' quotas (strings stay, and count on). A row made between the
 * take and this stays uncounted: the quota bounds, it does not audit.
 */
static void reset_row_quotas(const struct stat_tables *tables, const struct stat_snapshot *snapshot)
{
	const struct stat_map_access *maps = tables->access;
	int fd = tables->fds[STAT_MAP_PROCESSES];

	for (size_t i = 0; i < snapshot->process_count; i++) {
		struct process_info info;
		__u32 tgid = snapshot->processes[i].tgid;

		if (maps->lookup(maps->ctx, fd, &tgid, &info))
			continue;
		info.rows = 0;
		maps->update_existing(maps->ctx, fd, &tgid, &info);
	}
}

int stat_read_tables(const struct stat_tables *tables, struct stat_snapshot *snapshot, bool clear)
{
	const struct stat_map_access *maps = tables->access;
	int cpus = maps->cpus, err;
	__u64 *losses;

	memset(snapshot, 0, sizeof(*snapshot));
	err = read_table(maps, tables->fds[STAT_MAP_OPS],
			 (const int[]){ tables->fds[STAT_MAP_OPS_OVERFLOW],
					tables->fds[STAT_MAP_OPS_RESERVE] },
			 sizeof(struct op_key), sizeof(struct latency),
			 offsetof(struct op_row, latency), sizeof(struct op_row), sum_latency,
			 clear, (void **)&snapshot->ops, &snapshot->op_count);
	err = err
		      ?: read_table(maps, tables->fds[STAT_MAP_TASKS],
				    (const int[]){ -1, tables->fds[STAT_MAP_TASKS_RESERVE] },
				    sizeof(struct task_key), sizeof(struct latency),
				    offsetof(struct task_row, latency), sizeof(struct task_row),
				    sum_latency, clear, (void **)&snapshot->tasks,
				    &snapshot->task_count);
	err = err
		      ?: read_table(maps, tables->fds[STAT_MAP_LAUNCHES],
				    (const int[]){ -1, tables->fds[STAT_MAP_LAUNCHES_RESERVE] },
				    sizeof(struct launch_key), sizeof(struct launch_stats),
				    offsetof(struct launch_row, stats), sizeof(struct launch_row),
				    sum_launch, clear, (void **)&snapshot->launches,
				    &snapshot->launch_count);
	err = err ?: stat_derive_fallbacks(snapshot);
	err = err
		      ?: read_table(maps, tables->fds[STAT_MAP_WAITS],
				    (const int[]){ -1, tables->fds[STAT_MAP_WAITS_RESERVE] },
				    sizeof(struct wait_key), sizeof(struct latency),
				    offsetof(struct wait_row, latency), sizeof(struct wait_row),
				    sum_latency, clear, (void **)&snapshot->waits,
				    &snapshot->wait_count);
	err = err
		      ?: read_map(maps, tables->fds[STAT_MAP_STRINGS], sizeof(struct string_key),
				  sizeof(struct string_value), offsetof(struct string_row, value),
				  sizeof(struct string_row), NULL, false,
				  (void **)&snapshot->strings, &snapshot->string_count);
	err = err
		      ?: read_map(maps, tables->fds[STAT_MAP_PROCESSES], sizeof(__u32),
				  sizeof(struct process_info), offsetof(struct process_row, info),
				  sizeof(struct process_row), NULL, false,
				  (void **)&snapshot->processes, &snapshot->process_count);
	err = err ?: read_gpu(tables, snapshot, clear);
	if (err)
		goto fail;
	if (clear)
		reset_row_quotas(tables, snapshot);

	losses = calloc((size_t)cpus, sizeof(*losses));
	if (!losses) {
		err = -ENOMEM;
		goto fail;
	}
	for (__u32 loss = 0; loss < STAT_LOSS__COUNT; loss++) {
		if (maps->lookup(maps->ctx, tables->fds[STAT_MAP_LOSSES], &loss, losses))
			continue;
		for (int cpu = 0; cpu < cpus; cpu++)
			snapshot->losses[loss] += losses[cpu];
	}
	free(losses);
	return 0;

fail:
	stat_snapshot_free(snapshot);
	return err;
}
