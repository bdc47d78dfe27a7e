// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What each capture format costs the recorder and the readers, apart from
 * tracing: the records of a capture, held in memory, written again in
 * format 1 and in format 2 (capture_write() to a file, write() included),
 * then read back (capture_next()), ROUNDS times in turn; prints the median
 * ns per record of each and the bytes per record.
 *
 * Usage: capture_codec CAPTURE TMPFILE [ROUNDS]
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capture/capture.h"

struct held {
	uint16_t type;
	uint32_t size;
	void *data;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	struct held *records = NULL;
	size_t count = 0, capacity = 0;
	struct capture_reader *r;
	struct capture_record record;
	int rounds = argc > 3 ? atoi(argv[3]) : 5;
	double write_s[2][64], read_s[2][64];
	uint64_t bytes[2] = { 0 };
	char why[256];

	if (argc < 3 || rounds < 1 || rounds > 64) {
		fprintf(stderr, "usage: capture_codec CAPTURE TMPFILE [ROUNDS]\n");
		return 2;
	}
	if (capture_reader_open(&r, argv[1], why, sizeof(why))) {
		fprintf(stderr, "capture_codec: %s\n", why);
		return 1;
	}
	while (capture_next(r, &record) > 0) {
		if (count == capacity) {
			capacity = capacity ? capacity * 2 : 65536;
			records = realloc(records, capacity * sizeof(*records));
			if (!records)
				return 1;
		}
		records[count].type = record.type;
		records[count].size = record.size;
		records[count].data = malloc(record.size ? record.size : 1);
		if (!records[count].data)
			return 1;
		memcpy(records[count].data, record.data, record.size);
		count++;
	}
	capture_reader_close(r);

	for (int round = 0; round < rounds; round++) {
		for (int format = 1; format <= 2; format++) {
			struct capture_writer_opts opts = { .format_major = (uint16_t)format };
			struct capture_writer *w;
			double start = now_s();

			if (capture_writer_open(&w, argv[2], &opts))
				return 1;
			for (size_t i = 0; i < count; i++)
				capture_write(w, records[i].type, records[i].data, records[i].size);
			if (capture_close(w, NULL, 0))
				return 1;
			write_s[format - 1][round] = now_s() - start;
			start = now_s();
			if (capture_reader_open(&r, argv[2], why, sizeof(why)))
				return 1;
			while (capture_next(r, &record) > 0)
				;
			bytes[format - 1] = capture_reader_size(r);
			capture_reader_close(r);
			read_s[format - 1][round] = now_s() - start;
		}
	}
	printf("%zu records\n%-7s %10s %14s %13s\n", count, "format", "B/record", "write ns/rec",
	       "read ns/rec");
	for (int format = 0; format < 2; format++) {
		qsort(write_s[format], (size_t)rounds, sizeof(double), compare_double);
		qsort(read_s[format], (size_t)rounds, sizeof(double), compare_double);
		printf("%-7d %10.2f %14.1f %13.1f\n", format + 1, (double)bytes[format] / count,
		       write_s[format][rounds / 2] * 1e9 / count,
		       read_s[format][rounds / 2] * 1e9 / count);
	}
	remove(argv[2]);
	return 0;
}
