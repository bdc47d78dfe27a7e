// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The live engine's read of the kernel's tables (session/stat_tables.c),
 * without root or BPF: the tables are held in memory here and reached
 * through the same stat_map_access libbpf's calls fill, with the kernel's
 * semantics (per-CPU values in 8-byte slots, a walk by next key that starts
 * over when its key is gone, lookup-and-delete missing on older kernels).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "session/stat_tables.h"

#define CPUS 3
#define ROWS_MAX 64
#define VALUE_MAX 512

struct fake_map {
	size_t key_size, value_size;
	bool per_cpu;
	size_t count;
	unsigned char keys[ROWS_MAX][64];
	unsigned char values[ROWS_MAX][CPUS][VALUE_MAX];
};

struct fake {
	struct fake_map maps[STAT_MAP__COUNT];
	bool no_lookup_and_delete; /* as kernels before 5.14 for per-CPU maps */
	int vanish_fd;		   /* a row of this map deleted between its key and its value */
	int calls_to_vanish;
};

static struct fake_map *map_of(struct fake *fake, int fd)
{
	return fd >= 0 && fd < STAT_MAP__COUNT ? &fake->maps[fd] : NULL;
}

static long find(const struct fake_map *map, const void *key)
{
	for (size_t i = 0; i < map->count; i++)
		if (!memcmp(map->keys[i], key, map->key_size))
			return (long)i;
	return -1;
}

static int fake_next_key(void *ctx, int fd, const void *key, void *next)
{
	struct fake_map *map = map_of(ctx, fd);
	long at = key ? find(map, key) : -1;

	/* A key that is gone starts the walk over, as the kernel's hash maps do. */
	if ((size_t)(at + 1) >= map->count)
		return at >= 0 || !map->count ? -ENOENT
					      : (memcpy(next, map->keys[0], map->key_size), 0);
	memcpy(next, map->keys[at + 1], map->key_size);
	return 0;
}

static int fake_lookup(void *ctx, int fd, const void *key, void *value)
{
	struct fake *fake = ctx;
	struct fake_map *map = map_of(fake, fd);
	long at = find(map, key);
	size_t stride = (map->value_size + 7) & ~(size_t)7;

	if (at >= 0 && fd == fake->vanish_fd && fake->calls_to_vanish-- == 0) {
		memmove(map->keys[at], map->keys[at + 1], (map->count - (size_t)at - 1) * 64);
		memmove(map->values[at], map->values[at + 1],
			(map->count - (size_t)at - 1) * sizeof(map->values[0]));
		map->count--;
		return -ENOENT;
	}
	if (at < 0)
		return -ENOENT;
	for (int cpu = 0; cpu < (map->per_cpu ? CPUS : 1); cpu++)
		memcpy((char *)value + (size_t)cpu * stride, map->values[at][cpu], map->value_size);
	return 0;
}

static int fake_delete(void *ctx, int fd, const void *key)
{
	struct fake_map *map = map_of(ctx, fd);
	long at = find(map, key);

	if (at < 0)
		return -ENOENT;
	memmove(map->keys[at], map->keys[at + 1], (map->count - (size_t)at - 1) * 64);
	memmove(map->values[at], map->values[at + 1],
		(map->count - (size_t)at - 1) * sizeof(map->values[0]));
	map->count--;
	return 0;
}

static int fake_lookup_and_delete(void *ctx, int fd, const void *key, void *value)
{
	struct fake *fake = ctx;
	int err;

	if (fake->no_lookup_and_delete)
		return -EINVAL;
	err = fake_lookup(ctx, fd, key, value);
	return err ?: fake_delete(ctx, fd, key);
}

static int fake_update_existing(void *ctx, int fd, const void *key, const void *value)
{
	struct fake_map *map = map_of(ctx, fd);
	long at = find(map, key);

	if (at < 0)
		return -ENOENT;
	memcpy(map->values[at][0], value, map->value_size);
	return 0;
}

static void put_row(struct fake *fake, int fd, const void *key, int cpu, const void *value)
{
	struct fake_map *map = &fake->maps[fd];
	long at = find(map, key);

	if (at < 0) {
		ck_assert_uint_lt(map->count, ROWS_MAX);
		at = (long)map->count++;
		memset(map->values[at], 0, sizeof(map->values[at]));
		memcpy(map->keys[at], key, map->key_size);
	}
	memcpy(map->values[at][cpu], value, map->value_size);
}

static struct fake fake;
static struct stat_map_access access_fake = {
	.next_key = fake_next_key,
	.lookup = fake_lookup,
	.lookup_and_delete = fake_lookup_and_delete,
	.delete_elem = fake_delete,
	.update_existing = fake_update_existing,
	.cpus = CPUS,
	.ctx = &fake,
};

