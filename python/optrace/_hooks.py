# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Runs code right after a module is imported, before anyone else uses it.

An adapter changes no file of the runtime it traces: it wraps what the
runtime's own modules define, as soon as each is executed, so that what
imports them by name gets the wrapped version. A meta path finder defers to
the other finders, and wraps the loader of the modules asked for.
"""
import importlib.abc
import importlib.machinery
import sys
import threading

_after = {}  # module name -> [callable(module)]
_lock = threading.Lock()


class _Loader(importlib.abc.Loader):
    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        for patch in _after.get(module.__name__, ()):
            patch(module)

    def __getattr__(self, name):  # get_source, is_package, ... for the tools that ask
        return getattr(self._loader, name)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname not in _after:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and not isinstance(spec.loader, _Loader):
                    spec.loader = _Loader(spec.loader)
                return spec
        return None


_finder = _Finder()


def after_import(name, patch):
    """Calls patch(module) once module name is executed (at once if it already was)."""
    with _lock:
        _after.setdefault(name, []).append(patch)
        if _finder not in sys.meta_path:
            sys.meta_path.insert(0, _finder)
    module = sys.modules.get(name)
    if module is not None:
        patch(module)
