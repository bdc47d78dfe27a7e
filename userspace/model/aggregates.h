/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The aggregates of `optrace stat` as read from the kernel, summed over CPUs
 * (or built from a capture's profile, for `report`), and what is derived from
 * them: percentiles, per-operation summaries ranked by what the user waits
 * for, and every table grouped alike: by the operation the user called,
 * helpers rolled in, or split by helper. Pure C: the unit tests build
 * snapshots by hand.
 */
#ifndef OPTRACE_MODEL_AGGREGATES_H
#define OPTRACE_MODEL_AGGREGATES_H

#include <linux/types.h>
#include <optrace/abi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "bpf/aggregates.h"
#include "model/durations.h"

/*
 * What an operation's calls set going, their helpers' included: the time
 * their task points ran (summed over the workers) and the device time of
 * the GPU work they launched.
 */
struct op_work {
	__u64 task_ns;
	__u64 task_runs;
	__u64 gpu_ns;
};

/*
 * Rows are a kernel map's key and value, then what only userspace fills
 * (zero from the kernel): report's work per operation and every duration,
 * for exact percentiles (owned, or NULL: the log2 histogram only).
 */
struct op_row {
	struct op_key key;
	struct latency latency;
	struct op_work work;
	struct durations *durations;
};

struct task_row {
	struct task_key key;
	struct latency latency;
	struct durations *durations;
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
	struct durations *durations;
};

/* GPU activity per operation and variant (bpf/aggregates.h's gpu_key). */
struct gpu_row {
	struct gpu_key key;
	struct gpu_totals totals;
};

/* A gpu_row's op_name for activities whose launch never came (root_name 0). */
#define STAT_GPU_NOT_LAUNCHED 2

struct gpu_drop_row {
	struct gpu_drop_key key;
	__u64 count;
};

struct string_row {
	struct string_key key;
	struct string_value value;
	/*
	 * The whole text, "..." included when it was cut (optrace report: a
	 * capture keeps 127 bytes of a name, as many as the kernel's
	 * aggregates, so that stat and report cut and count the same names);
	 * owned, or NULL.
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
	/* stat --cuda: GPU activity, and GPU records lost by where. */
	bool gpu_traced;
	struct gpu_row *gpus;
	size_t gpu_count;
	struct gpu_drop_row *gpu_drops;
	size_t gpu_drop_count;
	__u64 losses[STAT_LOSS__COUNT];
	/* More losses, printed after those (JSON: every one, even 0). */
	struct stat_more_loss *more_losses;
	size_t more_loss_count;
	/* What else is lost, in words, for the lost line (e.g. a capture cut short); or NULL. */
	const char *lost_note;
	/*
	 * report: each op row's work is its own (from the profile), GPU time
	 * too where has_gpu. stat: the work of the operations the user called
	 * is summed from the task table; a helper's is not known.
	 */
	bool work_per_op;
	bool has_gpu;
};

void stat_snapshot_free(struct stat_snapshot *snapshot);

/*
 * The fallback table, summed from the operations' rows (those that fell
 * back, by name, reason, detail and the operation the user called): the same
 * calls as the FALLBACK column, taken at one time. 0 or -ENOMEM.
 */
int stat_derive_fallbacks(struct stat_snapshot *snapshot);

/* Adds value to the loss called name (one of stat_loss_name's, else a new one). 0 or -ENOMEM. */
int stat_add_loss(struct stat_snapshot *snapshot, const char *name, __u64 value);

/* Adds from into into: counts, sums, extremes and histograms. */
void latency_merge(struct latency *into, const struct latency *from);

/*
 * The p-th quantile (0..1) in ns as the log2 histogram bounds it: the top of
 * its bucket (clamped to the true max), which the true value is at most and
 * more than half of; exact when every duration was the same.
 */
double latency_percentile(const struct latency *latency, double p);

/* How near a quantile is to the true value. */
enum stat_precision {
	STAT_EXACT,   /* every duration kept (report) */
	STAT_WITHIN,  /* a fine histogram: within 0.4% (report, past DURATIONS_EXACT_MAX) */
	STAT_AT_MOST, /* the log2 histogram's bound (stat): at most this, more than half */
};

struct stat_quantile {
	double ns;
	enum stat_precision precision;
};

/* The p-th quantile of a row: from its durations where kept, else its histogram. */
struct stat_quantile stat_quantile(const struct latency *latency, struct durations *durations,
				   double p);

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

/* Rows and names refused to processes past their quota, every process's together. */
__u64 stat_rows_refused(const struct stat_snapshot *snapshot);

/* An operation's rows summed: one per (name, depth, parent, root, call site). */
struct op_summary {
	__u64 name;
	__u64 parent_name;
	__u64 root_name;
	__u64 callsite;
	__u32 depth;
	__u32 path; /* as struct op_key's */
	struct latency latency;
	struct durations *durations; /* owned; NULL: the histogram only */
	struct op_work work;
	bool work_known;		      /* false: a helper's in stat */
	__u64 modes[OPTRACE_MODE__COUNT + 1]; /* the last: never announced */
	__u64 reasons[OPTRACE_MODE__COUNT + 1][OPTRACE_MODE_REASON__COUNT + 1];
	__u64 errors;
};

/*
 * The summaries of process tgid's operations (*out, to stat_summaries_free()),
 * most time first (stat_compare_summaries); their count.
 */
size_t stat_summarize_ops(const struct stat_snapshot *snapshot, __u32 tgid,
			  struct op_summary **out);
void stat_summaries_free(struct op_summary *summaries, size_t count);

/*
 * The path of a child of the row (name, callsite) at path parent_path: never
 * 0, so that a row with a parent and path 0 (stat's) matches by names alone.
 */
__u32 stat_tree_path(__u32 parent_path, __u64 name, __u64 callsite);

/* Whether summary child sits under parent in the tree. */
bool stat_summary_is_child(const struct op_summary *child, const struct op_summary *parent);

/* What a user waits for, at most: the larger of the calls' time, their tasks' and GPU's. */
__u64 stat_summary_cost(const struct op_summary *summary);

/* qsort() order of summaries: the largest cost first. */
int stat_compare_summaries(const void *a, const void *b);

/*
 * The task, launch, wait or fallback rows of process tgid, grouped as the
 * tables print them: by the operation the user called (root_name), helpers
 * rolled in; with split, also by the helper (op_name, 0: the root itself).
 * A fallback is always the helper's that fell back (name), under its root.
 */
enum stat_table { STAT_TASKS, STAT_LAUNCHES, STAT_WAITS, STAT_FALLBACKS };

struct stat_group {
	__u64 name;		/* task; fallback: the operation that fell back; wait: 0 */
	__u32 kind;		/* task: variant; wait: kind; fallback: reason */
	__u64 root_name;	/* 0: not known, or (waits) outside operations */
	__u64 op_name;		/* the helper, or 0 */
	__u64 detail;		/* fallback */
	struct latency latency; /* tasks and waits */
	struct durations *durations;
	__u64 count; /* launches and fallbacks */
	__u64 points;
};

/* The groups (*out, to stat_groups_free()), most time or count first; their count. */
size_t stat_group(const struct stat_snapshot *snapshot, __u32 tgid, enum stat_table table,
		  bool split, struct stat_group **out);
void stat_groups_free(struct stat_group *groups, size_t count);

/* Slots of modes[] and reasons[]: out-of-range values share the last. */
int stat_mode_slot(int mode);
int stat_reason_slot(int reason);

const char *stat_loss_name(int loss);

#endif /* OPTRACE_MODEL_AGGREGATES_H */
