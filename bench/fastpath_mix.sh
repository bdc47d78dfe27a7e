#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The fast path on one name and on a runtime's mix, side by side: the
# traced thread's CPU time per event of bench/probe_loop
#   one   one operation name and call site, op_begin + op_end (the best case:
#         stat's kept row and record's string list serve it from cache)
#   mix   16 names and call sites in turn, each operation announcing its
#         mode: op_begin + op_mode + op_end (--names 16 --mode)
# untraced, under optrace stat -p, optrace record -p, and bpftrace counting
# the same probes one hit at a time (the ratio that holds from one VM to the
# next: a uprobe's trap costs 2 ns on one, 27 on another); rounds
# interleaved, median of the rounds. Each traced run of optrace is checked to
# have counted (stat) or recorded (record) every operation.
# Budget (DESIGN.md, issue 39): on the mix, stat at most 30 ns and record at
# most 20 ns an event.
#
# Usage: bench/fastpath_mix.sh [OUTPUT_DIR] [ITERATIONS] [ROUNDS]   (as root)
set -euo pipefail
. "$(dirname "$0")/attached.sh"
out=${1:-.output}
iterations=${2:-1000000}
rounds=${3:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
lib=$(readlink -f "$out/lib/liboptrace.so.1")

# measure LOOP TRACER: one run; appends ns per event and what was counted.
measure() {
	local loop_kind=$1 config=$2 loop tracer='' flags=''
	[ "$loop_kind" = mix ] && flags="--names 16 --mode"
	# shellcheck disable=SC2086 # flags are words
	"$out/bench/probe_loop" --wait -n "$iterations" $flags >"$work/ns" &
	loop=$!
	wait_start_handler "$loop"
	case $config in
	stat) "$out/bin/optrace" stat -p "$loop" >"$work/out" 2>"$work/err" & tracer=$! ;;
	record) "$out/bin/optrace" record -p "$loop" -o "$work/capture" 2>"$work/err" & tracer=$! ;;
	bpftrace)
		bpftrace -p "$loop" -e "BEGIN { printf(\"Tracing...\\n\"); }
			usdt:$lib:optrace:op_begin { @b = count(); }
			usdt:$lib:optrace:op_mode { @m = count(); }
			usdt:$lib:optrace:op_end { @e = count(); }" >"$work/err" 2>&1 &
		tracer=$!
		;;
	esac
	run_loop_traced "$loop" "$tracer" "$work/err" "$config"
	case $config in
	stat) # the CALLS column of every bench.* row
		awk '$1 ~ /^bench\./ { n += $2 } END { print n + 0 }' "$work/out" >>"$work/$loop_kind-$config.counted" ;;
	record)
		"$out/bin/optrace" report --json "$work/capture" 2>/dev/null | python3 -c '
import json, sys
report = json.load(sys.stdin)
print(sum(op["count"] for process in report["processes"] for op in process["operations"]))' \
			>>"$work/$loop_kind-$config.counted" ;;
	esac
	cat "$work/ns" >>"$work/$loop_kind-$config.ns"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

for _ in $(seq "$rounds"); do
	for loop_kind in one mix; do
		for config in none stat record bpftrace; do
			measure "$loop_kind" "$config"
		done
	done
done

echo "thread CPU ns per event, median of $rounds interleaved rounds of $iterations operations"
printf '%-5s %8s %6s %6s %8s %6s %6s %14s %14s\n' loop untraced stat record bpftrace \
	"stat/b" "rec/b" "stat counted" "record counted"
ratio() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { printf "%.3f", (a - n) / (b - n) }'; }
for loop_kind in one mix; do
	none=$(median <"$work/$loop_kind-none.ns")
	stat=$(median <"$work/$loop_kind-stat.ns")
	record=$(median <"$work/$loop_kind-record.ns")
	bpftrace=$(median <"$work/$loop_kind-bpftrace.ns")
	printf '%-5s %8s %6s %6s %8s %6s %6s %14s %14s\n' "$loop_kind" "$none" "$stat" "$record" \
		"$bpftrace" "$(ratio "$stat" "$bpftrace" "$none")" \
		"$(ratio "$record" "$bpftrace" "$none")" \
		"$(sort -n "$work/$loop_kind-stat.counted" | head -n 1)/$iterations" \
		"$(sort -n "$work/$loop_kind-record.counted" | head -n 1)/$iterations"
done
mix_stat=$(median <"$work/mix-stat.ns")
mix_record=$(median <"$work/mix-record.ns")
verdict() { awk -v v="$1" -v b="$2" 'BEGIN { print (v <= b) ? "met" : "missed" }'; }
echo "budget on the mix: stat <= 30 ns: $(verdict "$mix_stat" 30) ($mix_stat);" \
	"record <= 20 ns: $(verdict "$mix_record" 20) ($mix_record)"
