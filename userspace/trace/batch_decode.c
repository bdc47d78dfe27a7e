// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "trace/batch_decode.h"

struct pending {
	uint64_t arrival; /* ties in time keep their order of arrival */
	struct record_event event;
};

/*
 * A thread's events in its order: items[head, tail). The room stays when the
 * queue empties (a busy thread's fills again by the next drain, and new
 * memory is zeroed page by page: that was most of record's CPU), until
 * batch_decoder_trim() finds it unused for a whole period, or four times
 * larger than the period needed.
 */
struct decode_queue {
	struct pending *items;
	size_t head;
	size_t tail;
	size_t capacity;
	size_t peak; /* the most events it held since the last trim: 0, unused */
};

/*
 * Which events of a buffer were taken. Batches come in order through the
 * ring buffer, and the idle reads take what a thread holds, which can be
 * ahead of a batch still in the ring buffer: what was taken above next is
 * kept as ranges until the holes below them are filled.
 */
#define CURSOR_RANGES 8

struct range {
	uint64_t from;
	uint64_t to;
};

struct thread_cursor {
	uint64_t buffer;  /* the sequence is this buffer's */
	bool start_known; /* a batch came: next is where the sequence began */
	uint64_t next;	  /* every event before it was taken */
	uint32_t range_count;
	struct range ranges[CURSOR_RANGES]; /* taken above next: sorted, apart */
};

void batch_decoder_init(struct batch_decoder *decoder, uint64_t start_ns)
{
	memset(decoder, 0, sizeof(*decoder));
	decoder->start_ns = start_ns;
	decoder->stop_ns = UINT64_MAX;
}

void batch_decoder_free(struct batch_decoder *decoder)
{
	for (size_t i = 0; i < decoder->threads.capacity; i++)
		free(decoder->threads.slots[i].value);
	idmap_free(&decoder->threads);
	for (size_t i = 0; i < decoder->queues.capacity; i++) {
		struct decode_queue *queue = decoder->queues.slots[i].value;

		if (queue)
			free(queue->items);
		free(queue);
	}
	idmap_free(&decoder->queues);
	free(decoder->heads);
	free(decoder->heap);
	memset(decoder, 0, sizeof(*decoder));
}

static int earlier(const struct pending *a, const struct pending *b)
{
	if (a->event.timestamp != b->event.timestamp)
		return a->event.timestamp < b->event.timestamp;
	return a->arrival < b->arrival;
}

static void swap(struct pending *a, struct pending *b)
{
	struct pending t = *a;

	*a = *b;
	*b = t;
}

