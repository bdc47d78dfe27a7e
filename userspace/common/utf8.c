// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "common/utf8.h"

static int is_continuation(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

unsigned int utf8_sequence_length(const unsigned char *s)
{
	/* The second byte's range excludes overlong forms, surrogates and > U+10FFFF. */
	unsigned char lo = 0x80, hi = 0xbf;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		return is_continuation(s[1]) ? 2 : 0;
	if (s[0] >= 0xe0 && s[0] <= 0xef) {
		if (s[0] == 0xe0)
			lo = 0xa0;
		else if (s[0] == 0xed)
			hi = 0x9f;
		return s[1] >= lo && s[1] <= hi && is_continuation(s[2]) ? 3 : 0;
	}
	if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		if (s[0] == 0xf0)
			lo = 0x90;
		else if (s[0] == 0xf4)
			hi = 0x8f;
		if (s[1] < lo || s[1] > hi || !is_continuation(s[2]) || !is_continuation(s[3]))
			return 0;
		return 4;
	}
	return 0;
}

unsigned int utf8_code_point(const unsigned char *s, unsigned int length)
{
	switch (length) {
	case 1:
		return s[0];
	case 2:
		return (unsigned int)(s[0] & 0x1f) << 6 | (s[1] & 0x3f);
	case 3:
		return (unsigned int)(s[0] & 0x0f) << 12 | (unsigned int)(s[1] & 0x3f) << 6 |
		       (s[2] & 0x3f);
	default:
		return (unsigned int)(s[0] & 0x07) << 18 | (unsigned int)(s[1] & 0x3f) << 12 |
		       (unsigned int)(s[2] & 0x3f) << 6 | (s[3] & 0x3f);
	}
}

int utf8_is_control(const unsigned char *s, unsigned int length)
{
	unsigned int code = utf8_code_point(s, length);

	return code < 0x20 || (code >= 0x7f && code <= 0x9f) || code == 0x61c || code == 0x200e ||
	       code == 0x200f || (code >= 0x202a && code <= 0x202e) ||
	       (code >= 0x2066 && code <= 0x2069);
}
