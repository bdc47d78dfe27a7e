# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""minirt: a miniature array runtime over NumPy, instrumented with optrace.

It decides eager or deferred by size as cuPyNumeric does, runs deferred
work as tasks on a pool of CPU "processors", falls back to NumPy where it
has no implementation, and counts every probe it fires (``truth``).
"""

import optrace

from ._ops import add, binary, divide, mean, multiply, sort, sqrt, subtract, sum, var
from ._runtime import config, shutdown, truth

# Call sites point at the user's code: frames in this package are the library.
optrace.internal_module(__name__)

__all__ = ["add", "binary", "config", "divide", "mean", "multiply", "shutdown",
           "sort", "sqrt", "start", "subtract", "sum", "truth", "var"]


def start(rank=-1, rank_count=-1):
    """Announce the runtime to optrace (rt_init)."""
    optrace.rt_init(rank, rank_count)
