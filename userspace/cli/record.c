// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace record: its arguments, turned into the recorder's options
 * (session/recorder.h, the engine), and its exit status.
 */
#define _GNU_SOURCE
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/outfile.h"
#include "cli/commands.h"
#include "cli/common_flags.h"
#include "cli/tracer_flags.h"
#include "trace/tracer.h"
#include "session/recorder.h"

static struct {
	const char *output;
	char output_buffer[PATH_MAX]; /* -o's name, %h expanded */
	long ringbuf_mb;
	bool no_gpu;
	uint16_t capture_format; /* 0: the newest */
} env = {
	.output = "optrace.capture",
	/* A fast loop's burst (3.8 M events/s, 28 MiB of batches in 0.16 s) fits. */
	.ringbuf_mb = 64,
};

static const char doc[] =
	"Record every operation, task and wait of live runtimes into a capture file,\n"
	"for `optrace report` and `optrace export`.\n"
	"\n"
	"USAGE: optrace record [-p PID]... [-a] [-o FILE] [-d TIME]\n"
	"                      [-- COMMAND [ARGS...]]\n"
	"\n"
	"EXAMPLES:\n"
	"    optrace record -o run.capture -- ./app     # a command and its children\n"
	"    optrace record -p 1234 -d 10               # 10 s of a live process\n"
	"    optrace record --cuda -o gpu.capture -- ./app  # with its GPU kernels\n"
	"    optrace record --cuda -p 1234 -d 10        # loads the GPU collector too\n"
	"    optrace report run.capture                 # then: the profile as text\n"
	"    optrace export --legion -o prof run.capture  # and for Legion Prof\n";

enum {
	OPT_RINGBUF = 0x100,
	OPT_NO_GPU,
	OPT_CAPTURE_FORMAT,
};

/* The rest of record's flags: cli/common_flags.c. */
static const struct argp_option options[] = {
	{ "output", 'o', "FILE", 0, "The capture file (default: optrace.capture)", 0 },
	{ "ringbuf", OPT_RINGBUF, "MiB", 0,
	  "Ring buffer size, a power of two (default 64): raise it if events are lost", 0 },
	{ "no-gpu", OPT_NO_GPU, NULL, 0,
	  "Leave the optrace_gpu probes alone: liboptrace-cupti stays dormant", 0 },
	{ "capture-format", OPT_CAPTURE_FORMAT, "N", 0,
	  "Write capture format N: 2 (default, compact) or 1 (what optrace before 2 reads)", 0 },
	{},
};

/*
 * -o's name with %h as this host's short name and %% as %: one command line
 * for every node of a job (srun ... optrace record -o run.%h.capture) gives
 * one file per node. 0, or -EINVAL for another % sequence or a name too long.
 */
static int expand_output(const char *pattern, char *out, size_t size)
{
	char host[256] = "", *dot;
	size_t used = 0;

	if (gethostname(host, sizeof(host) - 1))
		snprintf(host, sizeof(host), "localhost");
	dot = strchr(host, '.');
	if (dot)
		*dot = '\0';
	for (const char *p = pattern; *p; p++) {
		const char *piece = p;
		size_t length = 1;

		if (*p == '%') {
			p++;
			if (*p == 'h') {
				piece = host;
				length = strlen(host);
			} else if (*p != '%') {
				return -EINVAL;
			}
		}
		if (used + length >= size)
			return -EINVAL;
		memcpy(out + used, piece, length);
		used += length;
	}
	out[used] = '\0';
	return 0;
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	long value;

	switch (key) {
	case 'o':
		if (expand_output(arg, env.output_buffer, sizeof(env.output_buffer)))
			argp_error(state, "-o takes %%h (this host's short name) and %%%% (a %%) "
					  "in its name, nothing else after a %%");
		env.output = env.output_buffer;
		return 0;
	case OPT_RINGBUF:
		value = tracer_parse_positive(arg, state, "ring buffer size");
		if (value & (value - 1) || value > 1024)
			argp_error(state, "--ringbuf takes a power of two, at most 1024 (MiB)");
		env.ringbuf_mb = value;
		return 0;
	case OPT_NO_GPU:
		env.no_gpu = true;
		return 0;
	case OPT_CAPTURE_FORMAT:
		if (strcmp(arg, "1") && strcmp(arg, "2"))
			argp_error(state, "--capture-format takes 1 or 2");
		env.capture_format = (uint16_t)atoi(arg);
		return 0;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s' (a command goes after --)", arg);
		return 0;
	case ARGP_KEY_END:
		if (common_flags.cuda && env.no_gpu)
			argp_error(state, "--cuda records GPU activity, --no-gpu leaves it out: "
					  "give one of them");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

int cmd_record(int argc, char **argv)
{
	struct tracer_options targets = { 0 };
	const struct argp_child children[] = {
		{ common_flags_argp(COMMON_QUIET | COMMON_VERBOSE | COMMON_DURATION | COMMON_CUDA |
				    COMMON_FORCE),
		  0, NULL, 0 },
		{ tracer_flags_argp(&targets, 0), 0, "Targets:", 1 },
		{},
	};
	const struct argp argp = {
		.options = options, .parser = parse_arg, .doc = doc, .children = children
	};
	struct recorder_options options;
	struct recorder *recorder;
	int err, parse_argc, status = 0;

	parse_argc = tracer_flags_split_command(argc, argv, &targets);
	if (parse_argc < 0 || argp_parse(&argp, parse_argc, argv, 0, NULL, NULL))
		return 2;
	options = (struct recorder_options){
		.output = env.output,
		.ringbuf_mb = env.ringbuf_mb,
		.no_gpu = env.no_gpu,
		.cuda = common_flags.cuda,
		.quiet = common_flags.quiet,
		.force = common_flags.force,
		.duration_ms = common_flags.duration_ms,
		.capture_format = env.capture_format,
		.targets = &targets,
	};
	err = recorder_open(&recorder, &options);
	if (!recorder)
		return 1;
	if (!err) {
		recorder_run(recorder);
		recorder_stop(recorder);
	}
	err = recorder_close(recorder, err, &status);
	/* The command's status first, as time(1) and perf stat give it. */
	return status ? status : err ? 1 : 0;
}
