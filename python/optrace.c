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
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <optrace/optrace.h>

#define INTERN_MAX 65536
#define INTERN_SLOTS (2 * INTERN_MAX) /* a power of two, at most half full */
#define STACK_MAX 64
#define LIBRARY_PATHS_MAX 64
#define CALLSITE_MAX 4096

static const char too_many_names[] = "(too many names)";
static const char unnamed[] = "(unnamed)";
static const char unknown_site[] = "(unknown)";

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
static const char *intern_bytes(const char *s, size_t len)
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
static const char *intern_object(PyObject *object)
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

/* ---- the per-thread shadow stack of op ids --------------------------------- */

struct op_stack {
	uint32_t depth;
	uint64_t ids[STACK_MAX];
};

static __thread struct op_stack op_stack;

static uint64_t innermost_op(void)
{
	uint32_t depth = op_stack.depth;

	return depth && depth <= STACK_MAX ? op_stack.ids[depth - 1] : 0;
}

static uint64_t stack_begin(const char *name, const char *callsite)
{
	uint64_t op = optrace_op_begin(name, callsite);

	if (op_stack.depth < STACK_MAX)
		op_stack.ids[op_stack.depth] = op;
	op_stack.depth++;
	return op;
}

static void stack_end(uint64_t op, int status)
{
	if (op_stack.depth)
		op_stack.depth--;
	optrace_op_end(op, status);
}

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
static const char *current_callsite(void)
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

/* ---- optrace.op(name): the operation as a context manager ------------------- */

typedef struct {
	PyObject_HEAD PyObject *name;
	uint64_t id;
	int open;
	vectorcallfunc vectorcall;
} OpObject;

static PyTypeObject OpType;
static PyObject *op_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf,
			       PyObject *kwnames);

/* A few free objects: a `with optrace.op(...)` allocates nothing. */
#define OP_FREE_MAX 16
static OpObject *op_free[OP_FREE_MAX];
static int op_free_count;

static void op_dealloc(OpObject *self)
{
	Py_CLEAR(self->name);
	if (op_free_count < OP_FREE_MAX)
		op_free[op_free_count++] = self;
	else
		PyObject_Free(self);
}

static PyObject *op_create(PyObject *name)
{
	OpObject *self;

	if (op_free_count) {
		self = op_free[--op_free_count];
		PyObject_Init((PyObject *)self, &OpType);
	} else {
		self = PyObject_New(OpObject, &OpType);
		if (!self)
			return NULL;
	}
	Py_INCREF(name);
	self->name = name;
	self->id = 0;
	self->open = 0;
	self->vectorcall = op_vectorcall;
	return (PyObject *)self;
}

static PyObject *op_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
	static char *keywords[] = { "name", NULL };
	PyObject *name;

	(void)type;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "U:op", keywords, &name))
		return NULL;
	return op_create(name);
}

static PyObject *op_enter(OpObject *self, PyObject *unused)
{
	const char *name = unnamed, *site = unknown_site;

	(void)unused;
	if (self->open) {
		PyErr_SetString(PyExc_RuntimeError, "optrace: this operation is already open");
		return NULL;
	}
	if (optrace_enabled()) {
		name = intern_object(self->name);
		if (!name)
			return NULL;
		site = current_callsite();
		if (!site)
			return NULL;
	}
	self->id = stack_begin(name, site);
	self->open = 1;
	Py_INCREF(self);
	return (PyObject *)self;
}

static PyObject *op_exit(OpObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	int status = nargs > 0 && args[0] != Py_None ? OPTRACE_STATUS_ERROR : OPTRACE_STATUS_OK;

	if (self->open) {
		self->open = 0;
		stack_end(self->id, status);
	}
	Py_RETURN_FALSE;
}

/*
 * The fast path of `with`: the interpreter looks __enter__ and __exit__ up on
 * the type and binds them, which for ordinary methods allocates two bound
 * method objects per `with`. Here both names resolve to a descriptor that
 * returns the op object itself, and calling the op object enters it (no
 * arguments) or exits it (the three of __exit__).
 */
