/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The capture file of `optrace record`, read back by `optrace report` and
 * `optrace export`: a versioned header, then records (typed byte strings)
 * packed into chunks that are written whole, each with a CRC, then an end
 * marker with totals. A recorder killed at any moment leaves a file that
 * reads up to its last whole chunk, and the reader says what was cut and
 * why. The layout, byte by byte, is in capture/format.h and in
 * docs/capture.md.
 *
 * Every function returns 0 (or a count) or a negative errno. A writer or a
 * reader is used by one thread at a time.
 */
#ifndef OPTRACE_CAPTURE_CAPTURE_H
#define OPTRACE_CAPTURE_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The format this code writes by default; it reads every 1.x and 2.x. */
#define CAPTURE_VERSION_MAJOR 2
#define CAPTURE_VERSION_MINOR 0

/* Record payload capacity of a chunk: the default and the bounds allowed. */
#define CAPTURE_CHUNK_DEFAULT (1u << 20)
#define CAPTURE_CHUNK_MIN 256u
#define CAPTURE_CHUNK_MAX (64u << 20)
/*
 * The most a record of size bytes may be: chunk_size less this. (In format
 * 1 a record costs 8 header bytes plus its size rounded up to 8; format 2
 * encodes it in fewer.)
 */
#define CAPTURE_RECORD_OVERHEAD 8u
/* Record types from here up belong to the format itself. */
#define CAPTURE_TYPE_RESERVED 0xff00u

/* Metadata keys the writer fills in itself. */
#define CAPTURE_KEY_VERSION "optrace.version"
#define CAPTURE_KEY_HOSTNAME "host.name"
#define CAPTURE_KEY_KERNEL "host.kernel"
#define CAPTURE_KEY_BOOT_ID "host.boot_id" /* written by optrace record */
#define CAPTURE_KEY_TARGET "target"
#define CAPTURE_KEY_PID "recorder.pid"
/*
 * The end marker's counters, as optrace record writes them and every reader
 * looks them up (capture_counter_name()); a "lost." one counts what the
 * capture lacks.
 */
enum capture_counter_id {
	CAPTURE_LOST_RINGBUF_FULL,   /* lost.ringbuf_full: events the ring buffer had no room for */
	CAPTURE_LOST_STRINGS,	     /* lost.strings: names the ring buffer had no room for */
	CAPTURE_STRINGS_UNREADABLE,  /* strings.unreadable */
	CAPTURE_STRINGS_TRUNCATED,   /* strings.truncated */
	CAPTURE_LOST_GPU_UNREADABLE, /* lost.gpu_unreadable */
	/* records.gpu: GPU records; 0 spares readers a pass over them */
	CAPTURE_GPU_RECORDS,
	CAPTURE_LOST_BATCH_MALFORMED,  /* lost.batch_malformed */
	CAPTURE_LOST_BATCH_MISSING,    /* lost.batch_missing */
	CAPTURE_EVENTS_LATE,	       /* events.late: written out of order */
	CAPTURE_EVENTS_DUPLICATE,      /* events.duplicate */
	CAPTURE_LOST_GPU_RINGBUF_FULL, /* lost.gpu_ringbuf_full */
	/*
	 * records.gpu_launches: with gpu_launch records, report attributes GPU
	 * activity as it streams (memory: the calls in flight); without, by a
	 * pass of its own.
	 */
	CAPTURE_GPU_LAUNCHES,
	CAPTURE_COUNTER__COUNT
};

/* "lost.ringbuf_full", ...: the name in the file. */
const char *capture_counter_name(enum capture_counter_id id);

/* A metadata entry; the reader's strings are NUL-terminated copies. */
struct capture_meta {
	const char *key;
	const char *value;
};

/* A named total for the end marker, e.g. { "lost.ringbuf", 12 }. */
struct capture_counter {
	const char *name;
	uint64_t value;
};

/* ---- writing ---------------------------------------------------------------- */

struct capture_writer;

struct capture_writer_opts {
	const char *optrace_version;	 /* NULL: the build's version, or "unknown" */
	const char *hostname;		 /* NULL: gethostname() */
	const char *target;		 /* the command line or target description */
	const struct capture_meta *meta; /* more entries, written as given */
	size_t meta_count;
	uint32_t chunk_size; /* 0: CAPTURE_CHUNK_DEFAULT; a multiple of 8 */
	/* 0: CAPTURE_VERSION_MAJOR; 1: the 64-byte records that optrace 0.1 reads */
	uint16_t format_major;
};

