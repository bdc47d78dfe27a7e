/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * From a capture's profile to the aggregates `optrace stat` prints: the same
 * tables, computed in userspace from every event instead of in the kernel,
 * and more: each operation row's work (its task points' and GPU time, its
 * helpers' included) and every duration, for exact percentiles (8 bytes a
 * duration, up to DURATIONS_EXACT_MAX a row: model/durations.h).
 */
#ifndef OPTRACE_MODEL_PROFILE_AGGREGATES_H
#define OPTRACE_MODEL_PROFILE_AGGREGATES_H

#include "capture/capture.h"
#include "model/gpu_aggregates.h"
#include "model/profile.h"
#include "model/aggregates.h"

struct report_builder {
	bool by_site;  /* operations the user called, one row per call site */
	bool internal; /* helpers too, one row per (library-internal) call site */
	struct stat_snapshot snapshot;
	struct idmap index; /* hash of a row's key -> row number + 1, per table */
	struct gpu_report gpu;
	int error; /* the first -ENOMEM */
};

/* A consumer that aggregates into builder->snapshot. */
void report_builder_init(struct report_builder *builder, struct profile_consumer *consumer,
			 bool by_site, bool internal);

/*
 * After profile_finish(): copies the strings in, whole, and counts those
 * the kernel could not read or cut, and the ends whose begin was not
 * captured; the snapshot is ready. 0 or -ENOMEM.
 */
int report_builder_finish(struct report_builder *builder, const struct profile *profile);

/*
 * What the capture's end marker says was lost, into the snapshot's losses:
 * each counter lost.NAME as NAME (into stat's own where it has one, such
 * as batch_missing), the records the recorder could not write as
 * "unwritten"; ringbuf_full, strings, gpu_unreadable and unwritten are
 * there even when 0 or the capture has no end marker. 0 or -ENOMEM.
 */
int report_builder_add_capture(struct report_builder *builder, const struct capture_status *status);

void report_builder_free(struct report_builder *builder);

#endif /* OPTRACE_MODEL_PROFILE_AGGREGATES_H */
