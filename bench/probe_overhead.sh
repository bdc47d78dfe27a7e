#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# ns per probe hit of a loop of operations (op_begin + op_end), each
# configuration in the same run, rounds interleaved, median of the rounds:
#   none     no tracer
#   floor    empty BPF programs attached as optrace attaches (the uprobe floor)
#   stat     optrace stat -p PID (aggregate mode)
#   record   optrace record -p PID (stream mode, into a capture file)
#   bpftrace bpftrace -p PID counting both probes with @[...] = count()
# Budgets (DESIGN.md): stat <= floor + 80 ns and <= 0.85 x bpftrace;
# record <= 1.6 x floor, with no event lost.
#
# Usage: bench/probe_overhead.sh [OUTPUT_DIR] [ITERATIONS] [ROUNDS]   (as root)
set -euo pipefail
out=${1:-.output}
iterations=${2:-1000000}
rounds=${3:-3}
lib=$(readlink -f "$out/lib/liboptrace.so.1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Starts the loop paused, attaches tracer "$@" (unless none), runs the loop.
measure() {
	local config=$1 loop tracer=
	"$out/bench/probe_loop" --wait -n "$iterations" >"$work/ns" &
	loop=$!
	sleep 0.2
	case $config in
	none) ;;
	floor) "$out/bench/floor" "$loop" 2>"$work/err" & tracer=$! ;;
	stat) "$out/bin/optrace" stat -p "$loop" >/dev/null 2>"$work/err" & tracer=$! ;;
	record) "$out/bin/optrace" record -p "$loop" -o "$work/capture" 2>"$work/err" & tracer=$! ;;
	bpftrace)
		bpftrace -p "$loop" -e "BEGIN { printf(\"Tracing...\\n\"); }
			usdt:$lib:optrace:op_begin { @b[arg3] = count(); }
			usdt:$lib:optrace:op_end { @e[arg1] = count(); }" >"$work/err" 2>&1 &
		tracer=$!
		;;
	esac
	if [ -n "$tracer" ]; then
		for _ in $(seq 300); do
			grep -qE 'Tracing|Recording' "$work/err" 2>/dev/null && break
			sleep 0.1
		done
		grep -qE 'Tracing|Recording' "$work/err" || { echo "$config did not attach:" >&2; cat "$work/err" >&2; exit 1; }
	fi
	kill -USR1 "$loop"
	wait "$loop"
	if [ -n "$tracer" ]; then
		kill -INT "$tracer" 2>/dev/null || true
		wait "$tracer" || true
	fi
	if [ "$config" = record ]; then
		grep -o '[0-9]* lost in the kernel' "$work/err" | tail -n 1 >>"$work/record.lost"
	fi
	cat "$work/ns"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

configs=(none floor stat record bpftrace)
for round in $(seq "$rounds"); do
	for config in "${configs[@]}"; do
		echo "$(measure "$config")" >>"$work/$config.all"
	done
done
for config in "${configs[@]}"; do
	eval "$config=\$(median <\"\$work/$config.all\")"
done

printf '%-9s %10s %12s %10s %12s\n' config ns/hit "over floor" "x floor" "x bpftrace"
for config in "${configs[@]}"; do
	value=${!config}
	printf '%-9s %10.1f %12.1f %10.3f %12.3f\n' "$config" "$value" \
		"$(echo "$value - $floor" | bc -l)" "$(echo "$value / $floor" | bc -l)" \
		"$(echo "$value / $bpftrace" | bc -l)"
done
echo "($iterations operations = $((2 * iterations)) probe hits per run, median of $rounds rounds)"
verdict() { bc -l | sed 's/1/ok/;s/0/OVER/'; }
echo "over-floor cost, stat / bpftrace: $(echo "($stat - $floor) / ($bpftrace - $floor)" | bc -l | cut -c1-5)"
echo "record: events lost in the kernel per round: $(tr '\n' ' ' <"$work/record.lost")"
echo "budget: stat <= floor + 80 ns: $(echo "$stat - $floor <= 80" | verdict);" \
	"stat <= 0.85 x bpftrace: $(echo "$stat <= 0.85 * $bpftrace" | verdict);" \
	"record <= 1.6 x floor: $(echo "$record <= 1.6 * $floor" | verdict)"
