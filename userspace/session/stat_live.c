// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A live stat session, shared by stat, top and serve: the BPF object on the
 * targets, the ranks the runtimes announced, the buffers idle threads hold,
 * snapshots, and processes forgotten.
 */
#define _GNU_SOURCE
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/diag.h"
#include "trace/setup.h"
#include "stat.skel.h"
#include "trace/batch_read.h"
#include "trace/targets.h"
#include "session/cuda.h"
#include "session/stat_live.h"
#include "session/stat_read.h"
#include "session/stat_tables.h"
#include "trace/runtime_info.h"
#include "trace/tracer.h"

struct stat_bpf *stat_open(void)
{
	struct stat_bpf *skel;

	libbpf_set_print(libbpf_print);
	skel = stat_bpf__open();
	if (!skel)
		diag("cannot open the BPF object: %s", strerror(errno));
	return skel;
}

/*
 * The preallocated operations' rows sized to this machine's CPUs
 * (stat_preallocated_op_rows). OPTRACE_STAT_TABLE_ROWS=N, for tests: N rows
 * in op_stats, its overflow and each table allocated as it comes, so that
 * their reserves (bpf/stat_state.bpf.h) take the rest, as they take
 * the rows the kernel fails to allocate under load, which no test can make
 * happen at will.
 */
static int size_tables(struct stat_bpf *skel)
{
	const char *text = getenv("OPTRACE_STAT_TABLE_ROWS");
	struct bpf_map *tables[] = { skel->maps.task_stats, skel->maps.launch_stats,
				     skel->maps.wait_stats, skel->maps.gpu_stats };
	__u32 all_ops = bpf_map__max_entries(skel->maps.op_stats), preallocated;
	int cpus = libbpf_num_possible_cpus(), err = 0;

	if (cpus <= 0)
		return cpus ? cpus : -EINVAL;
	preallocated = stat_preallocated_op_rows(cpus, all_ops);
	if (text && *text) {
		unsigned long rows;
		char *end;

		errno = 0;
		rows = strtoul(text, &end, 10);
		if (!isdigit((unsigned char)*text) || errno || *end || !rows || rows > all_ops) {
			diag("OPTRACE_STAT_TABLE_ROWS=%s: give a number of rows from 1 to %u", text,
			     all_ops);
			return -EINVAL;
		}
		for (size_t i = 0; !err && i < sizeof(tables) / sizeof(tables[0]); i++)
			err = bpf_map__set_max_entries(tables[i], (__u32)rows);
		err = err ?: bpf_map__set_max_entries(skel->maps.op_stats_overflow, (__u32)rows);
		return err
			       ?: bpf_map__set_max_entries(skel->maps.op_stats,
							   rows < preallocated ? (__u32)rows
									       : preallocated);
	}
	/* The operations' rows: all_ops in all, the preallocated ones first. */
	err = bpf_map__set_max_entries(skel->maps.op_stats, preallocated);
	return err
		       ?: bpf_map__set_max_entries(skel->maps.op_stats_overflow,
						   all_ops > preallocated ? all_ops - preallocated
									  : 1);
}

int stat_attach(struct tracer *tracer, struct stat_bpf *skel, const struct tracer_options *targets,
		bool cuda, bool quiet)
{
	int err;

	err = size_tables(skel);
	if (err)
		return err;
	skel->rodata->filter_targets = targets->command != NULL;
	if (!cuda)
		cuda_skip_programs(skel->obj);
	err = tracer_prepare(tracer, skel->obj, targets);
	if (!err && cuda)
		err = cuda_prepare(tracer, quiet, true);
	err = err ?: tracer_check_pids(tracer);
	if (err)
		return err;
	err = tracer_loaded(tracer, stat_bpf__load(skel));
	if (err)
		return err;
	skel->bss->start_ns = tracer_now_ns();
	tracer_catch_signals();
	return tracer_attach(tracer);
}

