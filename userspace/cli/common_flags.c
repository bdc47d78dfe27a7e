// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The flags several commands share (cli/common_flags.h): each declared once
 * in one table, and the argp child a command gets with the rows it takes.
 */
#include <argp.h>
#include <stddef.h>

#include "cli/common_flags.h"
#include "cli/tracer_flags.h"
#include "common/diag.h"
#include "common/outfile.h"

struct common_flags common_flags;

/* Past the commands' own keys (from 0x100) and tracer_flags_argp()'s (from 0x200). */
enum {
	OPT_CUDA = 0x300,
	OPT_WIDE,
	OPT_SHOW_HELPERS,
	OPT_FORCE,
	OPT_GPU_FILE,
	OPT_NO_LEGEND,
};

static const struct {
	enum common_flag flag;
	struct argp_option option;
} flag_options[] = {
	{ COMMON_QUIET, { "quiet", 'q', NULL, 0, "Print nothing on stderr but errors", 0 } },
	{ COMMON_VERBOSE,
	  { "verbose", 'v', NULL, 0, "Show libbpf's messages (twice: its debug log)", 0 } },
	{ COMMON_DURATION,
	  { "duration", 'd', "TIME", 0, "Stop after TIME (seconds, or 500ms, 2m, 1h)", 0 } },
	{ COMMON_CUDA,
	  { "cuda", OPT_CUDA, NULL, 0,
	    "GPU kernels, copies and their device time per operation and variant (loads "
	    "liboptrace-cupti into the targets that lack it)",
	    0 } },
	{ COMMON_JSON, { "json", 'j', NULL, 0, "Print JSON for machines", 0 } },
	{ COMMON_WIDE,
	  { "wide", OPT_WIDE, NULL, 0,
	    "Every column, lines as long as they are (else the terminal's width, COLUMNS or 80)",
	    0 } },
	{ COMMON_SHOW_HELPERS,
	  { "show-helpers", OPT_SHOW_HELPERS, NULL, 0, "List nested operations under their callers",
	    0 } },
	{ COMMON_FORCE,
	  { "force", OPT_FORCE, NULL, 0,
	    "Write into a folder another user can change, or through a symbolic link to one", 0 } },
	{ COMMON_NO_LEGEND,
	  { "no-legend", OPT_NO_LEGEND, NULL, 0,
	    "Tables without the # lines that explain their columns (as with -q)", 0 } },
	{ COMMON_GPU_FILE,
	  { "gpu", OPT_GPU_FILE, "FILE", 0,
	    "GPU activity written by liboptrace-cupti to OPTRACE_GPU_FILE, merged in", 0 } },
};

#define FLAG_COUNT (sizeof(flag_options) / sizeof(flag_options[0]))

/* Only the accepted flags are in the child's options: argp hands it no others. */
static error_t parse_flag(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'q':
		common_flags.quiet = true;
		return 0;
	case 'v':
		diag_set_verbosity(diag_verbosity() + 1);
		return 0;
	case 'd':
		common_flags.duration_ms = tracer_parse_duration_ms(arg, state, "duration");
		return 0;
	case OPT_CUDA:
		common_flags.cuda = true;
		return 0;
	case 'j':
		common_flags.json = true;
		return 0;
	case OPT_WIDE:
		common_flags.wide = true;
		return 0;
	case OPT_NO_LEGEND:
		common_flags.no_legend = true;
		return 0;
	case OPT_SHOW_HELPERS:
		common_flags.show_helpers = true;
		return 0;
	case OPT_FORCE:
		common_flags.force = true;
		return 0;
	case OPT_GPU_FILE:
		common_flags.gpu_file = arg;
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

const struct argp *common_flags_argp(unsigned int accepted)
{
	/* The accepted rows, in the table's order, then the zeroed one that ends them. */
	static struct argp_option options[FLAG_COUNT + 1];
	static const struct argp argp = { .options = options, .parser = parse_flag };
	size_t count = 0;

	for (size_t i = 0; i < FLAG_COUNT; i++) {
		if (accepted & flag_options[i].flag)
			options[count++] = flag_options[i].option;
	}
	options[count] = (struct argp_option){ 0 };
	return &argp;
}
