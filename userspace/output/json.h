/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one JSON string writer. The text comes from the traced process and is
 * untrusted: quotes, backslashes and control characters are escaped, and
 * bytes that are not valid UTF-8 (common/utf8.h) become U+FFFD, so the
 * output is always valid JSON.
 */
#ifndef OPTRACE_OUTPUT_JSON_H
#define OPTRACE_OUTPUT_JSON_H

#include <stddef.h>
#include <stdio.h>

/* Writes text as a JSON string literal, quotes included. */
void json_string(FILE *out, const char *text);

/* The same, handing the bytes of the literal, in pieces, to emit. */
typedef void (*json_emit_fn)(void *ctx, const char *bytes, size_t length);
void json_escape(const char *text, json_emit_fn emit, void *ctx);

/* Most bytes one character of text takes, escaped. */
#define JSON_CHAR_MAX 6

/*
 * The escaped form of the character at s (out: JSON_CHAR_MAX bytes); its
 * length. *consumed is how many bytes of s it stood for.
 */
unsigned int json_escape_char(const unsigned char *s, unsigned int *consumed, char *out);

/*
 * The literal's contents, without quotes, into dst (size bytes with the NUL),
 * cut before a character that does not fit whole: never half an escape.
 * Returns the length written.
 */
size_t json_escape_into(char *dst, size_t size, const char *src);

/*
 * text for a terminal: control characters and bytes that are not valid
 * UTF-8 become '?', so that a traced process's strings cannot forge lines or
 * send escape sequences. Cut to fit size; returns buffer.
 */
const char *printable_text(const char *text, char *buffer, size_t size);

#endif /* OPTRACE_OUTPUT_JSON_H */