/* As many as the kernel's processes map holds. */
#define MAX_RANKS 4096

static struct {
	__u32 tgid;
	struct optrace_runtime_info info;
} ranks[MAX_RANKS];
static int rank_count;

static struct optrace_runtime_info *rank_of(__u32 tgid)
{
	for (int i = 0; i < rank_count; i++) {
		if (ranks[i].tgid == tgid)
			return &ranks[i].info;
	}
	return NULL;
}

void stat_note_ranks(struct stat_bpf *skel, bool recheck)
{
	int fd = bpf_map__fd(skel->maps.processes);
	__u32 key, *previous = NULL;

	while (bpf_map_get_next_key(fd, previous, &key) == 0) {
		struct optrace_runtime_info info, *known = rank_of(key);

		previous = &key;
		if ((known && (known->initialized || !recheck)) ||
		    runtime_info_read((pid_t)key, &info))
			continue;
		if (!known && rank_count < MAX_RANKS) {
			ranks[rank_count].tgid = key;
			known = &ranks[rank_count++].info;
		}
		if (known)
			*known = info;
	}
}

/* The strings an event names, read from the process, where the kernel could not. */
static void copy_strings(struct stat_bpf *skel, pid_t pid, const struct optrace_event *event)
{
	uint64_t addresses[OPTRACE_EVENT_MAX_STRINGS];
	unsigned int count = optrace_event_strings(event, true, addresses);

	for (unsigned int i = 0; i < count; i++) {
		struct string_key key = { .tgid = (__u32)pid, .address = addresses[i] };
		struct string_value value = { 0 };
		bool truncated = false;
		int fd = bpf_map__fd(skel->maps.strings);

		if (!key.address || !bpf_map_lookup_elem(fd, &key, &value))
			continue;
		if (process_read_string(pid, key.address, value.text, sizeof(value.text),
					&truncated))
			value.unreadable = 1;
		value.truncated = truncated;
		bpf_map_update_elem(fd, &key, &value, BPF_NOEXIST);
	}
}

/* An idle thread's buffer: counted in the kernel as if its thread had handed it over. */
static int inject_buffer(void *ctx, pid_t pid, uint32_t tid, uint64_t address, uint64_t sequence,
			 uint32_t count, const struct optrace_event *events)
{
	struct stat_bpf *skel = ctx;
	struct stat_injected_batch batch = {
		.tgid = (__u32)pid,
		.tid = tid,
		.sequence = sequence,
		.count = count,
		.events = (uintptr_t)events,
		.buffer = address,
	};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &batch, .ctx_size_in = sizeof(batch));
	int err;

	struct process_info info = { 0 };
	__u32 tgid = (__u32)pid;

	/* A process seen only through an idle buffer is named here. */
	process_name(pid, info.comm, sizeof(info.comm));
	bpf_map_update_elem(bpf_map__fd(skel->maps.processes), &tgid, &info, BPF_NOEXIST);
	for (uint32_t i = 0; i < count; i++)
		copy_strings(skel, pid, &events[i]);
	err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.inject_batch), &opts);
	if (err && diag_verbosity())
		diag("cannot count the buffer of thread %u: %s", tid, strerror(errno));
	return 0;
}

void stat_catch_up(struct stat_bpf *skel, struct tracer *tracer)
{
	tracer_read_buffers(tracer, inject_buffer, skel);
	stat_note_ranks(skel, true);
}

static bool has_string(const struct stat_snapshot *snapshot, __u32 tgid, __u64 address)
{
	for (size_t i = 0; i < snapshot->string_count; i++) {
		if (snapshot->strings[i].key.tgid == tgid &&
		    snapshot->strings[i].key.address == address)
			return true;
	}
	return false;
}

/*
 * A name the kernel did not copy, read from the process if it still runs:
 * into the strings map (for later snapshots, after the process is gone)
 * and the snapshot. The kernel copies a name when its aggregate is made; an
 * end counted from an idle thread's buffer (stat_catch_up) cannot read the
 * process, and its begin came in an earlier batch.
 */
