#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# gpu-check.sh: on a machine with an NVIDIA GPU, check optrace's GPU
# attribution against the demo's ground truth. Runs the demo's CUDA variant
# under `optrace record` with the CUPTI collector, then report, report --json,
# export --chrome and export --legion, and the collector's file mode
# (OPTRACE_GPU_FILE) without a tracer, and `optrace stat --cuda` (GPU time
# counted in the kernel). Checks that every kernel is attributed to the
# operation that launched it (counts per op, against the truth; report, and
# stat's per process) and lies inside that op's lifetime, that the capture
# has the launches' marks and attributes the same streamed as read ahead
# (OPTRACE_GPU_READ_AHEAD=1). Then the live load: `optrace record --cuda
# -p` loads the collector into the CUDA variant started without it, records
# its kernels, a second record finds it there, and the demo ends normally; a
# demo without CUDA is refused and left running. See docs/gpu-check.md and
# docs/cupti.md ("Loading the collector into a running process").
#
# USAGE: scripts/gpu-check.sh [OUTDIR]     (default .output/gpu-check)
# Exit: 0 all checks passed, or SKIP (no GPU); 1 a check failed; 2 setup
# error (no build, not root, a step timed out or failed).

set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2

OUTPUT=${OUTPUT:-$ROOT/.output}
OUT=$(realpath -m "${1:-$OUTPUT/gpu-check}")
OPTRACE=$OUTPUT/bin/optrace
DEMO=$OUTPUT/bin/optrace-demo
CUPTI_LIB=$OUTPUT/lib/liboptrace-cupti.so
PYTHON=${PYTHON:-/usr/bin/python3}
# Big enough to be deferred (the GPU variant runs tasks, not eager work),
# small enough to take seconds.
DEMO_ARGS=${GPU_CHECK_DEMO_ARGS:--w all -i 20 -s 100000}
# Slack for CUPTI's device-to-host clock conversion, in ns.
TOL_NS=${GPU_CHECK_TOL_NS:-20000}

mkdir -p "$OUT" || exit 2
LOG=$OUT/gpu-check.log
: >"$LOG"

say() {
	echo "gpu-check: $*" | tee -a "$LOG"
}

# step NAME SECONDS CMD...: run CMD with a time limit, stdout into $OUT/NAME,
# stderr into $OUT/NAME.err, both also into the log.
step() {
	local name=$1 limit=$2 rc
	shift 2
	echo "+ $*" >>"$LOG"
	timeout --kill-after=10 "$limit" "$@" >"$OUT/$name" 2>"$OUT/$name.err"
	rc=$?
	cat "$OUT/$name" "$OUT/$name.err" >>"$LOG"
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		say "$name: timed out after ${limit}s"
	elif [ $rc -ne 0 ]; then
		say "$name: failed (exit $rc); last lines:"
		cat "$OUT/$name" "$OUT/$name.err" | tail -n 5 | sed 's/^/    /' | tee -a "$LOG"
	fi
	return $rc
}

# ---- is there a GPU? ----

if [ ! -e /dev/nvidia0 ]; then
	say "SKIP: no NVIDIA GPU (/dev/nvidia0 is missing)"
	exit 0
fi
if ! timeout 30 nvidia-smi -L >>"$LOG" 2>&1; then
	say "SKIP: no usable NVIDIA GPU (nvidia-smi failed or is missing)"
	exit 0
fi
say "GPU: $(timeout 30 nvidia-smi -L 2>/dev/null | head -n 1)"

# ---- the builds: carried ones in .output/, else make ----

if [ ! -x "$OPTRACE" ] || [ ! -x "$DEMO" ] || [ ! -f "$CUPTI_LIB" ] ||
	[ -n "${GPU_CHECK_BUILD:-}" ]; then
	say "building optrace, the demo and the CUPTI collector"
	step build.out 240 make -s OUTPUT="$OUTPUT" "$OPTRACE" "$DEMO" "$CUPTI_LIB" || exit 2
fi
for f in "$OPTRACE" "$DEMO" "$CUPTI_LIB"; do
	if [ ! -e "$f" ]; then
		say "setup: $f is missing (liboptrace-cupti.so needs CUPTI's headers at build time)"
		exit 2
	fi
done

