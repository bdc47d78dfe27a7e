// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "trace/batch_read.h"
#include "trace/process_read.h"
#include "trace/runtime_info.h"

/* Threads a registry may list: more is a loop or garbage. */
#define MAX_BUFFERS 65536

/* The head of a buffer: everything before its events. */
struct batch_head {
	uint32_t magic;
	uint16_t event_size;
	uint16_t capacity;
	uint32_t tid;
	uint32_t reserved;
	uint64_t position;
	uint64_t next;
};

_Static_assert(sizeof(struct batch_head) == offsetof(struct optrace_batch, events),
	       "struct optrace_batch's head");

static int read_buffer(pid_t pid, uint64_t address, struct batch_head *head,
		       struct optrace_event *events, batch_read_fn fn, void *ctx, int *read)
{
	uint64_t position_after;
	uint32_t count;

	if (process_read(pid, address, head, sizeof(*head)))
		return -EPROTO;
	if (head->magic != OPTRACE_BATCH_MAGIC || head->event_size != sizeof(*events) ||
	    head->capacity != OPTRACE_BATCH_EVENTS)
		return -EPROTO;
	count = OPTRACE_BATCH_COUNT(head->position);
	if (!head->tid || !count)
		return 0;
	if (count > OPTRACE_BATCH_EVENTS)
		return 0; /* a torn or hostile head: the thread hands it over itself */
	if (process_read(pid, address + sizeof(*head), events, count * sizeof(*events)) ||
	    process_read(pid, address + offsetof(struct batch_head, position), &position_after,
			 sizeof(position_after)))
		return 0;
	/* Handed over and refilled meanwhile: the thread's own flush has it. */
	if (OPTRACE_BATCH_SEQUENCE(position_after) != OPTRACE_BATCH_SEQUENCE(head->position))
		return 0;
	(*read)++;
	return fn(ctx, pid, head->tid, address + sizeof(*head),
		  OPTRACE_BATCH_SEQUENCE(head->position), count, events);
}

static bool batch_registry_valid(const void *buffer)
{
	return ((const struct optrace_batch_registry *)buffer)->magic ==
	       OPTRACE_BATCH_REGISTRY_MAGIC;
}

int batch_read_process(pid_t pid, batch_read_fn fn, void *ctx)
{
	struct optrace_batch_registry registry;
	struct optrace_event *events;
	struct batch_head head;
	uint64_t address = 0;
	int err, read = 0, limit;

	err = liboptrace_symbol_read(pid, "optrace_batches", &registry, sizeof(registry),
				     batch_registry_valid, &address);
	if (err)
		return err;
	events = malloc(OPTRACE_BATCH_EVENTS * sizeof(*events));
	if (!events)
		return -ENOMEM;
	/*
	 * A registry lists one buffer per thread the process ever had at once:
	 * a walk longer than a few times its threads, or one that comes back
	 * to where it was, is a loop that a hostile process made.
	 */
	limit = 4 * process_thread_count(pid, MAX_BUFFERS / 4) + 64;
	address = registry.head;
	for (int i = 0; address && i < limit; i++) {
		err = read_buffer(pid, address, &head, events, fn, ctx, &read);
		if (err || head.next == address)
			break;
		address = head.next;
	}
	free(events);
	return err < 0 ? err : read;
}
