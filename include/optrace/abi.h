/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The optrace probe ABI: the values that travel in probe arguments.
 *
 * These numbers are part of every ABI version since 1. A value is never
 * renumbered or reused; new values are appended before the __COUNT
 * sentinel, and tracers print values they do not know as "unknown".
 */
#ifndef OPTRACE_ABI_H
#define OPTRACE_ABI_H

#ifndef __bpf__
#include <stdint.h> /* BPF programs bring the fixed-width types themselves */
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*
 * 1: the per-event probes. 2: the fast path (the batch probe and the event
 * layout below) beside them; every ABI 1 probe is unchanged.
 */
#define OPTRACE_ABI_VERSION 2

/* How an operation ran (op_mode, argument 2). */
enum optrace_mode {
	OPTRACE_MODE_EAGER = 0,	   /* computed at once on the calling thread */
	OPTRACE_MODE_DEFERRED = 1, /* split into tasks run by processors */
	OPTRACE_MODE_MIXED = 2,	   /* its helper operations ran in different modes */
	OPTRACE_MODE_FALLBACK = 3, /* a reference (host) implementation ran */
	OPTRACE_MODE__COUNT
};

/* Why the runtime chose that mode (op_mode, argument 3). */
enum optrace_mode_reason {
	OPTRACE_MODE_REASON_NONE = 0,
	OPTRACE_MODE_REASON_BELOW_THRESHOLD = 1, /* volume at or below the eager threshold */
	OPTRACE_MODE_REASON_ABOVE_THRESHOLD = 2, /* volume above the eager threshold */
	OPTRACE_MODE_REASON_FORCED = 3,		 /* forced by configuration */
	OPTRACE_MODE_REASON_EMPTY = 4,		 /* no elements: nothing to defer */
	OPTRACE_MODE_REASON_INPUTS_DEFERRED = 5, /* small, but an input is deferred */
	OPTRACE_MODE_REASON_HELPERS = 6,	 /* follows the helper operations it called */
	OPTRACE_MODE_REASON_FALLBACK = 7,	 /* see the op_fallback probe */
	OPTRACE_MODE_REASON__COUNT
};

/* Why a reference path ran (op_fallback, argument 2). */
enum optrace_fallback_reason {
	OPTRACE_FALLBACK_NONE = 0,
	OPTRACE_FALLBACK_UNIMPLEMENTED_API = 1,	    /* the runtime lacks the operation */
	OPTRACE_FALLBACK_UNSUPPORTED_ARGUMENTS = 2, /* it lacks these arguments */
	OPTRACE_FALLBACK_UNSUPPORTED_DTYPE = 3,	    /* it lacks this element type */
	OPTRACE_FALLBACK_NO_VARIANT = 4,	    /* no task variant for the target */
	OPTRACE_FALLBACK_OTHER = 5,
	OPTRACE_FALLBACK__COUNT
};

/* Which implementation of a task ran (task_begin, argument 3). */
enum optrace_variant {
	OPTRACE_VARIANT_CPU = 0,
	OPTRACE_VARIANT_OPENMP = 1,
	OPTRACE_VARIANT_GPU = 2,
	OPTRACE_VARIANT_HOST_REFERENCE = 3, /* the reference path, run as a task */
	OPTRACE_VARIANT__COUNT
};

/* What the caller blocked on (wait_begin and wait_end, argument 2). */
enum optrace_wait_kind {
	OPTRACE_WAIT_FUTURE = 0,     /* a scalar result */
	OPTRACE_WAIT_INLINE_MAP = 1, /* host access to a deferred array's data */
	OPTRACE_WAIT_FENCE = 2,	     /* all outstanding work */
	OPTRACE_WAIT_OTHER = 3,
	OPTRACE_WAIT__COUNT
};

/* How an operation or a task ended (op_end and task_end, argument 2). */
enum optrace_status { OPTRACE_STATUS_OK = 0, OPTRACE_STATUS_ERROR = 1, OPTRACE_STATUS__COUNT };

/*
 * The fast path. While a tracer arms the batch probe, each call appends one
 * struct optrace_event to a buffer owned by the calling thread, and the
 * buffer is handed over by one batch probe hit when it is full, when its
 * oldest event is older than the flush bound, at thread and process exit and
 * before fork. This layout is shared by liboptrace, the BPF programs and
 * optrace's decoder; it only grows by new kinds.
 */
