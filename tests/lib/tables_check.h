/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What stat's and report's tables must say of the demo's fallback workload
 * (issue 15): operations ranked by what the user waits for, every table
 * grouped alike, values in words and percentiles as exact as they are.
 */
#ifndef OPTRACE_TABLES_CHECK_H
#define OPTRACE_TABLES_CHECK_H

#include <stdbool.h>

/*
 * The JSON of `optrace stat|report --json` (exact: report's percentiles),
 * and its text without and with --show-helpers; fails the test on the first
 * thing wrong.
 */
void check_demo_tables(const char *json, const char *text, const char *helpers_text, bool exact);

#endif /* OPTRACE_TABLES_CHECK_H */
