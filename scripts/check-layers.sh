#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Checks that each stage of userspace/ includes only its own headers and
# those of the stages before it (userspace/README.md), and that within one
# folder (a stage, probes/) no two files include each other's headers or,
# where a build is, call each other: the files of a folder depend one way
# too. Prints every include that runs backwards and every circle, and exits
# 1 if there is one.
#
#   scripts/check-layers.sh [REPOSITORY]

cd "${1:-.}" || exit 2
stages="common trace capture model output session cli"

rank() {
	i=0
	for stage in $stages; do
		[ "$stage" = "$1" ] && { echo $i; return; }
		i=$((i + 1))
	done
	echo -1
}

status=0
for file in userspace/*/*.[ch]; do
	stage=${file#userspace/}
	stage=${stage%%/*}
	own=$(rank "$stage")
	if [ "$own" -lt 0 ]; then
		echo "$file: userspace/$stage is not a stage ($stages)"
		status=1
		continue
	fi
	for used in $(sed -n 's|^#include "\([a-z_]*\)/.*|\1|p' "$file" | sort -u); do
		# Folders of the repository (bpf/, probes/) are below every stage.
		case " $stages " in *" $used "*) ;; *) continue ;; esac
		if [ "$(rank "$used")" -gt "$own" ]; then
			echo "$file: includes $used/, a later stage than $stage/"
			status=1
		fi
	done
done
# The module a file belongs to: its name without .c, .h or _internal.h.
module() {
	name=${1##*/}
	name=${name%.[ch]}
	echo "${name%_internal}"
}

# Circles allowed, "FOLDER A B" (A sorts first), each with why: none now.
known_circles=""

# Reads "FOLDER FROM TO" edges (FROM uses TO) and says each pair that runs
# both ways, how it was found in $1.
circles() {
	sort -u >"$work/edges"
	while read -r folder from to; do
		# Each pair once: from the name that sorts first.
		[ "$(printf '%s\n%s\n' "$from" "$to" | sort | head -n 1)" = "$from" ] || continue
		grep -qx "$folder $to $from" "$work/edges" || continue
		case $known_circles in *"
$folder $from $to
"*) continue ;;
		esac
		echo "$folder: $from and $to $1: make them depend one way (the lower" \
			"file's header declares what both need, or the upper one passes callbacks" \
			"down), so that each can be read and tested without the other"
		echo 1 >"$work/failed"
	done <"$work/edges"
}

work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT

# Within a folder (a stage, probes/): no two files include each other's headers.
for file in userspace/*/*.[ch] probes/*.[ch]; do
	folder=${file%/*}
	from=$(module "$file")
	sed -n 's|^#include "\([a-z_/]*\)\.h".*|\1|p' "$file" | while read -r used; do
		case $used in
		*/*) [ "${used%/*}" = "${folder#userspace/}" ] || continue ;;
		*) [ -e "$folder/$used.h" ] || continue ;;
		esac
		to=$(module "$used")
		[ "$to" = "$from" ] || echo "$folder $from $to"
	done
done | circles "include each other's headers"

# Nor call each other: a header that declares several files' functions hides
# such a circle from the includes, their objects do not. Where a build is
# (OPTRACE_BUILD_DIR, else .output; `make lint` before a build checks the
# includes alone), each object whose source still exists.
build=${OPTRACE_BUILD_DIR:-.output}
if [ -d "$build/probes" ] && command -v nm >/dev/null; then
	for object in "$build"/userspace/*/*.o "$build"/probes/*.o; do
		source=${object#"$build"/}
		source=${source%.o}.c
		[ -e "$source" ] || continue
		from=$(module "$source")
		nm --defined-only -g "$object" | awk -v f="${source%/*}" -v m="$from" \
			'NF == 3 { print f, $3, "defines", m }'
		nm -u "$object" | awk -v f="${source%/*}" -v m="$from" '{ print f, $2, "uses", m }'
	done | LC_ALL=C sort -k1,2 -k3,3 | awk '
		$1 " " $2 != key { key = $1 " " $2; owner = "" }
		$3 == "defines" { owner = $4 }
		$3 == "uses" && owner != "" && owner != $4 { print $1, $4, owner }
	' | circles "call each other"
fi
[ -e "$work/failed" ] && status=1

for file in userspace/*.[ch]; do
	[ -e "$file" ] && { echo "$file: every source belongs to a stage's folder"; status=1; }
done
exit $status
