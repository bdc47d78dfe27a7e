/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * stat's aggregates (model/aggregates.h) in Prometheus' text exposition
 * format 0.0.4, as `optrace serve` answers GET /metrics: counters as the
 * kernel keeps them (cumulative), one series per distinct label set. Rows
 * that the kernel tells apart by what the labels leave out (the caller, a
 * fallback's detail, two addresses of one name) are summed into one series.
 * Label values are the names as `report` prints them, valid UTF-8 (a byte
 * that is not becomes U+FFFD) with backslash, quote and newline escaped.
 * Pure: a snapshot in, text out.
 */
#ifndef OPTRACE_OUTPUT_PROMETHEUS_H
#define OPTRACE_OUTPUT_PROMETHEUS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model/aggregates.h"

/* What prometheus_write writes, for the Content-Type header. */
#define PROMETHEUS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct prometheus_options {
	/*
	 * Whether process tgid has exited (serve keeps its series for the
	 * retention period): optrace_processes counts it as "exited", not
	 * "running". NULL: every process runs.
	 */
	bool (*exited)(void *ctx, __u32 tgid);
	/*
	 * The age of the oldest operation and of the oldest task point open
	 * now in running process tgid (0: none known to have begun while
	 * traced), for optrace_oldest_open_seconds; false: not known (gone, or
	 * a liboptrace without thread views). NULL: no such gauge.
	 */
	bool (*oldest_open)(void *ctx, __u32 tgid, uint64_t *op_ns, uint64_t *point_ns);
	void *ctx;
};

/* Every metric of snapshot into out. 0, or -ENOMEM (out may then hold a part). */
int prometheus_write(FILE *out, const struct stat_snapshot *snapshot,
		     const struct prometheus_options *options);

#endif /* OPTRACE_OUTPUT_PROMETHEUS_H */
