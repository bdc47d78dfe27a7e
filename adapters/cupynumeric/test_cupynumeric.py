# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""optrace.cupynumeric on cuPyNumeric v26.01.00's real code (../shared/cupynumeric, on its
stub Legate), against what cuPyNumeric itself recorded: every profiling range is one
operation with the same name, depth and call site; every eager call is counted eager with
its reason; every fallback once, with its reason and detail, on the range it fell in; and
cuPyNumeric's own profiling records the same ranges with the adapter as without it."""

import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
import adapter_checks  # noqa: E402 (start_live, legion_popups)
import test_demo  # noqa: E402 (bpf_unavailable_reason, BUILD, OPTRACE, PYTHON)

WORKLOAD = os.path.join(HERE, "workload.py")
BUILD = os.path.abspath(test_demo.BUILD)
OPTRACE = os.path.join(BUILD, "bin", "optrace")
SHARED = os.environ.get("OPTRACE_SHARED_DIR") or os.path.join(os.path.dirname(ROOT), "shared")
SETUP = os.path.join(SHARED, "cupynumeric", "setup.sh")
ROUNDS = 3
PROVENANCE = re.compile(r"^(\S+) \[mode: ([^\]]+)\] on (.*)$")
# cuPyNumeric's three fallback warnings: (pattern, optrace's reason, what the detail is)
FALLBACKS = (
    (re.compile(r"has not implemented the requested combination of arguments to (\S+)"),
     "unsupported_arguments"),
    (re.compile(r"does not support the provided input type for (\S+)"), "unsupported_dtype"),
    (re.compile(r"has not implemented (\S+) and is falling back"), "unimplemented_api"),
)


def cupynumeric_unavailable_reason():
    if not os.path.exists(SETUP):
        return f"no cuPyNumeric test data at {SETUP} (../shared/cupynumeric)"
    return None


def expected_from(record):
    """What optrace should count, from cuPyNumeric's own record of a run."""
    ops = collections.Counter()     # (name, depth)
    sites = collections.Counter()   # (name, call site) of the calls the user made
    modes = collections.Counter()   # (name, depth, mode)
    fallbacks = collections.Counter()  # (name, reason, detail)
    fell_back = {}  # the index of a range's start event -> the fallback announced in it
    starts = []
    warnings_at = collections.defaultdict(list)
    for at, message in record["fallbacks"]:
        warnings_at[at].append(message)
    ranges = []
    for index, (kind, depth, provenance) in enumerate(record["events"]):
        for message in warnings_at.get(index, ()):
            for pattern, reason in FALLBACKS:
                match = pattern.search(message)
                if match:
                    fell_back[starts[-1]] = (reason, match.group(1))
                    break
        if kind == "start":
            starts.append(index)
            continue
        start = starts.pop()
        name, mode, site = PROVENANCE.match(provenance).groups()
        ranges.append((name, depth - 1, mode, site, fell_back.get(start)))
    for name, depth, mode, site, fallback in ranges:
        ops[name, depth] += 1
        if depth == 0:
            sites[name, site] += 1
        if fallback:
            modes[name, depth, "fallback"] += 1
            fallbacks[name, fallback[0], fallback[1]] += 1
        else:
            modes[name, depth, {"N/A": "unset"}.get(mode, mode)] += 1
    return ops, sites, modes, fallbacks


def counted_from(process):
    """The same counts from optrace's JSON (stat --json, report --json)."""
    ops, sites, modes, fallbacks, reasons = (collections.Counter() for _ in range(5))
    for op in process["operations"]:
        ops[op["name"], op["depth"]] += op["count"]
        if op["depth"] == 0 and op.get("callsite"):
            sites[op["name"], op["callsite"]] += op["count"]
        for mode in op["modes"]:
            modes[op["name"], op["depth"], mode["mode"]] += mode["count"]
            reasons[op["name"], mode["mode"], mode["reason"]] += mode["count"]
    for fallback in process["fallbacks"]:
        fallbacks[fallback["operation"], fallback["reason"], fallback["detail"]] += \
            fallback["count"]
    return ops, sites, modes, fallbacks, reasons


