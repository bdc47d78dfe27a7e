/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one driver of every export format (output/export_format.h): report,
 * Chrome, Perfetto, Legion Prof. It opens the captures, runs the format's
 * first pass where it has one, opens the output, replays the captures
 * through the format, and writes the output whole or not at all.
 */
#ifndef OPTRACE_SESSION_EXPORT_RUN_H
#define OPTRACE_SESSION_EXPORT_RUN_H

#include <stdio.h>

#include "common/outfile.h"
#include "output/export_format.h"

/*
 * The output of an EXPORT_PRINT or EXPORT_FILE format: stdout, or a file
 * written beside its final name and renamed over it once whole, never
 * through a link someone planted (common/outfile.h).
 */
struct export_output {
	const char *path; /* NULL: stdout */
	struct out_file file;
	FILE *out;
	bool announce; /* EXPORT_FILE: says "wrote PATH", or why not */
};

/*
 * Opens path (NULL: stdout), which none of the input_count inputs may be.
 * 0, or a negative errno with a message printed.
 */
int export_output_open(struct export_output *output, const char *path, enum export_target target,
		       bool force, const char *const *inputs, int input_count);

/*
 * Closes the output: err 0 puts it in place, any other leaves what was
 * there as it was. Returns err, or the error of closing or committing,
 * each said (a -EBADMSG err was said already).
 */
int export_output_close(struct export_output *output, int err);

/*
 * Exports options' captures in format: 0, or a negative errno with what
 * went wrong said on stderr. Ctrl-C leaves no half-written file behind.
 */
int export_run(const struct export_format *format, const struct export_options *options);

#endif /* OPTRACE_SESSION_EXPORT_RUN_H */