static PyObject *op_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf,
			       PyObject *kwnames)
{
	Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);

	if (kwnames && PyTuple_GET_SIZE(kwnames)) {
		PyErr_SetString(PyExc_TypeError, "optrace.op: no keyword arguments");
		return NULL;
	}
	if (nargs == 0)
		return op_enter((OpObject *)callable, NULL);
	if (nargs == 3)
		return op_exit((OpObject *)callable, args, nargs);
	PyErr_SetString(PyExc_TypeError, "optrace.op: __enter__() or __exit__(type, value, tb)");
	return NULL;
}

typedef struct {
	PyObject_HEAD
} SelfDescrObject;

static PyObject *self_descr_get(PyObject *descr, PyObject *obj, PyObject *type)
{
	(void)type;
	if (!obj)
		obj = descr;
	Py_INCREF(obj);
	return obj;
}

static PyTypeObject SelfDescrType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "optrace._self_method",
	.tp_basicsize = sizeof(SelfDescrObject),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "__enter__ and __exit__ of optrace.op: the op object, which is callable.",
	.tp_descr_get = self_descr_get,
};

static int op_type_add_fast_with(void)
{
	PyObject *descr = PyObject_New(PyObject, &SelfDescrType);
	int err;

	if (!descr)
		return -1;
	err = PyDict_SetItemString(OpType.tp_dict, "__enter__", descr) ||
	      PyDict_SetItemString(OpType.tp_dict, "__exit__", descr);
	Py_DECREF(descr);
	PyType_Modified(&OpType);
	return err ? -1 : 0;
}

static PyObject *op_mode(OpObject *self, PyObject *args)
{
	int mode, reason = OPTRACE_MODE_REASON_NONE;

	if (!PyArg_ParseTuple(args, "i|i:mode", &mode, &reason))
		return NULL;
	optrace_op_mode(self->id, mode, reason);
	Py_RETURN_NONE;
}

/* optrace_op_fallback() with an interned detail, built only when it fires. */
static PyObject *fallback_on(uint64_t op, int reason, PyObject *detail)
{
	const char *text = "";

	if (op && optrace_enabled() && detail && detail != Py_None) {
		text = intern_object(detail);
		if (!text)
			return NULL;
	}
	optrace_op_fallback(op, reason, text);
	Py_RETURN_NONE;
}

static PyObject *op_fallback(OpObject *self, PyObject *args)
{
	PyObject *detail = NULL;
	int reason;

	if (!PyArg_ParseTuple(args, "i|O:fallback", &reason, &detail))
		return NULL;
	return fallback_on(self->id, reason, detail);
}

static PyObject *op_repr(OpObject *self)
{
	return PyUnicode_FromFormat("<optrace.op %R id=%llu%s>", self->name,
				    (unsigned long long)self->id, self->open ? " open" : "");
}

static PyMethodDef op_methods[] = { { "mode", (PyCFunction)op_mode, METH_VARARGS,
				      "mode(mode, reason): announce its mode." },
				    { "fallback", (PyCFunction)op_fallback, METH_VARARGS,
				      "fallback(reason, detail=None): a reference path runs now." },
				    { NULL } };

static PyMemberDef op_members[] = { { "name", T_OBJECT, offsetof(OpObject, name), READONLY,
				      "the operation's name" },
				    { "id", T_ULONGLONG, offsetof(OpObject, id), READONLY,
				      "its op id; 0 while untraced or not yet begun" },
				    { NULL } };

static PyTypeObject OpType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "optrace.op",
	.tp_basicsize = sizeof(OpObject),
	.tp_dealloc = (destructor)op_dealloc,
	.tp_vectorcall_offset = offsetof(OpObject, vectorcall),
	.tp_repr = (reprfunc)op_repr,
	.tp_call = PyVectorcall_Call,
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
	.tp_doc = "op(name): an operation, as a context manager (begun by __enter__, ended\n"
		  "by __exit__, status error when an exception passes through).",
	.tp_methods = op_methods,
	.tp_members = op_members,
	.tp_new = op_new,
};

