/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef OPTRACE_SESSION_STAT_READ_H
#define OPTRACE_SESSION_STAT_READ_H

#include <stdbool.h>

#include "model/aggregates.h"

struct stat_bpf;

/*
 * Reads the kernel's aggregates into snapshot, summed over CPUs. With clear,
 * the aggregates are deleted as they are read (interval mode); the strings
 * are kept. Returns 0 or a negative errno.
 */
int stat_read_snapshot(struct stat_bpf *skel, struct stat_snapshot *snapshot, bool clear);

#endif /* OPTRACE_SESSION_STAT_READ_H */
