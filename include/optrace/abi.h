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
 * layout below) beside them; every ABI 1 probe is unchanged. 3: the thread
 * views (struct optrace_thread_view), kept traced or not; nothing earlier
 * changed. 4: the batch probe also lists the strings its events name
 * (OPTRACE_BATCH_STRINGS); its first four arguments are unchanged.
 */
#define OPTRACE_ABI_VERSION 4

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
	OPTRACE_VARIANT_OPENCL = 4,	    /* an OpenCL device (StarPU's): a revision of ABI 4 */
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

/*
 * A task id that task_launch gave while no tracer was attached: no tracer saw
 * its launch (a thread view names its points all the same).
 */
#define OPTRACE_TASK_UNTRACED (1ull << 63)

/* Whether a tracer saw task's launch: not 0 (older libraries' untraced id), nor untraced. */
static inline int optrace_task_traced(uint64_t task)
{
	return task && !(task & OPTRACE_TASK_UNTRACED);
}

/* How an operation or a task ended (op_end and task_end, argument 2). */
enum optrace_status { OPTRACE_STATUS_OK = 0, OPTRACE_STATUS_ERROR = 1, OPTRACE_STATUS__COUNT };

/*
 * The fast path. While a tracer arms the batch probe, each call appends one
 * struct optrace_event to a buffer owned by the calling thread, and the
 * buffer is handed over by one batch probe hit when it is full, when its
 * oldest event is older than the flush bound, at thread and process exit and
 * before fork. This layout is shared by liboptrace, the BPF programs and
 * optrace's decoder; it only grows by new kinds.
 *
 * Each kind once: X(NAME, value, member, strings), member being the field
 * of struct optrace_event that holds its fields (struct
 * optrace_event_<member>, below) and strings the fields that are string
 * addresses, as STRING(field) or, for a copy of a string that another event
 * of the same thread or process names as well, COPY(field): task_begin's
 * names, there so that a worker's batch makes sense before the launching
 * thread's arrives, which a consumer in order of events does not need.
 * Adding a kind: a line here, its struct, and its handlers (docs/probes.md).
 */
#define OPTRACE_EVENT_KINDS(X, STRING, COPY)                     \
	X(OP_BEGIN, 1, op_begin, STRING(name) STRING(callsite))  \
	X(OP_END, 2, op_end, )                                   \
	X(OP_MODE, 3, op_mode, )                                 \
	X(OP_FALLBACK, 4, op_fallback, STRING(detail))           \
	X(TASK_LAUNCH, 5, task_launch, STRING(name))             \
	X(TASK_BEGIN, 6, task_begin, COPY(name) COPY(root_name)) \
	X(TASK_END, 7, task_end, )                               \
	X(WAIT_BEGIN, 8, wait_begin, )                           \
	X(WAIT_END, 9, wait_end, )                               \
	X(GPU_LAUNCH, 10, gpu_launch, )

#define OPTRACE_EVENT_ENUM_(name, value, member, strings) OPTRACE_EVENT_##name = value,
#define OPTRACE_EVENT_IGNORE_(field)

enum optrace_event_kind {
	OPTRACE_EVENT_KINDS(OPTRACE_EVENT_ENUM_, OPTRACE_EVENT_IGNORE_, OPTRACE_EVENT_IGNORE_)
		OPTRACE_EVENT__COUNT
};

/*
 * Every event is 48 bytes and starts with its time and kind. time_ns is
 * CLOCK_MONOTONIC, the clock of bpf_ktime_get_ns(), read in userspace.
 * Strings are addresses in the process, as in the per-event probes. The
 * fields of each kind sit where they did in ABI 2's first release (a
 * static assertion below keeps them there): a field is never moved.
 */
#define OPTRACE_EVENT_HEAD_ \
	uint64_t time_ns;   \
	uint8_t kind /* enum optrace_event_kind */

struct optrace_event_op_begin {
	OPTRACE_EVENT_HEAD_;
	uint8_t unused;
	uint16_t reserved;
	uint32_t depth; /* 0 for an operation the user called */
	uint64_t op;
	uint64_t parent; /* the op open at depth - 1, 0 if none or not traced */
	uint64_t name;
	uint64_t callsite;
};

