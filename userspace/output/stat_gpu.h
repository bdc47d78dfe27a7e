/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* stat --cuda: a process's GPU tables (output/gpu_tables.c) in stat's report. */
#ifndef OPTRACE_OUTPUT_STAT_GPU_H
#define OPTRACE_OUTPUT_STAT_GPU_H

#include <stdio.h>

#include "model/aggregates.h"
#include "output/stat_options.h"

/* Process tgid's GPU tables, as text or as JSON's value; nothing untraced. */
void stat_gpu_print(FILE *out, const struct stat_snapshot *snapshot, __u32 tgid,
		    const struct stat_print_options *options);

#endif /* OPTRACE_OUTPUT_STAT_GPU_H */
