// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Interned strings: the names and call sites handed to the probes, copied
 * once into a bounded table and never freed (the probes carry pointers).
 */
#include "optrace_module.h"

#include <stdlib.h>
#include <string.h>

#define INTERN_SLOTS (2 * INTERN_MAX) /* a power of two, at most half full */

/* ---- interned strings ------------------------------------------------------ */

struct intern_entry {
	const char *str;
	size_t len;
	uint32_t hash;
};

static struct intern_entry *intern_table;
static size_t intern_count;

static uint32_t hash_bytes(const char *s, size_t len)
{
	uint32_t hash = 2166136261u;

	for (size_t i = 0; i < len; i++) {
		hash ^= (unsigned char)s[i];
		hash *= 16777619u;
	}
	return hash;
}

/* A copy of s[0..len) that lives as long as the process; NULL if out of memory. */
const char *intern_bytes(const char *s, size_t len)
{
	uint32_t hash = hash_bytes(s, len);
	struct intern_entry *entry;
	size_t slot;
	char *copy;

	if (!intern_table) {
		intern_table = calloc(INTERN_SLOTS, sizeof(*intern_table));
		if (!intern_table)
			goto nomem;
	}
	for (slot = hash & (INTERN_SLOTS - 1);; slot = (slot + 1) & (INTERN_SLOTS - 1)) {
		entry = &intern_table[slot];
		if (!entry->str)
			break;
		if (entry->hash == hash && entry->len == len && !memcmp(entry->str, s, len))
			return entry->str;
	}
	if (intern_count >= INTERN_MAX)
		return too_many_names;
	copy = malloc(len + 1);
	if (!copy)
		goto nomem;
	memcpy(copy, s, len);
	copy[len] = '\0';
	entry->str = copy;
	entry->len = len;
	entry->hash = hash;
	intern_count++;
	return copy;

nomem:
	PyErr_NoMemory();
	return NULL;
}

/* The interned UTF-8 text of a str; NULL with an exception set otherwise. */
const char *intern_object(PyObject *object)
{
	const char *text;
	Py_ssize_t len;

	if (!PyUnicode_Check(object)) {
		PyErr_Format(PyExc_TypeError, "optrace: expected a str, got %.100s",
			     Py_TYPE(object)->tp_name);
		return NULL;
	}
	text = PyUnicode_AsUTF8AndSize(object, &len);
	if (!text)
		return NULL;
	return intern_bytes(text, len);
}

PyObject *py_intern(PyObject *module, PyObject *string)
{
	const char *text;

	(void)module;
	text = intern_object(string);
	return text ? PyLong_FromVoidPtr((void *)text) : NULL;
}

PyObject *py_intern_count(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	return PyLong_FromSize_t(intern_count);
}
