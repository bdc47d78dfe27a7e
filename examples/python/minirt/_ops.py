# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""minirt's operations: a few NumPy functions, wrapped as cuPyNumeric wraps
its API. Primitives decide eager or deferred by size; composites call other
operations (helpers); float16 and sort fall back to NumPy."""

import numpy as np

import optrace

from . import _runtime as rt
from ._runtime import api

_BINARY = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": np.divide,
}


def _is_half(*arrays):
    return any(np.asarray(a).dtype == np.float16 for a in arrays)


def _piece(x, lo, hi):
    return x if np.ndim(x) == 0 else x[lo:hi]


# The name is a callable of the call's arguments: one decorated function
# serves every binary ufunc, as a ufunc wrapper does.
@api(lambda ufunc, a, b: "minirt." + ufunc)
def binary(ufunc, a, b):
    func = _BINARY[ufunc]
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim and b.ndim and a.shape != b.shape:
        raise ValueError(f"minirt.{ufunc}: shapes {a.shape} and {b.shape} differ")
    shape = a.shape if a.ndim else b.shape
    if _is_half(a, b):
        rt.fallback(optrace.UNSUPPORTED_DTYPE,
                    "float16 has no kernels; running NumPy")
        return func(a, b)
    volume = int(np.prod(shape))
    if rt.decide(volume) == optrace.EAGER:
        return func(a, b)
    out = np.empty(shape, dtype=np.result_type(a, b, np.float64)
                   if ufunc == "divide" else np.result_type(a, b))

    def body(lo, hi):
        func(_piece(a, lo, hi), _piece(b, lo, hi), out=out[lo:hi])

    rt.launch("BinaryOp", volume, body, optrace.INLINE_MAP)
    return out


def add(a, b):
    return binary("add", a, b)


def subtract(a, b):
    return binary("subtract", a, b)


def multiply(a, b):
    return binary("multiply", a, b)


def divide(a, b):
    return binary("divide", a, b)


@api("minirt.sqrt")
def sqrt(a):
    a = np.asarray(a)
    if _is_half(a):
        rt.fallback(optrace.UNSUPPORTED_DTYPE,
                    "float16 has no kernels; running NumPy")
        return np.sqrt(a)
    if rt.decide(a.size) == optrace.EAGER:
        return np.sqrt(a)
    out = np.empty(a.shape, dtype=np.result_type(a, np.float64))

    def body(lo, hi):
        np.sqrt(a[lo:hi], out=out[lo:hi])

    rt.launch("UnaryOp", a.size, body, optrace.INLINE_MAP)
    return out


@api("minirt.sum")
def sum(a):  # noqa: A001 (NumPy's name)
    a = np.asarray(a)
    if _is_half(a):
        rt.fallback(optrace.UNSUPPORTED_DTYPE,
                    "float16 has no kernels; running NumPy")
        return np.sum(a)
    if rt.decide(a.size) == optrace.EAGER:
        return np.sum(a)
    partials = rt.launch("ScalarReduction", a.size,
                         lambda lo, hi: np.sum(a[lo:hi]), optrace.FUTURE)
    return np.sum(np.array(partials, dtype=a.dtype))


@api("minirt.mean")
def mean(a):
    a = np.asarray(a)
    if _is_half(a):
        rt.fallback(optrace.UNSUPPORTED_DTYPE,
                    "float16 has no kernels; running NumPy")
        return np.mean(a)
    return divide(sum(a), a.size)


@api("minirt.var")
def var(a):
    a = np.asarray(a)
    if _is_half(a):
        rt.fallback(optrace.UNSUPPORTED_DTYPE,
                    "float16 has no kernels; running NumPy")
        return np.var(a)
    d = subtract(a, mean(a))
    return divide(sum(multiply(d, d)), a.size)


@api("minirt.sort")
def sort(a):
    # Not implemented by minirt: cuPyNumeric's "unimplemented" path.
    rt.fallback(optrace.UNIMPLEMENTED_API,
                "sort is not implemented; running NumPy's")
    return np.sort(a)
