# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""cuPyNumeric v26.06's cupynumeric/_utils/profiling.py, as its public source behaves: ../README.md."""
from functools import cache, wraps

from legate.core import ProfileRange, get_legate_runtime, track_provenance

__all__ = ("profiling_wrapper", "ProfileRange")


@cache
def _profiling_enabled():
    return get_legate_runtime().config().profile


def profiling_wrapper(func, name):
    if not _profiling_enabled():

        @wraps(func)
        @track_provenance()
        def _provenance_wrapper(*args, **kwargs):
            return func(*args, **kwargs)

        return _provenance_wrapper

    @wraps(func)
    @track_provenance()
    def _profiling_wrapper(*args, **kwargs):
        profile_name = name(*args, **kwargs) if callable(name) else name
        with ProfileRange(profile_name):
            return func(*args, **kwargs)

    return _profiling_wrapper
