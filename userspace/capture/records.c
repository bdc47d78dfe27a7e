// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Format 2's records, encoded and decoded by the struct of their kind
 * (bpf/events.h's RECORD_KINDS). A record is
 *
 *   head     varint: type << 2 | same_thread << 1 | compact
 *   raw (compact 0):  varint size, then size bytes
 *   compact:          [varint slot; if a new slot: varint tgid, varint tid]
 *                     (absent when same_thread), then the kind's body
 *
 * and every body starts with the time as a zigzag varint delta on the
 * thread's last. Whatever a kind's struct holds beyond its body (args it
 * does not use, reserved fields) must be zero, or the record is written raw:
 * decoding gives back the bytes given, but for text after its NUL.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "capture/records.h"

/* The layouts the codec reads fields of: pinned, since captures keep them. */
_Static_assert(sizeof(struct record_event) == 64, "record_event is 64 bytes");
_Static_assert(offsetof(struct record_event, type) == 16, "every record's type at 16");
_Static_assert(offsetof(struct record_event, ns_tid) == 20, "record_event's ns_tid at 20");
_Static_assert(offsetof(struct record_event, args) == 24, "record_event's args at 24");
_Static_assert(sizeof(struct record_string) == 32 + RECORD_STRING_LEN, "record_string");
_Static_assert(offsetof(struct record_string, address) == 24, "record_string's address");
_Static_assert(sizeof(struct record_gpu) == 24 + RECORD_GPU_MAX, "record_gpu");
_Static_assert(sizeof(struct record_gpu_name) == 24 + RECORD_GPU_NAME_LEN, "record_gpu_name");
_Static_assert(sizeof(struct record_name) == 24 + RECORD_NAME_LEN, "record_name");
_Static_assert(sizeof(struct record_clock) == 64, "record_clock");
_Static_assert(offsetof(struct record_clock, realtime_ns) == 24, "record_clock's realtime");

/* The head every record shares: its time, thread and type. */
struct record_head {
	__u64 timestamp;
	__u32 tgid;
	__u32 tid;
	__u16 type;
};

enum record_layout {
	LAYOUT_RAW,
	LAYOUT_record_event,
	LAYOUT_record_string,
	LAYOUT_record_gpu,
	LAYOUT_record_gpu_name,
	LAYOUT_record_name,
	LAYOUT_record_clock,
	LAYOUT_record_batch, /* never in a capture: raw */
};

struct kind_codec {
	enum record_layout layout;
	uint8_t args;
	uint32_t size;
};

#define RECORD_KIND_CODEC_(name, value, layout, class, arg_count) \
	[value] = { LAYOUT_##layout, arg_count, sizeof(struct layout) },

static const struct kind_codec kinds[RECORD__COUNT] = { RECORD_KINDS(RECORD_KIND_CODEC_) };

/* ---- varints ----------------------------------------------------------------- */

static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline uint64_t zigzag(uint64_t delta)
{
	return (delta << 1) ^ (0 - (delta >> 63)); /* the sign bit, spread */
}

static inline uint64_t unzigzag(uint64_t v)
{
	return (v >> 1) ^ (uint64_t) - (int64_t)(v & 1);
}

struct cursor {
	const uint8_t *p;
	const uint8_t *end;
	bool bad;
};

static inline uint64_t get_varint(struct cursor *c)
{
	uint64_t v = 0;

	for (unsigned int shift = 0; shift < 64; shift += 7) {
		uint8_t byte;

		if (c->p == c->end) {
			c->bad = true;
			return 0;
		}
		byte = *c->p++;
		v |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80))
			return v;
	}
	c->bad = true; /* more than 10 bytes */
	return 0;
}

static inline const uint8_t *get_bytes(struct cursor *c, uint64_t count)
{
	const uint8_t *p = c->p;

	if (c->bad || count > (uint64_t)(c->end - c->p)) {
		c->bad = true;
		return NULL;
	}
	c->p += count;
	return p;
}

/* ---- the chunk's threads ----------------------------------------------------- */

void record_codec_init(struct record_codec *codec, bool writer)
{
	memset(codec, 0, sizeof(*codec));
	codec->writer = writer;
	codec->previous = UINT32_MAX;
}

void record_codec_reset(struct record_codec *codec)
{
	for (uint32_t i = 0; codec->writer && i < codec->thread_count; i++)
		idmap_remove(&codec->slots, codec->threads[i].tgid, codec->threads[i].tid);
	codec->thread_count = 0;
	codec->previous = UINT32_MAX;
	codec->timestamp = 0;
}

void record_codec_free(struct record_codec *codec)
{
	free(codec->threads);
	idmap_free(&codec->slots);
	memset(codec, 0, sizeof(*codec));
}

