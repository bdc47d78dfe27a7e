// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The user's line, read from the calling thread's Python frames without the
 * GIL. PyTorch releases the GIL around each operator it dispatches, so the
 * operator callbacks run without it; taking it back would make every
 * operator of a thread wait for whichever other thread holds it. A thread's
 * own frames cannot change while it runs C code, so they are read in place,
 * as CPython 3.11 and 3.12 lay them out (the same walk py-spy and memray do);
 * nothing here allocates or touches a reference count.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030D0000
#define Py_BUILD_CORE
#include <internal/pycore_frame.h>
#undef Py_BUILD_CORE
#define HAVE_FRAME_WALK 1
#endif

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "python_frames.h"

#ifdef HAVE_FRAME_WALK
/* A filename's UTF-8 bytes where they exist already: never made here. */
static const char *utf8_of(PyObject *filename, size_t *len)
{
	if (!filename || !PyUnicode_Check(filename) || !PyUnicode_IS_READY(filename))
		return NULL;
	if (PyUnicode_IS_COMPACT_ASCII(filename)) {
		*len = (size_t)PyUnicode_GET_LENGTH(filename);
		return (const char *)PyUnicode_DATA(filename);
	}
	if (PyUnicode_IS_COMPACT(filename) && ((PyCompactUnicodeObject *)filename)->utf8) {
		*len = (size_t)((PyCompactUnicodeObject *)filename)->utf8_length;
		return ((PyCompactUnicodeObject *)filename)->utf8;
	}
	return NULL;
}
#endif

bool python_user_frame(struct python_frame *found, bool (*in_library)(const char *file, size_t len))
{
#ifdef HAVE_FRAME_WALK
	PyThreadState *state = PyGILState_GetThisThreadState();
	_PyInterpreterFrame *frame;

	if (!state || !state->cframe)
		return false;
	for (frame = state->cframe->current_frame; frame; frame = frame->previous) {
		PyCodeObject *code = frame->f_code;
		const char *file;
		size_t len;

#if PY_VERSION_HEX >= 0x030C0000
		if (frame->owner == FRAME_OWNED_BY_CSTACK)
			continue;
#endif
		if (!code || _PyFrame_IsIncomplete(frame))
			continue;
		file = utf8_of(code->co_filename, &len);
		if (!file || in_library(file, len))
			continue;
		found->code = code;
		found->filename = code->co_filename;
		found->first_line = code->co_firstlineno;
		found->offset = _PyInterpreterFrame_LASTI(frame);
		return true;
	}
#else
	(void)found;
	(void)in_library;
#endif
	return false;
}

int python_frame_site(const struct python_frame *frame, char *site, size_t size)
{
#ifdef HAVE_FRAME_WALK
	PyCodeObject *code = (PyCodeObject *)frame->code;
	const char *file;
	size_t len;
	int line, written;

	file = utf8_of(code->co_filename, &len);
	if (!file)
		return -1;
	line = PyCode_Addr2Line(code, frame->offset * (int)sizeof(_Py_CODEUNIT));
	written = snprintf(site, size, "%.*s:%d", (int)len, file, line);
	return written < 0 ? -1 : (written >= (int)size ? (int)size - 1 : written);
#else
	(void)frame;
	(void)site;
	(void)size;
	return -1;
#endif
}
