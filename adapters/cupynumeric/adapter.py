# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""optrace.cupynumeric: cuPyNumeric's calls as optrace operations, with no change to it.

Import it before cupynumeric (``import optrace.cupynumeric``, ``python3 -m
optrace.run``, or OPTRACE_ADAPTERS=cupynumeric). cuPyNumeric wraps each NumPy
name it exports in a wrapper of its own when it is imported; this adapter
wraps each of those wrappers in an optrace operation as it is made, so that
an operation is exactly one of the ranges cuPyNumeric's profiler records,
with the same name and nesting. Which generation is installed is read from
what it has (docs/cupynumeric.md):

- v25.10 to v26.01, ``cupynumeric._utils.coverage``: ``implemented`` and
  ``unimplemented`` make the wrappers. Each operation says its mode where
  cuPyNumeric decides it (eager or deferred, and why, from the array it
  returns and the thresholds cuPyNumeric applies), and its fallbacks: an
  API cuPyNumeric lacks, an argument combination it does not support
  (``issue_fallback_warning``), an input type it does not support (the
  warning of ``add_boilerplate``).
- v26.06 and later, ``cupynumeric._utils.profiling``: ``profiling_wrapper``
  makes them; no eager mode and no fallbacks there.

Untraced, an operation costs liboptrace's begin and end and nothing else:
the modes and fallbacks are worked out only while a tracer is attached.
"""
import functools
import os
import re
import sys
import threading
import types
import warnings

import optrace
from . import _hooks

__all__ = ("installed_generation",)

# The file cuPyNumeric gives its wrappers' code: the library's, not the user's.
_INTERNALS = "<cupynumeric internals>"

_state = threading.local()  # .fell_back: the id of this thread's last operation that fell back
_generation = None


def installed_generation():
    """'coverage' (v25.10 to v26.01), 'profiling' (v26.06+), or None before cupynumeric loads."""
    return _generation


def _api_name(prefix, name):
    """What cuPyNumeric's ProfileRange calls it: numpy.add is cupynumeric.add."""
    return f"{prefix}.{name}".replace("numpy.", "cupynumeric.")


def _library_paths():
    # This adapter's frames are the library's too.
    paths = [_INTERNALS, os.path.join(os.path.dirname(os.path.abspath(__file__)), "")]
    for package in ("cupynumeric", "legate"):
        module = sys.modules.get(package)
        folder = getattr(module, "__path__", None)
        if folder:
            paths.extend(os.path.join(p, "") for p in folder)
    optrace.set_library_paths(sorted(set(optrace.library_paths()) | set(paths)))


# ---- v25.10 to v26.01: cupynumeric._utils.coverage -----------------------------------

class _Modes:
    """cuPyNumeric's thresholds, read once (they are fixed when cuPyNumeric starts)."""

    def __init__(self):
        from cupynumeric.runtime import runtime
        from cupynumeric.settings import settings

        try:
            from legate.core import LEGATE_MAX_DIM
        except ImportError:
            LEGATE_MAX_DIM = 6
        try:
            from cupynumeric._thunk.deferred import DeferredArray

            self.is_deferred = lambda thunk: isinstance(thunk, DeferredArray)
        except ImportError:
            self.is_deferred = runtime.is_deferred_array
        self.max_dim = LEGATE_MAX_DIM
        self.max_eager_volume = runtime.max_eager_volume
        self.forced = settings.force_thunk() in ("eager", "deferred")

    def reason(self, shape, deferred):
        """Why an array of shape is eager or deferred: Runtime.is_eager_shape's rules."""
        volume = 1
        for extent in shape:
            volume *= extent
        if volume == 0 and not deferred:
            return optrace.EMPTY
        if len(shape) > self.max_dim and not deferred:
            return optrace.FORCED
        if self.forced:
            return optrace.FORCED
        above = volume > self.max_eager_volume if shape else self.max_eager_volume <= 0
        if deferred:
            # An array small enough to be eager is deferred because an input was.
            return optrace.ABOVE_THRESHOLD if above else optrace.INPUTS_DEFERRED
        return optrace.BELOW_THRESHOLD

    def announce(self, result):
        """The mode of the call that returned result, as cuPyNumeric's _infer_mode sees it."""
        thunk = getattr(result, "_thunk", None)
        if thunk is not None:
            deferred = self.is_deferred(thunk)
            optrace.mode(optrace.DEFERRED if deferred else optrace.EAGER,
                         self.reason(thunk.shape, deferred))
        elif type(result).__module__ == "numpy" and hasattr(result, "shape"):
            optrace.mode(optrace.EAGER, self.reason(result.shape, False))


_modes = None


def _announce_mode(result):
    global _modes
    if _modes is None:
        _modes = _Modes()
    _modes.announce(result)


def _fall_back(reason, detail):
    """A fallback of the innermost operation: its mode is fallback, whatever it returns."""
    op = optrace.current_op()
    if not op:
        return
    optrace.mode(optrace.FALLBACK, optrace.REASON_FALLBACK)
    optrace.fallback(reason, detail)
    _state.fell_back = op


_cupynumeric_globals = None


