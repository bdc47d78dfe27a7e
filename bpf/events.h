/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What record.bpf.c streams through its ring buffer, one record per event. */
#ifndef OPTRACE_BPF_EVENTS_H
#define OPTRACE_BPF_EVENTS_H

#include <optrace/abi.h>

#define RECORD_STRING_LEN 128 /* bytes of a string kept, with its NUL */

/*
 * Every kind of record, its value for ever (the capture files store it), the
 * struct it is, its class and, for a struct record_event, how many of its
 * args[] the kind uses (the rest are 0). The capture's codec
 * (userspace/capture/records.c) encodes each by its struct; the class
 * predicates below are made from the same table. A new kind is a new row
 * with the next value, and the places that give it meaning.
 *
 * Classes: PROBE, an operation or task probe's event; GPU, what the GPU
 * collector hands over; HOST_GPU, a CUDA call on its thread; META, what
 * optrace writes about the recording; TRANSPORT, only in the ring buffer,
 * never in a capture.
 */
#define RECORD_KINDS(X)                           \
	X(RT_INIT, 1, record_event, PROBE, 3)     \
	X(OP_BEGIN, 2, record_event, PROBE, 5)    \
	X(OP_END, 3, record_event, PROBE, 2)      \
	X(OP_MODE, 4, record_event, PROBE, 3)     \
	X(OP_FALLBACK, 5, record_event, PROBE, 3) \
	X(TASK_LAUNCH, 6, record_event, PROBE, 5) \
	X(TASK_BEGIN, 7, record_event, PROBE, 4)  \
	X(TASK_END, 8, record_event, PROBE, 3)    \
	X(WAIT_BEGIN, 9, record_event, PROBE, 2)  \
	X(WAIT_END, 10, record_event, PROBE, 2)   \
	X(STRING, 11, record_string, META, 0)     \
	X(GPU, 12, record_gpu, GPU, 0)            \
	X(GPU_NAME, 13, record_gpu_name, GPU, 0)  \
	X(GPU_DROPPED, 14, record_event, GPU, 2)  \
	X(BATCH, 15, record_batch, TRANSPORT, 0)  \
	X(NAME, 16, record_name, META, 0)         \
	X(CLOCK, 17, record_clock, META, 0)       \
	X(GPU_LAUNCH, 18, record_event, HOST_GPU, 3)

#define RECORD_KIND_ENUM_(name, value, layout, class, args) RECORD_##name = value,

enum record_type {
	RECORD_KINDS(RECORD_KIND_ENUM_) RECORD__COUNT /* one more than the largest value */
};

enum record_class {
	RECORD_CLASS_NONE, /* not a kind of this table */
	RECORD_CLASS_PROBE,
	RECORD_CLASS_GPU,
	RECORD_CLASS_HOST_GPU,
	RECORD_CLASS_META,
	RECORD_CLASS_TRANSPORT,
};

#define RECORD_KIND_CLASS_(name, value, layout, class, args) \
	case value:                                          \
		return RECORD_CLASS_##class;

static inline enum record_class record_class(unsigned int type)
{
	switch (type) {
		RECORD_KINDS(RECORD_KIND_CLASS_)
	}
	return RECORD_CLASS_NONE;
}

/*
 * The arguments of each kind of event, in the order its probe passes them
 * (docs/probes.md); one 8-byte slot each, signed ones sign-extended. The
 * model and the outputs read events only through these.
 */
struct event_rt_init {
	__s64 abi_version;
	__s64 rank;
	__s64 rank_count;
};

struct event_op_begin {
	__u64 op;
	__u64 parent; /* 0 at depth 0 */
	__u64 depth;
	__u64 name; /* string addresses in the process */
	__u64 callsite;
};

struct event_op_end {
	__u64 op;
	__s64 status; /* enum optrace_status */
};

struct event_op_mode {
	__u64 op;
	__s64 mode; /* enum optrace_mode */
	__s64 reason;
};

struct event_op_fallback {
	__u64 op;
	__s64 reason; /* enum optrace_fallback_reason */
	__u64 detail; /* a string address, or 0 */
};

struct event_task_launch {
	__u64 task;
	__u64 op;
	__u64 root_op;
	__u64 name;
	__u64 points;
};

struct event_task_begin {
	__u64 task;
	__u64 point;
	__s64 variant; /* enum optrace_variant */
	__u64 processor;
};

struct event_task_end {
	__u64 task;
	__u64 point;
	__s64 status;
};

/* wait_begin and wait_end. */
struct event_wait {
	__u64 op;
	__s64 kind; /* enum optrace_wait_kind */
};

struct event_gpu_dropped {
	__u64 records; /* records the producer dropped */
	__u64 source;  /* enum optrace_gpu_drop_source (0 from libraries before it) */
};

/* gpu_launch: in its thread's order, ties CUPTI's correlation id to the frame open there. */
struct event_gpu_launch {
	__u64 correlation_id;
	__u64 api_kind; /* enum optrace_gpu_api_kind */
	__u64 flags;	/* OPTRACE_GPU_LAUNCH_* */
};

#define RECORD_EVENT_ARGS 5

/* A probe hit. */
struct record_event {
	__u64 timestamp; /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 tgid;
	__u32 tid;
	__u16 type; /* enum record_type */
	__u16 cpu;
	/*
	 * op_begin and task_begin: the thread's id in its own pid namespace
	 * (a container's), which CUPTI reports in GPU records; 0 elsewhere.
	 */
	__u32 ns_tid;
	union {
		/* How the BPF programs fill them: the probe's arguments in order. */
		__u64 args[RECORD_EVENT_ARGS];
		struct event_rt_init rt_init;
		struct event_op_begin op_begin;
		struct event_op_end op_end;
		struct event_op_mode op_mode;
		struct event_op_fallback op_fallback;
		struct event_task_launch task_launch;
		struct event_task_begin task_begin;
		struct event_task_end task_end;
		struct event_wait wait;
		struct event_gpu_dropped gpu_dropped;
		struct event_gpu_launch gpu_launch;
	};
};

