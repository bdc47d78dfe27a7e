/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What optrace export shows of the demo, against the demo's ground truth
 * (docs/demo.md), for the tests of optrace export (test_export*.c): the
 * truth split into its processes' blocks, operation titles parsed and
 * counted into the truth's keys, and the counts compared with the truth's.
 */
#ifndef OPTRACE_TEST_EXPORT_TRUTH_H
#define OPTRACE_TEST_EXPORT_TRUTH_H

#include <optrace/abi.h>
#include <stdbool.h>
#include <sys/types.h>

#include "testlib.h"

/* The most processes of one recorded run of the demo. */
#define DEMO_MAX_PROCESSES 4

/* ---- the truth, one block per process ------------------------------------------ */

struct truth_block {
	pid_t pid;
	struct counts counts;
};

/* Splits the truth into its blocks (files in test_dir) and parses each; returns how many. */
int truth_blocks(const char *path, struct truth_block *blocks, int max);
void truth_blocks_free(struct truth_block *blocks, int count);

/* Only the keys of truth that start with prefix. */
void counts_select(const struct counts *truth, const char *prefix, struct counts *out);
/* The two are the same, else the test fails with what, and what differs. */
void assert_counts_equal(const struct counts *expected, const struct counts *got, const char *what);

/* ---- titles --------------------------------------------------------------------- */

/* "demo.add [deferred; fallback: unsupported_dtype; CPU×2 OMP×1] (cut) site" */
struct title {
	char name[128];
	char mode[32]; /* "none" when the title says none */
	char fallback[64];
	long points[OPTRACE_VARIANT__COUNT];
	bool cut;
};

void title_parse(const char *text, struct title *t);

/*
 * A range's or op event's title counted into keys "op NAME DEPTH", "mode
 * NAME MODE", "fallback NAME REASON", and for depth 0 also "mode0 NAME
 * MODE", "fallback0 NAME REASON" and "points VARIANT" (its tree's points).
 */
void count_title(struct counts *counts, const struct title *t, unsigned int depth);

/* ---- what a profile shows, against the truth ------------------------------------------ */

/* Depth-0 operations only: counts per name exact, modes and fallbacks within the truth's share. */
void check_depth0(const char *what, const struct counts *got, const struct counts *truth);
/* Every operation at every depth: per (name, depth), per mode and per fallback exact. */
void check_all_depths(const char *what, const struct counts *got, const struct counts *truth);
/* Task points in depth-0 titles, per variant: every task point of the truth. */
void check_title_points(const char *what, const struct counts *got, const struct counts *truth);

#endif /* OPTRACE_TEST_EXPORT_TRUTH_H */
