/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef OPTRACE_JSON_H
#define OPTRACE_JSON_H

#include <stddef.h>
#include <stdio.h>

/*
 * Writes s as a JSON string literal. The text comes from the traced process
 * and is untrusted: quotes, backslashes and control characters are escaped,
 * and bytes that are not valid UTF-8 become U+FFFD, so the output is always
 * valid JSON.
 */
void json_string(FILE *out, const char *s);

/* The same, handing the bytes of the literal, in pieces, to emit. */
typedef void (*json_emit_fn)(void *ctx, const char *bytes, size_t length);
void json_escape(const char *text, json_emit_fn emit, void *ctx);

/* Length of the valid UTF-8 sequence at s (1 to 4), or 0 if it is not one. */
int utf8_sequence_length(const unsigned char *s);

/*
 * text for a terminal: control characters and bytes that are not valid
 * UTF-8 become '?', so that a traced process's strings cannot forge lines or
 * send escape sequences. Cut to fit size; returns buffer.
 */
const char *printable_text(const char *text, char *buffer, size_t size);

#endif /* OPTRACE_JSON_H */
