/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * serve's engine: the kernel's aggregates (session/stat_live.h) as
 * Prometheus metrics, and the retention of the processes that exited (their
 * series kept for a while, then their rows forgotten). Not thread-safe: the
 * caller holds one lock around every call, as scrapes and the sweep share
 * the maps.
 */
#ifndef OPTRACE_SESSION_SERVE_METRICS_H
#define OPTRACE_SESSION_SERVE_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "common/idmap.h"

struct stat_bpf;

struct serve_metrics {
	struct stat_bpf *skel;
	uint64_t retention_ns;
	struct idmap departed; /* (tgid, 0) -> since when it exited, CLOCK_MONOTONIC ns */
};

void serve_metrics_init(struct serve_metrics *metrics, struct stat_bpf *skel, long retention_s);

/*
 * Each second: the processes that exited start their retention, and those
 * whose retention passed are forgotten. A pid that comes back (the kernel
 * gave it to a new process) goes on in its predecessor's series.
 */
void serve_metrics_sweep(struct serve_metrics *metrics);

/* A scrape's text (malloc'ed, *length bytes): 0, or a negative errno, said. */
int serve_metrics_write(struct serve_metrics *metrics, char **text, size_t *length);

void serve_metrics_free(struct serve_metrics *metrics);

#endif /* OPTRACE_SESSION_SERVE_METRICS_H */
