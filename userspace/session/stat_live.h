/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What stat, top and serve share: stat.bpf.c loaded and attached to the
 * targets, its aggregates kept up to date (the buffers idle threads hold,
 * the ranks the runtimes announce) and taken as snapshots, and processes
 * forgotten (serve, once they exited).
 */
#ifndef OPTRACE_SESSION_STAT_LIVE_H
#define OPTRACE_SESSION_STAT_LIVE_H

#include <stdbool.h>
#include <stddef.h>

#include "model/aggregates.h"

struct stat_bpf;
struct tracer;
struct tracer_options;

/* stat's BPF object, opened with libbpf's messages on; NULL (said why) if it cannot be. */
struct stat_bpf *stat_open(void);

/*
 * Prepares tracer for targets, loads skel and attaches: counting starts
 * now, and SIGINT or SIGTERM set tracer_interrupted(). With cuda,
 * GPU activity too (session/cuda.h: the collector loaded where it is not).
 * Says what failed; returns 0 or a negative errno.
 */
int stat_attach(struct tracer *tracer, struct stat_bpf *skel, const struct tracer_options *targets,
		bool cuda, bool quiet);

/*
 * The ranks the traced processes announced, read from their memory while
 * they live, so that snapshots have them after they exit: new processes at
 * once; with recheck, those whose runtime did not initialise yet (its rank
 * may change). Call every tick, with recheck each second.
 */
void stat_note_ranks(struct stat_bpf *skel, bool recheck);

/*
 * Before a snapshot: what the targets' idle threads still hold in their
 * fast-path buffers is counted in the kernel (as if handed over), and the
 * ranks are checked again.
 */
void stat_catch_up(struct stat_bpf *skel, struct tracer *tracer);

/* stat_read_snapshot(), with the ranks known filled in. 0 or a negative errno. */
int stat_snapshot_take(struct stat_bpf *skel, struct stat_snapshot *snapshot, bool clear);

/*
 * Forgets the processes tgids[count]: their aggregates, names and ranks
 * leave the kernel's maps and this table, which makes room for others.
 * Returns how many entries were deleted.
 */
size_t stat_forget_processes(struct stat_bpf *skel, const __u32 *tgids, size_t count);

#endif /* OPTRACE_SESSION_STAT_LIVE_H */
