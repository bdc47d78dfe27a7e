#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Overhead per traced event of a loop of operations (op_begin + op_end: two
# events each), every configuration in the same run, rounds interleaved,
# median of the rounds:
#   none             no tracer
#   stat             optrace stat -p PID: the fast path, counted in the kernel
#   record           optrace record -p PID: the fast path, into a capture
#   stat-vdso,       the same with OPTRACE_CLOCK=vdso in the loop: events
#   record-vdso      stamped by clock_gettime(), not from the TSC with the
#                    kernel's parameters (the clock's share)
#   stat-per-event   optrace stat --per-event: one uprobe hit per event
#   record-per-event optrace record --per-event
#   floor            empty BPF programs on the per-event probes (the uprobe floor)
#   bpftrace         bpftrace -p PID counting both probes with @[...] = count()
#   lttng-ust        the same operations as LTTng-UST tracepoints under a
#                    session (bench/lttng_overhead.sh, one round of it per
#                    round here), over its own untraced loop; where built
#   uftrace          uftrace record of the same loop as one -pg function
#                    (bench/uftrace_loop.c: its entry and exit, two events),
#                    over the same binary run alone; where uftrace is installed
# Each traced configuration is checked to have counted or recorded every
# event. Budget (DESIGN.md): the fast path's stat and record each cost at
# most 0.10 x bpftrace's overhead per event.
#
# Usage: bench/probe_overhead.sh [OUTPUT_DIR] [ITERATIONS] [ROUNDS]   (as root)
set -euo pipefail
. "$(dirname "$0")/attached.sh"
out=${1:-.output}
iterations=${2:-1000000}
rounds=${3:-3}
lib=$(readlink -f "$out/lib/liboptrace.so.1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
events=$((2 * iterations))

# Starts the loop paused, attaches the tracer (unless none), runs the loop.
measure() {
	local config=$1 loop tracer= clock=
	case $config in *-vdso) clock=vdso ;; esac
	OPTRACE_CLOCK=$clock "$out/bench/probe_loop" --wait -n "$iterations" >"$work/ns" &
	loop=$!
	wait_start_handler "$loop"
	case $config in
	none) ;;
	floor) "$out/bench/floor" "$loop" 2>"$work/err" & tracer=$! ;;
	stat | stat-vdso) "$out/bin/optrace" stat -p "$loop" >"$work/out" 2>"$work/err" & tracer=$! ;;
	stat-per-event) "$out/bin/optrace" stat --per-event -p "$loop" >"$work/out" 2>"$work/err" & tracer=$! ;;
	record | record-vdso) "$out/bin/optrace" record -p "$loop" -o "$work/capture" 2>"$work/err" & tracer=$! ;;
	record-per-event) "$out/bin/optrace" record --per-event -p "$loop" -o "$work/capture" 2>"$work/err" & tracer=$! ;;
	bpftrace)
		bpftrace -p "$loop" -e "BEGIN { printf(\"Tracing...\\n\"); }
			usdt:$lib:optrace:op_begin { @b[arg3] = count(); }
			usdt:$lib:optrace:op_end { @e[arg1] = count(); }" >"$work/err" 2>&1 &
		tracer=$!
		;;
	esac
	run_loop_traced "$loop" "$tracer" "$work/err" "$config"
	case $config in
	stat*) # every operation counted: the COUNT column of bench.op
		awk '$1 == "bench.op" { n += $2 } END { print n + 0 }' "$work/out" >>"$work/$config.counted" ;;
	record*) # every event recorded, none lost
		"$out/bin/optrace" report --json "$work/capture" 2>/dev/null |
			grep -o '"count": *[0-9]*' | head -n 1 | grep -o '[0-9]*$' >>"$work/$config.counted" || echo 0 >>"$work/$config.counted" ;;
	esac
	cat "$work/ns"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

configs=(none stat record stat-vdso record-vdso stat-per-event record-per-event floor bpftrace)
lttng=
[ -x "$out/bench/lttng_loop" ] && command -v lttng >/dev/null && lttng=yes
uftrace=
[ -x "$out/bench/uftrace_loop" ] && command -v uftrace >/dev/null && uftrace=yes
uftrace_loop=$(readlink -f "$out/bench/uftrace_loop")
for round in $(seq "$rounds"); do
	for config in "${configs[@]}"; do
		echo "$(measure "$config")" >>"$work/$config.all"
	done
	if [ -n "$lttng" ]; then
		bench/lttng_overhead.sh "$out" "$iterations" 1 >"$work/lttng.out" 2>&1 || lttng=
		sed -n 's/^lttng overhead per event = traced - untraced = \([0-9.]*\) ns$/\1/p' \
			"$work/lttng.out" >>"$work/lttng.all"
		grep -o 'discarded per round: [0-9 ]*' "$work/lttng.out" | grep -o '[0-9]*' \
			>>"$work/lttng.discarded" || true
	fi
	if [ -n "$uftrace" ]; then
		# in $work: a -pg program leaves its gmon.out where it runs
		alone=$(cd "$work" && "$uftrace_loop" "$iterations")
		traced=$(cd "$work" && uftrace record --no-libcall -d "$work/uftrace.data" \
			"$uftrace_loop" "$iterations" | tail -n 1)
		echo "$traced - $alone" | bc -l >>"$work/uftrace.all"
		uftrace report -d "$work/uftrace.data" 2>/dev/null |
			awk '$NF == "bench_operation" { print $(NF - 1) }' >>"$work/uftrace.counted"
		rm -rf "$work/uftrace.data"
	fi
