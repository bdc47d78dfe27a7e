/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The Chrome trace JSON of optrace export against the demo's ground truth,
 * for the tests of optrace export (test_export*.c).
 */
#ifndef OPTRACE_TEST_EXPORT_CHROME_H
#define OPTRACE_TEST_EXPORT_CHROME_H

#include <stdbool.h>

#include "export_truth.h"
#include "json_read.h"

/*
 * The document at path: strict JSON, UTF-8, and what json_read makes of
 * it, with a traceEvents array; *text is the file's text (to free).
 */
struct jv *chrome_read(const char *path, char **text);

/*
 * The trace at path against the truth's blocks (one per process, at most
 * DEMO_MAX_PROCESSES): task and op events (at depth 0, or every depth with
 * show_helpers), one flow per task point, X events nested or disjoint.
 */
void check_chrome(const char *path, const struct truth_block *blocks, int count, bool show_helpers);

#endif /* OPTRACE_TEST_EXPORT_CHROME_H */
