/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The OPTRACE_GPU_FILE format (docs/cupti.md): struct
 * optrace_gpu_file_header, then blocks of records of include/optrace/gpu.h
 * with CRC-32s, then an end block. Native byte order. The reader finds
 * every damaged, missing or cut part, skips it and says so; it also reads
 * version 1 (records after the header, unchecked).
 */
#ifndef OPTRACE_CUPTI_GPUFILE_H
#define OPTRACE_CUPTI_GPUFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <optrace/gpu.h>

/* Record bytes of a block: a block is written once it holds this many. */
#define GPU_FILE_BLOCK_TARGET (16u << 10)
/* The most payload a reader takes in one block (any record fits). */
#define GPU_FILE_BLOCK_MAX (16u << 20)

struct gpu_file_writer {
	FILE *file;
	int error;	/* the first write error (an errno), then nothing more is written */
	uint8_t *block; /* the records of the block being filled */
	uint32_t used;
	uint32_t records;
	uint64_t sequence; /* of the next block */
	uint64_t total_records;
	uint64_t total_blocks;
};

/* Creates (truncates) path and writes the header. 0 or -errno. */
int gpu_file_create(struct gpu_file_writer *writer, const char *path);
/* record starts with its struct optrace_gpu_head. 0 or -errno. */
int gpu_file_write(struct gpu_file_writer *writer, const void *record);
int gpu_file_write_name(struct gpu_file_writer *writer, uint32_t name_id, const char *name);
int gpu_file_write_dropped(struct gpu_file_writer *writer, uint64_t count);
/* Writes the records so far as a block (if any), and the block to the file. */
int gpu_file_flush(struct gpu_file_writer *writer);
/* Flushes, writes the end block and closes; returns the first error seen, or 0. */
int gpu_file_close(struct gpu_file_writer *writer);

/* How reading a GPU file ended. */
enum gpu_file_end {
	GPU_FILE_END_NONE,	/* not at the end yet */
	GPU_FILE_END_CLEAN,	/* the end block was read (version 1: the end of the file) */
	GPU_FILE_END_NO_MARKER, /* the file ends after a whole block, with no end block */
	GPU_FILE_END_TRUNCATED, /* the file ends inside a block (or a version 1 record) */
	GPU_FILE_END_CORRUPT,	/* damage: parts were skipped, or reading stopped at it */
};

struct gpu_file_reader {
	FILE *file;
	struct optrace_gpu_file_header header; /* version 1: reserved and crc are 0 */
	/* Version 2: the block being read. */
	uint8_t *block;
	uint32_t block_capacity;
	uint32_t block_size;
	uint32_t block_pos;
	uint32_t block_records; /* its count, as its header says */
	uint64_t offset;	/* where the next block starts */
	uint64_t next_sequence;
	/* How reading went. */
	enum gpu_file_end end;
	uint64_t records;	  /* returned, all checked */
	uint64_t blocks;	  /* record blocks read whole */
	uint64_t damaged;	  /* damaged or missing parts skipped */
	uint64_t damaged_records; /* the records they held, as far as known */
	bool damaged_unknown;	  /* ... and more, uncounted (a damaged block header) */
	uint64_t trailing_bytes;  /* after the end block */
	char first_damage[192];	  /* what was wrong, the first time */
	char end_detail[192];	  /* how the file ends, when not cleanly */
};

/*
 * Opens path and checks its header. 0, -errno, -EPROTO if not a GPU file,
 * -EPROTONOSUPPORT for a newer version, -EBADMSG for a damaged header.
 * gpu_file_open_error() says which in a sentence.
 */
int gpu_file_open(struct gpu_file_reader *reader, const char *path);
void gpu_file_open_error(const struct gpu_file_reader *reader, int err, char *why, size_t size);
/*
 * Reads the next whole, checked record into buffer (capacity bytes, at
 * least 65535 holds any). Returns its size; 0 at the end; -EPROTO at the
 * end when the file ends inside a block or record (the process was
 * killed); -ENOBUFS if it does not fit; -EIO, -ENOMEM. A damaged or
 * missing part is skipped, and counted for gpu_file_reader_status().
 */
int gpu_file_next(struct gpu_file_reader *reader, void *buffer, size_t capacity);
/*
 * Once gpu_file_next() has returned 0 or -EPROTO: how reading went, worst
 * first (damage: GPU_FILE_END_CORRUPT), and in why (if not NULL) what was
 * lost or ignored in sentences, "" when nothing was.
 */
enum gpu_file_end gpu_file_reader_status(const struct gpu_file_reader *reader, char *why,
					 size_t size);
void gpu_file_reader_close(struct gpu_file_reader *reader);

#endif /* OPTRACE_CUPTI_GPUFILE_H */
