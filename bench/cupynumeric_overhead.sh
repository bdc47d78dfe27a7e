#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# What optrace.cupynumeric costs a cuPyNumeric call, on v26.01.00's real code
# (../shared/cupynumeric on its stub Legate, its profiling off: LEGATE_STUB_PROFILE=0): the
# thread's CPU time per call of bench/cupynumeric_calls.py, which alternates, in one process,
# calls through the adapter's wrapper and calls of cuPyNumeric's own wrapper beneath it
# (cuPyNumeric alone):
#   untraced   no tracer attached
#   traced     under optrace stat (every call an operation, its mode worked out)
# Budget (issue 36): the adapter adds at most 1 us a call untraced, 3 us traced.
#
# Usage: bench/cupynumeric_overhead.sh [OUTPUT_DIR] [CALLS] [ROUNDS]   (traced: as root)
set -euo pipefail
out=$(cd "${1:-.output}" && pwd)
calls=${2:-30000}
rounds=${3:-7}
here=$(cd "$(dirname "$0")" && pwd)
shared=${OPTRACE_SHARED_DIR:-$here/../../shared}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -f "$shared/cupynumeric/setup.sh" ] ||
	{ echo "no cuPyNumeric at $shared/cupynumeric: nothing to measure" >&2; exit 1; }
bash "$shared/cupynumeric/setup.sh" "$work/cn" >/dev/null
export PYTHONPATH="$out/python:$work/cn" LEGATE_STUB_PROFILE=0 PYTHONDONTWRITEBYTECODE=1
run=(/usr/bin/python3 -m optrace.run "$here/cupynumeric_calls.py" "$calls" "$rounds")

verdict() { [ "$1" -le "$2" ] && echo met || echo missed; }
echo "ns of CPU per cuPyNumeric call (np.add, np.ndim, ndarray.sum), medians of $rounds rounds"
printf '%-9s %8s %8s %8s %8s\n' config alone adapted "added" budget
read -r _ alone _ adapted < <("${run[@]}")
printf '%-9s %8s %8s %8s %8s\n' untraced "$alone" "$adapted" $((adapted - alone)) \
	"$(verdict $((adapted - alone)) 1000)"
if [ "$(id -u)" -eq 0 ]; then
	read -r _ alone _ adapted < <("$out/bin/optrace" stat -q -o /dev/null -- "${run[@]}")
	printf '%-9s %8s %8s %8s %8s\n' traced "$alone" "$adapted" $((adapted - alone)) \
		"$(verdict $((adapted - alone)) 3000)"
fi
