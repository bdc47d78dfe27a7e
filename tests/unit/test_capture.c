// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The capture file: round trips, and every way a file can end badly: cut at
 * each byte, a damaged byte, a writer killed with SIGKILL, a full disk, a
 * newer format, garbage. The reader must say what happened and return every
 * record before the damage, and nothing else.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "testlib.h"
#include "capture/capture.h"

#define MAX_CHUNKS 4096

static char *dir;
static char path[4096];

static void setup(void)
{
	dir = make_temp_dir();
	ck_assert_ptr_nonnull(dir);
	snprintf(path, sizeof(path), "%s/capture.otc", dir);
}

static void teardown(void)
{
	rm_rf(dir);
	free(dir);
}

/* Record i of every test capture: its type, size and bytes follow from i. */
static uint32_t record_size(uint64_t i, uint32_t max_size)
{
	static const uint32_t edges[] = { 0, 1, 7, 8, 9, 63, 64, 65 };

	if (i % 97 == 96)
		return max_size;
	if (i % 5 == 0)
		return edges[(i / 5) % 8];
	return (uint32_t)((i * 37) % 300) % (max_size + 1);
}

static void record_bytes(uint64_t i, uint8_t *data, uint32_t size)
{
	for (uint32_t j = 0; j < size; j++)
		data[j] = (uint8_t)(i * 131 + j * 7 + 1);
}

static uint16_t record_type(uint64_t i)
{
	return (uint16_t)(i % 7 + 1);
}

/* Where each record chunk of a written capture ends, and the records up to there. */
struct layout {
	uint64_t header_size;
	uint64_t chunk_end[MAX_CHUNKS];
	uint64_t records_to[MAX_CHUNKS];
	size_t chunks;
	uint64_t records;
	uint64_t file_size;
};

static void note_chunks(struct capture_writer *w, struct layout *layout)
{
	struct capture_writer_stats stats;

	capture_writer_stats(w, &stats);
	if (stats.chunks > layout->chunks) {
		ck_assert_uint_lt(layout->chunks, MAX_CHUNKS);
		layout->chunk_end[layout->chunks] = stats.file_bytes;
		layout->records_to[layout->chunks] = stats.records;
		layout->chunks++;
	}
}

static const struct capture_counter counters[] = {
	{ "lost.ringbuf", 12 },
	{ "lost.kernel", 7 },
};

/* Writes count records (flushing every flush_every, if not 0) and closes. */
static void write_capture(uint64_t count, uint32_t chunk_size, uint64_t flush_every,
			  struct layout *layout)
{
	static const struct capture_meta meta[] = {
		{ "rank.1234", "0 of 4" },
		{ "untrusted", "a\"b\n\xff$|" },
	};
	struct capture_writer_opts opts = {
		.optrace_version = "9.9.9-test",
		.hostname = "testhost",
		.target = "demo --workload all",
		.meta = meta,
		.meta_count = 2,
		.chunk_size = chunk_size,
	};
	uint32_t max_size = chunk_size - CAPTURE_RECORD_OVERHEAD;
	struct capture_writer_stats stats;
	struct capture_writer *w;
	uint8_t *data = malloc(max_size);

	ck_assert_ptr_nonnull(data);
	memset(layout, 0, sizeof(*layout));
	ck_assert_int_eq(capture_writer_open(&w, path, &opts), 0);
	capture_writer_stats(w, &stats);
	layout->header_size = stats.file_bytes;
	for (uint64_t i = 0; i < count; i++) {
		uint32_t size = record_size(i, max_size);

		record_bytes(i, data, size);
		ck_assert_int_eq(capture_write(w, record_type(i), data, size), 0);
		note_chunks(w, layout);
		if (flush_every && i % flush_every == flush_every - 1) {
			ck_assert_int_eq(capture_flush(w), 0);
			note_chunks(w, layout);
		}
	}
	ck_assert_int_eq(capture_flush(w), 0);
	note_chunks(w, layout);
	layout->records = count;
	ck_assert_int_eq(capture_close(w, counters, 2), 0);
	free(data);
}

/*
 * Reads every record, checking each against what was written with records
 * of at most max_size bytes; returns how many, or -1 at the first that
 * differs.
 */
