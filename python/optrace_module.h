/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the files of the optrace Python module share (optrace.c says what
 * the module does): the fixed names handed to the probes, interning, call
 * sites, the per-thread op stack, the types, and the module functions that
 * optrace.c's method table lists. Nothing here is exported: the module is
 * built with -fvisibility=hidden and shows PyInit_optrace alone.
 */
#ifndef OPTRACE_PYTHON_MODULE_H
#define OPTRACE_PYTHON_MODULE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stddef.h>
#include <stdint.h>

#define INTERN_MAX 65536

/* optrace.c: the names passed to the probes when there is no other. */
extern const char too_many_names[];
extern const char unnamed[];
extern const char unknown_site[];

/* intern.c: strings that live as long as the process, for the probes. */
const char *intern_bytes(const char *s, size_t len);
const char *intern_object(PyObject *object);
PyObject *py_intern(PyObject *module, PyObject *string);
PyObject *py_intern_count(PyObject *module, PyObject *unused);

/* callsite.c: the library paths, and the first frame outside them. */
const char *current_callsite(void);
PyObject *py_set_library_paths(PyObject *module, PyObject *paths);
PyObject *py_library_paths(PyObject *module, PyObject *unused);
PyObject *py_internal_module(PyObject *module, PyObject *arg);
PyObject *py_callsite(PyObject *module, PyObject *unused);

/* op.c: the per-thread op stack, optrace.op and optrace.wait. */
extern PyTypeObject SelfDescrType, OpType, WaitType;
uint64_t innermost_op(void);
uint64_t stack_begin(const char *name, const char *callsite);
void stack_end(uint64_t op, int status);
int op_type_add_fast_with(void);
PyObject *py_op(PyObject *module, PyObject *name);
PyObject *py_mode(PyObject *module, PyObject *args);
PyObject *py_fallback(PyObject *module, PyObject *args);
PyObject *py_current_op(PyObject *module, PyObject *unused);
PyObject *py_depth(PyObject *module, PyObject *unused);

/* trace.c: the decorator optrace.trace. */
extern PyTypeObject TracerType, TracedType;
PyObject *py_trace(PyObject *module, PyObject *args, PyObject *kwds);

#endif /* OPTRACE_PYTHON_MODULE_H */