struct capture_writer_stats {
	uint64_t records;      /* in chunks written (those still buffered count nowhere yet) */
	uint64_t records_lost; /* handed to capture_write() but not in the file */
	uint64_t chunks;       /* record chunks written */
	uint64_t record_bytes; /* record payload bytes written */
	uint64_t file_bytes;   /* the file's size: where the next chunk goes */
	int error;	       /* the first write error (negative errno), or 0 */
};

/*
 * Creates (or truncates) path and writes the header, with the clock pair
 * taken now. The descriptor is close-on-exec: a traced command started
 * afterwards does not inherit it.
 */
int capture_writer_open(struct capture_writer **writer, const char *path,
			const struct capture_writer_opts *opts);

/*
 * The same on fd, open for writing and empty (a temporary file that the
 * caller renames into place), which the writer owns from then on: closed
 * by capture_close(), left to the caller on failure.
 */
int capture_writer_fdopen(struct capture_writer **writer, int fd,
			  const struct capture_writer_opts *opts);

/*
 * Appends a record to the pending chunk, writing that chunk first if the
 * record does not fit. -EMSGSIZE: the record cannot fit in any chunk
 * (size > chunk_size - 8); -EINVAL: a reserved type. After a write error
 * (e.g. -ENOSPC, -EFBIG) the writer keeps the file as it was after its last
 * whole chunk, refuses every later record with that error and counts it in
 * records_lost.
 */
int capture_write(struct capture_writer *writer, uint16_t type, const void *data, uint32_t size);

/* Writes the pending chunk now, if it holds any record (e.g. every second). */
int capture_flush(struct capture_writer *writer);

void capture_writer_stats(const struct capture_writer *writer, struct capture_writer_stats *stats);

/*
 * Flushes, writes the end marker with the totals and the caller's counters
 * (at most 1024, names of at most 255 bytes), closes and frees the writer.
 * The end marker is attempted even after a write error, so that the file
 * says how many records were lost. Returns the first error of the writer's
 * life; the writer is gone either way.
 */
int capture_close(struct capture_writer *writer, const struct capture_counter *counters,
		  size_t counter_count);

/* ---- reading ---------------------------------------------------------------- */

struct capture_reader;

struct capture_header {
	uint16_t version_major;
	uint16_t version_minor;
	uint64_t realtime_ns;  /* CLOCK_REALTIME when recording started ... */
	uint64_t monotonic_ns; /* ... and CLOCK_MONOTONIC at the same moment */
	uint32_t chunk_size;
	uint32_t header_size; /* bytes before the first chunk */
	/* The well-known entries, "" when absent. */
	const char *optrace_version;
	const char *hostname;
	const char *target;
	/* Every entry, the well-known ones included, in file order. */
	const struct capture_meta *meta;
	size_t meta_count;
};

/*
 * How reading ended, from best to worst. A damaged chunk in the middle is
 * skipped: reading goes on at the next whole chunk, and the end is then
 * CAPTURE_END_CORRUPT at best, its message saying what was skipped first.
 */
enum capture_end {
	CAPTURE_END_NONE,      /* not at the end yet */
	CAPTURE_END_CLEAN,     /* the end marker was read: the recorder stopped cleanly */
	CAPTURE_END_NO_MARKER, /* the file ends after a whole chunk, with no end marker */
	CAPTURE_END_TRUNCATED, /* the file ends inside a chunk */
	CAPTURE_END_CORRUPT,   /* a chunk fails a CRC or is malformed, or the totals differ */
	CAPTURE_END_GARBAGE,   /* bytes that are no chunk where one should start */
	CAPTURE_END_IO_ERROR,  /* read() failed */
};

/* The end marker's totals, as the recorder wrote them. */
struct capture_trailer {
	uint64_t records;
	uint64_t chunks;
	uint64_t record_bytes;
	uint64_t records_lost; /* records the recorder could not write */
	int32_t write_error;   /* its first write error, as a positive errno, or 0 */
	uint64_t realtime_ns;  /* the clock pair when recording stopped */
	uint64_t monotonic_ns;
	const struct capture_counter *counters;
	size_t counter_count;
};