static void fill_string(struct stat_bpf *skel, struct stat_snapshot *snapshot, __u32 tgid,
			__u64 address)
{
	struct string_key key = { .tgid = tgid, .address = address };
	struct string_value value = { 0 };
	struct string_row *grown;
	bool truncated = false;

	if (!address || address == STAT_OP_NOT_SEEN || has_string(snapshot, tgid, address))
		return;
	if (process_read_string((pid_t)tgid, address, value.text, sizeof(value.text), &truncated))
		return; /* gone: the address is shown */
	value.truncated = truncated;
	bpf_map_update_elem(bpf_map__fd(skel->maps.strings), &key, &value, BPF_NOEXIST);
	grown = realloc(snapshot->strings, (snapshot->string_count + 1) * sizeof(*grown));
	if (!grown)
		return;
	snapshot->strings = grown;
	memset(&grown[snapshot->string_count], 0, sizeof(*grown));
	grown[snapshot->string_count].key = key;
	grown[snapshot->string_count++].value = value;
}

static void fill_strings(struct stat_bpf *skel, struct stat_snapshot *snapshot)
{
	for (size_t i = 0; i < snapshot->op_count; i++) {
		const struct op_key *k = &snapshot->ops[i].key;

		fill_string(skel, snapshot, k->tgid, k->name);
		fill_string(skel, snapshot, k->tgid, k->parent_name);
		fill_string(skel, snapshot, k->tgid, k->root_name);
		fill_string(skel, snapshot, k->tgid, k->fallback_detail);
	}
	for (size_t i = 0; i < snapshot->task_count; i++) {
		const struct task_key *k = &snapshot->tasks[i].key;

		fill_string(skel, snapshot, k->tgid, k->name);
		fill_string(skel, snapshot, k->tgid, k->root_name);
		fill_string(skel, snapshot, k->tgid, k->op_name);
	}
	for (size_t i = 0; i < snapshot->launch_count; i++) {
		const struct launch_key *k = &snapshot->launches[i].key;

		fill_string(skel, snapshot, k->tgid, k->name);
		fill_string(skel, snapshot, k->tgid, k->root_name);
		fill_string(skel, snapshot, k->tgid, k->op_name);
	}
	for (size_t i = 0; i < snapshot->fallback_count; i++) {
		const struct fallback_key *k = &snapshot->fallbacks[i].key;

		fill_string(skel, snapshot, k->tgid, k->name);
		fill_string(skel, snapshot, k->tgid, k->detail);
		fill_string(skel, snapshot, k->tgid, k->root_name);
	}
	for (size_t i = 0; i < snapshot->wait_count; i++) {
		fill_string(skel, snapshot, snapshot->waits[i].key.tgid,
			    snapshot->waits[i].key.root_name);
		fill_string(skel, snapshot, snapshot->waits[i].key.tgid,
			    snapshot->waits[i].key.op_name);
	}
	for (size_t i = 0; i < snapshot->gpu_count; i++) {
		const struct gpu_key *k = &snapshot->gpus[i].key;

		fill_string(skel, snapshot, k->tgid, k->root_name);
		if (k->root_name)
			fill_string(skel, snapshot, k->tgid, k->op_name);
	}
}

int stat_snapshot_take(struct stat_bpf *skel, struct stat_snapshot *snapshot, bool clear)
{
	int err = stat_read_snapshot(skel, snapshot, clear);

	if (err)
		return err;
	fill_strings(skel, snapshot);
	/* A process seen since the last look: its rank from its first series on. */
	stat_note_ranks(skel, false);
	for (size_t i = 0; i < snapshot->process_count; i++) {
		struct process_row *process = &snapshot->processes[i];
		const struct optrace_runtime_info *read = rank_of(process->tgid);
		struct announced_rank announced;

		/* The last announcement the kernel saw; else what its memory said. */
		if (!bpf_map_lookup_elem(bpf_map__fd(skel->maps.announced_ranks), &process->tgid,
					 &announced)) {
			process->rank = announced.rank;
			process->rank_count = announced.rank_count;
		} else if (read) {
			process->rank = read->rank;
			process->rank_count = read->rank_count;
		}
	}
	return 0;
}

