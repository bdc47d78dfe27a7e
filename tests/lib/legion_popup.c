// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"
#include "legion_popup.h"

static void add_line(struct legion_popup *popup, const char *key, const char *value,
		     size_t value_length)
{
	char *line;
	size_t used = 0, n;

	if (popup->count == LEGION_POPUP_LINES)
		return;
	line = popup->lines[popup->count++];
	if (key) {
		n = strnlen(key, LEGION_POPUP_LINE / 2);
		memcpy(line, key, n);
		memcpy(line + n, ": ", 2);
		used = n + 2;
	}
	n = value_length < LEGION_POPUP_LINE - 1 - used ? value_length
							: LEGION_POPUP_LINE - 1 - used;
	memcpy(line + used, value, n);
	line[used + n] = '\0';
}

static int compare_keys(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void legion_popup_viewer(const char *provenance, struct legion_popup *popup)
{
	struct jv *value = jv_parse(provenance);
	const struct jv *object;

	popup->count = 0;
	if (!value || value->type != JV_ARRAY || value->count != 2 ||
	    value->items[1]->type != JV_OBJECT) {
		add_line(popup, NULL, provenance, strlen(provenance));
		jv_free(value);
		return;
	}
	object = value->items[1];
	{
		char **keys = calloc(object->count + 1, sizeof(*keys));

		for (size_t i = 0; keys && i < object->count; i++)
			keys[i] = object->keys[i];
		if (keys)
			qsort(keys, object->count, sizeof(*keys), compare_keys);
		for (size_t i = 0; keys && i < object->count; i++) {
			const char *text = jv_string(object, keys[i]);

			add_line(popup, keys[i], text, strlen(text));
		}
		free(keys);
	}
	jv_free(value);
}

void legion_popup_legacy(const char *provenance, struct legion_popup *popup)
{
	const char *dollar = strchr(provenance, '$');
	const char *pair;

	popup->count = 0;
	if (!dollar || strchr(dollar + 1, '$')) {
		add_line(popup, "Provenance", provenance, strlen(provenance));
		return;
	}
	for (pair = dollar + 1;;) {
		const char *end = strchr(pair, '|');
		size_t length = end ? (size_t)(end - pair) : strlen(pair);
		const char *comma = memchr(pair, ',', length);
		char key[LEGION_POPUP_LINE];
		const char *value = comma ? comma + 1 : "undefined";
		size_t value_length;

		snprintf(key, sizeof(key), "%.*s", (int)(comma ? comma - pair : (long)length),
			 pair);
		/* tokens[1]: up to the next ',' of the pair */
		if (comma) {
			const char *next = memchr(value, ',', length - (size_t)(value - pair));

			value_length =
				next ? (size_t)(next - value) : length - (size_t)(value - pair);
		} else {
			value_length = strlen(value);
		}
		add_line(popup, key, value, value_length);
		if (!end)
			break;
		pair = end + 1;
	}
	/* getMouseOver draws each line above the one before: the last pair is on top */
	for (int i = 0, k = popup->count - 1; i < k; i++, k--) {
		char swap[LEGION_POPUP_LINE];

		memcpy(swap, popup->lines[i], sizeof(swap));
		memcpy(popup->lines[i], popup->lines[k], sizeof(swap));
		memcpy(popup->lines[k], swap, sizeof(swap));
	}
}

const char *legion_popup_value(const struct legion_popup *popup, const char *key)
{
	size_t n = strlen(key);

	for (int i = 0; i < popup->count; i++)
		if (!strncmp(popup->lines[i], key, n) && !strncmp(popup->lines[i] + n, ": ", 2))
			return popup->lines[i] + n + 2;
	return NULL;
}

int legion_popup_width(const struct legion_popup *popup)
{
	int widest = 0;

	for (int i = 0; i < popup->count; i++) {
		int width = 0;

		for (const unsigned char *c = (const unsigned char *)popup->lines[i]; *c; c++)
			width += (*c & 0xc0) != 0x80;
		widest = width > widest ? width : widest;
	}
	return widest;
}

void legion_popup_human(const char *provenance, char *human, unsigned int size)
{
	struct jv *value = jv_parse(provenance);
	const char *text = "";

	if (value && value->type == JV_ARRAY && value->count == 2 &&
	    value->items[0]->type == JV_STRING)
		text = value->items[0]->string;
	snprintf(human, size, "%.*s", (int)strcspn(text, "$"), text);
	jv_free(value);
}
