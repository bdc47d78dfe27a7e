#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# How long `optrace record -p PID -d N` takes beyond its N seconds, on a
# quiet machine and on a busy one (four spinning shells on every core), and
# where that time goes: the BPF programs' load and verification before
# tracing starts, the detach after it. Budget (issue 25): the end within 1 s
# of the N seconds traced, busy too.
#
# Each line: the median of three runs' wall seconds, and of the phases read
# from strace's timestamps (before: from the start to the last uprobe
# attached, the BPF programs' load and verification; after: what follows the
# N seconds from there, the final drain, detach and the capture's end).
# strace itself slows the system calls a little: the phases are upper bounds.
#
# Usage: bench/record_duration.sh [OUTPUT_DIR]   (as root)
set -euo pipefail
out=${1:-.output}
optrace=$out/bin/optrace
demo=$out/bin/optrace-demo
work=$(mktemp -d)
spinners=()
cleanup() {
	[ ${#spinners[@]} -eq 0 ] || kill "${spinners[@]}" 2>/dev/null || true
	[ -z "${demo_pid:-}" ] || kill "$demo_pid" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
command -v strace >/dev/null || { echo "needs strace (apt-get install strace)" >&2; exit 1; }

OMP_WAIT_POLICY=passive "$demo" --forever -w stats -q --truth /dev/null &
demo_pid=$!
sleep 0.5

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# wall, load and detach seconds of one run
one_run() {
	local seconds=$1 trace=$work/strace.txt start end
	start=$(date +%s.%N)
	strace -f -ttt -o "$trace" -e trace=bpf,ioctl \
		"$optrace" record -q -o "$work/x.capture" -p "$demo_pid" -d "$seconds"
	end=$(date +%s.%N)
	awk -v start="$start" -v end="$end" -v seconds="$seconds" '
		/BPF_LINK_CREATE|PERF_EVENT_IOC_ENABLE/ { attached = $2 } # the last: all attached
		END { printf "%.3f %.3f %.3f\n", end - start, attached - start,
		      end - attached - seconds }' "$trace"
}

measure() {
	local label=$1 seconds=$2 runs=() wall load detach
	for _ in 1 2 3; do runs+=("$(one_run "$seconds")"); done
	wall=$(printf '%s\n' "${runs[@]}" | cut -d' ' -f1 | median)
	load=$(printf '%s\n' "${runs[@]}" | cut -d' ' -f2 | median)
	detach=$(printf '%s\n' "${runs[@]}" | cut -d' ' -f3 | median)
	printf '| %s | -d %s | %s | %.2f | %s | %s |\n' "$label" "$seconds" "$wall" \
		"$(echo "$wall - $seconds" | bc -l)" "$load" "$detach"
}

echo "| machine | duration | wall s | over N s | before: load, verify s | after: drain, detach s |"
echo "|---|---|---|---|---|---|"
measure quiet 1
measure quiet 5
for _ in 1 2 3 4; do sh -c 'while :; do :; done' & spinners+=($!); done
sleep 1
measure busy 1
measure busy 5
