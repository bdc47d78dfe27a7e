/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Feeding a capture file through the profile model, for report and export. */
#ifndef OPTRACE_REPLAY_H
#define OPTRACE_REPLAY_H

#include "capture.h"
#include "profile.h"

struct replay {
	const char *path;
	struct capture_reader *reader;
	const struct capture_header *header;
	const struct capture_status *status;
};

/* Opens the capture at path; replay->header is then valid. 0 or -errno, said. */
int replay_open(struct replay *replay, const char *path);

/*
 * Reads every record into profile (initialised by the caller with its
 * consumer), then finishes the profile. A capture that was cut is read up to
 * the cut, and stderr says what was lost. Returns 0, or a negative errno with
 * a message printed.
 */
int replay_run(struct replay *replay, struct profile *profile);

void replay_close(struct replay *replay);

#endif /* OPTRACE_REPLAY_H */