static void setup(void)
{
	static const struct {
		size_t key, value;
		bool per_cpu;
	} shapes[STAT_MAP__COUNT] = {
		[STAT_MAP_OPS] = { sizeof(struct op_key), sizeof(struct latency), true },
		[STAT_MAP_TASKS] = { sizeof(struct task_key), sizeof(struct latency), true },
		[STAT_MAP_LAUNCHES] = { sizeof(struct launch_key), sizeof(struct launch_stats),
					true },
		[STAT_MAP_WAITS] = { sizeof(struct wait_key), sizeof(struct latency), true },
		[STAT_MAP_STRINGS] = { sizeof(struct string_key), sizeof(struct string_value),
				       false },
		[STAT_MAP_PROCESSES] = { sizeof(__u32), sizeof(struct process_info), false },
		[STAT_MAP_GPU] = { sizeof(struct gpu_key), sizeof(struct gpu_totals), true },
		[STAT_MAP_GPU_DROPS] = { sizeof(struct gpu_drop_key), sizeof(__u64), true },
		[STAT_MAP_GPU_CORRELATIONS] = { sizeof(struct gpu_correlation_key),
						sizeof(struct gpu_correlation), false },
		[STAT_MAP_LOSSES] = { sizeof(__u32), sizeof(__u64), true },
		[STAT_MAP_OPS_OVERFLOW] = { sizeof(struct op_key), sizeof(struct latency), true },
		[STAT_MAP_OPS_RESERVE] = { sizeof(struct op_key), sizeof(struct latency), true },
		[STAT_MAP_TASKS_RESERVE] = { sizeof(struct task_key), sizeof(struct latency),
					     true },
		[STAT_MAP_LAUNCHES_RESERVE] = { sizeof(struct launch_key),
						sizeof(struct launch_stats), true },
		[STAT_MAP_WAITS_RESERVE] = { sizeof(struct wait_key), sizeof(struct latency),
					     true },
		[STAT_MAP_GPU_RESERVE] = { sizeof(struct gpu_key), sizeof(struct gpu_totals),
					   true },
	};

	memset(&fake, 0, sizeof(fake));
	fake.vanish_fd = -1;
	for (int i = 0; i < STAT_MAP__COUNT; i++) {
		ck_assert_uint_le(shapes[i].key, 64);
		ck_assert_uint_le(shapes[i].value, VALUE_MAX);
		fake.maps[i].key_size = shapes[i].key;
		fake.maps[i].value_size = shapes[i].value;
		fake.maps[i].per_cpu = shapes[i].per_cpu;
	}
}

static struct stat_tables tables_of(bool gpu)
{
	struct stat_tables tables = { .access = &access_fake, .gpu_traced = gpu };

	for (int i = 0; i < STAT_MAP__COUNT; i++)
		tables.fds[i] = i;
	return tables;
}

static struct latency latency_of(__u64 count, __u64 min_ns, __u64 max_ns)
{
	struct latency latency = { .count = count,
				   .total_ns = count * min_ns,
				   .self_ns = count * min_ns,
				   .min_ns = min_ns,
				   .max_ns = max_ns };

	latency.hist[3] = count;
	return latency;
}

static void put_op(__u32 tgid, __u64 name, int cpu, __u64 count, __u64 min_ns, __u64 max_ns)
{
	struct op_key key = { .tgid = tgid, .name = name, .mode = STAT_MODE_UNSET };
	struct latency value = latency_of(count, min_ns, max_ns);

	put_row(&fake, STAT_MAP_OPS, &key, cpu, &value);
}

static const struct op_row *op_row(const struct stat_snapshot *snapshot, __u32 tgid, __u64 name)
{
	for (size_t i = 0; i < snapshot->op_count; i++)
		if (snapshot->ops[i].key.tgid == tgid && snapshot->ops[i].key.name == name)
			return &snapshot->ops[i];
	return NULL;
}

