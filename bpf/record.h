/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What record.bpf.c streams through its ring buffer, one record per event. */
#ifndef OPTRACE_RECORD_H
#define OPTRACE_RECORD_H

#define RECORD_STRING_LEN 128 /* bytes of a string kept, with its NUL */

enum record_type {
	RECORD_RT_INIT = 1,
	RECORD_OP_BEGIN,
	RECORD_OP_END,
	RECORD_OP_MODE,
	RECORD_OP_FALLBACK,
	RECORD_TASK_LAUNCH,
	RECORD_TASK_BEGIN,
	RECORD_TASK_END,
	RECORD_WAIT_BEGIN,
	RECORD_WAIT_END,
	RECORD_STRING, /* struct record_string */
	RECORD__COUNT
};

/* A probe hit: its arguments as the probe passed them (see docs/probes.md). */
struct record_event {
	__u64 timestamp; /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 tgid;
	__u32 tid;
	__u16 type; /* enum record_type */
	__u16 cpu;
	__u32 reserved;
	__u64 args[5];
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

enum record_loss {
	RECORD_LOSS_RINGBUF_FULL,   /* events dropped: the consumer fell behind */
	RECORD_LOSS_STRING_DROPPED, /* strings dropped for the same reason */
	RECORD_LOSS_STRING_UNREADABLE,
	RECORD_LOSS_STRING_TRUNCATED,
	RECORD_LOSS__COUNT
};

#endif /* OPTRACE_RECORD_H */
