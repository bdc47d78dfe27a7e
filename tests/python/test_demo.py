# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The Python demo: its ground truth, and (as root, with BPF) what optrace
stat and record count against it, and the call sites they carry."""

import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BUILD = os.environ.get("OPTRACE_BUILD_DIR", os.path.join(ROOT, ".output"))
OPTRACE = os.path.join(BUILD, "bin", "optrace")
DEMO = os.path.join(ROOT, "examples", "python", "demo_numpy.py")
PYTHON = "/usr/bin/python3"
HEADER = "# optrace-demo ground truth, format 1"


def bpf_unavailable_reason():
    """As tests/lib/testlib.c's bpf_unavailable_reason()."""
    if os.geteuid() != 0:
        return "needs root to load BPF programs"
    if not os.access("/sys/kernel/btf/vmlinux", os.R_OK):
        return "no kernel BTF (/sys/kernel/btf/vmlinux)"
    if not os.path.exists("/sys/kernel/tracing/uprobe_events"):
        subprocess.run(["mount", "-t", "tracefs", "nodev",
                        "/sys/kernel/tracing"], capture_output=True)
    if not (os.path.exists("/sys/kernel/tracing/uprobe_events") or
            os.path.exists("/sys/kernel/debug/tracing/uprobe_events")):
        return "no tracefs with uprobe_events"
    if not os.access(OPTRACE, os.X_OK):
        return f"{OPTRACE} is not built"
    return None


def demo_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(BUILD, "python")
    return env


def truth_parse(path):
    """As testlib's truth_parse(): "launch T C P" becomes "launch T" = C and
    "points T" = P. Returns (counts, blocks)."""
    counts = collections.Counter()
    blocks = 0
    inside = False
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            if line.startswith("begin "):
                inside = True
                continue
            if line.startswith("end "):
                inside = False
                blocks += 1
                continue
            if not inside:
                raise ValueError(f"outside a block: {line!r}")
            key, count = line.rsplit(" ", 1)
            if key.startswith("launch "):
                # "launch TASK COUNT POINTS"
                points = count
                key, count = key.rsplit(" ", 1)
                counts["points " + key[7:]] += int(points)
            counts[key] += int(count)
    return counts, blocks


def json_counts(text, only_pid=None):
    """As testlib's stat_json_counts(), from optrace stat/report --json."""
    root = json.loads(text)
    counts = collections.Counter()
    processes = 0
    for process in root["processes"]:
        if only_pid and process["pid"] != only_pid:
            continue
        processes += 1
        for op in process.get("operations", []):
            name, count, errors = op["name"], op["count"], op["errors"]
            counts[f"op {name} {op['depth']}"] += count
            if count - errors:
                counts[f"status {name} ok"] += count - errors
            if errors:
                counts[f"status {name} error"] += errors
            for m in op.get("modes", []):
                if m["mode"] != "unset":
                    counts[f"mode {name} {m['mode']} {m['reason']}"] += \
                        m["count"]
        for f in process.get("fallbacks", []):
            counts[f"fallback {f['operation']} {f['reason']}"] += f["count"]
        for launch in process.get("launches", []):
            counts[f"launch {launch['name']}"] += launch["count"]
            counts[f"points {launch['name']}"] += launch["points"]
        for t in process.get("tasks", []):
            counts[f"task {t['name']} {t['variant']}"] += t["count"]
        for w in process.get("waits", []):
            counts[f"wait {w['kind']}"] += w["count"]
    lost = root.get("lost", {})
    return +counts, processes, lost


def diff(expected, actual):
    lines = []
    for key in sorted(set(expected) | set(actual)):
        if expected[key] != actual[key]:
            lines.append(f"{key}: truth {expected[key]}, traced {actual[key]}")
    return "\n".join(lines)


