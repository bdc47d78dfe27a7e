/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The OPTRACE_GPU_FILE format (docs/cupti.md): struct
 * optrace_gpu_file_header, then records of include/optrace/gpu.h back to
 * back, each sized by its head. Native byte order.
 */
#ifndef OPTRACE_CUPTI_GPUFILE_H
#define OPTRACE_CUPTI_GPUFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <optrace/gpu.h>

struct gpu_file_writer {
	FILE *file;
	int error; /* the first write error (an errno), then nothing more is written */
};

/* Creates (truncates) path and writes the header. 0 or -errno. */
int gpu_file_create(struct gpu_file_writer *writer, const char *path);
/* record starts with its struct optrace_gpu_head. 0 or -errno. */
int gpu_file_write(struct gpu_file_writer *writer, const void *record);
int gpu_file_write_name(struct gpu_file_writer *writer, uint32_t name_id, const char *name);
int gpu_file_write_dropped(struct gpu_file_writer *writer, uint64_t count);
int gpu_file_flush(struct gpu_file_writer *writer);
/* Flushes and closes; returns the first error seen, or 0. */
int gpu_file_close(struct gpu_file_writer *writer);

struct gpu_file_reader {
	FILE *file;
	struct optrace_gpu_file_header header;
};

/* Opens path and checks its header. 0, -errno, or -EPROTO if not ours. */
int gpu_file_open(struct gpu_file_reader *reader, const char *path);
/*
 * Reads the next record into buffer (capacity bytes, at least 65535 holds
 * any). Returns its size, 0 at the end, -EPROTO for a truncated or
 * malformed record, -ENOBUFS if it does not fit.
 */
int gpu_file_next(struct gpu_file_reader *reader, void *buffer, size_t capacity);
void gpu_file_reader_close(struct gpu_file_reader *reader);

#endif /* OPTRACE_CUPTI_GPUFILE_H */
