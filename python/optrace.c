// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The optrace Python module: liboptrace for Python array runtimes.
 *
 *   with optrace.op("cupynumeric.add"):            an operation
 *   @optrace.trace("cupynumeric.mean")             the same, as a decorator
 *   optrace.mode(optrace.DEFERRED, optrace.ABOVE_THRESHOLD)
 *   optrace.fallback(optrace.UNIMPLEMENTED_API, "sort runs in NumPy")
 *
 * liboptrace keeps the per-thread op stack; this module keeps a shadow of
 * the op ids per thread, so that mode(), fallback(), task_launch() and
 * wait() apply to the innermost operation open on the calling thread.
 *
 * While no tracer is attached an operation costs a call to liboptrace and
 * nothing else: names are interned and call sites computed only while
 * optrace_enabled() is true. Strings handed to the probes are interned in a
 * table of strings that are never freed (the probes carry pointers); the
 * table is bounded, and past the bound every new string is passed as
 * "(too many names)". Every function here runs with the GIL held, which
 * also guards the table and the library paths.
 *
 * The module's files: intern.c (the string table), callsite.c (call sites
 * and library paths), op.c (the op stack, optrace.op and optrace.wait),
 * trace.c (the decorator); this one holds the module's other functions,
 * its constants and its init.
 */
#include "optrace_module.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include <optrace/optrace.h>

const char too_many_names[] = "(too many names)";
const char unnamed[] = "(unnamed)";
const char unknown_site[] = "(unknown)";

/* ---- module functions ---------------------------------------------------------- */

static PyObject *py_enabled(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	return PyBool_FromLong(optrace_enabled());
}

static PyObject *py_rt_init(PyObject *module, PyObject *args, PyObject *kwds)
{
	static char *keywords[] = { "rank", "rank_count", NULL };
	int rank = -1, rank_count = -1;

	(void)module;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "|ii:rt_init", keywords, &rank, &rank_count))
		return NULL;
	optrace_rt_init(rank, rank_count);
	Py_RETURN_NONE;
}

static PyObject *py_task_launch(PyObject *module, PyObject *args, PyObject *kwds)
{
	static char *keywords[] = { "name", "points", "op", NULL };
	PyObject *name, *op_arg = Py_None;
	unsigned int points = 1;
	const char *text = unnamed;
	uint64_t op;

	(void)module;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "U|IO:task_launch", keywords, &name, &points,
					 &op_arg))
		return NULL;
	if (op_arg == Py_None) {
		op = innermost_op();
	} else {
		op = PyLong_AsUnsignedLongLong(op_arg);
		if (op == (uint64_t)-1 && PyErr_Occurred())
			return NULL;
	}
	if (optrace_enabled()) {
		text = intern_object(name);
		if (!text)
			return NULL;
	}
	return PyLong_FromUnsignedLongLong(optrace_task_launch(op, text, points));
}

static PyObject *py_task_begin(PyObject *module, PyObject *args, PyObject *kwds)
{
	static char *keywords[] = { "task", "point", "variant", "processor", NULL };
	unsigned long long task;
	unsigned int point = 0, processor = 0;
	int variant = OPTRACE_VARIANT_CPU;

	(void)module;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "K|IiI:task_begin", keywords, &task, &point,
					 &variant, &processor))
		return NULL;
	optrace_task_begin(task, point, variant, processor);
	Py_RETURN_NONE;
}

static PyObject *py_task_end(PyObject *module, PyObject *args, PyObject *kwds)
{
	static char *keywords[] = { "task", "point", "status", NULL };
	unsigned long long task;
	unsigned int point = 0;
	int status = OPTRACE_STATUS_OK;

	(void)module;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "K|Ii:task_end", keywords, &task, &point,
					 &status))
		return NULL;
	optrace_task_end(task, point, status);
	Py_RETURN_NONE;
}

#define NAME_FUNCTION(py_name, c_name)                                                             \
	static PyObject *py_name(PyObject *module, PyObject *value)                                \
	{                                                                                          \
		long v = PyLong_AsLong(value);                                                     \
		(void)module;                                                                      \
		if (v == -1 && PyErr_Occurred())                                                   \
			return NULL;                                                               \
		return PyUnicode_FromString(c_name(v < INT32_MIN || v > INT32_MAX ? -1 : (int)v)); \
	}

