/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The fast path's batches turned into the per-event records a capture holds
 * (struct record_event, as the per-event probes give them), in time order.
 *
 * A thread's events arrive in its order, but threads hand their buffers over
 * at different moments, so that a worker's task_begin can come before the
 * launching thread's task_launch. Events wait here, ordered by time, until
 * they are older than a window that covers the flush bound and the reading
 * of idle threads' buffers; one that arrives later still is written at once
 * and counted as late. Each buffer's sequence numbers drop events taken
 * twice (read while its thread was idle, then handed over) and count those
 * that never came.
 */
#ifndef OPTRACE_TRACE_BATCH_DECODE_H
#define OPTRACE_TRACE_BATCH_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include <optrace/abi.h>

#include "bpf/events.h"
#include "common/idmap.h"

struct batch_decoder_stats {
	uint64_t decoded;    /* events taken */
	uint64_t duplicates; /* events seen before (dropped) */
	uint64_t missing;    /* events a thread's sequence skipped */
	uint64_t outside;    /* before the start or after the stop (dropped) */
	uint64_t malformed;  /* events of unknown kinds */
	uint64_t late;	     /* written after a later event had been */
};

struct decode_queue;

/*
 * Events wait for the watermark in a queue per thread, each in its thread's
 * order (the order its events were stamped in), merged by a heap of the
 * queues' first events: an event costs an append and a step of a heap as
 * deep as there are threads. One earlier than its thread's last queued (an
 * idle read ahead of a batch still in the ring buffer) waits in a heap of
 * its own, merged alike.
 */
struct batch_decoder {
	uint64_t start_ns; /* events before it are not kept (an earlier tracer's) */
	uint64_t stop_ns;  /* nor after it: UINT64_MAX until the stop */
	struct idmap threads;
	struct idmap queues;	     /* (tgid, tid) -> struct decode_queue */
	struct decode_queue **heads; /* the queues holding events: a min-heap by first event */
	size_t head_count;
	size_t head_capacity;
	struct pending *heap; /* the late ones: a binary min-heap by (time, arrival) */
	size_t count;
	size_t capacity;
	uint64_t arrivals;
	uint64_t written_ns; /* the newest time written */
	struct batch_decoder_stats stats;
};

void batch_decoder_init(struct batch_decoder *decoder, uint64_t start_ns);
void batch_decoder_free(struct batch_decoder *decoder);

/* Where a batch comes from. */
struct batch_origin {
	uint32_t tgid;
	uint32_t tid;
	uint64_t buffer; /* the events' address in the process: names the buffer */
	uint16_t cpu;
	uint32_t ns_tid; /* the thread's id in its pid namespace, or 0 */
	bool idle;	 /* read from an idle thread's buffer, not handed over */
};

/* A batch: count events, the first numbered sequence in its buffer. 0 or -ENOMEM. */
int batch_decoder_add(struct batch_decoder *decoder, const struct batch_origin *origin,
		      uint64_t sequence, uint32_t count, const struct optrace_event *events);

/* A per-event record (rt_init), ordered with the rest. 0 or -ENOMEM. */
int batch_decoder_push(struct batch_decoder *decoder, const struct record_event *event);

/* At the end: the holes left in each thread's sequence are counted as missing. */
void batch_decoder_finish(struct batch_decoder *decoder);

/* Writes, in time order, every waiting event up to time watermark_ns. */
int batch_decoder_drain(struct batch_decoder *decoder, uint64_t watermark_ns,
			int (*write)(void *ctx, const struct record_event *event), void *ctx);

/*
 * Every period (record: each second): gives back the room of the queues
 * that stayed empty since the last call (threads come and go by the
 * thousand), or that is empty now and four times what the period needed (a
 * burst long past); a busy thread's room is kept for its next events.
 */
void batch_decoder_trim(struct batch_decoder *decoder);

/* Events the queues have room for, waiting or not. */
size_t batch_decoder_room(const struct batch_decoder *decoder);

#endif /* OPTRACE_TRACE_BATCH_DECODE_H */
