/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What a tracing command (stat, top, record, serve) is told to trace: the
 * argp child of -p, -a, --lib, --attach and --per-event, and -- COMMAND,
 * filling a struct tracer_options the command owns and hands to
 * tracer_prepare(). With the parsers of the numbers and times commands take.
 */
#ifndef OPTRACE_CLI_TRACER_FLAGS_H
#define OPTRACE_CLI_TRACER_FLAGS_H

#include <argp.h>
#include <sys/types.h>

#include "trace/tracer.h"

/* How a command takes its targets (or-ed); 0: -p PID..., -a, or -- COMMAND. */
enum tracer_flags_kinds {
	TRACER_FLAGS_NO_COMMAND = 1 << 0,  /* no -- COMMAND: it watches running processes (top) */
	TRACER_FLAGS_DEFAULT_ALL = 1 << 1, /* no target given means -a (serve) */
};

/*
 * The argp child for -p, -a, --lib, --attach and --per-event, filling
 * options; at the end of the parse it checks that one kind of target was
 * given. One command parses per process: the child is made once.
 */
const struct argp *tracer_flags_argp(struct tracer_options *options, unsigned int kinds);

/*
 * Takes the command after "--" out of argv into options->command, before
 * argp_parse(). Returns the argc left to parse, or -1 (with a message) for
 * a bare "--".
 */
int tracer_flags_split_command(int argc, char **argv, struct tracer_options *options);

/* A positive integer option (at most 10^9), or an argp error naming what. */
long tracer_parse_positive(const char *arg, struct argp_state *state, const char *what);

/*
 * A time as perf and timeout(1) take it: "2", "0.5", "500ms", "1.5s", "2m",
 * "1h" (seconds when no unit); in milliseconds, at least 1. Refuses anything
 * else with what it takes.
 */
long tracer_parse_duration_ms(const char *arg, struct argp_state *state, const char *what);

/*
 * A -p argument: one process id, or several separated by commas as perf
 * takes them (-p 123,456), appended to pids (count of them, at most max), a
 * thread's id as its process's; an argp error for anything else.
 */
void tracer_parse_pids(const char *arg, struct argp_state *state, pid_t *pids, int *count, int max);

#endif /* OPTRACE_CLI_TRACER_FLAGS_H */