/* Each CPU's slot summed: counts and totals added, the least minimum, the greatest maximum. */
START_TEST(test_per_cpu_values_summed)
{
	struct stat_tables tables = tables_of(false);
	struct launch_key launch = { .tgid = 7, .name = 0x10 };
	struct launch_stats launched = { .count = 2, .points = 8 };
	struct stat_snapshot snapshot;
	const struct op_row *row;
	__u32 loss = STAT_LOSS_MAP_FULL;
	__u64 lost = 5;

	put_op(7, 0x10, 0, 3, 100, 400);
	put_op(7, 0x10, 2, 4, 50, 900);
	put_op(7, 0x20, 1, 1, 70, 70);
	put_row(&fake, STAT_MAP_LAUNCHES, &launch, 0, &launched);
	put_row(&fake, STAT_MAP_LAUNCHES, &launch, 1, &launched);
	put_row(&fake, STAT_MAP_LOSSES, &loss, 0, &lost);
	put_row(&fake, STAT_MAP_LOSSES, &loss, 2, &lost);
	ck_assert_int_eq(stat_read_tables(&tables, &snapshot, false), 0);
	ck_assert_uint_eq(snapshot.op_count, 2);
	row = op_row(&snapshot, 7, 0x10);
	ck_assert_ptr_nonnull(row);
	ck_assert_uint_eq(row->latency.count, 7);
	ck_assert_uint_eq(row->latency.total_ns, 3 * 100 + 4 * 50);
	ck_assert_uint_eq(row->latency.min_ns, 50);
	ck_assert_uint_eq(row->latency.max_ns, 900);
	ck_assert_uint_eq(row->latency.hist[3], 7);
	ck_assert_uint_eq(op_row(&snapshot, 7, 0x20)->latency.count, 1);
	ck_assert_uint_eq(snapshot.launch_count, 1);
	ck_assert_uint_eq(snapshot.launches[0].stats.count, 4);
	ck_assert_uint_eq(snapshot.launches[0].stats.points, 16);
	ck_assert_uint_eq(snapshot.losses[STAT_LOSS_MAP_FULL], 10);
	ck_assert(!snapshot.gpu_traced);
	/* Without clear nothing leaves the tables. */
	ck_assert_uint_eq(fake.maps[STAT_MAP_OPS].count, 2);
	stat_snapshot_free(&snapshot);
}
END_TEST

/*
 * Interval mode: the rows leave the tables as they are read, by
 * lookup-and-delete or, where the kernel lacks it, a lookup then a delete;
 * the strings stay; the processes' row quotas start over.
 */
START_TEST(test_clear_takes_rows_and_resets_quotas)
{
	for (int old_kernel = 0; old_kernel < 2; old_kernel++) {
		struct stat_tables tables = tables_of(false);
		struct string_key string = { .tgid = 7, .address = 0x10 };
		struct string_value text = { .text = "add" };
		struct process_info info = {
			.comm = "demo", .rows = 3000, .strings = 2, .refused = 9
		};
		struct stat_snapshot snapshot;
		__u32 tgid = 7;

		setup();
		fake.no_lookup_and_delete = old_kernel;
		put_op(7, 0x10, 0, 3, 100, 400);
		put_op(7, 0x20, 1, 1, 70, 70);
		put_row(&fake, STAT_MAP_STRINGS, &string, 0, &text);
		put_row(&fake, STAT_MAP_PROCESSES, &tgid, 0, &info);
		ck_assert_int_eq(stat_read_tables(&tables, &snapshot, true), 0);
		ck_assert_uint_eq(snapshot.op_count, 2);
		ck_assert_uint_eq(snapshot.string_count, 1);
		ck_assert_str_eq(snapshot.strings[0].value.text, "add");
		ck_assert_uint_eq(snapshot.process_count, 1);
		ck_assert_uint_eq(snapshot.processes[0].info.rows, 3000); /* as read */
		stat_snapshot_free(&snapshot);
		ck_assert_uint_eq(fake.maps[STAT_MAP_OPS].count, 0);
		ck_assert_uint_eq(fake.maps[STAT_MAP_STRINGS].count, 1);
		ck_assert_uint_eq(fake.maps[STAT_MAP_PROCESSES].count, 1);
		memcpy(&info, fake.maps[STAT_MAP_PROCESSES].values[0][0], sizeof(info));
		ck_assert_uint_eq(info.rows, 0);
		ck_assert_uint_eq(info.strings, 2);
		ck_assert_uint_eq(info.refused, 9);
		ck_assert_str_eq(info.comm, "demo");
	}
}
END_TEST

/* A row deleted between its key and its value (a process forgotten meanwhile): passed over. */
START_TEST(test_row_gone_meanwhile)
{
	struct stat_tables tables = tables_of(false);
	struct stat_snapshot snapshot;

	put_op(7, 0x10, 0, 3, 100, 400);
	put_op(7, 0x20, 0, 1, 70, 70);
	put_op(8, 0x30, 0, 2, 10, 20);
	fake.vanish_fd = STAT_MAP_OPS;
	fake.calls_to_vanish = 1; /* the second row's */
	ck_assert_int_eq(stat_read_tables(&tables, &snapshot, false), 0);
	/* the walk starts over past the missing key: nothing read twice */
	ck_assert_uint_eq(snapshot.op_count, 2);
	ck_assert_ptr_nonnull(op_row(&snapshot, 7, 0x10));
	ck_assert_ptr_nonnull(op_row(&snapshot, 8, 0x30));
	ck_assert_ptr_null(op_row(&snapshot, 7, 0x20));
	stat_snapshot_free(&snapshot);
}
END_TEST