/* ---- optrace.wait(kind): a blocking wait, as a context manager -------------- */

typedef struct {
	PyObject_HEAD uint64_t op;
	int kind;
} WaitObject;

static PyTypeObject WaitType;

static PyObject *wait_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
	static char *keywords[] = { "kind", NULL };
	WaitObject *self;
	int kind = OPTRACE_WAIT_OTHER;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "|i:wait", keywords, &kind))
		return NULL;
	self = (WaitObject *)type->tp_alloc(type, 0);
	if (self)
		self->kind = kind;
	return (PyObject *)self;
}

static PyObject *wait_enter(WaitObject *self, PyObject *unused)
{
	(void)unused;
	self->op = innermost_op();
	optrace_wait_begin(self->op, self->kind);
	Py_INCREF(self);
	return (PyObject *)self;
}

static PyObject *wait_exit(WaitObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	(void)args;
	(void)nargs;
	optrace_wait_end(self->op, self->kind);
	Py_RETURN_FALSE;
}

static PyMethodDef wait_methods[] = {
	{ "__enter__", (PyCFunction)wait_enter, METH_NOARGS, "wait_begin" },
	{ "__exit__", (PyCFunction)(void (*)(void))wait_exit, METH_FASTCALL, "wait_end" },
	{ NULL }
};

static PyTypeObject WaitType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "optrace.wait",
	.tp_basicsize = sizeof(WaitObject),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "wait(kind): the caller blocks on a result of the innermost operation.",
	.tp_methods = wait_methods,
	.tp_new = wait_new,
};

/* ---- optrace.trace(name): the decorator ----------------------------------- */

/* What optrace.trace(name) returns: applied to a function, a Traced. */
typedef struct {
	PyObject_HEAD PyObject *name; /* str, callable or None */
} TracerObject;

/* A traced function: an operation around each call. */
typedef struct {
	PyObject_HEAD PyObject *func;
	PyObject *name;	      /* str, or a callable of the call's arguments */
	const char *interned; /* the str name, once interned */
	PyObject *dict;
	vectorcallfunc vectorcall;
} TracedObject;

static PyTypeObject TracerType, TracedType;

static const char *traced_name(TracedObject *self, PyObject *const *args, size_t nargsf,
			       PyObject *kwnames)
{
	const char *name;
	PyObject *result;

	if (self->interned)
		return self->interned;
	if (PyUnicode_Check(self->name)) {
		self->interned = intern_object(self->name);
		return self->interned;
	}
	result = PyObject_Vectorcall(self->name, args, nargsf, kwnames);
	if (!result)
		return NULL;
	name = intern_object(result);
	Py_DECREF(result);
	return name;
}

static PyObject *traced_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf,
				   PyObject *kwnames)
{
	TracedObject *self = (TracedObject *)callable;
	const char *name = unnamed, *site = unknown_site;
	PyObject *result;
	uint64_t op;

	if (optrace_enabled()) {
		name = traced_name(self, args, nargsf, kwnames);
		if (!name)
			return NULL;
		site = current_callsite();
		if (!site)
			return NULL;
	}
	op = stack_begin(name, site);
	result = PyObject_Vectorcall(self->func, args, nargsf, kwnames);
	stack_end(op, result ? OPTRACE_STATUS_OK : OPTRACE_STATUS_ERROR);
	return result;
}

static int traced_traverse(TracedObject *self, visitproc visit, void *arg)
{
	Py_VISIT(self->func);
	Py_VISIT(self->name);
	Py_VISIT(self->dict);
	return 0;
}

static int traced_clear(TracedObject *self)
{
	Py_CLEAR(self->func);
	Py_CLEAR(self->name);
	Py_CLEAR(self->dict);
	return 0;
}

