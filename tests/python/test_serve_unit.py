# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""optrace-serve.service, hardened (issue 41): systemd-analyze scores it at
most 5.0, and serve still works inside what the unit allows. This machine
runs no systemd, so the unit's confinement is replayed piece by piece: serve
runs with the unit's capability bounding set (setpriv), traced by strace,
scrapes a live demo's operations, and every system call it made is one the
unit's SystemCallFilter lets through."""

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest
import urllib.request

BUILD = os.environ.get("OPTRACE_BUILD_DIR", ".output")
OPTRACE = os.path.join(BUILD, "bin", "optrace")
DEMO = os.path.join(BUILD, "bin", "optrace-demo")
UNIT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "packaging",
                    "optrace-serve.service")
SCORE_MAX = 5.0


def unit_settings(text):
    """Each setting of the unit: a list of its values, in order."""
    settings = {}
    for line in text.splitlines():
        match = re.match(r"^([A-Za-z]+)=(.*)$", line.strip())
        if match:
            settings.setdefault(match.group(1), []).append(match.group(2))
    return settings


def expand(group, seen=None):
    """The system calls of a systemd group (@name), its nested groups included."""
    seen = set() if seen is None else seen
    out = subprocess.run(["systemd-analyze", "syscall-filter", group],
                         capture_output=True, text=True, check=True).stdout
    calls = set()
    for line in out.splitlines()[1:]:
        word = line.strip()
        if not word or word.startswith("#"):
            continue
        if word.startswith("@"):
            if word not in seen:
                seen.add(word)
                calls |= expand(word, seen)
        else:
            calls.add(word)
    return calls


def filter_sets(values):
    """The allowed and the denied calls of SystemCallFilter= lines."""
    allowed, denied = set(), set()
    for value in values:
        deny = value.startswith("~")
        for word in value.lstrip("~").split():
            calls = expand(word) if word.startswith("@") else {word}
            (denied if deny else allowed).update(calls)
    return allowed, denied


def children_of(pid):
    """The pids whose parent is pid."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(entry))
    return found


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape_until(serve, port, wanted):
    """/metrics of the serve on port, once it holds wanted or serve has exited."""
    body = ""
    for _ in range(300):
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port,
                                        timeout=2) as r:
                body = r.read().decode()
            if wanted in body:
                break
        except OSError:
            pass
        if serve.poll() is not None:
            break
        time.sleep(0.2)
    return body


@unittest.skipUnless(os.geteuid() == 0, "needs root (BPF)")
class ServeUnitTest(unittest.TestCase):
    def setUp(self):
        with open(UNIT) as f:
            self.text = f.read()
        self.settings = unit_settings(self.text)
        self.dir = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_score(self):
        copy = os.path.join(self.dir, "optrace-serve.service")
        with open(copy, "w") as f:
            f.write(self.text.replace("@BINDIR@", "/usr/bin"))
        out = subprocess.run(["systemd-analyze", "security", "--offline=true", copy],
                             capture_output=True, text=True)
        match = re.search(r"Overall exposure level for \S+: ([0-9.]+)", out.stdout)
        self.assertIsNotNone(match, out.stdout + out.stderr)
        self.assertLessEqual(float(match.group(1)), SCORE_MAX, out.stdout)

    def test_serve_works_inside_the_unit(self):
        caps = self.settings["CapabilityBoundingSet"][0].split()
        bounding = "-all," + ",".join("+" + c.lower().replace("cap_", "") for c in caps)
        allowed, denied = filter_sets(self.settings["SystemCallFilter"])
        families = self.settings["RestrictAddressFamilies"][0].split()
        port = free_port()
        trace = os.path.join(self.dir, "trace.txt")
        demo = subprocess.Popen([DEMO, "--forever", "-w", "stats", "-q", "--truth",
                                 os.devnull])
        serve = None
        try:
            serve = subprocess.Popen(
                ["setpriv", "--bounding-set", bounding, "--inh-caps=-all", "--",
                 "strace", "-f", "-qq", "-o", trace, OPTRACE, "serve", "-a", "-q",
                 "--listen", "127.0.0.1:%d" % port],
                stderr=subprocess.PIPE, text=True)
            body = scrape_until(serve, port, 'optrace_operations_total{command="optrace-demo"')
            self.assertIn('optrace_operations_total{command="optrace-demo"', body,
                          serve.stderr.read() if serve.poll() is not None else body[-2000:])
            # To serve itself, under strace (which would detach on its own SIGTERM).
            for pid in children_of(serve.pid):
                os.kill(pid, signal.SIGTERM)
            self.assertEqual(serve.wait(timeout=60), 0)
        finally:
            if serve and serve.poll() is None:
                for pid in children_of(serve.pid):
                    os.kill(pid, signal.SIGKILL)
                serve.kill()
                serve.wait()
            demo.kill()
            demo.wait()
        calls, sockets = set(), set()
        with open(trace) as f:
            for line in f:
                match = re.match(r"^\d+\s+([a-z0-9_]+)\(", line)
                if match:
                    calls.add(match.group(1))
                match = re.match(r"^\d+\s+socket\((AF_[A-Z0-9]+)", line)
                if match:
                    sockets.add(match.group(1))
        # execve is strace's own start of serve: the unit's ExecStart.
        refused = sorted(c for c in calls - {"execve"} if c not in allowed or c in denied)
        self.assertEqual(refused, [], "serve makes calls the unit's filter refuses")
        self.assertEqual(sorted(sockets - set(families)), [],
                         "serve opens sockets the unit's families refuse")


if __name__ == "__main__":
    unittest.main()