struct optrace_event_op_end {
	OPTRACE_EVENT_HEAD_;
	uint8_t status; /* enum optrace_status */
	uint16_t reserved;
	uint32_t unused;
	uint64_t op;
};

struct optrace_event_op_mode {
	OPTRACE_EVENT_HEAD_;
	uint8_t mode; /* enum optrace_mode */
	uint16_t reserved;
	uint32_t reason; /* enum optrace_mode_reason */
	uint64_t op;
};

struct optrace_event_op_fallback {
	OPTRACE_EVENT_HEAD_;
	uint8_t reason; /* enum optrace_fallback_reason */
	uint16_t reserved;
	uint32_t unused;
	uint64_t op;
	uint64_t unused_word;
	uint64_t detail; /* a string, or 0 */
};

struct optrace_event_task_launch {
	OPTRACE_EVENT_HEAD_;
	uint8_t unused;
	uint16_t reserved;
	uint32_t points;
	uint64_t task;
	uint64_t op;
	uint64_t name;
	uint64_t root_op; /* the op at depth 0 of the launching thread */
};

struct optrace_event_task_begin {
	OPTRACE_EVENT_HEAD_;
	uint8_t variant; /* enum optrace_variant */
	uint16_t reserved;
	uint32_t point;
	uint64_t task;
	uint64_t processor;
	uint64_t name;	    /* the task's, 0 if unknown */
	uint64_t root_name; /* its root op's, 0 if unknown */
};

struct optrace_event_task_end {
	OPTRACE_EVENT_HEAD_;
	uint8_t status; /* enum optrace_status */
	uint16_t reserved;
	uint32_t point;
	uint64_t task;
};

struct optrace_event_wait {
	OPTRACE_EVENT_HEAD_;
	uint8_t wait_kind; /* enum optrace_wait_kind */
	uint16_t reserved;
	uint32_t unused;
	uint64_t op; /* 0 outside an operation */
};

#define optrace_event_wait_begin optrace_event_wait
#define optrace_event_wait_end optrace_event_wait

/*
 * A CUDA call that launches device work, with CUPTI's correlation id: in the
 * thread's own order, it ties that call's kernels and copies to the frame
 * open there.
 */
struct optrace_event_gpu_launch {
	OPTRACE_EVENT_HEAD_;
	uint8_t api_kind; /* enum optrace_gpu_api_kind */
	uint16_t reserved;
	uint32_t flags;
	uint64_t correlation_id;
};

#define OPTRACE_EVENT_MEMBER_(name, value, member, strings) struct optrace_event_##member member;

struct optrace_event {
	union {
		struct {
			OPTRACE_EVENT_HEAD_;
		};
		OPTRACE_EVENT_KINDS(OPTRACE_EVENT_MEMBER_, OPTRACE_EVENT_IGNORE_,
				    OPTRACE_EVENT_IGNORE_)
	};
};

#ifdef __cplusplus
#define OPTRACE_STATIC_ASSERT_ static_assert
#else
#define OPTRACE_STATIC_ASSERT_ _Static_assert
#endif
OPTRACE_STATIC_ASSERT_(sizeof(struct optrace_event) == 48, "the fast path's event layout");
/* A kind's fields never move: these are where the first release put them. */
#define OPTRACE_EVENT_AT_(field, offset)                                                    \
	OPTRACE_STATIC_ASSERT_(__builtin_offsetof(struct optrace_event, field) == (offset), \
			       #field " moved")
OPTRACE_EVENT_AT_(op_begin.depth, 12);
OPTRACE_EVENT_AT_(op_begin.op, 16);
OPTRACE_EVENT_AT_(op_begin.callsite, 40);
OPTRACE_EVENT_AT_(op_fallback.detail, 32);
OPTRACE_EVENT_AT_(task_launch.root_op, 40);
OPTRACE_EVENT_AT_(task_begin.root_name, 40);
OPTRACE_EVENT_AT_(gpu_launch.correlation_id, 16);

/* Most strings an event names. */
#define OPTRACE_EVENT_MAX_STRINGS 2

#define OPTRACE_EVENT_STRING_(field) strings[count++] = fields->field;
#define OPTRACE_EVENT_COPY_(field) \
	if (copies)                \
		strings[count++] = fields->field;
#define OPTRACE_EVENT_STRINGS_CASE_(name, value, member, list)                \
	case OPTRACE_EVENT_##name: {                                          \
		const struct optrace_event_##member *fields = &event->member; \
                                                                              \
		(void)fields;                                                 \
		list break;                                                   \
	}

