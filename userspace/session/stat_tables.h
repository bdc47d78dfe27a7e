/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The live engine's read of the kernel's tables (stat, top, serve), apart
 * from libbpf: the maps are reached through a stat_map_access, libbpf's on
 * the stat object's maps (stat_read.c) or a test's in memory, so that what
 * a read makes of the tables is unit-tested without root.
 */
#ifndef OPTRACE_SESSION_STAT_TABLES_H
#define OPTRACE_SESSION_STAT_TABLES_H

#include <stdbool.h>

#include "model/aggregates.h"

/* Each call as libbpf's on a map's fd: 0 or a negative errno. */
struct stat_map_access {
	int (*next_key)(void *ctx, int fd, const void *key, void *next);
	int (*lookup)(void *ctx, int fd, const void *key, void *value);
	int (*lookup_and_delete)(void *ctx, int fd, const void *key, void *value);
	int (*delete_elem)(void *ctx, int fd, const void *key);
	int (*update_existing)(void *ctx, int fd, const void *key, const void *value);
	int cpus; /* possible CPUs: a per-CPU value comes as one 8-byte-aligned slot each */
	void *ctx;
};

enum stat_kernel_map {
	STAT_MAP_OPS,
	STAT_MAP_TASKS,
	STAT_MAP_LAUNCHES,
	STAT_MAP_WAITS,
	STAT_MAP_STRINGS,
	STAT_MAP_PROCESSES,
	STAT_MAP_GPU,
	STAT_MAP_GPU_DROPS,
	STAT_MAP_GPU_CORRELATIONS,
	STAT_MAP_LOSSES,
	/* Rows the tables above could not take (bpf/stat_state.bpf.h), added to theirs. */
	STAT_MAP_OPS_OVERFLOW,
	STAT_MAP_OPS_RESERVE,
	STAT_MAP_TASKS_RESERVE,
	STAT_MAP_LAUNCHES_RESERVE,
	STAT_MAP_WAITS_RESERVE,
	STAT_MAP_GPU_RESERVE,
	STAT_MAP__COUNT,
};

struct stat_tables {
	const struct stat_map_access *access;
	int fds[STAT_MAP__COUNT];
	bool gpu_traced; /* the GPU tables are read only then */
};

/*
 * Reads the tables into snapshot, summed over CPUs. With clear, the rows
 * are taken out as they are read (interval mode) and their processes' row
 * quotas start over; the strings are kept. Returns 0 or a negative errno.
 */
int stat_read_tables(const struct stat_tables *tables, struct stat_snapshot *snapshot, bool clear);

/*
 * How many of the operations' rows to preallocate (op_stats, of at most
 * max_rows): what fits in 64 MiB of per-CPU values on cpus CPUs, at least
 * 1024; the rest come in op_stats_overflow as they are needed.
 */
unsigned int stat_preallocated_op_rows(int cpus, unsigned int max_rows);

#endif /* OPTRACE_SESSION_STAT_TABLES_H */