enum optrace_event_kind {
	OPTRACE_EVENT_OP_BEGIN = 1,
	OPTRACE_EVENT_OP_END = 2,
	OPTRACE_EVENT_OP_MODE = 3,
	OPTRACE_EVENT_OP_FALLBACK = 4,
	OPTRACE_EVENT_TASK_LAUNCH = 5,
	OPTRACE_EVENT_TASK_BEGIN = 6,
	OPTRACE_EVENT_TASK_END = 7,
	OPTRACE_EVENT_WAIT_BEGIN = 8,
	OPTRACE_EVENT_WAIT_END = 9,
	OPTRACE_EVENT_GPU_LAUNCH = 10, /* optrace_gpu_launch(): a CUDA call that launches */
	OPTRACE_EVENT__COUNT
};

/*
 * One event, 48 bytes. time_ns is CLOCK_MONOTONIC, the clock of
 * bpf_ktime_get_ns(), read in userspace. Strings are addresses in the
 * process, as in the per-event probes.
 *
 *   kind          id      small           medium        a          b         c
 *   op_begin      op      -               depth         parent op  name      call site
 *   op_end        op      status          -             -          -         -
 *   op_mode       op      mode            mode reason   -          -         -
 *   op_fallback   op      reason          -             -          detail    -
 *   task_launch   task    -               points        op         name      root op
 *   task_begin    task    variant         point         processor  name      root op's name
 *   task_end      task    status          point         -          -         -
 *   wait_begin    op      wait kind       -             -          -         -
 *   wait_end      op      wait kind       -             -          -         -
 *   gpu_launch    corr.   api kind        flags         -          -         -
 *
 * task_begin carries its task's name and root op's name (0 if unknown), so
 * that a worker's batch makes sense before the launching thread's arrives.
 * gpu_launch carries CUPTI's correlation id of a CUDA call that launches
 * device work, and enum optrace_gpu_api_kind: in the thread's own order, it
 * ties the kernels and copies of that call to the frame open there.
 */
struct optrace_event {
	uint64_t time_ns;
	uint8_t kind; /* enum optrace_event_kind */
	uint8_t small;
	uint16_t reserved;
	uint32_t medium;
	uint64_t id;
	uint64_t a;
	uint64_t b;
	uint64_t c;
};

#define OPTRACE_BATCH_EVENTS 256		 /* events a thread buffers before it flushes */
#define OPTRACE_BATCH_MAGIC 0x4f544231u		 /* "OTB1" */
#define OPTRACE_BATCH_REGISTRY_MAGIC 0x4f545231u /* "OTR1" */

/*
 * A thread's buffer, in the process's memory. The tracer reads idle threads'
 * buffers (process_vm_readv) through the registry, so every field a reader
 * needs is here. position packs the sequence number of events[0] (per
 * thread, counting every event the thread ever buffered) above 16 bits of
 * count, so that one 8-byte load gives a consistent pair: a reader takes
 * position, copies events[0..count), takes position again, and keeps the
 * events only if the sequence number did not move.
 */
struct optrace_batch {
	uint32_t magic;	     /* OPTRACE_BATCH_MAGIC */
	uint16_t event_size; /* sizeof(struct optrace_event) */
	uint16_t capacity;   /* OPTRACE_BATCH_EVENTS */
	uint32_t tid;	     /* the owning thread, 0 while the buffer is free */
	uint32_t reserved;
	uint64_t position; /* sequence << 16 | count */
	uint64_t next;	   /* the registry's next buffer, 0 at the end */
	struct optrace_event events[OPTRACE_BATCH_EVENTS];
};

#define OPTRACE_BATCH_COUNT(position) ((uint32_t)((position)&0xffff))
#define OPTRACE_BATCH_SEQUENCE(position) ((position) >> 16)

/* Every buffer the process ever set up: the exported symbol optrace_batches. */
struct optrace_batch_registry {
	uint32_t magic;		 /* OPTRACE_BATCH_REGISTRY_MAGIC */
	uint32_t flush_bound_us; /* a buffer's oldest event is at most this old */
	uint64_t head;		 /* address of the newest struct optrace_batch, 0 if none */
};

/*
 * Names as tracers print them: lower case, no spaces. Out-of-range values
 * give "unknown", so that a value from a newer runtime prints safely.
 */
const char *optrace_mode_name(int mode);
const char *optrace_mode_reason_name(int reason);
const char *optrace_fallback_reason_name(int reason);
const char *optrace_variant_name(int variant);
const char *optrace_wait_kind_name(int kind);
const char *optrace_status_name(int status);

#ifdef __cplusplus
}
#endif

#endif /* OPTRACE_ABI_H */