/* The late heap: an event earlier than one its thread already queued. */
static int late_push(struct batch_decoder *decoder, const struct pending *pending)
{
	struct pending *heap;
	size_t i;

	if (decoder->count == decoder->capacity) {
		size_t capacity = decoder->capacity ? decoder->capacity * 2 : 256;

		heap = realloc(decoder->heap, capacity * sizeof(*heap));
		if (!heap)
			return -ENOMEM;
		decoder->heap = heap;
		decoder->capacity = capacity;
	}
	heap = decoder->heap;
	i = decoder->count++;
	heap[i] = *pending;
	while (i && earlier(&heap[i], &heap[(i - 1) / 2])) {
		swap(&heap[i], &heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	return 0;
}

static void late_pop(struct batch_decoder *decoder)
{
	struct pending *heap = decoder->heap;
	size_t i = 0;

	heap[0] = heap[--decoder->count];
	for (;;) {
		size_t left = 2 * i + 1, right = left + 1, least = i;

		if (left < decoder->count && earlier(&heap[left], &heap[least]))
			least = left;
		if (right < decoder->count && earlier(&heap[right], &heap[least]))
			least = right;
		if (least == i)
			return;
		swap(&heap[i], &heap[least]);
		i = least;
	}
}

static const struct pending *queue_head(const struct decode_queue *queue)
{
	return &queue->items[queue->head];
}

static bool queue_earlier(const struct decode_queue *a, const struct decode_queue *b)
{
	return earlier(queue_head(a), queue_head(b));
}

/* The heads heap: the queues that hold events, by their first one. */
static void heads_sift_down(struct batch_decoder *decoder, size_t i)
{
	struct decode_queue **heads = decoder->heads;

	for (;;) {
		size_t left = 2 * i + 1, right = left + 1, least = i;
		struct decode_queue *t;

		if (left < decoder->head_count && queue_earlier(heads[left], heads[least]))
			least = left;
		if (right < decoder->head_count && queue_earlier(heads[right], heads[least]))
			least = right;
		if (least == i)
			return;
		t = heads[i];
		heads[i] = heads[least];
		heads[least] = t;
		i = least;
	}
}

static int heads_insert(struct batch_decoder *decoder, struct decode_queue *queue)
{
	struct decode_queue **heads = decoder->heads;
	size_t i;

	if (decoder->head_count == decoder->head_capacity) {
		size_t capacity = decoder->head_capacity ? decoder->head_capacity * 2 : 16;

		heads = realloc(decoder->heads, capacity * sizeof(*heads));
		if (!heads)
			return -ENOMEM;
		decoder->heads = heads;
		decoder->head_capacity = capacity;
	}
	i = decoder->head_count++;
	heads[i] = queue;
	while (i && queue_earlier(heads[i], heads[(i - 1) / 2])) {
		struct decode_queue *t = heads[i];

		heads[i] = heads[(i - 1) / 2];
		heads[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
	return 0;
}

static struct decode_queue *queue_of(struct batch_decoder *decoder, uint32_t tgid, uint32_t tid)
{
	struct decode_queue *queue = idmap_get(&decoder->queues, tgid, tid);

	if (queue)
		return queue;
	queue = calloc(1, sizeof(*queue));
	if (queue && idmap_put(&decoder->queues, tgid, tid, queue)) {
		free(queue);
		queue = NULL;
	}
	return queue;
}

/* Room for one more at the tail: the taken front reused first, else grown. */
static int queue_room(struct decode_queue *queue)
{
	struct pending *items;
	size_t capacity;

	if (queue->tail < queue->capacity)
		return 0;
	if (queue->head && queue->head >= queue->capacity / 2) {
		memmove(queue->items, queue->items + queue->head,
			(queue->tail - queue->head) * sizeof(*items));
		queue->tail -= queue->head;
		queue->head = 0;
		return 0;
	}
	capacity = queue->capacity ? queue->capacity * 2 : 64;
	items = realloc(queue->items, capacity * sizeof(*items));
	if (!items)
		return -ENOMEM;
	queue->items = items;
	queue->capacity = capacity;
	return 0;
}

int batch_decoder_push(struct batch_decoder *decoder, const struct record_event *event)
{
	struct decode_queue *queue = queue_of(decoder, event->tgid, event->tid);
	struct pending pending = { .arrival = decoder->arrivals++, .event = *event };
	bool was_empty;
	int err;

	if (!queue)
		return -ENOMEM;
	/* A thread's events come in its order, but for idle reads ahead of a batch. */
	if (queue->head < queue->tail && earlier(&pending, &queue->items[queue->tail - 1]))
		return late_push(decoder, &pending);
	err = queue_room(queue);
	if (err)
		return err;
	was_empty = queue->head == queue->tail;
	queue->items[queue->tail++] = pending;
	if (queue->tail - queue->head > queue->peak)
		queue->peak = queue->tail - queue->head;
	return was_empty ? heads_insert(decoder, queue) : 0;
}

int batch_decoder_drain(struct batch_decoder *decoder, uint64_t watermark_ns,
			int (*write)(void *ctx, const struct record_event *event), void *ctx)
{
	int err = 0;

	for (;;) {
		struct decode_queue *queue = decoder->head_count ? decoder->heads[0] : NULL;
		const struct pending *first = queue ? queue_head(queue) : NULL;
		const struct pending *late = decoder->count ? &decoder->heap[0] : NULL;
		const struct pending *next =
			first && (!late || earlier(first, late)) ? first : late;

		if (!next || next->event.timestamp > watermark_ns)
			break;
		if (next->event.timestamp < decoder->written_ns)
			decoder->stats.late++;
		else
			decoder->written_ns = next->event.timestamp;
		err = write(ctx, &next->event);
		if (next == late) {
			late_pop(decoder);
		} else if (++queue->head == queue->tail) {
			queue->head = queue->tail = 0;
			decoder->heads[0] = decoder->heads[--decoder->head_count];
			heads_sift_down(decoder, 0);
		} else {
			heads_sift_down(decoder, 0);
		}
		if (err)
			break;
	}
	return err;
}

void batch_decoder_trim(struct batch_decoder *decoder)
{
	for (size_t i = 0; i < decoder->queues.capacity; i++) {
		struct decode_queue *queue = decoder->queues.slots[i].value;

		if (!queue)
			continue;
		/* Unused, or much larger than this period needed (a burst long past). */
		if (queue->head == queue->tail &&
		    (!queue->peak || queue->capacity > 4 * (queue->peak > 64 ? queue->peak : 64))) {
			free(queue->items);
			queue->items = NULL;
			queue->capacity = 0;
		}
		queue->peak = 0;
	}
}

size_t batch_decoder_room(const struct batch_decoder *decoder)
{
	size_t room = 0;

	for (size_t i = 0; i < decoder->queues.capacity; i++) {
		const struct decode_queue *queue = decoder->queues.slots[i].value;

		room += queue ? queue->capacity : 0;
	}
	return room;
}

/* The per-event record an event stands for: the same type and arguments. */
static int decode(const struct optrace_event *in, struct record_event *out)
{
	switch (in->kind) {
	case OPTRACE_EVENT_OP_BEGIN:
		out->type = RECORD_OP_BEGIN;
		out->op_begin = (struct event_op_begin){
			.op = in->op_begin.op,
			.parent = in->op_begin.parent,
			.depth = in->op_begin.depth,
			.name = in->op_begin.name,
			.callsite = in->op_begin.callsite,
		};
		return 0;
	case OPTRACE_EVENT_OP_END:
		out->type = RECORD_OP_END;
		out->op_end = (struct event_op_end){
			.op = in->op_end.op,
			.status = in->op_end.status,
		};
		return 0;
	case OPTRACE_EVENT_OP_MODE:
		out->type = RECORD_OP_MODE;
		out->op_mode = (struct event_op_mode){
			.op = in->op_mode.op,
			.mode = in->op_mode.mode,
			.reason = in->op_mode.reason,
		};
		return 0;
	case OPTRACE_EVENT_OP_FALLBACK:
		out->type = RECORD_OP_FALLBACK;
		out->op_fallback = (struct event_op_fallback){
			.op = in->op_fallback.op,
			.reason = in->op_fallback.reason,
			.detail = in->op_fallback.detail,
		};
		return 0;
	case OPTRACE_EVENT_TASK_LAUNCH:
		out->type = RECORD_TASK_LAUNCH;
		out->task_launch = (struct event_task_launch){
			.task = in->task_launch.task,
			.op = in->task_launch.op,
			.root_op = in->task_launch.root_op,
			.name = in->task_launch.name,
			.points = in->task_launch.points,
		};
		return 0;
	case OPTRACE_EVENT_TASK_BEGIN:
		out->type = RECORD_TASK_BEGIN;
		out->task_begin = (struct event_task_begin){
			.task = in->task_begin.task,
			.point = in->task_begin.point,
			.variant = in->task_begin.variant,
			.processor = in->task_begin.processor,
		};
		return 0;
	case OPTRACE_EVENT_TASK_END:
		out->type = RECORD_TASK_END;
		out->task_end = (struct event_task_end){
			.task = in->task_end.task,
			.point = in->task_end.point,
			.status = in->task_end.status,
		};
		return 0;
	case OPTRACE_EVENT_WAIT_BEGIN:
	case OPTRACE_EVENT_WAIT_END:
		out->type =
			in->kind == OPTRACE_EVENT_WAIT_BEGIN ? RECORD_WAIT_BEGIN : RECORD_WAIT_END;
		out->wait = (struct event_wait){
			.op = in->wait_begin.op,
			.kind = in->wait_begin.wait_kind,
		};
		return 0;
	case OPTRACE_EVENT_GPU_LAUNCH:
		out->type = RECORD_GPU_LAUNCH;
		out->gpu_launch = (struct event_gpu_launch){
			.correlation_id = (uint32_t)in->gpu_launch.correlation_id,
			.api_kind = in->gpu_launch.api_kind,
			.flags = in->gpu_launch.flags,
		};
		return 0;
	default:
		return -EINVAL;
	}
}

static bool taken(const struct thread_cursor *cursor, uint64_t sequence)
{
	if (cursor->start_known && sequence < cursor->next)
		return true;
	for (uint32_t i = 0; i < cursor->range_count; i++) {
		if (sequence >= cursor->ranges[i].from && sequence < cursor->ranges[i].to)
			return true;
	}
	return false;
}

/* Events between what was taken: counted as missing, and given up on. */
static uint64_t give_up_hole(struct thread_cursor *cursor)
{
	uint64_t missing = 0;

	if (cursor->start_known && cursor->ranges[0].from > cursor->next)
		missing = cursor->ranges[0].from - cursor->next;
	cursor->next = cursor->ranges[0].to;
	cursor->start_known = true;
	memmove(&cursor->ranges[0], &cursor->ranges[1],
		--cursor->range_count * sizeof(cursor->ranges[0]));
	return missing;
}

/* Notes [from, to) as taken; returns the events given up on (too many holes). */
static uint64_t take(struct thread_cursor *cursor, uint64_t from, uint64_t to)
{
	uint64_t missing = 0;
	uint32_t i = 0;

	while (i < cursor->range_count && cursor->ranges[i].to < from)
		i++;
	if (i < cursor->range_count && cursor->ranges[i].from <= to) {
		/* Overlaps or touches: merge, with any later ones it reaches. */
		if (from < cursor->ranges[i].from)
			cursor->ranges[i].from = from;
		if (to > cursor->ranges[i].to)
			cursor->ranges[i].to = to;
		while (i + 1 < cursor->range_count &&
		       cursor->ranges[i + 1].from <= cursor->ranges[i].to) {
			if (cursor->ranges[i + 1].to > cursor->ranges[i].to)
				cursor->ranges[i].to = cursor->ranges[i + 1].to;
			memmove(&cursor->ranges[i + 1], &cursor->ranges[i + 2],
				(cursor->range_count - i - 2) * sizeof(cursor->ranges[0]));
			cursor->range_count--;
		}
	} else {
		if (cursor->range_count == CURSOR_RANGES) {
			missing += give_up_hole(cursor);
			if (i)
				i--;
		}
		memmove(&cursor->ranges[i + 1], &cursor->ranges[i],
			(cursor->range_count - i) * sizeof(cursor->ranges[0]));
		cursor->ranges[i] = (struct range){ from, to };
		cursor->range_count++;
	}
	while (cursor->start_known && cursor->range_count &&
	       cursor->ranges[0].from <= cursor->next) {
		if (cursor->ranges[0].to > cursor->next)
			cursor->next = cursor->ranges[0].to;
		memmove(&cursor->ranges[0], &cursor->ranges[1],
			--cursor->range_count * sizeof(cursor->ranges[0]));
	}
	return missing;
}

/* The buffer's cursor; a new thread with a reused tid has a buffer of its own. */
static struct thread_cursor *cursor_of(struct batch_decoder *decoder, uint32_t tgid, uint32_t tid,
				       uint64_t buffer)
{
	struct thread_cursor *cursor = idmap_get(&decoder->threads, tgid, tid);

	if (cursor && cursor->buffer == buffer)
		return cursor;
	if (!cursor) {
		cursor = malloc(sizeof(*cursor));
		if (!cursor || idmap_put(&decoder->threads, tgid, tid, cursor)) {
			free(cursor);
			return NULL;
		}
	}
	memset(cursor, 0, sizeof(*cursor));
	cursor->buffer = buffer;
	return cursor;
}

void batch_decoder_finish(struct batch_decoder *decoder)
{
	for (size_t i = 0; i < decoder->threads.capacity; i++) {
		struct thread_cursor *cursor = decoder->threads.slots[i].value;

		while (cursor && cursor->range_count)
			decoder->stats.missing += give_up_hole(cursor);
	}
}

int batch_decoder_add(struct batch_decoder *decoder, const struct batch_origin *origin,
		      uint64_t sequence, uint32_t count, const struct optrace_event *events)
{
	struct thread_cursor *cursor =
		cursor_of(decoder, origin->tgid, origin->tid, origin->buffer);
	int err;

	if (!cursor)
		return -ENOMEM;
	/* The ring buffer brings a buffer's batches in order: its first is the start. */
	if (!origin->idle && !cursor->start_known) {
		cursor->start_known = true;
		cursor->next = sequence;
	}
	for (uint32_t i = 0; i < count; i++) {
		struct record_event record = {
			.timestamp = events[i].time_ns,
			.tgid = origin->tgid,
			.tid = origin->tid,
			.cpu = origin->cpu,
		};

		if (taken(cursor, sequence + i)) {
			decoder->stats.duplicates++;
			continue;
		}
		if (events[i].time_ns < decoder->start_ns || events[i].time_ns > decoder->stop_ns) {
			decoder->stats.outside++;
			continue;
		}
		if (decode(&events[i], &record)) {
			decoder->stats.malformed++;
			continue;
		}
		if (record.type == RECORD_OP_BEGIN || record.type == RECORD_TASK_BEGIN)
			record.ns_tid = origin->ns_tid;
		err = batch_decoder_push(decoder, &record);
		if (err)
			return err;
		decoder->stats.decoded++;
	}
	if (count)
		decoder->stats.missing += take(cursor, sequence, sequence + count);
	return 0;
}
