#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# What optrace.torch costs a training loop (bench/torch_loop.py: a small model,
# forward, backward, optimizer step, 1 intra-op thread), against the same loop
# without it, in one run: the thread's CPU time per step, one process per
# configuration, rounds interleaved, medians:
#   alone      PyTorch alone
#   untraced   with optrace.torch, no tracer attached (no callback registered)
#   stat       with optrace.torch, under optrace stat (every operator aggregated)
#   record     with optrace.torch, under optrace record (every operator streamed)
#   profiler   PyTorch alone under torch.profiler (CPU activity), the anchor
# Per operator: the added time over the operators one step runs (torch.profiler's count).
# Budget (issue 37): untraced at most 1% and 50 ns an operator; traced below torch.profiler.
#
# Usage: bench/torch_overhead.sh [OUTPUT_DIR] [STEPS] [ROUNDS]   (stat, record: as root)
set -euo pipefail
out=$(cd "${1:-.output}" && pwd)
steps=${2:-400}
rounds=${3:-7}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 -c 'import torch' 2>/dev/null ||
	{ echo "no PyTorch (python3-torch): nothing to measure (scripts/deps.sh --tests)" >&2; exit 1; }
export PYTHONPATH="$out/python" PYTHONDONTWRITEBYTECODE=1 PYTHONHASHSEED=0 OMP_NUM_THREADS=1
loop=(/usr/bin/python3 "$here/torch_loop.py")
operators=$("${loop[@]}" count 1)

configs=(alone untraced profiler)
[ "$(id -u)" -ne 0 ] || configs+=(stat record)
for _ in $(seq "$rounds"); do
	for config in "${configs[@]}"; do
		case $config in
		alone | profiler) "${loop[@]}" "$config" "$steps" ;;
		untraced) "${loop[@]}" adapted "$steps" ;;
		stat) "$out/bin/optrace" stat -q -o /dev/null -- "${loop[@]}" adapted "$steps" ;;
		record) "$out/bin/optrace" record -q -o "$work/capture" -- "${loop[@]}" adapted "$steps" ;;
		esac >>"$work/$config"
	done
done

# The machine's speed drifts by tens of percent over seconds here: each configuration is
# compared with the "alone" run of its own round, and the ratios' median is reported.
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio_median() { paste "$work/$1" "$work/alone" | awk '{ print $1 / $2 }' | median; }
alone=$(median <"$work/alone")
profiler=$(ratio_median profiler)
echo "CPU per training step ($operators operators): alone's median, and each configuration's"
echo "ratio to the alone run of its own round (median of $rounds rounds of $steps steps)"
printf '%-9s %9s %8s %10s %8s\n' config step_us ratio ns_per_op budget
for config in "${configs[@]}"; do
	ratio=$(ratio_median "$config")
	case $config in
	alone) budget="-" ;;
	untraced) budget=$(awk -v r=$ratio -v s=$alone -v n=$operators \
		'BEGIN { print (r <= 1.01 || (r - 1) * s / n <= 50) ? "met" : "missed" }') ;;
	stat | record) budget=$(awk -v r=$ratio -v p=$profiler \
		'BEGIN { print r < p ? "met" : "missed" }') ;;
	profiler) budget="(anchor)" ;;
	esac
	awk -v c=$config -v r=$ratio -v s=$alone -v n=$operators -v b="$budget" \
		'BEGIN { printf "%-9s %9.1f %8.3f %10.0f %8s\n", c, r * s / 1000, r, (r - 1) * s / n, b }'
done
