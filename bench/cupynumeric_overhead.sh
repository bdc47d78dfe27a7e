#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# What optrace.cupynumeric costs a cuPyNumeric call, on v26.01.00's real code
# (../shared/cupynumeric on its stub Legate, its profiling off: LEGATE_STUB_PROFILE=0): the
# thread's CPU time per call of bench/cupynumeric_calls.py, calls through the adapter's
# wrapper against calls of cuPyNumeric's own wrapper beneath it (cuPyNumeric alone), one
# process each, rounds interleaved, medians:
#   untraced   no tracer attached
#   traced     under optrace stat (every call an operation, its mode worked out)
# Budget (issue 36): the adapter adds at most 1 us a call untraced, 3 us traced.
#
# Usage: bench/cupynumeric_overhead.sh [OUTPUT_DIR] [CALLS] [ROUNDS]   (traced: as root)
set -euo pipefail
out=$(cd "${1:-.output}" && pwd)
calls=${2:-300000}
rounds=${3:-7}
here=$(cd "$(dirname "$0")" && pwd)
shared=${OPTRACE_SHARED_DIR:-$here/../../shared}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -f "$shared/cupynumeric/setup.sh" ] ||
	{ echo "no cuPyNumeric at $shared/cupynumeric: nothing to measure" >&2; exit 1; }
bash "$shared/cupynumeric/setup.sh" "$work/cn" >/dev/null
# One hash seed: dict layouts that differ from process to process move a call by a us.
export PYTHONPATH="$out/python:$work/cn" LEGATE_STUB_PROFILE=0 PYTHONDONTWRITEBYTECODE=1 \
	PYTHONHASHSEED=0
run=(/usr/bin/python3 -m optrace.run "$here/cupynumeric_calls.py")

for _ in $(seq "$rounds"); do
	for mode in alone adapted; do
		"${run[@]}" "$mode" "$calls" >>"$work/untraced-$mode"
		[ "$(id -u)" -ne 0 ] ||
			"$out/bin/optrace" stat -q -o /dev/null -- "${run[@]}" "$mode" "$calls" \
				>>"$work/traced-$mode"
	done
done

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
verdict() { [ "$1" -le "$2" ] && echo met || echo missed; }
echo "ns of CPU per cuPyNumeric call (ndarray.view, ndarray.squeeze, np.asarray), medians of $rounds rounds"
printf '%-9s %8s %8s %8s %8s\n' config alone adapted added budget
for config in untraced traced; do
	[ -s "$work/$config-alone" ] || continue
	alone=$(median <"$work/$config-alone")
	adapted=$(median <"$work/$config-adapted")
	budget=$([ $config = untraced ] && echo 1000 || echo 3000)
	printf '%-9s %8s %8s %8s %8s\n' $config "$alone" "$adapted" $((adapted - alone)) \
		"$(verdict $((adapted - alone)) "$budget")"
done
