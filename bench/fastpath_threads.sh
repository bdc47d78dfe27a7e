#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# How the fast path scales with threads: bench/probe_loop -t N on 1, 2, 8
# and 32 threads, untraced and under optrace stat and optrace record, each
# thread with its own buffer. A thread's CPU time per event (not wall time:
# this VM has 2 cores), its overhead over the untraced run of the same
# count, median of the rounds; each traced run checked to have counted or
# recorded every operation.
#
# Usage: bench/fastpath_threads.sh [OUTPUT_DIR] [ITERATIONS_PER_THREAD] [ROUNDS]   (as root)
set -euo pipefail
. "$(dirname "$0")/attached.sh"
out=${1:-.output}
iterations=${2:-100000}
rounds=${3:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# CPU ns per event of a thread, and the operations the tracer saw.
run() {
	local tool=$1 threads=$2 loop tracer= counted=-
	"$out/bench/probe_loop" --wait -t "$threads" -n "$iterations" >"$work/ns" &
	loop=$!
	wait_start_handler "$loop"
	case $tool in
	stat) "$out/bin/optrace" stat -p "$loop" >"$work/out" 2>"$work/err" & tracer=$! ;;
	record) "$out/bin/optrace" record -p "$loop" -o "$work/capture" 2>"$work/err" & tracer=$! ;;
	esac
	if [ -n "$tracer" ]; then
		wait_attached "$work/err" "$tool" "$loop"
	fi
	kill -USR1 "$loop"
	wait "$loop"
	if [ -n "$tracer" ]; then
		kill -INT "$tracer" 2>/dev/null || true
		wait "$tracer" || true
	fi
	case $tool in
	stat) counted=$(awk '$1 == "bench.op" { n += $2 } END { print n + 0 }' "$work/out") ;;
	record) counted=$("$out/bin/optrace" report --json "$work/capture" 2>/dev/null |
		grep -o '"count": *[0-9]*' | head -n 1 | grep -o '[0-9]*$' || echo 0)
		# what the kernel dropped, said by record itself (a ring buffer full)
		grep -o '[0-9]* lost in the kernel' "$work/err" | head -n 1 |
			awk '{ print $1 }' >>"$work/record.lost" || true ;;
	esac
	echo "$(cat "$work/ns") $counted"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

printf '%-8s %8s %12s %12s %12s\n' threads untraced "stat over" "record over" complete
for threads in 1 2 8 32; do
	ok=yes
	for tool in none stat record; do
		: >"$work/$tool.all"
	done
	: >"$work/record.lost"
	for _ in $(seq "$rounds"); do
		for tool in none stat record; do
			read -r ns counted < <(run "$tool" "$threads")
			echo "$ns" >>"$work/$tool.all"
			[ "$counted" = - ] || [ "$counted" = $((threads * iterations)) ] || ok="no ($tool: $counted)"
		done
	done
	none=$(median <"$work/none.all")
	stat=$(median <"$work/stat.all")
	record=$(median <"$work/record.all")
	printf '%-8s %8.1f %12.1f %12.1f %12s  record lost: %s\n' "$threads" "$none" \
		"$(echo "$stat - $none" | bc -l)" "$(echo "$record - $none" | bc -l)" "$ok" \
		"$(tr '\n' ' ' <"$work/record.lost")"
done
echo "($iterations operations per thread = $((2 * iterations)) events; ns: a thread's CPU time per event, median of $rounds rounds)"
