/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What stat.bpf.c aggregates in the kernel and optrace reads back. */
#ifndef OPTRACE_BPF_AGGREGATES_H
#define OPTRACE_BPF_AGGREGATES_H

#include "events.h" /* struct string_key */

/* Bytes of a name kept, with its NUL: as many as a capture keeps (RECORD_STRING_LEN). */
#define STAT_NAME_LEN 128
#define STAT_STACK_MAX 16  /* nesting the kernel side follows per thread */
#define STAT_HIST_SLOTS 40 /* log2(ns) buckets: up to ~18 minutes */

_Static_assert(STAT_NAME_LEN == RECORD_STRING_LEN, "stat and record cut names alike");

/* An operation's aggregate: one per (process, name, place in the tree, outcome). */
struct op_key {
	__u32 tgid;
	__u32 depth;
	__u64 name;	       /* address of the name in the process */
	__u64 parent_name;     /* the parent's, 0 at depth 0 or when it began untraced */
	__u64 root_name;       /* the depth-0 operation's, 0 at depth 0 or when unknown */
	__u64 callsite;	       /* 0 in the kernel; optrace report --by-site, --internal */
	__u64 fallback_detail; /* what its fallback said, 0 if none: the fallback table's rows */
	__u8 mode;	       /* enum optrace_mode, STAT_MODE_UNSET if never announced */
	__u8 mode_reason;
	__u8 fallback_reason;
	__u8 status;
	/*
	 * 0 in the kernel; report's: where in the tree (stat_tree_path() of the
	 * ancestors' names and call sites), so that a helper's children are
	 * counted under the one call site that made them.
	 */
	__u32 path;
};

#define STAT_MODE_UNSET 0xff

struct latency {
	__u64 count;
	__u64 total_ns;
	__u64 self_ns; /* total less the time in nested operations */
	__u64 min_ns;
	__u64 max_ns;
	__u64 hist[STAT_HIST_SLOTS]; /* slot i: durations in [2^i, 2^(i+1)) ns */
};

/*
 * Task point runs, per (process, task name, variant, root op, helper). The
 * helper is the nested operation that launched the task, 0 when the
 * operation the user called launched it itself, STAT_OP_NOT_SEEN when stat
 * counted the run before the launch (the fast path hands each thread's
 * events over in batches of its own) or never saw the launch.
 */
#define STAT_OP_NOT_SEEN 1 /* no name's address */
struct task_key {
	__u32 tgid;
	__u32 variant;
	__u64 name;
	__u64 root_name; /* name of the operation the user called */
	__u64 op_name;	 /* name of the helper that launched it, or 0 */
};

/* Task launches, per (process, task name, root op, helper). */
struct launch_key {
	__u32 tgid;
	__u32 pad;
	__u64 name;
	__u64 root_name;
	__u64 op_name;
};

struct launch_stats {
	__u64 count;
	__u64 points;
};

/*
 * Fallbacks, per (process, op name, reason, detail, root op): summed from
 * the operations' rows (stat_derive_fallbacks), so that a table and the
 * FALLBACK column always count the same calls.
 */
struct fallback_key {
	__u32 tgid;
	__u32 reason;
	__u64 name;
	__u64 detail;
	__u64 root_name; /* the operation the user called, if name is a helper; else 0 */
};

/*
 * Waits, per (process, kind, name of the root op open on the waiting
 * thread, 0 outside ops; and of the innermost op there, if a helper).
 */
struct wait_key {
	__u32 tgid;
	__u32 kind;
	__u64 root_name;
	__u64 op_name;
};

/*
 * GPU activity (liboptrace-cupti's records, with --cuda), per (process,
 * operation the user called, helper that launched, variant of the task
 * point that launched): attributed in the kernel through the call's
 * correlation id, which the launching thread's gpu_launch event ties to the
 * frame open there (bpf/stat.bpf.c), as report attributes a capture's.
 */
#define STAT_GPU_NO_VARIANT 0xffffffffu /* launched from an operation's own thread, or outside */
struct gpu_key {
	__u32 tgid;
	__u32 variant;	 /* enum optrace_variant, or STAT_GPU_NO_VARIANT */
	__u64 root_name; /* the operation the user called; 0: launched outside any */
	__u64 op_name;	 /* the helper that launched, 0: the root itself; or STAT_OP_NOT_SEEN */
};

