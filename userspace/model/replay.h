/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Feeding a capture file through the profile model, for report and export,
 * with the GPU activity it holds (or an OPTRACE_GPU_FILE's) attributed.
 */
#ifndef OPTRACE_REPLAY_H
#define OPTRACE_REPLAY_H

#include "capture/capture.h"
#include "model/gpu_index.h"
#include "model/profile.h"

/* What the report must say besides its tables (stdout, not only stderr). */
struct replay_note {
	char text[640];
	bool lost; /* something is missing from the report because of it */
};

#define REPLAY_NOTES_MAX 4

struct replay {
	const char *path;
	struct capture_reader *reader; /* NULL when path is a GPU file alone */
	const struct capture_header *header;
	const struct capture_status *status;
	struct gpu_index gpu;
	struct capture_header gpu_only_header;
	struct capture_status gpu_only_status;
	char gpu_only_target[64];
	/* How reading ended when not cleanly, what a GPU file lacked: said by the report too. */
	struct replay_note notes[REPLAY_NOTES_MAX];
	size_t note_count;
};

/*
 * Opens the capture at path, or an OPTRACE_GPU_FILE (GPU activity alone, for
 * hosts without eBPF); replay->header is then valid. 0 or -errno, said.
 */
int replay_open(struct replay *replay, const char *path);

/* Adds an OPTRACE_GPU_FILE's activity to attribute. 0 or -errno, said. */
int replay_add_gpu_file(struct replay *replay, const char *path);

/*
 * Reads every record into profile (initialised by the caller with its
 * consumer), then finishes the profile. GPU records are read first, in a
 * pass of their own, and attributed as the profile meets their launches. A
 * capture that was cut is read up to the cut, and stderr says what was
 * lost. Returns 0, or a negative errno with a message printed.
 */
int replay_run(struct replay *replay, struct profile *profile);

void replay_close(struct replay *replay);

#endif /* OPTRACE_REPLAY_H */
