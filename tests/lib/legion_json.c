// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Legion Prof reader's text checks: UTF-8 as Rust's String::from_utf8
 * takes it, and JSON by serde_json's grammar, enough for provenances
 * (docs/legion-format.md §2.6).
 */
#include <string.h>

#include "legion_read.h"

bool legion_utf8_valid(const unsigned char *s, size_t length)
{
	size_t i = 0, n, k;
	uint32_t cp;

	while (i < length) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		if ((s[i] & 0xe0) == 0xc0)
			n = 2, cp = s[i] & 0x1f;
		else if ((s[i] & 0xf0) == 0xe0)
			n = 3, cp = s[i] & 0x0f;
		else if ((s[i] & 0xf8) == 0xf0)
			n = 4, cp = s[i] & 0x07;
		else
			return false;
		if (i + n > length)
			return false;
		for (k = 1; k < n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += n;
	}
	return true;
}

/* A strict JSON checker (serde_json's grammar), enough for provenances. */
struct json_cursor {
	const char *p;
	int depth;
};

static void json_space(struct json_cursor *j)
{
	while (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')
		j->p++;
}

static bool json_string_ok(struct json_cursor *j)
{
	if (*j->p++ != '"')
		return false;
	while (*j->p != '"') {
		unsigned char c = (unsigned char)*j->p++;

		if (c < 0x20)
			return false; /* also the end of the text */
		if (c != '\\')
			continue;
		c = (unsigned char)*j->p++;
		if (c == 'u') {
			for (int i = 0; i < 4; i++)
				if (!strchr("0123456789abcdefABCDEF", *j->p) || !*j->p++)
					return false;
		} else if (!c || !strchr("\"\\/bfnrt", c)) {
			return false;
		}
	}
	j->p++;
	return true;
}

static bool json_number_ok(struct json_cursor *j)
{
	const char *start;

	if (*j->p == '-')
		j->p++;
	start = j->p;
	while (*j->p >= '0' && *j->p <= '9')
		j->p++;
	if (j->p == start || (*start == '0' && j->p - start > 1))
		return false;
	if (*j->p == '.') {
		start = ++j->p;
		while (*j->p >= '0' && *j->p <= '9')
			j->p++;
		if (j->p == start)
			return false;
	}
	if (*j->p == 'e' || *j->p == 'E') {
		j->p++;
		if (*j->p == '+' || *j->p == '-')
			j->p++;
		start = j->p;
		while (*j->p >= '0' && *j->p <= '9')
			j->p++;
		if (j->p == start)
			return false;
	}
	return true;
}

static bool json_value_ok(struct json_cursor *j);

static bool json_members_ok(struct json_cursor *j, char close, bool keyed, size_t *count)
{
	*count = 0;
	json_space(j);
	if (*j->p == close) {
		j->p++;
		return true;
	}
	for (;;) {
		json_space(j);
		if (keyed) {
			if (!json_string_ok(j))
				return false;
			json_space(j);
			if (*j->p++ != ':')
				return false;
		}
		if (!json_value_ok(j))
			return false;
		(*count)++;
		json_space(j);
		if (*j->p == close) {
			j->p++;
			return true;
		}
		if (*j->p++ != ',')
			return false;
	}
}

static bool json_value_ok(struct json_cursor *j)
{
	size_t count;
	bool ok;

	json_space(j);
	if (*j->p == '"')
		return json_string_ok(j);
	if (*j->p == '{' || *j->p == '[') {
		bool object = *j->p++ == '{';

		if (++j->depth > 64)
			return false;
		ok = json_members_ok(j, object ? '}' : ']', object, &count);
		j->depth--;
		return ok;
	}
	if (!strncmp(j->p, "true", 4) || !strncmp(j->p, "null", 4)) {
		j->p += 4;
		return true;
	}
	if (!strncmp(j->p, "false", 5)) {
		j->p += 5;
		return true;
	}
	return json_number_ok(j);
}

int legion_provenance_members(const char *text)
{
	struct json_cursor j = { text, 0 };
	size_t count;

	json_space(&j);
	if (*j.p++ != '[')
		return -1;
	json_space(&j);
	if (!json_string_ok(&j))
		return -1;
	json_space(&j);
	if (*j.p++ != ',')
		return -1;
	json_space(&j);
	if (*j.p++ != '{' || !json_members_ok(&j, '}', true, &count))
		return -1;
	json_space(&j);
	if (*j.p++ != ']')
		return -1;
	json_space(&j);
	return *j.p ? -1 : (int)count;
}

bool legion_json_valid(const char *text)
{
	struct json_cursor j = { text, 0 };

	if (!json_value_ok(&j))
		return false;
	json_space(&j);
	return !*j.p;
}
