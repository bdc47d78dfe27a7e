# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The runtime side of minirt: operations, the mode decision, tasks, truth.

Every probe that minirt fires through the optrace module is also counted
here, traced or not, so that the demo can print its ground truth at exit in
the C demo's format (docs/demo.md): what the probes fire when a tracer is
attached from the start.
"""

import collections
import concurrent.futures
import functools
import math
import os
import threading

import optrace

TRUTH_HEADER = "# optrace-demo ground truth, format 1"
POINT_VOLUME = 1024


class Truth:
    """Counts of every probe call, by the keys of the ground-truth format."""

    def __init__(self):
        self.lock = threading.Lock()
        self.ops = collections.Counter()
        self.modes = collections.Counter()
        self.fallbacks = collections.Counter()
        self.statuses = collections.Counter()
        self.launches = collections.Counter()
        self.points = collections.Counter()
        self.tasks = collections.Counter()
        self.waits = collections.Counter()

    def add(self, table, key, count=1):
        with self.lock:
            table[key] += count

    def lines(self, pid):
        out = [TRUTH_HEADER, f"begin {pid}"]
        with self.lock:
            rows = [f"op {name} {depth} {n}"
                    for (name, depth), n in sorted(self.ops.items())]
            rows += sorted(f"mode {name} {optrace.mode_name(mode)} "
                           f"{optrace.mode_reason_name(reason)} {n}"
                           for (name, mode, reason), n in self.modes.items())
            rows += sorted(f"fallback {name} "
                           f"{optrace.fallback_reason_name(reason)} {n}"
                           for (name, reason), n in self.fallbacks.items())
            rows += sorted(f"status {name} {optrace.status_name(status)} {n}"
                           for (name, status), n in self.statuses.items())
            rows += [f"launch {task} {n} {self.points[task]}"
                     for task, n in sorted(self.launches.items())]
            rows += sorted(f"task {task} {optrace.variant_name(variant)} {n}"
                           for (task, variant), n in self.tasks.items())
            rows += sorted(f"wait {optrace.wait_kind_name(kind)} {n}"
                           for kind, n in self.waits.items())
        out += rows
        out.append(f"end {pid}")
        return "\n".join(out) + "\n"


truth = Truth()


class _Frame:
    __slots__ = ("name", "mode", "helper_modes")

    def __init__(self, name):
        self.name = name
        self.mode = None
        self.helper_modes = []


class Config:
    """cuPyNumeric's CUPYNUMERIC_MAX_EAGER_VOLUME, as MINIRT_MAX_EAGER_VOLUME."""

    max_eager_volume = int(os.environ.get("MINIRT_MAX_EAGER_VOLUME", "4096"))
    workers = 2


config = Config()
_local = threading.local()
_pool = None
_pool_lock = threading.Lock()
_next_processor = 0


def _stack():
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def _run(name, func, args, kwargs):
    """The body of one operation, inside the op that optrace.trace opened."""
    stack = _stack()
    depth = len(stack)
    truth.add(truth.ops, (name, depth))
    frame = _Frame(name)
    stack.append(frame)
    status = optrace.OK
    try:
        result = func(*args, **kwargs)
        # A composite follows its helpers: their common mode, else mixed.
        if frame.mode is None and frame.helper_modes:
            modes = set(frame.helper_modes)
            announce(modes.pop() if len(modes) == 1 else optrace.MIXED,
                     optrace.HELPERS)
        return result
    except BaseException:
        status = optrace.ERROR
        raise
    finally:
        stack.pop()
        truth.add(truth.statuses, (name, status))
        if stack and frame.mode is not None:
            stack[-1].helper_modes.append(frame.mode)


def api(name):
    """Make func an operation called name (a str, or a callable of the call's
    arguments), the way cuPyNumeric's API decorator wraps NumPy's names."""

    def decorate(func):
        if callable(name):
            def counted(*args, **kwargs):
                return _run(name(*args, **kwargs), func, args, kwargs)
        else:
            def counted(*args, **kwargs):
                return _run(name, func, args, kwargs)
        functools.update_wrapper(counted, func)
        return optrace.trace(name)(counted)

    return decorate


def announce(mode, reason):
    """op_mode for the innermost operation of this thread."""
    frame = _stack()[-1]
    frame.mode = mode
    truth.add(truth.modes, (frame.name, mode, reason))
    optrace.mode(mode, reason)


def decide(volume):
    """cuPyNumeric's eager/deferred decision by the volume of the output."""
    if volume == 0:
        announce(optrace.EAGER, optrace.EMPTY)
        return optrace.EAGER
    if volume <= config.max_eager_volume:
        announce(optrace.EAGER, optrace.BELOW_THRESHOLD)
        return optrace.EAGER
    announce(optrace.DEFERRED, optrace.ABOVE_THRESHOLD)
    return optrace.DEFERRED


def fallback(reason, detail):
    """The innermost operation runs NumPy instead: mode, then op_fallback."""
    announce(optrace.FALLBACK, optrace.REASON_FALLBACK)
    frame = _stack()[-1]
    truth.add(truth.fallbacks, (frame.name, reason))
    optrace.fallback(reason, detail)


def wait(kind):
    truth.add(truth.waits, kind)
    return optrace.wait(kind)


def _processor():
    global _next_processor
    proc = getattr(_local, "processor", None)
    if proc is None:
        with _pool_lock:
            proc = _local.processor = _next_processor
            _next_processor += 1
    return proc


def _get_pool():
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(
                max_workers=config.workers, thread_name_prefix="minirt-cpu")
        return _pool


def _point(task, task_name, point, body, lo, hi):
    optrace.task_begin(task, point, optrace.CPU, _processor())
    truth.add(truth.tasks, (task_name, optrace.CPU))
    status = optrace.ERROR
    try:
        result = body(lo, hi)
        status = optrace.OK
        return result
    finally:
        optrace.task_end(task, point, status)


def launch(task_name, volume, body, wait_kind):
    """Deferred execution: one task of a few points on the CPU processors,
    each running body(lo, hi) on its piece; the caller then blocks on them.
    Returns the points' results in order."""
    points = max(1, min(config.workers, math.ceil(volume / POINT_VOLUME)))
    task = optrace.task_launch(task_name, points)
    truth.add(truth.launches, task_name)
    truth.add(truth.points, task_name, points)
    pool = _get_pool()
    bounds = [(volume * p // points, volume * (p + 1) // points)
              for p in range(points)]
    futures = [pool.submit(_point, task, task_name, p, body, lo, hi)
               for p, (lo, hi) in enumerate(bounds)]
    with wait(wait_kind):
        return [f.result() for f in futures]


def shutdown():
    global _pool
    with _pool_lock:
        pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=True)