/* A new thread's slot, its history empty: its index, or -ENOMEM. */
static int64_t add_thread(struct record_codec *codec, uint32_t tgid, uint32_t tid)
{
	struct codec_thread *thread;

	if (codec->thread_count == codec->thread_capacity) {
		uint32_t capacity = codec->thread_capacity ? codec->thread_capacity * 2 : 16;
		struct codec_thread *threads =
			reallocarray(codec->threads, capacity, sizeof(*threads));

		if (!threads)
			return -ENOMEM;
		codec->threads = threads;
		codec->thread_capacity = capacity;
	}
	thread = &codec->threads[codec->thread_count];
	memset(thread, 0, sizeof(*thread));
	thread->tgid = tgid;
	thread->tid = tid;
	thread->timestamp = codec->timestamp;
	return codec->thread_count++;
}

/* ---- encoding ---------------------------------------------------------------- */

static bool all_zero(const void *data, size_t size)
{
	const uint8_t *p = data;

	for (size_t i = 0; i < size; i++) {
		if (p[i])
			return false;
	}
	return true;
}

/* Whether the record is its kind's struct with nothing the body leaves out. */
static bool encodable(const struct kind_codec *kind, uint16_t type, const void *data, uint32_t size)
{
	const struct record_head *head = data;

	if (kind->layout == LAYOUT_RAW || kind->layout == LAYOUT_record_batch ||
	    size != kind->size || head->type != type)
		return false;
	switch (kind->layout) {
	case LAYOUT_record_event: {
		const struct record_event *event = data;

		return all_zero(&event->args[kind->args],
				(RECORD_EVENT_ARGS - kind->args) * sizeof(event->args[0]));
	}
	case LAYOUT_record_string: {
		const struct record_string *string = data;

		return string->truncated <= 1 && string->unreadable <= 1 && !string->reserved;
	}
	case LAYOUT_record_gpu: {
		const struct record_gpu *gpu = data;

		return gpu->size <= RECORD_GPU_MAX && !gpu->reserved;
	}
	case LAYOUT_record_gpu_name: {
		const struct record_gpu_name *name = data;

		return name->truncated <= 1 && name->unreadable <= 1;
	}
	case LAYOUT_record_name: {
		const struct record_name *name = data;

		return !name->reserved16 && !name->reserved;
	}
	case LAYOUT_record_clock: {
		const struct record_clock *clock = data;

		return !clock->reserved16 && !clock->reserved &&
		       all_zero(clock->reserved2, sizeof(clock->reserved2));
	}
	default:
		return false;
	}
}

/* The thread's slot, written after the head: its state, or NULL (-ENOMEM). */
static struct codec_thread *encode_thread(struct record_codec *codec, uint8_t **p, uint16_t type,
					  const struct record_head *head)
{
	uint32_t slot = codec->previous;
	void *found;
	int64_t added;

	if (slot != UINT32_MAX && codec->threads[slot].tgid == head->tgid &&
	    codec->threads[slot].tid == head->tid) {
		*p = put_varint(*p, (uint64_t)type << 2 | 3);
		return &codec->threads[slot];
	}
	*p = put_varint(*p, (uint64_t)type << 2 | 1);
	found = idmap_get(&codec->slots, head->tgid, head->tid);
	if (found) {
		slot = (uint32_t)((uintptr_t)found - 1);
		*p = put_varint(*p, slot);
	} else {
		added = add_thread(codec, head->tgid, head->tid);
		if (added < 0)
			return NULL;
		slot = (uint32_t)added;
		if (idmap_put(&codec->slots, head->tgid, head->tid, (void *)(uintptr_t)(slot + 1)))
			return NULL;
		*p = put_varint(*p, slot);
		*p = put_varint(*p, head->tgid);
		*p = put_varint(*p, head->tid);
	}
	codec->previous = slot;
	return &codec->threads[slot];
}

static inline uint8_t *put_delta(uint8_t *p, uint64_t *last, uint64_t value)
{
	p = put_varint(p, zigzag(value - *last));
	*last = value;
	return p;
}

static uint8_t *put_text(uint8_t *p, const char *text, size_t capacity)
{
	size_t length = strnlen(text, capacity);

	p = put_varint(p, length);
	memcpy(p, text, length);
	return p + length;
}

