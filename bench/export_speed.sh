#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Events per second and peak memory of optrace report and export on
# synthetic captures of 1 M and 10 M events (bench/gen_capture.c): memory
# must not grow with the capture's length. Budget: at least 5 M events/s.
# Each number is the median of three runs.
#
# Usage: bench/export_speed.sh [OUTPUT_DIR]
set -euo pipefail
out=${1:-.output}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

printf '%-8s %-16s %10s %14s %12s\n' events command seconds "M events/s" "peak MiB"
# The third: 10 M events of which 2.7 M GPU records (a kernel per task point).
for run_size in 1000000 10000000 "10000000 --gpu"; do
	read -r events gpu <<<"$run_size"
	"$out/bench/gen_capture" "$work/capture" $run_size
	for command in report "export --chrome" "export --legion"; do
		case $command in
		report) args=(report "$work/capture") ;;
		"export --chrome") args=(export --chrome -o "$work/trace.json" "$work/capture") ;;
		"export --legion") args=(export --legion -o "$work/legion" "$work/capture") ;;
		esac
		# The median of three runs: this machine's timings wander by a third.
		for run in 1 2 3; do
			/usr/bin/time -f '%e %M' -o "$work/time" "$out/bin/optrace" "${args[@]}" \
				>/dev/null 2>"$work/err"
			cat "$work/time"
			rm -rf "$work/trace.json" "$work/legion"
		done | sort -n | sed -n 2p >"$work/median"
		read -r seconds kib <"$work/median"
		printf '%-8s %-16s %10.2f %14.2f %12.1f\n' "$events${gpu:+ gpu}" "$command" "$seconds" \
			"$(echo "$events / $seconds / 1000000" | bc -l)" "$(echo "$kib / 1024" | bc -l)"
		rm -rf "$work/trace.json" "$work/legion"
	done
done
