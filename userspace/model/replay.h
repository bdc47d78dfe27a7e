/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Feeding capture files through the profile model, for report and export,
 * with the GPU activity they hold (or an OPTRACE_GPU_FILE's) attributed.
 * Several captures (one per node of a job) merge onto one timeline: each
 * capture's CLOCK_MONOTONIC timestamps are moved onto the reference's (the
 * capture that started first) through their CLOCK_REALTIME anchors, taken at
 * the start and the end of recording, so the merge is as exact as the
 * hosts' clock synchronisation (NTP, PTP). Processes of different hosts that
 * share a pid get distinct ids in the profile; the names keep their pid and
 * host.
 */
#ifndef OPTRACE_MODEL_REPLAY_H
#define OPTRACE_MODEL_REPLAY_H

#include "capture/capture.h"
#include "model/gpu_index.h"
#include "model/profile.h"

/* What the report must say besides its tables (stdout, not only stderr). */
struct replay_note {
	char text[640];
	bool lost; /* something is missing from the report because of it */
};

#define REPLAY_NOTES_MAX 8
#define REPLAY_SOURCES_MAX 256

/* One capture of a merge. */
struct replay_source {
	const char *path;
	struct capture_reader *reader;
	const struct capture_header *header;
	const struct capture_status *status; /* once read */
	/* Its timestamps on the reference's clock: + offset, drifting linearly to end. */
	int64_t offset_ns;
	int64_t end_offset_ns;
	uint64_t end_monotonic_ns; /* 0: no end anchor (a capture cut short) */
	struct idmap pids;	   /* its pid -> the process id in the profile, + 1 */
};

struct replay {
	const char *path;		     /* the first capture's */
	struct capture_reader *reader;	     /* the first's; NULL when path is a GPU file alone */
	const struct capture_header *header; /* the reference's: the earliest start */
	const struct capture_status *status; /* the first's */
	struct replay_source *sources;
	size_t source_count;
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

/*
 * Opens count captures to merge (count 1: as replay_open). The same process
 * (host boot and pid) in two of them is refused: -EEXIST, said. 0 or -errno.
 */
int replay_open_many(struct replay *replay, const char *const *paths, size_t count);

/*
 * A pass over every record of every capture, as the profile will get them
 * (merged ids and times), without the profile: for exporters that must
 * know every process first. fn returns non-zero to stop. 0 or -errno, said.
 */
int replay_scan(struct replay *replay,
		int (*fn)(void *ctx, unsigned int type, const void *record, size_t size),
		void *ctx);

/* The end markers' counter name, summed over the captures read (0 where absent). */
uint64_t replay_counter(const struct replay *replay, const char *name);

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

/*
 * After replay_run(): says (diag) each capture nothing of which could be
 * read (a damaged file, not an empty recording); -EBADMSG if any, else 0.
 * Every command that reads captures fails the same way then.
 */
int replay_check_readable(const struct replay *replay);

#endif /* OPTRACE_MODEL_REPLAY_H */
