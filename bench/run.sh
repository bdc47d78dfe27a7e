#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Runs every benchmark once, printing each one's own baseline and ratios.
# Usage: bench/run.sh OUTPUT_DIR   (make run-bench passes .output)
set -euo pipefail
out=${1:-.output}

echo "== untraced probe calls (caller built normally: call through the PLT)"
"$out/bench/probe_untraced"
echo
echo "== untraced probe calls (caller built with -fno-plt)"
"$out/bench/probe_untraced-noplt"

echo
echo "== untraced Python module (Debian's python3): with optrace.op, @optrace.trace"
PYTHONPATH="$out/python" /usr/bin/python3 bench/python_untraced.py

echo
echo "== per traced event (needs root): the fast path, the per-event path, bpftrace, LTTng-UST"
if [ "$(id -u)" -eq 0 ]; then
	bench/probe_overhead.sh "$out"
else
	echo "skipped: needs root"
fi

echo
echo "== the fast path on one name and on a runtime's mix (needs root)"
if [ "$(id -u)" -eq 0 ]; then
	bench/fastpath_mix.sh "$out"
else
	echo "skipped: needs root"
fi

echo
echo "== start-up of stat, top, record and serve against bpftrace (needs root)"
if [ "$(id -u)" -eq 0 ]; then
	bench/startup.sh "$out"
else
	echo "skipped: needs root"
fi

echo
echo "== report and export speed on a synthetic capture of 10 M events"
bench/export_speed.sh "$out"

echo
echo "== cuPyNumeric's calls through optrace.cupynumeric (needs ../shared/cupynumeric)"
bench/cupynumeric_overhead.sh "$out" || echo "skipped: no ../shared/cupynumeric"