/* The text at an address of a process, sent once, before its first use. */
struct record_string {
	__u64 timestamp;
	__u32 tgid;
	__u32 tid;
	__u16 type; /* RECORD_STRING */
	__u8 truncated;
	__u8 unreadable;
	__u32 reserved;
	__u64 address;
	char text[RECORD_STRING_LEN];
};

/* Bytes of a GPU record kept: every version-1 record fits. */
#define RECORD_GPU_MAX 128
#define RECORD_GPU_NAME_LEN 512 /* bytes of a kernel name kept, with its NUL */

/* The head every optrace_gpu record starts with (include/optrace/gpu.h). */
struct record_gpu_head {
	__u8 type;
	__u8 version;
	__u16 size;
	__u32 flags;
};

/* An optrace_gpu record as the producer passed it (its first size bytes). */
struct record_gpu {
	__u64 timestamp;
	__u32 tgid;
	__u32 tid;
	__u16 type; /* RECORD_GPU */
	__u16 size; /* bytes of data copied: the record's own size, at most RECORD_GPU_MAX */
	__u32 reserved;
	__u8 data[RECORD_GPU_MAX];
};

struct record_gpu_name {
	__u64 timestamp;
	__u32 tgid;
	__u32 tid;
	__u16 type; /* RECORD_GPU_NAME */
	__u8 truncated;
	__u8 unreadable;
	__u32 name_id;
	char text[RECORD_GPU_NAME_LEN];
};

/*
 * A batch of the fast path as the batch probe handed it over; optrace
 * decodes it into one struct record_event per event (types RECORD_OP_BEGIN
 * to RECORD_WAIT_END), so captures look the same either way.
 */
struct record_batch {
	__u64 timestamp; /* when it was handed over */
	__u32 tgid;
	__u32 tid;  /* the thread that buffered the events */
	__u16 type; /* RECORD_BATCH */
	__u16 cpu;
	__u32 ns_tid;	/* tid in its pid namespace, when the thread itself handed it over */
	__u64 sequence; /* the buffer's sequence number of events[0] */
	__u64 buffer;	/* the events' address in the process: names the buffer */
	__u32 count;
	__u32 reserved;
	/* Names while they can be read: a short run has exited before /proc is. */
	char thread_comm[16];  /* when the thread itself handed it over, else "" */
	char process_comm[16]; /* the process's (its leader's) */
	struct optrace_event events[OPTRACE_BATCH_EVENTS];
};

/* A string of a process, copied once from its address (both programs key them so). */
struct string_key {
	__u32 tgid;
	__u32 pad;
	__u64 address;
};

/*
 * What a process or a thread is called, as ps shows it (its comm), read by
 * the recorder from /proc when it first meets the thread: outputs name
 * processes by command and threads by their own names.
 */
/* A comm takes at most 16 bytes; the record is as long as a struct record_event. */
#define RECORD_NAME_LEN 40

struct record_name {
	__u64 timestamp;
	__u32 tgid;
	__u32 tid;  /* 0: the process's command name */
	__u16 type; /* RECORD_NAME */
	__u16 reserved16;
	__u32 reserved;
	char name[RECORD_NAME_LEN]; /* NUL-terminated */
};

/*
 * CLOCK_REALTIME at the moment timestamp (CLOCK_MONOTONIC) was read: with
 * the header's and the end marker's pairs, these anchors map a capture's
 * timestamps onto wall-clock time within the drift of a second, so that
 * captures of several hosts merge onto one timeline.
 */
struct record_clock {
	__u64 timestamp;
	__u32 tgid; /* 0 */
	__u32 tid;  /* 0 */
	__u16 type; /* RECORD_CLOCK */
	__u16 reserved16;
	__u32 reserved;
	__u64 realtime_ns;
	__u64 uncertainty_ns; /* how long reading the pair took */
	__u64 reserved2[3];   /* as long as a struct record_event */
};

/* Records optrace writes about the recording, not about the traced processes' events. */
static inline int record_is_metadata(unsigned int type)
{
	return record_class(type) == RECORD_CLASS_META;
}

/* An operation or task probe's event: what a stop instant and the names follow. */
static inline int record_is_probe_event(unsigned int type)
{
	return record_class(type) == RECORD_CLASS_PROBE;
}

/* What the GPU collector hands over: activity, kernel names, its losses. */
static inline int record_is_gpu(unsigned int type)
{
	return record_class(type) == RECORD_CLASS_GPU;
}

/* Small batches (a thread that flushed by age) take a small reservation. */
#define RECORD_BATCH_SMALL 16
#define RECORD_BATCH_SIZE(n) \
	(__builtin_offsetof(struct record_batch, events) + (n) * sizeof(struct optrace_event))

enum record_loss {
	RECORD_LOSS_RINGBUF_FULL,   /* events dropped: the consumer fell behind */
	RECORD_LOSS_STRING_DROPPED, /* strings dropped for the same reason */
	RECORD_LOSS_STRING_UNREADABLE,
	RECORD_LOSS_STRING_TRUNCATED,
	RECORD_LOSS_GPU_UNREADABLE,   /* GPU records whose memory could not be read */
	RECORD_LOSS_BATCH_BAD,	      /* events of malformed or unreadable batches */
	RECORD_LOSS_GPU_RINGBUF_FULL, /* GPU records dropped: the consumer fell behind */
	RECORD_LOSS__COUNT
};

#endif /* OPTRACE_BPF_EVENTS_H */
