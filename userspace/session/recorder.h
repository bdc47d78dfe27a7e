/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * optrace record's engine: every probe hit of the targets, one record each,
 * streamed through a BPF ring buffer (bpf/record.bpf.c) into a capture file
 * that `optrace report` and `optrace export` read. What it does with each
 * record is session/recorder_core.h's; here are the BPF object, the ring
 * buffer's reads, the loop, the stop and the kernel's loss counters.
 *
 * recorder_open(), recorder_run(), recorder_stop(), recorder_close(): each
 * says what failed on stderr; the command turns their errors into its exit
 * status.
 */
#ifndef OPTRACE_SESSION_RECORDER_H
#define OPTRACE_SESSION_RECORDER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct tracer_options;

struct recorder_options {
	const char *output;	 /* the capture file, written as OUTPUT.partial until the end */
	long ringbuf_mb;	 /* the ring buffer's size, a power of two */
	bool no_gpu;		 /* the optrace_gpu probes left alone */
	bool cuda;		 /* the GPU collector given to the targets (session/cuda.h) */
	bool quiet;		 /* no status line, no "wrote" */
	bool force;		 /* --force: common/outfile.h's out_policy */
	long duration_ms;	 /* 0: until Ctrl-C, SIGTERM or the targets' end */
	uint16_t capture_format; /* 0: the newest */
	/* The targets (trace/tracer.h's): attached to, and described in the capture's header. */
	const struct tracer_options *targets;
};

struct recorder;

/*
 * Opens the BPF object for the targets of trace/tracer.h, the capture
 * (before the load, so that an -o that cannot be written fails at once),
 * loads and attaches: recording starts. From here SIGINT and SIGTERM set
 * tracer_interrupted(). *recorder is NULL if the BPF object cannot be opened,
 * else to be closed with recorder_close() whatever is returned: 0 or a
 * negative errno.
 */
int recorder_open(struct recorder **recorder, const struct recorder_options *options);

/* Until Ctrl-C, the duration, the targets' end or a write error: the ring drained, in order. */
void recorder_run(struct recorder *recorder);

/*
 * The stop is one instant: what the targets did up to here, handed over or
 * still in their threads' buffers, and nothing after; GPU records while the
 * collector's last flush comes.
 */
void recorder_stop(struct recorder *recorder);

/*
 * Detaches (ending a command started), closes the capture with its counters
 * and puts it in place (one that recorded nothing is removed), frees
 * recorder. *command_status: the command's exit status, as the tracer gives
 * it, or 0. Returns err, else the first error of the recording, or 0.
 */
int recorder_close(struct recorder *recorder, int err, int *command_status);

#endif /* OPTRACE_SESSION_RECORDER_H */
