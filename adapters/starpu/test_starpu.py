# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""liboptrace-starpu on Debian's StarPU 1.3 (its OpenCL device from pocl, on the CPU), against
StarPU's own worker statistics (STARPU_WORKER_STATS_FILE) of the same run: task runs per
variant and per worker, each variant forced and by the scheduler's choice, on the project's
two-variant program and on Debian's example binaries as shipped; and the tasks submitted
inside an optrace operation attributed to it."""

import collections
import csv
import json
import os
import re
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
import adapter_checks  # noqa: E402 (RuntimeTestCase)
import test_demo  # noqa: E402 (bpf_unavailable_reason, BUILD)

BUILD = os.path.abspath(test_demo.BUILD)
OPTRACE = os.path.join(BUILD, "bin", "optrace")
PRELOAD = os.path.join(BUILD, "lib", "liboptrace-starpu.so")
TWO_VARIANTS = os.path.join(BUILD, "tests", "starpu_two_variants")
EXAMPLES = "/usr/lib/x86_64-linux-gnu/starpu/examples"
TASKS, OUTSIDE = 100, 10
# StarPU's choice, and each variant forced: what runs where
CONFIGURATIONS = {
    "opencl": {"STARPU_NCPU": "0"},
    "cpu": {"STARPU_NOPENCL": "0"},
    "either": {},
}
KINDS = {"CPU": "cpu", "OpenCL": "opencl", "CUDA": "gpu"}


def starpu_unavailable_reason():
    if not os.path.exists(PRELOAD) or not os.path.exists(TWO_VARIANTS):
        return ("needs StarPU (libstarpu-dev, starpu-examples, pocl-opencl-icd; "
                "scripts/deps.sh --tests installs them)")
    return None


def worker_stats(path):
    """StarPU's own count of the tasks each worker ran, in worker id order:
    [(variant, tasks)]."""
    workers = []
    with open(path) as f:
        text = f.read()
    for kind, tasks in re.findall(r"^(CPU|OpenCL|CUDA) \d+.*\n\s+(\d+) task", text, re.M):
        workers.append((KINDS[kind], int(tasks)))
    return workers


class StarpuTest(adapter_checks.RuntimeTestCase):
    PREFIX = "optrace-starpu."
    unavailable_reason = staticmethod(starpu_unavailable_reason)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.env = dict(os.environ, STARPU_HOME=cls.dir, POCL_CACHE_DIR=cls.dir,
                       STARPU_OPENCL_ON_CPUS="1", STARPU_WORKER_STATS="1", STARPU_SILENT="1",
                       STARPU_NCPU="2")

    def setUp(self):
        super().setUp()
        why = test_demo.bpf_unavailable_reason()
        if why:
            self.skipTest(why)

    def run_command(self, command, env, timeout=300):
        out = subprocess.run(command, capture_output=True, text=True, env=env, cwd=self.dir,
                             timeout=timeout)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        return out.stdout

    def traced(self, tracer_args, program, configuration, name):
        """program under the tracer, with the library preloaded: StarPU's statistics."""
        stats = os.path.join(self.dir, name + ".stats")
        env = dict(self.env, STARPU_WORKER_STATS_FILE=stats, **CONFIGURATIONS[configuration])
        self.run_command([OPTRACE] + tracer_args + ["--", "env", "LD_PRELOAD=" + PRELOAD]
                         + program, env)
        workers = worker_stats(stats)
        self.assertTrue(workers, f"StarPU counted no worker in {stats}")
        if configuration != "either":
            self.assertEqual({variant for variant, _ in workers}, {configuration})
        return workers

    def the_runtime(self, processes):
        """The one process that ran StarPU's work. Another listed (a helper the
        OpenCL driver started with the preload inherited) must hold nothing."""
        def held(p):
            return sum(len(p[k]) for k in ("operations", "tasks", "launches", "waits"))
        listed = [(p["pid"], p["command"], held(p)) for p in processes]
        working = [p for p in processes if held(p)]
        self.assertEqual(len(working), 1, f"processes (pid, command, rows): {listed}")
        return working[0]

    def recorded(self, program, configuration, name):
        capture = os.path.join(self.dir, name + ".capture")
        workers = self.traced(["record", "-q", "-o", capture], program, configuration, name)
        report = self.run_command([OPTRACE, "report", "--json", capture], self.env)
        process = self.the_runtime(json.loads(report)["processes"])
        trace = os.path.join(self.dir, name + ".json")
        self.run_command([OPTRACE, "export", "--chrome", "-o", trace, capture], self.env)
        with open(trace) as f:
            events = json.load(f)
        events = events["traceEvents"] if isinstance(events, dict) else events
        runs = collections.Counter((e["args"]["variant"], e["args"]["processor"])
                                   for e in events if e.get("cat") == "task")
        return workers, process, runs, capture

    def assert_per_worker(self, workers, runs):
        """Each worker's runs, optrace's (processor = StarPU's worker id) against StarPU's."""
        expected = collections.Counter()
        for worker, (variant, tasks) in enumerate(workers):
            if tasks:
                expected[variant, worker] += tasks
        self.assertEqual(runs, expected)

    def test_two_variants_recorded(self):
        for configuration in CONFIGURATIONS:
            with self.subTest(configuration):
                workers, process, runs, capture = self.recorded(
                    [TWO_VARIANTS, "--tasks", str(TASKS), "--outside", str(OUTSIDE)],
                    configuration, "two-" + configuration)
                self.assert_per_worker(workers, runs)
                by_operation = collections.Counter()
                for task in process["tasks"]:
                    self.assertEqual(task["name"], "increment")
                    by_operation[task["operation"]] += task["count"]
                self.assertEqual(by_operation, {"app.submit": TASKS, None: OUTSIDE})
                waits = {(w["kind"], w["operation"]) for w in process["waits"]}
                self.assertIn(("fence", "app.wait"), waits)
                self.assert_legion(capture, workers)

    def test_two_variants_stat(self):
        for configuration in CONFIGURATIONS:
            with self.subTest(configuration):
                json_path = os.path.join(self.dir, f"stat-{configuration}.json")
                workers = self.traced(["stat", "--json", "-o", json_path],
                                      [TWO_VARIANTS, "--tasks", str(TASKS), "--outside",
                                       str(OUTSIDE)], configuration, "stat-" + configuration)
                with open(json_path) as f:
                    process = self.the_runtime(json.load(f)["processes"])
                per_variant = collections.Counter()
                for task in process["tasks"]:
                    per_variant[task["variant"]] += task["count"]
                expected = collections.Counter()
                for variant, tasks in workers:
                    expected[variant] += tasks
                self.assertEqual(per_variant, +expected)
                launched = {l["operation"]: l["count"] for l in process["launches"]}
                self.assertEqual(launched.get("app.submit"), TASKS)

    def test_debian_examples(self):
        """Debian's example binaries, as shipped: their codelets' tasks per variant and
        per worker, each variant forced."""
        for example, configurations in (("variable", ("opencl", "cpu")),
                                        ("vector_scal", ("opencl", "cpu", "either"))):
            program = os.path.join(EXAMPLES, example)
            if not os.path.exists(program):
                self.fail(f"{program} is missing (starpu-examples)")
            for configuration in configurations:
                with self.subTest(example=example, configuration=configuration):
                    workers, process, runs, _ = self.recorded(
                        [program], configuration, f"{example}-{configuration}")
                    self.assert_per_worker(workers, runs)
                    self.assertEqual(sum(t["count"] for t in process["tasks"]),
                                     sum(tasks for _, tasks in workers))

    def test_untraced_runs_as_without(self):
        out = self.run_command(["env", "LD_PRELOAD=" + PRELOAD, TWO_VARIANTS], self.env)
        self.assertIn(f"value {TASKS + OUTSIDE} of {TASKS + OUTSIDE}", out)

    def assert_legion(self, capture, workers):
        """Legion Prof's processors, read back by Legion's own reader: each worker one, of its
        kind (the OpenCL device a GPU), with as many runs as StarPU counted for it."""
        legion = capture + ".legion"
        viewer = capture + ".viewer"
        self.run_command([OPTRACE, "export", "--legion", "-o", legion, capture], self.env)
        logs = [os.path.join(legion, f) for f in os.listdir(legion)]
        self.run_command([os.path.join(BUILD, "tests", "legion-legacy"), viewer] + logs,
                         self.env)
        runs = collections.Counter()
        with open(os.path.join(viewer, "legion_prof_processor.tsv"), newline="") as f:
            for row in csv.DictReader(f, delimiter="\t"):
                with open(os.path.join(viewer, row["tsv"]), newline="") as lane:
                    titles = [r["title"] for r in csv.DictReader(lane, delimiter="\t")]
                for variant in ("cpu", "opencl"):
                    count = sum(t.startswith(f"increment [{variant}]") for t in titles)
                    if count:
                        runs[row["text"].split(" Proc")[0], variant] += count
        expected = collections.Counter()
        for variant, tasks in workers:
            expected["GPU Host" if variant == "opencl" else "CPU", variant] += tasks
        self.assertEqual(runs, +expected)


if __name__ == "__main__":
    unittest.main()
