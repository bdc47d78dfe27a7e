# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Installs the adapters that OPTRACE_ADAPTERS names, at the interpreter's start.

optrace-adapters.pth (in site-packages, from the pip and Debian packages and
make install) imports this module only when OPTRACE_ADAPTERS is set, so that
a Python without it pays one environment lookup. NAME[,NAME] or "all".
"""
import importlib
import os
import sys

ADAPTERS = ("cupynumeric", "torch")  # one submodule of optrace per runtime: docs/adapters.md


def install(names):
    """Imports optrace.NAME for each name (comma-separated, or "all")."""
    wanted = ADAPTERS if names.strip() == "all" else [n.strip() for n in names.split(",")]
    for name in wanted:
        if not name:
            continue
        if name not in ADAPTERS:
            sys.stderr.write("optrace: OPTRACE_ADAPTERS names %r: the adapters are %s\n"
                             % (name, ", ".join(ADAPTERS)))
            continue
        importlib.import_module("optrace." + name)


if os.environ.get("OPTRACE_ADAPTERS"):
    install(os.environ["OPTRACE_ADAPTERS"])
