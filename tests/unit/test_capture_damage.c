// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The capture file, every way it can end badly: cut at each byte, a
 * damaged byte, a writer killed with SIGKILL, a full disk, garbage, random
 * damage. The reader must say what happened and return every record before
 * the damage, and nothing else.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture_sample.h"
#include "testlib.h"
#include "capture/capture.h"

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
	file = slurp(sample_path, &size);
	ck_assert_uint_ge(layout.chunks, 6);
	snprintf(cut_path, sizeof(cut_path), "%s/cut.otc", test_dir);

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

/*
 * A damaged byte anywhere in chunk 3 costs chunk 3 alone: reading goes on at
 * chunk 4, and the status says which chunk and how many records were lost.
 */
START_TEST(test_damaged_byte_loses_only_its_chunk)
{
	char bad_path[4200], expected[160];
	struct layout layout;
	uint64_t start, end, lost;
	size_t size;
	uint8_t *file;

	write_capture(60, 512, 0, &layout);
	file = slurp(sample_path, &size);
	ck_assert_uint_ge(layout.chunks, 6);
	snprintf(bad_path, sizeof(bad_path), "%s/bad.otc", test_dir);
	start = layout.chunk_end[2];
	end = layout.chunk_end[3];
	lost = layout.records_to[3] - layout.records_to[2];

	for (uint64_t offset = start; offset < end; offset++) {
		const struct capture_status *s;
		struct capture_reader *r;
		long count;

		file[offset] ^= 0x5a;
		spill(bad_path, file, size);
		file[offset] ^= 0x5a;
		ck_assert_int_eq(capture_reader_open(&r, bad_path, NULL, 0), 0);
		count = read_records_in(r, &layout);
		s = capture_reader_status(r);
		ck_assert_msg(count == (long)(layout.records - lost),
			      "damage at %lu: %ld records: %s", (unsigned long)(offset - start),
			      count, s->message);
		ck_assert_int_eq(s->end, CAPTURE_END_CORRUPT);
		ck_assert_uint_eq(s->damaged_chunks, 1);
		ck_assert_uint_eq(s->damaged_records, lost);
		ck_assert(s->damaged_records_known);
		ck_assert_uint_eq(s->chunks, layout.chunks - 1);
		if (offset - start < 4)
			snprintf(expected, sizeof(expected),
				 "offset %lu holds no chunk where chunk 3 should start",
				 (unsigned long)start);
		else if (offset - start < 32)
			snprintf(expected, sizeof(expected),
				 "chunk 3 at offset %lu is damaged (its header fails its CRC)",
				 (unsigned long)start);
		else
			snprintf(expected, sizeof(expected),
				 "chunk 3 at offset %lu is damaged (CRC mismatch",
				 (unsigned long)start);
		ck_assert_msg(strstr(s->message, expected), "%s", s->message);
		snprintf(expected, sizeof(expected), "1 damaged chunk skipped, %lu records lost",
			 (unsigned long)lost);
		ck_assert_msg(strstr(s->message, expected) && strstr(s->message, "then clean end"),
			      "%s", s->message);
		capture_reader_close(r);
	}
	free(file);
}
END_TEST

/*
 * Chunk 3 cut out of the file whole: chunk 4 follows chunk 2 and is read,
 * chunk 3's records are counted missing, by the end marker's totals.
 */
START_TEST(test_missing_chunk_is_counted)
{
	char gap_path[4200], expected[160];
	const struct capture_status *s;
	struct capture_reader *r;
	struct layout layout;
	uint64_t start, end, lost;
	size_t size;
	uint8_t *file, *gap;

	write_capture(60, 512, 0, &layout);
	file = slurp(sample_path, &size);
	start = layout.chunk_end[2];
	end = layout.chunk_end[3];
	lost = layout.records_to[3] - layout.records_to[2];
	gap = malloc(size);
	ck_assert_ptr_nonnull(gap);
	memcpy(gap, file, start);
	memcpy(gap + start, file + end, size - end);
	snprintf(gap_path, sizeof(gap_path), "%s/gap.otc", test_dir);
	spill(gap_path, gap, size - (end - start));
	ck_assert_int_eq(capture_reader_open(&r, gap_path, NULL, 0), 0);
	ck_assert_int_eq(read_records_in(r, &layout), (long)(layout.records - lost));
	s = capture_reader_status(r);
	ck_assert_int_eq(s->end, CAPTURE_END_CORRUPT);
	ck_assert_uint_eq(s->damaged_chunks, 1);
	ck_assert_uint_eq(s->damaged_records, lost);
	snprintf(expected, sizeof(expected),
		 "chunk 3 is missing before offset %lu: 1 damaged chunk skipped, %lu records lost",
		 (unsigned long)start, (unsigned long)lost);
	ck_assert_msg(strstr(s->message, expected), "%s", s->message);
	capture_reader_close(r);
	free(gap);
	free(file);
}
END_TEST