struct capture_status {
	enum capture_end end;
	/* What was read and checked: whole chunks only. */
	uint64_t records;
	uint64_t chunks; /* record chunks */
	uint64_t record_bytes;
	uint64_t good_bytes;	 /* the file's bytes up to the last whole chunk */
	uint64_t file_bytes;	 /* its size when reading stopped */
	uint64_t bad_chunk;	 /* the sequence number of the chunk where reading stopped */
	uint64_t trailing_bytes; /* after the end marker (a clean end still) */
	bool has_trailer;
	bool totals_match; /* the trailer's totals equal what was read */
	/*
	 * Damaged chunks skipped (reading went on at the next whole chunk) and
	 * the records they held: counted by their headers, or, at a clean end,
	 * by the end marker (then known), else a lower bound.
	 */
	uint64_t damaged_chunks;
	uint64_t damaged_records;
	bool damaged_records_known;
	struct capture_trailer trailer;
	/* One or two sentences for the user: what ended reading and what is lost. */
	char message[512];
};

struct capture_record {
	uint16_t type;
	uint32_t size;
	const void *data; /* 8-byte aligned; valid until the next capture_next() */
	uint64_t chunk;	  /* the sequence number of its chunk */
};

/*
 * Opens a capture and reads its header. On failure, why (if not NULL) says
 * what is wrong in a sentence: -ENOENT and other open() errors, -EINVAL for
 * a pipe, a device or a socket (which open() does not wait on: a pipe with
 * no writer would block it for ever), -EISDIR, -EBADMSG for a file that is
 * empty, cut inside its header, damaged or not a capture at all,
 * -EPROTONOSUPPORT for a format this code does not read.
 */
int capture_reader_open(struct capture_reader **reader, const char *path, char *why,
			size_t why_size);

/*
 * Without opening path (which blocks on a pipe that has no writer): 0 if it
 * is a regular file or cannot be looked at (opening it then says why), else
 * -EINVAL or -EISDIR with a sentence in why. For inputs that are read by
 * other means than capture_reader_open(), such as an OPTRACE_GPU_FILE.
 */
int capture_check_input(const char *path, char *why, size_t why_size);

const struct capture_header *capture_reader_header(const struct capture_reader *reader);
/*
 * A second reader of the very file reader has open (through its descriptor,
 * not its name: a name someone swapped meanwhile is not read), from its start.
 */
int capture_reader_open_again(struct capture_reader **again, const struct capture_reader *reader);
/* The file's size, through its descriptor. */
uint64_t capture_reader_size(const struct capture_reader *reader);

/*
 * The next record, in file order, reading one chunk at a time (damaged
 * chunks skipped, as capture_status says). Returns 1
 * with a record, 0 at the end (capture_reader_status() says which end), or
 * a negative errno (-EIO and such, -ENOMEM).
 */
int capture_next(struct capture_reader *reader, struct capture_record *record);

/* Final once capture_next() has returned 0 or an error. */
const struct capture_status *capture_reader_status(const struct capture_reader *reader);

void capture_reader_close(struct capture_reader *reader);

/*
 * The end marker's counter called name, read from the end of a cleanly
 * closed capture without reading the rest. 0, or -ENOENT when the file has
 * no end marker there or the marker no such counter (then read it all).
 */
int capture_peek_counter(const char *path, const char *name, uint64_t *value);

/* An event timestamp (bpf_ktime_get_ns: CLOCK_MONOTONIC) as wall-clock ns. */
uint64_t capture_wall_ns(const struct capture_header *header, uint64_t monotonic_ns);

const char *capture_end_name(enum capture_end end);

/* The value of key in the header, or NULL. */
const char *capture_header_get(const struct capture_header *header, const char *key);

/*
 * Prints the header, every chunk (offset, size, records, CRC ok or bad),
 * the end marker and the status; with records, every record's type, size
 * and first bytes. Returns 0 when the file reads to a clean end, 1 when it
 * does not, or a negative errno when it cannot be read at all.
 */
int capture_dump(FILE *out, const char *path, bool records);

#endif /* OPTRACE_CAPTURE_CAPTURE_H */
