/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * How `optrace stat`'s report is written: what stat_print.c, stat_json.c and
 * stat_gpu.c all read, below them so that none includes another's header.
 */
#ifndef OPTRACE_OUTPUT_STAT_OPTIONS_H
#define OPTRACE_OUTPUT_STAT_OPTIONS_H

#include <stdbool.h>
#include <stdio.h>

#include <linux/types.h>

/* How the operation table is ordered: top's s key. */
enum stat_sort {
	STAT_SORT_COST, /* what the user waits for: the larger of CALL, TASK and GPU time */
	STAT_SORT_CALLS,
	STAT_SORT_P99,
	STAT_SORT_FALLBACKS,
	STAT_SORT_ERRORS,
	STAT_SORT_NAME,
	STAT_SORT__COUNT
};

struct stat_print_options {
	bool show_helpers; /* helpers under their callers; every table split by helper */
	bool json;
	int width; /* of text: text_output_width(), 0 for no limit */
	enum stat_sort sort;
	__u32 only_tgid; /* text: this process alone; 0: every one */
	bool no_legends; /* text: the tables without their legends (top's screen) */
	/* JSON: more members of the top-level object, each written as ,"name":value. */
	void (*json_members)(FILE *out, void *ctx);
	void *json_members_ctx;
};

#endif /* OPTRACE_OUTPUT_STAT_OPTIONS_H */
