// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace stat and optrace top: per-operation and per-task aggregates of
 * live runtimes, counted in the kernel (bpf/stat.bpf.c), printed at exit or
 * every interval, or shown as a live screen.
 */
#define _GNU_SOURCE
#include <argp.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "common/diag.h"
#include "common/outfile.h"
#include "cli/commands.h"
#include "cli/common_flags.h"
#include "cli/tracer_flags.h"
#include "trace/setup.h"
#include "stat.skel.h"
#include "session/cuda.h"
#include "session/stat_live.h"
#include "output/top_screen.h"
#include "output/stat_print.h"
#include "output/text_table.h"
#include "trace/targets.h"
#include "trace/tracer.h"

#define TICK_MS 100

static struct {
	long interval_ms; /* 0: print once, at the end */
	int count;	  /* intervals to print; 0: until stopped */
	struct stat_print_options print;
	bool top;	    /* optrace top: a live screen */
	bool cumulative;    /* top: totals since start, not per interval */
	bool timestamps;    /* -T: each interval's report starts with the time */
	const char *output; /* -o: the reports go there, not to stdout */
	FILE *out;
	int printed;	 /* reports printed so far */
	off_t out_whole; /* -o with an interval: where the last whole report ends */
	struct tracer_options targets;
} env;

static struct top_screen screen;

enum { OPT_STUCK = 0x200 };

static const char stat_doc[] =
	"Count the operations of live runtimes in the kernel and print per-operation\n"
	"and per-task aggregates: counts, eager/deferred/fallback split with reasons,\n"
	"total and self time, p50/p99, task runs per variant, waits.\n"
	"\n"
	"USAGE: optrace stat [-p PID]... [-a] [--json] [--show-helpers] [-d TIME]\n"
	"                    [-T] [-q] [-o FILE] [INTERVAL [COUNT]]\n"
	"                    [-- COMMAND [ARGS...]]\n"
	"\n"
	"With -- COMMAND, optrace exits with the command's status.\n"
	"\n"
	"EXAMPLES:\n"
	"    optrace stat -p 1234               # until Ctrl-C, then print\n"
	"    optrace stat -p 1234 -p 1240 -d 30 # two processes for 30 s\n"
	"    optrace stat -p 1234 -T 5 3        # every 5 s, three times, timestamped\n"
	"    optrace stat -a                    # every process mapping liboptrace\n"
	"    optrace stat --json -o s.json -- ./app -n 10 # a command and its children\n"
	"    optrace stat --show-helpers -p 1234 # helpers under their callers\n"
	"    optrace stat --cuda -p 1234 -d 10  # GPU time per operation and variant\n";

static const char top_doc[] =
	"A live screen of the operations of running runtimes, slowest first,\n"
	"refreshed every interval (default 1 s). Counted in the kernel as by stat.\n"
	"\n"
	"USAGE: optrace top [-p PID]... [-a] [-C] [-b] [--show-helpers] [-d TIME]\n"
	"                   [INTERVAL]\n"
	"\n"
	"Keys: arrows, PgUp/PgDn (space, b), Home/End (g, G) scroll; s sorts by the next\n"
	"column (time, calls, p99, fallbacks, errors, name); p shows the next process\n"
	"alone, then all; h shows or hides helpers; q or Ctrl-C quits.\n"
	"\n"
	"EXAMPLES:\n"
	"    optrace top -p 1234        # one process, per-second view\n"
	"    optrace top -a -C 2        # every runtime, totals since start, every 2 s\n"
	"    optrace top -b -p 1234 -d 10 0.5 >top.txt # text every 0.5 s for 10 s\n"
	"    optrace top -p 1234 -d 60  # for a minute\n"
	"    optrace top -a --stuck 30s # mark what is open longer than 30 s\n"
	"    optrace top --cuda -p 1234 # with GPU time\n";

