/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A tracer inside the test process, for unit tests without root or BPF:
 * it arms liboptrace's semaphores as a tracer would and turns each probe
 * site's nop into int3, reading the arguments from the trap's registers
 * with the note's argument specification.
 */
#ifndef OPTRACE_SELF_TRACE_H
#define OPTRACE_SELF_TRACE_H

#include <stdint.h>
#include <sys/types.h>

#define SELF_TRACE_MAX_ARGS 6

struct self_event {
	char probe[32];
	pid_t tid;
	int argc;
	uint64_t args[SELF_TRACE_MAX_ARGS];
};

/* Starts tracing liboptrace's probes; 0 or a negative errno. */
int self_trace_start(void);
/* Restores the probe sites and the semaphores. */
void self_trace_stop(void);

/* The events so far, in order of firing. */
const struct self_event *self_trace_events(size_t *count);

#endif /* OPTRACE_SELF_TRACE_H */