/*
 * --cuda: the GPU tables summed, and the activities whose launch never
 * came (only at the end, not in an interval) one row per process.
 */
START_TEST(test_gpu_tables_and_unlaunched)
{
	struct stat_tables tables = tables_of(true);
	struct gpu_key key = { .tgid = 7, .variant = 2, .root_name = 0x10 };
	struct gpu_totals totals = { .kernels = 2, .gpu_ns = 300, .max_ns = 200 };
	struct gpu_correlation waiting = { .waiting = {
						   .kernels = 1, .gpu_ns = 40, .max_ns = 40 } };
	struct gpu_correlation launched = { .launched = 1, .waiting = { .kernels = 5 } };
	struct stat_snapshot snapshot;

	put_row(&fake, STAT_MAP_GPU, &key, 0, &totals);
	totals.max_ns = 250;
	put_row(&fake, STAT_MAP_GPU, &key, 1, &totals);
	for (__u32 id = 1; id <= 3; id++) {
		struct gpu_correlation_key correlation = { .tgid = 7, .correlation_id = id };

		put_row(&fake, STAT_MAP_GPU_CORRELATIONS, &correlation, 0,
			id == 3 ? &launched : &waiting);
	}
	ck_assert_int_eq(stat_read_tables(&tables, &snapshot, false), 0);
	ck_assert(snapshot.gpu_traced && snapshot.has_gpu);
	ck_assert_uint_eq(snapshot.gpu_count, 2);
	ck_assert_uint_eq(snapshot.gpus[0].totals.kernels, 4);
	ck_assert_uint_eq(snapshot.gpus[0].totals.gpu_ns, 600);
	ck_assert_uint_eq(snapshot.gpus[0].totals.max_ns, 250);
	ck_assert_uint_eq(snapshot.gpus[1].key.op_name, STAT_GPU_NOT_LAUNCHED);
	ck_assert_uint_eq(snapshot.gpus[1].totals.kernels, 2);
	ck_assert_uint_eq(snapshot.gpus[1].totals.gpu_ns, 80);
	stat_snapshot_free(&snapshot);
	/* In an interval their launch may still come: not counted yet. */
	ck_assert_int_eq(stat_read_tables(&tables, &snapshot, true), 0);
	ck_assert_uint_eq(snapshot.gpu_count, 1);
	stat_snapshot_free(&snapshot);
}
END_TEST

/*
 * The rows a table could not take went to its reserve (a burst of new rows
 * on a busy machine): added to the table's, the same key's summed, and
 * taken out of the reserve as well in an interval.
 */
START_TEST(test_reserve_rows_added)
{
	struct stat_tables tables = tables_of(true);
	struct task_key both = { .tgid = 7, .variant = 1, .name = 0x10 };
	struct task_key reserved_only = { .tgid = 7, .variant = 1, .name = 0x20 };
	struct launch_key launch = { .tgid = 7, .name = 0x10 };
	struct launch_stats launched = { .count = 2, .points = 8 };
	struct wait_key wait = { .tgid = 7, .kind = 1 };
	struct gpu_key gpu = { .tgid = 7, .variant = 2, .root_name = 0x10 };
	struct gpu_totals totals = { .kernels = 2, .gpu_ns = 300, .max_ns = 200 };
	struct latency in_table = latency_of(3, 100, 400), in_reserve = latency_of(2, 50, 900);
	struct stat_snapshot snapshot;

	put_row(&fake, STAT_MAP_TASKS, &both, 0, &in_table);
	put_row(&fake, STAT_MAP_TASKS_RESERVE, &both, 1, &in_reserve);
	put_row(&fake, STAT_MAP_TASKS_RESERVE, &reserved_only, 0, &in_reserve);
	put_row(&fake, STAT_MAP_LAUNCHES_RESERVE, &launch, 0, &launched);
	put_row(&fake, STAT_MAP_WAITS, &wait, 0, &in_table);
	put_row(&fake, STAT_MAP_WAITS_RESERVE, &wait, 0, &in_reserve);
	put_row(&fake, STAT_MAP_GPU, &gpu, 0, &totals);
	totals.max_ns = 250;
	put_row(&fake, STAT_MAP_GPU_RESERVE, &gpu, 1, &totals);

	ck_assert_int_eq(stat_read_tables(&tables, &snapshot, true), 0);
	ck_assert_uint_eq(snapshot.task_count, 2);
	for (size_t i = 0; i < snapshot.task_count; i++) {
		const struct latency *latency = &snapshot.tasks[i].latency;

		if (snapshot.tasks[i].key.name == 0x10) {
			ck_assert_uint_eq(latency->count, 5);
			ck_assert_uint_eq(latency->total_ns, 3 * 100 + 2 * 50);
			ck_assert_uint_eq(latency->min_ns, 50);
			ck_assert_uint_eq(latency->max_ns, 900);
			ck_assert_uint_eq(latency->hist[3], 5);
		} else {
			ck_assert_uint_eq(snapshot.tasks[i].key.name, 0x20);
			ck_assert_uint_eq(latency->count, 2);
		}
	}
	ck_assert_uint_eq(snapshot.launch_count, 1);
	ck_assert_uint_eq(snapshot.launches[0].stats.points, 8);
	ck_assert_uint_eq(snapshot.wait_count, 1);
	ck_assert_uint_eq(snapshot.waits[0].latency.count, 5);
	ck_assert_uint_eq(snapshot.gpu_count, 1);
	ck_assert_uint_eq(snapshot.gpus[0].totals.kernels, 4);
	ck_assert_uint_eq(snapshot.gpus[0].totals.max_ns, 250);
	for (int map = STAT_MAP_TASKS_RESERVE; map <= STAT_MAP_GPU_RESERVE; map++)
		ck_assert_uint_eq(fake.maps[map].count, 0);
	stat_snapshot_free(&snapshot);
}
END_TEST

