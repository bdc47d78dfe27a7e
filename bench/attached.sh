# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Sourced by the benchmarks: wait_attached ERR NAME waits up to 30 s for the
# tracer whose stderr is ERR to say it attached (stat's "Tracing...",
# record's "Recording..."); otherwise it says so and the benchmark exits 1.
wait_attached() {
	for _ in $(seq 300); do
		grep -qE 'Tracing|Recording' "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "$2 did not attach:" >&2
	cat "$1" >&2
	exit 1
}
