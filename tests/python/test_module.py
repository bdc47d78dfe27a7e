# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The optrace module without a tracer: what a caller can observe."""

import os
import subprocess
import sys
import tempfile
import threading
import unittest

import optrace


class TestConstants(unittest.TestCase):
    def test_values_are_abi_2(self):
        # ABI 2 added the fast path; every value of ABI 1 is unchanged.
        self.assertEqual(optrace.ABI_VERSION, 4)
        self.assertEqual((optrace.EAGER, optrace.DEFERRED, optrace.MIXED,
                          optrace.FALLBACK), (0, 1, 2, 3))
        self.assertEqual((optrace.BELOW_THRESHOLD, optrace.ABOVE_THRESHOLD,
                          optrace.FORCED, optrace.EMPTY,
                          optrace.INPUTS_DEFERRED, optrace.HELPERS,
                          optrace.REASON_FALLBACK), (1, 2, 3, 4, 5, 6, 7))
        self.assertEqual((optrace.UNIMPLEMENTED_API,
                          optrace.UNSUPPORTED_ARGUMENTS,
                          optrace.UNSUPPORTED_DTYPE, optrace.NO_VARIANT,
                          optrace.FALLBACK_OTHER), (1, 2, 3, 4, 5))
        self.assertEqual((optrace.CPU, optrace.OPENMP, optrace.GPU,
                          optrace.HOST_REFERENCE), (0, 1, 2, 3))
        self.assertEqual((optrace.FUTURE, optrace.INLINE_MAP, optrace.FENCE,
                          optrace.WAIT_OTHER), (0, 1, 2, 3))
        self.assertEqual((optrace.OK, optrace.ERROR), (0, 1))

    def test_names(self):
        self.assertEqual(optrace.mode_name(optrace.DEFERRED), "deferred")
        self.assertEqual(optrace.mode_reason_name(optrace.HELPERS), "helpers")
        self.assertEqual(optrace.fallback_reason_name(
            optrace.UNIMPLEMENTED_API), "unimplemented_api")
        self.assertEqual(optrace.variant_name(optrace.HOST_REFERENCE),
                         "fallback")
        self.assertEqual(optrace.wait_kind_name(optrace.INLINE_MAP),
                         "inline_map")
        self.assertEqual(optrace.status_name(optrace.ERROR), "error")
        self.assertEqual(optrace.mode_name(99), "unknown")
        self.assertEqual(optrace.mode_name(2**40), "unknown")


class TestOp(unittest.TestCase):
    def test_untraced(self):
        self.assertFalse(optrace.enabled())
        optrace.rt_init()
        optrace.rt_init(rank=0, rank_count=1)
        with optrace.op("test.op") as op:
            self.assertEqual(op.id, 0)
            self.assertEqual(op.name, "test.op")
            self.assertEqual(optrace.current_op(), 0)
            op.mode(optrace.EAGER, optrace.BELOW_THRESHOLD)
            op.fallback(optrace.UNIMPLEMENTED_API, "detail")
            optrace.mode(optrace.EAGER, optrace.BELOW_THRESHOLD)
            optrace.fallback(optrace.UNSUPPORTED_DTYPE, "detail")
            optrace.fallback(optrace.FALLBACK_OTHER)

    def test_nesting(self):
        self.assertEqual(optrace.depth(), 0)
        with optrace.op("a"):
            self.assertEqual(optrace.depth(), 1)
            with optrace.op("b"):
                self.assertEqual(optrace.depth(), 2)
                with optrace.op("c"):
                    self.assertEqual(optrace.depth(), 3)
                self.assertEqual(optrace.depth(), 2)
            self.assertEqual(optrace.depth(), 1)
        self.assertEqual(optrace.depth(), 0)

    def test_deep_nesting(self):
        def nest(n):
            if n == 0:
                return optrace.depth()
            with optrace.op("deep"):
                return nest(n - 1)
        self.assertEqual(nest(200), 200)
        self.assertEqual(optrace.depth(), 0)

    def test_exception_propagates(self):
        with self.assertRaises(KeyError):
            with optrace.op("a"):
                with optrace.op("b"):
                    raise KeyError("x")
        self.assertEqual(optrace.depth(), 0)

    def test_not_suppressed_and_reentry(self):
        op = optrace.op("a")
        self.assertIs(op.__enter__(), op)
        with self.assertRaises(RuntimeError):
            op.__enter__()
        self.assertFalse(op.__exit__(ValueError, ValueError(), None))
        self.assertEqual(optrace.depth(), 0)
        with op:
            self.assertEqual(optrace.depth(), 1)
        self.assertEqual(optrace.depth(), 0)

    def test_bad_names(self):
        with self.assertRaises(TypeError):
            optrace.op(3)
        with self.assertRaises(TypeError):
            optrace.trace(3)

    def test_wait_and_tasks(self):
        with optrace.op("a"):
            with optrace.wait(optrace.FUTURE) as w:
                self.assertIsInstance(w, optrace.wait)
            task = optrace.task_launch("Task", 4)
            self.assertTrue(task & (1 << 63))  # untraced: OPTRACE_TASK_UNTRACED
        self.assertTrue(optrace.task_launch("Task", points=1, op=7) & (1 << 63))
        optrace.task_begin(task, 0, optrace.CPU, 0)
        optrace.task_end(task, 0, optrace.OK)
        optrace.task_begin(1, point=2, variant=optrace.GPU, processor=3)
        optrace.task_end(1, point=2, status=optrace.ERROR)
        with optrace.wait(optrace.FENCE):
            pass

    def test_threads_have_their_own_stack(self):
        errors = []
        barrier = threading.Barrier(4)

        def worker(levels):
            try:
                barrier.wait()
                def nest(level):
                    with optrace.op("t.op"):
                        if optrace.depth() != level + 1:
                            errors.append((level, optrace.depth()))
                        if level < levels:
                            nest(level + 1)

                for _ in range(2000):
                    nest(0)
                    if optrace.depth() != 0:
                        errors.append(optrace.depth())
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(n,))
                   for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])


