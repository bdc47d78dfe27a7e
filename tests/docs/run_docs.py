#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Runs every shell command of README.md and docs/*.md, so that none rots.

Usage: tests/docs/run_docs.py [-v] [--list] [DOC...]

Fenced code blocks name their language: ```sh blocks hold commands, which
this suite runs; any other language (text, c, python, json) is not run. A
block without a language is not run either, and fails the lint if a line of
it looks like a command (optrace, make, a script, ...: say ```sh or
```text), so that no command escapes by accident.

Each command (a line of a ```sh block; a line ending in a backslash goes on
with the next, and comment lines are left out) runs with bash, as written,
in order, in a throw-away copy of the repository's root (a directory of
symbolic links to its files) where `.output` is the build under test
($OPTRACE_BUILD_DIR, default .output): what the commands write lands there,
and `.output/bin/optrace` is the optrace being tested. Every command runs in
a process group of its own, stdin /dev/null, under a timeout (SIGTERM to the
whole group, then SIGKILL); every block runs, however long the ones before took.

Stand-ins for placeholders, in ```sh blocks only:
    1234, PID   the pid of a running demo runtime, started for the suite:
                .output/bin/optrace-demo --forever (DEMO_ARGS), ended at exit
    1240        the pid of a second one
    ./app       optrace-demo -w stats: a program that uses liboptrace, the
                installed one (README's `make install`), which the installed
                optrace attaches to

A block opts out, or changes how it runs, only with a marker, the last
non-blank line before it:
    <!-- docs-test: skip (REASON) -->   not run; the reason is printed. A
        reason of ALLOWED_SKIPS (what no machine of this kind has: a GPU,
        Legion Prof, Slurm; or what cannot run inside a suite) prints NOT RUN
        and counts neither as passed nor as skipped; any other reason is a
        skip, and under CI=true a failure.
    <!-- docs-test: live -->   each command runs until Ctrl-C (stat without
        -d, top): after LIVE_S seconds, and once it printed something (that
        it is tracing; LIVE_MAX_S at most), it gets SIGINT, as Ctrl-C sends
        it, and passes when it then exits 0; one that ends by itself before
        must exit 0, so one that cannot start fails.

Every document is also linted, skipped blocks included: no `$ ` prompts, no
sudo (Debian here has none; tracing runs as root), legion_prof always with a
subcommand of Legion Prof 25.06, repository paths that exist, markers that
are known and stand before a ```sh block, and no inline `sudo ...` or
`legion_prof FILE` in the prose either.

Ends with the line tests/run.sh reads from every Python runner:
    python: N passed, N failed, N skipped
