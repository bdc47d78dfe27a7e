/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The profile as Chrome trace JSON, which Perfetto and chrome://tracing
 * open: a track per thread, operations as properly nested slices, task
 * runs on their workers' tracks, flows from the launching operation to each
 * task point, waits; GPU kernels, copies and memsets on a track per
 * (process, device, stream), with flows from the op or task slice that
 * launched them. Written as the profile hands things over: memory stays
 * bounded by the profile's.
 */
#ifndef OPTRACE_OUTPUT_CHROME_H
#define OPTRACE_OUTPUT_CHROME_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model/gpu_aggregates.h"
#include "model/profile.h"

struct chrome_writer {
	FILE *out;
	uint64_t base_ns;  /* timestamps are written relative to this */
	bool show_helpers; /* nested operations too */
	uint64_t events;
	uint64_t flow_ids;
	struct idmap threads_named; /* (tgid, tid) seen */
	struct idmap processes_named;
	struct idmap gpu_tracks; /* (tgid, device << 32 | stream) -> its track's tid */
	uint32_t gpu_track_count;
	int error;
	struct async_out *async; /* writes full buffers on a thread of its own */
	char *buffer;		 /* the events, before they go to out */
	size_t used;
	/* Set before the end, if there was GPU activity: its losses, in otherData. */
	const struct gpu_summary *gpu_losses;
};

/*
 * Starts the document; fills consumer so that the profile feeds the writer.
 * From then on until chrome_writer_end() the writer owns out's descriptor.
 * 0, or a negative errno (no memory, no thread).
 */
int chrome_writer_begin(struct chrome_writer *writer, FILE *out, uint64_t base_ns,
			bool show_helpers, struct profile_consumer *consumer);

/* Ends the document; returns 0 or a negative errno from writing. */
int chrome_writer_end(struct chrome_writer *writer);

#endif /* OPTRACE_OUTPUT_CHROME_H */
