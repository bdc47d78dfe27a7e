#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Where a fast-path event's nanoseconds go, for stat and record, each with
# the default clock ("tsc": the TSC through the kernel's vDSO parameters,
# where they serve) and with OPTRACE_CLOCK=vdso, in one run: the loop's ns per
# event traced and untraced, and the batch program's own run time per event
# (bpf_prog_info.run_time_ns / events, with kernel.bpf_stats_enabled=1
# for the run), and the library's share: the loop with the batch probe armed
# from inside (probe_loop --arm: the clock, the store, the commit, and a nop
# where the probe is). What is left is the uprobe trap, once per 256 events,
# and what the trap and the program cost the loop afterwards (caches).
#
# Usage: bench/fastpath_breakdown.sh [OUTPUT_DIR] [ITERATIONS]   (as root)
set -euo pipefail
. "$(dirname "$0")/attached.sh"
out=${1:-.output}
iterations=${2:-300000}
events=$((2 * iterations))
work=$(mktemp -d)
stats_before=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -qw kernel.bpf_stats_enabled="$stats_before"; rm -rf "$work"' EXIT
sysctl -qw kernel.bpf_stats_enabled=1

# The loop thread's CPU ns per event, and the batch program's ns per event, for one configuration.
run() {
	local tool=$1 clock=$2 loop tracer
	local arm=
	[ "$tool" = armed ] && arm=--arm
	OPTRACE_CLOCK=$clock "$out/bench/probe_loop" --wait $arm -n "$iterations" >"$work/ns" &
	loop=$!
	wait_start_handler "$loop"
	if [ "$tool" = none ] || [ "$tool" = armed ]; then
		kill -USR1 "$loop"
		wait "$loop"
		echo "$(cat "$work/ns") -"
		return
	fi
	if [ "$tool" = stat ]; then
		"$out/bin/optrace" stat -p "$loop" >"$work/out" 2>"$work/err" &
	else
		"$out/bin/optrace" record -p "$loop" -o "$work/capture" 2>"$work/err" &
	fi
	tracer=$!
	wait_attached "$work/err" "$tool" "$loop"
	kill -USR1 "$loop"
	wait "$loop"
	bpftool prog show -j | python3 -c '
import json, sys
runs = [p for p in json.load(sys.stdin) if p.get("name") == "batch" and p.get("run_cnt")]
print("%.1f" % (sum(p["run_time_ns"] for p in runs) / int(sys.argv[1])))' "$events" >"$work/bpf"
	kill -INT "$tracer" 2>/dev/null || true
	wait "$tracer" || true
	echo "$(cat "$work/ns") $(cat "$work/bpf")"
}

printf '%-8s %-5s %10s %10s %8s %8s %10s\n' tracer clock ns/event overhead "in BPF" library "trap, rest"
read -r base _ < <(run none vdso)
declare -A library
for clock in tsc vdso; do
	read -r ns _ < <(run armed "$clock")
	library[$clock]=$(echo "$ns - $base" | bc -l)
done
for config in "stat tsc" "stat vdso" "record tsc" "record vdso"; do
	read -r tool clock <<<"$config"
	read -r ns bpf < <(run "$tool" "$clock")
	overhead=$(echo "$ns - $base" | bc -l)
	printf '%-8s %-5s %10.1f %10.1f %8.1f %8.1f %10.1f\n' "$tool" "$clock" "$ns" "$overhead" \
		"$bpf" "${library[$clock]}" "$(echo "$overhead - $bpf - ${library[$clock]}" | bc -l)"
done
echo "($iterations operations = $events events per run; untraced loop: $base ns/event;"
echo " library: the loop with the batch probe armed and no tracer, over the untraced loop)"