class CupynumericTest(adapter_checks.RuntimeTestCase):
    PREFIX = "optrace-cupynumeric."
    unavailable_reason = staticmethod(cupynumeric_unavailable_reason)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        if cls.setup_error:
            return
        out = subprocess.run(["bash", SETUP, os.path.join(cls.dir, "cn")],
                             capture_output=True, text=True, timeout=300)
        if out.returncode:
            raise AssertionError(f"{SETUP} failed:\n{out.stdout}{out.stderr}")
        cls.env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=":".join(
            [os.path.join(BUILD, "python"), os.path.join(cls.dir, "cn")]))
        cls.env.pop("OPTRACE_ADAPTERS", None)

    def run_python(self, args, env=None, timeout=300):
        out = subprocess.run([test_demo.PYTHON] + args, capture_output=True, text=True,
                             env=env or self.env, cwd=self.dir, timeout=timeout)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        return out.stdout

    def record_of(self, name):
        with open(os.path.join(self.dir, name)) as f:
            return json.load(f)

    def test_profiling_unchanged_and_generation(self):
        self.run_python([WORKLOAD, "plain.json", "1"])
        self.run_python(["-m", "optrace.run", WORKLOAD, "adapted.json", "1"])
        plain, adapted = self.record_of("plain.json"), self.record_of("adapted.json")
        self.assertGreater(len(plain["events"]), 20)
        # cuPyNumeric's own ranges: the same strings, in the same number and order
        self.assertEqual(plain["events"], adapted["events"])
        self.assertEqual(plain["fallbacks"], adapted["fallbacks"])
        said = self.run_python(["-c", "import optrace.cupynumeric as a, cupynumeric; "
                                "print(a.installed_generation())"])
        self.assertEqual(said.strip(), "coverage")

    def test_environment_hook(self):
        # optrace-adapters.pth, as site-packages runs it at start-up
        site = os.path.join(self.dir, "site")
        os.makedirs(site, exist_ok=True)
        shutil.copy(os.path.join(ROOT, "python", "optrace-adapters.pth"), site)
        code = ("import site; site.addsitedir(%r); import sys, cupynumeric; "
                "print('optrace.cupynumeric' in sys.modules)" % site)
        self.assertEqual(self.run_python(["-c", code]).strip(), "False")
        env = dict(self.env, OPTRACE_ADAPTERS="cupynumeric")
        self.assertEqual(self.run_python(["-c", code], env=env).strip(), "True")

    def traced(self, tracer_args, record_name):
        why = test_demo.bpf_unavailable_reason()
        if why:
            self.skipTest(why)
        command = [OPTRACE] + tracer_args + [
            "--", test_demo.PYTHON, "-m", "optrace.run", WORKLOAD, record_name, str(ROUNDS)]
        out = subprocess.run(command, capture_output=True, text=True, env=self.env,
                             cwd=self.dir, timeout=600)
        self.assertEqual(out.returncode, 0, out.stderr)
        return expected_from(self.record_of(record_name))

    def assert_counts(self, process, expected, with_sites):
        ops, sites, modes, fallbacks = expected
        got_ops, got_sites, got_modes, got_fallbacks, reasons = counted_from(process)
        self.assertEqual(got_ops, ops)
        self.assertEqual(got_modes, modes)
        self.assertEqual(got_fallbacks, fallbacks)
        if with_sites:
            self.assertEqual(got_sites, sites)
        # the reasons: empty arrays as such, every other eager call below the threshold
        self.assertEqual(reasons["cupynumeric.zeros", "eager", "empty"], ROUNDS)
        for (name, mode, reason), count in reasons.items():
            if mode == "eager" and name != "cupynumeric.zeros":
                self.assertEqual(reason, "below_threshold", name)
            if mode == "fallback":
                self.assertEqual(reason, "fallback", name)
        self.assertEqual(len(fallbacks), 3)  # each kind, ROUNDS times
        self.assertEqual(set(fallbacks.values()), {ROUNDS})

    def test_stat_counts_every_range(self):
        json_path = os.path.join(self.dir, "stat.json")
        expected = self.traced(["stat", "--json", "--show-helpers", "-o", json_path],
                               "stat-truth.json")
        with open(json_path) as f:
            processes = json.load(f)["processes"]
        self.assertEqual(len(processes), 1)
        self.assert_counts(processes[0], expected, with_sites=False)

    def test_record_has_the_call_sites(self):
        capture = os.path.join(self.dir, "cn.capture")
        expected = self.traced(["record", "-q", "-o", capture], "record-truth.json")
        out = subprocess.run([OPTRACE, "report", "--json", "--by-site",
                              "--show-helpers", capture], capture_output=True, text=True,
                             timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        processes = json.loads(out.stdout)["processes"]
        self.assertEqual(len(processes), 1)
        self.assert_counts(processes[0], expected, with_sites=True)
        self.assert_legion_popups(capture)

    def assert_legion_popups(self, capture):
        """The Legion Prof export, read back by the project's Legion reader into the data of
        Legion Prof's viewer: each operation's pop-up has its mode, reason and fallback."""
        popups = adapter_checks.legion_popups(capture, self.dir)
        expected = {
            "cupynumeric.add": {"mode": "eager", "mode reason": "below_threshold"},
            "cupynumeric.zeros": {"mode": "eager", "mode reason": "empty"},
            "cupynumeric.interp": {"fallback": "unimplemented_api",
                                   "fallback detail": "numpy.interp"},
            "cupynumeric.sort": {"fallback": "unsupported_dtype", "fallback detail": "sort"},
            "cupynumeric.ndarray.__array_function__": {"fallback": "unsupported_arguments",
                                                       "fallback detail": "allclose"},
        }
        for name, fields in expected.items():
            self.assertEqual(len(popups[name]), ROUNDS, name)
            for popup in popups[name]:
                self.assertEqual({k: popup.get(k) for k in fields}, fields, name)
                self.assert_site_in_popup(popup["call site"])

    def assert_site_in_popup(self, site):
        """The workload's line, or NumPy's dispatch; a pop-up cuts a long one with "…"."""
        cut = site.endswith("\u2026")
        site = site[:-1] if cut else site
        for expected in (WORKLOAD + ":", "<__array_function__ internals>:"):
            if site.startswith(expected) or (cut and expected.startswith(site)):
                return
        self.fail(f"pop-up call site {site!r} is not {WORKLOAD}'s")

    def test_live_process(self):
        """Started with the adapter and never traced: dump sees its open operation; then
        stat -p, top -p and record -p count its calls."""
        why = test_demo.bpf_unavailable_reason()
        if why:
            self.skipTest(why)
        live = adapter_checks.start_live(
            [test_demo.PYTHON, "-W", "ignore", "-m", "optrace.run",
             os.path.join(HERE, "live.py")], os.path.join(self.dir, "live.out"), self.env,
            self.dir)
        try:
            pid = str(live.pid)
            seen = None
            for _ in range(50):  # it waits inside apply_along_axis most of the time
                out = subprocess.run([OPTRACE, "dump", "-p", pid, "--json"],
                                     capture_output=True, text=True, timeout=60)
                self.assertEqual(out.returncode, 0, out.stderr)
                if "cupynumeric.apply_along_axis" in out.stdout:
                    seen = out.stdout
                    break
            self.assertIsNotNone(seen, "dump never saw the open operation")
            json_path = os.path.join(self.dir, "live.json")
            out = subprocess.run([OPTRACE, "stat", "--json", "-d", "1", "-o", json_path,
                                  "-p", pid], capture_output=True, text=True, timeout=120)
            self.assertEqual(out.returncode, 0, out.stderr)
            with open(json_path) as f:
                process, = json.load(f)["processes"]
            names = {op["name"] for op in process["operations"]}
            self.assertTrue({"cupynumeric.add", "cupynumeric.apply_along_axis"} <= names,
                            names)
            fallbacks = {(f["operation"], f["reason"], f["detail"])
                         for f in process["fallbacks"]}
            self.assertIn(("cupynumeric.apply_along_axis", "unimplemented_api",
                           "numpy.apply_along_axis"), fallbacks)
            out = subprocess.run([OPTRACE, "top", "-b", "-p", pid, "-d", "1.5", "0.5"],
                                 capture_output=True, text=True, timeout=120)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertIn("cupynumeric.apply_along_axis", out.stdout.replace("\n", " "))
            capture = os.path.join(self.dir, "live.capture")
            out = subprocess.run([OPTRACE, "record", "-q", "-d", "1", "-o", capture, "-p", pid],
                                 capture_output=True, text=True, timeout=120)
            self.assertEqual(out.returncode, 0, out.stderr)
            out = subprocess.run([OPTRACE, "report", "--json", "--by-site", capture],
                                 capture_output=True, text=True, timeout=120)
            process, = json.loads(out.stdout)["processes"]
            sites = {op.get("callsite", "") for op in process["operations"]}
            self.assertTrue(any(site.startswith(os.path.join(HERE, "live.py:"))
                                for site in sites), sites)
        finally:
            live.terminate()
            live.wait(timeout=60)


class ProfilingGenerationTest(unittest.TestCase):
    """v26.06 and later (cupynumeric._utils.profiling), on a test double of it: names,
    nesting, call sites and errors."""

    DOUBLE = os.path.join(HERE, "double_v26_06")

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="optrace-cupynumeric-v26.")
        self.env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=":".join(
            [os.path.join(BUILD, "python"), self.DOUBLE]))
        self.env.pop("OPTRACE_ADAPTERS", None)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_generation_and_ranges_unchanged(self):
        workload = os.path.join(self.DOUBLE, "workload.py")
        records = []
        for runner in ([], ["-m", "optrace.run"]):
            out_path = os.path.join(self.dir, "out%d.json" % len(records))
            out = subprocess.run([test_demo.PYTHON] + runner + [workload, out_path, "1"],
                                 capture_output=True, text=True, env=self.env, timeout=120)
            self.assertEqual(out.returncode, 0, out.stderr)
            with open(out_path) as f:
                records.append(json.load(f)["events"])
        self.assertEqual(records[0], records[1])
        out = subprocess.run([test_demo.PYTHON, "-c", "import optrace.cupynumeric as a, "
                              "cupynumeric; print(a.installed_generation())"],
                             capture_output=True, text=True, env=self.env, timeout=120)
        self.assertEqual(out.stdout.strip(), "profiling", out.stderr)

    def test_stat_and_record(self):
        why = test_demo.bpf_unavailable_reason()
        if why:
            self.skipTest(why)
        workload = os.path.join(self.DOUBLE, "workload.py")
        truth = os.path.join(self.dir, "truth.json")
        capture = os.path.join(self.dir, "v26.capture")
        command = ["--", test_demo.PYTHON, "-m", "optrace.run", workload, truth, str(ROUNDS)]
        out = subprocess.run([OPTRACE, "record", "-q", "-o", capture] + command,
                             capture_output=True, text=True, env=self.env, timeout=600)
        self.assertEqual(out.returncode, 0, out.stderr)
        with open(truth) as f:
            events = json.load(f)["events"]
        expected = collections.Counter((name, depth - 1) for kind, depth, name in events
                                       if kind == "stop")
        out = subprocess.run([OPTRACE, "report", "--json", "--by-site", "--show-helpers",
                              capture], capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        process, = json.loads(out.stdout)["processes"]
        ops, _, _, _, _ = counted_from(process)
        self.assertEqual(ops, expected)
        self.assertEqual(expected["cupynumeric.add", 1], ROUNDS)  # sum's helper
        with open(workload) as f:
            lines = f.read().split("\n")
        for op in process["operations"]:
            if op["depth"] == 0:
                path, line = op["callsite"].rsplit(":", 1)
                self.assertEqual(path, workload)
                self.assertIn("cn." + op["name"].split(".")[-1], lines[int(line) - 1])
            errors = ROUNDS if op["name"] == "cupynumeric.divide" else 0
            self.assertEqual(op["errors"], errors, op["name"])


if __name__ == "__main__":
    unittest.main()
