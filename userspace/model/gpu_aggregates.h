/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The GPU part of `optrace report`: device time per operation the user
 * called and per variant of the task that launched it, and per kernel.
 */
#ifndef OPTRACE_MODEL_GPU_AGGREGATES_H
#define OPTRACE_MODEL_GPU_AGGREGATES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model/aggregates.h"
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

/* Where GPU records were lost on their way. */
enum gpu_drop_source {
	GPU_DROP_ACTIVITY_BUFFER, /* CUPTI's activity buffers were full */
	GPU_DROP_API_CALLBACK,	  /* launches the collector's API callback could not mark */
	GPU_DROP_RING_BUFFER,	  /* record's ring buffer was full; stat: its kernel maps */
	GPU_DROP_SOURCES
};

/* The totals above the tables. */
struct gpu_summary {
	uint64_t kernels, copies, memsets;
	uint64_t in_ops;     /* attributed to an operation or a task */
	uint64_t outside;    /* launched where no operation was open */
	uint64_t unlaunched; /* whose launch was not recorded */
	uint64_t invalid_times;
	uint64_t malformed;
	uint64_t dropped[GPU_DROP_SOURCES];
	const char *ring_buffer; /* what GPU_DROP_RING_BUFFER is called: "ring_buffer" */
};

struct gpu_report {
	bool show_helpers; /* op rows split by the (helper) operation that launched */
	bool present;	   /* there was GPU activity to report (else JSON null) */
	struct gpu_summary summary;
	struct gpu_report_table ops;
	struct gpu_report_table kernels;
	uint64_t activities;
	int error; /* the first -ENOMEM */
};

void gpu_report_init(struct gpu_report *report);
/* One attributed activity (a struct profile_consumer's gpu callback). */
void gpu_report_add(struct gpu_report *report, const struct profile *profile,
		    const struct profile_gpu *gpu);
/* The summary from a profile's GPU index and the capture's ring buffer losses. */
void gpu_report_summarize(struct gpu_report *report, const struct profile *profile,
			  uint64_t ring_buffer_lost);
/*
 * stat --cuda: the tables of process tgid from the kernel's aggregates, as
 * report's from a capture (report->show_helpers set first). 0 or -ENOMEM.
 */
int gpu_report_from_stat(struct gpu_report *report, const struct stat_snapshot *snapshot,
			 __u32 tgid);
/* stat's name of an enum stat_gpu_drop, as JSON and serve say it; NULL if unknown. */
const char *stat_gpu_drop_name(unsigned int source);
/* The text that names a drop source, and its JSON key. */
const char *gpu_drop_source_text(const struct gpu_summary *summary, int source);
const char *gpu_drop_source_key(const struct gpu_summary *summary, int source);
/* Sorts the tables, the most GPU time first; no add after it. */
void gpu_report_sort(struct gpu_report *report);
void gpu_report_free(struct gpu_report *report);

#endif /* OPTRACE_MODEL_GPU_AGGREGATES_H */
