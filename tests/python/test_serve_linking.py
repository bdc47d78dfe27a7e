# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""serve's libraries are serve's alone (issue 42): libmicrohttpd, GnuTLS and
libcrypt are linked into libexec/optrace-serve, which `optrace serve` runs in
its place, and into no other command: the optrace program neither needs nor
loads them. `optrace serve` stays what docs/optrace.md says: its usage, its
exit status, and a scrape of a live demo answered by the process that
`optrace serve` started, which SIGTERM ends with 0."""

import os
import signal
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_demo  # noqa: E402
from test_serve_unit import free_port, scrape_until  # noqa: E402

BUILD = test_demo.BUILD
OPTRACE = os.path.join(BUILD, "bin", "optrace")
SERVE = os.path.join(BUILD, "libexec", "optrace-serve")
DEMO = os.path.join(BUILD, "bin", "optrace-demo")
SERVE_LIBRARIES = ("libmicrohttpd", "libgnutls", "libcrypt")


def needed(program):
    """The libraries an ELF program names (DT_NEEDED), as readelf lists them."""
    out = subprocess.run(["readelf", "-d", program], capture_output=True, text=True,
                         check=True).stdout
    return [line.split("[", 1)[1].split("]", 1)[0] for line in out.splitlines()
            if "(NEEDED)" in line]


def loaded(program):
    """Every library the loader maps for program, those of its libraries included (ldd)."""
    out = subprocess.run(["ldd", program], capture_output=True, text=True, check=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def serve_libraries(names):
    return [name for name in names if name.startswith(SERVE_LIBRARIES)]


class ServeLinkingTest(unittest.TestCase):
    def test_optrace_loads_no_serve_library(self):
        self.assertEqual(serve_libraries(needed(OPTRACE)), [])
        self.assertEqual(serve_libraries(loaded(OPTRACE)), [])

    def test_serve_program_links_them(self):
        names = needed(SERVE)
        for library in SERVE_LIBRARIES:
            self.assertEqual(len([n for n in names if n.startswith(library + ".")]), 1, names)

    def test_serve_usage_and_exit_status(self):
        out = subprocess.run([OPTRACE, "serve", "--help"], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertTrue(out.stdout.startswith("Usage: optrace serve [OPTION...]"), out.stdout)
        self.assertIn("--web-config", out.stdout)
        out = subprocess.run([OPTRACE, "serve", "-h"], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertTrue(out.stdout.startswith("Usage: optrace serve"), out.stdout)
        out = subprocess.run([OPTRACE, "serve", "--no-such-flag"], capture_output=True,
                             text=True)
        self.assertEqual(out.returncode, 2)
        self.assertIn("optrace serve: unrecognized option '--no-such-flag'", out.stderr)
        out = subprocess.run([OPTRACE, "serve", "--version"], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertRegex(out.stdout, r"^optrace [0-9.]+\n$")

    def test_serve_serves_in_optrace_place(self):
        why = test_demo.bpf_unavailable_reason()
        if why:
            self.skipTest(why)
        port = free_port()
        demo = subprocess.Popen([DEMO, "--forever", "-w", "stats", "-q", "--truth",
                                 os.devnull])
        serve = subprocess.Popen([OPTRACE, "serve", "-a", "-q", "--listen",
                                  "127.0.0.1:%d" % port], stderr=subprocess.PIPE, text=True)
        try:
            body = scrape_until(serve, port, 'optrace_operations_total{command="optrace-demo"')
            self.assertIn('optrace_operations_total{command="optrace-demo"', body,
                          serve.stderr.read() if serve.poll() is not None else body[-2000:])
            # the same process, now the serve program: systemd's unit sees no other
            self.assertEqual(os.readlink("/proc/%d/exe" % serve.pid), os.path.realpath(SERVE))
            with open("/proc/%d/maps" % serve.pid) as f:
                self.assertIn("libmicrohttpd", f.read())
            serve.send_signal(signal.SIGTERM)
            self.assertEqual(serve.wait(timeout=60), 0, serve.stderr.read())
        finally:
            if serve.poll() is None:
                serve.kill()
                serve.wait()
            serve.stderr.close()
            demo.kill()
            demo.wait()


if __name__ == "__main__":
    unittest.main()
