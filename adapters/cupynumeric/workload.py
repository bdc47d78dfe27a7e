# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A cuPyNumeric workload for the adapter's tests, and what cuPyNumeric itself recorded.

    python3 [-m optrace.run] workload.py OUT.json [ROUNDS]

Runs ROUNDS (default 3) of calls that cover what runs on the stub Legate of
../shared/cupynumeric: eager arrays below the threshold and empty ones,
methods, operators, reductions, helpers nested in calls, and the three
fallbacks (an API cuPyNumeric lacks, an argument combination it does not
support, an input type it does not support). OUT.json gets cuPyNumeric's own
record: each profiling range as the stub Legate saw it stop (depth and
provenance, "NAME [mode: M] on FILE:LINE"), and each fallback warning with
the number of range events before it, which says the range it fell in.
"""
import json
import sys
import warnings

import numpy

warnings.simplefilter("always")
fallbacks = []


def note_warning(message, category, filename, lineno, file=None, line=None):
    from legate.core import RANGE_EVENTS

    if issubclass(category, RuntimeWarning):
        fallbacks.append([len(RANGE_EVENTS), str(message)])


warnings.showwarning = note_warning

import cupynumeric as np  # noqa: E402 (after the warnings are caught)


def one_round():
    a = np.ones(64)
    b = np.arange(64.0)
    c = np.add(a, b)
    d = (a * 2 + c).sum()
    e = np.zeros(0)
    m = np.mean(b)
    s = np.sqrt(b)
    t = np.dot(a, b)
    numpy.allclose(a, b, equal_nan=True)  # an argument combination: NumPy's, through __array_function__
    np.sort(numpy.array(["b", "a"]))  # an input type: NumPy's sort
    np.interp(1.5, [1.0, 2.0], [3.0, 4.0])  # an API it lacks
    return d, e, m, s, t


def main():
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    for _ in range(rounds):
        one_round()
    from legate.core import RANGE_EVENTS

    with open(sys.argv[1], "w") as out:
        json.dump({"events": [list(event) for event in RANGE_EVENTS],
                   "fallbacks": fallbacks}, out)


main()
