/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What cppcheck cannot see without the system headers (make lint). */
#define LIBBPF_OPTS(TYPE, NAME, ...) struct TYPE NAME = { __VA_ARGS__ }
/* CPython's, for python/ (its headers are not given to cppcheck). */
#define Py_RETURN_NONE return Py_None
#define Py_RETURN_TRUE return Py_True
#define Py_RETURN_FALSE return Py_False
