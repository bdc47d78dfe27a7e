/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The flags several commands take (-q, -v, -d, --cuda, --json, --wide,
 * --show-helpers, --force, --gpu): declared once, with one help text, and
 * parsed by one argp child into common_flags. Each command names the ones
 * it takes, so that none gains a flag it has no use for.
 */
#ifndef OPTRACE_CLI_COMMON_FLAGS_H
#define OPTRACE_CLI_COMMON_FLAGS_H

#include <argp.h>
#include <stdbool.h>

enum common_flag {
	COMMON_QUIET = 1 << 0,	      /* -q, --quiet */
	COMMON_VERBOSE = 1 << 1,      /* -v, --verbose: common/diag.h's verbosity */
	COMMON_DURATION = 1 << 2,     /* -d, --duration=TIME */
	COMMON_CUDA = 1 << 3,	      /* --cuda */
	COMMON_JSON = 1 << 4,	      /* --json */
	COMMON_WIDE = 1 << 5,	      /* --wide */
	COMMON_SHOW_HELPERS = 1 << 6, /* --show-helpers */
	COMMON_FORCE = 1 << 7,	      /* --force: common/outfile.h's out_policy */
	COMMON_GPU_FILE = 1 << 8,     /* --gpu=FILE */
	COMMON_NO_LEGEND = 1 << 9,    /* --no-legend */
};

/* What the command line gave; -v counts in diag_verbosity(). */
struct common_flags {
	bool quiet;
	long duration_ms; /* 0: until stopped */
	bool cuda;
	bool json;
	bool wide;
	bool show_helpers;
	bool no_legend;	      /* tables without the # lines that explain them */
	const char *gpu_file; /* an OPTRACE_GPU_FILE to merge in */
	bool force;	      /* outputs where others could change them (common/outfile.h) */
};

extern struct common_flags common_flags;

/*
 * The argp child of the flags in accepted (enum common_flag, or-ed), for a
 * command's struct argp_child list with no header: they are listed among
 * the command's own options. One command runs per process: the child is
 * made once.
 */
const struct argp *common_flags_argp(unsigned int accepted);

#endif /* OPTRACE_CLI_COMMON_FLAGS_H */
