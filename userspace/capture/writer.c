// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Writing a capture: the file header with the clock pair, records packed
 * into chunks that are each written whole in one write(), and the end
 * marker with the totals. The layout is in format.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "capture/capture.h"
#include "capture/format.h"
#include "capture/records.h"

const char *capture_counter_name(enum capture_counter_id id)
{
	static const char *const names[CAPTURE_COUNTER__COUNT] = {
		[CAPTURE_LOST_RINGBUF_FULL] = "lost.ringbuf_full",
		[CAPTURE_LOST_STRINGS] = "lost.strings",
		[CAPTURE_STRINGS_UNREADABLE] = "strings.unreadable",
		[CAPTURE_STRINGS_TRUNCATED] = "strings.truncated",
		[CAPTURE_LOST_GPU_UNREADABLE] = "lost.gpu_unreadable",
		[CAPTURE_GPU_RECORDS] = "records.gpu",
		[CAPTURE_LOST_BATCH_MALFORMED] = "lost.batch_malformed",
		[CAPTURE_LOST_BATCH_MISSING] = "lost.batch_missing",
		[CAPTURE_EVENTS_LATE] = "events.late",
		[CAPTURE_EVENTS_DUPLICATE] = "events.duplicate",
		[CAPTURE_LOST_GPU_RINGBUF_FULL] = "lost.gpu_ringbuf_full",
		[CAPTURE_GPU_LAUNCHES] = "records.gpu_launches",
	};

	return id < CAPTURE_COUNTER__COUNT ? names[id] : "unknown";
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

struct capture_writer {
	int fd;
	uint8_t *chunk;		/* CHUNK_HEADER_SIZE bytes of header space, then the payload */
	uint32_t chunk_size;	/* payload capacity */
	uint32_t used;		/* payload bytes filled */
	uint32_t pending;	/* records in the pending chunk */
	uint64_t pending_bytes; /* their data bytes */
	uint64_t next_seq;
	bool tail_unknown;	   /* a failed write could not be undone: append nothing */
	uint16_t major;		   /* the format written: 2, or 1 as older optraces read */
	struct record_codec codec; /* format 2: the pending chunk's threads and histories */
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
	put_le16(b.data + 8, w->major);
	put_le16(b.data + 10, 0);
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
	       chunk_size <= CAPTURE_CHUNK_MAX && chunk_size % 8 == 0 &&
	       (!opts->format_major || (opts->format_major >= CAPTURE_VERSION_MAJOR_OLDEST &&
					opts->format_major <= CAPTURE_VERSION_MAJOR));
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
	w->major = opts->format_major ? opts->format_major : CAPTURE_VERSION_MAJOR;
	record_codec_init(&w->codec, true);
	err = write_file_header(w, opts);
	if (err)
		goto fail;
	*writer = w;
	return 0;
fail:
	record_codec_free(&w->codec);
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
	record_codec_reset(&w->codec); /* each chunk decodes alone */
	return err;
}

/* Format 1: the record's bytes behind an 8-byte header, padded to 8. */
static void append_v1(struct capture_writer *w, uint16_t type, const void *data, uint32_t size,
		      uint32_t space)
{
	uint8_t *p = w->chunk + CHUNK_HEADER_SIZE + w->used;

	put_le32(p, size);
	put_le16(p + 4, type);
	put_le16(p + 6, 0);
	if (size)
		memcpy(p + CAPTURE_RECORD_OVERHEAD, data, size);
	memset(p + CAPTURE_RECORD_OVERHEAD + size, 0, space - CAPTURE_RECORD_OVERHEAD - size);
	w->used += space;
}

/*
 * Format 2: encoded (records.c) into the pending chunk, which has room for
 * the most it can take; a record only a raw one fits goes raw.
 */
static int append_v2(struct capture_writer *w, uint16_t type, const void *data, uint32_t size,
		     bool raw_only)
{
	static const uint8_t none[1];
	int length = record_encode(&w->codec, w->chunk + CHUNK_HEADER_SIZE + w->used, type,
				   size ? data : none, size, raw_only);

	if (length < 0) {
		/* The codec's state may be ahead of the chunk: end the chunk there. */
		capture_flush(w);
		record_codec_reset(&w->codec);
		return length;
	}
	w->used += (uint32_t)length;
	return 0;
}

int capture_write(struct capture_writer *w, uint16_t type, const void *data, uint32_t size)
{
	uint32_t space;
	bool raw_only = false;
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
	if (w->major == 1)
		space = CAPTURE_RECORD_OVERHEAD + (uint32_t)align8(size);
	else
		space = size + RECORD_CODEC_SLACK;
	if (space > w->chunk_size - w->used) {
		err = capture_flush(w);
		if (err) {
			w->stats.records_lost++;
			return err;
		}
		/* RECORD_CODEC_RAW_SLACK is CAPTURE_RECORD_OVERHEAD: it fits raw. */
		raw_only = space > w->chunk_size;
	}
	if (w->major == 1) {
		append_v1(w, type, data, size, space);
	} else {
		err = append_v2(w, type, data, size, raw_only);
		if (err) {
			w->stats.records_lost++;
			return err;
		}
	}
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
	record_codec_free(&w->codec);
	free(w->chunk);
	free(w);
	return err;
}
