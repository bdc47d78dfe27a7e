#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# LTTng-UST, the overhead anchor: ns per tracepoint hit of bench/lttng_loop
# (probe_loop's operations, op_begin + op_end, as LTTng-UST tracepoints),
# each configuration in the same run, rounds interleaved, median of rounds:
#   untraced  no recording session: the tracepoints are disabled
#   traced    a session recording both events: per-UID buffers, discard
#             mode, written by the consumer daemon into a temporary directory
# Each traced round's trace is read back (babeltrace2 or babeltrace, where
# installed) and its events counted against LTTng's discarded-events count:
# a discarded event costs less than a recorded one, so the numbers hold
# only where none were discarded.
# Starts lttng-sessiond when none runs, and stops it at the end.
#
# Usage: bench/lttng_overhead.sh [OUTPUT_DIR] [ITERATIONS] [ROUNDS]   (as root)
set -euo pipefail
. "$(dirname "$0")/attached.sh"
out=${1:-.output}
iterations=${2:-1000000}
rounds=${3:-3}
loop=$out/bench/lttng_loop
events=optrace_lttng:op_begin,optrace_lttng:op_end
session=optrace-bench-$$

if [ "$(id -u)" -ne 0 ]; then
	echo "lttng_overhead.sh: needs root (the root session daemon)" >&2
	exit 1
fi
if [ ! -x "$loop" ]; then
	echo "lttng_overhead.sh: no $loop (make bench, with liblttng-ust-dev installed)" >&2
	exit 1
fi
if ! command -v lttng >/dev/null || ! command -v lttng-sessiond >/dev/null; then
	echo "lttng_overhead.sh: no lttng or lttng-sessiond (apt-get install lttng-tools)" >&2
	exit 1
fi
reader=$(command -v babeltrace2 || command -v babeltrace || true)

work=$(mktemp -d)
sessiond=
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null
	lttng destroy "$session" >/dev/null 2>&1 || true
	if [ -n "$sessiond" ]; then
		kill "$sessiond" 2>/dev/null || true
		# Its consumer daemons end with it; wait, so that none outlives us
		# (a zombie counts as gone: only its reaper can take it away).
		for _ in $(seq 100); do
			grep -qs '^State:[[:space:]]*[^Z]' "/proc/$sessiond/status" || break
			sleep 0.1
		done
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# `lttng list` fails without a session daemon and, unlike `lttng create`,
# does not spawn one we could not stop.
if ! lttng list >/dev/null 2>&1; then
	# No kernel tracing: the kernel has no lttng-modules, and none is needed.
	lttng-sessiond --daemonize --no-kernel
	sessiond=$(cat /var/run/lttng/lttng-sessiond.pid)
	if [ "$(cat "/proc/$sessiond/comm" 2>/dev/null)" != lttng-sessiond ]; then
		echo "lttng_overhead.sh: lttng-sessiond did not start" >&2
		sessiond=
		exit 1
	fi
fi

lttng_q() { lttng "$@" >>"$work/lttng.log" 2>&1 || { cat "$work/lttng.log" >&2; exit 1; }; }

# Sets up the session (traced), starts the loop paused, lets it register
# with the session daemon, runs it; prints its ns per hit.
measure() {
	local config=$1

	if [ "$config" = traced ]; then
		lttng_q create "$session" --output="$work/trace"
		lttng_q enable-channel -u --buffers-uid --subbuf-size=1M --num-subbuf=8 chan
		lttng_q enable-event -u -c chan "$events"
		lttng_q start
	fi
	"$loop" --wait -n "$iterations" >"$work/ns" &
	pid=$!
	# LTTng-UST's constructor, which registers with the session daemon, runs
	# before the handler is set.
	wait_start_handler "$pid"
	kill -USR1 "$pid"
	wait "$pid"
	pid=
	if [ "$config" = traced ]; then
		lttng_q stop
		lttng list "$session" | awk '/Discarded events:/ { n += $3 } END { print n + 0 }' \
			>>"$work/discarded"
		lttng_q destroy "$session"
		if [ -n "$reader" ]; then
			"$reader" "$work/trace" 2>/dev/null | grep -c 'optrace_lttng:op_' >>"$work/recorded" || true
		fi
		rm -rf "$work/trace"
	fi
	cat "$work/ns"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

configs=(untraced traced)
for round in $(seq "$rounds"); do
	for config in "${configs[@]}"; do
		measure "$config" >>"$work/$config.all"
	done
done
for config in "${configs[@]}"; do
	eval "$config=\$(median <\"\$work/$config.all\")"
done

printf '%-9s %10s\n' config ns/event
for config in "${configs[@]}"; do
	printf '%-9s %10.1f\n' "$config" "${!config}"
done
printf 'lttng overhead per event = traced - untraced = %.1f ns\n' \
	"$(echo "$traced - $untraced" | bc -l)"
echo "($iterations operations = $((2 * iterations)) tracepoint hits per run, median of $rounds rounds)"
echo "traced: events discarded per round: $(tr '\n' ' ' <"$work/discarded")"
if [ -z "$reader" ]; then
	echo "traced: events recorded: not counted (no babeltrace2 or babeltrace)"
	exit 0
fi
echo "traced: events recorded per round ($(basename "$reader")): $(tr '\n' ' ' <"$work/recorded")"
# Every hit either recorded or counted as discarded, else the session missed some.
paste "$work/recorded" "$work/discarded" | awk -v want=$((2 * iterations)) '
	$1 + $2 != want { bad = 1 } END { exit bad }' || {
	echo "traced: recorded + discarded != $((2 * iterations)) in some round" >&2
	exit 1
}
