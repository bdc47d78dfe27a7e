// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "replay.h"

int replay_open(struct replay *replay, const char *path)
{
	char why[256];
	int err;

	memset(replay, 0, sizeof(*replay));
	replay->path = path;
	err = capture_reader_open(&replay->reader, path, why, sizeof(why));
	if (err) {
		fprintf(stderr, "optrace: %s\n", why);
		return err;
	}
	replay->header = capture_reader_header(replay->reader);
	return 0;
}

int replay_run(struct replay *replay, struct profile *profile)
{
	struct capture_record record;
	int err;

	while ((err = capture_next(replay->reader, &record)) > 0) {
		err = profile_feed(profile, record.data, record.size);
		if (err)
			break;
	}
	if (err < 0) {
		fprintf(stderr, "optrace: cannot read %s: %s\n", replay->path, strerror(-err));
		return err;
	}
	replay->status = capture_reader_status(replay->reader);
	if (replay->status->end != CAPTURE_END_CLEAN)
		fprintf(stderr, "optrace: %s: %s\n", replay->path, replay->status->message);
	profile_finish(profile);
	return 0;
}

void replay_close(struct replay *replay)
{
	if (replay->reader)
		capture_reader_close(replay->reader);
	memset(replay, 0, sizeof(*replay));
}
