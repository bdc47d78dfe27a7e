// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdint.h>
#include <string.h>

#include "json.h"

int utf8_sequence_length(const unsigned char *s)
{
	int length, i;
	uint32_t code;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		length = 2;
		code = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		length = 3;
		code = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		length = 4;
		code = s[0] & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < length; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		code = (code << 6) | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and values past U+10FFFF are invalid. */
	if ((length == 2 && code < 0x80) || (length == 3 && code < 0x800) ||
	    (length == 4 && (code < 0x10000 || code > 0x10ffff)) ||
	    (code >= 0xd800 && code <= 0xdfff))
		return 0;
	return length;
}

/* Printable ASCII that JSON takes as it is. */
static int is_plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

void json_escape(const char *text, json_emit_fn emit, void *ctx)
{
	const unsigned char *s = (const unsigned char *)text;
	char escaped[8];

	emit(ctx, "\"", 1);
	while (*s) {
		const unsigned char *run = s;
		int length;

		/* Names are mostly plain: pass them on in one go. */
		while (is_plain(*s))
			s++;
		if (s > run)
			emit(ctx, (const char *)run, (size_t)(s - run));
		if (!*s)
			break;
		length = utf8_sequence_length(s);
		if (length == 0) {
			emit(ctx, "\\ufffd", 6);
			s++;
		} else if (*s == '"' || *s == '\\') {
			escaped[0] = '\\';
			escaped[1] = (char)*s++;
			emit(ctx, escaped, 2);
		} else if (*s < 0x20 || *s == 0x7f) {
			snprintf(escaped, sizeof(escaped), "\\u%04x", *s++);
			emit(ctx, escaped, 6);
		} else {
			emit(ctx, (const char *)s, (size_t)length);
			s += length;
		}
	}
	emit(ctx, "\"", 1);
}

static void emit_to_file(void *ctx, const char *bytes, size_t length)
{
	fwrite(bytes, 1, length, ctx);
}

void json_string(FILE *out, const char *text)
{
	json_escape(text, emit_to_file, out);
}

const char *printable_text(const char *text, char *buffer, size_t size)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t used = 0;

	while (*s && used + 5 < size) {
		int length = utf8_sequence_length(s);

		if (length == 0 || *s < 0x20 || *s == 0x7f) {
			buffer[used++] = '?';
			s++;
			continue;
		}
		memcpy(buffer + used, s, (size_t)length);
		used += (size_t)length;
		s += length;
	}
	buffer[used] = '\0';
	return buffer;
}
