# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A few functions wrapped as cuPyNumeric v26.06 wraps its API: ../README.md."""
from ._utils.profiling import profiling_wrapper


def _matmul(a, b):
    return [[sum(x * y for x, y in zip(row, column)) for column in zip(*b)] for row in a]


def _add(a, b):
    return [x + y for x, y in zip(a, b)]


def _sum(a):
    return add(a, [0] * len(a)) and sum(a)  # a helper: add runs inside sum


def _divide(a, b):
    return [x / y for x, y in zip(a, b)]  # raises on a zero: an error


matmul = profiling_wrapper(_matmul, "cupynumeric.matmul")
add = profiling_wrapper(_add, "cupynumeric.add")
sum_ = profiling_wrapper(_sum, lambda a: "cupynumeric.sum")  # a name from the arguments
divide = profiling_wrapper(_divide, "cupynumeric.divide")
