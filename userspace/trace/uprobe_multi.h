/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * USDT through uprobe_multi links (kernel 6.6+), which libbpf 1.1 does not
 * use: one link for all sites of a probe, cheaper per hit and detached in
 * milliseconds instead of ~0.1 s per site.
 */
#ifndef OPTRACE_TRACE_UPROBE_MULTI_H
#define OPTRACE_TRACE_UPROBE_MULTI_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Not in libbpf 1.1's headers; part of the kernel's ABI since 6.6. */
#define OPTRACE_BPF_TRACE_UPROBE_MULTI 48

/*
 * True if this kernel has uprobe_multi links whose pid filter covers the
 * whole process (6.10+); 6.6 to 6.9 filtered on one thread only, and there
 * optrace keeps to perf-event uprobes.
 */
bool uprobe_multi_supported(void);

/*
 * One link for the sites in offsets (file offsets in the file at path), with
 * their semaphores' file offsets (0: none) and BPF cookies, for process pid
 * (0: every process). Returns the link's fd (close it to detach), or a
 * negative errno.
 */
int uprobe_multi_link(int prog_fd, const char *path, const uint64_t *offsets,
		      const uint64_t *ref_ctr_offsets, const uint64_t *cookies, uint32_t count,
		      pid_t pid);

#endif /* OPTRACE_TRACE_UPROBE_MULTI_H */