"""

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BUILD = os.path.abspath(os.environ.get("OPTRACE_BUILD_DIR",
                                       os.path.join(ROOT, ".output")))

# The reasons that may skip a block under CI=true: what no CI machine has,
# or what cannot run inside a test suite.
ALLOWED_SKIPS = (
    "needs a GPU",
    "needs Slurm or MPI, which are not packaged here",
    "needs cuPyNumeric, which is not packaged here",
    "needs Legion Prof, which is not packaged here",
    "needs a Legion checkout, Chromium and the npm registry",
    "runs every test suite, this one included",
    "a benchmark that runs for minutes",
    "installs Debian packages on this machine (CI runs it: scripts/check-packages.sh)",
)

COLUMNS = 80            # the width every command's text must fit (issue 25)
# Every block runs, however busy the machine: a block is failed for what it
# does, never for time the blocks before it took. Each command is bounded.
TIMEOUT_S = 120         # one command
LIVE_S = 2              # a live command's run before its Ctrl-C ...
LIVE_MAX_S = 60         # ... once it printed something (it is ready), or this
STOP_S = 10             # for a live command to exit after Ctrl-C
DEMO_ARGS = ["--forever", "--workload", "all", "--size", "10000",
             "--pause", "100", "-q"]

COMMAND_LANGS = {"sh", "bash", "shell"}
# legion_prof's subcommands in Legion 25.06 (tools/legion_prof_rs/src/main.rs).
LEGION_PROF_COMMANDS = {"archive", "attach", "duckdb", "dump", "legacy",
                        "nvtxw", "serve", "view", "statistics", "trace",
                        "help"}
SOURCE_DIRS = ("bench", "bpf", "docs", "examples", "include", "probes",
               "python", "scripts", "tests", "userspace")

MARKER = re.compile(r"^\s*<!--\s*docs-test:\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^`\s]*)[^`]*$")


class Block:
    def __init__(self, doc, line, lang, indent, fence):
        self.doc, self.line, self.lang = doc, line, lang
        self.indent, self.fence = indent, fence
        self.lines = []          # (line number, text)
        self.marker = None       # (kind, reason)


def parse(doc, text):
    """Returns (blocks, problems, inline code spans)."""
    blocks, problems, spans = [], [], []
    block = None
    marker = None                # (line, kind, reason) waiting for a block
    for number, line in enumerate(text.splitlines(), 1):
        if block is not None:
            stripped = line.strip()
            if (stripped.startswith(block.fence[0] * len(block.fence)) and
                    set(stripped) <= {block.fence[0]}):
                block = None
                continue
            if line.startswith(block.indent):
                line = line[len(block.indent):]
            block.lines.append((number, line))
            continue
        fence = FENCE.match(line)
        if fence:
            indent, chars, lang = fence.groups()
            block = Block(doc, number, lang.lower(), indent, chars)
            blocks.append(block)
            if marker:
                if block.lang not in COMMAND_LANGS:
                    problems.append(f"{doc}:{marker[0]}: a docs-test marker before a"
                                    f" ```{lang} block, which is not run anyway")
                block.marker = marker[1:]
                marker = None
            continue
        found = MARKER.match(line)
        if found:
            if marker:
                problems.append(f"{doc}:{marker[0]}: a docs-test marker that no"
                                " code block follows")
            words = found.group(1)
            kind = words.split("(", 1)[0].strip()
            reason = re.search(r"\((.*)\)\s*$", words)
            reason = reason.group(1).strip() if reason else ""
            if kind not in ("skip", "live"):
                problems.append(f"{doc}:{number}: unknown docs-test marker"
                                f" {words!r}: skip (REASON) or live")
            elif kind == "skip" and not reason:
                problems.append(f"{doc}:{number}: docs-test: skip needs a reason"
                                " in parentheses")
            marker = (number, kind, reason)
            continue
        if marker and line.strip():
            problems.append(f"{doc}:{marker[0]}: a docs-test marker that no code"
                            " block follows")
            marker = None
        for span in re.findall(r"`([^`]+)`", line):
            spans.append((number, span))
    for untagged in (b for b in blocks if not b.lang):
        for number, line in untagged.lines:
            if looks_like_command(line):
                problems.append(f"{doc}:{number}: a command in a code block without"
                                " a language: say ```sh (commands, which"
                                " tests/docs runs) or ```text")
                break
    if block is not None:
        problems.append(f"{doc}:{block.line}: a code block that never ends")
    if marker:
        problems.append(f"{doc}:{marker[0]}: a docs-test marker that no code"
                        " block follows")
    return blocks, problems, spans


COMMAND_WORDS = {"optrace", "optrace-demo", "make", "sudo", "bpftrace",
                 "legion_prof", "perf", "gdb", "pkg-config", "cc", "gcc",
                 "python", "python3", "bash", "sh", "mount", "cd", "export",
                 "timeout", "env"}


def looks_like_command(line):
    """A line of an untagged block that reads as a shell command."""
    line = re.sub(r"^\s*[$#]\s+", "", line)
    words = line.split()
    while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
        words.pop(0)
    if not words:
        return False
    first = words[0]
    return (os.path.basename(first) in COMMAND_WORDS or
            first.startswith(("./", ".output/")) or
            first.split("/", 1)[0] in SOURCE_DIRS and "/" in first)


def commands(block):
    """A ```sh block's commands: (line number, text)."""
    result, pending, start = [], "", None
    for number, line in block.lines:
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if not pending:
            start = number
        if line.rstrip().endswith("\\"):
            pending += line.strip()[:-1].strip() + " "
            continue
        result.append((start, (pending + line.strip()).strip()))
        pending = ""
    if pending:
        result.append((start, pending.strip()))
    return result


def lint_command(where, command):
    problems = []
    if command.startswith("$ "):
        problems.append(f"{where}: a `$ ` prompt: write the command alone")
    if re.search(r"(^|[;&|(]\s*)sudo\b", command):
        problems.append(f"{where}: sudo: Debian here has none, and tracing runs"
                        " as root: leave it out")
    try:
        words = shlex.split(command, comments=True)
    except ValueError as error:
        return problems + [f"{where}: cannot be parsed: {error}"]
    for index, word in enumerate(words):
        if os.path.basename(word) == "legion_prof" and (
                index + 1 == len(words) or
                words[index + 1] not in LEGION_PROF_COMMANDS):
            problems.append(f"{where}: legion_prof without a subcommand: Legion"
                            " Prof 25.06 takes one first (view, archive,"
                            " legacy, statistics, trace, ...)")
    for word in words:
        word = word.split("=", 1)[-1]
        if (word.split("/", 1)[0] in SOURCE_DIRS and "/" in word and
                not re.search(r"[*?\[$]", word) and
                not os.path.exists(os.path.join(ROOT, word))):
            problems.append(f"{where}: {word}: no such file in the repository")
    return problems


def lint_span(where, span):
    problems = []
    if re.match(r"sudo\s", span):
        problems.append(f"{where}: `{span}`: no sudo (Debian here has none)")
    for found in re.finditer(r"(?:^|\s)legion_prof\s+(\S+)", span):
        if found.group(1) not in LEGION_PROF_COMMANDS:
            problems.append(f"{where}: `{span}`: Legion Prof 25.06 takes a"
                            " subcommand first (legion_prof view ...)")
    return problems


class StandIns:
    """Demo runtimes to attach to, started when a command first needs one."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.procs = {}

    def pid(self, index):
        proc = self.procs.get(index)
        if proc is not None and proc.poll() is None:
            return proc.pid
        demo = os.path.join(BUILD, "bin", "optrace-demo")
        truth = os.path.join(self.tmp, f"stand-in-{index}.truth")
        proc = subprocess.Popen([demo, *DEMO_ARGS, "--truth", truth],
                                stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL,
                                start_new_session=True)
        self.procs[index] = proc
        # Until it maps liboptrace (at once: it is linked with it).
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with open(f"/proc/{proc.pid}/maps") as maps:
                    if "liboptrace" in maps.read():
                        break
            except OSError:
                pass
            time.sleep(0.05)
        print(f"stand-in: {demo} {' '.join(DEMO_ARGS)}: pid {proc.pid}")
        return proc.pid

    def stop(self):
        for proc in self.procs.values():
            stop_group(proc, signal.SIGTERM)


def group_alive(pgid):
    try:
        os.killpg(pgid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def stop_group(proc, first, grace=3.0):
    """first to the process group, then SIGKILL after grace; every member,
    the leader's background children included."""
    for sig in (first, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            if proc.poll() is not None and not group_alive(proc.pid):
                return proc.returncode
            time.sleep(0.05)
    proc.wait()
    return proc.returncode


def command_env():
    """The suite's environment, as a fresh shell's: without what `make test`
    sets for the suites, and without make's jobserver (its pipes are not
    passed on); the build's own variables (make's overrides, a sanitizer's
    LD_PRELOAD) stay."""
    env = dict(os.environ)
    for name in ("PYTHONPATH", "PYTHON", "OPTRACE_BUILD_DIR", "OUTPUT"):
        env.pop(name, None)
    if "MAKEFLAGS" in env:
        env["MAKEFLAGS"] = re.sub(r"\s*--jobserver-(auth|fds)=\S+", "",
                                  env["MAKEFLAGS"])
    env["COLUMNS"] = str(COLUMNS)   # a terminal of 80, as a user's
    return env


def checks_width(command):
    """Whether a command's output must fit COLUMNS: optrace's own text, not
    JSON (one record a line), --wide or --dump (records, as they are)."""
    words = command.split()
    return (bool(words) and os.path.basename(words[0]) == "optrace" and
            not any(w in ("--json", "--wide", "--dump", "--dump=records")
                    or w.startswith("--dump") for w in words) and
            "|" not in command)


def overlong(log):
    """The first line of the output wider than COLUMNS characters, or None."""
    with open(log, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            if len(line.rstrip("\n")) > COLUMNS:
                return number, line.rstrip("\n")
    return None


def shown(command):
    """The command without its trailing comment, for the result lines: the
    first " #" outside quotes starts it."""
    for found in re.finditer(r"\s#", command):
        head = command[:found.start()]
        try:
            shlex.split(head)
        except ValueError:
            continue
        return head.rstrip()
    return command


def substitute(command, standins):
    def pid_of(index):
        return lambda match: str(standins.pid(index))
    command = re.sub(r"(?<![\w./-])\./app\b", "optrace-demo -w stats", command)
    command = re.sub(r"\b1234\b|\bPID\b", pid_of(0), command)
    command = re.sub(r"\b1240\b", pid_of(1), command)
    return command


def tail(path, lines=25):
    """The output's last lines, indented, after a newline; "" if none."""
    with open(path, errors="replace") as f:
        text = f.read().splitlines()
    return "".join("\n    | " + line for line in text[-lines:])


def status_text(status):
    if status < 0:
        return f"killed by {signal.Signals(-status).name}"
    return f"exit {status}"


class Suite:
    def __init__(self, verbose):
        self.verbose = verbose
        self.passed = self.failed = self.skipped = self.not_run = 0
        self.ci = os.environ.get("CI") == "true"
        self.start = time.monotonic()

    def result(self, kind, name, detail=""):
        print(f"{kind}: {name}" + (f": {detail}" if detail else ""))
        sys.stdout.flush()
        if kind == "PASS":
            self.passed += 1
        elif kind == "FAIL":
            self.failed += 1
        elif kind == "NOT RUN":
            self.not_run += 1
        else:
            self.skipped += 1

    def run(self, name, command, cwd, env, live, log):
        began = time.monotonic()
        with open(log, "w") as out:
            proc = subprocess.Popen(["bash", "-c", command], cwd=cwd, env=env,
                                    stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT,
                                    start_new_session=True)
        stopped = False
        try:
            status = proc.wait(LIVE_S if live else TIMEOUT_S)
        except subprocess.TimeoutExpired:
            status = None
        # A live command is ready once it says so (optrace: "Tracing...",
        # bpftrace: "Attaching", top: its screen): a Ctrl-C before it has
        # attached only tests how fast the machine loads BPF programs.
        while (live and status is None and os.path.getsize(log) == 0 and
               time.monotonic() - began < LIVE_MAX_S):
            try:
                status = proc.wait(0.1)
            except subprocess.TimeoutExpired:
                pass
        if status is None:
            if not live:
                stop_group(proc, signal.SIGTERM)
                self.result("FAIL", name, f"timed out after {TIMEOUT_S} s"
                            f" (stopped with SIGTERM, then SIGKILL){tail(log)}")
                return
            stopped = True
            ran = time.monotonic() - began
            try:
                os.killpg(proc.pid, signal.SIGINT)   # as Ctrl-C on a terminal
            except ProcessLookupError:
                pass
            try:
                status = proc.wait(STOP_S)
            except subprocess.TimeoutExpired:
                stop_group(proc, signal.SIGTERM)
                self.result("FAIL", name, f"still running {STOP_S} s after Ctrl-C"
                            f" (SIGINT){tail(log)}")
                return
        took = time.monotonic() - began
        how = (f"ran {ran:.1f} s, then {status_text(status)} on Ctrl-C (SIGINT)"
               if stopped else f"{status_text(status)} in {took:.1f} s")
        if group_alive(proc.pid):                    # what it left behind
            stop_group(proc, signal.SIGTERM)
            how += "; stopped what it left running"
        if status != 0:
            self.result("FAIL", name, how + tail(log))
            return
        wide = overlong(log) if checks_width(command) else None
        if wide:
            self.result("FAIL", name, f"line {wide[0]} is {len(wide[1])} characters wide, "
                        f"over COLUMNS={COLUMNS}:\n    | {wide[1]}")
            return
        self.result("PASS", name, how)
        if self.verbose:
            print(tail(log, 10000))

    def skip(self, name, reason):
        # What no machine of this kind has is documented, not a test that
        # could run here: listed, and not counted as a skip.
        if reason.startswith(ALLOWED_SKIPS):
            self.result("NOT RUN", name, reason)
        elif self.ci:
            self.result("FAIL", name, f"skipped ({reason}), and under CI=true only"
                        " these reasons may leave a block unrun: "
                        + "; ".join(ALLOWED_SKIPS))
        else:
            self.result("SKIP", name, reason)


def documents(args):
    if args:
        return [os.path.relpath(os.path.abspath(a), ROOT) for a in args]
    docs = os.path.join(ROOT, "docs")
    return ["README.md"] + sorted(os.path.join("docs", name)
                                  for name in os.listdir(docs)
                                  if name.endswith(".md"))


def mirror(tmp, doc):
    """The repository's root as symbolic links, .output the build under test."""
    work = os.path.join(tmp, "work-" + doc.replace("/", "-"))
    os.mkdir(work)
    for name in os.listdir(ROOT):
        if name in (".git", ".output", ".output-sanitize", "__pycache__"):
            continue
        os.symlink(os.path.join(ROOT, name), os.path.join(work, name))
    os.symlink(BUILD, os.path.join(work, ".output"))
    return work


def main(argv):
    verbose = "-v" in argv
    listing = "--list" in argv
    args = [a for a in argv if a not in ("-v", "--list")]
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    suite = Suite(verbose)
    tmp = tempfile.mkdtemp(prefix="optrace-docs-test.")
    standins = StandIns(tmp)
    env = command_env()
    try:
        built = os.access(os.path.join(BUILD, "bin", "optrace"), os.X_OK)
        if not listing and not built:
            suite.result("FAIL", "docs", f"{BUILD}/bin/optrace is not built")
        for doc in documents(args) if listing or built else []:
            with open(os.path.join(ROOT, doc)) as f:
                blocks, problems, spans = parse(doc, f.read())
            runnable = [b for b in blocks if b.lang in COMMAND_LANGS]
            for block in runnable:
                for number, command in commands(block):
                    problems += lint_command(f"{doc}:{number}", command)
            for number, span in spans:
                problems += lint_span(f"{doc}:{number}", span)
            if listing:
                for block in runnable:
                    for number, command in commands(block):
                        kind = block.marker[0] if block.marker else "run"
                        print(f"{doc}:{number}: [{kind}] {command}")
                for problem in problems:
                    print("LINT: " + problem)
                continue
            if problems:
                suite.result("FAIL", f"{doc}: lint", "\n    " + "\n    ".join(problems))
            else:
                suite.result("PASS", f"{doc}: lint",
                             f"{len(blocks)} code blocks, {len(runnable)} of commands")
            if not runnable:
                continue
            work = mirror(tmp, doc)
            for block in runnable:
                kind, reason = block.marker or ("run", "")
                for number, command in commands(block):
                    name = f"{doc}:{number}: {shown(command)}"
                    if kind == "skip":
                        suite.skip(name, reason)
                        continue
                    actual = substitute(command, standins)
                    if actual != command:
                        print(f"       as: {shown(actual)}")
                    suite.run(name, actual, work, env, kind == "live",
                              os.path.join(tmp, "command.log"))
    finally:
        standins.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    took = time.monotonic() - suite.start
    if not listing:
        print(f"docs: {took:.0f} s; {suite.not_run} commands"
              " not run, each for the reason its document gives (NOT RUN lines)")
        # tests/run.sh sums every Python runner's line of this form.
        print(f"python: {suite.passed} passed, {suite.failed} failed,"
              f" {suite.skipped} skipped")
    return 1 if suite.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
