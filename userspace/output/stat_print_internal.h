/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What stat_print.c and stat_json.c share. */
#ifndef OPTRACE_OUTPUT_STAT_PRINT_INTERNAL_H
#define OPTRACE_OUTPUT_STAT_PRINT_INTERNAL_H

#include <stdio.h>

#include "model/aggregates.h"
#include "output/stat_print.h"

/* A duration as "61.0us", "~61.0us" (within 0.4%) or "<=65.5us" (a log2 bound). */
const char *stat_print_duration(struct stat_quantile q, char *buffer, size_t size);

/* "ROOT", or "ROOT via HELPER" (helper not 0); not yet made printable. */
const char *stat_print_label(const struct stat_snapshot *snapshot, __u32 tgid, __u64 root,
			     __u64 helper, char *buffer, size_t size);

/* The whole report as JSON (docs/optrace.md, JSON). */
/* stat --cuda: process tgid's GPU tables (output/gpu_tables.c), as text or JSON's value. */
void stat_print_gpu(FILE *out, const struct stat_snapshot *snapshot, __u32 tgid,
		    const struct stat_print_options *options);

void stat_print_json(FILE *out, const struct stat_snapshot *snapshot, const __u32 *tgids,
		     size_t count, const struct stat_print_options *options);

#endif /* OPTRACE_OUTPUT_STAT_PRINT_INTERNAL_H */
