/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The captures of the capture file's tests (test_capture*.c): records whose
 * type, size and bytes follow from their index, written to sample_path in
 * the test's private directory and read back checked, and whole files read
 * and rewritten to damage them.
 */
#ifndef OPTRACE_TEST_CAPTURE_SAMPLE_H
#define OPTRACE_TEST_CAPTURE_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "capture/capture.h"

#define SAMPLE_MAX_CHUNKS 4096

/* test_dir/capture.otc: set by sample_setup, a fixture with test_dir_teardown. */
extern char sample_path[4096];
void sample_setup(void);

/* Record i of every test capture: its type, size and bytes follow from i. */
uint32_t record_size(uint64_t i, uint32_t max_size);
void record_bytes(uint64_t i, uint8_t *data, uint32_t size);
uint16_t record_type(uint64_t i);

/* Where each record chunk of a written capture ends, and the records up to there. */
struct layout {
	uint64_t header_size;
	uint64_t chunk_end[SAMPLE_MAX_CHUNKS];
	uint64_t records_to[SAMPLE_MAX_CHUNKS];
	size_t chunks;
	uint64_t records;
	uint64_t file_size;
};

/* The counters a test capture closes with. */
extern const struct capture_counter sample_counters[2];

/* Writes count records to sample_path (flushing every flush_every, if not 0) and closes. */
void write_capture(uint64_t count, uint32_t chunk_size, uint64_t flush_every,
		   struct layout *layout);

/*
 * Reads every record, checking each against what was written with records
 * of at most max_size bytes; returns how many, or -1 at the first that
 * differs.
 */
long read_records_max(struct capture_reader *r, uint32_t max_size);
/* The same, with records of any size the file's chunks hold. */
long read_records(struct capture_reader *r);

/*
 * The same, where damaged chunks may have been skipped: each record is
 * checked against the one written at its place in its chunk (layout's).
 */
long read_records_in(struct capture_reader *r, const struct layout *layout);

/* A whole file (to free) and its size. */
uint8_t *slurp(const char *file, size_t *size);
/* Writes size bytes of data as the whole file. */
void spill(const char *file, const void *data, size_t size);

#endif /* OPTRACE_TEST_CAPTURE_SAMPLE_H */
