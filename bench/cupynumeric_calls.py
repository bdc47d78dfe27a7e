# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Times cuPyNumeric calls with and without optrace.cupynumeric's wrapper, in one process.

    python3 -m optrace.run bench/cupynumeric_calls.py [CALLS] [ROUNDS]

For bench/cupynumeric_overhead.sh. Each cuPyNumeric function the adapter wrapped keeps
cuPyNumeric's own wrapper as __wrapped__: calling that is cuPyNumeric alone. Small eager
arrays, so that the wrappers' cost is not lost in the work (a call costs tens of us on the
stub, and one process's spread between runs is a us): np.add of two arrays of 16 elements,
np.ndim, and ndarray.sum, rounds alternating the two, the thread's CPU time. Prints
"alone NS adapted NS", the medians of the rounds, per call.
"""
import statistics
import sys
import time

import cupynumeric as np


def main():
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    a = np.ones(16)
    b = np.arange(16.0)
    adapted = (np.add, np.ndim, type(a).sum)
    if not all(hasattr(f, "__wrapped__") for f in adapted):
        sys.exit("cupynumeric_calls.py: the adapter is not installed (python3 -m optrace.run)")
    alone = tuple(f.__wrapped__ for f in adapted)

    def run(functions):
        add, ndim, total = functions
        start = time.thread_time_ns()
        for _ in range(calls // 3):
            add(a, b)
            ndim(a)
            total(a)
        return (time.thread_time_ns() - start) / (calls // 3 * 3)

    run(adapted), run(alone)  # warm
    times = {"alone": [], "adapted": []}
    for _ in range(rounds):
        times["alone"].append(run(alone))
        times["adapted"].append(run(adapted))
    print("alone %.0f adapted %.0f" % (statistics.median(times["alone"]),
                                        statistics.median(times["adapted"])))


main()
