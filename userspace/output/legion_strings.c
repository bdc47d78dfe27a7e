// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Strings for Legion Prof logs: legion_prof_sanitize(), which makes any text
 * safe for every string field of a record, and legion_prof_provenance_json(),
 * which builds a provenance the viewer splits into "key: value" lines.
 * Section numbers refer to shared/legion/FORMAT.md.
 */
#include <errno.h>
#include <string.h>

#include "common/utf8.h"
#include "output/json.h"
#include "output/legion_prof.h"

#define ELLIPSIS "\xe2\x80\xa6" /* U+2026, marks a cut string */
#define ELLIPSIS_LEN 3
#define FULLWIDTH_DOLLAR "\xef\xbc\x84" /* U+FF04, for '$' */

/* What the character at s becomes in a sanitised string; sets *consumed. */
static unsigned int sanitize_char(const unsigned char *s, unsigned int *consumed,
				  unsigned char *out)
{
	unsigned int n = utf8_sequence_length(s);

	*consumed = n ? n : 1;
	if (!n) {
		memcpy(out, UTF8_REPLACEMENT, UTF8_REPLACEMENT_LEN);
		return 3;
	}
	if ((n == 1 && (s[0] < 0x20 || s[0] == 0x7f)) || (n == 2 && s[0] == 0xc2 && s[1] < 0xa0)) {
		out[0] = ' '; /* C0, DEL and C1 controls */
		return 1;
	}
	if (n == 1 && s[0] == '$') {
		memcpy(out, FULLWIDTH_DOLLAR, 3);
		return 3;
	}
	memcpy(out, s, n);
	return n;
}

size_t legion_prof_sanitize(char *dst, size_t size, const char *src)
{
	const unsigned char *s = (const unsigned char *)(src ? src : "");
	size_t limit, length = 0, cut = 0;
	unsigned char piece[4];
	unsigned int n, consumed;

	if (!size)
		return 0;
	limit = size - 1 < LEGION_PROF_STRING_MAX ? size - 1 : LEGION_PROF_STRING_MAX;
	while (*s) {
		if (*s >= 0x20 && *s < 0x7f && *s != '$' && length < limit) {
			/* printable ASCII, the common case, kept as is */
			dst[length++] = (char)*s++;
			if (length + ELLIPSIS_LEN <= limit)
				cut = length;
			continue;
		}
		n = sanitize_char(s, &consumed, piece);
		if (length + n > limit) {
			/* too long: back to the last point where "…" still fits */
			if (limit >= ELLIPSIS_LEN) {
				memcpy(dst + cut, ELLIPSIS, ELLIPSIS_LEN);
				length = cut + ELLIPSIS_LEN;
			}
			break;
		}
		memcpy(dst + length, piece, n);
		length += n;
		s += consumed;
		if (length + ELLIPSIS_LEN <= limit)
			cut = length;
	}
	dst[length] = '\0';
	return length;
}

#define JSON_TEXT_MAX 1024
#define JSON_KEY_MAX 128
#define JSON_SIZE_MIN 64
/* Room a member needs to be worth writing: its punctuation and some text. */
#define JSON_MEMBER_MIN 48

struct text_out {
	char *buffer;
	size_t length;
	size_t limit; /* most bytes, without the NUL */
};

static void out_raw(struct text_out *out, const char *text)
{
	size_t n = strlen(text);

	memcpy(out->buffer + out->length, text, n);
	out->length += n;
	out->buffer[out->length] = '\0';
}

/* Appends "text" (sanitised to cap bytes, escaped), leaving reserve bytes free. */
static void out_json_string(struct text_out *out, const char *text, size_t cap, size_t reserve)
{
	char clean[JSON_TEXT_MAX + 1];
	size_t room = out->limit - out->length - reserve - 2;

	legion_prof_sanitize(clean, cap + 1, text);
	out_raw(out, "\"");
	out->length += json_escape_into(out->buffer + out->length, room + 1, clean);
	out_raw(out, "\"");
}

int legion_prof_provenance_json(char *dst, size_t size, const char *human,
				const struct legion_prof_kv *pairs, size_t count)
{
	struct text_out out = { dst, 0, LEGION_PROF_STRING_MAX };
	size_t i;

	if (size < JSON_SIZE_MIN)
		return -ENOSPC;
	if (size - 1 < out.limit)
		out.limit = size - 1;
	out_raw(&out, "[");
	out_json_string(&out, human, JSON_TEXT_MAX, strlen(", {}]"));
	out_raw(&out, ", {");
	for (i = 0; i < count; i++) {
		if (out.limit - out.length < JSON_MEMBER_MIN)
			break;
		if (i)
			out_raw(&out, ", ");
		/* the key may take half of what is left, the value the rest */
		out_json_string(&out, pairs[i].key, JSON_KEY_MAX,
				(out.limit - out.length) / 2 + strlen(": \"\"}]"));
		out_raw(&out, ": ");
		out_json_string(&out, pairs[i].value, JSON_TEXT_MAX, strlen("}]"));
	}
	out_raw(&out, "}]");
	return (int)out.length;
}
