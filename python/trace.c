// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace.trace(name): the decorator, and the traced function it makes,
 * which runs one operation around each call.
 */
#include "optrace_module.h"

#include <structmember.h>

#include <optrace/optrace.h>

/* ---- optrace.trace(name): the decorator ----------------------------------- */

/* What optrace.trace(name) returns: applied to a function, a Traced. */
typedef struct {
	PyObject_HEAD PyObject *name; /* str, callable or None */
	PyObject *after;	      /* callable of the result, or NULL */
} TracerObject;

/* A traced function: an operation around each call. */
typedef struct {
	PyObject_HEAD PyObject *func;
	PyObject *name;	      /* str, or a callable of the call's arguments */
	const char *interned; /* the str name, once interned */
	PyObject *after;      /* called with each result inside the operation, while traced */
	PyObject *dict;
	vectorcallfunc vectorcall;
} TracedObject;

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
	/* A str name, interned when decorated, even untraced: dump names the open operation. */
	const char *name = self->interned ? self->interned : unnamed, *site = unknown_site;
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
	/* An adapter's say on the call (its mode), before the operation ends. */
	if (result && op && self->after) {
		PyObject *said = PyObject_CallFunctionObjArgs(self->after, result, NULL);

		if (said)
			Py_DECREF(said);
		else
			PyErr_WriteUnraisable(
				self->after); /* the adapter's fault, not the call's */
	}
	stack_end(op, result ? OPTRACE_STATUS_OK : OPTRACE_STATUS_ERROR);
	return result;
}

static int traced_traverse(TracedObject *self, visitproc visit, void *arg)
{
	Py_VISIT(self->func);
	Py_VISIT(self->name);
	Py_VISIT(self->after);
	Py_VISIT(self->dict);
	return 0;
}

static int traced_clear(TracedObject *self)
{
	Py_CLEAR(self->func);
	Py_CLEAR(self->name);
	Py_CLEAR(self->after);
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

static PyObject *traced_create(PyObject *func, PyObject *name, PyObject *after)
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
	self->after = after;
	Py_XINCREF(after);
	self->vectorcall = traced_vectorcall;
	Py_INCREF(func);
	self->func = func;
	self->name = name == Py_None ? default_name(func) : (Py_INCREF(name), name);
	self->dict = PyDict_New();
	PyObject_GC_Track(self);
	if (!self->name || !self->dict)
		goto error;
	if (PyUnicode_Check(self->name)) {
		self->interned = intern_object(self->name);
		if (!self->interned)
			goto error;
	}
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

PyTypeObject TracedType = {
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
	return traced_create(func, self->name, self->after);
}

static void tracer_dealloc(TracerObject *self)
{
	Py_XDECREF(self->name);
	Py_XDECREF(self->after);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

PyTypeObject TracerType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "optrace.tracer",
	.tp_basicsize = sizeof(TracerObject),
	.tp_dealloc = (destructor)tracer_dealloc,
	.tp_call = (ternaryfunc)tracer_call,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "The decorator that optrace.trace(name) returns.",
};

PyObject *py_trace(PyObject *module, PyObject *args, PyObject *kwds)
{
	static char *keywords[] = { "name", "after", NULL };
	PyObject *name = Py_None, *after = Py_None;
	TracerObject *tracer;

	(void)module;
	if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O$O:trace", keywords, &name, &after))
		return NULL;
	if (after != Py_None && !PyCallable_Check(after)) {
		PyErr_SetString(PyExc_TypeError, "optrace.trace: after must be a callable");
		return NULL;
	}
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
	tracer->after = after == Py_None ? NULL : (Py_INCREF(after), after);
	return (PyObject *)tracer;
}
