/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The GPU part of `optrace report`: device time per operation the user
 * called and per variant of the task that launched it, and per kernel.
 */
#ifndef OPTRACE_GPU_REPORT_H
#define OPTRACE_GPU_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model/profile.h"

/* One row per (operation, variant) or per (kernel, operation). */
struct gpu_report_row {
	char *name;	  /* the operation, or the kernel */
	char *op;	  /* kernel rows: the operation */
	int variant;	  /* enum optrace_variant; -1: launched outside any task */
	uint64_t kernels; /* kernel rows: calls */
	uint64_t copies;
	uint64_t memsets;
	uint64_t gpu_ns;
	uint64_t max_ns;
	uint64_t bytes;
};

struct gpu_report_table {
	struct gpu_report_row *rows;
	size_t count;
	size_t capacity;
	struct idmap index; /* hash of the row's key -> row + 1 */
};

struct gpu_report {
	bool show_helpers; /* op rows split by the (helper) operation that launched */
	struct gpu_report_table ops;
	struct gpu_report_table kernels;
	uint64_t activities;
	int error; /* the first -ENOMEM */
};

void gpu_report_init(struct gpu_report *report);
/* One attributed activity (a struct profile_consumer's gpu callback). */
void gpu_report_add(struct gpu_report *report, const struct profile *profile,
		    const struct profile_gpu *gpu);
/* Sorts the tables, the most GPU time first; no add after it. */
void gpu_report_sort(struct gpu_report *report);
void gpu_report_free(struct gpu_report *report);

#endif /* OPTRACE_GPU_REPORT_H */
