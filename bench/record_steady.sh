#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The recorder's CPU per event kept in a steady state, capture format 1
# against format 2 in the same run (issue 40): `optrace record -p` of a
# loop paced at RATE operations a second (three events each: begin, mode,
# end) for SECONDS. The recorder's CPU (user + system, all its threads, from
# /proc/PID/stat) is taken from the moment it says it records to the moment
# the loop ends: the BPF programs' load and the capture's end are left out.
#
# Each line: the median of ROUNDS rounds (both formats run in turn in each),
# and the fewest and most events a capture kept: the recorder keeps up when
# every one is kept (the "lost in the kernel" it prints counts batches the
# ring buffer refused, which the fast path may still hand over later).
#
# Usage: bench/record_steady.sh [OUTPUT_DIR [RATE [SECONDS [ROUNDS]]]]   (as root)
#   (default: .output 1000000 8 3)
set -euo pipefail
out=${1:-.output}
rate=${2:-1000000}
seconds=${3:-8}
rounds=${4:-3}
work=$(mktemp -d)
loop=
trap '[ -z "$loop" ] || kill "$loop" 2>/dev/null; rm -rf "$work"' EXIT
ticks=$(getconf CLK_TCK)

# user + system clock ticks of process $1
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

one_run() {
	local format=$1 recorder before after events lost
	"$out/bench/probe_loop" --mode --wait -r "$rate" -n $((rate * seconds)) >/dev/null &
	loop=$!
	# -p needs liboptrace mapped: the loader maps it a moment after the start.
	until grep -q liboptrace "/proc/$loop/maps" 2>/dev/null; do sleep 0.01; done
	"$out/bin/optrace" record --capture-format="$format" -o "$work/capture" -p "$loop" \
		2>"$work/err" &
	recorder=$!
	until grep -q "^Recording to" "$work/err"; do
		kill -0 "$recorder" 2>/dev/null || { cat "$work/err" >&2; exit 1; }
		sleep 0.05
	done
	before=$(cpu_ticks "$recorder")
	kill -USR1 "$loop"
	wait "$loop"
	after=$(cpu_ticks "$recorder")
	wait "$recorder"
	read -r events lost < <(awk '/ events \(/ { for (i = 1; i <= NF; i++)
		if ($i == "lost") print $1, $(i - 1) }' "$work/err")
	echo "$(((after - before) * 1000000000 / ticks / events)) $events $lost $(stat -c %s "$work/capture")" \
		>>"$work/runs.$format"
	rm -f "$work/capture"
}

for round in $(seq "$rounds"); do
	for format in 1 2; do
		one_run "$format"
	done
done
# Kept: what the capture holds of the loop's 3 events an operation and its rt_init and name.
printf '%-7s %14s %12s %12s %18s %12s\n' format "CPU ns/event" "kept min" "kept max" \
	"of" "bytes/event"
for format in 1 2; do
	runs=$work/runs.$format
	printf '%-7s %14s %12s %12s %18s %12.2f\n' "$format" \
		"$(awk '{ print $1 }' "$runs" | median)" "$(awk '{ print $2 }' "$runs" | sort -g | head -1)" \
		"$(awk '{ print $2 }' "$runs" | sort -g | tail -1)" "$((rate * seconds * 3 + 2))" \
		"$(awk '{ print $4 / $2 }' "$runs" | median)"
done
