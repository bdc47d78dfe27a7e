/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The recorder's part that needs no BPF: the records the ring buffer brings
 * and the buffers idle threads hold, routed into a capture writer. Batches
 * of the fast path go through the reorder window (trace/batch_decode.h),
 * bounded to held_max events; the names, ranks and strings the capture
 * needs are synthesized the first time they are met (session/record_meta.h);
 * the stop is one instant; the end marker counts what was lost, in the
 * kernel and here. session/recorder.c drives it from the BPF side; the unit
 * tests (tests/unit/test_recorder.c) feed it directly.
 */
#ifndef OPTRACE_SESSION_RECORDER_CORE_H
#define OPTRACE_SESSION_RECORDER_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/types.h>

#include "bpf/events.h"
#include "capture/capture.h"
#include "common/idmap.h"
#include "trace/batch_decode.h"
#include "session/record_meta.h"

/*
 * Overload (events come faster than they are written): the reorder window
 * holds at most HELD_MAX events (64 bytes each), then writes them early
 * (counted as late if an earlier one comes after).
 */
#define HELD_MAX (2u << 20)

struct recorder_core {
	struct capture_writer *writer;
	const struct record_facts *facts;
	bool fast_path;
	struct batch_decoder decoder;
	struct idmap strings; /* (process, address) of strings in the capture */
	struct idmap named;   /* (process, thread or 0) whose names are in the capture */
	struct idmap ranked;  /* (process, 0) whose rt_init is in the capture */
	uint64_t events;
	uint64_t gpu_records;	  /* tells report and export whether to read GPU records ahead */
	uint64_t gpu_launches;	  /* ... or to attribute them as they come */
	bool gpu_only;		  /* after the stop, while the collector's last flush comes */
	int error;		  /* the first error: the capture holds what came before */
	uint64_t decoded_written; /* the decoder's events written */
	uint64_t pushed;	  /* events handed to the decoder one by one (rt_init) */
	uint64_t held_max;	  /* HELD_MAX, or less in the tests */
	bool window_shrunk;	  /* held_max reached: said once */
};

/* Routes into writer (still the caller's to close), asking facts (NULL: this machine's). */
void recorder_core_init(struct recorder_core *core, struct capture_writer *writer,
			const struct record_facts *facts);

/* Recording begins: events before start_ns are an earlier tracer's; batches if fast_path. */
void recorder_core_start(struct recorder_core *core, bool fast_path, uint64_t start_ns);

/*
 * A record of the ring buffer, size bytes: a batch goes to the reorder
 * window, anything else to the capture, after the names and the rank of
 * what it is the first to name. Always 0: an error is kept in core->error.
 */
int recorder_core_record(struct recorder_core *core, const void *data, size_t size);

/*
 * An idle thread's buffer (tracer_read_buffers()'s callback, ctx the core):
 * its events to the reorder window, the strings they name read now.
 */
int recorder_core_idle_buffer(void *ctx, pid_t pid, uint32_t tid, uint64_t address,
			      uint64_t sequence, uint32_t count,
			      const struct optrace_event *events);

/*
 * Events older than watermark_ns go to the capture, in time order; all
 * that wait when more than held_max do (memory stays bounded).
 */
void recorder_core_write_ordered(struct recorder_core *core, uint64_t watermark_ns);

/* A clock anchor in the capture. */
void recorder_core_clock(struct recorder_core *core);

/* Each second: a clock anchor, the chunk written, the window's unused room given back. */
void recorder_core_tick(struct recorder_core *core);

/* The stop instant: no probe event after stop_ns goes in. */
void recorder_core_stop_at(struct recorder_core *core, uint64_t stop_ns);

/* The events still waiting, written; what the decoder met, said. */
void recorder_core_finish(struct recorder_core *core);

/* The end marker's counters: the kernel's losses (enum record_loss) and the core's. */
void recorder_core_counters(const struct recorder_core *core,
			    const uint64_t losses[RECORD_LOSS__COUNT],
			    struct capture_counter counters[CAPTURE_COUNTER__COUNT]);

/*
 * The capture closed with those counters; its size in *file_bytes. The
 * writer's first error (negative errno), or 0; the writer is gone either way.
 */
int recorder_core_close(struct recorder_core *core, const uint64_t losses[RECORD_LOSS__COUNT],
			uint64_t *file_bytes);

void recorder_core_free(struct recorder_core *core);

#endif /* OPTRACE_SESSION_RECORDER_CORE_H */
