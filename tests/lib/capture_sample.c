// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The captures of the capture file's tests: written record by record with
 * the chunks' ends noted, read back checked against their index, and whole
 * files read and rewritten.
 */
#include <fcntl.h>
#include <linux/types.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpf/events.h"
#include "capture_sample.h"
#include "testlib.h"

char sample_path[4096];

void sample_setup(void)
{
	test_dir_setup();
	snprintf(sample_path, sizeof(sample_path), "%s/capture.otc", test_dir);
}

/*
 * Every fourth record is a probe event as the recorder writes it, which
 * format 2 encodes compactly; the rest are bytes of every size, which it
 * keeps raw.
 */
static bool is_event(uint64_t i)
{
	return i % 4 == 2 && i % 97 != 96 && i % 5 != 0;
}

uint32_t record_size(uint64_t i, uint32_t max_size)
{
	static const uint32_t edges[] = { 0, 1, 7, 8, 9, 63, 64, 65 };

	if (i % 97 == 96)
		return max_size;
	if (i % 5 == 0)
		return edges[(i / 5) % 8];
	if (is_event(i) && max_size >= sizeof(struct record_event))
		return sizeof(struct record_event);
	return (uint32_t)((i * 37) % 300) % (max_size + 1);
}

void record_bytes(uint64_t i, uint8_t *data, uint32_t size)
{
	/* The args[] each of record_type()'s kinds uses (bpf/events.h). */
	static const unsigned int args[8] = { 0, 3, 5, 2, 3, 3, 5, 4 };

	if (is_event(i) && size == sizeof(struct record_event)) {
		struct record_event event = {
			.timestamp = 1000000000 + i * 1337,
			.tgid = (__u32)(100 + i % 3),
			.tid = (__u32)(100 + i % 3 + i % 2),
			.type = record_type(i),
			.cpu = (__u16)(i % 2),
			.ns_tid = (__u32)(i % 2),
		};

		for (unsigned int a = 0; a < args[event.type]; a++)
			event.args[a] = i * 31 + a * 1000003;
		memcpy(data, &event, sizeof(event));
		return;
	}
	for (uint32_t j = 0; j < size; j++)
		data[j] = (uint8_t)(i * 131 + j * 7 + 1);
}

uint16_t record_type(uint64_t i)
{
	return (uint16_t)(i % 7 + 1);
}

static void note_chunks(struct capture_writer *w, struct layout *layout)
{
	struct capture_writer_stats stats;

	capture_writer_stats(w, &stats);
	if (stats.chunks > layout->chunks) {
		ck_assert_uint_lt(layout->chunks, SAMPLE_MAX_CHUNKS);
		layout->chunk_end[layout->chunks] = stats.file_bytes;
		layout->records_to[layout->chunks] = stats.records;
		layout->chunks++;
	}
}

const struct capture_counter sample_counters[2] = {
	{ "lost.ringbuf", 12 },
	{ "lost.kernel", 7 },
};

void write_capture(uint64_t count, uint32_t chunk_size, uint64_t flush_every, struct layout *layout)
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
	ck_assert_int_eq(capture_writer_open(&w, sample_path, &opts), 0);
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
	ck_assert_int_eq(capture_close(w, sample_counters, 2), 0);
	free(data);
}

long read_records_max(struct capture_reader *r, uint32_t max_size)
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

long read_records_in(struct capture_reader *r, const struct layout *layout)
{
	static uint8_t expected[CAPTURE_CHUNK_DEFAULT];
	uint32_t max_size = capture_reader_header(r)->chunk_size - CAPTURE_RECORD_OVERHEAD;
	struct capture_record record;
	uint64_t chunk = UINT64_MAX, index = 0;
	long count = 0;
	int err;

	while ((err = capture_next(r, &record)) > 0) {
		uint32_t size;

		if (record.chunk >= layout->chunks)
			return -1;
		if (record.chunk != chunk) {
			chunk = record.chunk;
			index = chunk ? layout->records_to[chunk - 1] : 0;
		}
		size = record_size(index, max_size);
		if (record.type != record_type(index) || record.size != size ||
		    (uintptr_t)record.data % 8)
			return -1;
		record_bytes(index, expected, size);
		if (memcmp(record.data, expected, size))
			return -1;
		index++;
		count++;
	}
	ck_assert_int_eq(err, 0);
	ck_assert_int_ne(capture_reader_status(r)->end, CAPTURE_END_NONE);
	return count;
}

long read_records(struct capture_reader *r)
{
	return read_records_max(r, capture_reader_header(r)->chunk_size - CAPTURE_RECORD_OVERHEAD);
}

uint8_t *slurp(const char *file, size_t *size)
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
void spill(const char *file, const void *data, size_t size)
{
	int fd = open(file, O_WRONLY | O_CREAT, 0600);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, data, size, 0), (ssize_t)size);
	ck_assert_int_eq(ftruncate(fd, (off_t)size), 0);
	close(fd);
}
