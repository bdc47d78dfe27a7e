#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Checks that every header of userspace/ and bpf/ is guarded by the name of
# its file, so that a guard says where it lives and two headers cannot share
# one: userspace/STAGE/FILE.h is OPTRACE_STAGE_FILE_H, bpf/FILE.h is
# OPTRACE_BPF_FILE_H (bpf/FILE.bpf.h: OPTRACE_BPF_FILE_BPF_H). Prints each
# header whose guard differs, with the one expected, and exits 1 if there is one.
#
#   scripts/check-guards.sh [REPOSITORY]

cd "${1:-.}" || exit 2

status=0
for file in userspace/*/*.h bpf/*.h; do
	[ -e "$file" ] || continue
	name=${file#userspace/}
	expected=OPTRACE_$(printf '%s\n' "$name" | tr 'a-z/.-' 'A-Z___')
	guard=$(sed -n 's/^#ifndef[[:space:]]\{1,\}\([A-Za-z0-9_]*\).*/\1/p' "$file" | head -n 1)
	defined=$(sed -n 's/^#define[[:space:]]\{1,\}\([A-Za-z0-9_]*\)[[:space:]]*$/\1/p' "$file" |
		head -n 1)
	if [ "$guard" != "$expected" ] || [ "$defined" != "$expected" ]; then
		echo "$file: guard ${guard:-(none)}: expected #ifndef $expected and #define $expected"
		status=1
	fi
done
exit $status
