# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""optrace.torch on Debian's PyTorch (python3-torch), against what PyTorch itself counted on
the same run: every operator torch.profiler recorded is one operation of the same name
(before its merge rule), each lazy graph one task, each operator the lazy backend did not
lower one fallback (torch._lazy.metrics); call sites are the workload's lines; nothing is
registered in PyTorch until a tracer attaches; the live commands follow a running loop."""

import collections
import json
import os
import re
import subprocess
import sys
import time
import unittest
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
import adapter_checks  # noqa: E402 (start_live, legion_popups)
import test_demo  # noqa: E402 (bpf_unavailable_reason, BUILD, PYTHON)

WORKLOAD = os.path.join(HERE, "workload.py")
LIVE = os.path.join(HERE, "live.py")
BUILD = os.path.abspath(test_demo.BUILD)
OPTRACE = os.path.join(BUILD, "bin", "optrace")
STEPS = 3
# The lazy section's operators the user calls: deferred, on the lazy device (aten::nonzero,
# which the backend does not lower, falls back instead).
LAZY_CALLS = {"aten::matmul", "aten::add", "aten::relu", "aten::sum"}


def torch_unavailable_reason():
    out = subprocess.run([test_demo.PYTHON, "-c", "import torch"], capture_output=True,
                         text=True, timeout=120)
    if out.returncode:
        return "needs PyTorch (python3-torch; scripts/deps.sh --tests installs it)"
    if not [f for f in os.listdir(os.path.join(BUILD, "python", "optrace"))
            if f.startswith("_torch.")]:
        return "optrace._torch was not built (needs libtorch-dev's headers)"
    return None


def line_of(path, text):
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if text in line:
                return f"{path}:{number}"
    raise AssertionError(f"{text!r} is not in {path}")


def totals(process):
    """Calls per operation name, over every depth; the depth-0 ones; modes at depth 0."""
    names, top, modes = collections.Counter(), collections.Counter(), collections.Counter()
    for op in process["operations"]:
        names[op["name"]] += op["count"]
        if op["depth"] == 0:
            top[op["name"]] += op["count"]
            for mode in op["modes"]:
                modes[op["name"], mode["mode"]] += mode["count"]
    return names, top, modes


class TorchTest(adapter_checks.RuntimeTestCase):
    PREFIX = "optrace-torch."
    unavailable_reason = staticmethod(torch_unavailable_reason)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", OMP_NUM_THREADS="1",
                       PYTHONPATH=os.path.join(BUILD, "python"))
        cls.env.pop("OPTRACE_ADAPTERS", None)

    def run_command(self, command, timeout=600):
        out = subprocess.run(command, capture_output=True, text=True, env=self.env,
                             cwd=self.dir, timeout=timeout)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        return out.stdout

    def traced(self, tracer_args, truth_name, env=None):
        why = test_demo.bpf_unavailable_reason()
        if why:
            self.skipTest(why)
        truth_path = os.path.join(self.dir, truth_name)
        out = subprocess.run([OPTRACE] + tracer_args + [
            "--", test_demo.PYTHON, "-m", "optrace.run", WORKLOAD, truth_path, str(STEPS)],
            capture_output=True, text=True, env=env or self.env, cwd=self.dir, timeout=600)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        with open(truth_path) as f:
            return json.load(f)

    def assert_matches_pytorch(self, process, truth):
        names, top, modes = totals(process)
        # torch.profiler's every operator, before its merge rule; its unnamed TorchScript
        # functions are the lazy graphs, tasks here; mark_step is the adapter's own.
        expected = collections.Counter(truth["operators"])
        graphs = expected.pop("", 0)
        self.assertEqual(graphs, truth["lazy_graphs"])
        self.assertEqual(names.pop("torch._lazy.mark_step"), STEPS)
        self.assertEqual(names, expected)
        # modes: the training loop's calls eager, the lazy section's deferred
        for name in ("Optimizer.step#SGD.step", "Optimizer.zero_grad#SGD.zero_grad",
                     "workload.forward"):
            self.assertEqual(modes[name, "eager"], top[name], name)
        for name in LAZY_CALLS:
            self.assertEqual(modes[name, "deferred"], top[name], name)
            self.assertGreaterEqual(top[name], 1, name)
        self.assertEqual(top["aten::nonzero"], STEPS)
        self.assertEqual(modes["aten::nonzero", "fallback"], STEPS)
        # every graph the lazy backend ran, on the CPU
        tasks = process["tasks"]
        self.assertEqual({(t["name"], t["variant"]) for t in tasks}, {("lazy graph", "cpu")})
        self.assertEqual(sum(t["count"] for t in tasks), truth["lazy_graphs"])
        self.assertIn("torch._lazy.mark_step", {t["operation"] for t in tasks})
        # the operators the backend did not lower, as its metrics counted them
        fallbacks = collections.Counter()
        for fallback in process["fallbacks"]:
            fallbacks[fallback["operation"], fallback["reason"],
                      fallback["detail"]] += fallback["count"]
        lowered_not = {name: count for name, count in truth["lazy_counters"].items()
                       if name.startswith("aten::")}
        self.assertEqual(lowered_not, {"aten::nonzero": STEPS})
        self.assertEqual(fallbacks, {("aten::nonzero", "no_variant", "aten::nonzero"): STEPS})

    def test_nothing_registered_untraced(self):
        code = ("import time, optrace.torch, torch; x = torch.ones(3) + 1; time.sleep(0.5); "
                "print(optrace.torch.available(), optrace.torch.armed())")
        said = self.run_command([test_demo.PYTHON, "-c", code], timeout=120)
        self.assertEqual(said.split(), ["True", "False"])

    def test_stat_counts_every_operator(self):
        json_path = os.path.join(self.dir, "stat.json")
        truth = self.traced(["stat", "--json", "--show-helpers", "-o", json_path],
                            "stat-truth.json")
        with open(json_path) as f:
            process, = json.load(f)["processes"]
        self.assert_matches_pytorch(process, truth)

    def test_depth_one_keeps_the_calls(self):
        """OPTRACE_TORCH_DEPTH=1: the operators the program called, as many as with all traced,
        and still the lazy graphs and the fallbacks; none of their helpers."""
        processes = []
        for depth in ("0", "1"):
            json_path = os.path.join(self.dir, f"depth{depth}.json")
            env = dict(self.env, OPTRACE_TORCH_DEPTH=depth)
            truth = self.traced(["stat", "--json", "--show-helpers", "-o", json_path],
                                f"depth{depth}-truth.json", env=env)
            with open(json_path) as f:
                process, = json.load(f)["processes"]
            processes.append(process)
        every, calls = processes
        self.assertEqual(totals(calls)[1], totals(every)[1])
        # helpers only beneath scopes (record_function's, the optimizer's) and mark_step
        deeper = {op["name"] for op in calls["operations"] if op["depth"] > 0}
        self.assertLessEqual({op["parent"] for op in calls["operations"] if op["depth"] > 0},
                             {"torch._lazy.mark_step", "workload.forward",
                              "Optimizer.step#SGD.step", "Optimizer.zero_grad#SGD.zero_grad"},
                             deeper)
        self.assertLess(sum(op["count"] for op in calls["operations"]),
                        sum(op["count"] for op in every["operations"]) / 3)
        self.assertEqual(sum(t["count"] for t in calls["tasks"]), truth["lazy_graphs"])
        self.assertEqual([(f["operation"], f["count"]) for f in calls["fallbacks"]],
                         [("aten::nonzero", STEPS)])

    def test_record_sites_and_legion(self):
        capture = os.path.join(self.dir, "torch.capture")
        truth = self.traced(["record", "-q", "-o", capture], "record-truth.json")
        out = self.run_command([OPTRACE, "report", "--json", "--by-site", "--show-helpers",
                                capture], timeout=120)
        process, = json.loads(out)["processes"]
        self.assert_matches_pytorch(process, truth)
        sites = collections.defaultdict(set)
        for op in process["operations"]:
            if op["depth"] == 0:
                sites[op["name"]].add(op["callsite"])
        self.assertEqual(sites["workload.forward"], {line_of(WORKLOAD, "record_function(")})
        self.assertEqual(sites["Optimizer.step#SGD.step"], {line_of(WORKLOAD, "optimizer.step()")})
        self.assertEqual(sites["torch._lazy.mark_step"], {line_of(WORKLOAD, "mark_step()")})
        self.assertEqual(sites["aten::nonzero"], {line_of(WORKLOAD, "torch.nonzero(")})
        backward = {name for name in sites if name.startswith("autograd::engine::")}
        self.assertTrue(backward, sites)
        for name in backward:
            self.assertEqual(sites[name], {line_of(WORKLOAD, "loss.backward()")}, name)
        # the forward pass's operators: helpers of the user scope
        helpers = {op["name"]: op["count"] for op in process["operations"]
                   if op["parent"] == "workload.forward" and op["depth"] == 1}
        self.assertEqual({name: helpers.get(name) for name in
                          ("aten::linear", "aten::relu", "aten::mse_loss")},
                         {"aten::linear": 2 * STEPS, "aten::relu": STEPS,
                          "aten::mse_loss": STEPS})
        self.assert_legion_popups(capture)

    def assert_legion_popups(self, capture):
        """Legion Prof's viewer data, read back by Legion's reader: the fallback and the
        modes in the operations' pop-ups."""
        popups = adapter_checks.legion_popups(capture, self.dir)
        fell_back = [p for p in popups["aten::nonzero"] if p.get("fallback")]
        self.assertEqual(len(fell_back), STEPS, popups["aten::nonzero"])
        for popup in fell_back:
            self.assertEqual((popup["fallback"], popup["fallback detail"]),
                             ("no_variant", "aten::nonzero"))
        self.assertEqual({p.get("mode") for p in popups["Optimizer.step#SGD.step"]}, {"eager"})
        self.assertEqual({p.get("mode") for p in popups["aten::matmul"]}, {"deferred"})

    def assert_served(self, pid):
        """optrace serve -p: the loop's operators in the Prometheus metrics, scraped."""
        log = os.path.join(self.dir, "serve.err")
        with open(log, "w") as err:
            serve = subprocess.Popen([OPTRACE, "serve", "-p", pid, "--listen", "127.0.0.1:0"],
                                     stdout=subprocess.DEVNULL, stderr=err, env=self.env)
        try:
            address = None
            for _ in range(1200):
                with open(log) as f:
                    found = re.search(r"Serving (http://\S+/metrics)", f.read())
                if found or serve.poll() is not None:
                    address = found and found.group(1)
                    break
                time.sleep(0.1)
            self.assertTrue(address, open(log).read())
            step = 'op="Optimizer.step#SGD.step"'
            metrics = ""
            for _ in range(100):  # until a scrape has the operators (the callbacks in 0.1 s)
                with urllib.request.urlopen(address, timeout=30) as response:
                    metrics = response.read().decode()
                if step in metrics:
                    break
                time.sleep(0.1)
            served = [line for line in metrics.splitlines()
                      if line.startswith("optrace_operations_total{") and step in line]
            self.assertTrue(served, metrics[-2000:])
            self.assertIn('mode="eager"', served[0])
        finally:
            serve.terminate()
            serve.wait(timeout=60)

    def test_live_loop(self):
        """Started with the adapter and never traced: stat -p, top -p, record -p, serve -p and
        dump -p follow it."""
        why = test_demo.bpf_unavailable_reason()
        if why:
            self.skipTest(why)
        live = adapter_checks.start_live(
            [test_demo.PYTHON, "-m", "optrace.run", LIVE], os.path.join(self.dir, "live.out"),
            self.env, self.dir)
        try:
            pid = str(live.pid)
            json_path = os.path.join(self.dir, "live.json")
            self.run_command([OPTRACE, "stat", "--json", "-d", "2", "-o", json_path, "-p", pid],
                             timeout=120)
            with open(json_path) as f:
                process, = json.load(f)["processes"]
            _, top, modes = totals(process)
            self.assertTrue({"aten::linear", "Optimizer.step#SGD.step"} <= set(top), top)
            self.assertGreater(modes["Optimizer.step#SGD.step", "eager"], 0)
            screen = self.run_command([OPTRACE, "top", "-b", "-p", pid, "-d", "1.5", "0.5"],
                                      timeout=120)
            self.assertIn("Optimizer.step#SGD.step", screen.replace("\n", " "))
            capture = os.path.join(self.dir, "live.capture")
            self.run_command([OPTRACE, "record", "-q", "-d", "2", "-o", capture, "-p", pid],
                             timeout=120)
            out = self.run_command([OPTRACE, "report", "--json", "--by-site", capture],
                                   timeout=120)
            process, = json.loads(out)["processes"]
            sites = {op["callsite"] for op in process["operations"]
                     if op["name"] == "Optimizer.step#SGD.step"}
            self.assertEqual(sites, {line_of(LIVE, "optimizer.step()")})
            self.assert_served(pid)
            # dump, while a tracer holds the callbacks: the operation open in the loop
            holder = subprocess.Popen([OPTRACE, "stat", "-q", "-o", os.devnull, "-d", "30",
                                       "-p", pid], env=self.env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL)
            try:
                seen = None
                for _ in range(600):
                    dump = subprocess.run([OPTRACE, "dump", "-p", pid, "--json"],
                                          capture_output=True, text=True, timeout=60)
                    self.assertEqual(dump.returncode, 0, dump.stderr)
                    if "aten::" in dump.stdout:
                        seen = dump.stdout
                        break
                    time.sleep(0.05)
                self.assertIsNotNone(seen, "dump never saw an open operator")
            finally:
                holder.terminate()
                holder.wait(timeout=60)
        finally:
            live.terminate()
            live.wait(timeout=60)


if __name__ == "__main__":
    unittest.main()
