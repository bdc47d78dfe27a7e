// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
	bool progress = isatty(STDERR_FILENO);
	struct capture_record record;
	uint64_t records = 0;
	struct stat st;
	int err;

	if (stat(replay->path, &st) || st.st_size < (16 << 20))
		progress = false; /* small files are read in a blink */
	while ((err = capture_next(replay->reader, &record)) > 0) {
		err = profile_feed(profile, record.data, record.size);
		if (err)
			break;
		/* Long exports say how far they are, on a terminal. */
		if (progress && (++records & ((1 << 20) - 1)) == 0) {
			double done = (double)record.chunk * replay->header->chunk_size / st.st_size;

			fprintf(stderr, "\roptrace: reading %s: %3.0f%% (%.0f M records)",
				replay->path, done < 1 ? done * 100 : 99.0, records / 1e6);
		}
	}
	if (progress && records >= (1 << 20))
		fprintf(stderr, "\r\033[K");
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
