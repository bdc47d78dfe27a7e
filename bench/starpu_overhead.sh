#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# What liboptrace-starpu costs a StarPU task: the project's two-variant
# program (adapters/starpu/two_variants.c) submitting TASKS tasks of its CPU
# variant (STARPU_NOPENCL=0, 2 CPU workers) and waiting for them, its
# process's CPU time over that section per task, one process per
# configuration, rounds interleaved, each compared with StarPU alone in its
# own round (median of the ratios):
#   untraced   the library preloaded, no tracer attached
#   stat       preloaded, under optrace stat
#   record     preloaded, under optrace record
# Budget (issue 38): none set; DESIGN.md's "near free until traced".
#
# Usage: bench/starpu_overhead.sh [OUTPUT_DIR] [TASKS] [ROUNDS]   (stat, record: as root)
set -euo pipefail
out=$(cd "${1:-.output}" && pwd)
tasks=${2:-20000}
rounds=${3:-7}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
program=$out/tests/starpu_two_variants
preload=$out/lib/liboptrace-starpu.so
[ -x "$program" ] && [ -f "$preload" ] ||
	{ echo "no StarPU build here: nothing to measure (scripts/deps.sh --tests, make)" >&2; exit 1; }
export STARPU_HOME=$work STARPU_NOPENCL=0 STARPU_NCPU=2 STARPU_SILENT=1
run=("$program" --tasks "$tasks" --outside 0)

# cpu_ns CONFIG: one run's CPU ns over the section
cpu_ns() {
	case $1 in
	alone) "${run[@]}" ;;
	untraced) env LD_PRELOAD="$preload" "${run[@]}" ;;
	stat) "$out/bin/optrace" stat -q -o /dev/null -- env LD_PRELOAD="$preload" "${run[@]}" ;;
	record) "$out/bin/optrace" record -q -o "$work/capture" -- \
		env LD_PRELOAD="$preload" "${run[@]}" ;;
	esac | awk '/^time / { print $3 }'
}

configs=(alone untraced)
[ "$(id -u)" -ne 0 ] || configs+=(stat record)
for _ in $(seq "$rounds"); do
	line=""
	for config in "${configs[@]}"; do
		line="$line $(cpu_ns "$config")"
	done
	echo "$line" >>"$work/rounds"
done

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
alone=$(awk '{ print $1 }' "$work/rounds" | median)
echo "StarPU alone: $((alone / tasks)) ns of CPU a task ($tasks tasks, CPU variant, 2 workers)"
echo "ratio: to StarPU alone in the same round, median of $rounds rounds; ns: added a task"
printf '%-9s %7s %8s\n' config ratio ns
for i in "${!configs[@]}"; do
	[ "$i" -gt 0 ] || continue
	ratio=$(awk -v c=$((i + 1)) '{ print $c / $1 }' "$work/rounds" | median)
	awk -v c="${configs[$i]}" -v r="$ratio" -v a="$alone" -v n="$tasks" \
		'BEGIN { printf "%-9s %7.3f %8.0f\n", c, r, (r - 1) * a / n }'
done
