# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""optrace.torch: PyTorch's operators as optrace operations, with no change to PyTorch.

Turn it on with ``import optrace.torch``, ``python3 -m optrace.run`` or
OPTRACE_ADAPTERS=torch, before or after torch is imported (docs/torch.md).
Once torch is, a watcher thread looks every POLL_SECONDS whether a tracer
has armed liboptrace's probes, and only then registers the callbacks that
torch.profiler itself uses (optrace._torch, built where libtorch-dev's
headers are found): until a tracer attaches, PyTorch runs its own path,
with nothing registered. While one is attached each operator is an optrace
operation, named as torch.profiler names it; the operators it calls are its
helpers; backward operators, ``record_function`` scopes, ``optimizer.step``
and ``zero_grad`` are operations too. On the lazy device (torch._lazy) an
operator is deferred, an operator the backend does not lower falls back
(no_variant), and each graph it runs is a task of the operation that made
it run, ``torch._lazy.mark_step`` among them.
"""
import os
import sys
import threading
import time

import optrace
from . import _hooks

__all__ = ("DEPTH", "POLL_SECONDS", "armed", "available")

POLL_SECONDS = 0.1  # how soon after a tracer attaches the operators are traced


def _depth_from_environment():
    text = os.environ.get("OPTRACE_TORCH_DEPTH", "").strip()
    try:
        depth = int(text or 0)
    except ValueError:
        depth = -1
    if depth < 0:
        sys.stderr.write("optrace.torch: OPTRACE_TORCH_DEPTH=%r is not a depth (1: the "
                         "operators the program calls, 2: and theirs, 0: all); all are "
                         "traced\n" % text)
        depth = 0
    return depth


# How deep the operators are traced: 1 the program's calls alone (each costs two events,
# its helpers none), 0 all of them, as torch.profiler records them.
DEPTH = _depth_from_environment()

_operators = None  # optrace._torch, once torch is imported and it loaded
_lazy = False  # torch._lazy imported: the callbacks read each operator's inputs' device
_why_not = None
_watcher = None
_armed_for_lazy = None  # while armed: the _lazy it was armed with
_lock = threading.Lock()


def available():
    """True where optrace._torch loaded (built against this PyTorch's libtorch)."""
    return _operators is not None


def armed():
    """Whether the operator callbacks are registered now (a tracer is attached)."""
    return _operators is not None and _operators.armed()


def _library_paths():
    """The files that are not the user's: PyTorch's, optrace's, and those set before."""
    paths = set(optrace.library_paths())
    for package in ("torch", "optrace"):
        module = sys.modules.get(package)
        for folder in getattr(module, "__path__", None) or ():
            paths.add(os.path.join(folder, ""))
    paths = sorted(paths)
    optrace.set_library_paths(paths)
    return paths


def _follow_tracer():
    """Registers the callbacks while a tracer is attached, and only then."""
    global _armed_for_lazy
    with _lock:
        if optrace.enabled():
            if _armed_for_lazy != _lazy:
                _operators.arm(_library_paths(), _lazy, DEPTH)
                _armed_for_lazy = _lazy
        elif _armed_for_lazy is not None:
            _operators.disarm()
            _armed_for_lazy = None


def _watch():
    while True:
        _follow_tracer()
        time.sleep(POLL_SECONDS)


def _start_watcher():
    global _watcher
    _watcher = threading.Thread(target=_watch, name="optrace.torch", daemon=True)
    _watcher.start()


def _on_torch(torch):
    global _operators, _why_not
    try:
        from . import _torch
    except ImportError as error:
        _why_not = str(error)
        sys.stderr.write("optrace.torch: PyTorch's operators are not traced: optrace._torch "
                         "did not load (%s); it is built where libtorch-dev's headers are "
                         "found, for the libtorch that python3-torch uses\n" % error)
        return
    _operators = _torch
    _library_paths()
    _start_watcher()
    # A forked child (a DataLoader worker) has no watcher thread: it gets its own.
    os.register_at_fork(after_in_child=_start_watcher)


def _on_lazy(lazy):
    """The lazy device: operators read their inputs' device from now on; mark_step, the
    user's call that runs the graph the lazy device recorded, is an operation."""
    global _lazy
    _lazy = True
    if _operators is not None:
        _follow_tracer()
    mark_step = lazy.mark_step
    if getattr(mark_step, "__wrapped__", None) is not None:
        return
    traced = optrace.trace("torch._lazy.mark_step")(mark_step)
    traced.__wrapped__ = mark_step
    lazy.mark_step = traced


_hooks.after_import("torch", _on_torch)
_hooks.after_import("torch._lazy", _on_lazy)
