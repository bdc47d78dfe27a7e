# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""optrace: operation tracing for Python array runtimes, over liboptrace.

The core (operations, modes, fallbacks, tasks, waits, call sites) is the C
extension optrace._optrace, re-exported here: docs/python.md. The adapters
of runtimes that cannot call optrace themselves are submodules, one per
runtime (optrace.cupynumeric): importing one installs it, and
``python3 -m optrace.run SCRIPT`` or OPTRACE_ADAPTERS=NAME[,NAME] install
them before a script runs (docs/adapters.md).
"""
from ._optrace import *  # noqa: F401,F403 (the API, as docs/python.md lists it)
from ._optrace import LIBOPTRACE, _intern, _intern_count  # noqa: F401