/*
 * The string addresses event names, into strings; with copies, also those
 * it carries for a reader that sees it first (COPY above). Returns how many
 * (0 for a kind this header does not know).
 */
static inline unsigned int optrace_event_strings(const struct optrace_event *event, int copies,
						 uint64_t strings[OPTRACE_EVENT_MAX_STRINGS])
{
	unsigned int count = 0;

	switch (event->kind) {
		OPTRACE_EVENT_KINDS(OPTRACE_EVENT_STRINGS_CASE_, OPTRACE_EVENT_STRING_,
				    OPTRACE_EVENT_COPY_)
	default:
		break;
	}
	return count;
}

#define OPTRACE_BATCH_EVENTS 256 /* events a thread buffers before it flushes */
/*
 * The batch probe's strings argument (ABI 4) lists, once each, the string
 * addresses that its events' STRING fields name (not COPY), in
 * OPTRACE_BATCH_STRINGS slots; string_count above that says the list is
 * incomplete (a tracer then looks at every event). A tracer sends each listed
 * string once without walking the events.
 */
#define OPTRACE_BATCH_STRINGS 32
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
 * What each thread is doing now, kept whether or not a tracer is attached, so
 * that `optrace dump` can show a stuck process, one never traced included:
 * its open operations, the task points running on it and its wait. The
 * thread writes its own view with plain stores (no fence, no lock); a reader
 * in another process (process_vm_readv) takes what it finds and checks it:
 * a view can change while it is read. Times are CLOCK_MONOTONIC, 0 when no
 * tracer was attached when the thing began (then nothing read the clock).
 * Views are never freed: a thread's exit frees it for a later thread.
 */
#define OPTRACE_VIEW_MAGIC 0x4f545631u		/* "OTV1" */
#define OPTRACE_VIEW_REGISTRY_MAGIC 0x4f545731u /* "OTW1" */
#define OPTRACE_VIEW_DEPTH 32			/* operations shown; deeper ones are counted */
#define OPTRACE_VIEW_POINTS 4			/* task points running on a thread at once */

struct optrace_open_op {
	uint64_t op;	   /* its id, 0 if untraced when it began */
	uint64_t name;	   /* string addresses, as in the probes */
	uint64_t callsite; /* 0 if none */
	uint64_t begin_ns; /* 0 if untraced when it began */
	uint8_t mode;	   /* enum optrace_mode + 1, 0 until announced */
	uint8_t reason;	   /* enum optrace_mode_reason */
	uint16_t reserved;
	uint32_t reserved2;
};

struct optrace_running_point {
	uint64_t task;	   /* its id, 0 if launched untraced */
	uint64_t name;	   /* the task's name, 0 if unknown */
	uint64_t begin_ns; /* 0 if untraced when it began */
	uint32_t point;
	uint32_t processor;
	uint8_t variant; /* enum optrace_variant */
	uint8_t used;	 /* 1 while the point runs */
	uint16_t reserved;
	uint32_t reserved2;
};

struct optrace_thread_view {
	uint32_t magic;	   /* OPTRACE_VIEW_MAGIC */
	uint32_t tid;	   /* the owning thread, 0 while the view is free */
	uint64_t next;	   /* the registry's next view, 0 at the end */
	uint32_t depth;	   /* operations open, OPTRACE_VIEW_DEPTH of them in ops */
	uint8_t waiting;   /* 1 while a wait is in progress */
	uint8_t wait_kind; /* enum optrace_wait_kind */
	uint16_t reserved;
	uint64_t wait_op;	/* the op the wait is for, 0 if none or untraced */
	uint64_t wait_begin_ns; /* 0 if untraced when it began */
	struct optrace_open_op ops[OPTRACE_VIEW_DEPTH]; /* outermost first */
	struct optrace_running_point points[OPTRACE_VIEW_POINTS];
};

/* Every view the process ever set up: the exported symbol optrace_threads. */
struct optrace_view_registry {
	uint32_t magic;	    /* OPTRACE_VIEW_REGISTRY_MAGIC */
	uint32_t view_size; /* sizeof(struct optrace_thread_view) */
	uint64_t head;	    /* address of the newest view, 0 if none */
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
