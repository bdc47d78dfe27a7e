/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The aggregates of `optrace stat` as read from the kernel, summed over CPUs,
 * and what is derived from them: percentiles, per-operation summaries, the
 * roll-up of helpers into the operations the user called. Pure C: the unit
 * tests build snapshots by hand.
 */
#ifndef OPTRACE_STAT_MODEL_H
#define OPTRACE_STAT_MODEL_H

#include <linux/types.h>
#include <optrace/abi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "bpf/aggregates.h"

struct op_row {
	struct op_key key;
	struct latency latency;
};

struct task_row {
	struct task_key key;
	struct latency latency;
};

struct launch_row {
	struct launch_key key;
	struct launch_stats stats;
};

struct fallback_row {
	struct fallback_key key;
	__u64 count;
};

struct wait_row {
	struct wait_key key;
	struct latency latency;
};

struct string_row {
	struct string_key key;
	struct string_value value;
	/*
	 * The whole text, "..." included when it was cut, where value.text is
	 * too short for it (optrace report: a capture keeps 127 bytes of a
	 * name, the kernel's aggregates 63); owned, or NULL.
	 */
	char *text;
};

/* Bytes of a name as printed: a capture's 127, "...", the NUL, to spare. */
#define STAT_TEXT_MAX 256

/* A loss that the kernel's aggregates do not count (report: the capture's). */
struct stat_more_loss {
	char *name; /* owned */
	__u64 value;
};

struct process_row {
	__u32 tgid;
	struct process_info info;
	__s32 rank;	  /* as the runtime announced it (optrace_runtime) */
	__s32 rank_count; /* 0: not known */
};

struct stat_snapshot {
	struct process_row *processes; /* names, where known */
	size_t process_count;
	struct op_row *ops;
	size_t op_count;
	struct task_row *tasks;
	size_t task_count;
	struct launch_row *launches;
	size_t launch_count;
	struct fallback_row *fallbacks;
	size_t fallback_count;
	struct wait_row *waits;
	size_t wait_count;
	struct string_row *strings;
	size_t string_count;
	__u64 losses[STAT_LOSS__COUNT];
	/* More losses, printed after those (JSON: every one, even 0). */
	struct stat_more_loss *more_losses;
	size_t more_loss_count;
	/* What else is lost, in words, for the lost line (e.g. a capture cut short); or NULL. */
	const char *lost_note;
};

void stat_snapshot_free(struct stat_snapshot *snapshot);

/* Adds value to the loss called name (one of stat_loss_name's, else a new one). 0 or -ENOMEM. */
int stat_add_loss(struct stat_snapshot *snapshot, const char *name, __u64 value);

/* Adds from into into: counts, sums, extremes and histograms. */
void latency_merge(struct latency *into, const struct latency *from);

/* The p-th quantile (0..1) in ns, interpolated within its log2 bucket. */
double latency_percentile(const struct latency *latency, double p);

/*
 * The name at address in process tgid: "(unknown)" for 0, "(unreadable)"
 * or the text with "..." when truncated (buffer: STAT_TEXT_MAX bytes hold
 * any). Never NULL; valid until the snapshot is freed or buffer reused.
 */
const char *stat_string(const struct stat_snapshot *snapshot, __u32 tgid, __u64 address,
			char *buffer, size_t size);

/* The processes in the snapshot, ascending; returns how many (<= max). */
size_t stat_processes(const struct stat_snapshot *snapshot, __u32 *tgids, size_t max);

/* The process row of tgid, or NULL. */
const struct process_row *stat_process(const struct stat_snapshot *snapshot, __u32 tgid);

/* An operation's rows summed: one per (name, depth, parent, root, call site). */
struct op_summary {
	__u64 name;
	__u64 parent_name;
	__u64 root_name;
	__u64 callsite;
	__u32 depth;
	struct latency latency;
	__u64 modes[OPTRACE_MODE__COUNT + 1]; /* the last: never announced */
	__u64 reasons[OPTRACE_MODE__COUNT + 1][OPTRACE_MODE_REASON__COUNT + 1];
	__u64 errors;
};

/* The summaries of process tgid's operations (*out, to free()); their count. */
size_t stat_summarize_ops(const struct stat_snapshot *snapshot, __u32 tgid,
			  struct op_summary **out);

/* qsort() order of summaries: the most time first. */
int stat_compare_summaries(const void *a, const void *b);

/* Slots of modes[] and reasons[]: out-of-range values share the last. */
int stat_mode_slot(int mode);
int stat_reason_slot(int reason);

const char *stat_loss_name(int loss);

#endif /* OPTRACE_STAT_MODEL_H */
