// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Operations: the per-thread shadow stack of op ids, optrace.op (the
 * operation as a context manager, with a `with` that allocates nothing),
 * optrace.wait, and the module functions on the innermost operation.
 */
#include "optrace_module.h"

#include <structmember.h>

#include <optrace/optrace.h>

#define STACK_MAX 64

/* ---- the per-thread shadow stack of op ids --------------------------------- */

struct op_stack {
	uint32_t depth;
	uint64_t ids[STACK_MAX];
};

static __thread struct op_stack op_stack;

uint64_t innermost_op(void)
{
	uint32_t depth = op_stack.depth;

	return depth && depth <= STACK_MAX ? op_stack.ids[depth - 1] : 0;
}

uint64_t stack_begin(const char *name, const char *callsite)
{
	uint64_t op = optrace_op_begin(name, callsite);

	if (op_stack.depth < STACK_MAX)
		op_stack.ids[op_stack.depth] = op;
	op_stack.depth++;
	return op;
}

void stack_end(uint64_t op, int status)
{
	if (op_stack.depth)
		op_stack.depth--;
	optrace_op_end(op, status);
}

/* ---- optrace.op(name): the operation as a context manager ------------------- */

typedef struct {
	PyObject_HEAD PyObject *name;
	uint64_t id;
	int open;
	vectorcallfunc vectorcall;
} OpObject;

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

PyTypeObject SelfDescrType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "optrace._self_method",
	.tp_basicsize = sizeof(SelfDescrObject),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "__enter__ and __exit__ of optrace.op: the op object, which is callable.",
	.tp_descr_get = self_descr_get,
};

int op_type_add_fast_with(void)
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

PyTypeObject OpType = {
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

PyTypeObject WaitType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "optrace.wait",
	.tp_basicsize = sizeof(WaitObject),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "wait(kind): the caller blocks on a result of the innermost operation.",
	.tp_methods = wait_methods,
	.tp_new = wait_new,
};

/* ---- module functions ---------------------------------------------------------- */

PyObject *py_op(PyObject *module, PyObject *name)
{
	(void)module;
	if (!PyUnicode_Check(name)) {
		PyErr_Format(PyExc_TypeError, "optrace.op: name must be a str, not %.100s",
			     Py_TYPE(name)->tp_name);
		return NULL;
	}
	return op_create(name);
}

PyObject *py_mode(PyObject *module, PyObject *args)
{
	int mode, reason = OPTRACE_MODE_REASON_NONE;

	(void)module;
	if (!PyArg_ParseTuple(args, "i|i:mode", &mode, &reason))
		return NULL;
	optrace_op_mode(innermost_op(), mode, reason);
	Py_RETURN_NONE;
}

PyObject *py_fallback(PyObject *module, PyObject *args)
{
	PyObject *detail = NULL;
	int reason;

	(void)module;
	if (!PyArg_ParseTuple(args, "i|O:fallback", &reason, &detail))
		return NULL;
	return fallback_on(innermost_op(), reason, detail);
}

PyObject *py_current_op(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	return PyLong_FromUnsignedLongLong(innermost_op());
}

PyObject *py_depth(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	return PyLong_FromUnsignedLong(op_stack.depth);
}
