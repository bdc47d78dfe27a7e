// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The capture file: written by `optrace record`, read by report and export.
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
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "capture/capture.h"

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

static uint32_t crc(const void *data, size_t size)
{
	return (uint32_t)crc32(0, data, (uInt)size);
}

/* The header's CRC leaves out its own field, bytes [16, 20). */
static uint32_t file_header_crc(const uint8_t *header, uint32_t size)
{
	uLong sum = crc32(0, header, 16);

	return (uint32_t)crc32(sum, header + 20, size - 20);
}

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * CLOCK_REALTIME and CLOCK_MONOTONIC "at the same moment": the monotonic
 * reading between the two closest realtime readings of a few tries.
 */
static void clock_pair(uint64_t *realtime_ns, uint64_t *monotonic_ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 5; i++) {
		uint64_t before = clock_ns(CLOCK_REALTIME);
		uint64_t monotonic = clock_ns(CLOCK_MONOTONIC);
		uint64_t after = clock_ns(CLOCK_REALTIME);

		if (after - before < best) {
			best = after - before;
			*realtime_ns = before + best / 2;
			*monotonic_ns = monotonic;
		}
	}
}

static int write_all(int fd, const void *data, size_t size)
{
	const uint8_t *p = data;

	while (size) {
		ssize_t done = write(fd, p, size);

		if (done < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (done == 0)
			return -EIO;
		p += done;
		size -= (size_t)done;
	}
	return 0;
}

/* Reads up to size bytes; fewer only at the end of the file. */
static ssize_t read_full(int fd, void *data, size_t size)
{
	uint8_t *p = data;
	size_t got = 0;

	while (got < size) {
		ssize_t n = read(fd, p + got, size - got);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* ---- writing ---------------------------------------------------------------- */

struct capture_writer {
	int fd;
	uint8_t *chunk;		/* CHUNK_HEADER_SIZE bytes of header space, then the payload */
	uint32_t chunk_size;	/* payload capacity */
	uint32_t used;		/* payload bytes filled */
	uint32_t pending;	/* records in the pending chunk */
	uint64_t pending_bytes; /* their data bytes */
	uint64_t next_seq;
	bool tail_unknown; /* a failed write could not be undone: append nothing */
	struct capture_writer_stats stats;
};

static void fill_chunk_header(uint8_t *header, uint16_t kind, uint64_t seq, uint32_t payload_size,
			      uint32_t records)
{
	memcpy(header, chunk_magic, sizeof(chunk_magic));
	put_le16(header + 4, kind);
	put_le16(header + 6, 0);
	put_le64(header + 8, seq);
	put_le32(header + 16, payload_size);
	put_le32(header + 20, records);
	put_le32(header + 24, crc(header + CHUNK_HEADER_SIZE, payload_size));
	put_le32(header + 28, crc(header, 28));
}

/*
 * Writes chunk (its header space and payload) at the end of the file in one
 * write(). On failure, cuts the file back to its last whole chunk so that
 * nothing partial stays behind, and remembers the first error.
 */
static int write_chunk(struct capture_writer *w, uint8_t *chunk, uint16_t kind,
		       uint32_t payload_size, uint32_t records)
{
	size_t size = CHUNK_HEADER_SIZE + (size_t)payload_size;
	int err;

	if (w->tail_unknown)
		return w->stats.error;
	fill_chunk_header(chunk, kind, w->next_seq, payload_size, records);
	err = write_all(w->fd, chunk, size);
	if (err) {
		if (!w->stats.error)
			w->stats.error = err;
		if (ftruncate(w->fd, (off_t)w->stats.file_bytes) ||
		    lseek(w->fd, (off_t)w->stats.file_bytes, SEEK_SET) < 0)
			w->tail_unknown = true;
		return err;
	}
	w->next_seq++;
	w->stats.file_bytes += size;
	return 0;
}

struct header_builder {
	uint8_t *data;
	uint32_t size;
	uint32_t capacity;
	uint32_t count;
	int err;
};

static void header_add(struct header_builder *b, const char *key, const char *value)
{
	size_t key_length, value_length;

	if (b->err)
		return;
	if (!key || !value) {
		b->err = -EINVAL;
		return;
	}
	key_length = strlen(key);
	value_length = strlen(value);
	if (8 + key_length + value_length > b->capacity - b->size) {
		b->err = -E2BIG;
		return;
	}
	put_le32(b->data + b->size, (uint32_t)key_length);
	put_le32(b->data + b->size + 4, (uint32_t)value_length);
	memcpy(b->data + b->size + 8, key, key_length);
	memcpy(b->data + b->size + 8 + key_length, value, value_length);
	b->size += 8 + (uint32_t)(key_length + value_length);
	b->count++;
}

static const char *default_version(void)
{
#ifdef OPTRACE_VERSION
	return OPTRACE_VERSION;
#else
	return "unknown";
#endif
}

static int write_file_header(struct capture_writer *w, const struct capture_writer_opts *opts)
{
	struct header_builder b = { .size = FILE_HEADER_FIXED, .capacity = FILE_HEADER_MAX };
	char hostname[256] = "", pid[32];
	uint64_t realtime_ns = 0, monotonic_ns = 0;
	struct utsname uts;
	int err;

	b.data = calloc(1, FILE_HEADER_MAX);
	if (!b.data)
		return -ENOMEM;
	if (opts->hostname)
		snprintf(hostname, sizeof(hostname), "%s", opts->hostname);
	else if (gethostname(hostname, sizeof(hostname) - 1))
		hostname[0] = '\0';
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	header_add(&b, CAPTURE_KEY_VERSION,
		   opts->optrace_version ? opts->optrace_version : default_version());
	header_add(&b, CAPTURE_KEY_HOSTNAME, hostname);
	if (!uname(&uts))
		header_add(&b, CAPTURE_KEY_KERNEL, uts.release);
	if (opts->target)
		header_add(&b, CAPTURE_KEY_TARGET, opts->target);
	header_add(&b, CAPTURE_KEY_PID, pid);
	for (size_t i = 0; i < opts->meta_count; i++)
		header_add(&b, opts->meta[i].key, opts->meta[i].value);
	err = b.err;
	if (err)
		goto cleanup;

	b.size = (uint32_t)align8(b.size);
	if (b.size > FILE_HEADER_MAX) {
		err = -E2BIG;
		goto cleanup;
	}
	clock_pair(&realtime_ns, &monotonic_ns);
	memcpy(b.data, file_magic, sizeof(file_magic));
	put_le16(b.data + 8, CAPTURE_VERSION_MAJOR);
	put_le16(b.data + 10, CAPTURE_VERSION_MINOR);
	put_le32(b.data + 12, b.size);
	put_le32(b.data + 20, FILE_HEADER_FIXED);
	put_le64(b.data + 24, realtime_ns);
	put_le64(b.data + 32, monotonic_ns);
	put_le32(b.data + 40, w->chunk_size);
	put_le32(b.data + 44, b.count);
	put_le32(b.data + 16, file_header_crc(b.data, b.size));
	err = write_all(w->fd, b.data, b.size);
	if (!err)
		w->stats.file_bytes = b.size;
cleanup:
	free(b.data);
	return err;
}

static bool writer_opts_valid(const struct capture_writer_opts *opts)
{
	uint32_t chunk_size = opts->chunk_size ? opts->chunk_size : CAPTURE_CHUNK_DEFAULT;

	return !(opts->meta_count && !opts->meta) && chunk_size >= CAPTURE_CHUNK_MIN &&
	       chunk_size <= CAPTURE_CHUNK_MAX && chunk_size % 8 == 0;
}

int capture_writer_fdopen(struct capture_writer **writer, int fd,
			  const struct capture_writer_opts *opts)
{
	static const struct capture_writer_opts no_opts;
	struct capture_writer *w;
	int err;

	*writer = NULL;
	if (!opts)
		opts = &no_opts;
	if (!writer_opts_valid(opts))
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->chunk_size = opts->chunk_size ? opts->chunk_size : CAPTURE_CHUNK_DEFAULT;
	w->chunk = malloc(CHUNK_HEADER_SIZE + (size_t)w->chunk_size);
	if (!w->chunk) {
		err = -ENOMEM;
		goto fail;
	}
	w->fd = fd;
	err = write_file_header(w, opts);
	if (err)
		goto fail;
	*writer = w;
	return 0;
fail:
	free(w->chunk);
	free(w);
	return err;
}

int capture_writer_open(struct capture_writer **writer, const char *path,
			const struct capture_writer_opts *opts)
{
	int fd, err;

	*writer = NULL;
	if (opts && !writer_opts_valid(opts))
		return -EINVAL; /* before the file is touched */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	err = capture_writer_fdopen(writer, fd, opts);
	if (err)
		close(fd);
	return err;
}

int capture_flush(struct capture_writer *w)
{
	int err;

	if (w->stats.error)
		return w->stats.error;
	if (!w->pending)
		return 0;
	err = write_chunk(w, w->chunk, CHUNK_RECORDS, w->used, w->pending);
	if (err) {
		w->stats.records_lost += w->pending;
	} else {
		w->stats.records += w->pending;
		w->stats.record_bytes += w->pending_bytes;
		w->stats.chunks++;
	}
	w->used = 0;
	w->pending = 0;
	w->pending_bytes = 0;
	return err;
}

int capture_write(struct capture_writer *w, uint16_t type, const void *data, uint32_t size)
{
	uint32_t space;
	uint8_t *p;
	int err;

	if (type >= CAPTURE_TYPE_RESERVED || (size && !data)) {
		w->stats.records_lost++;
		return -EINVAL;
	}
	if (size > w->chunk_size - CAPTURE_RECORD_OVERHEAD) {
		w->stats.records_lost++;
		return -EMSGSIZE;
	}
	if (w->stats.error) {
		w->stats.records_lost++;
		return w->stats.error;
	}
	space = CAPTURE_RECORD_OVERHEAD + (uint32_t)align8(size);
	if (space > w->chunk_size - w->used) {
		err = capture_flush(w);
		if (err) {
			w->stats.records_lost++;
			return err;
		}
	}
	p = w->chunk + CHUNK_HEADER_SIZE + w->used;
	put_le32(p, size);
	put_le16(p + 4, type);
	put_le16(p + 6, 0);
	if (size)
		memcpy(p + CAPTURE_RECORD_OVERHEAD, data, size);
	memset(p + CAPTURE_RECORD_OVERHEAD + size, 0, space - CAPTURE_RECORD_OVERHEAD - size);
	w->used += space;
	w->pending++;
	w->pending_bytes += size;
	return 0;
}

void capture_writer_stats(const struct capture_writer *w, struct capture_writer_stats *stats)
{
	*stats = w->stats;
}

static bool counter_valid(const struct capture_counter *counter)
{
	return counter->name && strlen(counter->name) <= COUNTER_NAME_MAX;
}

/* The end marker: totals, the clock pair now, and the valid counters. */
static int write_trailer(struct capture_writer *w, const struct capture_counter *counters,
			 size_t counter_count)
{
	uint64_t realtime_ns = 0, monotonic_ns = 0;
	size_t size = TRAILER_FIXED, pos;
	uint32_t written = 0;
	uint8_t *chunk, *p;
	int err;

	for (size_t i = 0; i < counter_count && i < TRAILER_COUNTERS_MAX; i++) {
		if (counter_valid(&counters[i]))
			size += 12 + strlen(counters[i].name);
	}
	chunk = calloc(1, CHUNK_HEADER_SIZE + size);
	if (!chunk)
		return -ENOMEM;
	p = chunk + CHUNK_HEADER_SIZE;
	pos = TRAILER_FIXED;
	for (size_t i = 0; i < counter_count && i < TRAILER_COUNTERS_MAX; i++) {
		size_t length;

		if (!counter_valid(&counters[i]))
			continue;
		length = strlen(counters[i].name);
		put_le64(p + pos, counters[i].value);
		put_le32(p + pos + 8, (uint32_t)length);
		memcpy(p + pos + 12, counters[i].name, length);
		pos += 12 + length;
		written++;
	}
	clock_pair(&realtime_ns, &monotonic_ns);
	put_le32(p, TRAILER_FIXED);
	put_le32(p + 4, written);
	put_le64(p + 8, w->stats.records);
	put_le64(p + 16, w->stats.chunks);
	put_le64(p + 24, w->stats.record_bytes);
	put_le64(p + 32, w->stats.records_lost);
	put_le32(p + 40, (uint32_t)-w->stats.error);
	put_le64(p + 48, realtime_ns);
	put_le64(p + 56, monotonic_ns);
	err = write_chunk(w, chunk, CHUNK_END, (uint32_t)size, 0);
	free(chunk);
	return err;
}

int capture_close(struct capture_writer *w, const struct capture_counter *counters,
		  size_t counter_count)
{
	int err, bad_counters = 0;

	if (!w)
		return 0;
	if (counter_count && !counters)
		counter_count = 0;
	for (size_t i = 0; i < counter_count; i++) {
		if (i >= TRAILER_COUNTERS_MAX || !counter_valid(&counters[i]))
			bad_counters = -EINVAL;
	}
	/* A failure here is remembered in w->stats.error; the end marker says what was lost. */
	capture_flush(w);
	err = write_trailer(w, counters, counter_count);
	if (w->stats.error)
		err = w->stats.error;
	if (close(w->fd) && !err)
		err = -errno;
	if (!err)
		err = bad_counters;
	free(w->chunk);
	free(w);
	return err;
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

/* Where capture_peek_counter() looks for the end marker: the file's last bytes. */
#define TAIL_PEEK_BYTES (256u << 10)

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
	struct capture_counter *counters;
	char *counter_names;
	struct capture_status status;
};

static void say(char *why, size_t why_size, const char *format, ...)
	__attribute__((format(printf, 3, 4)));

static void say(char *why, size_t why_size, const char *format, ...)
{
	va_list args;

	if (!why || !why_size)
		return;
	va_start(args, format);
	vsnprintf(why, why_size, format, args);
	va_end(args);
}

static void describe_bytes(char *text, size_t size, const uint8_t *bytes, size_t count)
{
	size_t used = 0;

	text[0] = '\0';
	for (size_t i = 0; i < count && i < 8 && used + 4 < size; i++)
		used += (size_t)snprintf(text + used, size - used, "%s%02x", i ? " " : "",
					 bytes[i]);
}

/*
 * Copies the metadata entries out of the header, NUL-terminated: 0,
 * -EBADMSG if they do not fit in it, or -ENOMEM.
 */
static int parse_meta(struct capture_reader *r, const uint8_t *header, uint32_t fixed_size,
		      uint32_t header_size, uint32_t count)
{
	uint64_t pos = fixed_size;
	char *strings;

	/* Each entry takes at least 8 bytes: a bound before allocating. */
	if (count > (header_size - fixed_size) / 8)
		return -EBADMSG;
	r->meta = calloc(count ? count : 1, sizeof(*r->meta));
	r->meta_strings = malloc(header_size + 2 * (size_t)count + 1);
	if (!r->meta || !r->meta_strings)
		return -ENOMEM;
	strings = r->meta_strings;
	for (uint32_t i = 0; i < count; i++) {
		uint64_t key_length, value_length;

		if (header_size - pos < 8)
			return -EBADMSG;
		key_length = get_le32(header + pos);
		value_length = get_le32(header + pos + 4);
		pos += 8;
		if (key_length + value_length > header_size - pos)
			return -EBADMSG;
		r->meta[i].key = strings;
		memcpy(strings, header + pos, key_length);
		strings[key_length] = '\0';
		strings += key_length + 1;
		r->meta[i].value = strings;
		memcpy(strings, header + pos + key_length, value_length);
		strings[value_length] = '\0';
		strings += value_length + 1;
		pos += key_length + value_length;
	}
	r->header.meta = r->meta;
	r->header.meta_count = count;
	return 0;
}

const char *capture_header_get(const struct capture_header *header, const char *key)
{
	for (size_t i = 0; i < header->meta_count; i++) {
		if (!strcmp(header->meta[i].key, key))
			return header->meta[i].value;
	}
	return NULL;
}

static const char *header_string(const struct capture_header *header, const char *key)
{
	const char *value = capture_header_get(header, key);

	return value ? value : "";
}

/* Checks and parses the file header; says why not in why. */
static int read_file_header(struct capture_reader *r, char *why, size_t why_size)
{
	uint32_t header_size, fixed_size, chunk_size;
	uint8_t start[16], *header = NULL;
	uint16_t major, minor;
	char bytes[32];
	ssize_t got;
	int err = -EBADMSG;

	got = read_full(r->fd, start, sizeof(start));
	if (got < 0) {
		say(why, why_size, "cannot read the file: %s", strerror((int)-got));
		return (int)got;
	}
	if (got == 0) {
		say(why, why_size, "the file is empty: the recorder wrote nothing");
		return -EBADMSG;
	}
	if (memcmp(start, file_magic,
		   (size_t)got < sizeof(file_magic) ? (size_t)got : sizeof(file_magic))) {
		describe_bytes(bytes, sizeof(bytes), start, (size_t)got);
		say(why, why_size, "not an optrace capture: it starts with bytes %s", bytes);
		return -EBADMSG;
	}
	if ((size_t)got < sizeof(start)) {
		say(why, why_size,
		    "the file ends %zd bytes into its header: the recorder stopped before writing "
		    "it",
		    got);
		return -EBADMSG;
	}
	major = get_le16(start + 8);
	minor = get_le16(start + 10);
	if (major > CAPTURE_VERSION_MAJOR || major < CAPTURE_VERSION_MAJOR_OLDEST) {
		say(why, why_size,
		    "capture format %u.%u is %s than this optrace reads (%d.x to %d.x): %s", major,
		    minor, major > CAPTURE_VERSION_MAJOR ? "newer" : "older",
		    CAPTURE_VERSION_MAJOR_OLDEST, CAPTURE_VERSION_MAJOR,
		    major > CAPTURE_VERSION_MAJOR ? "read it with a newer optrace"
						  : "read it with an older optrace");
		return -EPROTONOSUPPORT;
	}
	header_size = get_le32(start + 12);
	if (header_size < FILE_HEADER_FIXED || header_size > FILE_HEADER_MAX || header_size % 8) {
		say(why, why_size, "the capture header is damaged: it claims a size of %" PRIu32,
		    header_size);
		return -EBADMSG;
	}
	header = malloc(header_size);
	if (!header) {
		say(why, why_size, "out of memory");
		return -ENOMEM;
	}
	memcpy(header, start, sizeof(start));
	got = read_full(r->fd, header + sizeof(start), header_size - sizeof(start));
	if (got < 0) {
		say(why, why_size, "cannot read the file: %s", strerror((int)-got));
		err = (int)got;
		goto cleanup;
	}
	if ((size_t)got < header_size - sizeof(start)) {
		say(why, why_size,
		    "the file ends %zu bytes into its header (of %" PRIu32
		    "): the recorder stopped before writing it",
		    (size_t)got + sizeof(start), header_size);
		goto cleanup;
	}
	if (file_header_crc(header, header_size) != get_le32(header + 16)) {
		say(why, why_size, "the capture header is damaged: it fails its CRC");
		goto cleanup;
	}
	fixed_size = get_le32(header + 20);
	chunk_size = get_le32(header + 40);
	if (fixed_size < FILE_HEADER_FIXED || fixed_size > header_size ||
	    chunk_size < CAPTURE_CHUNK_MIN || chunk_size > CAPTURE_CHUNK_MAX || chunk_size % 8) {
		say(why, why_size, "the capture header is malformed");
		goto cleanup;
	}
	err = parse_meta(r, header, fixed_size, header_size, get_le32(header + 44));
	if (err) {
		say(why, why_size, "%s",
		    err == -ENOMEM ? "out of memory"
				   : "the capture header's metadata is malformed");
		goto cleanup;
	}
	r->header.version_major = major;
	r->header.version_minor = minor;
	r->header.header_size = header_size;
	r->header.realtime_ns = get_le64(header + 24);
	r->header.monotonic_ns = get_le64(header + 32);
	r->header.chunk_size = chunk_size;
	r->header.optrace_version = header_string(&r->header, CAPTURE_KEY_VERSION);
	r->header.hostname = header_string(&r->header, CAPTURE_KEY_HOSTNAME);
	r->header.target = header_string(&r->header, CAPTURE_KEY_TARGET);
	r->offset = header_size;
	r->status.good_bytes = header_size;
	err = 0;
cleanup:
	free(header);
	return err;
}

/* What path is when it is no regular file, for a sentence. */
static void say_not_regular(char *why, size_t why_size, const char *path, mode_t mode)
{
	if (S_ISDIR(mode))
		say(why, why_size, "%s is a directory: give the capture file to read", path);
	else
		say(why, why_size,
		    "%s is not a regular file (%s): record to a file, then read that", path,
		    S_ISFIFO(mode)		     ? "a pipe"
		    : S_ISCHR(mode) || S_ISBLK(mode) ? "a device"
		    : S_ISSOCK(mode)		     ? "a socket"
						     : "a special file");
}

int capture_check_input(const char *path, char *why, size_t why_size)
{
	struct stat st;

	say(why, why_size, "%s", "");
	if (stat(path, &st) || S_ISREG(st.st_mode))
		return 0; /* opening it says what is wrong */
	say_not_regular(why, why_size, path, st.st_mode);
	return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
}

/*
 * Opens path for reading if it is a regular file: opened without blocking
 * first, as a pipe without a writer would block open() for ever (and a pipe
 * cannot be read twice, as report and export do).
 */
static int open_regular(const char *path, char *why, size_t why_size)
{
	struct stat st;
	int fd, err;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		say(why, why_size, "cannot open %s: %s", path, strerror(-err));
		return err;
	}
	if (fstat(fd, &st) || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
		err = -errno;
		say(why, why_size, "cannot read %s: %s", path, strerror(-err));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		err = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		say_not_regular(why, why_size, path, st.st_mode);
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return err;
}

void capture_reader_close(struct capture_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	free(r->meta);
	free(r->meta_strings);
	free(r->payload);
	free(r->counters);
	free(r->counter_names);
	free(r);
}

int capture_reader_open(struct capture_reader **reader, const char *path, char *why,
			size_t why_size)
{
	struct capture_reader *r;
	int err;

	*reader = NULL;
	say(why, why_size, "%s", "");
	r = calloc(1, sizeof(*r));
	if (!r) {
		say(why, why_size, "out of memory");
		return -ENOMEM;
	}
	r->fd = open_regular(path, why, why_size);
	if (r->fd < 0) {
		err = r->fd;
		goto fail;
	}
	posix_fadvise(r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	err = read_file_header(r, why, why_size);
	if (err)
		goto fail;
	*reader = r;
	return 0;
fail:
	capture_reader_close(r);
	return err;
}

const struct capture_header *capture_reader_header(const struct capture_reader *r)
{
	return &r->header;
}

const struct capture_status *capture_reader_status(const struct capture_reader *r)
{
	return &r->status;
}

static uint64_t file_size(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : (uint64_t)st.st_size;
}

/* "the records after chunk 56" or, before any whole chunk, "every record". */
static void lost_records(const struct capture_reader *r, char *text, size_t size)
{
	if (r->next_seq)
		snprintf(text, size, "the records after chunk %" PRIu64, r->next_seq - 1);
	else
		snprintf(text, size, "every record");
}

/* Ends reading: the status says how, in a sentence made of format. */
static void finish(struct capture_reader *r, enum capture_end end, const char *format, ...)
	__attribute__((format(printf, 3, 4)));

static void finish(struct capture_reader *r, enum capture_end end, const char *format, ...)
{
	struct capture_status *s = &r->status;
	va_list args;

	s->end = end;
	s->bad_chunk = r->next_seq;
	s->file_bytes = file_size(r->fd);
	r->records_left = 0;
	va_start(args, format);
	vsnprintf(s->message, sizeof(s->message), format, args);
	va_end(args);
}

static void finish_damaged(struct capture_reader *r, const char *what)
{
	char lost[64];

	lost_records(r, lost, sizeof(lost));
	finish(r, CAPTURE_END_CORRUPT,
	       "chunk %" PRIu64 " at offset %" PRIu64
	       " is damaged (%s): reading stopped there; %s are not read",
	       r->next_seq, r->offset, what, lost);
}

static void finish_cut(struct capture_reader *r, uint64_t into, const struct chunk_info *chunk)
{
	char lost[64];

	lost_records(r, lost, sizeof(lost));
	if (!chunk) {
		finish(r, CAPTURE_END_TRUNCATED,
		       "the file ends %" PRIu64 " bytes into the header of chunk %" PRIu64
		       ": %s are lost; no end marker: the recorder did not stop cleanly",
		       into, r->next_seq, lost);
	} else if (chunk->kind == CHUNK_END) {
		finish(r, CAPTURE_END_TRUNCATED,
		       "the file ends %" PRIu64 " bytes into the end marker (chunk %" PRIu64
		       "): every record is there, but not the recorder's totals",
		       into, r->next_seq);
	} else {
		finish(r, CAPTURE_END_TRUNCATED,
		       "the file ends %" PRIu64 " bytes into chunk %" PRIu64 " (of %" PRIu64
		       "): %s are lost; no end marker: the recorder did not stop cleanly",
		       into, r->next_seq, CHUNK_HEADER_SIZE + (uint64_t)chunk->payload_size, lost);
	}
}

static void finish_garbage(struct capture_reader *r, const uint8_t *bytes, size_t count)
{
	bool zeros = true;
	char lost[64], text[32];

	for (size_t i = 0; i < count; i++)
		zeros = zeros && !bytes[i];
	lost_records(r, lost, sizeof(lost));
	if (zeros) {
		finish(r, CAPTURE_END_GARBAGE,
		       "offset %" PRIu64 " holds zero bytes where chunk %" PRIu64
		       " should start (the system stopped before the data reached the disk?): "
		       "reading stopped there; %s are lost",
		       r->offset, r->next_seq, lost);
		return;
	}
	describe_bytes(text, sizeof(text), bytes, count);
	finish(r, CAPTURE_END_GARBAGE,
	       "offset %" PRIu64 " holds no chunk (bytes %s) where chunk %" PRIu64
	       " should start: reading stopped there; %s are not read",
	       r->offset, text, r->next_seq, lost);
}

static void finish_no_marker(struct capture_reader *r)
{
	if (!r->next_seq) {
		finish(r, CAPTURE_END_NO_MARKER,
		       "the file holds the header only, no chunk and no end marker: the recorder "
		       "did not stop cleanly and every record is lost");
		return;
	}
	finish(r, CAPTURE_END_NO_MARKER,
	       "the file ends after chunk %" PRIu64 " with no end marker: the recorder did not "
	       "stop cleanly; the records it had not written yet are lost",
	       r->next_seq - 1);
}

static int finish_io(struct capture_reader *r, int err)
{
	finish(r, CAPTURE_END_IO_ERROR, "reading failed at offset %" PRIu64 ": %s", r->offset,
	       strerror(-err));
	return err;
}

/* The records of a payload whose CRC is right: NULL, or what is wrong. */
static const char *check_records(const uint8_t *payload, uint32_t size, uint32_t count,
				 uint64_t *data_bytes)
{
	uint64_t pos = 0, n = 0, bytes = 0;

	while (pos < size) {
		uint64_t data_size;

		if (size - pos < CAPTURE_RECORD_OVERHEAD)
			return "a record header is cut";
		data_size = get_le32(payload + pos);
		if (CAPTURE_RECORD_OVERHEAD + align8(data_size) > size - pos)
			return "a record overruns the chunk";
		pos += CAPTURE_RECORD_OVERHEAD + align8(data_size);
		bytes += data_size;
		n++;
	}
	if (n != count)
		return "its record count is wrong";
	*data_bytes = bytes;
	return NULL;
}

/* The end marker into r->status.trailer: 0, -EBADMSG or -ENOMEM. */
static int parse_trailer(struct capture_reader *r, const uint8_t *p, uint32_t size)
{
	struct capture_trailer *t = &r->status.trailer;
	uint32_t fixed_size, count;
	uint64_t pos;
	char *names;

	if (size < TRAILER_FIXED)
		return -EBADMSG;
	fixed_size = get_le32(p);
	count = get_le32(p + 4);
	if (fixed_size < TRAILER_FIXED || fixed_size > size || count > (size - fixed_size) / 12)
		return -EBADMSG;
	t->records = get_le64(p + 8);
	t->chunks = get_le64(p + 16);
	t->record_bytes = get_le64(p + 24);
	t->records_lost = get_le64(p + 32);
	t->write_error = (int32_t)get_le32(p + 40);
	t->realtime_ns = get_le64(p + 48);
	t->monotonic_ns = get_le64(p + 56);
	r->counters = calloc(count ? count : 1, sizeof(*r->counters));
	r->counter_names = malloc((size_t)size + count + 1);
	if (!r->counters || !r->counter_names)
		return -ENOMEM;
	names = r->counter_names;
	pos = fixed_size;
	for (uint32_t i = 0; i < count; i++) {
		uint64_t length;

		if (size - pos < 12)
			return -EBADMSG;
		length = get_le32(p + pos + 8);
		if (length > size - pos - 12)
			return -EBADMSG;
		r->counters[i].value = get_le64(p + pos);
		r->counters[i].name = names;
		memcpy(names, p + pos + 12, length);
		names[length] = '\0';
		names += length + 1;
		pos += 12 + length;
	}
	t->counters = r->counters;
	t->counter_count = count;
	return 0;
}

static void finish_clean(struct capture_reader *r)
{
	struct capture_status *s = &r->status;
	const struct capture_trailer *t = &s->trailer;
	char lost[160] = "", trailing[80] = "";

	s->has_trailer = true;
	s->totals_match = t->records == s->records && t->chunks == s->chunks &&
			  t->record_bytes == s->record_bytes;
	if (!s->totals_match) {
		finish(r, CAPTURE_END_CORRUPT,
		       "the end marker counts %" PRIu64 " records in %" PRIu64
		       " chunks, but the file holds %" PRIu64 " in %" PRIu64 ": chunks are missing "
		       "or were added",
		       t->records, t->chunks, s->records, s->chunks);
		return;
	}
	s->file_bytes = file_size(r->fd);
	if (s->file_bytes > r->offset)
		s->trailing_bytes = s->file_bytes - r->offset;
	if (t->records_lost)
		snprintf(lost, sizeof(lost),
			 "; the recorder could not write %" PRIu64 " records (%s)", t->records_lost,
			 t->write_error ? strerror(t->write_error) : "records refused");
	if (s->trailing_bytes)
		snprintf(trailing, sizeof(trailing),
			 "; %" PRIu64 " bytes after the end marker ignored", s->trailing_bytes);
	finish(r, CAPTURE_END_CLEAN, "clean end: %" PRIu64 " records in %" PRIu64 " chunks%s%s",
	       s->records, s->chunks, lost, trailing);
}

static int ensure_payload(struct capture_reader *r, uint32_t size)
{
	uint8_t *payload;

	if (size <= r->payload_capacity)
		return 0;
	payload = realloc(r->payload, size);
	if (!payload)
		return -ENOMEM;
	r->payload = payload;
	r->payload_capacity = size;
	return 0;
}

/* Reads a whole chunk's payload and checks its CRC: 1, or 0 when reading has ended. */
static int read_payload(struct capture_reader *r, struct chunk_info *c, uint32_t stored_crc)
{
	uint32_t computed;
	ssize_t got;
	char what[96];
	int err;

	err = ensure_payload(r, c->payload_size);
	if (err)
		return finish_io(r, err);
	got = read_full(r->fd, r->payload, c->payload_size);
	if (got < 0)
		return finish_io(r, (int)got);
	if ((uint64_t)got < c->payload_size) {
		c->cut = true;
		finish_cut(r, CHUNK_HEADER_SIZE + (uint64_t)got, c);
		return 0;
	}
	computed = crc(r->payload, c->payload_size);
	if (computed != stored_crc) {
		snprintf(what, sizeof(what),
			 "CRC mismatch: stored 0x%08" PRIx32 ", computed 0x%08" PRIx32, stored_crc,
			 computed);
		finish_damaged(r, what);
		return 0;
	}
	c->crc_ok = true;
	return 1;
}

/* Accepts a checked chunk of records: they are returned from the next call on. */
static int accept_records(struct capture_reader *r)
{
	struct chunk_info *c = &r->chunk;
	uint64_t data_bytes = 0;
	const char *wrong;

	wrong = check_records(r->payload, c->payload_size, c->records, &data_bytes);
	if (wrong) {
		c->crc_ok = false;
		finish_damaged(r, wrong);
		return 0;
	}
	r->status.records += c->records;
	r->status.record_bytes += data_bytes;
	r->status.chunks++;
	r->record_pos = 0;
	r->records_left = c->records;
	return 1;
}

/*
 * Reads the next chunk into r->chunk. 1: a chunk was read (its records, if
 * any, are next); 0: reading has ended, r->status says how; or a negative
 * errno.
 */
static int read_chunk(struct capture_reader *r)
{
	struct chunk_info *c = &r->chunk;
	uint8_t h[CHUNK_HEADER_SIZE];
	ssize_t got;
	int ok;

	memset(c, 0, sizeof(*c));
	c->offset = r->offset;
	c->seq = r->next_seq;
	got = read_full(r->fd, h, sizeof(h));
	if (got < 0)
		return finish_io(r, (int)got);
	if (got == 0) {
		finish_no_marker(r);
		return 0;
	}
	if (memcmp(h, chunk_magic, (size_t)got < sizeof(chunk_magic) ? (size_t)got : 4)) {
		finish_garbage(r, h, (size_t)got);
		return 0;
	}
	if ((size_t)got < sizeof(h)) {
		/* Unchecked, but the kind tells whether records were lost. */
		if (got >= 6 && get_le16(h + 4) == CHUNK_END)
			c->kind = CHUNK_END;
		finish_cut(r, (uint64_t)got, c->kind ? c : NULL);
		c->kind = 0;
		return 0;
	}
	if (crc(h, 28) != get_le32(h + 28)) {
		finish_damaged(r, "its header fails its CRC");
		return 0;
	}
	c->kind = get_le16(h + 4);
	c->payload_size = get_le32(h + 16);
	c->records = get_le32(h + 20);
	if (get_le64(h + 8) != r->next_seq) {
		char what[80];

		snprintf(what, sizeof(what), "it is numbered %" PRIu64, get_le64(h + 8));
		finish_damaged(r, what);
		return 0;
	}
	if (c->payload_size > CAPTURE_CHUNK_MAX ||
	    (c->kind == CHUNK_RECORDS && c->payload_size > r->header.chunk_size)) {
		finish_damaged(r, "it claims more bytes than a chunk holds");
		return 0;
	}
	ok = read_payload(r, c, get_le32(h + 24));
	if (ok <= 0)
		return ok;
	if (c->kind == CHUNK_RECORDS) {
		ok = accept_records(r);
		if (ok <= 0)
			return ok;
	} else if (c->kind == CHUNK_END) {
		int err = parse_trailer(r, r->payload, c->payload_size);

		if (err == -ENOMEM)
			return finish_io(r, err);
		if (err) {
			c->crc_ok = false;
			finish_damaged(r, "its end marker is malformed");
			return 0;
		}
	}
	r->offset += CHUNK_HEADER_SIZE + (uint64_t)c->payload_size;
	r->next_seq++;
	if (c->kind == CHUNK_END)
		finish_clean(r);
	else
		r->status.good_bytes = r->offset;
	return 1;
}

int capture_next(struct capture_reader *r, struct capture_record *record)
{
	const uint8_t *p;
	int err;

	while (!r->records_left) {
		if (r->status.end != CAPTURE_END_NONE)
			return 0;
		err = read_chunk(r);
		if (err <= 0)
			return err;
	}
	p = r->payload + r->record_pos;
	record->size = get_le32(p);
	record->type = get_le16(p + 4);
	record->data = p + CAPTURE_RECORD_OVERHEAD;
	record->chunk = r->chunk.seq;
	r->record_pos += CAPTURE_RECORD_OVERHEAD + align8(record->size);
	r->records_left--;
	return 1;
}

/* The end marker's chunk, if it ends the file: its payload CRC checked. */
static int read_tail_trailer(struct capture_reader *r, const uint8_t *tail, size_t size)
{
	for (size_t at = size >= CHUNK_HEADER_SIZE ? size - CHUNK_HEADER_SIZE + 1 : 0; at-- > 0;) {
		const uint8_t *h = tail + at;
		uint32_t payload_size;

		if (memcmp(h, chunk_magic, sizeof(chunk_magic)) || crc(h, 28) != get_le32(h + 28) ||
		    get_le16(h + 4) != CHUNK_END)
			continue;
		payload_size = get_le32(h + 16);
		if (at + CHUNK_HEADER_SIZE + payload_size != size ||
		    crc(h + CHUNK_HEADER_SIZE, payload_size) != get_le32(h + 24))
			continue;
		return parse_trailer(r, h + CHUNK_HEADER_SIZE, payload_size);
	}
	return -ENOENT;
}

int capture_peek_counter(const char *path, const char *name, uint64_t *value)
{
	struct capture_reader r = { .fd = -1 };
	uint64_t size, from;
	uint8_t *tail = NULL;
	ssize_t got;
	int err = -ENOENT;

	r.fd = open_regular(path, NULL, 0);
	if (r.fd < 0)
		return r.fd;
	size = file_size(r.fd);
	from = size > TAIL_PEEK_BYTES ? size - TAIL_PEEK_BYTES : 0;
	tail = malloc(size - from + 1);
	if (!tail) {
		err = -ENOMEM;
		goto cleanup;
	}
	got = pread(r.fd, tail, size - from, (off_t)from);
	if (got != (ssize_t)(size - from))
		goto cleanup;
	err = read_tail_trailer(&r, tail, (size_t)got);
	if (err)
		goto cleanup;
	err = -ENOENT;
	for (size_t i = 0; i < r.status.trailer.counter_count; i++) {
		if (!strcmp(r.counters[i].name, name)) {
			*value = r.counters[i].value;
			err = 0;
			break;
		}
	}
cleanup:
	free(tail);
	free(r.counters);
	free(r.counter_names);
	close(r.fd);
	return err;
}

uint64_t capture_wall_ns(const struct capture_header *header, uint64_t monotonic_ns)
{
	return header->realtime_ns + (monotonic_ns - header->monotonic_ns);
}

const char *capture_end_name(enum capture_end end)
{
	switch (end) {
	case CAPTURE_END_NONE:
		return "not at the end";
	case CAPTURE_END_CLEAN:
		return "clean";
	case CAPTURE_END_NO_MARKER:
		return "no end marker";
	case CAPTURE_END_TRUNCATED:
		return "truncated";
	case CAPTURE_END_CORRUPT:
		return "corrupt";
	case CAPTURE_END_GARBAGE:
		return "garbage";
	case CAPTURE_END_IO_ERROR:
		return "I/O error";
	}
	return "unknown";
}

/* ---- dump ------------------------------------------------------------------- */

/* Untrusted text, quoted, with anything unprintable as \xNN. */
static void print_quoted(FILE *out, const char *text)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			fprintf(out, "\\x%02x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

static void print_wall(FILE *out, uint64_t realtime_ns)
{
	time_t seconds = (time_t)(realtime_ns / 1000000000u);
	char text[32] = "?";
	struct tm tm;

	if (gmtime_r(&seconds, &tm))
		strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(out, "%s.%09" PRIu64 "Z", text, realtime_ns % 1000000000u);
}

static void dump_header(FILE *out, const char *path, const struct capture_header *h)
{
	fprintf(out, "capture ");
	print_quoted(out, path);
	fprintf(out,
		": format %u.%u, header %" PRIu32 " bytes, chunks of up to %" PRIu32
		" record bytes\n",
		h->version_major, h->version_minor, h->header_size, h->chunk_size);
	fprintf(out, "  started ");
	print_wall(out, h->realtime_ns);
	fprintf(out, " (CLOCK_REALTIME %" PRIu64 " ns = CLOCK_MONOTONIC %" PRIu64 " ns)\n",
		h->realtime_ns, h->monotonic_ns);
	for (size_t i = 0; i < h->meta_count; i++) {
		fprintf(out, "  ");
		print_quoted(out, h->meta[i].key);
		fprintf(out, " = ");
		print_quoted(out, h->meta[i].value);
		fputc('\n', out);
	}
}

static void dump_record(FILE *out, uint64_t index, const struct capture_record *record)
{
	const uint8_t *data = record->data;
	uint32_t shown = record->size < 16 ? record->size : 16;

	fprintf(out, "    record %" PRIu64 ": type %u, %" PRIu32 " bytes:", index, record->type,
		record->size);
	for (uint32_t i = 0; i < shown; i++)
		fprintf(out, " %02x", data[i]);
	fprintf(out, "%s  |", record->size > shown ? " ..." : "");
	for (uint32_t i = 0; i < shown; i++)
		fputc(data[i] >= 0x20 && data[i] < 0x7f ? data[i] : '.', out);
	fprintf(out, "|\n");
}

static void dump_trailer(FILE *out, const struct capture_header *h, const struct capture_trailer *t)
{
	fprintf(out,
		"    records %" PRIu64 ", chunks %" PRIu64 ", record bytes %" PRIu64
		", lost %" PRIu64 ", write error %s\n",
		t->records, t->chunks, t->record_bytes, t->records_lost,
		t->write_error ? strerror(t->write_error) : "none");
	fprintf(out, "    stopped ");
	print_wall(out, t->realtime_ns);
	fprintf(out, ", %.3f s after the start\n",
		(double)(int64_t)(t->monotonic_ns - h->monotonic_ns) / 1e9);
	for (size_t i = 0; i < t->counter_count; i++) {
		fprintf(out, "    counter ");
		print_quoted(out, t->counters[i].name);
		fprintf(out, " = %" PRIu64 "\n", t->counters[i].value);
	}
}

static const char *kind_name(uint16_t kind)
{
	return kind == CHUNK_RECORDS ? "records"
	       : kind == CHUNK_END   ? "end marker"
				     : "unknown kind";
}

int capture_dump(FILE *out, const char *path, bool records)
{
	struct capture_reader *r;
	struct capture_record record;
	uint64_t index = 0;
	char why[256];
	int err;

	err = capture_reader_open(&r, path, why, sizeof(why));
	if (err) {
		fprintf(out, "capture ");
		print_quoted(out, path);
		fprintf(out, ": %s\n", why);
		return err;
	}
	dump_header(out, path, &r->header);
	for (;;) {
		const struct chunk_info *c = &r->chunk;

		err = read_chunk(r);
		/* No kind: the chunk's header itself is cut, damaged or not there. */
		if (err < 0 || (err == 0 && !c->kind))
			break;
		fprintf(out,
			"  chunk %" PRIu64 " at offset %" PRIu64 ": %s, %" PRIu64
			" bytes (payload %" PRIu32 "), %" PRIu32 " records, %s\n",
			c->seq, c->offset, kind_name(c->kind),
			CHUNK_HEADER_SIZE + (uint64_t)c->payload_size, c->payload_size, c->records,
			c->cut	    ? "cut"
			: c->crc_ok ? "crc ok"
				    : "crc BAD");
		if (err == 0)
			break;
		if (c->kind == CHUNK_END)
			dump_trailer(out, &r->header, &r->status.trailer);
		while (r->records_left && capture_next(r, &record) > 0) {
			if (records)
				dump_record(out, index, &record);
			index++;
		}
		if (r->status.end != CAPTURE_END_NONE)
			break;
	}
	fprintf(out, "status: %s: %s\n", capture_end_name(r->status.end), r->status.message);
	err = err < 0 ? err : r->status.end == CAPTURE_END_CLEAN ? 0 : 1;
	capture_reader_close(r);
	return err;
}
