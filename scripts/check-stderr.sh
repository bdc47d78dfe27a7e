#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Checks that userspace/ says its errors and warnings through diag()
# (common/diag.h: one "optrace: " line each, written whole), not with a
# fprintf(stderr) of its own. A line of another kind (progress redrawn in
# place, libbpf's own messages) says why in a comment holding "not diag()",
# on its line or one of the four above. Prints each other call, and exits 1
# if there is one.
#
#   scripts/check-stderr.sh [REPOSITORY]

cd "${1:-.}" || exit 2

status=0
for file in userspace/*/*.[ch]; do
	[ "$file" = userspace/common/diag.c ] && continue
	calls=$(awk '/not diag\(\)/ { said = FNR }
		/fprintf\(stderr/ && !(said && FNR - said <= 4) { print FILENAME ":" FNR ": " $0 }' "$file")
	[ -z "$calls" ] && continue
	printf '%s\n' "$calls" | sed 's/:[[:space:]]*/: /2'
	echo "$file: say errors and warnings with diag() (common/diag.h); a line that must" \
		"not be one says why in a comment holding \"not diag()\" just above it"
	status=1
done
exit $status
