#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Checks that each stage of userspace/ includes only its own headers and
# those of the stages before it (userspace/README.md). Prints every include
# that runs backwards, and exits 1 if there is one.
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
for file in userspace/*.[ch]; do
	[ -e "$file" ] && { echo "$file: every source belongs to a stage's folder"; status=1; }
done
exit $status
