/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A writer of the protobuf wire format, as protobuf.dev's "Encoding" page
 * documents it: a message is a run of fields, each a tag (field number << 3
 * | wire type, as a varint) and a value: a varint (wire type 0), eight
 * little-endian bytes (1), or a varint length and that many bytes (2:
 * strings, bytes, nested messages). Varints are little-endian groups of 7
 * bits, the high bit set on every byte but the last.
 *
 * Messages are built into a growable buffer. A nested message is opened
 * with a reserved length and closed once its size is known: the length is
 * then written in the fewest bytes and the body moved back over the bytes
 * left unused, or, for a body too large to be worth moving, kept as a
 * fixed-width varint with redundant continuation bytes (0x85 0x80 0x80 0x00
 * for 5), which the encoding allows: parsers read a varint of up to ten
 * bytes whatever its value.
 */
#ifndef OPTRACE_OUTPUT_PROTOWIRE_H
#define OPTRACE_OUTPUT_PROTOWIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Wire types: a varint, 8 bytes, a length and its bytes, 4 bytes. */
enum pw_wire_type { PW_VARINT = 0, PW_I64 = 1, PW_LEN = 2, PW_I32 = 5 };

/* The most bytes a varint takes (a 64-bit value), and a tag (a 32-bit one). */
#define PW_VARINT_MAX 10
#define PW_TAG_MAX 5

/* What pw_open() reserves for a length: a body of up to 2^28 - 1 bytes. */
#define PW_LENGTH_RESERVED 4
#define PW_LENGTH_LIMIT ((size_t)1 << (7 * PW_LENGTH_RESERVED))

struct pw_buf {
	uint8_t *data;
	size_t used;
	size_t size;
	int error; /* the first error (-ENOMEM, -E2BIG): what follows is dropped */
};

/* Makes room for more bytes past used; 0, or -ENOMEM (then set in error). */
int pw_grow(struct pw_buf *buf, size_t more);

void pw_free(struct pw_buf *buf);

/* True if n more bytes fit, after growing if need be. */
static inline bool pw_room(struct pw_buf *buf, size_t n)
{
	return __builtin_expect(buf->used + n <= buf->size, 1) || !pw_grow(buf, n);
}

/* How many bytes value takes as a varint: 1 to 10. */
static inline unsigned int pw_varint_size(uint64_t value)
{
	return (unsigned int)(64 - __builtin_clzll(value | 1) + 6) / 7;
}

/* Writes value as a varint at p, which has room; returns the byte after it. */
static inline uint8_t *pw_encode_varint(uint8_t *p, uint64_t value)
{
	while (value >= 0x80) {
		*p++ = (uint8_t)(value | 0x80);
		value >>= 7;
	}
	*p++ = (uint8_t)value;
	return p;
}

static inline void pw_varint(struct pw_buf *buf, uint64_t value)
{
	if (pw_room(buf, PW_VARINT_MAX))
		buf->used = (size_t)(pw_encode_varint(buf->data + buf->used, value) - buf->data);
}

static inline void pw_tag(struct pw_buf *buf, uint32_t field, enum pw_wire_type type)
{
	pw_varint(buf, (uint64_t)field << 3 | type);
}

/* A varint field: uint32, uint64, int32 and int64 of non-negative values, bool, enum. */
static inline void pw_uint(struct pw_buf *buf, uint32_t field, uint64_t value)
{
	pw_tag(buf, field, PW_VARINT);
	pw_varint(buf, value);
}

/* A fixed64 field: eight bytes, least significant first. */
static inline void pw_fixed64(struct pw_buf *buf, uint32_t field, uint64_t value)
{
	pw_tag(buf, field, PW_I64);
	if (!pw_room(buf, 8))
		return;
	for (int i = 0; i < 8; i++)
		buf->data[buf->used++] = (uint8_t)(value >> (8 * i));
}

/* A length-delimited field holding length bytes as they are. */
void pw_bytes(struct pw_buf *buf, uint32_t field, const void *bytes, size_t length);

/*
 * A string field from NUL-terminated text, made valid UTF-8 as protobuf's
 * strings must be: each byte that starts no well-formed sequence
 * (common/utf8.h) becomes U+FFFD, as the JSON writer makes it.
 */
void pw_string(struct pw_buf *buf, uint32_t field, const char *text);

/*
 * Opens a nested message (or any length-delimited field): writes its tag and
 * reserves its length. Returns where its body starts, for pw_close().
 */
static inline size_t pw_open(struct pw_buf *buf, uint32_t field)
{
	pw_tag(buf, field, PW_LEN);
	if (pw_room(buf, PW_LENGTH_RESERVED))
		buf->used += PW_LENGTH_RESERVED;
	return buf->used;
}

/* Closes the field that pw_open() returned start for: its length is written. */
void pw_close(struct pw_buf *buf, size_t start);

#endif /* OPTRACE_OUTPUT_PROTOWIRE_H */
