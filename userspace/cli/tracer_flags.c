// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The tracing commands' targets on the command line (cli/tracer_flags.h):
 * -p, -a, --lib, --attach, --per-event and -- COMMAND into the command's
 * struct tracer_options, and the numbers and times their options take.
 */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli/tracer_flags.h"
#include "common/diag.h"

long tracer_parse_positive(const char *arg, struct argp_state *state, const char *what)
{
	char *end;
	long value;

	errno = 0;
	value = strtol(arg, &end, 10);
	if (errno || *end || value <= 0 || value > 1000000000)
		argp_error(state, "'%s' is not a valid %s", arg, what);
	return value;
}

long tracer_parse_duration_ms(const char *arg, struct argp_state *state, const char *what)
{
	static const struct {
		const char *suffix;
		double ms;
	} units[] = { { "", 1000 }, { "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 } };
	char *end;
	double value;

	errno = 0;
	value = strtod(arg, &end);
	if (!errno && end != arg && value > 0 && arg[0] != '-' && arg[0] != '+' &&
	    strspn(arg, "0123456789.") == (size_t)(end - arg)) {
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			double ms = value * units[i].ms;

			if (strcmp(end, units[i].suffix) || ms > 1e12)
				continue;
			return ms < 1 ? 1 : (long)(ms + 0.5);
		}
	}
	argp_error(state, "'%s' is not a valid %s: give seconds (2, 0.5) or a unit (500ms, 2m, 1h)",
		   arg, what);
	return 0;
}

/*
 * The struct the child fills, and how the command takes its targets: set by
 * tracer_flags_argp(), as argp hands a child no pointer of the caller's
 * unless the parent's parser passes one. One command parses per process.
 */
static struct {
	struct tracer_options *options;
	unsigned int kinds;
} parsing;

enum {
	OPT_LIB = 0x200,
	OPT_ATTACH,
	OPT_PER_EVENT,
};

static const struct argp_option options_table[] = {
	{ "pid", 'p', "PID", 0, "Trace this process (repeatable)", 0 },
	{ "all", 'a', NULL, 0, "Trace every process that maps liboptrace, also later ones", 0 },
	{ "lib", OPT_LIB, "PATH", 0,
	  "liboptrace to attach to with -- and -a (default: the one installed with optrace)", 0 },
	{ "attach", OPT_ATTACH, "MODE", 0,
	  "How to attach: auto (default), uprobe-multi (kernel 6.10+) or perf-event", 0 },
	{ "per-event", OPT_PER_EVENT, NULL, 0,
	  "One probe hit per event (the slow path, as bpftrace sees them), not batches", 0 },
	{},
};

void tracer_parse_pids(const char *arg, struct argp_state *state, pid_t *pids, int *count, int max)
{
	const char *at = arg;

	do {
		char *end;
		long pid;

		errno = 0;
		pid = strtol(at, &end, 10);
		if (errno || end == at || (*end && *end != ',') || pid <= 0 || pid > INT_MAX) {
			argp_error(state, "'%s' is not a process id (or ids: -p 123,456)", arg);
			return;
		}
		if (*count >= max) {
			argp_error(state, "at most %d processes", max);
			return;
		}
		pids[(*count)++] = tracer_process_of((pid_t)pid);
		at = *end ? end + 1 : end;
	} while (*at);
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	struct tracer_options *o = parsing.options;

	switch (key) {
	case 'p':
		tracer_parse_pids(arg, state, o->pids, &o->pid_count, TRACER_MAX_PIDS);
		return 0;
	case 'a':
		o->all = true;
		return 0;
	case OPT_LIB:
		o->library = arg;
		return 0;
	case OPT_PER_EVENT:
		o->per_event = true;
		return 0;
	case OPT_ATTACH:
		if (attach_mode_parse(arg) < 0)
			argp_error(state, "--attach takes auto, uprobe-multi or perf-event");
		o->attach_mode = (enum attach_mode)attach_mode_parse(arg);
		return 0;
	case ARGP_KEY_END:
		if ((parsing.kinds & TRACER_FLAGS_NO_COMMAND) && o->command)
			argp_error(state,
				   "this command watches running processes: -p PID... or -a");
		if ((parsing.kinds & TRACER_FLAGS_DEFAULT_ALL) && !o->pid_count && !o->command)
			o->all = true;
		if (!!o->pid_count + o->all + !!o->command != 1)
			argp_error(
				state,
				(parsing.kinds & TRACER_FLAGS_NO_COMMAND)
					? "give one kind of target: -p PID... or -a"
					: "give one kind of target: -p PID..., -a, or -- COMMAND");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

const struct argp *tracer_flags_argp(struct tracer_options *options, unsigned int kinds)
{
	static const struct argp argp = { .options = options_table, .parser = parse_arg };

	parsing.options = options;
	parsing.kinds = kinds;
	return &argp;
}

int tracer_flags_split_command(int argc, char **argv, struct tracer_options *options)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--"))
			continue;
		if (i + 1 == argc) {
			diag("nothing to run after --");
			return -1;
		}
		options->command = &argv[i + 1];
		return i;
	}
	return argc;
}