static long read_records_max(struct capture_reader *r, uint32_t max_size)
{
	static uint8_t expected[CAPTURE_CHUNK_DEFAULT];
	struct capture_record record;
	long count = 0;
	int err;

	while ((err = capture_next(r, &record)) > 0) {
		uint32_t size = record_size((uint64_t)count, max_size);

		if (record.type != record_type((uint64_t)count) || record.size != size ||
		    (uintptr_t)record.data % 8)
			return -1;
		record_bytes((uint64_t)count, expected, size);
		if (memcmp(record.data, expected, size))
			return -1;
		count++;
	}
	ck_assert_int_eq(err, 0);
	ck_assert_int_ne(capture_reader_status(r)->end, CAPTURE_END_NONE);
	return count;
}

static long read_records(struct capture_reader *r)
{
	return read_records_max(r, capture_reader_header(r)->chunk_size - CAPTURE_RECORD_OVERHEAD);
}

static uint8_t *slurp(const char *file, size_t *size)
{
	struct stat st;
	uint8_t *data;
	int fd = open(file, O_RDONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	data = malloc((size_t)st.st_size + 1);
	ck_assert_ptr_nonnull(data);
	ck_assert_int_eq(read(fd, data, (size_t)st.st_size), st.st_size);
	close(fd);
	*size = (size_t)st.st_size;
	return data;
}

/*
 * Rewritten in place and cut to size, not truncated to 0 first: ext4 writes
 * a file truncated to 0 back to disk when it is closed, which would make
 * thousands of rewrites slow.
 */
static void spill(const char *file, const void *data, size_t size)
{
	int fd = open(file, O_WRONLY | O_CREAT, 0600);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, data, size, 0), (ssize_t)size);
	ck_assert_int_eq(ftruncate(fd, (off_t)size), 0);
	close(fd);
}

START_TEST(test_round_trip)
{
	struct layout layout;
	const struct capture_header *h;
	const struct capture_status *s;
	struct capture_reader *r;
	char why[256];

	write_capture(5000, 1024, 333, &layout);
	ck_assert_uint_gt(layout.chunks, 100);

	ck_assert_int_eq(capture_reader_open(&r, path, why, sizeof(why)), 0);
	h = capture_reader_header(r);
	ck_assert_uint_eq(h->version_major, CAPTURE_VERSION_MAJOR);
	ck_assert_uint_eq(h->version_minor, CAPTURE_VERSION_MINOR);
	ck_assert_uint_eq(h->chunk_size, 1024);
	ck_assert_uint_eq(h->header_size, layout.header_size);
	ck_assert_str_eq(h->optrace_version, "9.9.9-test");
	ck_assert_str_eq(h->hostname, "testhost");
	ck_assert_str_eq(h->target, "demo --workload all");
	ck_assert_str_eq(capture_header_get(h, "rank.1234"), "0 of 4");
	ck_assert_str_eq(capture_header_get(h, "untrusted"), "a\"b\n\xff$|");
	ck_assert_ptr_nonnull(capture_header_get(h, CAPTURE_KEY_KERNEL));
	ck_assert_ptr_null(capture_header_get(h, "no.such.key"));

	ck_assert_int_eq(read_records(r), 5000);
	s = capture_reader_status(r);
	ck_assert_int_eq(s->end, CAPTURE_END_CLEAN);
	ck_assert(s->has_trailer && s->totals_match);
	ck_assert_uint_eq(s->records, 5000);
	ck_assert_uint_eq(s->chunks, layout.chunks);
	ck_assert_uint_eq(s->trailer.records, 5000);
	ck_assert_uint_eq(s->trailer.chunks, layout.chunks);
	ck_assert_uint_eq(s->trailer.record_bytes, s->record_bytes);
	ck_assert_uint_eq(s->trailer.records_lost, 0);
	ck_assert_int_eq(s->trailer.write_error, 0);
	ck_assert_uint_ge(s->trailer.monotonic_ns, h->monotonic_ns);
	ck_assert_uint_eq(s->trailer.counter_count, 2);
	ck_assert_str_eq(s->trailer.counters[1].name, "lost.kernel");
	ck_assert_uint_eq(s->trailer.counters[1].value, 7);
	ck_assert_uint_eq(s->trailing_bytes, 0);
	snprintf(why, sizeof(why), "clean end: 5000 records in %zu chunks", layout.chunks);
	ck_assert_str_eq(s->message, why);
	/* reading past the end stays at the end */
	ck_assert_int_eq(capture_next(r, &(struct capture_record){ 0 }), 0);
	capture_reader_close(r);
}
END_TEST

