# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""How optrace reaches its users: `make install` and `make uninstall` into a
DESTDIR (the prefix as it was afterwards), the man pages, the bash
completion, the systemd unit and the pkg-config file it puts down, and
`pip install ./python` in a venv, whose module then counts the Python demo's
truth exactly under optrace stat."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_demo  # noqa: E402

ROOT = test_demo.ROOT
BUILD = test_demo.BUILD
PREFIX = "/usr/local"


def tree(path):
    """Every path below path, with its type: what a prefix holds."""
    found = set()
    for top, dirs, files in os.walk(path):
        for name in dirs + files:
            full = os.path.join(top, name)
            found.add((os.path.relpath(full, path), os.path.islink(full),
                       os.path.isdir(full)))
    return found


def make(*targets, destdir):
    return subprocess.run(["make", "-s", "-C", ROOT, "OUTPUT=" + BUILD, "PREFIX=" + PREFIX,
                           "DESTDIR=" + destdir] + list(targets),
                          capture_output=True, text=True, timeout=600)


class TestInstall(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="optrace-install-")
        cls.destdir = os.path.join(cls.dir, "root")
        # what a fresh Debian /usr/local has: install must make the rest
        for sub in ("bin", "lib", "share/man"):
            os.makedirs(os.path.join(cls.destdir, PREFIX.lstrip("/"), sub))
        cls.before = tree(cls.destdir)
        out = make("install", destdir=cls.destdir)
        assert out.returncode == 0, out.stdout + out.stderr
        cls.prefix = cls.destdir + PREFIX

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_man_pages(self):
        man = os.path.join(self.prefix, "share", "man")
        # Debian's man and groff as a user runs them: not with the sanitizers'
        # runtime that `make sanitize` preloads (ASan stops troff on a fault of its own).
        env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
        for page in ["optrace"] + ["optrace-" + c for c in
                                   ("list", "stat", "top", "record", "report", "export",
                                    "serve")]:
            out = subprocess.run(["man", "-M", man, "-w", "8", page], capture_output=True,
                                 text=True, env=env)
            self.assertEqual(out.returncode, 0, page + ": " + out.stderr)
            self.assertTrue(out.stdout.strip().endswith(page + ".8.gz"), out.stdout)
        out = subprocess.run(["man", "-M", man, "8", "optrace-record"], capture_output=True,
                             text=True, env=dict(env, MANWIDTH="80", MANPAGER="cat"))
        self.assertIn("--ringbuf", out.stdout)
        self.assertIn("optrace(8)", out.stdout)
        # every page fits a terminal of 80 columns, metric names whole (issue 43)
        for page in ["optrace"] + ["optrace-" + c for c in
                                   ("list", "stat", "top", "record", "report", "export",
                                    "serve", "dump", "demo")]:
            out = subprocess.run(["man", "-M", man, "8", page], capture_output=True,
                                 text=True, env=dict(env, MANWIDTH="80", MANPAGER="cat"))
            self.assertEqual(out.returncode, 0, page + ": " + out.stderr)
            wide = [line for line in out.stdout.split("\n") if len(line) > 80]
            self.assertEqual(wide, [], page)
            if page == "optrace":
                self.assertIn("optrace_operations_total\n", out.stdout)
                self.assertNotIn("\u2010\n", out.stdout)  # no word hyphenated at a line's end

    def complete(self, line):
        """What bash completes for line, with bash-completion and optrace's completion."""
        words = line.split(" ")
        script = (
            "source /usr/share/bash-completion/bash_completion\n"
            "source %s/share/bash-completion/completions/optrace\n"
            "COMP_WORDS=(%s); COMP_CWORD=%d; COMP_LINE='%s'; COMP_POINT=${#COMP_LINE}\n"
            "_optrace\nprintf '%%s\\n' \"${COMPREPLY[@]}\"\n" %
            (self.prefix, " ".join("'%s'" % w for w in words), len(words) - 1, line))
        out = subprocess.run(["bash", "-i", "-c", script], capture_output=True, text=True,
                             env=dict(os.environ, PATH=self.prefix + "/bin:" +
                                      os.environ["PATH"]), timeout=60)
        return out.stdout.split()

    def test_completion(self):
        self.assertEqual(self.complete("optrace rec"), ["record"])
        self.assertIn("--ringbuf=", self.complete("optrace record --ring"))
        self.assertIn("--show-helpers", self.complete("optrace export --show"))
        # each flag once, with "=" where it takes a value (issue 43)
        flags = self.complete("optrace serve --")
        self.assertEqual(len(flags), len(set(flags)), flags)
        self.assertIn("--listen=", flags)
        self.assertNotIn("--listen", flags)
        self.assertEqual(flags.count("--help"), 1, flags)
        # -T takes no value: the next word is a flag or an interval
        self.assertIn("--json", self.complete("optrace stat -T --js"))
        # after --, the traced command's own completion: here, a command name
        self.assertIn("sleep", self.complete("optrace stat -- slee"))
        demo = subprocess.Popen([os.path.join(BUILD, "bin", "optrace-demo"), "--forever",
                                 "--pause", "50", "-q", "--truth", "/dev/null"])
        try:
            import time
            offered = []
            for _ in range(600):  # however long its start takes: it maps liboptrace then
                offered = self.complete("optrace stat -p ")
                if str(demo.pid) in offered:
                    break
                time.sleep(0.1)
            self.assertIn(str(demo.pid), offered)
        finally:
            demo.kill()
            demo.wait()

    def test_service_installed_disabled(self):
        unit = os.path.join(self.prefix, "lib", "systemd", "system", "optrace-serve.service")
        with open(unit) as f:
            text = f.read()
        self.assertIn("ExecStart=%s/bin/optrace serve $OPTRACE_SERVE_ARGS" % PREFIX, text)
        self.assertIn("EnvironmentFile=-%s/etc/default/optrace-serve" % PREFIX, text)
        with open(os.path.join(self.prefix, "etc", "default", "optrace-serve")) as f:
            self.assertIn("127.0.0.1:9464", f.read())
        if shutil.which("systemctl"):
            out = subprocess.run(["systemctl", "--root=" + self.destdir, "is-enabled",
                                  "optrace-serve"], capture_output=True, text=True)
            self.assertEqual(out.stdout.strip(), "disabled", out.stderr)
        if shutil.which("systemd-analyze"):
            # verify wants ExecStart's program on this machine's root, where
            # nothing is installed: a copy of the unit names the one in DESTDIR
            copy = os.path.join(self.dir, "optrace-serve.service")
            with open(copy, "w") as f:
                f.write(text.replace("ExecStart=%s/bin/" % PREFIX,
                                     "ExecStart=%s/bin/" % self.prefix))
            out = subprocess.run(["systemd-analyze", "verify", "--man=no", copy],
                                 capture_output=True, text=True)
            self.assertEqual(out.returncode, 0, out.stderr)

    def test_pkg_config(self):
        env = dict(os.environ, PKG_CONFIG_PATH=self.prefix + "/lib/pkgconfig")
        out = subprocess.run(["pkg-config", "--libs", "--cflags", "optrace"],
                             capture_output=True, text=True, env=env)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.split(),
                         ["-I%s/include" % PREFIX, "-L%s/lib" % PREFIX, "-loptrace"])

    def test_system_install_loads(self):
        """make install into the system runs ldconfig: the README's pkg-config example builds
        and runs with no run path (issue 43)."""
        if os.geteuid() != 0:
            self.skipTest("needs root: installs into /usr/local, as the README does")
        out = subprocess.run(["make", "-s", "-C", ROOT, "OUTPUT=" + BUILD, "PREFIX=" + PREFIX,
                              "install"], capture_output=True, text=True, timeout=600)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        source = os.path.join(self.dir, "example.c")
        with open(source, "w") as f:
            f.write('#include <optrace/optrace.h>\n'
                    'int main(void) { uint64_t op = optrace_op_begin("example", '
                    'OPTRACE_CALLSITE);\n optrace_op_end(op, OPTRACE_STATUS_OK);\n'
                    ' return optrace_enabled(); }\n')
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "optrace"],
                               capture_output=True, text=True)
        self.assertEqual(flags.returncode, 0, flags.stderr)
        program = os.path.join(self.dir, "example")
        out = subprocess.run(["cc", "-o", program, source] + flags.stdout.split(),
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        env = dict(os.environ)
        env.pop("LD_LIBRARY_PATH", None)
        out = subprocess.run([program], capture_output=True, text=True, env=env)
        self.assertEqual(out.returncode, 0, out.stderr)

    def test_uninstall_leaves_the_prefix_as_it_was(self):
        destdir = os.path.join(self.dir, "again")
        shutil.copytree(self.destdir, destdir, symlinks=True)
        # a second install changes nothing of what uninstall removes
        self.assertEqual(make("install", destdir=destdir).returncode, 0)
        out = make("uninstall", destdir=destdir)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(tree(destdir), self.before)


class TestPip(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="optrace-pip-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def pip_install(self, base_python, venv):
        """A venv of base_python and `pip install ./python` in it: its module's paths."""
        lib = os.path.join(BUILD, "lib", "liboptrace.so.1")
        # NumPy, which the demo needs, is Debian's: the venv sees the system's packages
        out = subprocess.run([base_python, "-m", "venv", "--system-site-packages", venv],
                             capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        # No package index is reached: the build backend needs none.
        env = dict(os.environ, OPTRACE_LIBDIR=os.path.join(BUILD, "lib"),
                   OPTRACE_INCLUDEDIR=os.path.join(ROOT, "include"), PIP_NO_INDEX="1")
        out = subprocess.run([os.path.join(venv, "bin", "pip"), "install", "-q",
                              os.path.join(ROOT, "python")], capture_output=True, text=True,
                             env=env, timeout=300)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        out = subprocess.run([os.path.join(venv, "bin", "python"), "-c",
                              "import optrace; print(optrace.__file__); "
                              "print(optrace.LIBOPTRACE)"], capture_output=True, text=True,
                             env=dict(os.environ, PYTHONPATH=""), cwd=self.dir)
        self.assertEqual(out.returncode, 0, out.stderr)
        module, mapped = out.stdout.split()
        self.assertTrue(module.startswith(venv), module)
        # the import says which liboptrace it mapped: the one it was built against
        self.assertEqual(mapped, os.path.realpath(lib))

    def test_venv_module_counts_the_truth(self):
        why = test_demo.bpf_unavailable_reason()
        venv = os.path.join(self.dir, "v")
        lib = os.path.join(BUILD, "lib", "liboptrace.so.1")

        self.pip_install(test_demo.PYTHON, venv)
        # and for the Python that runs the tests, when it is another (pyenv, conda, ...)
        if os.path.realpath(sys.executable) != os.path.realpath(test_demo.PYTHON):
            self.pip_install(sys.executable, os.path.join(self.dir, "other"))
        if why:
            self.skipTest(why)
        truth = os.path.join(self.dir, "truth.txt")
        out = subprocess.run([test_demo.OPTRACE, "stat", "--json", "--lib", lib, "--",
                              os.path.join(venv, "bin", "python"), test_demo.DEMO, "-i", "2",
                              "-q", "--truth", truth], capture_output=True, text=True,
                             timeout=300, env=dict(os.environ, PYTHONPATH=""))
        self.assertEqual(out.returncode, 0, out.stderr)
        expected, _ = test_demo.truth_parse(truth)
        traced, processes, _ = test_demo.json_counts(out.stdout)
        self.assertEqual(processes, 1)
        self.assertEqual(test_demo.diff(expected, traced), "")


if __name__ == "__main__":
    unittest.main()
