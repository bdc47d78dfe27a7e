// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Call sites: the library paths (the runtime's own files), and the
 * innermost Python frame outside them as "file:line".
 */
#include "optrace_module.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIBRARY_PATHS_MAX 64
#define CALLSITE_MAX 4096

/* ---- call sites -------------------------------------------------------------- */

struct library_path {
	char *path;
	size_t len;
};

static struct library_path library_paths[LIBRARY_PATHS_MAX];
static int library_path_count;

static bool in_library(PyObject *filename)
{
	const char *text;
	Py_ssize_t len;

	if (!library_path_count || !PyUnicode_Check(filename))
		return false;
	text = PyUnicode_AsUTF8AndSize(filename, &len);
	if (!text) {
		PyErr_Clear();
		return false;
	}
	for (int i = 0; i < library_path_count; i++) {
		if ((size_t)len >= library_paths[i].len &&
		    !memcmp(text, library_paths[i].path, library_paths[i].len))
			return true;
	}
	return false;
}

/*
 * "file:line" of the innermost Python frame outside the library paths,
 * interned; "(unknown)" when there is none. NULL only on an error.
 */
const char *current_callsite(void)
{
	PyFrameObject *frame = PyEval_GetFrame(), *back;
	const char *site = unknown_site;
	char text[CALLSITE_MAX];

	Py_XINCREF(frame);
	while (frame) {
		PyCodeObject *code = PyFrame_GetCode(frame);
		PyObject *filename = code->co_filename;

		if (!in_library(filename)) {
			const char *file =
				PyUnicode_Check(filename) ? PyUnicode_AsUTF8(filename) : NULL;
			int len;

			if (!file) {
				PyErr_Clear();
				file = "?";
			}
			len = snprintf(text, sizeof(text), "%s:%d", file,
				       PyFrame_GetLineNumber(frame));
			if (len >= (int)sizeof(text))
				len = sizeof(text) - 1;
			site = intern_bytes(text, len);
			Py_DECREF(code);
			Py_DECREF(frame);
			return site;
		}
		Py_DECREF(code);
		back = PyFrame_GetBack(frame);
		Py_DECREF(frame);
		frame = back;
	}
	return site;
}

static void library_paths_clear(void)
{
	for (int i = 0; i < library_path_count; i++)
		free(library_paths[i].path);
	library_path_count = 0;
}

static int library_path_add(PyObject *path)
{
	const char *text;
	Py_ssize_t len;

	if (!PyUnicode_Check(path)) {
		PyErr_SetString(PyExc_TypeError, "optrace: a library path is a str");
		return -1;
	}
	text = PyUnicode_AsUTF8AndSize(path, &len);
	if (!text)
		return -1;
	if (len == 0)
		return 0;
	for (int i = 0; i < library_path_count; i++) {
		if (library_paths[i].len == (size_t)len &&
		    !memcmp(library_paths[i].path, text, len))
			return 0;
	}
	if (library_path_count == LIBRARY_PATHS_MAX) {
		PyErr_SetString(PyExc_ValueError, "optrace: too many library paths");
		return -1;
	}
	library_paths[library_path_count].path = strndup(text, len);
	if (!library_paths[library_path_count].path) {
		PyErr_NoMemory();
		return -1;
	}
	library_paths[library_path_count++].len = len;
	return 0;
}

PyObject *py_set_library_paths(PyObject *module, PyObject *paths)
{
	PyObject *iter, *item;

	(void)module;
	iter = PyObject_GetIter(paths);
	if (!iter)
		return NULL;
	library_paths_clear();
	while ((item = PyIter_Next(iter))) {
		int err = library_path_add(item);

		Py_DECREF(item);
		if (err)
			break;
	}
	Py_DECREF(iter);
	if (PyErr_Occurred())
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *library_paths_list(void)
{
	PyObject *list = PyList_New(library_path_count);

	for (int i = 0; list && i < library_path_count; i++) {
		PyObject *path =
			PyUnicode_FromStringAndSize(library_paths[i].path, library_paths[i].len);
		if (!path) {
			Py_CLEAR(list);
			break;
		}
		PyList_SET_ITEM(list, i, path);
	}
	return list;
}

PyObject *py_library_paths(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	return library_paths_list();
}

/*
 * internal_module(module or name): the module's file, or for a package its
 * directory (with a trailing '/'), becomes a library path.
 */
PyObject *py_internal_module(PyObject *module, PyObject *arg)
{
	PyObject *target = NULL, *file = NULL, *path = NULL, *os_path = NULL, *result = NULL;
	int is_package;

	(void)module;
	if (PyUnicode_Check(arg))
		target = PyImport_Import(arg);
	else
		target = (Py_INCREF(arg), arg);
	if (!target)
		goto cleanup;
	file = PyObject_GetAttrString(target, "__file__");
	if (!file || file == Py_None) {
		PyErr_Format(PyExc_ValueError, "optrace.internal_module: %R has no file", arg);
		goto cleanup;
	}
	os_path = PyImport_ImportModule("os.path");
	if (!os_path)
		goto cleanup;
	is_package = PyObject_HasAttrString(target, "__path__");
	path = PyObject_CallMethod(os_path, "abspath", "O", file);
	if (!path)
		goto cleanup;
	if (is_package) {
		PyObject *dir = PyObject_CallMethod(os_path, "dirname", "O", path);

		Py_DECREF(path);
		path = dir ? PyUnicode_FromFormat("%U/", dir) : NULL;
		Py_XDECREF(dir);
		if (!path)
			goto cleanup;
	}
	if (library_path_add(path))
		goto cleanup;
	Py_INCREF(path);
	result = path;
cleanup:
	Py_XDECREF(target);
	Py_XDECREF(file);
	Py_XDECREF(path);
	Py_XDECREF(os_path);
	return result;
}

PyObject *py_callsite(PyObject *module, PyObject *unused)
{
	const char *site;

	(void)module;
	(void)unused;
	site = current_callsite();
	return site ? PyUnicode_FromString(site) : NULL;
}
