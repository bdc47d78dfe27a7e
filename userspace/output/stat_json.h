/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* `optrace stat --json`'s report of a snapshot (docs/optrace.md, JSON). */
#ifndef OPTRACE_OUTPUT_STAT_JSON_H
#define OPTRACE_OUTPUT_STAT_JSON_H

#include <stdio.h>

#include "model/aggregates.h"
#include "output/stat_options.h"

/* The whole report of processes tgids as one JSON object. */
void stat_json_print(FILE *out, const struct stat_snapshot *snapshot, const __u32 *tgids,
		     size_t count, const struct stat_print_options *options);

#endif /* OPTRACE_OUTPUT_STAT_JSON_H */