NAME_FUNCTION(py_mode_name, optrace_mode_name)
NAME_FUNCTION(py_mode_reason_name, optrace_mode_reason_name)
NAME_FUNCTION(py_fallback_reason_name, optrace_fallback_reason_name)
NAME_FUNCTION(py_variant_name, optrace_variant_name)
NAME_FUNCTION(py_wait_kind_name, optrace_wait_kind_name)
NAME_FUNCTION(py_status_name, optrace_status_name)

static PyMethodDef module_methods[] = {
	{ "op", py_op, METH_O, "op(name): an operation, as a context manager." },
	{ "trace", (PyCFunction)(void (*)(void))py_trace, METH_VARARGS | METH_KEYWORDS,
	  "trace(name=None): a decorator; name is a str or a callable of the call's "
	  "arguments that returns one (default: module.qualname)." },
	{ "enabled", py_enabled, METH_NOARGS, "True while a tracer is attached." },
	{ "rt_init", (PyCFunction)(void (*)(void))py_rt_init, METH_VARARGS | METH_KEYWORDS,
	  "rt_init(rank=-1, rank_count=-1): announce the runtime." },
	{ "mode", py_mode, METH_VARARGS,
	  "mode(mode, reason): the mode of the innermost operation of this thread." },
	{ "fallback", py_fallback, METH_VARARGS,
	  "fallback(reason, detail=None): the innermost operation runs a reference path." },
	{ "task_launch", (PyCFunction)(void (*)(void))py_task_launch, METH_VARARGS | METH_KEYWORDS,
	  "task_launch(name, points=1, op=None): returns the task id (0 untraced)." },
	{ "task_begin", (PyCFunction)(void (*)(void))py_task_begin, METH_VARARGS | METH_KEYWORDS,
	  "task_begin(task, point=0, variant=CPU, processor=0)" },
	{ "task_end", (PyCFunction)(void (*)(void))py_task_end, METH_VARARGS | METH_KEYWORDS,
	  "task_end(task, point=0, status=OK)" },
	{ "current_op", py_current_op, METH_NOARGS,
	  "The id of the innermost operation open on this thread (0: none, or untraced)." },
	{ "depth", py_depth, METH_NOARGS, "How many operations are open on this thread." },
	{ "set_library_paths", py_set_library_paths, METH_O,
	  "set_library_paths(paths): files under these prefixes are the library; call "
	  "sites are the first frame outside them." },
	{ "library_paths", py_library_paths, METH_NOARGS, "The library path prefixes." },
	{ "internal_module", py_internal_module, METH_O,
	  "internal_module(module or name): add its file (a package: its directory) to the "
	  "library paths; returns the path added." },
	{ "callsite", py_callsite, METH_NOARGS,
	  "The call site an operation begun here would carry (computed even untraced)." },
	{ "_intern", py_intern, METH_O, "Intern a str; returns the C string's address." },
	{ "_intern_count", py_intern_count, METH_NOARGS, "How many strings are interned." },
	{ "mode_name", py_mode_name, METH_O, NULL },
	{ "mode_reason_name", py_mode_reason_name, METH_O, NULL },
	{ "fallback_reason_name", py_fallback_reason_name, METH_O, NULL },
	{ "variant_name", py_variant_name, METH_O, NULL },
	{ "wait_kind_name", py_wait_kind_name, METH_O, NULL },
	{ "status_name", py_status_name, METH_O, NULL },
	{ NULL }
};

static struct PyModuleDef optrace_module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "optrace._optrace",
	.m_doc = "optrace's C core over liboptrace; import the optrace package, which has it all.",
	.m_size = -1,
	.m_methods = module_methods,
};

