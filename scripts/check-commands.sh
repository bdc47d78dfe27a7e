#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Checks the copies of the command list against its one table,
# userspace/cli/commands.h (OPTRACE_COMMANDS: main.c's table and the
# Makefile's COMMANDS, and so the man pages, are built from it): the bash
# completion's list (packaging/optrace.bash) and the synopsis of
# optrace(8) (docs/optrace.md) must name the same commands, in the same
# order. Prints each copy that differs, and exits 1 if there is one.
#
#   scripts/check-commands.sh [REPOSITORY]

cd "${1:-.}" || exit 2

table=$(sed -n 's/^[[:space:]]*X(\([a-z]*\),.*/\1/p' userspace/cli/commands.h | tr '\n' ' ')
table=${table% }
if [ -z "$table" ]; then
	echo "userspace/cli/commands.h: no X(NAME, SUMMARY) lines in OPTRACE_COMMANDS"
	exit 1
fi

status=0
# compare WHERE LIST: LIST must be the table's commands, in order.
compare() {
	if [ "$2" != "$table" ]; then
		echo "$1: lists the commands as '$2'; userspace/cli/commands.h: '$table'"
		status=1
	fi
}

# The first words completed: "compgen -W 'list stat ... --help'".
completion=$(sed -n "s/.*compgen -W '\([^']*\)'.*/\1/p" packaging/optrace.bash | head -n 1 |
	tr ' ' '\n' | grep -v '^-' | tr '\n' ' ')
compare packaging/optrace.bash "${completion% }"

# "optrace NAME ..." lines of the SYNOPSIS block, each name once.
synopsis=$(sed -n '/^## SYNOPSIS/,/^## /p' docs/optrace.md |
	sed -n 's/^optrace \([a-z][a-z]*\).*/\1/p' | grep -vx help | awk '!seen[$0]++' | tr '\n' ' ')
compare "docs/optrace.md (SYNOPSIS)" "${synopsis% }"

exit $status
