# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""python3 -m optrace.run [-a NAME[,NAME]] SCRIPT [ARGS...]

Runs SCRIPT as python3 would (as ``python3 -m cProfile`` does), with the
adapters of the runtimes installed first: every adapter optrace has, or those
named with -a (OPTRACE_ADAPTERS says the same). A runtime it does not
import costs nothing. ``-m MODULE`` runs a module instead of a script.

    python3 -m optrace.run app.py --size 1000
    optrace stat -- python3 -m optrace.run app.py
"""
import os
import runpy
import sys

from . import _startup


def main(argv):
    names = None
    while argv and argv[0] in ("-a", "--adapters"):
        if len(argv) < 2:
            break
        names = argv[1]
        argv = argv[2:]
    if not argv or argv[0] in ("-h", "--help"):
        sys.stderr.write(__doc__.split("\n\n", 1)[0] + "\n")
        return 2 if not argv else 0
    _startup.install(names or os.environ.get("OPTRACE_ADAPTERS") or "all")
    if argv[0] == "-m" and len(argv) > 1:
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return 0
    sys.argv = argv
    sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
    runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