START_TEST(test_clock_pair_maps_event_time_to_wall_time)
{
	struct capture_writer *w;
	struct capture_reader *r;
	const struct capture_header *h;
	struct timespec now;

	ck_assert_int_eq(capture_writer_open(&w, path, NULL), 0);
	ck_assert_int_eq(capture_close(w, NULL, 0), 0);
	ck_assert_int_eq(capture_reader_open(&r, path, NULL, 0), 0);
	h = capture_reader_header(r);
	clock_gettime(CLOCK_REALTIME, &now);
	ck_assert_uint_le(h->realtime_ns,
			  (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
	ck_assert_uint_gt(h->realtime_ns, ((uint64_t)now.tv_sec - 60) * 1000000000u);
	clock_gettime(CLOCK_MONOTONIC, &now);
	ck_assert_uint_le(h->monotonic_ns,
			  (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
	ck_assert_uint_eq(capture_wall_ns(h, h->monotonic_ns + 1500), h->realtime_ns + 1500);
	ck_assert_uint_eq(capture_wall_ns(h, h->monotonic_ns - 20), h->realtime_ns - 20);
	ck_assert_str_eq(h->target, "");
	ck_assert_int_eq(read_records(r), 0);
	ck_assert_int_eq(capture_reader_status(r)->end, CAPTURE_END_CLEAN);
	capture_reader_close(r);
}
END_TEST

START_TEST(test_writer_refuses_what_cannot_fit)
{
	struct capture_writer_opts opts = { .chunk_size = 512 };
	struct capture_writer_stats stats;
	struct capture_writer *w;
	struct capture_reader *r;
	static uint8_t data[1024];
	char missing[4200];

	opts.chunk_size = 100;
	ck_assert_int_eq(capture_writer_open(&w, path, &opts), -EINVAL);
	opts.chunk_size = 1020;
	ck_assert_int_eq(capture_writer_open(&w, path, &opts), -EINVAL);
	snprintf(missing, sizeof(missing), "%s/no/such/dir", dir);
	ck_assert_int_eq(capture_writer_open(&w, missing, NULL), -ENOENT);

	opts.chunk_size = 512;
	ck_assert_int_eq(capture_writer_open(&w, path, &opts), 0);
	record_bytes(0, data, 504);
	ck_assert_int_eq(capture_write(w, record_type(0), data, 505), -EMSGSIZE);
	ck_assert_int_eq(capture_write(w, CAPTURE_TYPE_RESERVED, data, 8), -EINVAL);
	ck_assert_int_eq(capture_write(w, record_type(0), data, 504), 0); /* a chunk of its own */
	ck_assert_int_eq(capture_flush(w), 0);
	ck_assert_int_eq(capture_flush(w), 0); /* nothing pending: no empty chunk */
	capture_writer_stats(w, &stats);
	ck_assert_uint_eq(stats.chunks, 1);
	ck_assert_uint_eq(stats.records, 1);
	ck_assert_uint_eq(stats.records_lost, 2);
	ck_assert_int_eq(stats.error, 0);
	ck_assert_int_eq(capture_close(w, NULL, 0), 0);

	ck_assert_int_eq(capture_reader_open(&r, path, NULL, 0), 0);
	{
		struct capture_record record;

		ck_assert_int_eq(capture_next(r, &record), 1);
		ck_assert_uint_eq(record.size, 504);
		ck_assert_int_eq(memcmp(record.data, data, 504), 0);
		ck_assert_int_eq(capture_next(r, &record), 0);
	}
	ck_assert_uint_eq(capture_reader_status(r)->trailer.records_lost, 2);
	capture_reader_close(r);
}
END_TEST

/* The chunk that a cut at length falls in: how many whole chunks precede it. */
static size_t whole_chunks(const struct layout *layout, uint64_t length)
{
	size_t n = 0;

	while (n < layout->chunks && layout->chunk_end[n] <= length)
		n++;
	return n;
}

START_TEST(test_cut_at_every_byte)
{
	char cut_path[4200], why[256], expected[256];
	struct layout layout;
	size_t size;
	uint8_t *file;

	write_capture(60, 512, 0, &layout);
	file = slurp(path, &size);
	ck_assert_uint_ge(layout.chunks, 6);
	snprintf(cut_path, sizeof(cut_path), "%s/cut.otc", dir);

	for (size_t length = size + 1; length-- > 0;) {
		const struct capture_status *s;
		struct capture_reader *r;
		size_t chunks = whole_chunks(&layout, length);
		uint64_t last_end = chunks ? layout.chunk_end[chunks - 1] : layout.header_size;
		long records;
		int err;

		spill(cut_path, file, length);
		err = capture_reader_open(&r, cut_path, why, sizeof(why));
		if (length < layout.header_size) {
			ck_assert_msg(err == -EBADMSG, "cut at %zu: %d", length, err);
			ck_assert_msg(strstr(why, length ? "bytes into its header" : "empty"),
				      "cut at %zu: %s", length, why);
			continue;
		}
		ck_assert_msg(!err, "cut at %zu: %s", length, why);
		records = read_records(r);
		s = capture_reader_status(r);
		ck_assert_int_eq(records, chunks ? (long)layout.records_to[chunks - 1] : 0);
		ck_assert_uint_eq(s->records, (uint64_t)records);
		ck_assert_uint_eq(s->chunks, chunks);
		if (length == size) {
			ck_assert_int_eq(s->end, CAPTURE_END_CLEAN);
		} else if (length == last_end) {
			ck_assert_msg(s->end == CAPTURE_END_NO_MARKER, "cut at %zu: %s", length,
				      s->message);
			ck_assert_uint_eq(s->good_bytes, length);
		} else if (chunks == layout.chunks && length - last_end >= 6) {
			/* in the end marker (its kind read): every record is there */
			ck_assert_int_eq(s->end, CAPTURE_END_TRUNCATED);
			ck_assert_msg(strstr(s->message, "into the end marker"), "%s", s->message);
		} else {
			ck_assert_int_eq(s->end, CAPTURE_END_TRUNCATED);
			ck_assert_uint_eq(s->good_bytes, last_end);
			ck_assert_uint_eq(s->bad_chunk, chunks);
			if (length - last_end < 32)
				snprintf(expected, sizeof(expected),
					 "the file ends %lu bytes into the header of chunk %zu",
					 (unsigned long)(length - last_end), chunks);
			else
				snprintf(expected, sizeof(expected),
					 "the file ends %lu bytes into chunk %zu (of %lu): ",
					 (unsigned long)(length - last_end), chunks,
					 (unsigned long)(layout.chunk_end[chunks] - last_end));
			ck_assert_msg(strstr(s->message, expected), "cut at %zu: %s", length,
				      s->message);
			ck_assert_msg(strstr(s->message, "no end marker"), "%s", s->message);
		}
		capture_reader_close(r);
	}

	/* One message in full, as a user reads it. */
	{
		struct capture_reader *r;
		uint64_t start = layout.chunk_end[2];

		spill(cut_path, file, start + 100);
		ck_assert_int_eq(capture_reader_open(&r, cut_path, NULL, 0), 0);
		read_records(r);
		snprintf(expected, sizeof(expected),
			 "the file ends 100 bytes into chunk 3 (of %lu): the records after chunk 2 "
			 "are lost; no end marker: the recorder did not stop cleanly",
			 (unsigned long)(layout.chunk_end[3] - start));
		ck_assert_str_eq(capture_reader_status(r)->message, expected);
		capture_reader_close(r);
	}
	free(file);
}
END_TEST

START_TEST(test_damaged_byte_stops_at_its_chunk)
{
	char bad_path[4200];
	struct layout layout;
	uint64_t start, end;
	size_t size;
	uint8_t *file;

	write_capture(60, 512, 0, &layout);
	file = slurp(path, &size);
	ck_assert_uint_ge(layout.chunks, 6);
	snprintf(bad_path, sizeof(bad_path), "%s/bad.otc", dir);
	start = layout.chunk_end[2];
	end = layout.chunk_end[3];

	for (uint64_t offset = start; offset < end; offset++) {
		const struct capture_status *s;
		struct capture_reader *r;

		file[offset] ^= 0x5a;
		spill(bad_path, file, size);
		file[offset] ^= 0x5a;
		ck_assert_int_eq(capture_reader_open(&r, bad_path, NULL, 0), 0);
		ck_assert_int_eq(read_records(r), (long)layout.records_to[2]);
		s = capture_reader_status(r);
		ck_assert_uint_eq(s->bad_chunk, 3);
		ck_assert_uint_eq(s->good_bytes, start);
		if (offset - start < 4) {
			ck_assert_int_eq(s->end, CAPTURE_END_GARBAGE);
			ck_assert_msg(strstr(s->message, "holds no chunk"), "%s", s->message);
		} else if (offset - start < 32) {
			ck_assert_int_eq(s->end, CAPTURE_END_CORRUPT);
			ck_assert_msg(strstr(s->message, "its header fails its CRC"), "%s",
				      s->message);
		} else {
			ck_assert_int_eq(s->end, CAPTURE_END_CORRUPT);
			ck_assert_msg(strstr(s->message, "chunk 3 at offset") &&
					      strstr(s->message, "CRC mismatch") &&
					      strstr(s->message, "the records after chunk 2"),
				      "%s", s->message);
		}
		capture_reader_close(r);
	}
	free(file);
}
END_TEST

/* Writes records 0, 1, 2, ... with a flush every 64 until killed. */
static void write_until_killed(void)
{
	struct capture_writer_opts opts = { .chunk_size = 4096, .target = "killed" };
	struct capture_writer *w;
	uint8_t data[4096];

	if (capture_writer_open(&w, path, &opts))
		_exit(1);
	for (uint64_t i = 0;; i++) {
		uint32_t size = record_size(i, 200);

		record_bytes(i, data, size);
		if (capture_write(w, record_type(i), data, size))
			_exit(2);
		if (i % 64 == 63 && capture_flush(w))
			_exit(3);
	}
}

START_TEST(test_sigkill_mid_write)
{
	static const off_t kill_after[] = { 4096, 100000, 1000000 };

	for (size_t k = 0; k < sizeof(kill_after) / sizeof(kill_after[0]); k++) {
		const struct capture_status *s;
		struct capture_reader *r;
		struct stat st = { 0 };
		int status, waited = 0;
		long records;
		pid_t child;

		unlink(path);
		child = fork();
		ck_assert_int_ge(child, 0);
		if (child == 0)
			write_until_killed();
		while ((stat(path, &st) || st.st_size < kill_after[k]) && waited++ < 5000)
			usleep(1000);
		kill(child, SIGKILL);
		ck_assert_int_eq(waitpid(child, &status, 0), child);
		ck_assert_msg(WIFSIGNALED(status), "the writer exited %d", WEXITSTATUS(status));

		ck_assert_int_eq(capture_reader_open(&r, path, NULL, 0), 0);
		records = read_records_max(r, 200);
		s = capture_reader_status(r);
		ck_assert_int_gt(records, 0);
		ck_assert_msg(s->end == CAPTURE_END_NO_MARKER || s->end == CAPTURE_END_TRUNCATED,
			      "%s", s->message);
		ck_assert_uint_le(s->good_bytes, s->file_bytes);
		ck_assert_msg(strstr(s->message, "did not stop cleanly"), "%s", s->message);
		capture_reader_close(r);
	}
}
END_TEST

/* What the writer saw when the file could not grow, sent from the child. */
struct full_disk_report {
	int open_err;
	int write_err;
	int later_write_err;
	int flush_err;
	int close_err;
	uint64_t written;
	uint64_t lost;
	uint64_t header_size;
};

/*
 * In a child (a file size limit must not touch the test runner's own files):
 * 64-byte records, 16 to a chunk of 1056 bytes; the file may grow to two
 * chunks and room more bytes. The third chunk cannot be written.
 */
static void write_into_limit(int pipe_fd, uint64_t room)
{
	struct capture_writer_opts opts = { .chunk_size = 1024 };
	struct full_disk_report report = { 0 };
	struct capture_writer_stats stats;
	struct capture_writer *w;
	struct rlimit limit;
	uint8_t data[56];
	uint64_t i;

	signal(SIGXFSZ, SIG_IGN);
	report.open_err = capture_writer_open(&w, path, &opts);
	if (report.open_err)
		goto report;
	capture_writer_stats(w, &stats);
	report.header_size = stats.file_bytes;
	getrlimit(RLIMIT_FSIZE, &limit);
	limit.rlim_cur = stats.file_bytes + 2 * 1056 + room;
	setrlimit(RLIMIT_FSIZE, &limit);
	for (i = 0; i < 1000; i++) {
		memset(data, (int)i, sizeof(data));
		report.write_err = capture_write(w, 1, data, sizeof(data));
		if (report.write_err)
			break;
	}
	report.later_write_err = capture_write(w, 1, data, sizeof(data));
	report.flush_err = capture_flush(w);
	capture_writer_stats(w, &stats);
	report.written = stats.records;
	report.lost = stats.records_lost;
	report.close_err = capture_close(w, counters, 2);
report:
	if (write(pipe_fd, &report, sizeof(report)) != sizeof(report))
		_exit(1);
	_exit(0);
}

static void check_full_disk(uint64_t room, enum capture_end end)
{
	struct full_disk_report report;
	const struct capture_status *s;
	struct capture_reader *r;
	struct capture_record record;
	int fds[2], status;
	uint64_t count = 0;
	struct stat st;
	pid_t child;

	ck_assert_int_eq(pipe(fds), 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0)
		write_into_limit(fds[1], room);
	close(fds[1]);
	ck_assert_int_eq(read(fds[0], &report, sizeof(report)), sizeof(report));
	close(fds[0]);
	ck_assert_int_eq(waitpid(child, &status, 0), child);

	ck_assert_int_eq(report.open_err, 0);
	ck_assert_int_eq(report.write_err, -EFBIG);
	ck_assert_int_eq(report.later_write_err, -EFBIG);
	ck_assert_int_eq(report.flush_err, -EFBIG);
	ck_assert_int_eq(report.close_err, -EFBIG);
	ck_assert_uint_eq(report.written, 32);
	/* the third chunk's 16, the one that did not fit in it, the one after */
	ck_assert_uint_eq(report.lost, 18);

	/* the file was cut back to its last whole chunk (and the end marker, if it fit) */
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(capture_reader_open(&r, path, NULL, 0), 0);
	while (capture_next(r, &record) > 0) {
		ck_assert_uint_eq(record.size, 56);
		ck_assert_uint_eq(((const uint8_t *)record.data)[55], (uint8_t)count);
		count++;
	}
	s = capture_reader_status(r);
	ck_assert_uint_eq(count, 32);
	ck_assert_msg(s->end == end, "%s", s->message);
	ck_assert_uint_eq(s->good_bytes, report.header_size + 2 * 1056);
	if (end == CAPTURE_END_CLEAN) {
		ck_assert_uint_eq(s->trailer.records_lost, 18);
		ck_assert_int_eq(s->trailer.write_error, EFBIG);
		ck_assert_msg(strstr(s->message, "could not write 18 records (File too large)"),
			      "%s", s->message);
	} else {
		ck_assert_uint_eq((uint64_t)st.st_size, report.header_size + 2 * 1056);
	}
	capture_reader_close(r);
}

START_TEST(test_full_disk_keeps_whole_chunks)
{
	/* no room for the end marker either */
	check_full_disk(50, CAPTURE_END_NO_MARKER);
	/* room for the end marker: it says what was lost */
	check_full_disk(400, CAPTURE_END_CLEAN);
}
END_TEST

static uint32_t get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t value)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(value >> (8 * i));
}

static void set_header_crc(uint8_t *file)
{
	uint32_t header_size = get32(file + 12);

	put32(file + 16, (uint32_t)crc32(crc32(0, file, 16), file + 20, header_size - 20));
}

START_TEST(test_versions)
{
	char other[4200], why[256];
	struct capture_reader *r;
	struct layout layout;
	size_t size;
	uint8_t *file, *grown;

	write_capture(50, 512, 0, &layout);
	file = slurp(path, &size);
	snprintf(other, sizeof(other), "%s/other.otc", dir);

	/* a newer major is refused, and says so */
	file[8] = 2;
	spill(other, file, size);
	ck_assert_int_eq(capture_reader_open(&r, other, why, sizeof(why)), -EPROTONOSUPPORT);
	ck_assert_msg(
		strstr(why, "capture format 2.0 is newer than this optrace reads (format 1.x)") &&
			strstr(why, "newer optrace") && !strstr(why, "1.x to 1.x"),
		"%s", why);
	file[8] = 0;
	spill(other, file, size);
	ck_assert_int_eq(capture_reader_open(&r, other, why, sizeof(why)), -EPROTONOSUPPORT);
	ck_assert_msg(strstr(why, "older"), "%s", why);
	file[8] = CAPTURE_VERSION_MAJOR;

	/*
	 * A newer minor with 8 more fixed header bytes, as a later 1.x may
	 * write: read as before, the new bytes skipped.
	 */
	grown = malloc(size + 8);
	ck_assert_ptr_nonnull(grown);
	memcpy(grown, file, 48);
	memset(grown + 48, 0xaa, 8);
	memcpy(grown + 56, file + 48, size - 48);
	grown[10] = 7;				 /* minor */
	put32(grown + 12, get32(file + 12) + 8); /* header size */
	put32(grown + 20, 56);			 /* fixed size */
	set_header_crc(grown);
	spill(other, grown, size + 8);
	ck_assert_int_eq(capture_reader_open(&r, other, why, sizeof(why)), 0);
	ck_assert_uint_eq(capture_reader_header(r)->version_minor, 7);
	ck_assert_str_eq(capture_reader_header(r)->target, "demo --workload all");
	ck_assert_int_eq(read_records(r), 50);
	ck_assert_int_eq(capture_reader_status(r)->end, CAPTURE_END_CLEAN);
	capture_reader_close(r);
	free(grown);
	free(file);
}
END_TEST

static void check_refused(const void *data, size_t size, int err, const char *why_part)
{
	struct capture_reader *r = (void *)1;
	char why[256];

	spill(path, data, size);
	ck_assert_int_eq(capture_reader_open(&r, path, why, sizeof(why)), err);
	ck_assert_ptr_null(r);
	ck_assert_msg(strstr(why, why_part), "%s", why);
}

START_TEST(test_garbage_and_empty_files)
{
	static const uint8_t bad_size[16] = { 0x89, 'O', 'P', 'T', 'C',	 'A',  'P',  '\n',
					      1,    0,	 0,   0,   0xff, 0xff, 0xff, 0x7f };
	const struct capture_status *s;
	struct capture_reader *r;
	struct layout layout;
	uint8_t noise[4096];
	char why[256];
	size_t size;
	uint8_t *file;

	for (size_t i = 0; i < sizeof(noise); i++)
		noise[i] = (uint8_t)(i * 2654435761u >> 13);
	check_refused("", 0, -EBADMSG, "the file is empty");
	check_refused(noise, sizeof(noise), -EBADMSG, "not an optrace capture");
	check_refused("hello, world\n", 13, -EBADMSG, "not an optrace capture");
	check_refused(bad_size, sizeof(bad_size), -EBADMSG, "header is damaged");
	ck_assert_int_eq(capture_reader_open(&r, dir, why, sizeof(why)), -EISDIR);
	ck_assert_int_eq(capture_reader_open(&r, "/nonexistent/capture", why, sizeof(why)),
			 -ENOENT);
	ck_assert_msg(strstr(why, "cannot open"), "%s", why);

	/* a good header, then noise or zeros where the first chunk should be */
	write_capture(0, 512, 0, &layout);
	file = slurp(path, &size);
	file = realloc(file, layout.header_size + sizeof(noise));
	memcpy(file + layout.header_size, noise, sizeof(noise));
	spill(path, file, layout.header_size + sizeof(noise));
	ck_assert_int_eq(capture_reader_open(&r, path, NULL, 0), 0);
	ck_assert_int_eq(read_records(r), 0);
	s = capture_reader_status(r);
	ck_assert_int_eq(s->end, CAPTURE_END_GARBAGE);
	ck_assert_msg(strstr(s->message, "holds no chunk") &&
			      strstr(s->message, "all its records are "),
		      "%s", s->message);
	capture_reader_close(r);

	memset(file + layout.header_size, 0, sizeof(noise));
	spill(path, file, layout.header_size + sizeof(noise));
	ck_assert_int_eq(capture_reader_open(&r, path, NULL, 0), 0);
	ck_assert_int_eq(read_records(r), 0);
	ck_assert_msg(strstr(capture_reader_status(r)->message, "zero bytes"), "%s",
		      capture_reader_status(r)->message);
	capture_reader_close(r);
	free(file);
}
END_TEST

/* A pipe is refused at once: open() would wait for a writer, and it cannot be read twice. */
START_TEST(test_pipe_refused)
{
	struct capture_reader *r;
	char fifo[4200], why[256];
	uint64_t value;
	FILE *null;

	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(capture_reader_open(&r, fifo, why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, "not a regular file (a pipe)"), "%s", why);
	ck_assert_int_eq(capture_peek_counter(fifo, "records.gpu", &value), -EINVAL);
	null = fopen("/dev/null", "we");
	ck_assert_ptr_nonnull(null);
	ck_assert_int_eq(capture_dump(null, fifo, false), -EINVAL);
	fclose(null);
}
END_TEST

/* The same, without opening the file: for the inputs other readers open. */
START_TEST(test_check_input)
{
	char fifo[4200], why[256];
	struct layout layout;

	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(capture_check_input(fifo, why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, "not a regular file (a pipe)"), "%s", why);
	ck_assert_int_eq(capture_check_input("/dev/null", why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, "(a device)"), "%s", why);
	ck_assert_int_eq(capture_check_input(dir, why, sizeof(why)), -EISDIR);
	/* opening them says what is wrong */
	ck_assert_int_eq(capture_check_input("/nonexistent/capture", why, sizeof(why)), 0);
	write_capture(0, 512, 0, &layout);
	ck_assert_int_eq(capture_check_input(path, why, sizeof(why)), 0);
}
END_TEST

/*
 * Random damage (bytes overwritten, the file cut) anywhere, the header
 * included: the reader returns a correct prefix of the records, or refuses
 * the file, and never crashes.
 */
START_TEST(test_random_damage_never_crashes)
{
	char bad_path[4200];
	struct layout layout;
	unsigned int seed = 12345;
	size_t size;
	uint8_t *file, *copy;

	write_capture(80, 256, 7, &layout);
	file = slurp(path, &size);
	copy = malloc(size);
	ck_assert_ptr_nonnull(copy);
	snprintf(bad_path, sizeof(bad_path), "%s/bad.otc", dir);
	for (int round = 0; round < 2000; round++) {
		struct capture_reader *r;
		size_t length = size;
		int changes = 1 + rand_r(&seed) % 4;

		memcpy(copy, file, size);
		for (int i = 0; i < changes; i++)
			copy[(size_t)rand_r(&seed) % size] = (uint8_t)rand_r(&seed);
		if (round % 3 == 0)
			length = (size_t)rand_r(&seed) % (size + 1);
		spill(bad_path, copy, length);
		if (capture_reader_open(&r, bad_path, NULL, 0))
			continue;
		ck_assert_int_ge(read_records(r), 0);
		ck_assert_int_ne(capture_reader_status(r)->end, CAPTURE_END_NONE);
		capture_reader_close(r);
	}
	free(copy);
	free(file);
}
END_TEST

static char *dump_text(const char *file, bool records, int *err)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	ck_assert_ptr_nonnull(out);
	*err = capture_dump(out, file, records);
	fclose(out);
	return text;
}

START_TEST(test_dump)
{
	struct layout layout;
	char *text;
	size_t size;
	uint8_t *file;
	int err;

	write_capture(30, 512, 0, &layout);
	text = dump_text(path, true, &err);
	ck_assert_int_eq(err, 0);
	ck_assert_msg(strstr(text, ": format 1.0, header ") &&
			      strstr(text, "\"untrusted\" = \"a\\\"b\\x0a\\xff$|\"") &&
			      strstr(text, "  chunk 0 at offset ") && strstr(text, "crc ok") &&
			      strstr(text, "    record 0: type 1, 0 bytes:") &&
			      strstr(text, "    record 1: type 2, ") &&
			      strstr(text, ": end marker, ") &&
			      strstr(text, "    counter \"lost.kernel\" = 7\n") &&
			      strstr(text, "status: clean: clean end: 30 records"),
		      "%s", text);
	free(text);
	text = dump_text(path, false, &err);
	ck_assert_ptr_null(strstr(text, "record 0:"));
	free(text);

	file = slurp(path, &size);
	file[layout.chunk_end[1] + 40] ^= 1;
	spill(path, file, size);
	text = dump_text(path, false, &err);
	ck_assert_int_eq(err, 1);
	ck_assert_msg(strstr(text, "  chunk 1 at offset ") && strstr(text, "crc ok") &&
			      strstr(text, "records, crc BAD\n") &&
			      strstr(text, "status: corrupt: "),
		      "%s", text);
	free(text);

	spill(path, "junk", 4);
	text = dump_text(path, true, &err);
	ck_assert_int_eq(err, -EBADMSG);
	ck_assert_msg(strstr(text, "not an optrace capture"), "%s", text);
	free(text);
	free(file);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("capture");
	TCase *tc = tcase_create("capture");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_clock_pair_maps_event_time_to_wall_time);
	tcase_add_test(tc, test_writer_refuses_what_cannot_fit);
	tcase_add_test(tc, test_cut_at_every_byte);
	tcase_add_test(tc, test_damaged_byte_stops_at_its_chunk);
	tcase_add_test(tc, test_sigkill_mid_write);
	tcase_add_test(tc, test_full_disk_keeps_whole_chunks);
	tcase_add_test(tc, test_versions);
	tcase_add_test(tc, test_garbage_and_empty_files);
	tcase_add_test(tc, test_pipe_refused);
	tcase_add_test(tc, test_check_input);
	tcase_add_test(tc, test_random_damage_never_crashes);
	tcase_add_test(tc, test_dump);
	suite_add_tcase(suite, tc);

	return run_suite(suite);
}
