/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The demo's workloads: what a NumPy user would write, on the demo runtime. */
#ifndef DEMO_WORKLOADS_H
#define DEMO_WORKLOADS_H

#include <stdbool.h>
#include <stddef.h>

enum workload_kind {
	WORKLOAD_JACOBI = 1 << 0,
	WORKLOAD_STATS = 1 << 1,
	WORKLOAD_FALLBACK = 1 << 2,
	WORKLOAD_ALL = WORKLOAD_JACOBI | WORKLOAD_STATS | WORKLOAD_FALLBACK,
	WORKLOAD_HANG = 1 << 3, /* not in all: it stalls on purpose */
};

/* Jacobi sweeps per iteration block; stats and fallback run once a block. */
#define WORKLOAD_BLOCK_SWEEPS 10

struct workload_params {
	unsigned int kinds; /* enum workload_kind bits */
	size_t size;	    /* elements, at least 3 */
	unsigned int iterations;
	bool forever;	       /* repeat until should_stop() */
	unsigned int pause_ms; /* between rounds, when forever */
	unsigned int stall_ms; /* hang: how long the stall lasts, 0: until released */
	bool (*should_stop)(void);
};

struct workload_summary {
	unsigned int rounds; /* how often the whole set ran */
	unsigned int jacobi_sweeps;
	double jacobi_first_residual;
	double jacobi_last_residual;
	double jacobi_middle;
	unsigned int stats_passes;
	double stats_mean;
	double stats_var;
	double stats_norm;
	double stats_dot;
	unsigned int fallback_passes;
	double fallback_median;
	unsigned int fallback_errors_seen; /* deliberate errors reported as such */
	unsigned int hang_passes;
};

/* -w hang: the next pass stalls too (safe from a signal handler). */
void workload_hang_again(void);

/* 0, or -1 after printing why to stderr (a wrong result, a failed call). */
int workload_run(const struct workload_params *params, struct workload_summary *summary);

#endif /* DEMO_WORKLOADS_H */
