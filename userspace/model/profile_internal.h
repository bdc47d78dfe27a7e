/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What profile.c shares with gpu_stream.c and gpu_readahead.c, which
 * attribute GPU activity as it comes or read ahead: threads, their open
 * frames, how a frame is kept alive, and the attribution's interface.
 */
#ifndef OPTRACE_MODEL_PROFILE_INTERNAL_H
#define OPTRACE_MODEL_PROFILE_INTERNAL_H

#include "model/profile.h"

/*
 * A task point running, found by (task, point): a scheduler may begin
 * several points on one thread before it ends them, and a point may end on
 * another thread than the one it began on (user-level threads that move).
 */
struct run_node {
	struct profile_run run;
	struct profile_thread *thread; /* the one it began on */
	struct run_node *thread_prev;  /* its thread's open runs, newest first */
	struct run_node *thread_next;
	struct run_node *task_next; /* the task's running points */
	/*
	 * GPU calls launched in it whose activity has not come (gpu_stream.c):
	 * its end waits for them, done and done_ns say it came.
	 */
	uint32_t holds;
	bool done;
	uint64_t done_ns;
};

struct profile_thread {
	uint32_t tid;		   /* the host's id */
	struct profile_op **stack; /* open operations, outermost first */
	size_t depth;
	size_t capacity;
	struct run_node *runs;	  /* task points begun here, running, newest first */
	struct profile_wait wait; /* the wait in progress, when wait.begin_ns */
	const struct gpu_thread_launches *launches; /* its GPU launches, if any */
	uint32_t cupti_tid;			    /* their thread id in CUPTI's records */
	bool launches_taken;			    /* looked up, found or not */
	size_t next_launch;			    /* the first not attributed yet */
};

/* The thread (tgid, tid), made on first sight; NULL without memory. */
struct profile_thread *profile_thread_of(struct profile *profile, uint32_t tgid, uint32_t tid);

/* The innermost frame open on thread: a task point running (*run), or an operation. */
void profile_open_frame(struct profile *profile, struct profile_thread *thread,
			struct profile_run **run, struct profile_op **op);

/*
 * One attributed activity to the consumer; first: the first of its launch
 * drawn (with times). op and run, if given, are alive.
 */
void profile_emit_gpu(struct profile *profile, const struct gpu_activity *activity,
		      const struct gpu_launch *launch, uint32_t tid, struct profile_run *run,
		      struct profile_op *op, bool first);

/* Lets go of op (a hold taken with op->pending++). */
void profile_release(struct profile *profile, struct profile_op *op);

/* A run whose end waited for its GPU calls (holds 0 again): handed over, freed. */
void profile_complete_run(struct profile *profile, struct run_node *node);

/*
 * How GPU activity is attributed, chosen once before the first record:
 * read ahead (gpu_readahead.c, profile_set_gpu) or as it comes
 * (gpu_stream.c, profile_stream_gpu). profile.c calls through it and knows
 * neither; they use the frames above, so the calls run one way.
 */
struct gpu_attribution {
	/* Before each record: its time, a frame it may open or close. */
	void (*before)(struct profile *profile, const struct record_event *event);
	/* A gpu_launch, GPU, GPU name or GPU dropped record. 0 or -ENOMEM. */
	int (*record)(struct profile *profile, const struct record_event *event, size_t size);
	/* After the last record, while the frames are still open. */
	void (*flush)(struct profile *profile);
	/* After the open frames were closed: what no frame took. */
	void (*finish)(struct profile *profile);
	/* What it holds, finished or not (an error). */
	void (*free)(struct profile *profile);
};

#endif /* OPTRACE_MODEL_PROFILE_INTERNAL_H */