SUDO=
if [ "$(id -u)" -ne 0 ]; then
	if sudo -n true 2>/dev/null; then
		SUDO="sudo -n"
	else
		say "setup: optrace record needs root (run as root, or with password-less sudo)"
		exit 2
	fi
fi

# ---- 1: the CUDA variant alone: it runs, and computes right ----

# shellcheck disable=SC2086 # DEMO_ARGS are words
step demo.out 60 "$DEMO" --gpus 1 $DEMO_ARGS --truth "$OUT/truth-plain.txt" || exit 1
if grep -q "running on CPUs only" "$OUT/demo.out.err"; then
	say "FAIL: the demo did not use the GPU: $(grep 'running on CPUs only' "$OUT/demo.out.err")"
	exit 1
fi
if ! grep -q '^gpu ' "$OUT/truth-plain.txt"; then
	say "FAIL: the demo ran no GPU task point (see $OUT/demo.out.err)"
	exit 1
fi
say "demo --gpus 1: ok, $(grep -c '^gpu .* points ' "$OUT/truth-plain.txt") GPU (op, task) kinds"

# ---- 2: recorded with the collector, then report and exports ----

rm -rf "$OUT/legion"
# shellcheck disable=SC2086
step record.out 120 $SUDO env CUDA_INJECTION64_PATH="$CUPTI_LIB" \
	"$OPTRACE" record -o "$OUT/demo.capture" -- \
	"$DEMO" --gpus 1 $DEMO_ARGS --truth "$OUT/truth.txt" || exit 2
$SUDO chown "$(id -u):$(id -g)" "$OUT/demo.capture" "$OUT/truth.txt" 2>/dev/null
step report.txt 60 "$OPTRACE" report "$OUT/demo.capture" || exit 2
step report.json 60 "$OPTRACE" report --json "$OUT/demo.capture" || exit 2
step chrome.out 60 "$OPTRACE" export --chrome --show-helpers -o "$OUT/trace.json" \
	"$OUT/demo.capture" || exit 2
step legion.out 60 "$OPTRACE" export --legion -o "$OUT/legion" "$OUT/demo.capture" || exit 2

# ---- 3: the collector's file mode, no tracer ----

rm -f "$OUT/gpu.bin"
# shellcheck disable=SC2086
step file-mode.out 60 env OPTRACE_GPU_FILE="$OUT/gpu.bin" CUDA_INJECTION64_PATH="$CUPTI_LIB" \
	"$DEMO" --gpus 1 $DEMO_ARGS --truth "$OUT/truth-file.txt" || exit 1
step gpu-report.txt 60 "$OPTRACE" report "$OUT/gpu.bin" || exit 2
step gpu-report.json 60 "$OPTRACE" report --json "$OUT/gpu.bin" || exit 2

# ---- 3b: stat --cuda (GPU time counted in the kernel); the capture read ahead ----

# shellcheck disable=SC2086
step stat.out 120 $SUDO env CUDA_INJECTION64_PATH="$CUPTI_LIB" \
	"$OPTRACE" stat --json --cuda -o "$OUT/stat.json" -- \
	"$DEMO" --gpus 1 $DEMO_ARGS --truth "$OUT/truth-stat.txt" || exit 2
$SUDO chown "$(id -u):$(id -g)" "$OUT/stat.json" "$OUT/truth-stat.txt" 2>/dev/null
step report-ahead.json 60 env OPTRACE_GPU_READ_AHEAD=1 "$OPTRACE" report --json \
	"$OUT/demo.capture" || exit 2

# ---- 4: the live load: optrace record --cuda -p into a running CUDA process ----

# Failures of this part, one per line, which the checks below report.
LIVE_FAILURES=$OUT/live-failures.txt
: >"$LIVE_FAILURES"
live_fail() {
	say "FAIL: $*"
	echo "$*" >>"$LIVE_FAILURES"
}
live_pid=
plain_pid=
# shellcheck disable=SC2317 # called by the trap
end_demos() {
	for pid in $live_pid $plain_pid; do
		kill -TERM "$pid" 2>/dev/null
	done
}
trap end_demos EXIT
# ends_normally PID NAME: SIGTERM, as --forever wants, then its exit status must be 0.
ends_normally() {
	local pid=$1 name=$2 rc
	if ! kill -0 "$pid" 2>/dev/null; then
		live_fail "$name did not survive (it was gone before its end)"
		wait "$pid" 2>/dev/null
		return
	fi
	kill -TERM "$pid"
	if ! timeout 60 tail --pid="$pid" -f /dev/null; then
		kill -KILL "$pid" 2>/dev/null
		live_fail "$name did not end within 60 s of SIGTERM"
	fi
	wait "$pid"
	rc=$?
	[ $rc -eq 0 ] || live_fail "$name ended with status $rc after SIGTERM"
}