static uint8_t *encode_body(struct codec_thread *t, uint8_t *p, uint16_t type,
			    const struct kind_codec *kind, const void *data)
{
	uint64_t *last = t->last[type];

	switch (kind->layout) {
	case LAYOUT_record_event: {
		const struct record_event *event = data;

		p = put_varint(p, zigzag((uint64_t)event->cpu - t->cpu));
		t->cpu = event->cpu;
		p = put_delta(p, &last[0], event->ns_tid);
		for (unsigned int i = 0; i < kind->args; i++)
			p = put_delta(p, &last[1 + i], event->args[i]);
		return p;
	}
	case LAYOUT_record_string: {
		const struct record_string *string = data;

		*p++ = (uint8_t)(string->truncated | string->unreadable << 1);
		p = put_delta(p, &last[0], string->address);
		return put_text(p, string->text, sizeof(string->text));
	}
	case LAYOUT_record_gpu: {
		const struct record_gpu *gpu = data;

		p = put_varint(p, gpu->size);
		memcpy(p, gpu->data, gpu->size);
		return p + gpu->size;
	}
	case LAYOUT_record_gpu_name: {
		const struct record_gpu_name *name = data;

		*p++ = (uint8_t)(name->truncated | name->unreadable << 1);
		p = put_delta(p, &last[0], name->name_id);
		return put_text(p, name->text, sizeof(name->text));
	}
	case LAYOUT_record_name: {
		const struct record_name *name = data;

		return put_text(p, name->name, sizeof(name->name));
	}
	case LAYOUT_record_clock: {
		const struct record_clock *clock = data;

		/* Realtime less monotonic moves by the clocks' drift only. */
		p = put_delta(p, &last[0], clock->realtime_ns - clock->timestamp);
		return put_varint(p, clock->uncertainty_ns);
	}
	default:
		return p;
	}
}

int record_encode(struct record_codec *codec, uint8_t *out, uint16_t type, const void *data,
		  uint32_t size, bool raw_only)
{
	const struct kind_codec *kind = type < RECORD__COUNT ? &kinds[type] : NULL;
	const struct record_head *head = data;
	struct codec_thread *thread;
	uint8_t *p = out;

	if (raw_only || !kind || !encodable(kind, type, data, size) ||
	    (codec->thread_count == RECORD_CODEC_THREADS_MAX &&
	     !idmap_get(&codec->slots, head->tgid, head->tid))) {
		p = put_varint(p, (uint64_t)type << 2);
		p = put_varint(p, size);
		memcpy(p, data, size);
		return (int)(p + size - out);
	}
	thread = encode_thread(codec, &p, type, head);
	if (!thread)
		return -ENOMEM;
	p = put_delta(p, &thread->timestamp, head->timestamp);
	codec->timestamp = head->timestamp;
	p = encode_body(thread, p, type, kind, data);
	return (int)(p - out);
}

/* ---- decoding ---------------------------------------------------------------- */

static int ensure_buffer(struct decode_buffer *buffer, size_t size)
{
	uint64_t *data;
	size_t capacity = buffer->capacity ? buffer->capacity : 1024;

	if (size <= buffer->capacity)
		return 0;
	while (capacity < size)
		capacity *= 2;
	data = realloc(buffer->data, capacity);
	if (!data)
		return -ENOMEM;
	buffer->data = data;
	buffer->capacity = capacity;
	return 0;
}

void decode_buffer_free(struct decode_buffer *buffer)
{
	free(buffer->data);
	memset(buffer, 0, sizeof(*buffer));
}

static inline uint64_t get_delta(struct cursor *c, uint64_t *last)
{
	*last += unzigzag(get_varint(c));
	return *last;
}

/* Text of at most capacity bytes into text (zeroed): false if it does not fit. */
static bool get_text(struct cursor *c, char *text, size_t capacity)
{
	uint64_t length = get_varint(c);
	const uint8_t *bytes;

	if (length > capacity)
		return false;
	bytes = get_bytes(c, length);
	if (!bytes)
		return false;
	memcpy(text, bytes, length);
	return true;
}

static bool get_flags(struct cursor *c, __u8 *truncated, __u8 *unreadable)
{
	const uint8_t *flags = get_bytes(c, 1);

	if (!flags || *flags > 3)
		return false;
	*truncated = *flags & 1;
	*unreadable = *flags >> 1;
	return true;
}

