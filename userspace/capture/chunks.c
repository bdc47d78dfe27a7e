// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Reading a capture chunk by chunk, the salvage of a cut file: each chunk
 * checked against its CRCs and its records against its header; reading
 * stops at the first chunk that is cut, damaged or not there, and the
 * status says where and what is lost. Also the end marker read from the
 * file's tail alone (capture_peek_counter).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/capture.h"
#include "capture/format.h"

/* read_chunk(): the chunk at the offset is damaged; skip_damage() looks further. */
#define CHUNK_DAMAGED 3

/* Where capture_peek_counter() looks for the end marker: the file's last bytes. */
#define TAIL_PEEK_BYTES (256u << 10)

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
		snprintf(text, size, "all its records");
}

/* Ends reading: the status says how, in a sentence made of format. */
static void finish(struct capture_reader *r, enum capture_end end, const char *format, ...)
	__attribute__((format(printf, 3, 4)));

static void finish(struct capture_reader *r, enum capture_end end, const char *format, ...)
{
	struct capture_status *s = &r->status;
	char said[sizeof(s->message)];
	va_list args;

	s->end = end;
	s->bad_chunk = r->next_seq;
	s->file_bytes = file_size(r->fd);
	r->records_left = 0;
	va_start(args, format);
	vsnprintf(said, sizeof(said), format, args);
	va_end(args);
	if (!s->damaged_chunks) {
		snprintf(s->message, sizeof(s->message), "%s", said);
		return;
	}
	/* Damage skipped on the way is worse than a clean or a cut end, and said first. */
	if (end < CAPTURE_END_CORRUPT)
		s->end = CAPTURE_END_CORRUPT;
	snprintf(s->message, sizeof(s->message), "%.250s; then %.250s", r->damage, said);
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
	capture_describe_bytes(text, sizeof(text), bytes, count);
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

/* The sentence the message starts with once damage was skipped. */
static void describe_damage(struct capture_reader *r)
{
	const struct capture_status *s = &r->status;

	snprintf(r->damage, sizeof(r->damage),
		 "%.150s: %" PRIu64 " damaged chunk%s skipped, %s%" PRIu64 " records lost; reading "
		 "went on at the next whole chunk",
		 r->first_damage, s->damaged_chunks, s->damaged_chunks == 1 ? "" : "s",
		 s->damaged_records_known ? "" : "at least ", s->damaged_records);
}

static void finish_clean(struct capture_reader *r)
{
	struct capture_status *s = &r->status;
	const struct capture_trailer *t = &s->trailer;
	char lost[160] = "", trailing[80] = "";

	s->has_trailer = true;
	s->totals_match = t->records == s->records && t->chunks == s->chunks &&
			  t->record_bytes == s->record_bytes;
	if (s->damaged_chunks && t->records >= s->records) {
		/* The end marker counts what the skipped chunks held. */
		s->damaged_records = t->records - s->records;
		s->damaged_records_known = true;
		describe_damage(r);
	} else if (!s->totals_match) {
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

/*
 * Counts chunks and records lost to damage; the first damage met is said in
 * the sentence format makes, which the status's message starts with.
 */
static void add_damage(struct capture_reader *r, uint64_t chunks, uint64_t records,
		       const char *format, ...) __attribute__((format(printf, 4, 5)));

static void add_damage(struct capture_reader *r, uint64_t chunks, uint64_t records,
		       const char *format, ...)
{
	struct capture_status *s = &r->status;
	va_list args;

	if (!s->damaged_chunks) {
		va_start(args, format);
		vsnprintf(r->first_damage, sizeof(r->first_damage), format, args);
		va_end(args);
	}
	s->damaged_chunks += chunks;
	s->damaged_records += records;
	describe_damage(r);
}

/*
 * The chunk at r->offset is whole but numbered seq, past the one expected:
 * the chunks between are missing (cut out of the file), counted as damaged.
 */
static void note_missing(struct capture_reader *r, uint64_t seq)
{
	if (seq - r->next_seq == 1)
		add_damage(r, 1, 0, "chunk %" PRIu64 " is missing before offset %" PRIu64,
			   r->next_seq, r->offset);
	else
		add_damage(r, seq - r->next_seq, 0,
			   "chunks %" PRIu64 " to %" PRIu64 " are missing before offset %" PRIu64,
			   r->next_seq, seq - 1, r->offset);
	r->next_seq = seq;
}

/* The chunk at r->offset is damaged: what, kept for the skip or the end. */
static int damaged(struct capture_reader *r, const char *what)
{
	snprintf(r->damage_what, sizeof(r->damage_what), "%s", what);
	r->garbage_count = 0;
	return CHUNK_DAMAGED;
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
	got = capture_read_full(r->fd, r->payload, c->payload_size);
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
		return damaged(r, what);
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

	if (r->header.version_major >= 2) {
		/*
		 * Decoded as they are read (capture_next()): the CRC was right,
		 * so only a writer's bug makes a record undecodable, and then the
		 * chunk's rest is counted as damaged there.
		 */
		record_codec_reset(&r->codec);
		wrong = NULL;
	} else {
		wrong = check_records(r->payload, c->payload_size, c->records, &data_bytes);
	}
	if (wrong) {
		c->crc_ok = false;
		return damaged(r, wrong);
	}
	r->status.records += c->records;
	r->status.record_bytes += data_bytes;
	r->status.chunks++;
	r->record_pos = 0;
	r->records_left = c->records;
	return 1;
}

/*
 * Reads the chunk at r->offset into r->chunk. 1: a chunk was read (its
 * records, if any, are next); CHUNK_DAMAGED: it is damaged (r->damage_what);
 * 0: reading has ended, r->status says how; or a negative errno.
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
	got = capture_read_full(r->fd, h, sizeof(h));
	if (got < 0)
		return finish_io(r, (int)got);
	if (got == 0) {
		finish_no_marker(r);
		return 0;
	}
	if (memcmp(h, chunk_magic, (size_t)got < sizeof(chunk_magic) ? (size_t)got : 4)) {
		memcpy(r->garbage, h, (size_t)got);
		r->garbage_count = (size_t)got;
		return CHUNK_DAMAGED;
	}
	if ((size_t)got < sizeof(h)) {
		/* Unchecked, but the kind tells whether records were lost. */
		if (got >= 6 && get_le16(h + 4) == CHUNK_END)
			c->kind = CHUNK_END;
		finish_cut(r, (uint64_t)got, c->kind ? c : NULL);
		c->kind = 0;
		return 0;
	}
	if (crc(h, 28) != get_le32(h + 28))
		return damaged(r, "its header fails its CRC");
	c->kind = get_le16(h + 4);
	c->payload_size = get_le32(h + 16);
	c->records = get_le32(h + 20);
	if (get_le64(h + 8) > r->next_seq) {
		/* A whole chunk numbered later: those between are missing, this one is read. */
		note_missing(r, get_le64(h + 8));
		c->seq = r->next_seq;
	} else if (get_le64(h + 8) != r->next_seq) {
		char what[80];

		snprintf(what, sizeof(what), "it is numbered %" PRIu64, get_le64(h + 8));
		c->kind = 0; /* not the chunk expected: nothing is known of it */
		return damaged(r, what);
	}
	if (c->payload_size > CAPTURE_CHUNK_MAX ||
	    (c->kind == CHUNK_RECORDS && c->payload_size > r->header.chunk_size)) {
		c->kind = 0;
		return damaged(r, "it claims more bytes than a chunk holds");
	}
	ok = read_payload(r, c, get_le32(h + 24));
	if (ok != 1)
		return ok;
	if (c->kind == CHUNK_RECORDS) {
		ok = accept_records(r);
		if (ok != 1)
			return ok;
	} else if (c->kind == CHUNK_END) {
		int err = parse_trailer(r, r->payload, c->payload_size);

		if (err == -ENOMEM)
			return finish_io(r, err);
		if (err) {
			c->crc_ok = false;
			return damaged(r, "its end marker is malformed");
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

/* Whether a whole chunk's header numbered from min_seq on starts at offset: its number. */
static bool chunk_header_at(const uint8_t *h, const struct capture_reader *r, uint64_t min_seq,
			    uint64_t *seq)
{
	uint16_t kind;
	uint32_t payload_size;

	if (memcmp(h, chunk_magic, sizeof(chunk_magic)) || crc(h, 28) != get_le32(h + 28))
		return false;
	kind = get_le16(h + 4);
	payload_size = get_le32(h + 16);
	*seq = get_le64(h + 8);
	return *seq >= min_seq && payload_size <= CAPTURE_CHUNK_MAX &&
	       !(kind == CHUNK_RECORDS && payload_size > r->header.chunk_size);
}

/*
 * The next whole chunk's header after the damaged one at r->offset: its
 * offset, or 0. Where the damaged chunk's header was whole, the next one
 * starts right after it; else every offset is looked at, a megabyte at a
 * time.
 */
static uint64_t find_next_chunk(struct capture_reader *r, uint64_t min_seq, uint64_t *seq)
{
	const struct chunk_info *c = &r->chunk;
	uint64_t size = file_size(r->fd), from = r->offset + 1;
	uint8_t h[CHUNK_HEADER_SIZE];
	const size_t block = 1u << 20;
	uint8_t *buffer;
	uint64_t found = 0;

	if (c->kind) {
		uint64_t next = r->offset + CHUNK_HEADER_SIZE + (uint64_t)c->payload_size;

		if (pread(r->fd, h, sizeof(h), (off_t)next) == (ssize_t)sizeof(h) &&
		    chunk_header_at(h, r, min_seq, seq))
			return next;
	}
	buffer = malloc(block + CHUNK_HEADER_SIZE);
	if (!buffer)
		return 0;
	while (!found && from + CHUNK_HEADER_SIZE <= size) {
		ssize_t got = pread(r->fd, buffer, block + CHUNK_HEADER_SIZE - 1, (off_t)from);

		if (got < (ssize_t)CHUNK_HEADER_SIZE)
			break;
		for (size_t at = 0; at + CHUNK_HEADER_SIZE <= (size_t)got; at++) {
			const uint8_t *p = memchr(buffer + at, chunk_magic[0],
						  (size_t)got - CHUNK_HEADER_SIZE + 1 - at);

			if (!p)
				break;
			at = (size_t)(p - buffer);
			if (chunk_header_at(p, r, min_seq, seq)) {
				found = from + at;
				break;
			}
		}
		from += block;
	}
	free(buffer);
	return found;
}

/* Skips the damaged chunk at r->offset to the next whole one: false if there is none. */
static bool skip_damage(struct capture_reader *r)
{
	const struct chunk_info *c = &r->chunk;
	uint64_t seq = 0, offset, chunks, records;
	/* A chunk with a whole header is the one expected: the next is numbered after it. */
	uint64_t min_seq = r->next_seq + (c->kind ? 1 : 0);

	offset = find_next_chunk(r, min_seq, &seq);
	if (!offset || lseek(r->fd, (off_t)offset, SEEK_SET) < 0)
		return false;
	chunks = seq > r->next_seq ? seq - r->next_seq : 1;
	records = c->kind == CHUNK_RECORDS ? c->records : 0;
	if (r->garbage_count)
		add_damage(r, chunks, records,
			   "offset %" PRIu64 " holds no chunk where chunk %" PRIu64 " should start",
			   r->offset, r->next_seq);
	else
		add_damage(r, chunks, records,
			   "chunk %" PRIu64 " at offset %" PRIu64 " is damaged (%.80s)",
			   r->next_seq, r->offset, r->damage_what);
	r->records_left = 0;
	r->offset = offset;
	r->next_seq = seq;
	return true;
}

int capture_read_chunk(struct capture_reader *r)
{
	int ok = read_chunk(r);

	if (ok != CHUNK_DAMAGED)
		return ok;
	if (skip_damage(r))
		return CHUNK_SKIPPED;
	if (r->garbage_count)
		finish_garbage(r, r->garbage, r->garbage_count);
	else
		finish_damaged(r, r->damage_what);
	return 0;
}

/*
 * A format-2 record of the chunk being read does not decode: the chunk's
 * records from it on are lost, counted as a damaged chunk's.
 */
static void lose_chunk_rest(struct capture_reader *r, const char *why)
{
	uint64_t lost = (uint64_t)r->records_left + 1;

	r->status.records -= lost;
	r->records_left = 0;
	add_damage(r, 1, lost, "chunk %" PRIu64 " at offset %" PRIu64 " is damaged (%.80s)",
		   r->chunk.seq, r->chunk.offset, why);
}

int capture_next(struct capture_reader *r, struct capture_record *record)
{
	const uint8_t *p;
	int err;

	for (;;) {
		struct decoded_record decoded;
		const char *why;

		while (!r->records_left) {
			if (r->status.end != CAPTURE_END_NONE)
				return 0;
			err = capture_read_chunk(r);
			if (err <= 0)
				return err;
		}
		record->chunk = r->chunk.seq;
		if (r->header.version_major < 2)
			break;
		err = record_decode(&r->codec, r->payload, r->chunk.payload_size, &r->record_pos,
				    &r->decoded, &decoded, &why);
		if (err < 0)
			return err;
		if (err == 0) {
			lose_chunk_rest(r, why);
			continue;
		}
		r->records_left--;
		r->status.record_bytes += decoded.size;
		record->type = decoded.type;
		record->size = decoded.size;
		record->data = decoded.data;
		return 1;
	}
	r->records_left--;
	p = r->payload + r->record_pos;
	record->size = get_le32(p);
	record->type = get_le16(p + 4);
	record->data = p + CAPTURE_RECORD_OVERHEAD;
	r->record_pos += CAPTURE_RECORD_OVERHEAD + align8(record->size);
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

	r.fd = capture_open_regular(path, NULL, 0);
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
