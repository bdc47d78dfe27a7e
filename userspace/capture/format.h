/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The capture file's layout, private to capture/: its constants, its
 * little-endian fields and CRCs, and the reader's state, which the writer
 * (writer.c), the reader (reader.c, chunks.c) and the dump (dump.c) share.
 *
 * Layout, byte by byte. Integers are little-endian and unsigned unless
 * said; [n] is an offset from the start of the structure; nothing is padded
 * but where said. CRCs are zlib's crc32() (CRC-32/ISO-HDLC), seeded with 0.
 *
 * File header, at offset 0, header_size bytes:
 *   [0]   8  magic 89 4f 50 54 43 41 50 0a ("\x89OPTCAP\n": the high byte and
 *            the newline show damage by 7-bit or text-mode copies)
 *   [8]   2  format major version: a reader refuses a major it does not know
 *   [10]  2  format minor version: additions that readers of older minors skip
 *   [12]  4  header_size: bytes from offset 0 to the first chunk, a multiple of 8
 *   [16]  4  CRC of bytes [0, header_size) without these 4 bytes
 *   [20]  4  fixed_size: where the metadata starts (48 in 1.0; a later minor
 *            appends fixed fields here, and older readers skip them)
 *   [24]  8  CLOCK_REALTIME in ns when recording started ...
 *   [32]  8  ... and CLOCK_MONOTONIC in ns at the same moment (the clock of
 *            bpf_ktime_get_ns): wall = realtime + (event - monotonic)
 *   [40]  4  chunk_size: the most payload bytes of a record chunk
 *   [44]  4  meta_count
 *   [fixed_size]  meta_count metadata entries, back to back, each
 *            4 key length, 4 value length, key bytes, value bytes (no NUL);
 *            keys this file writes: optrace.version, host.name, host.kernel,
 *            target, recorder.pid, then the caller's own
 *   then zero bytes up to header_size.
 *   Bytes [0, 12) keep this meaning in every version.
 *
 * Chunks follow, one after the other, each a 32-byte header and a payload:
 *   [0]   4  magic "OTCK"
 *   [4]   2  kind: 1 records, 2 end marker; a reader skips kinds it does
 *            not know (after checking their CRC)
 *   [6]   2  flags, 0 (readers ignore them)
 *   [8]   8  sequence number: 0 for the first chunk, then +1 each
 *   [16]  4  payload_size: bytes after this header; at most chunk_size for
 *            a record chunk, at most 64 MiB for any
 *   [20]  4  record count (0 but in record chunks)
 *   [24]  4  CRC of the payload
 *   [28]  4  CRC of bytes [0, 28) of this header
 *   [32]     payload
 *
 * A record chunk's payload is its records, back to back, each starting at a
 * multiple of 8 (so an event's 8-byte fields are aligned in the reader's
 * buffer):
 *   [0]   4  data size
 *   [4]   2  type (the caller's; 0xff00 and up reserved)
 *   [6]   2  flags, 0 (readers ignore them)
 *   [8]      data, then zero bytes up to a multiple of 8
 *   No record spans chunks; the payload holds exactly record count records.
 *
 * The end marker, the last chunk of a capture closed cleanly, holds:
 *   [0]   4  fixed_size: where the counters start (64 in 1.0)
 *   [4]   4  counter count
 *   [8]   8  records written
 *   [16]  8  record chunks written
 *   [24]  8  record data bytes written
 *   [32]  8  records lost: handed to the writer but not in the file
 *   [40]  4  the writer's first write error as an errno (e.g. 28, ENOSPC), or 0
 *   [44]  4  zero
 *   [48]  8  CLOCK_REALTIME in ns when recording stopped
 *   [56]  8  CLOCK_MONOTONIC in ns at the same moment
 *   [fixed_size]  counters, back to back, each 8 value, 4 name length, name
 *
 * Crashes: a chunk is buffered whole and written by one write(); a recorder
 * killed at any moment leaves whole chunks and at most one partial one, and
 * the reader stops at the first chunk that is cut, fails a CRC or is not a
 * chunk. After a write error the writer truncates the file back to its last
 * whole chunk.
 */
#ifndef OPTRACE_CAPTURE_FORMAT_H
#define OPTRACE_CAPTURE_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <zlib.h>

#include "capture/capture.h"
#include "capture/records.h"

static const uint8_t file_magic[8] = { 0x89, 'O', 'P', 'T', 'C', 'A', 'P', '\n' };
static const uint8_t chunk_magic[4] = { 'O', 'T', 'C', 'K' };

#define FILE_HEADER_FIXED 48u
#define FILE_HEADER_MAX (1u << 20)
#define CHUNK_HEADER_SIZE 32u
#define TRAILER_FIXED 64u
#define TRAILER_COUNTERS_MAX 1024u
#define COUNTER_NAME_MAX 255u
/* The oldest major this code reads; 1 is the first. */
#define CAPTURE_VERSION_MAJOR_OLDEST 1

enum chunk_kind {
	CHUNK_RECORDS = 1,
	CHUNK_END = 2,
};

/* ---- little-endian fields ------------------------------------------------- */

static inline uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t get_le64(const uint8_t *p)
{
	return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

static inline void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void put_le32(uint8_t *p, uint32_t v)
{
	put_le16(p, (uint16_t)v);
	put_le16(p + 2, (uint16_t)(v >> 16));
}

static inline void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32(p + 4, (uint32_t)(v >> 32));
}

static inline uint64_t align8(uint64_t n)
{
	return (n + 7) & ~(uint64_t)7;
}

static inline uint32_t crc(const void *data, size_t size)
{
	return (uint32_t)crc32(0, data, (uInt)size);
}

/* The header's CRC leaves out its own field, bytes [16, 20). */
static inline uint32_t file_header_crc(const uint8_t *header, uint32_t size)
{
	uLong sum = crc32(0, header, 16);

	return (uint32_t)crc32(sum, header + 20, size - 20);
}

/* ---- reading ---------------------------------------------------------------- */

/* The chunk being read, as far as its header could be read. */
struct chunk_info {
	uint64_t offset;
	uint64_t seq;
	uint16_t kind;
	uint32_t payload_size;
	uint32_t records;
	bool crc_ok; /* both CRCs */
	bool cut;    /* the file ends inside it */
};

struct capture_reader {
	int fd;
	struct capture_header header;
	struct capture_meta *meta;
	char *meta_strings;
	uint64_t offset; /* of the next chunk */
	uint64_t next_seq;
	uint8_t *payload;
	size_t payload_capacity;
	struct chunk_info chunk;
	size_t record_pos; /* of the next record in payload */
	uint32_t records_left;
	struct record_codec codec;    /* format 2: the chunk's threads and histories */
	struct decode_buffer decoded; /* format 2: the record capture_next() returned */
	struct capture_counter *counters;
	char *counter_names;
	struct capture_status status;
	/* The damage that made the last chunk unreadable, until it is skipped or said. */
	char damage_what[96];
	uint8_t garbage[CHUNK_HEADER_SIZE]; /* the bytes where a chunk should start */
	size_t garbage_count;		    /* of them; 0: the damage is a chunk's own */
	/* What was skipped, first: the sentence the status's message starts with. */
	char damage[320];
	char first_damage[160];
};

/* capture_read_chunk(): a damaged chunk was skipped; r->chunk is it, the next read is whole. */
#define CHUNK_SKIPPED 2

/* Reads up to size bytes; fewer only at the end of the file (reader.c). */
ssize_t capture_read_full(int fd, void *data, size_t size);

/* At most 8 bytes as hex, for a sentence (reader.c). */
void capture_describe_bytes(char *text, size_t size, const uint8_t *bytes, size_t count);

/* A regular file opened for reading, or a negative errno and why (reader.c). */
int capture_open_regular(const char *path, char *why, size_t why_size);

/*
 * The next chunk into r->chunk: 1, CHUNK_SKIPPED, 0 when reading has ended,
 * or -errno (chunks.c).
 */
int capture_read_chunk(struct capture_reader *r);

#endif /* OPTRACE_CAPTURE_FORMAT_H */
