// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The fast path's cold half: each thread's buffer is set up once, kept in a
 * registry that tracers read from outside (the exported optrace_batches),
 * handed over at thread exit, at process exit and before fork, and reused
 * by later threads: buffers are never freed, so that a tracer walking the
 * registry never follows a pointer into freed memory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch.h"
#include "optrace_probes.h"

#define FLUSH_BOUND_US_DEFAULT 4000 /* 4 ms: top stays live, and a batch stays large */
#define FLUSH_BOUND_US_MAX 1000000

/*
 * The library uses its own copy through a local name: an executable that
 * refers to optrace_batches gets a copy of it (a copy relocation), which
 * tracers, who read the library's symbol, would never see.
 */
static struct optrace_batch_registry registry = {
	.magic = OPTRACE_BATCH_REGISTRY_MAGIC,
	.flush_bound_us = FLUSH_BOUND_US_DEFAULT,
};
extern struct optrace_batch_registry optrace_batches __attribute__((alias("registry")));

uint64_t optrace_flush_bound_ns = FLUSH_BOUND_US_DEFAULT * 1000ull;

static struct optrace_batch *registry_first(void)
{
	return (struct optrace_batch *)(uintptr_t)__atomic_load_n(&registry.head, __ATOMIC_ACQUIRE);
}

static struct optrace_batch *registry_next(const struct optrace_batch *batch)
{
	return (struct optrace_batch *)(uintptr_t)batch->next;
}

void optrace_batch_list_string(struct batch_strings *strings, uint64_t *slot, uint64_t address)
{
	uint32_t count = strings->count;

	if (!address || count > OPTRACE_BATCH_STRINGS)
		return;
	for (uint32_t i = 0; i < count; i++) {
		if (strings->listed[i] == address) {
			*slot = address; /* another string's slot before */
			return;
		}
	}
	if (count < OPTRACE_BATCH_STRINGS) {
		strings->listed[count] = address;
		*slot = address;
	}
	/* before the event's commit, whose release store publishes this too */
	strings->count = count + 1;
}

/* Empties a buffer; its sequence numbers go on. */
static void batch_reset(struct optrace_batch *batch, uint64_t position)
{
	uint64_t sequence = OPTRACE_BATCH_SEQUENCE(position) + OPTRACE_BATCH_COUNT(position);
	struct batch_strings *strings = optrace_batch_strings(batch);

	strings->count = 0;
	memset(strings->seen, 0, sizeof(strings->seen));
	__atomic_store_n(&batch->position, sequence << 16, __ATOMIC_RELEASE);
}

/* The batch probe, for events[0..count of position); string_count as in abi.h. */
static void fire(struct optrace_batch *batch, uint64_t position, uint32_t string_count)
{
	if (OPTRACE_BATCH_COUNT(position) && OPTRACE_BATCH_ENABLED())
		OPTRACE_BATCH(batch->events, OPTRACE_BATCH_COUNT(position), batch->tid,
			      OPTRACE_BATCH_SEQUENCE(position),
			      optrace_batch_strings(batch)->listed, string_count);
}

void optrace_batch_flush(struct thread_state *t)
{
	struct optrace_batch *batch = t->batch;
	uint64_t position = batch->position;

	fire(batch, position, optrace_batch_strings(batch)->count);
	batch_reset(batch, position);
}

/*
 * Another thread's buffer, at process exit: that thread may still be
 * appending, so its buffer is only read, never emptied from here (the
 * owner's next slot stays its own). If the owner hands the same events
 * over later, tracers count them once: they keep each buffer's sequence.
 * Its list of strings may be emptied under it: tracers are told it is
 * incomplete.
 */
static void flush_foreign(struct optrace_batch *batch)
{
	uint64_t position = __atomic_load_n(&batch->position, __ATOMIC_ACQUIRE);

	if (batch->tid)
		fire(batch, position, OPTRACE_BATCH_STRINGS + 1);
}

void optrace_batch_flush_all(void)
{
	struct thread_state *t = &optrace_thread;

	if (t->batch)
		optrace_batch_flush(t);
	for (struct optrace_batch *batch = registry_first(); batch; batch = registry_next(batch)) {
		if (batch != t->batch)
			flush_foreign(batch);
	}
}

/* Thread exit: what the thread holds goes out, and its buffer is free again. */
void optrace_batch_thread_exit(struct thread_state *t)
{
	struct optrace_batch *batch = t->batch;

	if (!batch)
		return;
	optrace_batch_flush(t);
	t->batch = NULL;
	__atomic_store_n(&batch->tid, 0, __ATOMIC_RELEASE);
}

/* Before fork: the child starts empty, so the parent hands over what it holds. */
void optrace_batch_before_fork(struct thread_state *t)
{
	if (t->batch)
		optrace_batch_flush(t);
}

/* In the child: one thread, this one; the other threads' buffers are free. */
void optrace_batch_in_child(struct thread_state *t)
{
	for (struct optrace_batch *batch = registry_first(); batch; batch = registry_next(batch)) {
		batch_reset(batch, batch->position);
		if (batch != t->batch)
			batch->tid = 0;
	}
	if (t->batch) {
		t->tid = (uint32_t)gettid();
		t->batch->tid = t->tid;
	}
}

/* A buffer another thread left, or a new one. */
static struct optrace_batch *claim_buffer(uint32_t tid)
{
	struct optrace_batch *batch;

	for (batch = registry_first(); batch; batch = registry_next(batch)) {
		uint32_t free_tid = 0;

		if (__atomic_compare_exchange_n(&batch->tid, &free_tid, tid, false,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			return batch;
	}
	batch = aligned_alloc(64, (sizeof(struct batch_buffer) + 63) & ~(size_t)63);
	if (!batch)
		return NULL;
	memset(batch, 0, sizeof(struct batch_buffer));
	batch->magic = OPTRACE_BATCH_MAGIC;
	batch->event_size = sizeof(struct optrace_event);
	batch->capacity = OPTRACE_BATCH_EVENTS;
	batch->tid = tid;
	optrace_registry_push(&registry.head, &batch->next, batch);
	return batch;
}

struct optrace_batch *optrace_batch_setup(struct thread_state *t)
{
	t->tid = (uint32_t)gettid();
	t->batch = claim_buffer(t->tid);
	if (t->batch)
		optrace_thread_watch(t);
	return t->batch;
}

__attribute__((constructor)) static void read_flush_bound(void)
{
	const char *text = getenv("OPTRACE_FLUSH_US");
	char *end;
	long value;

	if (!text || !*text)
		return;
	errno = 0;
	value = strtol(text, &end, 10);
	if (errno || *end || value < 1 || value > FLUSH_BOUND_US_MAX)
		return;
	registry.flush_bound_us = (uint32_t)value;
	optrace_flush_bound_ns = (uint64_t)value * 1000;
}

/* Normal process exit (exit(), return from main): every buffer goes out. */
__attribute__((destructor)) static void flush_at_exit(void)
{
	optrace_batch_flush_all();
}