static const struct {
	const char *name;
	int value;
} constants[] = {
	{ "ABI_VERSION", OPTRACE_ABI_VERSION },
	/* mode */
	{ "EAGER", OPTRACE_MODE_EAGER },
	{ "DEFERRED", OPTRACE_MODE_DEFERRED },
	{ "MIXED", OPTRACE_MODE_MIXED },
	{ "FALLBACK", OPTRACE_MODE_FALLBACK },
	/* mode reason */
	{ "REASON_NONE", OPTRACE_MODE_REASON_NONE },
	{ "BELOW_THRESHOLD", OPTRACE_MODE_REASON_BELOW_THRESHOLD },
	{ "ABOVE_THRESHOLD", OPTRACE_MODE_REASON_ABOVE_THRESHOLD },
	{ "FORCED", OPTRACE_MODE_REASON_FORCED },
	{ "EMPTY", OPTRACE_MODE_REASON_EMPTY },
	{ "INPUTS_DEFERRED", OPTRACE_MODE_REASON_INPUTS_DEFERRED },
	{ "HELPERS", OPTRACE_MODE_REASON_HELPERS },
	{ "REASON_FALLBACK", OPTRACE_MODE_REASON_FALLBACK },
	/* fallback reason */
	{ "FALLBACK_NONE", OPTRACE_FALLBACK_NONE },
	{ "UNIMPLEMENTED_API", OPTRACE_FALLBACK_UNIMPLEMENTED_API },
	{ "UNSUPPORTED_ARGUMENTS", OPTRACE_FALLBACK_UNSUPPORTED_ARGUMENTS },
	{ "UNSUPPORTED_DTYPE", OPTRACE_FALLBACK_UNSUPPORTED_DTYPE },
	{ "NO_VARIANT", OPTRACE_FALLBACK_NO_VARIANT },
	{ "FALLBACK_OTHER", OPTRACE_FALLBACK_OTHER },
	/* variant */
	{ "CPU", OPTRACE_VARIANT_CPU },
	{ "OPENMP", OPTRACE_VARIANT_OPENMP },
	{ "GPU", OPTRACE_VARIANT_GPU },
	{ "HOST_REFERENCE", OPTRACE_VARIANT_HOST_REFERENCE },
	{ "OPENCL", OPTRACE_VARIANT_OPENCL },
	/* wait kind */
	{ "FUTURE", OPTRACE_WAIT_FUTURE },
	{ "INLINE_MAP", OPTRACE_WAIT_INLINE_MAP },
	{ "FENCE", OPTRACE_WAIT_FENCE },
	{ "WAIT_OTHER", OPTRACE_WAIT_OTHER },
	/* status */
	{ "OK", OPTRACE_STATUS_OK },
	{ "ERROR", OPTRACE_STATUS_ERROR },
};

PyMODINIT_FUNC PyInit__optrace(void)
{
	PyObject *module;
	Dl_info mapped;
	char library[PATH_MAX];

	if (PyType_Ready(&SelfDescrType) || PyType_Ready(&OpType) || PyType_Ready(&WaitType) ||
	    PyType_Ready(&TracerType) || PyType_Ready(&TracedType) || op_type_add_fast_with())
		return NULL;
	module = PyModule_Create(&optrace_module);
	if (!module)
		return NULL;
	for (size_t i = 0; i < sizeof(constants) / sizeof(constants[0]); i++) {
		if (PyModule_AddIntConstant(module, constants[i].name, constants[i].value))
			goto error;
	}
	/* Which liboptrace this process mapped: the one a tracer must attach to. */
	if (!dladdr((void *)optrace_enabled, &mapped) || !mapped.dli_fname ||
	    !realpath(mapped.dli_fname, library))
		snprintf(library, sizeof(library), "%s", mapped.dli_fname ? mapped.dli_fname : "");
	if (PyModule_AddStringConstant(module, "LIBOPTRACE", library) ||
	    PyModule_AddStringConstant(module, "TOO_MANY_NAMES", too_many_names) ||
	    PyModule_AddIntConstant(module, "INTERN_MAX", INTERN_MAX))
		goto error;
	Py_INCREF(&WaitType);
	if (PyModule_AddObject(module, "wait", (PyObject *)&WaitType)) {
		Py_DECREF(&WaitType);
		goto error;
	}
	return module;

error:
	Py_DECREF(module);
	return NULL;
}
