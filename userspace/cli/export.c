// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace export: a capture's profile for the viewers: Chrome trace JSON
 * (Perfetto, chrome://tracing), Perfetto's own protobuf trace, or Legion
 * Prof logs.
 */
#include <argp.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/common_flags.h"
#include "output/export_format.h"
#include "output/legion_prof.h"
#include "session/export_run.h"

/* export's formats: the rows of export_formats[] that have a flag. */
#define FORMATS_MAX 16

static struct {
	bool chosen[FORMATS_MAX]; /* by their index in export_formats[] */
	const char *output;
	bool internal;
	bool python;
	uint32_t legion_version;
	char *paths[64];
	int path_count;
} env;

static const char doc[] =
	"Export the profile of capture files for Perfetto / chrome://tracing or Legion Prof.\n"
	"\n"
	"USAGE: optrace export --chrome -o FILE.json CAPTURE...\n"
	"       optrace export --perfetto -o FILE.pftrace CAPTURE...\n"
	"       optrace export --legion -o DIR CAPTURE...\n"
	"\n"
	"EXAMPLES:\n"
	"    optrace export --chrome -o t.json run.capture      # for ui.perfetto.dev\n"
	"    optrace export --perfetto -o t.pftrace run.capture # smaller, long runs\n"
	"    optrace export --chrome --show-helpers -o t.json run.capture\n"
	"    optrace export --legion -o prof run.capture  # legion_prof view prof/*.gz\n"
	"    optrace export --chrome -o job.json run.*.capture  # a job's nodes, merged\n"
	"    optrace export --chrome -o t.json --gpu gpu.bin run.capture  # + GPU file\n"
	"    optrace export --chrome -o t.json gpu.bin    # GPU activity alone, no eBPF\n";

enum {
	OPT_INTERNAL = 0x100,
	OPT_LEGION_VERSION,
	OPT_PYTHON,
	OPT_FORMAT, /* + the format's index in export_formats[] */
};

/* The format flags (--chrome, ...) come first, from the table; the rest: cli/common_flags.c. */
static const struct argp_option rest[] = {
	{ "legion-version", OPT_LEGION_VERSION, "N", 0,
	  "Legion Prof format: 1008 (Legion 25.06, default) or 1007 (24.09 to 25.03)", 0 },
	{ "python", OPT_PYTHON, NULL, 0,
	  "Legion: show issuing threads as Python processors (cuPyNumeric)", 0 },
	{ "output", 'o', "PATH", 0,
	  "The file (--chrome, --perfetto) or directory (--legion) to write", 0 },
	{ "internal", OPT_INTERNAL, NULL, 0,
	  "Legion, with --show-helpers: helpers' library-internal call sites too", 0 },
	{},
};

static struct argp_option options[FORMATS_MAX + sizeof(rest) / sizeof(rest[0])];

/* One flag per format that has one, then the rest. */
static void make_options(void)
{
	size_t count = 0;

	for (size_t i = 0; i < FORMATS_MAX && export_formats[i]; i++) {
		if (!export_formats[i]->help)
			continue;
		options[count++] = (struct argp_option){
			.name = export_formats[i]->name,
			.key = OPT_FORMAT + (int)i,
			.doc = export_formats[i]->help,
		};
	}
	memcpy(options + count, rest, sizeof(rest));
}

/* "give one format: --chrome, --perfetto or --legion" */
static void no_one_format(struct argp_state *state)
{
	char flags[256] = "";
	size_t used = 0, left = 0;

	for (size_t i = 0; options[i].name; i++)
		left += options[i].key >= OPT_FORMAT;
	for (size_t i = 0; options[i].key >= OPT_FORMAT && used < sizeof(flags); i++, left--)
		used += (size_t)snprintf(flags + used, sizeof(flags) - used, "%s--%s",
					 !i	     ? ""
					 : left == 1 ? " or "
						     : ", ",
					 options[i].name);
	argp_error(state, "give one format: %s", flags);
}

/* The one format the flags chose, or NULL. */
static const struct export_format *chosen_format(void)
{
	const struct export_format *format = NULL;

	for (size_t i = 0; i < FORMATS_MAX && export_formats[i]; i++) {
		if (!env.chosen[i])
			continue;
		if (format)
			return NULL;
		format = export_formats[i];
	}
	return format;
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	if (key >= OPT_FORMAT && key < OPT_FORMAT + FORMATS_MAX) {
		env.chosen[key - OPT_FORMAT] = true;
		return 0;
	}
	switch (key) {
	case 'o':
		env.output = arg;
		return 0;
	case OPT_INTERNAL:
		env.internal = true;
		return 0;
	case OPT_PYTHON:
		env.python = true;
		return 0;
	case OPT_LEGION_VERSION:
		if (strcmp(arg, "1008") && strcmp(arg, "1007"))
			argp_error(state, "--legion-version takes 1008 or 1007");
		env.legion_version = (uint32_t)atoi(arg);
		return 0;
	case ARGP_KEY_ARG:
		if (env.path_count == 64)
			argp_error(state, "at most 64 capture files");
		env.paths[env.path_count++] = arg;
		return 0;
	case ARGP_KEY_END:
		if (!chosen_format())
			no_one_format(state);
		if (!env.output)
			argp_error(state, "give the output with -o");
		if (env.internal && !common_flags.show_helpers)
			argp_error(state,
				   "--internal shows helpers' call sites: give --show-helpers "
				   "too");
		if (!env.path_count)
			argp_error(state, "give the capture file to export");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

int cmd_export(int argc, char **argv)
{
	const struct argp_child children[] = {
		{ common_flags_argp(COMMON_SHOW_HELPERS | COMMON_FORCE | COMMON_GPU_FILE), 0, NULL,
		  0 },
		{},
	};
	const struct argp argp = {
		.options = options, .parser = parse_arg, .doc = doc, .children = children
	};
	/* The files this export reads, which its output must not be. */
	const char *inputs[sizeof(env.paths) / sizeof(env.paths[0]) + 1];
	struct export_options export = {
		.paths = (const char *const *)env.paths,
		.inputs = inputs,
	};

	make_options();
	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return 2;
	memcpy(inputs, env.paths, (size_t)env.path_count * sizeof(inputs[0]));
	inputs[env.path_count] = common_flags.gpu_file;
	export.input_count = env.path_count + (common_flags.gpu_file ? 1 : 0);
	export.path_count = (size_t)env.path_count;
	export.output = env.output;
	export.gpu_file = common_flags.gpu_file;
	export.force = common_flags.force;
	export.show_helpers = common_flags.show_helpers;
	export.internal = env.internal;
	export.legion_version = env.legion_version ? env.legion_version : LEGION_PROF_VERSION;
	export.python = env.python;
	return export_run(chosen_format(), &export) ? 1 : 0;
}
