/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The profile model: the records of a capture (bpf/events.h), fed in the
 * order the ring buffer gave them, become operations that nest per thread,
 * task runs attributed to the operation that launched them and to its root
 * (the operation the user called), and waits. Pure C, no BPF.
 *
 * Memory is bounded by what is open: an operation is handed to the consumer
 * (op_done) and freed once it has ended, its nested operations are done and
 * every task point it launched has ended, so that its title can say where
 * its tasks ran. Nothing assumes a global time order across CPUs: only each
 * thread's own order, and that a launch comes before its tasks' runs.
 */
#ifndef OPTRACE_MODEL_PROFILE_H
#define OPTRACE_MODEL_PROFILE_H

#include <linux/types.h>
#include <optrace/abi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/events.h"
#include "model/gpu_index.h"
#include "model/names.h"
#include "common/idmap.h"

#define PROFILE_MODE_UNSET (-1)

struct profile_op {
	uint32_t tgid;
	uint32_t tid;
	uint64_t id;
	uint32_t depth;
	uint64_t name; /* string addresses: profile_string() */
	uint64_t callsite;
	uint64_t parent_name; /* 0 when the parent began untraced */
	uint64_t root_name;   /* the depth-0 operation's; own name at depth 0 */
	uint64_t begin_ns;
	uint64_t end_ns;
	uint64_t child_ns; /* time in nested operations */
	int mode;	   /* enum optrace_mode, or PROFILE_MODE_UNSET */
	int mode_reason;
	int fallback_reason; /* OPTRACE_FALLBACK_NONE if none */
	uint64_t fallback_detail;
	int status;
	bool cut; /* still open when the capture ended: closed there */
	/* Task points that ran, per variant: its own, and its own plus its helpers'. */
	uint32_t points[OPTRACE_VARIANT__COUNT];
	uint32_t tree_points[OPTRACE_VARIANT__COUNT];
	/* Its own and its helpers' task point runs (any variant), and their time. */
	uint64_t tree_runs;
	uint64_t tree_task_ns;
	/* GPU activity it launched (itself or through its tasks), and with its helpers'. */
	uint64_t gpu_ns;
	uint32_t gpu_count;
	uint64_t tree_gpu_ns;

	/*
	 * The report's path of this op's children (profile_aggregates.c), kept
	 * while it is open so that a child at depth N does not walk N ancestors.
	 */
	uint32_t children_path;
	bool children_path_known;

	/* Private to the model. */
	struct profile_op *parent;
	uint32_t pending; /* open itself, nested ops not done, task points not ended */
	bool ended;
};

struct profile_run {
	uint32_t tgid;
	uint32_t tid; /* the worker thread it began on */
	uint64_t task;
	uint64_t task_name;
	uint32_t point;
	int variant;
	uint32_t processor;
	uint64_t launch_ns;
	uint64_t begin_ns;
	uint64_t end_ns;
	int status;
	bool cut;
	const struct profile_op *op;   /* the launching operation, while known */
	const struct profile_op *root; /* the operation the user called */
	uint64_t op_name;	       /* their names, also once they are gone */
	uint64_t root_name;
	uint64_t gpu_ns; /* GPU activity this point launched */
	uint32_t gpu_count;
};

/*
 * A kernel, copy or memset, attributed: its launch (a CUDA API call) was
 * made on a thread while an operation or a task point was open there.
 */
struct profile_gpu {
	uint32_t tgid;
	uint32_t tid; /* the launching thread, as the host numbers it (0: launch not recorded) */
	const struct gpu_activity *activity;
	const struct gpu_launch *launch; /* NULL: its API record was not captured */
	const char *name;		 /* kernel name, "memcpy HtoD", ... */
	const struct profile_op *op;	 /* the op open at the launch, or whose task ran; or NULL */
	const struct profile_op *root;	 /* the operation the user called */
	uint64_t op_name;
	uint64_t root_name;
	const struct profile_run *run; /* the task point running at the launch, or NULL */
	bool first_of_launch;	       /* no activity of its launch with times came before */
};

struct profile_wait {
	uint32_t tgid;
	uint32_t tid;
	int kind;
	uint64_t begin_ns;
	uint64_t end_ns;
	const struct profile_op *root; /* NULL outside operations */
	uint64_t root_name;
	const struct profile_op *op; /* the innermost operation open, or NULL */
	uint64_t op_name;	     /* its name if it is a helper (depth > 0), else 0 */
};

