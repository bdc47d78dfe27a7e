/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The profile as Perfetto's own trace format: a protobuf Trace of
 * TracePackets (perfetto's protos/perfetto/trace/trace_packet.proto), which
 * ui.perfetto.dev and trace_processor open. It holds what the Chrome export
 * holds, in a fraction of the bytes: a track per process, thread and
 * (process, GPU device, stream), named as Chrome names them
 * (output/track_names.h); operations, task runs, waits and GPU activity as
 * TrackEvent slices (a begin and an end) with the same titles and
 * arguments (debug annotations); flows from each operation to its task
 * points and kernels; and every name, category and string argument
 * interned on the one packet sequence, so that a repeated one costs an id.
 * Written as the profile hands things over, through output/async_out.c:
 * memory stays bounded by what is open.
 */
#ifndef OPTRACE_OUTPUT_PERFETTO_H
#define OPTRACE_OUTPUT_PERFETTO_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model/profile.h"
#include "output/protowire.h"

#define PERFETTO_RECENT 256

/* Strings interned by content, of one kind (event names, argument values). */
struct perfetto_strings {
	struct perfetto_string *slots; /* open addressing; iid 0: empty */
	size_t capacity;	       /* a power of two */
	size_t count;
	size_t bytes; /* of text held */
	/* The text last interned from an address, by address: stored is its copy. */
	struct perfetto_recent {
		const char *text;
		const char *stored;
		uint64_t iid;
	} recent[PERFETTO_RECENT];
};

struct perfetto_writer {
	uint64_t base_ns;	/* timestamps are written relative to this */
	bool show_helpers;	/* nested operations too */
	struct pw_buf packet;	/* the packet being built */
	struct pw_buf interned; /* its new interned entries */
	bool cleared;		/* interned state was (re)started: say so on the next packet */
	struct perfetto_strings names;	/* event names */
	struct perfetto_strings values; /* debug annotations' string values */
	uint64_t tracks;		/* uuids handed out */
	struct idmap processes;		/* (tgid, 0) -> track uuid */
	struct idmap threads;		/* (tgid, tid) -> track uuid */
	struct idmap gpu_tracks;	/* (tgid, device << 32 | stream) -> track uuid */
	struct idmap op_flows;		/* (tgid, op id) -> struct perfetto_flows, until drawn */
	struct idmap run_flows;		/* (tgid, run address) -> struct perfetto_flows */
	uint64_t flow_ids;		/* op → task flows handed out */
	uint64_t gpu_flows;		/* launch → GPU flows handed out, streamed */
	uint64_t packets;
	int error;
	struct async_out *async; /* writes full buffers on a thread of its own */
	char *buffer;		 /* the packets, before they go to the file */
	size_t used;
};

/*
 * Starts the trace on out; fills consumer so that the profile feeds the
 * writer. From then on until perfetto_writer_end() the writer owns out's
 * descriptor. 0, or a negative errno (no memory, no thread).
 */
int perfetto_writer_begin(struct perfetto_writer *writer, FILE *out, uint64_t base_ns,
			  bool show_helpers, struct profile_consumer *consumer);

/* Ends the trace; returns 0 or a negative errno from writing or encoding. */
int perfetto_writer_end(struct perfetto_writer *writer);

#endif /* OPTRACE_OUTPUT_PERFETTO_H */