/* The kind's body into the zeroed record: false if the bytes are not one. */
static bool decode_body(struct cursor *c, struct codec_thread *t, uint16_t type,
			const struct kind_codec *kind, void *data)
{
	uint64_t *last = t->last[type];

	switch (kind->layout) {
	case LAYOUT_record_event: {
		struct record_event *event = data;

		t->cpu = (uint16_t)(t->cpu + unzigzag(get_varint(c)));
		event->cpu = t->cpu;
		event->ns_tid = (__u32)get_delta(c, &last[0]);
		for (unsigned int i = 0; i < kind->args; i++)
			event->args[i] = get_delta(c, &last[1 + i]);
		return true;
	}
	case LAYOUT_record_string: {
		struct record_string *string = data;

		if (!get_flags(c, &string->truncated, &string->unreadable))
			return false;
		string->address = get_delta(c, &last[0]);
		return get_text(c, string->text, sizeof(string->text));
	}
	case LAYOUT_record_gpu: {
		struct record_gpu *gpu = data;
		uint64_t size = get_varint(c);
		const uint8_t *bytes;

		if (size > RECORD_GPU_MAX)
			return false;
		bytes = get_bytes(c, size);
		if (!bytes)
			return false;
		gpu->size = (__u16)size;
		memcpy(gpu->data, bytes, size);
		return true;
	}
	case LAYOUT_record_gpu_name: {
		struct record_gpu_name *name = data;

		if (!get_flags(c, &name->truncated, &name->unreadable))
			return false;
		name->name_id = (__u32)get_delta(c, &last[0]);
		return get_text(c, name->text, sizeof(name->text));
	}
	case LAYOUT_record_name: {
		struct record_name *name = data;

		return get_text(c, name->name, sizeof(name->name));
	}
	case LAYOUT_record_clock: {
		struct record_clock *clock = data;

		clock->realtime_ns = get_delta(c, &last[0]) + clock->timestamp;
		clock->uncertainty_ns = get_varint(c);
		return true;
	}
	default:
		return false;
	}
}

static int decode_raw(struct cursor *c, uint16_t type, struct decode_buffer *buffer,
		      struct decoded_record *record, const char **why)
{
	uint64_t size = get_varint(c);
	const uint8_t *bytes = get_bytes(c, size);
	int err;

	if (!bytes || size > UINT32_MAX) {
		*why = "a record overruns the chunk";
		return 0;
	}
	err = ensure_buffer(buffer, size ? size : 1);
	if (err)
		return err;
	memcpy(buffer->data, bytes, size);
	record->type = type;
	record->size = (uint32_t)size;
	record->data = buffer->data;
	return 1;
}

/* The slot after a head without same_thread: the thread's state, or NULL. */
static struct codec_thread *decode_thread(struct record_codec *codec, struct cursor *c, int *err)
{
	uint64_t slot = get_varint(c);

	if (c->bad || slot > codec->thread_count)
		return NULL;
	if (slot == codec->thread_count) {
		uint64_t tgid = get_varint(c), tid = get_varint(c);
		int64_t added;

		if (c->bad || tgid > UINT32_MAX || tid > UINT32_MAX ||
		    codec->thread_count == RECORD_CODEC_THREADS_MAX)
			return NULL;
		added = add_thread(codec, (uint32_t)tgid, (uint32_t)tid);
		if (added < 0) {
			*err = (int)added;
			return NULL;
		}
	}
	codec->previous = (uint32_t)slot;
	return &codec->threads[slot];
}

int record_decode(struct record_codec *codec, const uint8_t *payload, size_t size, size_t *pos,
		  struct decode_buffer *buffer, struct decoded_record *record, const char **why)
{
	struct cursor c = { .p = payload + *pos, .end = payload + size };
	uint64_t head = get_varint(&c);
	uint64_t type = head >> 2;
	const struct kind_codec *kind;
	struct codec_thread *thread;
	struct record_head *out;
	int err = 0;

	*why = "a record is cut";
	if (c.bad)
		return 0;
	if (type >= 0xffff) {
		*why = "a record's type is out of range";
		return 0;
	}
	if (!(head & 1)) {
		err = decode_raw(&c, (uint16_t)type, buffer, record, why);
		if (err > 0)
			*pos = (size_t)(c.p - payload);
		return err;
	}
	kind = type < RECORD__COUNT ? &kinds[type] : NULL;
	if (!kind || kind->layout == LAYOUT_RAW || kind->layout == LAYOUT_record_batch) {
		*why = "a compact record of a kind that has no compact form";
		return 0;
	}
	if (head & 2) {
		if (codec->previous == UINT32_MAX) {
			*why = "a record refers to a thread before any";
			return 0;
		}
		thread = &codec->threads[codec->previous];
	} else {
		thread = decode_thread(codec, &c, &err);
		if (!thread) {
			*why = "a record names a thread that is not there";
			return err;
		}
	}
	err = ensure_buffer(buffer, kind->size);
	if (err)
		return err;
	memset(buffer->data, 0, kind->size);
	out = (struct record_head *)buffer->data;
	out->timestamp = get_delta(&c, &thread->timestamp);
	out->tgid = thread->tgid;
	out->tid = thread->tid;
	out->type = (__u16)type;
	codec->timestamp = out->timestamp;
	if (!decode_body(&c, thread, (uint16_t)type, kind, buffer->data) || c.bad) {
		*why = "a record's fields are malformed";
		return 0;
	}
	record->type = (uint16_t)type;
	record->size = kind->size;
	record->data = buffer->data;
	*pos = (size_t)(c.p - payload);
	return 1;
}
