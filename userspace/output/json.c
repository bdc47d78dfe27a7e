// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>

#include "common/utf8.h"
#include "output/json.h"

/* Printable ASCII that JSON takes as it is. */
static int is_plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

unsigned int json_escape_char(const unsigned char *s, unsigned int *consumed, char *out)
{
	static const char hex[] = "0123456789abcdef";
	unsigned int n = utf8_sequence_length(s);

	*consumed = n ? n : 1;
	if (!n) {
		memcpy(out, UTF8_REPLACEMENT, UTF8_REPLACEMENT_LEN);
		return UTF8_REPLACEMENT_LEN;
	}
	if (s[0] == '"' || s[0] == '\\') {
		out[0] = '\\';
		out[1] = (char)s[0];
		return 2;
	}
	if (s[0] < 0x20 || s[0] == 0x7f) {
		const char *short_form = s[0] ? strchr("\b\f\n\r\t", s[0]) : NULL;

		out[0] = '\\';
		if (short_form) {
			out[1] = "bfnrt"[short_form - "\b\f\n\r\t"];
			return 2;
		}
		memcpy(out + 1, "u00", 3);
		out[4] = hex[s[0] >> 4];
		out[5] = hex[s[0] & 0xf];
		return 6;
	}
	if (utf8_is_control(s, n)) {
		/* C1 and bidirectional controls: escaped, so that `cat` of the JSON shows them. */
		unsigned int code = utf8_code_point(s, n);

		out[0] = '\\';
		out[1] = 'u';
		for (int i = 0; i < 4; i++)
			out[2 + i] = hex[(code >> (12 - 4 * i)) & 0xf];
		return 6;
	}
	memcpy(out, s, n);
	return n;
}

void json_escape(const char *text, json_emit_fn emit, void *ctx)
{
	const unsigned char *s = (const unsigned char *)text;
	char piece[JSON_CHAR_MAX];
	unsigned int consumed, n;

	emit(ctx, "\"", 1);
	while (*s) {
		const unsigned char *run = s;

		/* Names are mostly plain: pass them on in one go. */
		while (is_plain(*s))
			s++;
		if (s > run)
			emit(ctx, (const char *)run, (size_t)(s - run));
		if (!*s)
			break;
		n = json_escape_char(s, &consumed, piece);
		emit(ctx, piece, n);
		s += consumed;
	}
	emit(ctx, "\"", 1);
}

size_t json_escape_into(char *dst, size_t size, const char *src)
{
	const unsigned char *s = (const unsigned char *)(src ? src : "");
	unsigned int n, consumed;
	size_t length = 0;
	char piece[JSON_CHAR_MAX];

	if (!size)
		return 0;
	while (*s) {
		n = json_escape_char(s, &consumed, piece);
		if (length + n > size - 1)
			break;
		memcpy(dst + length, piece, n);
		length += n;
		s += consumed;
	}
	dst[length] = '\0';
	return length;
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
		unsigned int length = utf8_sequence_length(s);

		if (length == 0 || utf8_is_control(s, length)) {
			buffer[used++] = '?';
			s += length ? length : 1;
			continue;
		}
		memcpy(buffer + used, s, length);
		used += length;
		s += length;
	}
	buffer[used] = '\0';
	return buffer;
}
