/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Attaching a BPF object's SEC("usdt") programs to liboptrace's probes,
 * through uprobe_multi links where the kernel has them, else through
 * libbpf's USDT support (one perf-event uprobe per site). The programs and
 * what they see are the same either way.
 */
#ifndef OPTRACE_TRACE_ATTACH_H
#define OPTRACE_TRACE_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct bpf_object;
struct bpf_link;

enum attach_mode {
	ATTACH_AUTO,	     /* uprobe_multi if the kernel has it */
	ATTACH_UPROBE_MULTI, /* fail if it has not */
	ATTACH_PERF_EVENT,   /* libbpf's way */
};

struct attacher {
	struct bpf_object *obj;
	bool uprobe_multi;
	int next_spec_id;
	struct bpf_link **links; /* perf-event path */
	size_t link_count;
	size_t link_capacity;
	int *fds; /* uprobe_multi path */
	size_t fd_count;
	size_t fd_capacity;
};

/* Parses "auto", "uprobe-multi" or "perf-event"; -1 otherwise. */
int attach_mode_parse(const char *text);

/*
 * Chooses the way to attach; call after opening obj and before loading it
 * (uprobe_multi programs are loaded with their own attach type). Returns 0,
 * or -EOPNOTSUPP when uprobe_multi is asked for and the kernel lacks it.
 */
int attacher_prepare(struct attacher *attacher, struct bpf_object *obj, enum attach_mode mode);

/*
 * Attaches every SEC("usdt") program of the loaded object to the optrace
 * probe of the same name in the library at path, for process pid (-1: every
 * process that maps the library, now or later). The kernel arms each
 * probe's semaphore while attached. Returns 0 or a negative errno.
 */
int attacher_attach(struct attacher *attacher, const char *path, pid_t pid);

/* Detaches everything: the kernel disarms the semaphores it armed. */
void attacher_destroy(struct attacher *attacher);

#endif /* OPTRACE_TRACE_ATTACH_H */
