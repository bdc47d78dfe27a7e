#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Installs the Debian packages `make deb` built (.output/deb) on this machine,
# checks what they put down as a user would meet it (the command, the man
# pages, the completion, the service, pkg-config, the Python module), and
# removes them again. As root; CI runs it after the suites.
#
#   scripts/check-packages.sh [DEB_DIR]
set -euo pipefail

deb_dir=${1:-.output/deb}
packages=(optrace liboptrace1 liboptrace-dev python3-optrace)
[ -e "$deb_dir"/liboptrace-cupti_*.deb ] && packages+=(liboptrace-cupti)
passed=0 failed=0

check() {
	local what=$1
	shift
	if out=$("$@" 2>&1); then
		echo "PASS: $what"
		passed=$((passed + 1))
	else
		echo "FAIL: $what: $out"
		failed=$((failed + 1))
	fi
}

cleanup() {
	DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "${packages[@]}" >/dev/null 2>&1 || true
}
trap cleanup EXIT

files=()
for package in "${packages[@]}"; do
	files+=("$(ls "$deb_dir"/"${package}"_*.deb)")
done

# A compute node: the library and its headers alone, without the tool (issue 43).
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	"$PWD/$(ls "$deb_dir"/liboptrace1_*.deb)" "$PWD/$(ls "$deb_dir"/liboptrace-dev_*.deb)" \
	>/dev/null
check "liboptrace1 and liboptrace-dev install without optrace" sh -c \
	'! dpkg -s optrace >/dev/null 2>&1 && [ ! -e /usr/bin/optrace ]'
work=$(mktemp -d)
cat >"$work/app.c" <<'EOF_APP'
#include <optrace/optrace.h>

int main(void)
{
	uint64_t op = optrace_op_begin("app.step", OPTRACE_CALLSITE);

	optrace_op_end(op, OPTRACE_STATUS_OK);
	return optrace_enabled();
}
EOF_APP
check "a program builds with pkg-config and runs against liboptrace1 alone" sh -c \
	"export PKG_CONFIG_LIBDIR=/usr/lib/pkgconfig; cc -o $work/app $work/app.c \$(pkg-config --cflags --libs optrace) && $work/app"
rm -rf "$work"

# apt pulls their dependencies from the archive (or finds them installed).
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	"${files[@]/#/$PWD/}" >/dev/null

check "/usr/bin/optrace runs" /usr/bin/optrace --version
check "man -w optrace" sh -c 'man -M /usr/share/man -w optrace | grep -q /usr/share/man/man8/optrace.8.gz'
check "man -w optrace-record" sh -c 'man -M /usr/share/man -w optrace-record | grep -q optrace-record.8.gz'
check "completion loads in bash -i" bash -i -c \
	'source /usr/share/bash-completion/bash_completion; _completion_loader optrace; complete -p optrace | grep -q _optrace'
check "optrace-serve.service installed, disabled" sh -c \
	'[ "$(systemctl --root=/ is-enabled optrace-serve 2>&1)" = disabled ]'
check "optrace-serve.service verifies" systemd-analyze verify --man=no \
	/usr/lib/systemd/system/optrace-serve.service
check "pkg-config --libs optrace" sh -c \
	'export PKG_CONFIG_LIBDIR=/usr/lib/pkgconfig; [ "$(pkg-config --libs optrace | xargs)" = -loptrace ] && pkg-config --exists --print-errors "optrace >= 0.1"'
check "python3-optrace maps /usr/lib's liboptrace" sh -c \
	'python3 -S -c "import sys; sys.path.insert(0, \"/usr/lib/python3/dist-packages\"); import optrace; print(optrace.LIBOPTRACE)" | grep -qx /usr/lib/liboptrace.so.0.1.0'
check "optrace list finds the probes of the installed liboptrace" sh -c \
	'/usr/bin/optrace list /usr/lib/liboptrace.so.1 | grep -q op_begin'

cleanup
trap - EXIT
check "packages removed" sh -c '! dpkg -s optrace >/dev/null 2>&1 && [ ! -e /usr/bin/optrace ]'
echo "packages: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
