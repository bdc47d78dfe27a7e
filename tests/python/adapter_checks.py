# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""What the adapters' tests (adapters/*/test_*.py) share: a test case on a real runtime, a
live workload started and waited for, and the Legion Prof export's pop-ups as Legion's own
reader shows them."""
import collections
import csv
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest

import test_demo

BUILD = os.path.abspath(test_demo.BUILD)
OPTRACE = os.path.join(BUILD, "bin", "optrace")


class RuntimeTestCase(unittest.TestCase):
    """Tests on a real runtime: a temporary folder for the class (self.dir), and each test
    skipped with the reason the runtime is missing (unavailable_reason(), None when not)."""

    PREFIX = "optrace-runtime."

    @classmethod
    def unavailable_reason(cls):
        return None

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix=cls.PREFIX)
        cls.setup_error = cls.unavailable_reason()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def setUp(self):
        if self.setup_error:
            self.skipTest(self.setup_error)


def start_live(command, out_path, env, cwd, ready="ready"):
    """Starts command, its output in out_path, and returns it once it said ready: however
    long its start takes on a busy machine (5 minutes at most). Raises with what it said
    if it ended or never said so."""
    with open(out_path, "w") as out:
        live = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env,
                                cwd=cwd)
    said = ""
    for _ in range(3000):
        with open(out_path) as f:
            said = f.read()
        if ready in said or live.poll() is not None:
            break
        time.sleep(0.1)
    if ready not in said or live.poll() is not None:
        live.kill()
        live.wait(timeout=60)
        raise AssertionError(f"{command[-1]} never said {ready!r}:\n{said}")
    return live


def legion_popups(capture, work_dir):
    """The Legion Prof export of capture, read back by the project's build of Legion's
    reader into the data of Legion Prof's viewer: each operation's pop-up fields, by the
    operation's name."""
    legion = os.path.join(work_dir, "legion")
    viewer = os.path.join(work_dir, "viewer")
    for command in ([OPTRACE, "export", "--legion", "-o", legion, capture], None):
        if command is None:
            logs = [os.path.join(legion, f) for f in os.listdir(legion)]
            command = [os.path.join(BUILD, "tests", "legion-legacy"), viewer] + logs
        out = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if out.returncode:
            raise AssertionError(f"{' '.join(command[:3])} failed:\n{out.stderr}")
    popups = collections.defaultdict(list)
    with open(os.path.join(viewer, "legion_prof_ops.tsv"), newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["provenance"]:
                popups[row["desc"].split(" [")[0]].append(json.loads(row["provenance"])[1])
    return popups
