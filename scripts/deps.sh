#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Installs the Debian 12 packages that optrace needs to build, test and
# benchmark. Idempotent: installs only what is missing, and runs apt-get
# update once, only then.
#
#   scripts/deps.sh                  install what is missing (as root)
#   scripts/deps.sh --tests          the same, and the runtimes only the tests use
#   scripts/deps.sh --check [--tests]  exit 1 and list what is missing; install nothing
set -euo pipefail

packages=(
	make gcc libc6-dev pkg-config	# the build
	clang llvm			# BPF objects (clang -target bpf), llvm-strip
	libbpf-dev bpftool libelf-dev zlib1g-dev	# the loader and skeletons
	systemtap-sdt-dev		# dtrace -h/-G and sys/sdt.h for the probes
	check				# unit and integration tests
	bpftrace			# cross-check of the probes in tests and benchmarks
	bc time				# the benchmarks' arithmetic and peak memory
	python3-dev python3-numpy	# the optrace Python module, the Python demo
	python3-cffi			# cuPyNumeric's real code in the tests (../shared/cupynumeric)
	lttng-tools liblttng-ust-dev	# LTTng-UST, the benchmarks' overhead anchor
	uftrace				# uftrace, another of bench/probe_overhead.sh's anchors
	clang-format cppcheck		# make format-check, make lint
	protobuf-compiler python3-protobuf	# decoding export --perfetto in the tests
	libmicrohttpd-dev prometheus	# optrace serve; the real Prometheus of its tests
	libgnutls28-dev libcrypt-dev	# serve --web-config: TLS, bcrypt
	openssl curl			# the TLS tests' certificate and client
	strace systemd			# the serve unit's test: its system calls, its score
	pandoc help2man bash-completion	# man pages (make man), the completion's helpers
	debhelper dpkg-dev		# make deb
)
# The real runtimes that the adapters' tests trace (adapters/*/test_*.py): the
# tests' set-up installs them, the main job does without.
test_packages=(
	python3-torch libtorch-dev	# optrace.torch: PyTorch, and the headers of optrace._torch
	libstarpu-dev starpu-examples	# liboptrace-starpu: StarPU 1.3, its example binaries
	pocl-opencl-icd ocl-icd-opencl-dev	# an OpenCL device on the CPU: StarPU's second variant
)

check=0
for arg in "$@"; do
	case $arg in
	--check) check=1 ;;
	--tests) packages+=("${test_packages[@]}") ;;
	*) echo "deps.sh: unknown option '$arg' (--check, --tests)" >&2; exit 2 ;;
	esac
done

missing=()
for package in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$package")
	fi
done

if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

if [ "$check" -eq 1 ]; then
	echo "missing packages: ${missing[*]}" >&2
	exit 1
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: missing packages: ${missing[*]}" >&2
	echo "deps.sh: run as root (or: sudo apt-get install ${missing[*]})" >&2
	exit 1
fi

echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