def _as_cupynumeric(function):
    """function, seen by cuPyNumeric as its own code.

    cuPyNumeric finds the user's line (its ranges' provenance, its warnings'
    location) by walking up the stack past every frame whose module name
    starts with "cupynumeric." or "legate.": a frame of this adapter's would
    be taken for the user's. The same code with globals named as cuPyNumeric's
    is passed over, so cuPyNumeric records what it records without the adapter; its file is
    named as cuPyNumeric names its wrappers' ("<cupynumeric internals>"), where a fallback
    warning points.
    """
    global _cupynumeric_globals
    if _cupynumeric_globals is None:
        _cupynumeric_globals = dict(globals(), __name__="cupynumeric._optrace_adapter")
    code = function.__code__.replace(co_filename=_INTERNALS)
    same = types.FunctionType(code, _cupynumeric_globals, function.__name__,
                              function.__defaults__, function.__closure__)
    same.__kwdefaults__ = function.__kwdefaults__
    return same


def _traced(wrapper, name, unimplemented_api=None):
    """cuPyNumeric's wrapper, called inside an optrace operation called name.

    optrace.trace's C wrapper begins and ends the operation (its name interned once: dump
    names it untraced too) and, while traced, calls after() with the result inside it: no
    frame of the adapter's sits between the user and cuPyNumeric.
    """
    current_op = optrace.current_op

    if unimplemented_api:
        def after(result):
            _fall_back(optrace.UNIMPLEMENTED_API, unimplemented_api)
    else:
        def after(result):
            if getattr(_state, "fell_back", 0) != current_op():
                _announce_mode(result)

    return _wrap(wrapper, name, after)


def _wrap(wrapper, name, after=None):
    """optrace.trace's C wrapper of cuPyNumeric's wrapper, with what cuPyNumeric set on its
    own (its metadata, a ufunc's methods) as functools.wraps copies it; __wrapped__ is
    cuPyNumeric's wrapper, which calls the function."""
    traced = optrace.trace(name, after=after)(wrapper)
    traced.__dict__.update(getattr(wrapper, "__dict__", {}))
    traced.__wrapped__ = wrapper
    return traced


def _patch_coverage(coverage):
    global _generation
    implemented, unimplemented = coverage.implemented, coverage.unimplemented
    issue_fallback_warning = coverage.issue_fallback_warning

    def traced_implemented(func, prefix, name, *args, **kwargs):
        return _traced(implemented(func, prefix, name, *args, **kwargs),
                       _api_name(prefix, name))

    def traced_unimplemented(func, prefix, name, *args, **kwargs):
        return _traced(unimplemented(func, prefix, name, *args, **kwargs),
                       _api_name(prefix, name), unimplemented_api=f"{prefix}.{name}")

    def traced_issue_fallback_warning(what, *args, **kwargs):
        # An unimplemented API says so too: its wrapper announced it already.
        match = re.match(r"the requested combination of arguments to (\S+)", what)
        if match and optrace.enabled():
            _fall_back(optrace.UNSUPPORTED_ARGUMENTS, match.group(1))
        return issue_fallback_warning(what, *args, **kwargs)

    traced_issue_fallback_warning = _as_cupynumeric(traced_issue_fallback_warning)
    functools.update_wrapper(traced_implemented, implemented)
    functools.update_wrapper(traced_unimplemented, unimplemented)
    functools.update_wrapper(traced_issue_fallback_warning, issue_fallback_warning)
    coverage.implemented = traced_implemented
    coverage.unimplemented = traced_unimplemented
    coverage.issue_fallback_warning = traced_issue_fallback_warning
    _generation = "coverage"
    _library_paths()


_INPUT_TYPE = re.compile(r"does not support the provided input type for (\S+)")


def _patch_warnings():
    """warnings.warn, which add_boilerplate imports at each input-type fallback to say it."""
    warn = warnings.warn

    def traced_warn(message, category=None, stacklevel=1, *args, **kwargs):
        if optrace.enabled() and optrace.current_op():
            match = _INPUT_TYPE.search(str(message))
            if match:
                _fall_back(optrace.UNSUPPORTED_DTYPE, match.group(1))
        # One frame more than the caller counted: this one.
        return warn(message, category, stacklevel + 1, *args, **kwargs)

    functools.update_wrapper(traced_warn, warn)
    warnings.warn = traced_warn


# ---- v26.06 and later: cupynumeric._utils.profiling -------------------------------------

def _patch_profiling(profiling):
    """profiling_wrapper(func, name): name is "cupynumeric.matmul", or a callable of the call's
    arguments that returns it, which optrace.trace takes as it is (called only while traced)."""
    global _generation
    profiling_wrapper = getattr(profiling, "profiling_wrapper", None)
    if profiling_wrapper is None:
        return

    def traced_profiling_wrapper(func, name, *args, **kwargs):
        return _wrap(profiling_wrapper(func, name, *args, **kwargs), name)

    functools.update_wrapper(traced_profiling_wrapper, profiling_wrapper)
    profiling.profiling_wrapper = traced_profiling_wrapper
    _generation = "profiling"
    _library_paths()


if "cupynumeric" in sys.modules:
    sys.stderr.write("optrace.cupynumeric: cupynumeric was imported first, and its wrappers "
                     "are made at its import: import optrace.cupynumeric (or run with "
                     "python3 -m optrace.run) before it\n")
_hooks.after_import("cupynumeric._utils.coverage", _patch_coverage)
_hooks.after_import("cupynumeric._utils.profiling", _patch_profiling)
_patch_warnings()
