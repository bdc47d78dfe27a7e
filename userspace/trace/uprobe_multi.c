// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A raw BPF_LINK_CREATE: libbpf 1.1's bpf_link_create() knows neither the
 * attach type nor its fields. The layout is the kernel's union bpf_attr
 * (link_create.uprobe_multi).
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "trace/uprobe_multi.h"

struct uprobe_multi_attr {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint64_t path;
	uint64_t offsets;
	uint64_t ref_ctr_offsets;
	uint64_t cookies;
	uint32_t cnt;
	uint32_t multi_flags;
	uint32_t pid;
	uint32_t pad;
};

_Static_assert(offsetof(struct uprobe_multi_attr, path) == 16, "bpf_attr layout");
_Static_assert(offsetof(struct uprobe_multi_attr, cnt) == 48, "bpf_attr layout");
_Static_assert(offsetof(struct uprobe_multi_attr, pid) == 56, "bpf_attr layout");

int uprobe_multi_link(int prog_fd, const char *path, const uint64_t *offsets,
		      const uint64_t *ref_ctr_offsets, const uint64_t *cookies, uint32_t count,
		      pid_t pid)
{
	struct uprobe_multi_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = (uint32_t)prog_fd;
	attr.attach_type = OPTRACE_BPF_TRACE_UPROBE_MULTI;
	attr.path = (uint64_t)(uintptr_t)path;
	attr.offsets = (uint64_t)(uintptr_t)offsets;
	attr.ref_ctr_offsets = (uint64_t)(uintptr_t)ref_ctr_offsets;
	attr.cookies = (uint64_t)(uintptr_t)cookies;
	attr.cnt = count;
	attr.pid = (uint32_t)pid;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : (int)fd;
}

bool uprobe_multi_supported(void)
{
	static const struct bpf_insn return_zero[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		    .expected_attach_type = (enum bpf_attach_type)OPTRACE_BPF_TRACE_UPROBE_MULTI);
	uint64_t offset = 0;
	int prog_fd, fd;
	bool supported;

	prog_fd =
		bpf_prog_load(BPF_PROG_TYPE_KPROBE, "optrace_probe", "GPL", return_zero, 2, &opts);
	if (prog_fd < 0)
		return false;
	/*
	 * "/" is no regular file: a kernel with uprobe_multi gets past the
	 * attach type and fails on the path (EBADF); one without fails first.
	 * With pid -1, 6.10+ (process-wide pid filter) fails earlier: EINVAL.
	 */
	fd = uprobe_multi_link(prog_fd, "/", &offset, NULL, NULL, 1, 0);
	supported = fd == -EBADF;
	if (fd >= 0)
		close(fd);
	if (supported) {
		fd = uprobe_multi_link(prog_fd, "/", &offset, NULL, NULL, 1, -1);
		supported = fd == -EINVAL;
		if (fd >= 0)
			close(fd);
	}
	close(prog_fd);
	return supported;
}
