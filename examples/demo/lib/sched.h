/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The scheduler: one in-order stream of launches drained by pools of
 * processors, a little like Legion with a single in-order stream. A launch's
 * points start only when every earlier launch has completed; the points of
 * one launch run in parallel on the processors of its kind.
 */
#ifndef DEMO_SCHED_H
#define DEMO_SCHED_H

#include <stdint.h>

#include "work.h"

enum proc_kind { PROC_CPU, PROC_OMP, PROC_GPU, PROC__COUNT };

struct launch {
	struct launch *next;
	uint64_t seq;	  /* position in the stream, from 1 */
	uint64_t task_id; /* liboptrace's, 0 while untraced */
	const char *task_name;
	const char *op_name;   /* the launching operation's, for the truth */
	const char *root_name; /* and the operation the user called */
	enum proc_kind kind;
	int variant; /* enum optrace_variant */
	uint32_t points;
	uint32_t next_point;   /* the next point to hand out */
	uint32_t ended_points; /* points that have ended */
	struct work *work;     /* owned: freed on completion */
};

/* Processors get ids 0.. for CPUs, then the OpenMP ones, then the GPU ones. */
int sched_start(unsigned int cpus, unsigned int omp_procs, unsigned int omp_threads,
		unsigned int gpu_procs);

/* Let every submitted launch complete, then stop the processors. */
void sched_stop(void);

unsigned int sched_procs(enum proc_kind kind);

/* Queue l (the stream owns it from now on); returns its sequence number. */
uint64_t sched_submit(struct launch *l);

/* Block until launch seq has completed; a wait of kind for op if not yet. */
void sched_wait(uint64_t op, uint64_t seq, int kind);

/* Block until everything submitted so far has completed (a FENCE wait). */
void sched_fence(uint64_t op);

#endif /* DEMO_SCHED_H */
