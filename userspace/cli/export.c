// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace export: a capture's profile for the viewers: Chrome trace JSON
 * (Perfetto, chrome://tracing), Perfetto's own protobuf trace, or Legion
 * Prof logs.
 */
#include <argp.h>
#include <errno.h>
#include <stdio_ext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/diag.h"
#include "output/chrome.h"
#include "output/gpu_tables.h"
#include "cli/commands.h"
#include "cli/common_flags.h"
#include "output/legion_export.h"
#include "output/legion_prof.h"
#include "output/perfetto.h"
#include "common/outfile.h"
#include "model/replay.h"

static struct {
	bool chrome;
	bool perfetto;
	bool legion;
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
	OPT_CHROME = 0x100,
	OPT_PERFETTO,
	OPT_LEGION,
	OPT_INTERNAL,
	OPT_LEGION_VERSION,
	OPT_PYTHON,
};

/* The rest of export's flags: cli/common_flags.c. */
static const struct argp_option options[] = {
	{ "chrome", OPT_CHROME, NULL, 0, "Chrome trace JSON", 0 },
	{ "perfetto", OPT_PERFETTO, NULL, 0,
	  "Perfetto's protobuf trace: smaller and faster to load, for long recordings", 0 },
	{ "legion", OPT_LEGION, NULL, 0, "Legion Prof logs, one prof_<node>.gz per process", 0 },
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

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case OPT_CHROME:
		env.chrome = true;
		return 0;
	case OPT_PERFETTO:
		env.perfetto = true;
		return 0;
	case OPT_LEGION:
		env.legion = true;
		return 0;
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
		if (env.chrome + env.perfetto + env.legion != 1)
			argp_error(state, "give one format: --chrome, --perfetto or --legion");
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

/* The files this export reads, which its output must not be. */
static int inputs(const char **paths)
{
	int count = 0;

	for (int i = 0; i < env.path_count; i++)
		paths[count++] = env.paths[i];
	if (common_flags.gpu_file)
		paths[count++] = common_flags.gpu_file;
	return count;
}

/* The writer of a one-file timeline: Chrome JSON or Perfetto protobuf. */
struct timeline {
	struct chrome_writer chrome;
	struct perfetto_writer perfetto;
};

static int timeline_begin(struct timeline *timeline, FILE *out, uint64_t base_ns,
			  struct profile_consumer *consumer)
{
	if (env.perfetto)
		return perfetto_writer_begin(&timeline->perfetto, out, base_ns,
					     common_flags.show_helpers, consumer);
	return chrome_writer_begin(&timeline->chrome, out, base_ns, common_flags.show_helpers,
				   consumer);
}

static int timeline_end(struct timeline *timeline)
{
	if (env.perfetto)
		return perfetto_writer_end(&timeline->perfetto);
	return chrome_writer_end(&timeline->chrome);
}

/*
 * The input is read (opened and its header checked) before the output is
 * touched, and the output is written beside it and renamed over it only
 * once whole: a missing or damaged input, a full disk or a kill leaves an
 * earlier file as it was.
 */
static int export_timeline(void)
{
	const char *input_paths[sizeof(env.paths) / sizeof(env.paths[0]) + 1];
	struct profile_consumer consumer;
	struct gpu_summary gpu_losses;
	struct timeline writer;
	struct replay replay = { 0 };
	struct out_file output;
	struct profile profile;
	bool opened = false;
	FILE *out = NULL;
	int err, fd;

	profile_init(&profile, NULL);
	err = replay_open_many(&replay, (const char *const *)env.paths, (size_t)env.path_count);
	if (!err && common_flags.gpu_file)
		err = replay_add_gpu_file(&replay, common_flags.gpu_file);
	if (err)
		goto cleanup;
	out_file_named_by("-o");
	fd = out_file_open(&output, env.output, 0, input_paths, inputs(input_paths));
	if (fd < 0) {
		err = fd;
		goto cleanup;
	}
	opened = true;
	out = fdopen(fd, "w");
	if (!out) {
		err = -errno;
		close(fd);
		goto cleanup;
	}
	/* One thread writes: no stdio locks, and large writes. */
	__fsetlocking(out, FSETLOCKING_BYCALLER);
	setvbuf(out, NULL, _IOFBF, 1 << 20);
	/* Time zero is the moment recording started. */
	err = timeline_begin(&writer, out, replay.header->monotonic_ns, &consumer);
	if (err)
		goto cleanup;
	profile.consumer = consumer;
	err = replay_run(&replay, &profile);
	if (gpu_losses_note(
		    &profile,
		    replay_counter(&replay, capture_counter_name(CAPTURE_LOST_GPU_RINGBUF_FULL)),
		    &gpu_losses) &&
	    !env.perfetto)
		writer.chrome.gpu_losses = &gpu_losses;
	err = timeline_end(&writer) ?: err;
	/* As report: a capture nothing of which could be read fails the export. */
	err = err ?: replay_check_readable(&replay);

cleanup:
	if (out && fclose(out) && !err)
		err = -errno;
	if (opened) {
		if (err) {
			if (err != -EBADMSG) /* said what could not be read */
				diag("cannot write %s: %s", env.output, strerror(-err));
			out_file_discard(&output);
		} else {
			err = out_file_commit(&output);
		}
	}
	if (!err)
		diag("wrote %s", env.output);
	profile_free(&profile);
	replay_close(&replay);
	return err;
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

	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return 2;
	/* Ctrl-C leaves no half-written file behind (nor touches an earlier one). */
	out_file_remove_on_signals();
	if (env.legion) {
		const char *input_paths[sizeof(env.paths) / sizeof(env.paths[0]) + 1];
		struct legion_export_options options = {
			.directory = env.output,
			.version = env.legion_version ? env.legion_version : LEGION_PROF_VERSION,
			.show_helpers = common_flags.show_helpers,
			.internal = env.internal,
			.python = env.python,
			.gpu_file = common_flags.gpu_file,
			.inputs = input_paths,
			.input_count = inputs(input_paths),
		};

		return legion_export(env.paths, env.path_count, &options) ? 1 : 0;
	}
	return export_timeline() ? 1 : 0;
}
