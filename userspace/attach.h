/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Attaching a BPF object's USDT programs to liboptrace's probes. */
#ifndef OPTRACE_ATTACH_H
#define OPTRACE_ATTACH_H

#include <stddef.h>
#include <sys/types.h>

struct bpf_object;
struct bpf_link;

struct attachment {
	struct bpf_link **links;
	size_t count;
	size_t capacity;
};

/*
 * Attaches every SEC("usdt") program of obj to the optrace probe of the same
 * name in the library at path, for process pid (-1: every process that maps
 * the library, now or later). The semaphores are armed by the kernel for as
 * long as the links live. Returns 0 or a negative errno.
 */
int attach_library(struct bpf_object *obj, const char *path, pid_t pid, struct attachment *out);

/* Detaches: the kernel disarms the semaphores it armed. */
void attachment_destroy(struct attachment *attachment);

#endif /* OPTRACE_ATTACH_H */
