/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One shape for every format a capture's profile leaves optrace in: report's
 * text and JSON, the Chrome trace, Perfetto's trace, Legion Prof's logs. A
 * format is a row of export_formats[] (output/export_formats.c) and its
 * hooks; session/export_run.c drives every one the same way: it opens the
 * captures, calls first_pass (the format reads every record before any is
 * written), adds the GPU file, opens the output, calls begin, replays the
 * captures through the consumer begin filled, then end. The driver owns the
 * output file (written whole or not at all, never through a planted link);
 * a folder format opens its own files in its folder with out_file_openat().
 * Adding a format: userspace/README.md, "Adding an export format".
 */
#ifndef OPTRACE_OUTPUT_EXPORT_FORMAT_H
#define OPTRACE_OUTPUT_EXPORT_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/gpu_aggregates.h"
#include "model/profile.h"
#include "model/replay.h"

enum export_target {
	EXPORT_PRINT,  /* text for stdout, or the file -o names: nothing said of it */
	EXPORT_FILE,   /* the one file -o names: "wrote FILE" once it is whole */
	EXPORT_FOLDER, /* files of the format's own in the folder -o names */
};

/* What a command asks of an export; each format reads the fields it has. */
struct export_options {
	const char *output;	  /* the file or folder; NULL: stdout (EXPORT_PRINT) */
	const char *const *paths; /* the captures (or a GPU file alone) */
	size_t path_count;
	const char *gpu_file;	   /* an OPTRACE_GPU_FILE to merge, or NULL */
	const char *const *inputs; /* every file read: no output may replace one */
	int input_count;
	bool force; /* --force: common/outfile.h's out_policy */
	bool show_helpers;
	bool internal; /* helpers' library-internal call sites */
	/* report */
	bool by_site;
	bool json;
	bool wide;
	bool no_legends;
	/* Legion Prof */
	uint32_t legion_version; /* 1008 or 1007 */
	bool python;		 /* issuing threads are Python processors */
};

/* What a format's hooks get from the driver. */
struct export_job {
	const struct export_options *options;
	struct replay *replay; /* open, with the GPU file added by begin */
	struct profile *profile;
	FILE *out; /* the output of EXPORT_PRINT and EXPORT_FILE; NULL: a folder, or not opened */
};

struct export_format {
	const char *name; /* the table's key, and export's flag (--NAME) */
	const char *help; /* export --NAME's help; NULL: not one of export's (report) */
	enum export_target target;
	size_t state_size; /* the hooks' state: zeroed by the driver, freed after end */
	/*
	 * The first pass, where the format must see every record before it writes
	 * one (NULL: none): called once the captures are open, before the GPU
	 * file is added (replay_scan()). 0 or a negative errno, said.
	 */
	int (*first_pass)(void *state, struct export_job *job);
	/* Starts the output; fills consumer, which the replay then feeds. 0 or -errno, said. */
	int (*begin)(void *state, struct export_job *job, struct profile_consumer *consumer);
	/*
	 * Called once first_pass or begin was, whatever came of them: ends the
	 * output and frees what the state holds. err: first_pass's, begin's or
	 * the replay's; -EBADMSG when a capture could not be read at all (said).
	 * Returns the export's result: 0 or a negative errno.
	 */
	int (*end)(void *state, struct export_job *job, int err);
};

/* Every format, in the order export's help lists them; NULL ends it. */
extern const struct export_format *const export_formats[];

/* The format named name, or NULL. */
const struct export_format *export_format_find(const char *name);

/*
 * For the formats, after the replay: the GPU records lost by source into
 * *summary, said on stderr when any were (gpu_losses_note()). False when
 * there was no GPU activity.
 */
bool export_gpu_losses(const struct export_job *job, struct gpu_summary *summary);

#endif /* OPTRACE_OUTPUT_EXPORT_FORMAT_H */