class TestTrace(unittest.TestCase):
    def test_decorator(self):
        depths = []

        @optrace.trace("test.f")
        def f(x, y=2):
            """f's doc"""
            depths.append(optrace.depth())
            return x * y

        self.assertEqual(f(3), 6)
        self.assertEqual(f(3, y=4), 12)
        self.assertEqual(f.__name__, "f")
        self.assertEqual(f.__doc__, "f's doc")
        self.assertEqual(f.__wrapped__(1, 1), 1)
        self.assertEqual(f.optrace_name, "test.f")
        self.assertEqual(depths, [1, 1, 0])
        self.assertEqual(optrace.depth(), 0)

    def test_callable_name_not_called_untraced(self):
        calls = []

        def name(*args, **kwargs):
            calls.append((args, kwargs))
            return "test.named"

        @optrace.trace(name)
        def g(a, b=0):
            return a + b

        self.assertEqual(g(1, b=2), 3)
        self.assertEqual(calls, [])

    def test_after_not_called_untraced(self):
        # after(result) is an adapter's say on a traced call (its mode): untraced, nothing
        seen = []

        @optrace.trace("test.after", after=seen.append)
        def f(x):
            return x * 2

        self.assertEqual(f(21), 42)
        self.assertEqual(seen, [])
        with self.assertRaises(TypeError):
            optrace.trace("test.after", after=42)
        with self.assertRaises(TypeError):
            optrace.trace("test.after", print)  # after is a keyword

    def test_default_name(self):
        @optrace.trace()
        def h():
            return 1

        self.assertEqual(h(), 1)
        self.assertTrue(h.optrace_name.endswith("h"))

    def test_exception(self):
        @optrace.trace("test.raises")
        def bad():
            raise ZeroDivisionError

        with self.assertRaises(ZeroDivisionError):
            bad()
        self.assertEqual(optrace.depth(), 0)

    def test_methods(self):
        class A:
            @optrace.trace("test.method")
            def m(self, v):
                return (self, v)

            @staticmethod
            @optrace.trace("test.static")
            def s(v):
                return v

        a = A()
        self.assertEqual(a.m(1), (a, 1))
        bound = a.m
        self.assertEqual(bound(2), (a, 2))
        self.assertEqual(A.m(a, 3), (a, 3))
        self.assertEqual(A.s(4), 4)


class TestStrings(unittest.TestCase):
    def test_interning_is_stable(self):
        first = optrace._intern("test.interned")
        count = optrace._intern_count()
        self.assertEqual(optrace._intern("test." + "interned"), first)
        self.assertEqual(optrace._intern_count(), count)
        self.assertNotEqual(optrace._intern("test.other"), first)
        self.assertEqual(optrace._intern_count(), count + 1)
        self.assertNotEqual(optrace._intern("ünïcode"), 0)
        with self.assertRaises(TypeError):
            optrace._intern(b"bytes")

    def test_interning_is_bounded(self):
        # In a child: the table is never freed.
        code = (
            "import optrace\n"
            "too_many = optrace._intern(optrace.TOO_MANY_NAMES)\n"
            "ptrs = [optrace._intern(f'n{i}') for i in range(70000)]\n"
            "assert optrace._intern_count() == optrace.INTERN_MAX\n"
            "assert ptrs[1000] == optrace._intern('n1000')\n"
            "assert len(set(ptrs[:optrace.INTERN_MAX - 1])) == "
            "optrace.INTERN_MAX - 1\n"
            "assert optrace._intern('new name') != ptrs[0]\n"
            "print(len(set(ptrs[optrace.INTERN_MAX:])))\n")
        out = subprocess.run([sys.executable, "-c", code], check=True,
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(out.stdout.strip(), "1")


class TestCallsite(unittest.TestCase):
    def tearDown(self):
        optrace.set_library_paths([])

    def test_here(self):
        line = sys._getframe().f_lineno + 1
        site = optrace.callsite()
        self.assertEqual(site, f"{__file__}:{line}")

    def test_library_frames_are_skipped(self):
        with tempfile.TemporaryDirectory() as lib:
            with open(os.path.join(lib, "mylib_cs.py"), "w") as f:
                f.write("import optrace\n"
                        "def helper():\n"
                        "    return optrace.callsite()\n"
                        "def api():\n"
                        "    return helper()\n")
            sys.path.insert(0, lib)
            try:
                import mylib_cs
                line = sys._getframe().f_lineno + 1
                site = mylib_cs.api()
                self.assertTrue(site.endswith("mylib_cs.py:3"), site)
                path = optrace.internal_module("mylib_cs")
                self.assertTrue(path.endswith("mylib_cs.py"), path)
                self.assertIn(path, optrace.library_paths())
                line = sys._getframe().f_lineno + 1
                site = mylib_cs.api()
                self.assertEqual(site, f"{__file__}:{line}")
                optrace.set_library_paths([lib + "/"])
                site = mylib_cs.api()
                self.assertEqual(site, f"{__file__}:{line + 3}")
            finally:
                sys.path.remove(lib)
                sys.modules.pop("mylib_cs", None)

    def test_everything_is_library(self):
        optrace.set_library_paths(["/"])
        self.assertEqual(optrace.callsite(), "(unknown)")
        optrace.set_library_paths([])


if __name__ == "__main__":
    unittest.main()
