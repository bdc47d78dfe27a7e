#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Runs every Check suite given and sums them into one closing line:
# "N passed, N failed, N skipped". Exits non-zero on any failure. A suite
# ending in .py is a Python runner, run with $PYTHON (default /usr/bin/python3).
set -uo pipefail

passed=0 failed=0 skipped=0
# Each failure's first line, repeated at the end: a log's tail names them.
failure_lines=$(mktemp)
trap 'rm -f "$failure_lines"' EXIT
note_failures() {
	grep -E '^[^ :]+:[0-9]+:[FE]:|^(FAIL|ERROR): ' "$1" | cut -c1-400 >>"$failure_lines"
}
for suite in "$@"; do
	# A Python runner (tests/python/run.py) ends with "python: N passed, N failed, N skipped".
	if [[ "$suite" == *.py ]]; then
		log=$(mktemp)
		"${PYTHON:-/usr/bin/python3}" "$suite" >"$log" 2>&1
		status=$?
		cat "$log"
		note_failures "$log"
		summary=$(grep -E '^python: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -n 1)
		rm -f "$log"
		if [ -z "$summary" ]; then
			echo "FAIL: $suite crashed or printed no summary (exit $status)" | tee -a "$failure_lines"
			failed=$((failed + 1))
			continue
		fi
		read -r p f s < <(echo "$summary" | sed -E 's/^python: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$/\1 \2 \3/')
		passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
		if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
			echo "FAIL: $suite exited $status" | tee -a "$failure_lines"
			failed=$((failed + 1))
		fi
		continue
	fi
	log=$(mktemp)
	"$suite" >"$log" 2>&1
	status=$?
	cat "$log"
	note_failures "$log"
	summary=$(grep -E '^[0-9]+%: Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+' "$log" | tail -n 1)
	suite_skips=$(grep -c '^SKIP: ' "$log")
	rm -f "$log"
	if [ -z "$summary" ]; then
		echo "FAIL: $(basename "$suite") crashed or printed no summary (exit $status)" |
			tee -a "$failure_lines"
		failed=$((failed + 1))
		continue
	fi
	read -r checks failures errors < <(echo "$summary" |
		sed -E 's/.*Checks: ([0-9]+), Failures: ([0-9]+), Errors: ([0-9]+).*/\1 \2 \3/')
	failed=$((failed + failures + errors))
	passed=$((passed + checks - failures - errors - suite_skips))
	skipped=$((skipped + suite_skips))
	if [ "$status" -ne 0 ] && [ $((failures + errors)) -eq 0 ]; then
		echo "FAIL: $(basename "$suite") exited $status" | tee -a "$failure_lines"
		failed=$((failed + 1))
	fi
done
if [ -s "$failure_lines" ]; then
	echo "failures, as each suite reported them above:"
	sed "s/^/  /" "$failure_lines"
fi
# How long: the suites must stay within 15 minutes, also on a busy machine.
echo "tests: $((SECONDS / 60)) min $((SECONDS % 60)) s"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
