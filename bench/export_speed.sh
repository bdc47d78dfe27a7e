#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Events per second, peak memory and output size of optrace report and
# export on synthetic captures (bench/gen_capture.c) of 1 M and 10 M events,
# and of 10 M events of which 2.7 M GPU records (a kernel per task point):
# memory must not grow with the capture's length. Budget: at least 5 M
# events/s; Perfetto's file at most 0.4 times the Chrome JSON's.
#
# Each number is the median of three rounds; in each round every command
# runs once, in turn, so that the machine's drift touches them alike. "CPU
# s" is user + system time, all threads: on a busy machine it says more
# than the wall clock. The last two columns compare with export --chrome in
# the same run: its (wall) time and its output's size.
#
# Usage: bench/export_speed.sh [OUTPUT_DIR [EVENTS...]]
#   EVENTS: a number of events, with ":gpu" for the GPU shape (attributed as
#   it streams: the capture has gpu_launch records), or ":gpu-ahead" for the
#   same capture with its GPU records read ahead, as for captures without
#   them (OPTRACE_GPU_READ_AHEAD=1)
#   (default: 1000000 10000000 10000000:gpu)
set -euo pipefail
out=${1:-.output}
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000000 10000000 10000000:gpu)
commands=(report "export --chrome" "export --perfetto" "export --legion")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Runs command number $1 once; appends "seconds KiB output-bytes CPU-seconds" to its file.
run_one() {
	local args
	case ${commands[$1]} in
	report) args=(report "$work/capture") ;;
	"export --chrome") args=(export --chrome -o "$work/trace.json" "$work/capture") ;;
	"export --perfetto") args=(export --perfetto -o "$work/trace.pftrace" "$work/capture") ;;
	"export --legion") args=(export --legion -o "$work/legion" "$work/capture") ;;
	esac
	OPTRACE_GPU_READ_AHEAD=$read_ahead /usr/bin/time -f '%e %M %U %S' -o "$work/time" \
		"$out/bin/optrace" "${args[@]}" >/dev/null 2>"$work/err"
	read -r seconds kib user system <"$work/time"
	bytes=$({ du -sb "$work/trace.json" "$work/trace.pftrace" "$work/legion" 2>/dev/null ||
		true; } | awk '{ n += $1 } END { print n + 0 }')
	echo "$seconds $kib $bytes $(echo "$user + $system" | bc -l)" >>"$work/runs.$1"
	rm -rf "$work/trace.json" "$work/trace.pftrace" "$work/legion"
}

printf '%-12s %-17s %8s %6s %11s %9s %10s %9s %9s\n' events command seconds "CPU s" \
	"M events/s" "peak MiB" "out MiB" "× chrome" "× size"
for size in "${sizes[@]}"; do
	events=${size%%:*}
	gpu= read_ahead=
	case $size in
	*:gpu) gpu=--gpu ;;
	*:gpu-ahead) gpu=--gpu read_ahead=1 ;;
	esac
	"$out/bench/gen_capture" "$work/capture" "$events" $gpu
	rm -f "$work"/runs.*
	for round in 1 2 3; do
		for i in "${!commands[@]}"; do
			run_one "$i"
		done
	done
	# The median round of each command (by time), and Chrome's for the ratios.
	for i in "${!commands[@]}"; do
		sort -n "$work/runs.$i" | sed -n 2p >"$work/median.$i"
	done
	read -r chrome_seconds _ chrome_bytes _ <"$work/median.1"
	for i in "${!commands[@]}"; do
		read -r seconds kib bytes cpu <"$work/median.$i"
		time_ratio=- size_ratio=-
		if [ "$i" -ge 2 ]; then
			time_ratio=$(printf '%.2f' "$(echo "$seconds / $chrome_seconds" | bc -l)")
			size_ratio=$(printf '%.3f' "$(echo "$bytes / $chrome_bytes" | bc -l)")
		fi
		printf '%-12s %-17s %8.2f %6.2f %11.2f %9.1f %10.1f %9s %9s\n' \
			"$events${gpu:+ gpu}${read_ahead:+-ahead}" \
			"${commands[$i]}" "$seconds" "$cpu" \
			"$(echo "$events / $seconds / 1000000" | bc -l)" \
			"$(echo "$kib / 1024" | bc -l)" "$(echo "$bytes / 1048576" | bc -l)" \
			"$time_ratio" "$size_ratio"
	done
done