/*
 * The operations' rows past the preallocated ones (op_stats_overflow) and
 * those of its reserve: many, found by key among many, summed where more
 * than one table holds a key.
 */
START_TEST(test_overflow_rows_added)
{
	struct stat_tables tables = tables_of(false);
	struct stat_snapshot snapshot;
	struct latency one = latency_of(1, 10, 10);

	/* op_stats 1..40, the overflow 21..60, its reserve 35..63 */
	for (__u64 name = 1; name <= 63; name++) {
		struct op_key key = { .tgid = 7, .name = name, .mode = STAT_MODE_UNSET };

		if (name <= 40)
			put_row(&fake, STAT_MAP_OPS, &key, (int)(name % CPUS), &one);
		if (name > 20 && name <= 60)
			put_row(&fake, STAT_MAP_OPS_OVERFLOW, &key, 0, &one);
		if (name >= 35)
			put_row(&fake, STAT_MAP_OPS_RESERVE, &key, 1, &one);
	}
	ck_assert_int_eq(stat_read_tables(&tables, &snapshot, false), 0);
	ck_assert_uint_eq(snapshot.op_count, 63);
	for (__u64 name = 1; name <= 63; name++) {
		const struct op_row *row = op_row(&snapshot, 7, name);

		ck_assert_ptr_nonnull(row);
		ck_assert_uint_eq(row->latency.count,
				  (name <= 40) + (name > 20 && name <= 60) + (name >= 35));
	}
	stat_snapshot_free(&snapshot);
}
END_TEST

/* Preallocated per-CPU rows cost memory on every CPU: within 64 MiB, at least 1024. */
START_TEST(test_preallocated_rows_fit_the_cpus)
{
	ck_assert_uint_eq(stat_preallocated_op_rows(2, 16384), 16384);
	ck_assert_uint_eq(stat_preallocated_op_rows(8, 16384), 16384);
	/* 64 MiB / (16 CPUs x 360 bytes) */
	ck_assert_uint_eq(stat_preallocated_op_rows(16, 16384), 11650);
	ck_assert_uint_eq(stat_preallocated_op_rows(128, 16384), 1456);
	ck_assert_uint_eq(stat_preallocated_op_rows(1024, 16384), 1024);
	ck_assert_uint_eq(stat_preallocated_op_rows(0, 16384), 16384);
	ck_assert_uint_eq(stat_preallocated_op_rows(2, 100), 100);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("stat_tables");
	TCase *tc = tcase_create("read");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_per_cpu_values_summed);
	tcase_add_test(tc, test_clear_takes_rows_and_resets_quotas);
	tcase_add_test(tc, test_row_gone_meanwhile);
	tcase_add_test(tc, test_gpu_tables_and_unlaunched);
	tcase_add_test(tc, test_reserve_rows_added);
	tcase_add_test(tc, test_overflow_rows_added);
	tcase_add_test(tc, test_preallocated_rows_fit_the_cpus);
	suite_add_tcase(suite, tc);
	return run_suite(suite);
}
