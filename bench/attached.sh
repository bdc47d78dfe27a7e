# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Sourced by the benchmarks.
#
# wait_start_handler PID: waits up to 10 s for a loop started with --wait to
# catch SIGUSR1 (bench/start_signal.h), so that the signal that starts it is
# never sent before its handler is set.
wait_start_handler() {
	local caught
	for _ in $(seq 100); do
		caught=$(awk '/^SigCgt:/ { print $2 }' "/proc/$1/status" 2>/dev/null) || true
		# SIGUSR1 is signal 10: bit 9 of the mask.
		[ -n "$caught" ] && (((0x$caught >> 9) & 1)) && return 0
		sleep 0.1
	done
	echo "the loop $1 never waited for SIGUSR1" >&2
	kill -KILL "$1" 2>/dev/null || true
	exit 1
}

# wait_attached ERR NAME [PID...]: waits up to 30 s for the tracer whose
# stderr is ERR to say it attached (stat's "Tracing...", record's
# "Recording..."); otherwise it says so, kills the PIDs (the loop waiting for
# its start, which would wait forever) and the benchmark exits 1.
wait_attached() {
	local err=$1 name=$2
	shift 2
	for _ in $(seq 300); do
		grep -qE 'Tracing|Recording' "$err" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "$name did not attach:" >&2
	cat "$err" >&2
	[ $# -eq 0 ] || kill -KILL "$@" 2>/dev/null || true
	exit 1
}

# run_loop_traced LOOP TRACER ERR NAME: once the tracer TRACER (empty: none)
# says in ERR that it attached, starts the loop LOOP (SIGUSR1), waits for it,
# then ends the tracer with SIGINT, as Ctrl-C would, and waits for it.
run_loop_traced() {
	local loop=$1 tracer=$2 err=$3 name=$4
	[ -z "$tracer" ] || wait_attached "$err" "$name" "$loop"
	kill -USR1 "$loop"
	wait "$loop"
	if [ -n "$tracer" ]; then
		kill -INT "$tracer" 2>/dev/null || true
		wait "$tracer" || true
	fi
}
