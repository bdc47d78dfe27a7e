/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The fast path's hot half: an event is appended to the calling thread's
 * buffer with a userspace timestamp, and the buffer is handed to the batch
 * probe when full or when its oldest event is older than the flush bound.
 * Nothing here locks, allocates or enters the kernel, but the first event
 * of a thread (which sets its buffer up) and the flush (one probe hit).
 */
#ifndef OPTRACE_BATCH_H
#define OPTRACE_BATCH_H

#include <stdbool.h>
#include <time.h>

#include "clock.h"
#include "thread.h"

extern uint64_t optrace_flush_bound_ns OPTRACE_INTERNAL;

#define BATCH_STRING_SLOTS_BITS 6

/*
 * The distinct strings a buffer's events name, listed for the batch probe
 * (OPTRACE_BATCH_STRINGS in abi.h): a tracer then sends a batch's few names
 * without looking at its 256 events. seen caches the listed addresses,
 * direct-mapped, so that an event naming a listed string costs a load and a
 * compare; both empty with the buffer.
 */
struct batch_strings {
	uint32_t count; /* OPTRACE_BATCH_STRINGS + 1 once the events named more */
	uint32_t reserved;
	uint64_t listed[OPTRACE_BATCH_STRINGS];
	uint64_t seen[1u << BATCH_STRING_SLOTS_BITS];
};

/* A thread's buffer as the library allocates it: the ABI's part first. */
struct batch_buffer {
	struct optrace_batch batch;
	struct batch_strings strings;
};

static inline struct batch_strings *optrace_batch_strings(struct optrace_batch *batch)
{
	return &((struct batch_buffer *)batch)->strings;
}

/* Lists address, which the slot did not hold (probes/batch.c). */
OPTRACE_INTERNAL void optrace_batch_list_string(struct batch_strings *strings, uint64_t *slot,
						uint64_t address);

/* The calling thread's buffer, set up on first use; NULL if memory ran out. */
OPTRACE_INTERNAL struct optrace_batch *optrace_batch_setup(struct thread_state *t);

/* Hands the thread's buffered events to the batch probe and empties the buffer. */
OPTRACE_INTERNAL void optrace_batch_flush(struct thread_state *t);

/* The thread exits; the process forks (before, in the parent); in the child (lifecycle.c). */
OPTRACE_INTERNAL void optrace_batch_thread_exit(struct thread_state *t);
OPTRACE_INTERNAL void optrace_batch_before_fork(struct thread_state *t);
OPTRACE_INTERNAL void optrace_batch_in_child(struct thread_state *t);

/* Hands every buffer's events over (process exit) and empties them. */
OPTRACE_INTERNAL void optrace_batch_flush_all(void);

/* The slot for the thread's next event, its time and kind filled in. */
static inline struct optrace_event *optrace_batch_next(struct thread_state *t, uint8_t kind)
{
	struct optrace_batch *batch = t->batch;
	struct optrace_event *event;

	if (__builtin_expect(!batch, 0)) {
		batch = optrace_batch_setup(t);
		if (!batch)
			return NULL;
	}
	event = &batch->events[OPTRACE_BATCH_COUNT(batch->position)];
	event->time_ns = optrace_event_ns(t);
	event->kind = kind;
	return event;
}

/*
 * Before the commit of an event that names the string at address (a STRING
 * field of its kind in abi.h; 0 for none): the batch lists it.
 */
static inline void optrace_batch_name(struct thread_state *t, const void *string)
{
	struct batch_strings *strings = optrace_batch_strings(t->batch);
	uint64_t address = (uintptr_t)string;
	uint64_t *slot =
		&strings->seen[(address * 0x9e3779b97f4a7c15ull) >> (64 - BATCH_STRING_SLOTS_BITS)];

	/* 0 hashes to a slot that starts out 0: no string costs nothing either */
	if (__builtin_expect(*slot != address, 0))
		optrace_batch_list_string(strings, slot, address);
}

/* Publishes the event filled since optrace_batch_next(); flushes if due. */
static inline void optrace_batch_commit(struct thread_state *t, const struct optrace_event *event)
{
	struct optrace_batch *batch = t->batch;
	uint64_t position = batch->position + 1;

	/* A reader in another process sees the event before the count that covers it. */
	__atomic_store_n(&batch->position, position, __ATOMIC_RELEASE);
	if (OPTRACE_BATCH_COUNT(position) == OPTRACE_BATCH_EVENTS ||
	    event->time_ns - batch->events[0].time_ns > optrace_flush_bound_ns)
		optrace_batch_flush(t);
}

#endif /* OPTRACE_BATCH_H */
