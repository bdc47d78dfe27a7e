/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The targets of a tracing command (stat, top, record): processes by pid,
 * every process that maps liboptrace (-a), or a command optrace starts and
 * follows with its descendants (-- COMMAND). Attach, liveness and detach;
 * the options come parsed (cli/tracer_flags.c).
 */
#ifndef OPTRACE_TRACE_TRACER_H
#define OPTRACE_TRACE_TRACER_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "trace/attach.h"
#include "trace/batch_read.h"

#define TRACER_MAX_PIDS 64
#define TRACER_MAX_LIBRARIES 64
#define TRACER_MAX_FOUND 4096

/*
 * What to trace, as the command line gave it (cli/tracer_flags.c parses
 * it): one kind of target. A plain struct the command owns and hands to
 * tracer_prepare(), which keeps its own copy: no global, so that one
 * process could hold two tracers.
 */
struct tracer_options {
	pid_t pids[TRACER_MAX_PIDS];
	int pid_count;
	bool all;
	char **command; /* after "--" */
	const char *library;
	enum attach_mode attach_mode;
	bool per_event; /* --per-event: one probe hit per event, not the fast path */
};

/* CLOCK_MONOTONIC in ns: the clock of bpf_ktime_get_ns() and of the fast path's events. */
uint64_t tracer_now_ns(void);

/*
 * SIGINT, SIGTERM and SIGHUP from now on set the flag tracer_interrupted()
 * reads: stop and report. SIGPIPE is ignored.
 */
void tracer_catch_signals(void);
bool tracer_interrupted(void);

/* The process of a -p PID: a thread's id names its process (said on stderr). */
pid_t tracer_process_of(pid_t id);

struct bpf_object;
struct bpf_link;

struct tracer {
	struct bpf_object *obj;
	struct attacher attacher;
	struct bpf_link *fork_link;
	struct {
		dev_t dev;
		ino_t ino;
	} libraries[TRACER_MAX_LIBRARIES]; /* attached for every process */
	int library_count;
	char library_buffer[PATH_MAX];
	pid_t child;
	int child_status;
	bool child_exited;
	bool quiet;	    /* -q: the command's status is the exit status, not said */
	bool child_stopped; /* by optrace: -d passed, or optrace was told to stop */
	int exec_error;	    /* the command could not be started: execvp()'s errno */
	bool fast_path;	    /* the batch probe, not the per-event probes */
	/* With -a: the processes that mapped liboptrace at the last scan (each second). */
	pid_t found[TRACER_MAX_FOUND];
	int found_count;
	int scan_count;	      /* while a scan fills found */
	uint64_t prepared_ns; /* when tracer_prepare() was done: the load's start */
	/* tracer_prepare()'s copy, with the default liboptrace filled in for -a and --. */
	struct tracer_options options;
};

/*
 * Before the object is loaded: takes options (kept in tracer->options),
 * checks that tracing is possible here, that the command can be run and
 * each -p is a process, and chooses how to attach. Prints what is wrong;
 * returns 0 or a negative errno (a command that cannot be run:
 * tracer_finish() then gives 127 or 126). The caller sets the object's
 * filter_targets to (options->command != NULL) itself, in its skeleton's
 * rodata: its layout is the skeleton's, not known here.
 */
int tracer_prepare(struct tracer *tracer, struct bpf_object *obj,
		   const struct tracer_options *options);

/*
 * Just before the load: each -p maps liboptrace (checked again at the
 * attach, as a process may end meanwhile). Prints what is wrong.
 */
int tracer_check_pids(const struct tracer *tracer);

/*
 * Reads the events the targets' threads still hold in their fast-path
 * buffers (idle threads hand nothing over by themselves). Returns the
 * number of buffers read.
 */
int tracer_read_buffers(struct tracer *tracer, batch_read_fn fn, void *ctx);

/* The result of loading the object: says what failed, and returns err. */
int tracer_loaded(const struct tracer *tracer, int err);

/*
 * After load: attaches to the targets. With a command, starts it stopped,
 * makes it a target, attaches, then lets it run, so that none of its
 * operations is missed. Prints what is wrong; returns 0 or a negative errno.
 */
int tracer_attach(struct tracer *tracer);

/* True if a target given by -p, or the command or a descendant, maps a file named name. */
bool tracer_targets_map(struct tracer *tracer, const char *name);

/* True while a target is alive (always with -a). */
bool tracer_alive(struct tracer *tracer);

/*
 * Every second or so: with -a, attaches to liboptrace files that new
 * processes brought; with a command, forgets the targets that exited.
 */
void tracer_rescan(struct tracer *tracer);

/* Whether tracer_rescan() is due elapsed_ms after the attach (a multiple of 10). */
bool tracer_rescan_due(const struct tracer *tracer, long elapsed_ms);

/*
 * Detaches (the kernel disarms the semaphores: the targets go on untraced).
 * A command optrace started that is still running gets SIGTERM, and SIGKILL
 * a second later (interrupted: optrace got a signal, so say less). Returns
 * what optrace should exit with for the command, as time(1) and perf stat
 * do: its exit status, 128 + the signal that killed it, 127 (126) when it
 * could not be found (run); 0 when optrace stopped it, or ran none.
 */
int tracer_finish(struct tracer *tracer, bool interrupted);

#endif /* OPTRACE_TRACE_TRACER_H */
