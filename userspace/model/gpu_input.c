// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * GPU activity into the index, from where it was stored: a capture's GPU
 * records (a pass of their own) or an OPTRACE_GPU_FILE.
 */
#include <errno.h>
#include <linux/types.h>
#include <stdio.h>
#include <string.h>

#include <optrace/gpu.h>

#include "bpf/events.h"
#include "model/gpu_index.h"
#include "probes/cupti/gpufile.h"

int gpu_index_add_record(struct gpu_index *index, unsigned int type, const void *data,
			 size_t record_size)
{
	const struct record_event *event = data;

	if (record_size < sizeof(*event))
		return 0;
	switch (type) {
	case RECORD_GPU: {
		const struct record_gpu *gpu = data;
		size_t size;

		if (record_size < offsetof(struct record_gpu, data)) {
			index->stats.malformed++;
			return 0;
		}
		size = record_size - offsetof(struct record_gpu, data);
		if (gpu->size < size)
			size = gpu->size;
		return gpu_index_add(index, gpu->tgid, gpu->data, size);
	}
	case RECORD_GPU_NAME: {
		const struct record_gpu_name *name = data;
		char text[RECORD_GPU_NAME_LEN + 4];
		size_t length;

		if (record_size < sizeof(*name)) {
			index->stats.malformed++;
			return 0;
		}
		length = strnlen(name->text, sizeof(name->text));
		memcpy(text, name->text, length);
		strcpy(text + length, name->truncated ? "..." : "");
		return gpu_index_add_name(index, name->tgid, name->name_id,
					  name->unreadable ? "(unreadable)" : text);
	}
	case RECORD_GPU_DROPPED:
		if (event->gpu_dropped.source == OPTRACE_GPU_DROP_API_CALLBACK)
			index->stats.dropped_launches += event->gpu_dropped.records;
		else
			index->stats.dropped += event->gpu_dropped.records;
		return 0;
	default:
		return 0;
	}
}

bool gpu_index_is_file(const char *path)
{
	char magic[sizeof(OPTRACE_GPU_FILE_MAGIC)] = { 0 };
	FILE *file = fopen(path, "re");
	bool is_file;

	if (!file)
		return false;
	is_file = fread(magic, sizeof(magic), 1, file) == 1 &&
		  !memcmp(magic, OPTRACE_GPU_FILE_MAGIC, sizeof(magic));
	fclose(file);
	return is_file;
}

long gpu_index_read_file(struct gpu_index *index, const char *path, char *why, size_t why_size)
{
	struct gpu_file_reader reader;
	static char buffer[65536 + 8];
	char said[512];
	long count = 0;
	int size, err;

	if (why && why_size)
		why[0] = '\0';
	err = gpu_file_open(&reader, path);
	if (err) {
		gpu_file_open_error(&reader, err, said, sizeof(said));
		if (why)
			snprintf(why, why_size, "%s: %s", path, said);
		return err;
	}
	index->sources++;
	while ((size = gpu_file_next(&reader, buffer, sizeof(buffer) - 1)) > 0) {
		const struct optrace_gpu_head *head = (const void *)buffer;

		if (head->type == OPTRACE_GPU_REC_KERNEL_NAME &&
		    (size_t)size >= sizeof(struct optrace_gpu_kernel_name)) {
			const struct optrace_gpu_kernel_name *name = (const void *)buffer;
			uint32_t length = name->length;

			if (length > (uint32_t)size - sizeof(*name))
				length = (uint32_t)size - sizeof(*name);
			buffer[sizeof(*name) + length] = '\0';
			err = gpu_index_add_name(index, reader.header.pid, name->name_id,
						 buffer + sizeof(*name));
		} else {
			err = gpu_index_add(index, reader.header.pid, buffer, (size_t)size);
		}
		if (err)
			break;
		count++;
	}
	/* A file cut by a killed process, or damaged: what checks is kept, the rest said. */
	if (!err && size < 0 && size != -EPROTO)
		err = size;
	index->file_end = gpu_file_reader_status(&reader, said, sizeof(said));
	gpu_file_reader_close(&reader);
	if (err) {
		if (why)
			snprintf(why, why_size, "cannot read %s: %s", path, strerror(-err));
		return err;
	}
	if (why && said[0])
		snprintf(why, why_size, "%s: %s", path, said);
	return count;
}
