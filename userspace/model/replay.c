// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/diag.h"
#include "probes/cupti/gpufile.h"
#include "model/replay.h"

static enum capture_end gpu_file_capture_end(int end)
{
	switch (end) {
	case GPU_FILE_END_NO_MARKER:
		return CAPTURE_END_NO_MARKER;
	case GPU_FILE_END_TRUNCATED:
		return CAPTURE_END_TRUNCATED;
	case GPU_FILE_END_CORRUPT:
		return CAPTURE_END_CORRUPT;
	default:
		return CAPTURE_END_CLEAN;
	}
}

static void add_note(struct replay *replay, const char *text, bool lost)
{
	struct replay_note *note;

	if (replay->note_count == REPLAY_NOTES_MAX)
		return;
	note = &replay->notes[replay->note_count++];
	snprintf(note->text, sizeof(note->text), "%s", text);
	note->lost = lost;
}

/* A GPU file alone: a header for the exporters, its clock base its creation. */
static int open_gpu_only(struct replay *replay, const char *path)
{
	struct gpu_file_reader reader;
	int err = gpu_file_open(&reader, path);
	char why[256];

	if (err) {
		gpu_file_open_error(&reader, err, why, sizeof(why));
		diag("%s: %s", path, why);
		return err;
	}
	snprintf(replay->gpu_only_target, sizeof(replay->gpu_only_target),
		 "the GPU activity of process %u (OPTRACE_GPU_FILE)", reader.header.pid);
	replay->gpu_only_header.monotonic_ns = reader.header.created_ns;
	replay->gpu_only_header.optrace_version = "";
	replay->gpu_only_header.hostname = "";
	replay->gpu_only_header.target = replay->gpu_only_target;
	replay->gpu_only_status.end = CAPTURE_END_CLEAN;
	gpu_file_reader_close(&reader);
	replay->header = &replay->gpu_only_header;
	err = replay_add_gpu_file(replay, path);
	replay->gpu_only_status.records = replay->gpu.activity_count + replay->gpu.launch_count;
	/* The file's own end is the report's. */
	replay->gpu_only_status.end = gpu_file_capture_end(replay->gpu.file_end);
	snprintf(replay->gpu_only_status.message, sizeof(replay->gpu_only_status.message), "%.*s",
		 (int)sizeof(replay->gpu_only_status.message) - 1,
		 replay->note_count ? replay->notes[0].text : "clean end");
	return err;
}

int replay_open(struct replay *replay, const char *path)
{
	char why[256];
	int err;

	memset(replay, 0, sizeof(*replay));
	replay->path = path;
	gpu_index_init(&replay->gpu);
	/* Before anything opens it: a pipe with no writer blocks open(). */
	err = capture_check_input(path, why, sizeof(why));
	if (err) {
		diag("%s", why);
		return err;
	}
	if (gpu_index_is_file(path))
		return open_gpu_only(replay, path);
	err = capture_reader_open(&replay->reader, path, why, sizeof(why));
	if (err) {
		diag("%s", why);
		return err;
	}
	replay->header = capture_reader_header(replay->reader);
	return 0;
}

int replay_add_gpu_file(struct replay *replay, const char *path)
{
	char why[512] = "";
	long count = capture_check_input(path, why, sizeof(why));

	if (!count)
		count = gpu_index_read_file(&replay->gpu, path, why, sizeof(why));
	if (count < 0) {
		diag("%s", why);
		return (int)count;
	}
	if (why[0]) {
		diag("%s", why);
		add_note(replay, why, replay->gpu.file_end != GPU_FILE_END_CLEAN);
	}
	return 0;
}

static int read_gpu(struct replay *replay, struct profile *profile)
{
	uint64_t gpu_records = 1;
	long count = 0;
	int err;

	/* A clean capture says whether it holds any; else read to see. */
	if (replay->reader &&
	    (capture_peek_counter(replay->path, CAPTURE_COUNTER_GPU_RECORDS, &gpu_records) ||
	     gpu_records))
		count = gpu_index_read_capture(&replay->gpu, replay->path);
	if (count < 0) {
		diag("cannot read %s: %s", replay->path, strerror(-count));
		return (int)count;
	}
	if (!replay->gpu.activity_count && !replay->gpu.launch_count)
		return 0;
	err = gpu_index_seal(&replay->gpu);
	if (err) {
		diag("%s", strerror(-err));
		return err;
	}
	profile_set_gpu(profile, &replay->gpu);
	return 0;
}

int replay_run(struct replay *replay, struct profile *profile)
{
	bool progress = isatty(STDERR_FILENO);
	struct capture_record record;
	uint64_t records = 0;
	struct stat st;
	int err;

	err = read_gpu(replay, profile);
	if (err)
		return err;
	if (!replay->reader) {
		replay->status = &replay->gpu_only_status;
		profile_finish(profile);
		return 0;
	}
	if (stat(replay->path, &st) || st.st_size < (16 << 20))
		progress = false; /* small files are read in a blink */
	while ((err = capture_next(replay->reader, &record)) > 0) {
		err = profile_feed(profile, record.data, record.size);
		if (err)
			break;
		/* Long exports say how far they are, on a terminal. */
		if (progress && (++records & ((1 << 20) - 1)) == 0) {
			double done =
				(double)record.chunk * replay->header->chunk_size / st.st_size;

			fprintf(stderr, "\roptrace: reading %s: %3.0f%% (%.0f M records)",
				replay->path, done < 1 ? done * 100 : 99.0, records / 1e6);
		}
	}
	if (progress && records >= (1 << 20))
		fprintf(stderr, "\r\033[K");
	if (err < 0) {
		diag("cannot read %s: %s", replay->path, strerror(-err));
		return err;
	}
	replay->status = capture_reader_status(replay->reader);
	if (replay->status->end != CAPTURE_END_CLEAN)
		diag("%s: %s", replay->path, replay->status->message);
	/* Cut, damaged, records the recorder could not write, bytes ignored: said. */
	if (replay->status->end != CAPTURE_END_CLEAN || replay->status->trailing_bytes ||
	    replay->status->trailer.records_lost) {
		char note[sizeof(replay->notes[0].text)];

		snprintf(note, sizeof(note), "%s: %s", replay->path, replay->status->message);
		add_note(replay, note,
			 replay->status->end != CAPTURE_END_CLEAN ||
				 replay->status->trailer.records_lost);
	}
	profile_finish(profile);
	return 0;
}

void replay_close(struct replay *replay)
{
	if (replay->reader)
		capture_reader_close(replay->reader);
	gpu_index_free(&replay->gpu);
	memset(replay, 0, sizeof(*replay));
}