static void traced_dealloc(TracedObject *self)
{
	PyObject_GC_UnTrack(self);
	traced_clear(self);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Bound to an instance as functions are, so that methods can be traced. */
static PyObject *traced_get(PyObject *self, PyObject *obj, PyObject *type)
{
	(void)type;
	if (!obj || obj == Py_None) {
		Py_INCREF(self);
		return self;
	}
	return PyMethod_New(self, obj);
}

static PyObject *traced_repr(TracedObject *self)
{
	return PyUnicode_FromFormat("<optrace.traced %R of %R>", self->name, self->func);
}

/* The default name: module.qualname of the function. */
static PyObject *default_name(PyObject *func)
{
	PyObject *module = PyObject_GetAttrString(func, "__module__");
	PyObject *qualname = PyObject_GetAttrString(func, "__qualname__"), *name = NULL;

	if (!qualname)
		goto cleanup;
	if (module && PyUnicode_Check(module))
		name = PyUnicode_FromFormat("%U.%S", module, qualname);
	else
		name = PyObject_Str(qualname);
cleanup:
	PyErr_Clear();
	Py_XDECREF(module);
	Py_XDECREF(qualname);
	if (!name)
		name = PyUnicode_FromString(unnamed);
	return name;
}

static PyObject *traced_create(PyObject *func, PyObject *name)
{
	static const char *const copied[] = { "__module__", "__name__", "__qualname__", "__doc__" };
	TracedObject *self;

	if (!PyCallable_Check(func)) {
		PyErr_SetString(PyExc_TypeError, "optrace.trace: decorates a callable");
		return NULL;
	}
	self = PyObject_GC_New(TracedObject, &TracedType);
	if (!self)
		return NULL;
	self->interned = NULL;
	self->vectorcall = traced_vectorcall;
	Py_INCREF(func);
	self->func = func;
	self->name = name == Py_None ? default_name(func) : (Py_INCREF(name), name);
	self->dict = PyDict_New();
	PyObject_GC_Track(self);
	if (!self->name || !self->dict)
		goto error;
	/* As functools.wraps does. */
	for (size_t i = 0; i < sizeof(copied) / sizeof(copied[0]); i++) {
		PyObject *value = PyObject_GetAttrString(func, copied[i]);

		if (!value) {
			PyErr_Clear();
			continue;
		}
		if (PyDict_SetItemString(self->dict, copied[i], value)) {
			Py_DECREF(value);
			goto error;
		}
		Py_DECREF(value);
	}
	if (PyDict_SetItemString(self->dict, "__wrapped__", func))
		goto error;
	return (PyObject *)self;

error:
	Py_DECREF(self);
	return NULL;
}

static PyGetSetDef traced_getset[] = {
	{ "__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL }, { NULL }
};

static PyMemberDef traced_members[] = {
	{ "__vectorcalloffset__", T_PYSSIZET, offsetof(TracedObject, vectorcall), READONLY, NULL },
	{ "optrace_name", T_OBJECT, offsetof(TracedObject, name), READONLY,
	  "the operation's name, or the callable that makes it" },
	{ NULL }
};

static PyTypeObject TracedType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "optrace.traced",
	.tp_basicsize = sizeof(TracedObject),
	.tp_dealloc = (destructor)traced_dealloc,
	.tp_vectorcall_offset = offsetof(TracedObject, vectorcall),
	.tp_repr = (reprfunc)traced_repr,
	.tp_call = PyVectorcall_Call,
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
		    Py_TPFLAGS_METHOD_DESCRIPTOR,
	.tp_doc = "A function traced by optrace.trace: one operation per call.",
	.tp_traverse = (traverseproc)traced_traverse,
	.tp_clear = (inquiry)traced_clear,
	.tp_members = traced_members,
	.tp_getset = traced_getset,
	.tp_descr_get = traced_get,
	.tp_dictoffset = offsetof(TracedObject, dict),
};

static PyObject *tracer_call(TracerObject *self, PyObject *args, PyObject *kwds)
{
	PyObject *func;

	if (kwds && PyDict_GET_SIZE(kwds)) {
		PyErr_SetString(PyExc_TypeError, "optrace.trace(...)(func) takes no keywords");
		return NULL;
	}
	if (!PyArg_ParseTuple(args, "O:trace", &func))
		return NULL;
	return traced_create(func, self->name);
}

static void tracer_dealloc(TracerObject *self)
{
	Py_XDECREF(self->name);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject TracerType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "optrace.tracer",
	.tp_basicsize = sizeof(TracerObject),
	.tp_dealloc = (destructor)tracer_dealloc,
	.tp_call = (ternaryfunc)tracer_call,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "The decorator that optrace.trace(name) returns.",
};

static PyObject *py_trace(PyObject *module, PyObject *args, PyObject *kwds)
{
	static char *keywords[] = { "name", NULL };
	PyObject *name = Py_None;
	TracerObject *tracer;

	(void)module;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:trace", keywords, &name))
		return NULL;
	if (name != Py_None && !PyUnicode_Check(name) && !PyCallable_Check(name)) {
		PyErr_SetString(PyExc_TypeError,
				"optrace.trace: name must be a str or a callable of the arguments");
		return NULL;
	}
	tracer = PyObject_New(TracerObject, &TracerType);
	if (!tracer)
		return NULL;
	Py_INCREF(name);
	tracer->name = name;
	return (PyObject *)tracer;
}

/* ---- module functions ---------------------------------------------------------- */

static PyObject *py_op(PyObject *module, PyObject *name)
{
	(void)module;
	if (!PyUnicode_Check(name)) {
		PyErr_Format(PyExc_TypeError, "optrace.op: name must be a str, not %.100s",
			     Py_TYPE(name)->tp_name);
		return NULL;
	}
	return op_create(name);
}

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

static PyObject *py_mode(PyObject *module, PyObject *args)
{
	int mode, reason = OPTRACE_MODE_REASON_NONE;

	(void)module;
	if (!PyArg_ParseTuple(args, "i|i:mode", &mode, &reason))
		return NULL;
	optrace_op_mode(innermost_op(), mode, reason);
	Py_RETURN_NONE;
}

static PyObject *py_fallback(PyObject *module, PyObject *args)
{
	PyObject *detail = NULL;
	int reason;

	(void)module;
	if (!PyArg_ParseTuple(args, "i|O:fallback", &reason, &detail))
		return NULL;
	return fallback_on(innermost_op(), reason, detail);
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

static PyObject *py_current_op(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	return PyLong_FromUnsignedLongLong(innermost_op());
}

static PyObject *py_depth(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	return PyLong_FromUnsignedLong(op_stack.depth);
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

static PyObject *py_set_library_paths(PyObject *module, PyObject *paths)
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

static PyObject *py_library_paths(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	return library_paths_list();
}

/*
 * internal_module(module or name): the module's file, or for a package its
 * directory (with a trailing '/'), becomes a library path.
 */
static PyObject *py_internal_module(PyObject *module, PyObject *arg)
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

static PyObject *py_callsite(PyObject *module, PyObject *unused)
{
	const char *site;

	(void)module;
	(void)unused;
	site = current_callsite();
	return site ? PyUnicode_FromString(site) : NULL;
}

static PyObject *py_intern(PyObject *module, PyObject *string)
{
	const char *text;

	(void)module;
	text = intern_object(string);
	return text ? PyLong_FromVoidPtr((void *)text) : NULL;
}

static PyObject *py_intern_count(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	return PyLong_FromSize_t(intern_count);
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
	.m_name = "optrace",
	.m_doc = "optrace: operation tracing for Python array runtimes, over liboptrace.",
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
	/* wait kind */
	{ "FUTURE", OPTRACE_WAIT_FUTURE },
	{ "INLINE_MAP", OPTRACE_WAIT_INLINE_MAP },
	{ "FENCE", OPTRACE_WAIT_FENCE },
	{ "WAIT_OTHER", OPTRACE_WAIT_OTHER },
	/* status */
	{ "OK", OPTRACE_STATUS_OK },
	{ "ERROR", OPTRACE_STATUS_ERROR },
};

PyMODINIT_FUNC PyInit_optrace(void)
{
	PyObject *module;

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
	if (PyModule_AddStringConstant(module, "TOO_MANY_NAMES", too_many_names) ||
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
