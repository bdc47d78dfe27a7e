// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>

#include "common/utf8.h"
#include "output/protowire.h"

/* Bodies up to this size get the shortest length; larger ones keep the reserved width. */
#define PW_COMPACT_MAX 4096

int pw_grow(struct pw_buf *buf, size_t more)
{
	size_t size = buf->size ? buf->size : 4096;
	uint8_t *data;

	if (buf->error)
		return buf->error;
	while (size < buf->used + more) {
		if (size > SIZE_MAX / 2)
			goto fail;
		size *= 2;
	}
	data = realloc(buf->data, size);
	if (!data)
		goto fail;
	buf->data = data;
	buf->size = size;
	return 0;
fail:
	buf->error = -ENOMEM;
	return buf->error;
}

void pw_free(struct pw_buf *buf)
{
	free(buf->data);
	*buf = (struct pw_buf){ 0 };
}

void pw_bytes(struct pw_buf *buf, uint32_t field, const void *bytes, size_t length)
{
	pw_tag(buf, field, PW_LEN);
	pw_varint(buf, length);
	if (!pw_room(buf, length))
		return;
	memcpy(buf->data + buf->used, bytes, length);
	buf->used += length;
}

void pw_string(struct pw_buf *buf, uint32_t field, const char *text)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t start;

	/* Mostly ASCII: as it is, in one go. */
	while (*s && *s < 0x80)
		s++;
	if (!*s) {
		pw_bytes(buf, field, text, (size_t)(s - (const unsigned char *)text));
		return;
	}
	start = pw_open(buf, field);
	s = (const unsigned char *)text;
	while (*s) {
		unsigned int n = utf8_sequence_length(s);
		const void *piece = n ? (const void *)s : UTF8_REPLACEMENT;
		size_t length = n ? n : UTF8_REPLACEMENT_LEN;

		if (!pw_room(buf, length))
			return;
		memcpy(buf->data + buf->used, piece, length);
		buf->used += length;
		s += n ? n : 1;
	}
	pw_close(buf, start);
}

void pw_close(struct pw_buf *buf, size_t start)
{
	size_t length = buf->used - start;
	unsigned int width = pw_varint_size(length);
	uint8_t *reserved;

	if (buf->error)
		return;
	if (length >= PW_LENGTH_LIMIT) {
		buf->error = -E2BIG;
		return;
	}
	reserved = buf->data + start - PW_LENGTH_RESERVED;
	if (length <= PW_COMPACT_MAX) {
		/* The shortest form, the body moved back over what it leaves. */
		pw_encode_varint(reserved, length);
		memmove(reserved + width, buf->data + start, length);
		buf->used -= PW_LENGTH_RESERVED - width;
		return;
	}
	/* Fixed width: continuation bits on all bytes but the last. */
	for (int i = 0; i < PW_LENGTH_RESERVED; i++) {
		reserved[i] = (uint8_t)(length >> (7 * i) & 0x7f);
		if (i < PW_LENGTH_RESERVED - 1)
			reserved[i] |= 0x80;
	}
}
