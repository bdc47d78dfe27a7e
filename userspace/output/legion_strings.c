// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Strings for Legion Prof logs: legion_prof_sanitize(), which makes any text
 * safe for every string field of a record, and legion_prof_provenance_json(),
 * which builds a provenance the viewer splits into "key: value" lines.
 * Section numbers refer to docs/legion-format.md.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
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
	if (utf8_is_control(s, n)) {
		out[0] = ' '; /* C0, DEL, C1 and bidirectional controls */
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

#define JSON_SIZE_MIN 64
/* A popup line: "key: value" stays narrower than the popup. */
#define LINE_KEY_MAX 32
#define LINE_VALUE_MAX 96
#define HUMAN_MAX 160
#define PAIRS_MAX 32

struct text_out {
	char *buffer;
	size_t length;
	size_t limit;  /* most bytes, without the NUL */
	bool overflow; /* something did not fit */
};

static void out_bytes(struct text_out *out, const char *text, size_t n)
{
	if (n > out->limit - out->length) {
		out->overflow = true;
		return;
	}
	memcpy(out->buffer + out->length, text, n);
	out->length += n;
	out->buffer[out->length] = '\0';
}

static void out_raw(struct text_out *out, const char *text)
{
	out_bytes(out, text, strlen(text));
}

#define BROKEN_BAR "\xc2\xa6" /* U+00A6, for '|' */

/*
 * Appends "text", sanitised to cap bytes and escaped; '|' becomes '¦', as
 * the legacy viewer would take one anywhere after the '$' for a new line.
 */
static void out_json_string(struct text_out *out, const char *text, size_t cap)
{
	char clean[LINE_VALUE_MAX + 1], barless[3 * LINE_VALUE_MAX + 1];
	char escaped[6 * 3 * LINE_VALUE_MAX + 1];
	size_t n = 0;

	legion_prof_sanitize(clean, cap + 1 < sizeof(clean) ? cap + 1 : sizeof(clean), text);
	for (const char *c = clean; *c; c++) {
		if (*c == '|') {
			memcpy(barless + n, BROKEN_BAR, 2);
			n += 2;
		} else {
			barless[n++] = *c;
		}
	}
	barless[n] = '\0';
	json_escape_into(escaped, sizeof(escaped), barless);
	out_raw(out, "\"");
	out_raw(out, escaped);
	out_raw(out, "\"");
}

/*
 * The legacy viewer splits "human$k,v|k,v" on '$', '|' and ',' and shows
 * no escapes: those characters (and JSON's quote and backslash) become
 * look-alikes in its part of the text, which then needs no JSON escape
 * (sanitised text has no control characters either).
 */
static void out_legacy(struct text_out *out, const char *text, size_t cap)
{
	static const struct {
		char c;
		const char *as;
	} look_alikes[] = {
		{ ',', "\xe2\x80\x9a" }, /* U+201A */
		{ '|', BROKEN_BAR },
		{ '"', "\xe2\x80\x9d" },  /* U+201D */
		{ '\\', "\xe2\x88\x96" }, /* U+2216 */
	};
	char clean[HUMAN_MAX + 1];
	const char *run = clean;

	legion_prof_sanitize(clean, cap + 1 < sizeof(clean) ? cap + 1 : sizeof(clean), text);
	/* Runs of characters that stay are copied whole, a look-alike in between. */
	for (const char *c = clean;; c++) {
		const char *as = NULL;

		for (size_t i = 0; *c && i < sizeof(look_alikes) / sizeof(look_alikes[0]); i++)
			if (*c == look_alikes[i].c)
				as = look_alikes[i].as;
		if (!as && *c)
			continue;
		out_bytes(out, run, (size_t)(c - run));
		if (!*c)
			break;
		out_raw(out, as);
		run = c + 1;
	}
}

static int compare_pairs(const void *a, const void *b)
{
	const struct legion_prof_kv *x = *(const struct legion_prof_kv *const *)a;
	const struct legion_prof_kv *y = *(const struct legion_prof_kv *const *)b;

	return strcmp(x->key, y->key);
}

/*
 * ["human$k2,v2|k1,v1,", {"k1": "v1", "k2": "v2"}] of the first count
 * pairs: the last ',' of the first part hides, from the legacy viewer's
 * split, the JSON that follows. out->overflow when it does not fit.
 */
static void out_provenance(struct text_out *out, const char *human,
			   const struct legion_prof_kv *const *pairs, size_t count)
{
	out_raw(out, "[\"");
	out_legacy(out, human, HUMAN_MAX);
	if (count)
		out_raw(out, "$");
	/* last first: the legacy viewer stacks its lines upwards, the first at the bottom */
	for (size_t i = count; i-- > 0;) {
		out_legacy(out, pairs[i]->key, LINE_KEY_MAX);
		out_raw(out, ",");
		out_legacy(out, pairs[i]->value, LINE_VALUE_MAX);
		out_raw(out, i ? "|" : ",");
	}
	out_raw(out, "\", {");
	for (size_t i = 0; i < count; i++) {
		if (i)
			out_raw(out, ", ");
		/* the key as the legacy viewer shows it: nothing there to escape */
		out_raw(out, "\"");
		out_legacy(out, pairs[i]->key, LINE_KEY_MAX);
		out_raw(out, "\": ");
		out_json_string(out, pairs[i]->value, LINE_VALUE_MAX);
	}
	out_raw(out, "}]");
}

int legion_prof_provenance_json(char *dst, size_t size, const char *human,
				const struct legion_prof_kv *pairs, size_t count)
{
	struct text_out out = { dst, 0, LEGION_PROF_STRING_MAX, false };
	const struct legion_prof_kv *sorted[PAIRS_MAX];
	size_t kept = 0;

	if (size < JSON_SIZE_MIN)
		return -ENOSPC;
	if (size - 1 < out.limit)
		out.limit = size - 1;
	/* The viewer shows the members sorted by key (serde_json's map): so does legacy. */
	for (size_t i = 0; i < count && kept < PAIRS_MAX; i++)
		if (pairs[i].key && pairs[i].value)
			sorted[kept++] = &pairs[i];
	qsort(sorted, kept, sizeof(sorted[0]), compare_pairs);
	/* A key once: the viewer's map would keep one, the legacy viewer show both. */
	for (size_t i = 1; i < kept;) {
		if (!strcmp(sorted[i]->key, sorted[i - 1]->key))
			memmove(&sorted[i], &sorted[i + 1], (--kept - i) * sizeof(sorted[0]));
		else
			i++;
	}
	/* Both viewers show the same lines: members that do not fit go from both. */
	for (size_t n = kept + 1; n-- > 0;) {
		out.length = 0;
		out.overflow = false;
		dst[0] = '\0';
		out_provenance(&out, human, sorted, n);
		if (!out.overflow)
			return (int)out.length;
	}
	out.length = 0;
	out.overflow = false;
	out_provenance(&out, "", sorted, 0);
	return (int)out.length;
}
