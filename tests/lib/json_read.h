/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A small JSON reader for checking optrace's --json output in tests. */
#ifndef OPTRACE_JSON_READ_H
#define OPTRACE_JSON_READ_H

#include <stddef.h>

enum jv_type { JV_NULL, JV_BOOL, JV_NUMBER, JV_STRING, JV_ARRAY, JV_OBJECT };

struct jv {
	enum jv_type type;
	double number;
	char *string;	   /* JV_STRING */
	char **keys;	   /* JV_OBJECT */
	struct jv **items; /* JV_ARRAY and JV_OBJECT values */
	size_t count;
};

/* The value in text, or NULL if it is not valid JSON. */
struct jv *jv_parse(const char *text);
void jv_free(struct jv *value);

/* Member key of an object, or NULL. */
const struct jv *jv_get(const struct jv *object, const char *key);
/* Member key as a number / string; 0 / "" when absent or of another type. */
double jv_number(const struct jv *object, const char *key);
const char *jv_string(const struct jv *object, const char *key);

#endif /* OPTRACE_JSON_READ_H */
