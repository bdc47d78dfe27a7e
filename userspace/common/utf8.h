/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one UTF-8 validator: every writer that passes a traced process's text
 * on (JSON, Legion Prof, the terminal) decides with it what is a character.
 */
#ifndef OPTRACE_COMMON_UTF8_H
#define OPTRACE_COMMON_UTF8_H

/* U+FFFD, what a byte that is not UTF-8 becomes. */
#define UTF8_REPLACEMENT "\xef\xbf\xbd"
#define UTF8_REPLACEMENT_LEN 3

/*
 * Length of the well-formed UTF-8 sequence at s (1 to 4), or 0 if it is not
 * one: the rules of RFC 3629, which Rust's String::from_utf8 (Legion Prof's
 * reader) and JSON parsers apply: no overlong forms, no surrogates, nothing
 * above U+10FFFF. Stops at a NUL, which is no continuation byte.
 */
unsigned int utf8_sequence_length(const unsigned char *s);

/* The code point of the well-formed sequence of length bytes at s. */
unsigned int utf8_code_point(const unsigned char *s, unsigned int length);

/*
 * Whether the well-formed sequence of length bytes at s is a control a
 * terminal or an editor acts on rather than shows: C0 and DEL, C1
 * (U+0080 to U+009F, which some terminals take as CSI and such), and the
 * bidirectional controls (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066
 * to U+2069), which reorder what is shown around them ("Trojan Source").
 */
int utf8_is_control(const unsigned char *s, unsigned int length);

#endif /* OPTRACE_COMMON_UTF8_H */
