# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""optrace export --perfetto against --chrome on the same capture: the
protobuf is decoded with Perfetto's schema (perfetto_subset.proto, compiled
with Debian's protoc at run time) and must hold the same processes,
threads, slices (names, categories, times, arguments) and flows as the
Chrome JSON, with every track's begins and ends balanced, in at most 0.4
times its size. The demo's capture needs root and BPF; a synthetic capture
with GPU activity (bench/gen_capture) needs neither."""

import os
import shutil
import subprocess
import tempfile
import unittest

import perfetto_read
from test_demo import BUILD, OPTRACE, bpf_unavailable_reason

DEMO = os.path.join(BUILD, "bin", "optrace-demo")
GEN_CAPTURE = os.path.join(BUILD, "bench", "gen_capture")
SIZE_RATIO = 0.4


class ExportCase(unittest.TestCase):
    def setUp(self):
        why = perfetto_read.missing_tools()
        if why:
            self.skipTest(why)
        self.dir = tempfile.mkdtemp(prefix="optrace-perfetto-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def run_ok(self, argv, timeout=300):
        out = subprocess.run(argv, capture_output=True, text=True,
                             timeout=timeout)
        self.assertEqual(out.returncode, 0,
                         f"{' '.join(argv)}: {out.stderr[-2000:]}")
        return out

    def export_both(self, capture, *options):
        """Exports capture both ways; returns (Chrome, Perfetto) Timelines
        and the size ratio."""
        chrome, perfetto = self.path("trace.json"), self.path("trace.pftrace")
        self.run_ok([OPTRACE, "export", "--chrome", *options, "-o", chrome,
                     capture])
        self.run_ok([OPTRACE, "export", "--perfetto", *options, "-o",
                     perfetto, capture])
        ratio = os.path.getsize(perfetto) / os.path.getsize(chrome)
        return (perfetto_read.read_chrome(chrome),
                perfetto_read.read_perfetto(perfetto), ratio)

    def assert_same(self, chrome, perfetto, ratio):
        self.assertEqual(perfetto_read.compare(chrome, perfetto), [])
        self.assertEqual(perfetto.problems, [])
        self.assertTrue(perfetto.first_flags &
                        perfetto_read.SEQ_INCREMENTAL_STATE_CLEARED,
                        "the first packet does not start the sequence")
        self.assertLessEqual(ratio, SIZE_RATIO)

    def categories(self, timeline):
        return {s.category for s in timeline.slices}


class TestPerfettoSynthetic(ExportCase):
    def setUp(self):
        super().setUp()
        if not os.access(GEN_CAPTURE, os.X_OK):
            self.skipTest(f"{GEN_CAPTURE} is not built (make bench)")

    def test_gpu_capture_both_ways(self):
        capture = self.path("gpu.capture")
        self.run_ok([GEN_CAPTURE, capture, "30000", "--gpu"])
        for options in ((), ("--show-helpers",)):
            with self.subTest(options=options):
                chrome, perfetto, ratio = self.export_both(capture, *options)
                self.assert_same(chrome, perfetto, ratio)
                self.assertEqual(self.categories(perfetto),
                                 {"op", "task", "kernel"})
                # A flow to each task point and to each kernel.
                points = sum(s.category == "task" for s in perfetto.slices)
                kernels = sum(s.category == "kernel"
                              for s in perfetto.slices)
                self.assertEqual(sum(perfetto.flows.values()),
                                 points + kernels)
                self.assertEqual(
                    sorted(name for (_, name) in perfetto.track_names),
                    ["GPU 0 stream 7", "process 4242", "thread 4242",
                     "thread 4243", "thread 4244"])

    def test_one_format_one_capture(self):
        capture = self.path("small.capture")
        self.run_ok([GEN_CAPTURE, capture, "1000"])
        # Two formats: a usage error; one capture given twice: refused.
        for argv, status in ((["--perfetto", "--chrome"], 2), (["--perfetto"], 1)):
            out = subprocess.run([OPTRACE, "export", *argv, "-o",
                                  self.path("t.pftrace"), capture, capture],
                                 capture_output=True, text=True, timeout=60)
            self.assertEqual(out.returncode, status, out.stderr)
            self.assertFalse(os.path.exists(self.path("t.pftrace")))


class TestPerfettoDemo(ExportCase):
    def setUp(self):
        why = bpf_unavailable_reason()
        if why:
            self.skipTest(why)
        super().setUp()

    def test_demo_capture_both_ways(self):
        capture = self.path("demo.capture")
        self.run_ok([OPTRACE, "record", "-q", "-o", capture, "--", DEMO,
                     "--workload", "all", "--omp", "1", "-q"])
        for options in ((), ("--show-helpers",)):
            with self.subTest(options=options):
                chrome, perfetto, ratio = self.export_both(capture, *options)
                self.assert_same(chrome, perfetto, ratio)
                self.assertEqual(self.categories(perfetto),
                                 {"op", "task", "wait"})
                self.assertGreater(sum(perfetto.flows.values()), 0)
                # Processes named by their command (and pid, rank).
                self.assertEqual(len(perfetto.processes), 1)
                for pid, name in perfetto.processes.items():
                    self.assertTrue(name.startswith(f"optrace-demo {pid}"),
                                    name)


if __name__ == "__main__":
    unittest.main()
