#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Capture format 2 against format 1, in the same run (issue 40): bytes per
# event of `optrace record` on the benchmark loop (probe_loop --mode: an
# operation's begin, mode and end, through the public API) and on the demo
# (all workloads); the recorder's CPU per event kept (user + system, all its
# threads); and how fast `optrace report` and `export --chrome` read each
# capture back (events per second of wall time).
#
# Each number is the median of ROUNDS rounds; in each round both formats run
# in turn, so that the machine's drift touches them alike. Every event must
# be kept (the recorder says "0 lost"): a round that lost some is said.
#
# Usage: bench/capture_size.sh [OUTPUT_DIR [OPERATIONS [ROUNDS]]]   (as root)
#   (default: .output 300000 3)
set -euo pipefail
out=${1:-.output}
operations=${2:-300000}
rounds=${3:-3}
optrace=$out/bin/optrace
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# record_one WORKLOAD FORMAT: appends "bytes events cpu_s lost report_s chrome_s" to its file.
record_one() {
	local workload=$1 format=$2 capture=$work/$1.$2.capture cmd
	case $workload in
	loop) cmd=("$out/bench/probe_loop" -n "$operations" --mode) ;;
	demo) cmd=("$out/bin/optrace-demo" --truth /dev/null -q) ;;
	esac
	/usr/bin/time -f '%U %S' -o "$work/time" "$optrace" record --capture-format="$format" \
		-o "$capture" -- "${cmd[@]}" >/dev/null 2>"$work/err"
	read -r user system <"$work/time"
	# "900002 events (6.3 MiB written), 0 lost in the kernel in 0.62 s"
	read -r events lost < <(awk '/ events \(/ { for (i = 1; i <= NF; i++) if ($i == "lost") print $1, $(i - 1) }' \
		"$work/err")
	/usr/bin/time -f '%e' -o "$work/report_time" "$optrace" report "$capture" >/dev/null
	/usr/bin/time -f '%e' -o "$work/chrome_time" "$optrace" export --chrome \
		-o "$work/trace.json" "$capture" >/dev/null 2>&1
	echo "$(stat -c %s "$capture") $events $(echo "$user + $system" | bc -l) $lost" \
		"$(cat "$work/report_time") $(cat "$work/chrome_time")" >>"$work/runs.$workload.$format"
	rm -f "$capture" "$work/trace.json"
}

for round in $(seq "$rounds"); do
	for workload in loop demo; do
		for format in 1 2; do
			record_one "$workload" "$format"
		done
	done
done


column_median() { awk -v c="$2" '{ print $c }' "$1" | median; }

printf '%-5s %-7s %10s %9s %11s %11s %13s %13s %6s\n' workload format "MiB" "B/event" \
	"× format 1" "rec ns/ev" "report Mev/s" "chrome Mev/s" lost
for workload in loop demo; do
	base=
	for format in 1 2; do
		runs=$work/runs.$workload.$format
		bytes=$(column_median "$runs" 1)
		events=$(column_median "$runs" 2)
		cpu=$(column_median "$runs" 3)
		lost=$(awk '{ n += $4 } END { print n }' "$runs")
		report=$(column_median "$runs" 5)
		chrome=$(column_median "$runs" 6)
		per_event=$(echo "$bytes / $events" | bc -l)
		[ -n "$base" ] || base=$per_event
		printf '%-8s %-7s %10.1f %9.2f %11.3f %11.0f %13.2f %13.2f %6s\n' "$workload" \
			"$format" "$(echo "$bytes / 1048576" | bc -l)" "$per_event" \
			"$(echo "$per_event / $base" | bc -l)" "$(echo "$cpu * 1000000000 / $events" | bc -l)" \
			"$(echo "$events / $report / 1000000" | bc -l)" \
			"$(echo "$events / $chrome / 1000000" | bc -l)" "$lost"
	done
done