class DemoCase(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="optrace-pytest-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)


class TestDemoUntraced(DemoCase):
    def test_truth_format(self):
        truth = self.path("truth.txt")
        out = subprocess.run([PYTHON, DEMO, "-i", "2", "-s", "20000",
                              "--truth", truth], env=demo_env(),
                             capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout, "")
        with open(truth) as f:
            lines = f.read().splitlines()
        self.assertEqual(lines[0], HEADER)
        self.assertEqual(lines[1], f"begin {lines[-1].split()[1]}")
        self.assertTrue(re.fullmatch(r"end \d+", lines[-1]))
        fields = {"op": 4, "mode": 5, "fallback": 4, "status": 4,
                  "launch": 4, "task": 4, "wait": 3}
        for line in lines[2:-1]:
            words = line.split(" ")
            self.assertEqual(len(words), fields[words[0]], line)
            self.assertTrue(words[-1].isdigit(), line)
        counts, blocks = truth_parse(truth)
        self.assertEqual(blocks, 1)
        # Every begun op ended; the composites and fallbacks are there.
        begun = sum(n for k, n in counts.items() if k.startswith("op "))
        ended = sum(n for k, n in counts.items() if k.startswith("status "))
        self.assertEqual(begun, ended)
        self.assertEqual(counts["op minirt.sum 2"], 4)
        self.assertEqual(counts["fallback minirt.sort unimplemented_api"], 2)
        self.assertEqual(counts["fallback minirt.mean unsupported_dtype"], 2)
        self.assertEqual(counts["status minirt.add error"], 2)
        self.assertEqual(counts["mode minirt.var mixed helpers"], 2)
        self.assertEqual(counts["task BinaryOp cpu"],
                         counts["points BinaryOp"])

    def test_stdout_truth(self):
        out = subprocess.run([PYTHON, DEMO, "-i", "1", "-q"], env=demo_env(),
                             capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertTrue(out.stdout.startswith(HEADER + "\n"))
        self.assertEqual(out.stderr, "")


class TestDemoTraced(DemoCase):
    def setUp(self):
        why = bpf_unavailable_reason()
        if why:
            self.skipTest(why)
        super().setUp()

    def test_stat_counts_equal_truth(self):
        truth = self.path("truth.txt")
        out = subprocess.run([OPTRACE, "stat", "--json", "--", PYTHON, DEMO,
                              "-i", "3", "-q", "--truth", truth],
                             env=demo_env(), capture_output=True, text=True,
                             timeout=300)
        self.assertEqual(out.returncode, 0, out.stderr)
        expected, blocks = truth_parse(truth)
        self.assertEqual(blocks, 1)
        traced, processes, lost = json_counts(out.stdout)
        self.assertEqual(processes, 1)
        self.assertEqual(lost.get("map_full", 0), 0)
        self.assertEqual(diff(expected, traced), "")

    def test_record_counts_and_call_sites(self):
        truth, capture = self.path("truth.txt"), self.path("run.capture")
        out = subprocess.run([OPTRACE, "record", "-q", "-o", capture, "--",
                              PYTHON, DEMO, "-i", "2", "-q", "--truth", truth],
                             env=demo_env(), capture_output=True, text=True,
                             timeout=300)
        self.assertEqual(out.returncode, 0, out.stderr)
        report = subprocess.run([OPTRACE, "report", "--json", capture],
                                capture_output=True, text=True, timeout=120)
        self.assertEqual(report.returncode, 0, report.stderr)
        expected, _ = truth_parse(truth)
        traced, processes, _ = json_counts(report.stdout)
        self.assertEqual(processes, 1)
        self.assertEqual(diff(expected, traced), "")

        # Operations the user called: at lines of demo_numpy.py that call
        # minirt.
        with open(DEMO) as f:
            source = f.read().splitlines()
        by_site = subprocess.run([OPTRACE, "report", "--json", "--by-site",
                                  capture], capture_output=True, text=True,
                                 timeout=120)
        self.assertEqual(by_site.returncode, 0, by_site.stderr)
        sites = [op["callsite"] for p in json.loads(by_site.stdout)["processes"]
                 for op in p["operations"] if op["depth"] == 0]
        self.assertTrue(sites)
        for site in sites:
            file, line = site.rsplit(":", 1)
            self.assertEqual(os.path.realpath(file), os.path.realpath(DEMO))
            self.assertIn("minirt.", source[int(line) - 1], site)

        # Helpers too: minirt is declared the library, so no call site
        # points into it.
        text = subprocess.run([OPTRACE, "report", "--by-site",
                               "--show-helpers", "--internal", "--wide",
                               capture],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(text.returncode, 0, text.stderr)
        helper_sites = re.findall(r"@ (\S+)$", text.stdout, re.M)
        self.assertGreater(len(helper_sites), len(set(sites)))
        for site in helper_sites:
            self.assertNotIn("minirt", site)
            self.assertTrue(site.rsplit(":", 1)[0].endswith("demo_numpy.py"),
                            site)


if __name__ == "__main__":
    sys.exit(unittest.main())
