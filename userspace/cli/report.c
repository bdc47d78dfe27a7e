// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace report: a capture file's profile as text (or JSON): the same
 * tables as optrace stat, computed from every recorded event, after a
 * header that says what the capture holds and what, if anything, was lost.
 */
#include <argp.h>
#include <stdio.h>
#include <string.h>

#include "common/diag.h"
#include "capture/capture.h"
#include "cli/commands.h"
#include "cli/common_flags.h"
#include "model/replay.h"
#include "output/export_format.h"
#include "session/export_run.h"

static struct {
	const char *paths[REPLAY_SOURCES_MAX];
	size_t path_count;
	const char *path; /* the first */
	bool dump;
	bool dump_records;
	bool by_site;
	bool internal;
	const char *output; /* -o: written whole, or left as it was */
} env;

static const char doc[] =
	"Print the profile of a capture file made by `optrace record`.\n"
	"\n"
	"USAGE: optrace report [--show-helpers] [--json] [-o OUTPUT] FILE...\n"
	"       optrace report --dump[=records] FILE\n"
	"\n"
	"EXAMPLES:\n"
	"    optrace report optrace.capture\n"
	"    optrace report --show-helpers run.capture  # with nested operations\n"
	"    optrace report --json -o run.json run.capture\n"
	"    optrace report run.node1.capture run.node2.capture  # a job, merged\n"
	"    optrace report --gpu gpu.bin run.capture   # with an OPTRACE_GPU_FILE's\n"
	"    optrace report gpu.bin                     # GPU activity alone, no eBPF\n"
	"    optrace report --dump run.capture          # the file's chunks, to debug\n";

enum {
	OPT_DUMP = 0x100,
	OPT_BY_SITE,
	OPT_INTERNAL,
};

/* The rest of report's flags: cli/common_flags.c. */
static const struct argp_option options[] = {
	{ "output", 'o', "OUTPUT", 0, "Write the report to OUTPUT instead of stdout", 0 },
	{ "by-site", OPT_BY_SITE, NULL, 0,
	  "One row per call site of each operation the user called", 0 },
	{ "internal", OPT_INTERNAL, NULL, 0,
	  "Helpers split by their library-internal call sites (implies --show-helpers)", 0 },
	{ "dump", OPT_DUMP, "records", OPTION_ARG_OPTIONAL,
	  "Print the file's header and chunks (=records: and every record) instead", 0 },
	{},
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case OPT_BY_SITE:
		env.by_site = true;
		return 0;
	case OPT_INTERNAL:
		env.internal = true;
		return 0;
	case 'o':
		env.output = arg;
		return 0;
	case OPT_DUMP:
		if (arg && strcmp(arg, "records"))
			argp_error(state, "--dump takes nothing or =records");
		env.dump = true;
		env.dump_records = arg != NULL;
		return 0;
	case ARGP_KEY_ARG:
		if (env.path_count == REPLAY_SOURCES_MAX)
			argp_error(state, "at most %d captures", REPLAY_SOURCES_MAX);
		env.paths[env.path_count++] = arg;
		env.path = env.paths[0];
		return 0;
	case ARGP_KEY_END:
		if (!env.path)
			argp_error(state, "give the capture file to report");
		if (env.dump && env.path_count > 1)
			argp_error(state, "--dump reads one file");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

/* --dump: the file's chunks (and records), to debug; no replay. */
static int dump(const char *const *inputs, int input_count)
{
	struct export_output output;
	int err;

	/* Ctrl-C leaves no half-written file behind (nor touches an earlier one). */
	out_file_remove_on_signals();
	err = export_output_open(&output, env.output, EXPORT_PRINT, common_flags.force, inputs,
				 input_count);
	if (err)
		return err;
	err = capture_dump(output.out, env.path, env.dump_records);
	if (err < 0)
		diag("cannot read %s: %s", env.path, strerror(-err));
	return export_output_close(&output, err < 0 ? err : 0) ?: err;
}

int cmd_report(int argc, char **argv)
{
	const struct argp_child children[] = {
		{ common_flags_argp(COMMON_JSON | COMMON_WIDE | COMMON_SHOW_HELPERS | COMMON_FORCE |
				    COMMON_GPU_FILE | COMMON_NO_LEGEND),
		  0, NULL, 0 },
		{},
	};
	const struct argp argp = {
		.options = options, .parser = parse_arg, .doc = doc, .children = children
	};
	/* The files this report reads, which its output must not be. */
	const char *inputs[REPLAY_SOURCES_MAX + 1];
	struct export_options report = {
		.paths = env.paths,
		.inputs = inputs,
	};

	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return EXIT_USAGE;
	memcpy(inputs, env.paths, env.path_count * sizeof(inputs[0]));
	inputs[env.path_count] = common_flags.gpu_file;
	report.input_count = (int)env.path_count + (common_flags.gpu_file ? 1 : 0);
	if (env.dump)
		return dump(inputs, report.input_count) ? 1 : 0;
	report.path_count = env.path_count;
	report.force = common_flags.force;
	report.output = env.output;
	report.gpu_file = common_flags.gpu_file;
	report.show_helpers = common_flags.show_helpers;
	report.internal = env.internal;
	report.by_site = env.by_site;
	report.json = common_flags.json;
	report.wide = common_flags.wide;
	report.no_legends = common_flags.no_legend;
	return export_run(export_format_find("report"), &report) ? 1 : 0;
}