rm -f "$OUT/live.capture" "$OUT/live-again.capture" "$OUT/refused.capture"
# shellcheck disable=SC2086
env -u CUDA_INJECTION64_PATH "$DEMO" --gpus 1 --forever --pause 20 $DEMO_ARGS \
	--truth "$OUT/truth-live.txt" >"$OUT/live-demo.out" 2>"$OUT/live-demo.err" &
live_pid=$!
for _ in $(seq 300); do
	grep -q '/libcuda\.so' "/proc/$live_pid/maps" 2>/dev/null && break
	sleep 0.1
done
if ! grep -q '/libcuda\.so' "/proc/$live_pid/maps" 2>/dev/null; then
	live_fail "the demo (--gpus 1 --forever) never mapped libcuda within 30 s"
elif grep -q '/liboptrace-cupti\.so' "/proc/$live_pid/maps"; then
	say "setup: the demo has the collector already: is CUDA_INJECTION64_PATH set elsewhere?"
	exit 2
else
	sleep 1 # kernels before the load too
	# shellcheck disable=SC2086 # $SUDO: a command, or nothing
	step live-record.out 120 $SUDO "$OPTRACE" record -v --cuda -p "$live_pid" -d 8 \
		-o "$OUT/live.capture" || live_fail "optrace record --cuda -p failed"
	grep -q 'Loaded liboptrace-cupti into process' "$OUT/live-record.out.err" ||
		live_fail "optrace record --cuda -p did not say it loaded the collector"
	grep -q '/liboptrace-cupti\.so' "/proc/$live_pid/maps" 2>/dev/null ||
		live_fail "the collector is not in the demo after the load"
	say "live load: $(grep -o 'loaded liboptrace-cupti.*' "$OUT/live-record.out.err" | head -n 1)"
	# The collector is there now (dormant since the first record left): it goes on.
	# shellcheck disable=SC2086
	step live-again.out 60 $SUDO "$OPTRACE" record --cuda -p "$live_pid" -d 4 \
		-o "$OUT/live-again.capture" || live_fail "a second optrace record --cuda -p failed"
	if grep -q 'Loaded liboptrace-cupti' "$OUT/live-again.out.err"; then
		live_fail "the second record loaded the collector again"
	fi
	$SUDO chown "$(id -u):$(id -g)" "$OUT/live.capture" "$OUT/live-again.capture" 2>/dev/null
	step live-report.json 60 "$OPTRACE" report --json "$OUT/live.capture" ||
		live_fail "report --json of the live capture failed"
	step live-again.json 60 "$OPTRACE" report --json "$OUT/live-again.capture" ||
		live_fail "report --json of the second live capture failed"
fi
ends_normally "$live_pid" "the demo loaded into"
live_pid=

# A process without CUDA (the demo on CPUs): refused, left running.
"$DEMO" --forever --pause 20 -w stats -s 10000 -q >/dev/null 2>&1 &
plain_pid=$!
sleep 1
echo "+ $SUDO $OPTRACE record --cuda -p $plain_pid -d 1" >>"$LOG"
# shellcheck disable=SC2086
timeout --kill-after=10 60 $SUDO "$OPTRACE" record -q --cuda -p "$plain_pid" -d 1 \
	-o "$OUT/refused.capture" >"$OUT/refused.out" 2>&1
rc=$?
cat "$OUT/refused.out" >>"$LOG"
if [ $rc -ne 1 ] || ! grep -q 'does not use CUDA' "$OUT/refused.out"; then
	live_fail "record --cuda -p of a demo without CUDA: exit $rc, not refused as such"
fi
if grep -q '/liboptrace-cupti\.so' "/proc/$plain_pid/maps" 2>/dev/null; then
	live_fail "the demo without CUDA was left with the collector"
fi
ends_normally "$plain_pid" "the demo without CUDA"
plain_pid=

# ---- 5: the checks ----