struct gpu_totals {
	__u64 kernels;
	__u64 copies;
	__u64 memsets;
	__u64 gpu_ns;	     /* device time */
	__u64 max_ns;	     /* the longest activity */
	__u64 bytes;	     /* copied or set */
	__u64 invalid_times; /* activities CUPTI gave no valid times: counted, 0 ns */
};

/* A CUDA call's activities, by (process, CUPTI's correlation id). */
struct gpu_correlation_key {
	__u32 tgid;
	__u32 correlation_id;
};

/*
 * Launched: where its activities count. Not yet: activities that came
 * before the launch (a thread hands its batch over late), waiting for it;
 * those still waiting when stat reads the map are "launch not recorded".
 */
struct gpu_correlation {
	struct gpu_key key; /* set before launched */
	__u32 launched;
	__u32 flags; /* OPTRACE_GPU_LAUNCH_*: its launch's */
	struct gpu_totals waiting;
};

/* GPU records lost, per (process, where). */
struct gpu_drop_key {
	__u32 tgid;
	__u32 source; /* enum stat_gpu_drop */
};

/* Where: enum optrace_gpu_drop_source's, then stat's own. */
enum stat_gpu_drop {
	STAT_GPU_DROP_ACTIVITY_BUFFER, /* CUPTI's buffers were full */
	STAT_GPU_DROP_API_CALLBACK,    /* launches the collector could not mark */
	STAT_GPU_DROP_MAP_FULL,	       /* the kernel's correlation or GPU maps were full */
	STAT_GPU_DROP_MALFORMED,       /* records unreadable, too short, of an unknown version */
	STAT_GPU_DROP__COUNT
};

struct string_value {
	char text[STAT_NAME_LEN];
	__u8 truncated;	 /* longer than STAT_NAME_LEN - 1 bytes: counted as string_truncated */
	__u8 unreadable; /* not mapped when the probe fired */
};

/*
 * A thread's buffer read by optrace (process_vm_readv) at the stop, handed
 * to the inject_batch program, which counts it as the batch probe would.
 */
struct stat_injected_batch {
	__u32 tgid;
	__u32 tid;
	__u64 sequence;
	__u32 count;
	__u32 pad;
	__u64 events; /* address of the events, in optrace's memory */
	__u64 buffer; /* their address in the process: names the buffer */
};

/* A traced process's command name, as ps shows it. */
/*
 * Each traced process's name, and its share of the aggregates' tables: a
 * process takes at most rows_per_process rows of op_stats, task_stats,
 * launch_stats and wait_stats together, and strings_per_process strings,
 * so that one process with many names cannot leave the others none. What
 * it is refused is counted against it.
 */
struct process_info {
	char comm[16];
	__u64 rows;    /* of the four tables; zeroed when a read takes them */
	__u64 strings; /* of the strings table */
	__u64 refused; /* rows and strings refused past the quota */
};

#define STAT_ROWS_PER_PROCESS 4096 /* of each table's 16384: a quarter */

/*
 * The rank a process announced while traced (rt_init), by tgid: a process
 * can exit before optrace reads its rank from its memory.
 */
struct announced_rank {
	__s32 rank;
	__s32 rank_count;
};

/* Everything lost is counted (per CPU; optrace prints the total). */
enum stat_loss {
	STAT_LOSS_MAP_FULL,	/* an aggregate map was full */
	STAT_LOSS_THREADS_FULL, /* no per-thread slot */
	STAT_LOSS_STRING_UNREADABLE,
	STAT_LOSS_STRING_TRUNCATED,
	STAT_LOSS_TOO_DEEP,  /* nesting beyond STAT_STACK_MAX */
	STAT_LOSS_UNMATCHED, /* an end without its begin (began before attach) */
	STAT_LOSS_BATCH_BAD, /* events of a malformed or unreadable batch */
	STAT_LOSS_BATCH_GAP, /* events missing from a thread's sequence */
	STAT_LOSS__COUNT
};

#endif /* OPTRACE_BPF_AGGREGATES_H */
