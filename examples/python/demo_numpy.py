#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The Python demo: NumPy-style workloads on minirt, traced by optrace.

    PYTHONPATH=.output/python /usr/bin/python3 examples/python/demo_numpy.py
    optrace stat -- /usr/bin/python3 examples/python/demo_numpy.py --truth T

At exit it writes its ground truth (every probe it fired, counted) in the C
demo's format 1 (docs/demo.md) to --truth FILE, or to stdout; the summary
goes to stderr. Exit status 0, or 1 when a result was wrong.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import minirt  # noqa: E402


def close(x, y):
    return np.allclose(np.asarray(x, dtype=np.float64), y, rtol=1e-6, atol=1e-9)


def one_pass(n, failures):
    x = np.linspace(0.0, 1.0, n)
    small = x[:101]

    total = minirt.add(x, x)
    if not close(total, x + x):
        failures.append("add")
    if not close(minirt.mean(x), np.mean(x)):
        failures.append("mean")
    if not close(minirt.var(x), np.var(x)):
        failures.append("var")
    if not close(minirt.sqrt(x), np.sqrt(x)):
        failures.append("sqrt")
    if not close(minirt.mean(small), np.mean(small)):
        failures.append("mean (small)")
    if not close(minirt.var(small), np.var(small)):
        failures.append("var (small)")
    if not close(minirt.sum(np.empty(0)), 0.0):
        failures.append("sum (empty)")
    # Fallbacks: an API minirt lacks, and a dtype it has no kernels for.
    if not close(minirt.sort(x[::-1][:1000]), np.sort(x[::-1][:1000])):
        failures.append("sort")
    half = x[:500].astype(np.float16)
    if abs(float(minirt.mean(half)) - float(np.mean(half))) > 1e-3:
        failures.append("mean (float16)")
    # A deliberate error: status error, reported to the caller.
    try:
        minirt.add(x, x[:-1])
        failures.append("add of different shapes did not fail")
    except ValueError:
        pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-s", "--size", type=int, default=100000,
                        help="elements per array (default 100000: deferred)")
    parser.add_argument("-i", "--iterations", type=int, default=5,
                        help="passes over the workload (default 5)")
    parser.add_argument("--eager-volume", type=int, default=None,
                        help="the eager threshold (default "
                        "$MINIRT_MAX_EAGER_VOLUME, else 4096)")
    parser.add_argument("--truth", metavar="FILE",
                        help="where the ground truth goes (default stdout)")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="no summary on stderr")
    args = parser.parse_args()
    if args.size < 1000 or args.iterations < 0:
        parser.error("--size must be at least 1000, --iterations at least 0")
    if args.eager_volume is not None:
        minirt.config.max_eager_volume = args.eager_volume

    minirt.start()
    failures = []
    for _ in range(args.iterations):
        one_pass(args.size, failures)
    minirt.shutdown()

    text = minirt.truth.lines(os.getpid())
    if args.truth:
        with open(args.truth, "w") as out:
            out.write(text)
    else:
        sys.stdout.write(text)
    if not args.quiet:
        print(f"demo_numpy: {args.iterations} passes of {args.size} elements, "
              f"{'FAILED: ' + ', '.join(failures) if failures else 'all results right'}",
              file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
