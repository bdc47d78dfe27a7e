// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Legion Prof reader's files: a whole file read into memory, raw or
 * through zlib, and a log read as legion_prof reads it (docs/legion-format.md §1.3).
 */
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include "legion_read.h"

void legion_blob_free(struct legion_blob *blob)
{
	free(blob->data);
	blob->data = NULL;
	blob->length = 0;
}

static int blob_reserve(struct legion_blob *blob, size_t *capacity)
{
	unsigned char *bigger;

	if (blob->length < *capacity)
		return 0;
	bigger = realloc(blob->data, *capacity * 2);
	if (!bigger)
		return -1;
	blob->data = bigger;
	*capacity *= 2;
	return 0;
}

int legion_blob_read(const char *path, bool gzip, struct legion_blob *blob)
{
	size_t capacity = 1 << 16;
	gzFile gz = NULL;
	FILE *file = NULL;
	long n;

	blob->length = 0;
	blob->data = malloc(capacity);
	if (gzip)
		gz = gzopen(path, "rb");
	else
		file = fopen(path, "rb");
	if (!blob->data || (!gz && !file))
		goto fail;
	for (;;) {
		if (blob_reserve(blob, &capacity))
			goto fail;
		if (gz)
			n = gzread(gz, blob->data + blob->length,
				   (unsigned int)(capacity - blob->length));
		else
			n = (long)fread(blob->data + blob->length, 1, capacity - blob->length,
					file);
		if (n < 0)
			goto fail;
		if (n == 0)
			break;
		blob->length += (size_t)n;
	}
	if (gz)
		gzclose(gz);
	if (file)
		fclose(file);
	return 0;
fail:
	if (gz)
		gzclose(gz);
	if (file)
		fclose(file);
	legion_blob_free(blob);
	return -1;
}

/* The first gzip member of raw, as flate2's GzDecoder reads it. */
static int gunzip_first_member(const struct legion_blob *raw, struct legion_blob *out, char *why,
			       size_t size)
{
	size_t capacity = 1 << 16;
	z_stream stream = { 0 };
	int ret = Z_OK;

	out->length = 0;
	out->data = malloc(capacity);
	if (!out->data || inflateInit2(&stream, 15 + 16) != Z_OK) {
		snprintf(why, size, "out of memory");
		legion_blob_free(out);
		return -1;
	}
	stream.next_in = raw->data;
	stream.avail_in = (unsigned int)raw->length;
	while (ret == Z_OK) {
		if (blob_reserve(out, &capacity)) {
			ret = Z_MEM_ERROR;
			break;
		}
		stream.next_out = out->data + out->length;
		stream.avail_out = (unsigned int)(capacity - out->length);
		ret = inflate(&stream, Z_NO_FLUSH);
		out->length = capacity - stream.avail_out;
		if (ret == Z_BUF_ERROR && stream.avail_out)
			break; /* the input ended inside the member */
	}
	inflateEnd(&stream);
	if (ret != Z_STREAM_END) {
		snprintf(why, size, "the gzip stream is cut or corrupt (zlib %d)", ret);
		legion_blob_free(out);
		return -1;
	}
	if (stream.avail_in) {
		snprintf(why, size,
			 "%u bytes after the first gzip member: the reader drops them (§1.3)",
			 stream.avail_in);
		legion_blob_free(out);
		return -1;
	}
	return 0;
}

int legion_blob_read_log(const char *path, struct legion_blob *blob, char *why, size_t size)
{
	struct legion_blob raw;
	int err;

	if (legion_blob_read(path, false, &raw)) {
		snprintf(why, size, "cannot read %s", path);
		return -1;
	}
	if (raw.length < 2 || raw.data[0] != 0x1f || raw.data[1] != 0x8b) {
		*blob = raw;
		return 0;
	}
	err = gunzip_first_member(&raw, blob, why, size);
	legion_blob_free(&raw);
	return err;
}
