// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The stat object's maps read through libbpf (stat_tables.c makes the snapshot). */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>

#include "stat.skel.h"
#include "session/stat_read.h"
#include "session/stat_tables.h"

static int next_key(void *ctx, int fd, const void *key, void *next)
{
	(void)ctx;
	return bpf_map_get_next_key(fd, key, next);
}

static int lookup(void *ctx, int fd, const void *key, void *value)
{
	(void)ctx;
	return bpf_map_lookup_elem(fd, key, value);
}

static int lookup_and_delete(void *ctx, int fd, const void *key, void *value)
{
	(void)ctx;
	return bpf_map_lookup_and_delete_elem(fd, key, value);
}

static int delete_elem(void *ctx, int fd, const void *key)
{
	(void)ctx;
	return bpf_map_delete_elem(fd, key);
}

static int update_existing(void *ctx, int fd, const void *key, const void *value)
{
	(void)ctx;
	return bpf_map_update_elem(fd, key, value, BPF_EXIST);
}

int stat_read_snapshot(struct stat_bpf *skel, struct stat_snapshot *snapshot, bool clear)
{
	struct stat_map_access access = {
		.next_key = next_key,
		.lookup = lookup,
		.lookup_and_delete = lookup_and_delete,
		.delete_elem = delete_elem,
		.update_existing = update_existing,
		.cpus = libbpf_num_possible_cpus(),
	};
	struct stat_tables tables = {
		.access = &access,
		.fds = {
			[STAT_MAP_OPS] = bpf_map__fd(skel->maps.op_stats),
			[STAT_MAP_TASKS] = bpf_map__fd(skel->maps.task_stats),
			[STAT_MAP_LAUNCHES] = bpf_map__fd(skel->maps.launch_stats),
			[STAT_MAP_WAITS] = bpf_map__fd(skel->maps.wait_stats),
			[STAT_MAP_STRINGS] = bpf_map__fd(skel->maps.strings),
			[STAT_MAP_PROCESSES] = bpf_map__fd(skel->maps.processes),
			[STAT_MAP_GPU] = bpf_map__fd(skel->maps.gpu_stats),
			[STAT_MAP_GPU_DROPS] = bpf_map__fd(skel->maps.gpu_drops),
			[STAT_MAP_GPU_CORRELATIONS] = bpf_map__fd(skel->maps.gpu_correlations),
			[STAT_MAP_LOSSES] = bpf_map__fd(skel->maps.losses),
			[STAT_MAP_OPS_OVERFLOW] = bpf_map__fd(skel->maps.op_stats_overflow),
			[STAT_MAP_OPS_RESERVE] = bpf_map__fd(skel->maps.op_stats_reserve),
			[STAT_MAP_TASKS_RESERVE] = bpf_map__fd(skel->maps.task_stats_reserve),
			[STAT_MAP_LAUNCHES_RESERVE] = bpf_map__fd(skel->maps.launch_stats_reserve),
			[STAT_MAP_WAITS_RESERVE] = bpf_map__fd(skel->maps.wait_stats_reserve),
			[STAT_MAP_GPU_RESERVE] = bpf_map__fd(skel->maps.gpu_stats_reserve),
		},
		.gpu_traced = bpf_program__fd(skel->progs.gpu_kernel) >= 0,
	};

	if (access.cpus <= 0)
		return access.cpus ? access.cpus : -EINVAL;
	return stat_read_tables(&tables, snapshot, clear);
}
