# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Times cuPyNumeric calls, through optrace.cupynumeric's wrapper or cuPyNumeric's own.

    python3 -m optrace.run bench/cupynumeric_calls.py alone|adapted [CALLS]

For bench/cupynumeric_overhead.sh. Each cuPyNumeric function the adapter wrapped keeps
cuPyNumeric's own wrapper as __wrapped__: calling that is cuPyNumeric alone. The cheapest
calls that return an array, so that the wrapper's cost is not lost in the work or in the
spread between processes (np.add costs 17 to 32 us on the stub from one process to the next,
ndarray.view 0.28 us): ndarray.view, ndarray.squeeze and np.asarray of an array of 16
elements, in turn. Prints the thread's CPU time per call, in ns.
"""
import sys
import time

import cupynumeric as np


def main():
    adapted = sys.argv[1] == "adapted"
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 300000
    a = np.ones(16)
    functions = (type(a).view, type(a).squeeze, np.asarray)
    if not all(hasattr(f, "__wrapped__") for f in functions):
        sys.exit("cupynumeric_calls.py: the adapter is not installed (python3 -m optrace.run)")
    view, squeeze, asarray = functions if adapted else (f.__wrapped__ for f in functions)
    for _ in range(300):  # warm
        view(a), squeeze(a), asarray(a)
    start = time.thread_time_ns()
    for _ in range(calls // 3):
        view(a)
        squeeze(a)
        asarray(a)
    print("%.0f" % ((time.thread_time_ns() - start) / (calls // 3 * 3)))


main()
