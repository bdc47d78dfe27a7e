/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The records of a format-2 chunk, private to capture/: each kind of
 * bpf/events.h's RECORD_KINDS table encoded by its struct in a few bytes
 * (times as deltas on the thread's last, ids and addresses against the
 * thread's last of the same kind, strings up to their NUL, every integer a
 * varint), any other record raw. Each chunk starts afresh, so that a reader
 * can skip a damaged chunk and decode the next. The layout is in
 * docs/capture.md, "Records (format 2)".
 */
#ifndef OPTRACE_CAPTURE_RECORDS_H
#define OPTRACE_CAPTURE_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <stdint.h>

#include "bpf/events.h"
#include "common/idmap.h"

/* The most bytes an encoded record takes beyond its data size. */
#define RECORD_CODEC_SLACK 40u
/* Bytes of a raw record beyond its data: a 3-byte head and a 5-byte size at most. */
#define RECORD_CODEC_RAW_SLACK 8u
/* Threads one chunk names; the next one starts a chunk afresh. */
#define RECORD_CODEC_THREADS_MAX 65536u
/* The history slots of a kind: ns_tid or the kind's own, then args[]. */
#define RECORD_CODEC_SLOTS (1 + RECORD_EVENT_ARGS)

struct codec_thread {
	uint32_t tgid;
	uint32_t tid;
	uint64_t timestamp;
	uint16_t cpu;
	uint64_t last[RECORD__COUNT][RECORD_CODEC_SLOTS];
};

/* One chunk's state, the same on both sides. */
struct record_codec {
	struct codec_thread *threads;
	uint32_t thread_count;
	uint32_t thread_capacity;
	uint32_t previous;  /* the thread of the last compact record, or UINT32_MAX */
	uint64_t timestamp; /* the last compact record's: a new thread's first delta is on it */
	struct idmap slots; /* the writer's (tgid, tid) -> slot + 1 */
	bool writer;
};

void record_codec_init(struct record_codec *codec, bool writer);
/* A chunk starts: nothing is known. */
void record_codec_reset(struct record_codec *codec);
void record_codec_free(struct record_codec *codec);

/*
 * Encodes a record at out, which has room for size + RECORD_CODEC_SLACK
 * bytes: the bytes written, or a negative errno (-ENOMEM). raw_only: as
 * bytes, whatever its type.
 */
int record_encode(struct record_codec *codec, uint8_t *out, uint16_t type, const void *data,
		  uint32_t size, bool raw_only);

/* A decoded record, in the reader's 8-byte aligned buffer. */
struct decoded_record {
	uint16_t type;
	uint32_t size;
	const void *data;
};

/* Where a decoder keeps what it returns: grows for raw records. */
struct decode_buffer {
	uint64_t *data;
	size_t capacity; /* bytes */
};

/*
 * Decodes the record at *pos of payload[0, size) into buffer: 1, 0 with
 * why set when the bytes are not a record (damage the CRC missed, or a
 * writer's bug), or -ENOMEM.
 */
int record_decode(struct record_codec *codec, const uint8_t *payload, size_t size, size_t *pos,
		  struct decode_buffer *buffer, struct decoded_record *record, const char **why);

void decode_buffer_free(struct decode_buffer *buffer);

#endif /* OPTRACE_CAPTURE_RECORDS_H */
