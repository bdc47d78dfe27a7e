#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Runs every benchmark once, printing each one's own baseline and ratios.
# Usage: bench/run.sh OUTPUT_DIR   (make run-bench passes .output)
set -euo pipefail
out=${1:-.output}

echo "== untraced probe calls (caller built normally: call through the PLT)"
"$out/bench/probe_untraced"
echo
echo "== untraced probe calls (caller built with -fno-plt)"
"$out/bench/probe_untraced-noplt"