struct profile;

struct profile_consumer {
	void *ctx;
	/* An operation began (its mode and tasks are not known yet). */
	void (*op_begin)(void *ctx, const struct profile *profile, const struct profile_op *op);
	/* An operation is complete; it is freed after the call. */
	void (*op_done)(void *ctx, const struct profile *profile, const struct profile_op *op);
	/* A task point ran (run->op and run->root are still alive). */
	void (*task_run)(void *ctx, const struct profile *profile, const struct profile_run *run);
	/* op: the operation that launched it (NULL: not captured), root_name its root's. */
	void (*task_launch)(void *ctx, const struct profile *profile, uint32_t tgid,
			    uint64_t task_name, const struct profile_op *op, uint64_t root_name,
			    uint32_t points);
	void (*wait)(void *ctx, const struct profile *profile, const struct profile_wait *wait);
	void (*fallback)(void *ctx, const struct profile *profile, const struct profile_op *op);
	void (*rt_init)(void *ctx, const struct profile *profile, uint32_t tgid, int rank,
			int rank_count);
	/*
	 * GPU activity, op and run alive: at its launch's place in its thread's
	 * order (read ahead), or as it comes (streamed: after the frame's end
	 * was read, before the frame is handed over).
	 */
	void (*gpu)(void *ctx, const struct profile *profile, const struct profile_gpu *gpu);
};

struct profile_stats {
	uint64_t records;
	uint64_t unmatched; /* ends and runs whose begin was not captured */
	uint64_t malformed; /* records of unknown type or size */
	uint64_t cut_ops;   /* operations still open at the end */
	uint64_t cut_runs;
	uint64_t first_ns;
	uint64_t last_ns;
	uint64_t gpu_in_ops;	 /* GPU activities attributed to an operation */
	uint64_t gpu_outside;	 /* launched where no operation was open */
	uint64_t gpu_unlaunched; /* whose launch was not captured */
};

struct profile {
	struct profile_consumer consumer;
	struct idmap threads;	     /* (tgid, tid) -> struct profile_thread */
	struct idmap ops;	     /* (tgid, op id) -> struct profile_op, until done */
	struct idmap tasks;	     /* (tgid, task id) -> struct profile_task, while points run */
	struct idmap running;	     /* (tgid, task id) -> its points running (profile.c) */
	struct idmap strings;	     /* (tgid, address) -> char * */
	struct profile_names names;  /* commands, thread names, ranks */
	const struct gpu_index *gpu; /* sealed, or gpu_stream's; NULL: no GPU activity */
	const struct gpu_attribution *attribution; /* chosen once; NULL: no GPU activity */
	struct gpu_stream *gpu_stream; /* attributes GPU records as they come, or NULL */
	struct idmap gpu_claimed; /* (tgid, CUPTI's tid) -> the thread that took its launches */
	struct profile_stats stats;
};

void profile_init(struct profile *profile, const struct profile_consumer *consumer);

/*
 * The GPU activity to attribute (sealed), read ahead (gpu_readahead.c),
 * before the first record is fed.
 */
void profile_set_gpu(struct profile *profile, const struct gpu_index *gpu);

/*
 * The capture has gpu_launch records: GPU records are attributed as they
 * come, memory bounded by the calls in flight, not read ahead. Before the
 * first record is fed (gpu_stream.c). 0 or -ENOMEM.
 */
int profile_stream_gpu(struct profile *profile);
/* Streamed: GPU times (CUPTI's, the recording host's) move by offset_ns. */
void profile_set_gpu_offset(struct profile *profile, int64_t offset_ns);

/* One record as the ring buffer gave it. Returns 0 or -ENOMEM. */
int profile_feed(struct profile *profile, const void *record, size_t size);

/*
 * The capture ended: operations and task runs still open are closed at the
 * last timestamp seen, marked cut, and handed over.
 */
void profile_finish(struct profile *profile);

void profile_free(struct profile *profile);

/* The text at address in process tgid, or a placeholder; never NULL. */
const char *profile_string(const struct profile *profile, uint32_t tgid, uint64_t address);

#endif /* OPTRACE_MODEL_PROFILE_H */
