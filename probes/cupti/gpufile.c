// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The OPTRACE_GPU_FILE format: writer and reader. */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpufile.h"

#define NAME_MAX_LENGTH (UINT16_MAX - sizeof(struct optrace_gpu_kernel_name))

static int put(struct gpu_file_writer *writer, const void *data, size_t size)
{
	if (writer->error)
		return -writer->error;
	if (fwrite(data, 1, size, writer->file) != size) {
		writer->error = errno ? errno : EIO;
		return -writer->error;
	}
	return 0;
}

int gpu_file_create(struct gpu_file_writer *writer, const char *path)
{
	struct optrace_gpu_file_header header = { 0 };
	struct timespec now;
	int err;

	writer->error = 0;
	writer->file = fopen(path, "we");
	if (!writer->file)
		return -errno;
	clock_gettime(CLOCK_MONOTONIC, &now);
	memcpy(header.magic, OPTRACE_GPU_FILE_MAGIC, sizeof(OPTRACE_GPU_FILE_MAGIC));
	header.version = OPTRACE_GPU_FILE_VERSION;
	header.header_size = sizeof(header);
	header.pid = getpid();
	header.clock_id = CLOCK_MONOTONIC;
	header.record_version = OPTRACE_GPU_RECORD_VERSION;
	header.created_ns = (uint64_t)now.tv_sec * 1000000000ull + now.tv_nsec;
	err = put(writer, &header, sizeof(header));
	if (err) {
		fclose(writer->file);
		writer->file = NULL;
	}
	return err;
}

int gpu_file_write(struct gpu_file_writer *writer, const void *record)
{
	struct optrace_gpu_head head;

	memcpy(&head, record, sizeof(head));
	if (head.size < sizeof(head))
		return -EINVAL;
	return put(writer, record, head.size);
}

int gpu_file_write_name(struct gpu_file_writer *writer, uint32_t name_id, const char *name)
{
	struct optrace_gpu_kernel_name record = { 0 };
	size_t length = strlen(name);
	int err;

	if (length > NAME_MAX_LENGTH)
		length = NAME_MAX_LENGTH;
	record.head.type = OPTRACE_GPU_REC_KERNEL_NAME;
	record.head.version = OPTRACE_GPU_RECORD_VERSION;
	record.head.size = sizeof(record) + length;
	record.name_id = name_id;
	record.length = length;
	err = put(writer, &record, sizeof(record));
	if (!err)
		err = put(writer, name, length);
	return err;
}

int gpu_file_write_dropped(struct gpu_file_writer *writer, uint64_t count)
{
	struct optrace_gpu_dropped record = { 0 };

	record.head.type = OPTRACE_GPU_REC_DROPPED;
	record.head.version = OPTRACE_GPU_RECORD_VERSION;
	record.head.size = sizeof(record);
	record.count = count;
	return put(writer, &record, sizeof(record));
}

int gpu_file_flush(struct gpu_file_writer *writer)
{
	if (writer->error)
		return -writer->error;
	if (fflush(writer->file)) {
		writer->error = errno ? errno : EIO;
		return -writer->error;
	}
	return 0;
}

int gpu_file_close(struct gpu_file_writer *writer)
{
	int err;

	if (!writer->file)
		return 0;
	gpu_file_flush(writer);
	if (fclose(writer->file) && !writer->error)
		writer->error = errno ? errno : EIO;
	writer->file = NULL;
	err = writer->error;
	return err ? -err : 0;
}

int gpu_file_open(struct gpu_file_reader *reader, const char *path)
{
	int err = -EPROTO;

	reader->file = fopen(path, "re");
	if (!reader->file)
		return -errno;
	if (fread(&reader->header, sizeof(reader->header), 1, reader->file) != 1)
		goto fail;
	if (memcmp(reader->header.magic, OPTRACE_GPU_FILE_MAGIC, sizeof(OPTRACE_GPU_FILE_MAGIC)) ||
	    reader->header.version != OPTRACE_GPU_FILE_VERSION ||
	    reader->header.header_size < sizeof(reader->header))
		goto fail;
	/* A later version may have a longer header. */
	if (fseek(reader->file, reader->header.header_size, SEEK_SET))
		goto fail;
	return 0;
fail:
	fclose(reader->file);
	reader->file = NULL;
	return err;
}

int gpu_file_next(struct gpu_file_reader *reader, void *buffer, size_t capacity)
{
	struct optrace_gpu_head head;
	size_t got;

	got = fread(&head, 1, sizeof(head), reader->file);
	if (got == 0 && feof(reader->file))
		return 0;
	if (got != sizeof(head) || head.size < sizeof(head))
		return -EPROTO;
	if (head.size > capacity)
		return -ENOBUFS;
	memcpy(buffer, &head, sizeof(head));
	if (fread((char *)buffer + sizeof(head), 1, head.size - sizeof(head), reader->file) !=
	    head.size - sizeof(head))
		return -EPROTO;
	return head.size;
}

void gpu_file_reader_close(struct gpu_file_reader *reader)
{
	if (reader->file)
		fclose(reader->file);
	reader->file = NULL;
}