echo "+ checks" >>"$LOG"
"$PYTHON" - "$OUT" "$TOL_NS" <<'EOF' 2>&1 | tee -a "$LOG"
import glob
import json
import os
import sys
from collections import defaultdict

out, tol = sys.argv[1], int(sys.argv[2])
failures = []


def fail(message):
    failures.append(message)


def truth_gpu(path):
    """gpu OP ROOT TASK WHAT COUNT lines, summed over blocks."""
    by_op = defaultdict(lambda: defaultdict(int))
    by_root = defaultdict(lambda: defaultdict(int))
    with open(path) as f:
        for line in f:
            words = line.split()
            if len(words) == 6 and words[0] == "gpu":
                _, op, root, _task, what, count = words
                by_op[op][what] += int(count)
                by_root[root][what] += int(count)
    return by_op, by_root


def total(table, what):
    return sum(row.get(what, 0) for row in table.values())


def load_json(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{what}: cannot read {path}: {e}")
        return None


def gpu_sections(doc):
    """The "gpu" object(s): at the top, or per process."""
    if not isinstance(doc, dict):
        return []
    found = [doc["gpu"]] if isinstance(doc.get("gpu"), dict) else []
    for proc in doc.get("processes") or []:
        if isinstance(proc, dict) and isinstance(proc.get("gpu"), dict):
            found.append(proc["gpu"])
    return found


def report_by_op(sections):
    rows = defaultdict(lambda: defaultdict(int))
    outside = unlaunched = 0
    for gpu in sections:
        outside += gpu.get("outside", 0) or 0
        unlaunched += gpu.get("unlaunched", 0) or 0
        for row in gpu.get("ops") or []:
            key = (row.get("op"), row.get("variant"))
            for what in ("kernels", "copies", "memsets"):
                rows[key][what] += row.get(what, 0) or 0
    return rows, outside, unlaunched


def us_to_ns(value):
    return int(round(float(value) * 1000))


# ---- the truth ----

by_op, by_root = truth_gpu(os.path.join(out, "truth.txt"))
if not by_op:
    fail("truth.txt has no gpu lines: the recorded demo ran no GPU task point")

# ---- report --json: per operation the user called, variant gpu ----

doc = load_json(os.path.join(out, "report.json"), "report --json")
sections = gpu_sections(doc) if doc is not None else []
report_rows = {}
if doc is not None and not sections:
    fail('report --json has no "gpu" object (no GPU records in the capture? '
         "is libcupti.so found? see OPTRACE_CUPTI_PATH in docs/cupti.md)")
elif sections:
    rows, outside, unlaunched = report_by_op(sections)
    report_rows = rows
    if outside:
        fail(f"report: {outside} GPU activities launched outside any operation")
    if unlaunched:
        fail(f"report: {unlaunched} GPU activities whose launch was not recorded")
    for (op, variant), row in rows.items():
        if variant != "gpu" and row["kernels"]:
            fail(f"report: {row['kernels']} kernels of {op} under variant {variant}")
    got = {op: row for (op, variant), row in rows.items() if variant == "gpu"}
    for root in sorted(set(by_root) | set(got)):
        for what in ("kernels", "copies", "memsets"):
            want = by_root.get(root, {}).get(what, 0)
            have = got.get(root, {}).get(what, 0)
            if want != have:
                fail(f"report: {root}: {have} {what} attributed, the truth says {want}")

# ---- the Chrome trace: attribution per launching op, and lifetimes ----

trace = load_json(os.path.join(out, "trace.json"), "export --chrome")
events = (trace or {}).get("traceEvents", []) if isinstance(trace, dict) else []
ops = defaultdict(list)     # (pid, tid) -> op slices
tasks = defaultdict(list)   # (pid, tid) -> task slices
flow_s, flow_f = {}, {}     # id -> (pid, tid, ns); (pid, tid, ns) -> id
activities = []
for e in events:
    ph, cat = e.get("ph"), e.get("cat")
    if ph == "X" and "ts" in e:
        begin = us_to_ns(e["ts"])
        span = (begin, begin + us_to_ns(e.get("dur", 0)), e.get("args") or {})
        key = (e.get("pid"), e.get("tid"))
        if cat == "op":
            ops[key].append(span)
        elif cat == "task":
            tasks[key].append(span)
        elif cat in ("kernel", "memcpy", "memset"):
            activities.append((cat, key, span))
    elif ph in ("s", "f") and cat == "launch" and "ts" in e:
        where = (e.get("pid"), e.get("tid"), us_to_ns(e["ts"]))
        if ph == "s":
            flow_s[e.get("id")] = where
        else:
            flow_f[where] = e.get("id")


def launch_of(pid, tid, begin):
    """Where the flow that ends at (tid, begin) started: (tid, ns), or None."""
    start = flow_s.get(flow_f.get((pid, tid, begin)))
    return (start[1], start[2]) if start else None


def enclosing(slices, ns, name_key=None, name=None):
    best = None
    for s in slices:
        if s[0] <= ns <= s[1] and (name is None or s[2].get(name_key) == name):
            if best is None or s[0] >= best[0]:
                best = s  # the innermost
    return best


chrome_kernels = defaultdict(int)
chrome_copies = defaultdict(int)
in_lifetime = defaultdict(lambda: True)
problems = defaultdict(list)
if trace is not None and not any(a[0] == "kernel" for a in activities):
    fail("export --chrome has no kernel events")
for cat, (pid, tid), (begin, end, args) in activities:
    op = args.get("launching_op") or args.get("op") or "(no op)"
    if cat == "memcpy":
        chrome_copies[op] += 1
    if cat != "kernel":
        continue
    chrome_kernels[op] += 1
    why = None
    launch = launch_of(pid, tid, begin)
    run = enclosing(tasks[(pid, launch[0])], launch[1]) if launch else None
    if not launch:
        why = "no launch flow"
    elif not run:
        why = "launched outside any task point"
    elif run[2].get("variant") != "gpu" or run[2].get("op") != op:
        why = f"launched in a {run[2].get('variant')} point of {run[2].get('op')}"
    elif begin + tol < run[0] or end > run[1] + tol:
        why = f"device time [{begin}, {end}] outside its task point [{run[0]}, {run[1]}]"
    else:
        task_launch = launch_of(pid, launch[0], run[0])
        owner = (enclosing(ops[(pid, task_launch[0])], task_launch[1], "name", op)
                 if task_launch else None)
        if not owner:
            why = "the op that launched its task is not in the trace"
        elif begin + tol < owner[0] or launch[1] < owner[0]:
            why = f"starts {owner[0] - begin} ns before its op began"
        elif launch[1] > max(owner[1], run[1]):
            why = "launched after its op's lifetime"
    if why:
        in_lifetime[op] = False
        problems[op].append(why)

names = sorted(set(by_op) | set(chrome_kernels))
print()
print(f"{'OPERATION (launching)':<28} {'KERNELS':>8} {'ATTRIBUTED':>10} {'COPIES':>7} "
      f"{'ATTRIB.':>7}  IN LIFETIME")
for op in names:
    want = by_op.get(op, {}).get("kernels", 0)
    have = chrome_kernels.get(op, 0)
    want_c = by_op.get(op, {}).get("copies", 0)
    have_c = chrome_copies.get(op, 0)
    ok = in_lifetime[op] and have > 0
    print(f"{op:<28} {want:>8} {have:>10} {want_c:>7} {have_c:>7}  {'yes' if ok else 'no'}")
    if want != have:
        fail(f"chrome: {op}: {have} kernels attributed, the truth says {want}")
    if want_c != have_c:
        fail(f"chrome: {op}: {have_c} copies attributed, the truth says {want_c}")
    if problems[op]:
        fail(f"chrome: {op}: {len(problems[op])} kernels not inside its lifetime, "
             f"e.g. {problems[op][0]}")

if report_rows:
    print()
    print(f"{'OPERATION (called)':<28} {'KERNELS':>8} {'REPORTED':>8} {'COPIES':>7} "
          f"{'REPORTED':>8}")
    for root in sorted(by_root):
        row = report_rows.get((root, "gpu"), {})
        print(f"{root:<28} {by_root[root].get('kernels', 0):>8} {row.get('kernels', 0):>8} "
              f"{by_root[root].get('copies', 0):>7} {row.get('copies', 0):>8}")

# ---- the Legion Prof export ----

logs = glob.glob(os.path.join(out, "legion", "prof_*.gz"))
if not logs or not all(os.path.getsize(p) > 0 for p in logs):
    fail("export --legion wrote no prof_*.gz")

# ---- file mode: every activity in the file, none attributed to ops ----

file_op, _ = truth_gpu(os.path.join(out, "truth-file.txt"))
doc = load_json(os.path.join(out, "gpu-report.json"), "report --json gpu.bin")
sections = gpu_sections(doc) if doc is not None else []
if doc is not None and not sections:
    fail('report --json gpu.bin has no "gpu" object')
elif sections:
    rows, _, _ = report_by_op(sections)
    for what in ("kernels", "copies"):
        want = total(file_op, what)
        have = sum(row[what] for row in rows.values())
        print(f"file mode: {have} {what} in gpu.bin, the truth says {want}")
        if want != have:
            fail(f"file mode: {have} {what} in gpu.bin, the truth says {want}")

# ---- stat --cuda: per operation the user called, as the truth; streamed = read ahead ----

doc = load_json(os.path.join(out, "stat.json"), "stat --json --cuda")
sections = gpu_sections(doc) if doc is not None else []
_, stat_root = truth_gpu(os.path.join(out, "truth-stat.txt"))
if doc is not None and not sections:
    fail('stat --json --cuda has no "gpu" object in its processes')
elif sections:
    rows, outside, unlaunched = report_by_op(sections)
    got = {op: row for (op, variant), row in rows.items() if variant == "gpu"}
    print(f"stat --cuda: {sum(r['kernels'] for r in got.values())} kernels in GPU task points, "
          f"{outside} outside any operation, {unlaunched} without a recorded launch")
    for root in sorted(set(stat_root) | set(got)):
        for what in ("kernels", "copies", "memsets"):
            want = stat_root.get(root, {}).get(what, 0)
            have = got.get(root, {}).get(what, 0)
            if want != have:
                fail(f"stat --cuda: {root}: {have} {what} attributed, the truth says {want}")
streamed = load_json(os.path.join(out, "report.json"), "report --json")
ahead = load_json(os.path.join(out, "report-ahead.json"), "report --json, read ahead")
if isinstance(streamed, dict) and isinstance(ahead, dict):
    counters = (streamed.get("capture") or {}).get("counters") or {}
    if not counters.get("records.gpu_launches"):
        fail("the capture has no gpu_launch records: CUPTI's API callbacks marked no launch")
    if streamed.get("gpu") != ahead.get("gpu"):
        fail("report: the capture streamed and read ahead attribute its GPU activity otherwise")
    else:
        print("report: streamed as read ahead")

# ---- the live load: kernels recorded after the load, attributed to ops ----


def check_live(name, what):
    doc = load_json(os.path.join(out, name), what)
    sections = gpu_sections(doc) if doc is not None else []
    if doc is not None and not sections:
        fail(f"{what}: no GPU activity after the live load")
        return
    if not sections:
        return
    rows, outside, unlaunched = report_by_op(sections)
    kernels = sum(gpu.get("kernels", 0) or 0 for gpu in sections)
    # Task points begun before the tracer came, and launches just before
    # CUPTI was armed, are outside or unlaunched: a few at the start only.
    loose = outside + unlaunched
    print(f"{what}: {kernels} kernels, {outside} outside any operation, "
          f"{unlaunched} without a recorded launch")
    if kernels == 0:
        fail(f"{what}: no kernel recorded after the live load")
    elif loose > max(4, kernels // 20):
        fail(f"{what}: {loose} of {kernels} kernels not attributed to an operation")
    for (op, variant), row in rows.items():
        # "(launched outside any operation)" and the like: counted above.
        if variant != "gpu" and row["kernels"] and not str(op).startswith("("):
            fail(f"{what}: {row['kernels']} kernels of {op} under variant {variant}")


if os.path.exists(os.path.join(out, "live-report.json")):
    print()
    check_live("live-report.json", "live load (record --cuda -p)")
    check_live("live-again.json", "live load, second record (collector there)")
try:
    with open(os.path.join(out, "live-failures.txt")) as f:
        for line in f:
            if line.strip():
                fail(f"live load: {line.strip()}")
except OSError:
    fail("live load: it did not run (no live-failures.txt)")

print()
for message in failures:
    print(f"FAIL: {message}")
print("PASS" if not failures else f"{len(failures)} check(s) failed")
sys.exit(1 if failures else 0)
EOF
rc=${PIPESTATUS[0]}
say "output in $OUT (log: $LOG)"
exit "$rc"
