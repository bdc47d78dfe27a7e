#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# What optrace.torch costs a training loop (bench/torch_loop.py: a small model,
# forward, backward, optimizer step, one intra-op thread), against the same loop
# without it, in one run: the thread's CPU time per step.
#   untraced   optrace.torch imported, no tracer attached (nothing registered):
#              one process each, alone and adapted, rounds interleaved
#   all        under optrace stat / record, every operator traced
#   calls      the same, OPTRACE_TORCH_DEPTH=1: the program's calls alone
#   profiler   torch.profiler (CPU activity), the anchor
# The traced configurations run as slices of one process, interleaved with
# slices of the loop alone: this machine's speed drifts by tens of percent
# over seconds, which processes run apart cannot compare. Each is reported as
# its ratio to the alone slice of its round (median of the rounds), and the
# time it adds per operator (torch.profiler's count of one step).
# Budget (issue 37): untraced at most 1% or 50 ns an operator; traced below
# torch.profiler.
#
# Usage: bench/torch_overhead.sh [OUTPUT_DIR] [STEPS] [ROUNDS]   (stat, record: as root)
set -euo pipefail
out=$(cd "${1:-.output}" && pwd)
steps=${2:-200}
rounds=${3:-9}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 -c 'import torch' 2>/dev/null ||
	{ echo "no PyTorch (python3-torch): nothing to measure (scripts/deps.sh --tests)" >&2; exit 1; }
export PYTHONPATH="$out/python" PYTHONDONTWRITEBYTECODE=1 PYTHONHASHSEED=0 OMP_NUM_THREADS=1
loop=(/usr/bin/python3 "$here/torch_loop.py")
operators=$("${loop[@]}" count)

for _ in $(seq "$rounds"); do
	echo "$("${loop[@]}" alone "$steps") $("${loop[@]}" adapted "$steps")" >>"$work/untraced"
done
tracers=()
if [ "$(id -u)" -eq 0 ]; then
	tracers=(stat record)
	"$out/bin/optrace" stat -q -o /dev/null -- "${loop[@]}" slices "$steps" "$rounds" \
		>"$work/stat"
	"$out/bin/optrace" record -q -o "$work/capture" -- "${loop[@]}" slices "$steps" "$rounds" \
		>"$work/record"
fi

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# ratio FILE COLUMN: the median over rounds of column / column 1
ratio() { awk -v c="$2" '{ print $c / $1 }' "$1" | median; }
alone=$(awk '{ print $1 }' "$work/untraced" | median)
row() { # config ratio alone_ns budget
	awk -v c="$1" -v r="$2" -v s="$3" -v n="$operators" -v b="$4" \
		'BEGIN { printf "%-16s %7.3f %10.0f  %s\n", c, r, (r - 1) * s / n, b }'
}
echo "training step: $((alone / 1000)) us of CPU alone, $operators operators (torch.profiler's count)"
echo "ratio: to the loop alone, median of $rounds rounds of $steps steps; ns_per_op: added"
printf '%-16s %7s %10s  %s\n' config ratio ns_per_op budget
untraced=$(ratio "$work/untraced" 2)
row untraced "$untraced" "$alone" "$(awk -v r="$untraced" -v s="$alone" -v n="$operators" \
	'BEGIN { print (r <= 1.01 || (r - 1) * s / n <= 50) ? "met" : "missed" }')"
for tracer in "${tracers[@]}"; do
	profiler=$(ratio "$work/$tracer" 4)
	slice_alone=$(awk '{ print $1 }' "$work/$tracer" | median)
	for column in 2 3 4; do
		name=$(echo "x all calls profiler" | cut -d' ' -f$column)
		value=$(ratio "$work/$tracer" $column)
		[ $column = 4 ] && { row "$tracer, $name" "$value" "$slice_alone" "(anchor)"; continue; }
		row "$tracer, $name" "$value" "$slice_alone" "$(awk -v r="$value" -v p="$profiler" \
			'BEGIN { print r < p ? "met" : "missed" }') (profiler beside it: $profiler)"
	done
done