done
for config in "${configs[@]}"; do
	eval "${config//-/_}=\$(median <\"\$work/$config.all\")"
done
over() { echo "$1 - $none" | bc -l; }
bpftrace_over=$(over "$bpftrace")

printf '%-17s %10s %12s %14s\n' config ns/event "overhead" "x bpftrace's"
for config in "${configs[@]}"; do
	value=${config//-/_}
	value=${!value}
	printf '%-17s %10.1f %12.1f %14.3f\n' "$config" "$value" "$(over "$value")" \
		"$(echo "($value - $none) / $bpftrace_over" | bc -l)"
done
if [ -n "$lttng" ] && [ -s "$work/lttng.all" ]; then
	lttng_over=$(median <"$work/lttng.all")
	printf '%-17s %10s %12.1f %14.3f\n' lttng-ust - "$lttng_over" \
		"$(echo "$lttng_over / $bpftrace_over" | bc -l)"
fi
if [ -n "$uftrace" ] && [ -s "$work/uftrace.all" ]; then
	uftrace_over=$(median <"$work/uftrace.all")
	printf '%-17s %10s %12.1f %14.3f\n' uftrace - "$uftrace_over" \
		"$(echo "$uftrace_over / $bpftrace_over" | bc -l)"
fi
echo "($iterations operations = $events events per run, median of $rounds rounds;"
echo " ns/event: the loop thread's CPU time; overhead = ns/event over the untraced loop of the same run)"
for config in stat stat-vdso stat-per-event record record-vdso record-per-event; do
	echo "$config: operations counted per round (of $iterations): $(tr '\n' ' ' <"$work/$config.counted")"
done
if [ -n "$lttng" ] && [ -s "$work/lttng.all" ]; then
	echo "lttng-ust: events discarded per round: $(tr '\n' ' ' <"$work/lttng.discarded")"
else
	echo "lttng-ust: not measured (no bench/lttng_loop or lttng here: liblttng-ust-dev, lttng-tools)"
fi
if [ -n "$uftrace" ] && [ -s "$work/uftrace.all" ]; then
	echo "uftrace: calls recorded per round (of $iterations): $(tr '\n' ' ' <"$work/uftrace.counted")"
else
	echo "uftrace: not measured (no bench/uftrace_loop or uftrace here: Debian's uftrace)"
fi
verdict() { bc -l | sed 's/1/ok/;s/0/OVER/'; }
# A configuration that lost events did less than the work measured: not within budget.
complete() {
	if awk -v n="$iterations" '$1 != n { bad = 1 } END { exit bad }' "$work/$1.counted"; then
		echo ok
	else
		echo "LOST EVENTS (see the counts)"
	fi
}
echo "budget: stat <= 0.10 x bpftrace: $(echo "$stat - $none <= 0.10 * $bpftrace_over" | verdict);" \
	"record <= 0.10 x bpftrace: $(echo "$record - $none <= 0.10 * $bpftrace_over" | verdict)"
echo "goal (issue 26): stat <= 0.035 x bpftrace: $(echo "$stat - $none <= 0.035 * $bpftrace_over" | verdict);" \
	"record <= 0.025 x bpftrace: $(echo "$record - $none <= 0.025 * $bpftrace_over" | verdict)"
echo "complete: stat $(complete stat); record $(complete record)"
if [ -n "${lttng_over:-}" ]; then
	echo "goal: stat < lttng-ust: $(echo "$stat - $none < $lttng_over" | verdict);" \
		"record < lttng-ust: $(echo "$record - $none < $lttng_over" | verdict)"
	# LTTng-UST, all userspace as the fast path is, moves less between VMs
	# than bpftrace, whose cost is the uprobe trap's (424 ns to 5 us seen).
	printf 'goal (issue 26): stat <= 0.25 x lttng-ust: %s (%.2f); record <= 0.25 x lttng-ust: %s (%.2f)\n' \
		"$(echo "$stat - $none <= 0.25 * $lttng_over" | verdict)" \
		"$(echo "($stat - $none) / $lttng_over" | bc -l)" \
		"$(echo "$record - $none <= 0.25 * $lttng_over" | verdict)" \
		"$(echo "($record - $none) / $lttng_over" | bc -l)"
fi