/* The rest of stat's and top's flags: cli/common_flags.c. */
static const struct argp_option stat_options[] = {
	{ "output", 'o', "FILE", 0,
	  "Write the reports to FILE (a command's own output stays on "
	  "stdout)",
	  0 },
	{ "timestamp", 'T', NULL, 0, "Start each interval's report with the time", 0 },
	{},
};

static const struct argp_option top_options[] = {
	{ "batch", 'b', NULL, 0,
	  "Plain text per interval, no escape codes (as top -b; also when stdout is no terminal)",
	  0 },
	{ "cumulative", 'C', NULL, 0, "Totals since start instead of per interval", 0 },
	{ "stuck", OPT_STUCK, "TIME", 0,
	  "Mark operations and task points open longer than TIME (default 5s; 0: never)", 0 },
	{},
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	static int positional;

	switch (key) {
	case 'C':
		env.cumulative = true;
		return 0;
	case OPT_STUCK:
		screen.stuck_ms =
			strcmp(arg, "0") ? tracer_parse_duration_ms(arg, state, "--stuck") : 0;
		screen.stuck_set = true;
		return 0;
	case 'b':
		screen.batch = true;
		return 0;
	case 'o':
		env.output = arg;
		return 0;
	case 'T':
		env.timestamps = true;
		return 0;
	case ARGP_KEY_ARG:
		if (positional == 0)
			env.interval_ms = tracer_parse_duration_ms(arg, state, "interval");
		else if (positional == 1 && !env.top)
			env.count = (int)tracer_parse_positive(arg, state, "count");
		else
			argp_error(state, "unexpected argument '%s' (a command goes after --)",
				   arg);
		positional++;
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static struct tracer *tracer_now; /* whose idle buffers a snapshot reads first */

/* JSON reports say when they were taken: intervals are told apart by it. */
static void print_json_time(FILE *out, void *ctx)
{
	struct timespec now;
	struct tm tm;
	char stamp[32];

	(void)ctx;
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(out, ",\"time\":\"%s.%03ldZ\"", stamp, now.tv_nsec / 1000000);
	if (env.interval_ms)
		fprintf(out, ",\"interval_s\":%g", env.interval_ms / 1000.0);
}

struct children {
	pid_t parent;
	char list[256];
	size_t used;
	int count;
};

static int note_child(pid_t pid, const struct library *library, void *ctx)
{
	struct children *children = ctx;

	(void)library;
	if (process_parent(pid) == children->parent && children->used < sizeof(children->list)) {
		children->used +=
			(size_t)snprintf(children->list + children->used,
					 sizeof(children->list) - children->used, " -p %d", pid);
		children->count++;
	}
	return 0;
}

/*
 * Nothing traced in a -p target that is a launcher (mpirun, the demo's
 * --procs): its children are the runtimes, and have to be named.
 */
static void hint_children(void)
{
	for (int i = 0; i < env.targets.pid_count; i++) {
		struct children children = { .parent = env.targets.pids[i] };

		for_each_liboptrace_process(note_child, &children);
		if (children.count)
			diag("process %d ran no operations, but %d of its children map liboptrace: "
			     "trace them with%s (or every runtime with -a)",
			     children.parent, children.count, children.list);
	}
}

/*
 * The report just printed, flushed and checked: a full disk or a closed
 * pipe ends stat with a message, not a cut report and status 0. A file
 * written as it goes (-o with an interval) is cut back to its last whole
 * report, so that what it holds is whole.
 */
static int report_written(void)
{
	const char *name = env.output ? env.output : "the output";
	int err = 0;

	errno = 0;
	if (fflush(env.out) || ferror(env.out))
		err = errno ? -errno : -EIO;
	if (!err) {
		if (env.output && env.interval_ms)
			env.out_whole = ftello(env.out);
		return 0;
	}
	/* What stdio still holds would land past the cut when the stream is closed. */
	__fpurge(env.out);
	if (env.output && env.interval_ms && env.out_whole >= 0 &&
	    !ftruncate(fileno(env.out), env.out_whole) &&
	    lseek(fileno(env.out), env.out_whole, SEEK_SET) == env.out_whole)
		diag("cannot write %s: %s; it holds the %d whole report%s printed before", name,
		     strerror(-err), env.printed, env.printed == 1 ? "" : "s");
	else
		diag("cannot write %s: %s", name, strerror(-err));
	return err;
}

static int print_snapshot(struct stat_bpf *skel, bool clear)
{
	struct stat_snapshot snapshot;
	int err;

	stat_catch_up(skel, tracer_now);
	err = stat_snapshot_take(skel, &snapshot, clear);
	if (err) {
		diag("cannot read the kernel's aggregates: %s", strerror(-err));
		return err;
	}
	if (env.top) {
		/* the targets too: a process stuck since the start has no rows */
		for (int i = 0; i < env.targets.pid_count; i++)
			top_screen_watch(&screen, (__u32)env.targets.pids[i]);
		for (int i = 0; tracer_now && i < tracer_now->found_count; i++)
			top_screen_watch(&screen, (__u32)tracer_now->found[i]);
		top_screen_show(&screen, &snapshot);
	} else {
		/* As bcc's tools: a blank line between reports, the time with -T. */
		if (env.printed && !env.print.json)
			fputc('\n', env.out);
		if (env.timestamps && !env.print.json) {
			time_t now = time(NULL);
			char stamp[32];

			strftime(stamp, sizeof(stamp), "%H:%M:%S", localtime(&now));
			fprintf(env.out, "%s\n", stamp);
		}
		env.print.width = text_output_width(env.out, common_flags.wide);
		stat_print(env.out, &snapshot, &env.print);
		err = report_written();
		if (err) {
			stat_snapshot_free(&snapshot);
			return err;
		}
		if (!snapshot.op_count && !snapshot.task_count && !common_flags.quiet)
			hint_children();
	}
	env.printed++;
	stat_snapshot_free(&snapshot);
	return 0;
}

static int run(int argc, char **argv, const struct argp *argp)
{
	static struct tracer tracer;
	struct out_file output = { .dir = -1 };
	struct stat_bpf *skel = NULL;
	long elapsed_ms = 0, since_print_ms = 0;
	int err, printed = 0, parse_argc, status;

	parse_argc = tracer_flags_split_command(argc, argv, &env.targets);
	if (parse_argc < 0 || argp_parse(argp, parse_argc, argv, 0, NULL, NULL))
		return EXIT_USAGE;
	env.print.json = common_flags.json;
	env.print.show_helpers = common_flags.show_helpers;
	/* -q: the tables alone, an interval after another (issue 43) */
	env.print.no_legends = common_flags.no_legend || common_flags.quiet;
	if (env.top && !env.interval_ms)
		env.interval_ms = 1000;
	env.out = stdout;
	if (env.output) {
		/* Opened before the command starts, which must not inherit it. */
		int fd;

		const struct out_policy policy = { .force = common_flags.force, .named_by = "-o" };

		/* One report: put in place once whole; one per interval: there as they come. */
		fd = out_file_open(&output, &policy, env.output, env.interval_ms ? OUT_FILE_NOW : 0,
				   NULL, 0);

		env.out = fd < 0 ? NULL : fdopen(fd, "w");
		if (!env.out) {
			if (fd >= 0) {
				close(fd);
				out_file_discard(&output);
			}
			return 1;
		}
	}
	if (env.print.json)
		env.print.json_members = print_json_time;

	skel = stat_open();
	if (!skel)
		return 1;
	tracer_now = &tracer;
	err = stat_attach(&tracer, skel, &env.targets, common_flags.cuda,
			  common_flags.quiet || env.top);
	if (err)
		goto cleanup;
	/*
	 * Progress, not diag(): on stderr, in --json mode too: when counting starts, for people
	 * and scripts alike.
	 */
	if (!env.targets.command && !env.top && !common_flags.quiet)
		fprintf(stderr, "Tracing... %s\n",
			env.interval_ms ? "Hit Ctrl-C to end." : "Hit Ctrl-C to end and print.");
	if (env.top) {
		screen.print = env.print;
		screen.print.width = text_output_width(stdout, common_flags.wide);
		screen.interval_ms = env.interval_ms;
		screen.cumulative = env.cumulative;
		if (!screen.stuck_set)
			screen.stuck_ms = 5000;
		top_screen_start(&screen);
	}

	while (!tracer_interrupted()) {
		struct timespec tick = { 0, TICK_MS * 1000 * 1000 };

		nanosleep(&tick, NULL);
		elapsed_ms += TICK_MS;
		since_print_ms += TICK_MS;
		if (common_flags.duration_ms && elapsed_ms >= common_flags.duration_ms)
			break;
		if (!tracer_alive(&tracer))
			break;
		if (env.top && !top_screen_keys(&screen))
			break;
		stat_note_ranks(skel, elapsed_ms % 1000 == 0);
		if (tracer_rescan_due(&tracer, elapsed_ms))
			tracer_rescan(&tracer);
		if (env.interval_ms && since_print_ms >= env.interval_ms) {
			since_print_ms = 0;
			err = print_snapshot(skel, !env.cumulative);
			if (err)
				goto cleanup;
			if (env.count && ++printed >= env.count)
				goto cleanup;
		}
	}
	/* top's screen is already up to date; stat prints what it counted. */
	if (!env.top) {
		skel->data->stop_ns = tracer_now_ns(); /* nothing after the stop counts */
		if (common_flags.cuda)
			cuda_linger(&tracer);
		err = print_snapshot(skel, env.interval_ms != 0);
	}

cleanup:
	if (env.top)
		top_screen_stop(&screen);
	tracer.quiet = common_flags.quiet;
	status = tracer_finish(&tracer, tracer_interrupted() || common_flags.quiet);
	if (env.out && env.out != stdout) {
		if (fclose(env.out) && !err) {
			diag("cannot write %s: %s", env.output, strerror(errno));
			err = -EIO;
		}
		/* A report cut by an error never takes the place of what was there. */
		if (err && !env.interval_ms)
			out_file_discard(&output);
		else if (out_file_commit(&output) && !err)
			err = -EIO;
	}
	stat_bpf__destroy(skel);
	/* The command's status first, as time(1) and perf stat give it. */
	return status ? status : err ? 1 : 0;
}

int cmd_stat(int argc, char **argv)
{
	const struct argp_child children[] = {
		{ common_flags_argp(COMMON_QUIET | COMMON_VERBOSE | COMMON_DURATION | COMMON_CUDA |
				    COMMON_JSON | COMMON_WIDE | COMMON_SHOW_HELPERS | COMMON_FORCE |
				    COMMON_NO_LEGEND),
		  0, NULL, 0 },
		{ tracer_flags_argp(&env.targets, 0), 0, "Targets:", 1 },
		{},
	};
	const struct argp argp = {
		.options = stat_options, .parser = parse_arg, .doc = stat_doc, .children = children
	};

	return run(argc, argv, &argp);
}

int cmd_top(int argc, char **argv)
{
	/* No -q: the screen is all top prints. */
	const struct argp_child children[] = {
		{ common_flags_argp(COMMON_VERBOSE | COMMON_DURATION | COMMON_CUDA | COMMON_WIDE |
				    COMMON_SHOW_HELPERS),
		  0, NULL, 0 },
		{ tracer_flags_argp(&env.targets, TRACER_FLAGS_NO_COMMAND), 0, "Targets:", 1 },
		{},
	};
	const struct argp argp = {
		.options = top_options, .parser = parse_arg, .doc = top_doc, .children = children
	};

	env.top = true;
	return run(argc, argv, &argp);
}
