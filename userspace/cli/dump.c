// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace dump: what every thread of a process is doing now, for a job that
 * hangs or crawls. It attaches nothing and stops nothing: it reads
 * liboptrace's thread views from the process's memory, so it works on a
 * process stuck in a system call or spinning, and on one never traced.
 */
#include <argp.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/common_flags.h"
#include "cli/tracer_flags.h"
#include "common/diag.h"
#include "output/dump_print.h"
#include "output/text_table.h"
#include "trace/early_checks.h"
#include "trace/targets.h"
#include "trace/tracer.h"
#include "trace/view_read.h"

#define MAX_PIDS 1024

static struct {
	pid_t pids[MAX_PIDS];
	int pid_count;
	bool all;
	bool idle;
} env;

static const char doc[] =
	"Show what every thread of a process is doing now: its open operations (name, call\n"
	"site, mode, how long open), the task points running on it and the wait it is in.\n"
	"Nothing is attached and the process is not stopped: it works on a process stuck in\n"
	"a system call or a spin loop, and on one never traced (ages then say so).\n"
	"\n"
	"USAGE: optrace dump [-a | -p PID...] [--json]\n"
	"\n"
	"EXAMPLES:\n"
	"    optrace dump -p 1234              # what process 1234 is doing now\n"
	"    optrace dump -a                   # every process that maps liboptrace\n"
	"    optrace dump -p 1234 --json       # the same as JSON\n"
	"    srun --overlap optrace dump -a    # every rank of a Slurm job\n";

enum {
	OPT_IDLE = 0x100,
};

/* The rest of dump's flags: cli/common_flags.c. */
static const struct argp_option options[] = {
	{ "pid", 'p', "PID", 0, "A process to show (repeatable; a thread id names its process)",
	  0 },
	{ "all", 'a', NULL, 0, "Every process that maps liboptrace", 0 },
	{ "idle", OPT_IDLE, NULL, 0, "List the threads with nothing open too", 0 },
	{},
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'p':
		tracer_parse_pids(arg, state, env.pids, &env.pid_count, MAX_PIDS);
		return 0;
	case 'a':
		env.all = true;
		return 0;
	case OPT_IDLE:
		env.idle = true;
		return 0;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s': give processes with -p PID", arg);
		return 0;
	case ARGP_KEY_END:
		if (!env.all == !env.pid_count)
			argp_error(state, "give either -a or -p PID...");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static int add_found(pid_t pid, const struct library *library, void *ctx)
{
	(void)library;
	(void)ctx;
	if (env.pid_count < MAX_PIDS)
		env.pids[env.pid_count++] = pid;
	return 0;
}

/* Why process pid could not be shown, as something to do about it. */
static void say_why(pid_t pid, int err)
{
	switch (err) {
	case -ESRCH:
		diag("no process %d", pid);
		break;
	case -ENOENT:
		diag("process %d does not map liboptrace: it is not an instrumented runtime", pid);
		break;
	case -ENOTSUP:
		diag("process %d has a liboptrace older than thread views (ABI 3): rebuild the "
		     "runtime against a newer liboptrace to dump it",
		     pid);
		break;
	case -EPROTO:
		diag("process %d: its liboptrace's thread registry makes no sense (overwritten "
		     "memory?); nothing shown",
		     pid);
		break;
	case -ENOTREGULAR:
		say_not_regular(pid);
		break;
	case -EPERM:
	case -EACCES:
		diag("cannot read process %d's memory: %s (run as root, or as its user with "
		     "ptrace allowed)",
		     pid, strerror(-err));
		break;
	default:
		diag("cannot read process %d: %s", pid, strerror(-err));
		break;
	}
}

/* -a: the processes not shown because the liboptrace path each maps holds a FIFO or such. */
static void say_passed_over(void)
{
	pid_t pids[8];
	char list[8 * 12] = "";
	int count = liboptrace_processes_passed_over(pids, 8);

	if (!count)
		return;
	for (int i = 0; i < count && i < 8; i++) {
		size_t length = strlen(list);

		snprintf(list + length, sizeof(list) - length, " %d", pids[i]);
	}
	diag("passed over %d process%s that map%s liboptrace at a path that holds no regular "
	     "file now (a FIFO or a device put there):%s%s",
	     count, count == 1 ? "" : "es", count == 1 ? "s" : "", list, count > 8 ? " ..." : "");
}

int cmd_dump(int argc, char **argv)
{
	const struct argp_child children[] = {
		{ common_flags_argp(COMMON_JSON | COMMON_WIDE), 0, NULL, 0 },
		{},
	};
	const struct argp argp = {
		.options = options, .parser = parse_arg, .doc = doc, .children = children
	};
	struct dump_options print = { 0 };
	int failed = 0, shown = 0;

	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return 2;
	if (env.all) {
		for_each_liboptrace_process(add_found, NULL);
		say_passed_over();
	}
	/*
	 * -a on a node with no runtime: nothing to show, which is no failure; but
	 * a user other than root sees only the processes it may read: nothing
	 * found then is not an answer (issue 43).
	 */
	if (env.all && !env.pid_count && geteuid() != 0) {
		diag("found no process that maps liboptrace and that this user may read: as root, "
		     "dump -a sees every user's");
		failed++;
	} else if (env.all && !env.pid_count && !common_flags.json &&
		   !liboptrace_processes_passed_over(NULL, 0)) {
		diag("no process maps liboptrace now");
	}
	print.width = text_output_width(stdout, common_flags.wide || common_flags.json);
	print.idle_threads = env.idle;
	if (common_flags.json)
		fputs("{\"processes\": [", stdout);
	for (int i = 0; i < env.pid_count; i++) {
		struct process_view view;
		int err = view_read_process(env.pids[i], &view, 0);

		if (err) {
			/* -a: a process that ended or was never ours since the scan is no error */
			if (!env.all || (err != -ESRCH && err != -ENOENT)) {
				say_why(env.pids[i], err);
				failed++;
			}
			continue;
		}
		/* -a: a process that maps liboptrace but never called it (a tool) */
		if (env.all && !view.thread_count) {
			process_view_free(&view);
			continue;
		}
		if (common_flags.json) {
			fputs(shown ? ",\n" : "\n", stdout);
			dump_print_json(stdout, &view);
		} else {
			if (shown)
				putchar('\n');
			dump_print_text(stdout, &view, &print);
		}
		shown++;
		process_view_free(&view);
	}
	if (common_flags.json)
		fputs("\n]}\n", stdout);
	if (fflush(stdout)) {
		diag("cannot write the output: %s", strerror(errno));
		return 1;
	}
	return failed ? 1 : 0;
}