/* Writes records 0, 1, 2, ... with a flush every 64 until killed. */
static void write_until_killed(void)
{
	struct capture_writer_opts opts = { .chunk_size = 4096, .target = "killed" };
	struct capture_writer *w;
	uint8_t data[4096];

	if (capture_writer_open(&w, sample_path, &opts))
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

		unlink(sample_path);
		child = fork();
		ck_assert_int_ge(child, 0);
		if (child == 0)
			write_until_killed();
		while ((stat(sample_path, &st) || st.st_size < kill_after[k]) && waited++ < 5000)
			usleep(1000);
		kill(child, SIGKILL);
		ck_assert_int_eq(waitpid(child, &status, 0), child);
		ck_assert_msg(WIFSIGNALED(status), "the writer exited %d", WEXITSTATUS(status));

		ck_assert_int_eq(capture_reader_open(&r, sample_path, NULL, 0), 0);
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
 * 64-byte records, 16 to a chunk of 1056 bytes (format 1, whose sizes are
 * simple sums; the writer's failure path is the same in both formats); the
 * file may grow to two chunks and room more bytes. The third chunk cannot
 * be written.
 */
static void write_into_limit(int pipe_fd, uint64_t room)
{
	struct capture_writer_opts opts = { .chunk_size = 1024, .format_major = 1 };
	struct full_disk_report report = { 0 };
	struct capture_writer_stats stats;
	struct capture_writer *w;
	struct rlimit limit;
	uint8_t data[56];
	uint64_t i;

	signal(SIGXFSZ, SIG_IGN);
	report.open_err = capture_writer_open(&w, sample_path, &opts);
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
	report.close_err = capture_close(w, sample_counters, 2);
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
	ck_assert_int_eq(stat(sample_path, &st), 0);
	ck_assert_int_eq(capture_reader_open(&r, sample_path, NULL, 0), 0);
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

static void check_refused(const void *data, size_t size, int err, const char *why_part)
{
	struct capture_reader *r = (void *)1;
	char why[256];

	spill(sample_path, data, size);
	ck_assert_int_eq(capture_reader_open(&r, sample_path, why, sizeof(why)), err);
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
	ck_assert_int_eq(capture_reader_open(&r, test_dir, why, sizeof(why)), -EISDIR);
	ck_assert_int_eq(capture_reader_open(&r, "/nonexistent/capture", why, sizeof(why)),
			 -ENOENT);
	ck_assert_msg(strstr(why, "cannot open"), "%s", why);

	/* a good header, then noise or zeros where the first chunk should be */
	write_capture(0, 512, 0, &layout);
	file = slurp(sample_path, &size);
	file = realloc(file, layout.header_size + sizeof(noise));
	memcpy(file + layout.header_size, noise, sizeof(noise));
	spill(sample_path, file, layout.header_size + sizeof(noise));
	ck_assert_int_eq(capture_reader_open(&r, sample_path, NULL, 0), 0);
	ck_assert_int_eq(read_records(r), 0);
	s = capture_reader_status(r);
	ck_assert_int_eq(s->end, CAPTURE_END_GARBAGE);
	ck_assert_msg(strstr(s->message, "holds no chunk") &&
			      strstr(s->message, "all its records are "),
		      "%s", s->message);
	capture_reader_close(r);

	memset(file + layout.header_size, 0, sizeof(noise));
	spill(sample_path, file, layout.header_size + sizeof(noise));
	ck_assert_int_eq(capture_reader_open(&r, sample_path, NULL, 0), 0);
	ck_assert_int_eq(read_records(r), 0);
	ck_assert_msg(strstr(capture_reader_status(r)->message, "zero bytes"), "%s",
		      capture_reader_status(r)->message);
	capture_reader_close(r);
	free(file);
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
	file = slurp(sample_path, &size);
	copy = malloc(size);
	ck_assert_ptr_nonnull(copy);
	snprintf(bad_path, sizeof(bad_path), "%s/bad.otc", test_dir);
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
		ck_assert_int_ge(read_records_in(r, &layout), 0);
		ck_assert_int_ne(capture_reader_status(r)->end, CAPTURE_END_NONE);
		capture_reader_close(r);
	}
	free(copy);
	free(file);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("capture_damage");
	TCase *tc = tcase_create("capture");

	tcase_add_checked_fixture(tc, sample_setup, test_dir_teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_cut_at_every_byte);
	tcase_add_test(tc, test_damaged_byte_loses_only_its_chunk);
	tcase_add_test(tc, test_missing_chunk_is_counted);
	tcase_add_test(tc, test_sigkill_mid_write);
	tcase_add_test(tc, test_full_disk_keeps_whole_chunks);
	tcase_add_test(tc, test_garbage_and_empty_files);
	tcase_add_test(tc, test_random_damage_never_crashes);
	suite_add_tcase(suite, tc);

	return run_suite(suite);
}
