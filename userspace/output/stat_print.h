/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* `optrace stat`'s report of a snapshot (model/aggregates.h), as text or as JSON. */
#ifndef OPTRACE_OUTPUT_STAT_PRINT_H
#define OPTRACE_OUTPUT_STAT_PRINT_H

#include <stdio.h>

#include "model/aggregates.h"
#include "output/stat_options.h"

/* "time", "calls", "p99", "fallbacks", "errors", "name". */
const char *stat_sort_name(enum stat_sort sort);

/*
 * One report of every process in the snapshot: each table grouped by the
 * operation the user called (model/aggregates.h), most time first, a legend
 * under each header.
 */
void stat_print(FILE *out, struct stat_snapshot *snapshot,
		const struct stat_print_options *options);

#endif /* OPTRACE_OUTPUT_STAT_PRINT_H */
