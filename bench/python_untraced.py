#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Untraced cost of the optrace Python module, in one run.

Compares a bare function call, the same call inside an empty Python
context manager, inside an untraced ``with optrace.op(...)``, and a call
of a function decorated with ``@optrace.trace``. Prints ns per call and the
overhead over the bare call; the budget is 100 ns over it.

    PYTHONPATH=.output/python /usr/bin/python3 bench/python_untraced.py [CALLS]
"""

import sys
import time

import optrace

BUDGET_NS = 100.0


def work(x):
    return x


@optrace.trace("bench.decorated")
def decorated(x):
    return x


@optrace.trace(lambda x: "bench.named_by_callable")
def decorated_callable(x):
    return x


class Empty:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def loop_bare(n):
    for i in range(n):
        work(i)


def loop_empty_cm(n):
    for i in range(n):
        with Empty():
            work(i)


def loop_op(n):
    op = optrace.op
    for i in range(n):
        with op("bench.op"):
            work(i)


def loop_decorated(n):
    for i in range(n):
        decorated(i)


def loop_decorated_callable(n):
    for i in range(n):
        decorated_callable(i)


def loop_empty(n):
    for i in range(n):
        pass


def best_ns(loop, n, rounds):
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter_ns()
        loop(n)
        best = min(best, (time.perf_counter_ns() - start) / n)
    return best


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000000
    rounds = 7
    if optrace.enabled():
        print("a tracer is attached: these are not untraced numbers", file=sys.stderr)
    empty = best_ns(loop_empty, n, rounds)
    cases = [
        ("bare call", loop_bare),
        ("empty Python context manager", loop_empty_cm),
        ("with optrace.op(name)", loop_op),
        ("@optrace.trace(name)", loop_decorated),
        ("@optrace.trace(callable)", loop_decorated_callable),
    ]
    results = [(label, best_ns(loop, n, rounds) - empty) for label, loop in cases]
    bare = results[0][1]
    print(f"python {sys.version.split()[0]}, {n} calls, best of {rounds}, "
          f"loop overhead ({empty:.1f} ns) subtracted")
    print(f"{'case':<32} {'ns/call':>8} {'over bare':>10}")
    worst = 0.0
    for label, ns in results:
        print(f"{label:<32} {ns:8.1f} {ns - bare:10.1f}")
        if "optrace" in label:
            worst = max(worst, ns - bare)
    verdict = "within" if worst < BUDGET_NS else "OVER"
    print(f"worst optrace overhead {worst:.1f} ns: {verdict} the {BUDGET_NS:.0f} ns budget")


if __name__ == "__main__":
    main()