/* Every map a process has entries in is keyed by its tgid first. */
_Static_assert(offsetof(struct op_key, tgid) == 0, "tgid first");
_Static_assert(offsetof(struct task_key, tgid) == 0, "tgid first");
_Static_assert(offsetof(struct launch_key, tgid) == 0, "tgid first");
_Static_assert(offsetof(struct fallback_key, tgid) == 0, "tgid first");
_Static_assert(offsetof(struct wait_key, tgid) == 0, "tgid first");
_Static_assert(offsetof(struct string_key, tgid) == 0, "tgid first");
_Static_assert(offsetof(struct gpu_key, tgid) == 0, "tgid first");
_Static_assert(offsetof(struct gpu_drop_key, tgid) == 0, "tgid first");
_Static_assert(offsetof(struct gpu_correlation_key, tgid) == 0, "tgid first");

static bool listed(const __u32 *tgids, size_t count, __u32 tgid)
{
	for (size_t i = 0; i < count; i++) {
		if (tgids[i] == tgid)
			return true;
	}
	return false;
}

/* Deletes the entries of map whose key starts with one of tgids; how many it deleted. */
static size_t forget_in(const struct bpf_map *map, const __u32 *tgids, size_t count)
{
	size_t key_size = bpf_map__key_size(map), found = 0, capacity = 0, deleted = 0;
	char *keys = NULL, key[64], next[64];
	int fd = bpf_map__fd(map);
	void *previous = NULL;

	if (key_size > sizeof(key) || key_size < sizeof(__u32))
		return 0;
	/* Collected first: a key deleted mid-walk would send the walk back to the start. */
	while (bpf_map_get_next_key(fd, previous, next) == 0) {
		__u32 tgid;

		memcpy(key, next, key_size);
		previous = key;
		memcpy(&tgid, key, sizeof(tgid));
		if (!listed(tgids, count, tgid))
			continue;
		if (found == capacity) {
			char *grown;

			capacity = capacity ? capacity * 2 : 64;
			grown = realloc(keys, capacity * key_size);
			if (!grown)
				break; /* the rest at the next sweep */
			keys = grown;
		}
		memcpy(keys + found++ * key_size, key, key_size);
	}
	for (size_t i = 0; i < found; i++) {
		if (!bpf_map_delete_elem(fd, keys + i * key_size))
			deleted++;
	}
	free(keys);
	return deleted;
}

size_t stat_forget_processes(struct stat_bpf *skel, const __u32 *tgids, size_t count)
{
	const struct bpf_map *maps[] = {
		skel->maps.op_stats,
		skel->maps.op_stats_overflow,
		skel->maps.op_stats_reserve,
		skel->maps.task_stats,
		skel->maps.launch_stats,
		skel->maps.wait_stats,
		skel->maps.strings,
		skel->maps.processes,
		skel->maps.gpu_stats,
		skel->maps.gpu_drops,
		skel->maps.gpu_correlations,
		skel->maps.announced_ranks,
		skel->maps.task_stats_reserve,
		skel->maps.launch_stats_reserve,
		skel->maps.wait_stats_reserve,
		skel->maps.gpu_stats_reserve,
	};
	size_t deleted = 0;

	if (!count)
		return 0;
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		deleted += forget_in(maps[i], tgids, count);
	for (int i = 0; i < rank_count;) {
		if (listed(tgids, count, ranks[i].tgid))
			ranks[i] = ranks[--rank_count];
		else
			i++;
	}
	return deleted;
}
