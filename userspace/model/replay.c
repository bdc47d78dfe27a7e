// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <linux/types.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpf/events.h"
#include "common/diag.h"
#include "model/replay.h"
#include "probes/cupti/gpufile.h"

/* Ids given to a process whose pid another host's process already has. */
#define MERGED_ID_BASE (1u << 31)
#define MERGED_PID_BITS 22 /* pid_max is at most 2^22 */

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

static int open_source(struct replay_source *source, const char *path)
{
	char why[256];
	int err;

	source->path = path;
	err = capture_reader_open(&source->reader, path, why, sizeof(why));
	if (err) {
		diag("%s", why);
		return err;
	}
	source->header = capture_reader_header(source->reader);
	return 0;
}

/* realtime - monotonic at the header's anchor: where a capture's clock sits. */
static int64_t clock_delta(const struct capture_header *header)
{
	return (int64_t)(header->realtime_ns - header->monotonic_ns);
}

/* Reads every record of a capture from its start with a reader of its own. */
static int read_records(const struct replay_source *source,
			int (*fn)(void *ctx, const struct capture_record *record), void *ctx)
{
	struct capture_reader *reader;
	struct capture_record record;
	int err;

	err = capture_reader_open_again(&reader, source->reader);
	if (err)
		return err;
	while ((err = capture_next(reader, &record)) > 0) {
		err = fn(ctx, &record);
		if (err)
			break;
	}
	capture_reader_close(reader);
	return err < 0 ? err : 0;
}

struct pid_scan {
	struct replay *replay;
	size_t source;
	struct idmap *owners; /* pid -> the first source that has it, + 1 */
	int error;
};

static const char *boot_of(const struct replay_source *source)
{
	const char *boot = capture_header_get(source->header, CAPTURE_KEY_BOOT_ID);

	return boot ? boot : "";
}

/*
 * The same boot of the same host: a pid there names one process. Captures
 * of before boot ids were recorded: the same host name.
 */
static bool same_boot(const struct replay_source *a, const struct replay_source *b)
{
	return !strcmp(boot_of(a), boot_of(b)) && !strcmp(a->header->hostname, b->header->hostname);
}

static int note_pid(void *ctx, const struct capture_record *record)
{
	struct pid_scan *scan = ctx;
	struct replay_source *sources = scan->replay->sources, *source = &sources[scan->source];
	const struct record_event *event = record->data;
	uint32_t mapped, owner;

	if (record->size < sizeof(*event) || !event->tgid || record->type == RECORD_CLOCK ||
	    idmap_get(&source->pids, event->tgid, 0))
		return 0;
	owner = (uint32_t)(uintptr_t)idmap_get(scan->owners, event->tgid, 0);
	if (owner && same_boot(&sources[owner - 1], source)) {
		diag("process %u of %s is in both %s and %s (two tracers recorded it): merge "
		     "one of them",
		     event->tgid, source->header->hostname, sources[owner - 1].path, source->path);
		scan->error = -EEXIST;
		return 1;
	}
	/* A pid of another host (or boot) than its first owner's gets an id of its own. */
	mapped = owner ? MERGED_ID_BASE | (uint32_t)scan->source << MERGED_PID_BITS | event->tgid
		       : event->tgid;
	if ((!owner &&
	     idmap_put(scan->owners, event->tgid, 0, (void *)(uintptr_t)(scan->source + 1))) ||
	    idmap_put(&source->pids, event->tgid, 0, (void *)(uintptr_t)(mapped + 1))) {
		scan->error = -ENOMEM;
		return 1;
	}
	return 0;
}

/* Merging: each capture's processes, their ids in the profile, and its clock offset. */
static int plan_merge(struct replay *replay)
{
	struct idmap owners = { 0 };
	const struct capture_header *reference = replay->sources[0].header;
	int err = 0;

	for (size_t i = 1; i < replay->source_count; i++) {
		if (replay->sources[i].header->realtime_ns < reference->realtime_ns)
			reference = replay->sources[i].header;
	}
	replay->header = reference;
	for (size_t i = 0; !err && i < replay->source_count; i++) {
		struct pid_scan scan = { .replay = replay, .source = i, .owners = &owners };
		struct replay_source *source = &replay->sources[i];

		source->offset_ns = clock_delta(source->header) - clock_delta(reference);
		err = read_records(source, note_pid, &scan) ?: scan.error;
	}
	idmap_free(&owners);
	return err;
}

int replay_open_many(struct replay *replay, const char *const *paths, size_t count)
{
	char why[256];
	int err = 0;

	memset(replay, 0, sizeof(*replay));
	replay->path = paths[0];
	gpu_index_init(&replay->gpu);
	if (count > REPLAY_SOURCES_MAX) {
		diag("at most %d captures at once", REPLAY_SOURCES_MAX);
		return -E2BIG;
	}
	/* Before anything opens them: a pipe with no writer blocks open(). */
	for (size_t i = 0; i < count; i++) {
		err = capture_check_input(paths[i], why, sizeof(why));
		if (err) {
			diag("%s", why);
			return err;
		}
		for (size_t j = 0; j < i; j++) {
			struct stat x, y;

			if (!stat(paths[i], &x) && !stat(paths[j], &y) && x.st_dev == y.st_dev &&
			    x.st_ino == y.st_ino) {
				diag("%s is given twice (as %s): its processes would count twice",
				     paths[i], paths[j]);
				return -EINVAL;
			}
		}
		if (count > 1 && gpu_index_is_file(paths[i])) {
			diag("%s is an OPTRACE_GPU_FILE: merge it into its capture with --gpu",
			     paths[i]);
			return -EINVAL;
		}
	}
	if (count == 1 && gpu_index_is_file(paths[0]))
		return open_gpu_only(replay, paths[0]);
	replay->sources = calloc(count, sizeof(*replay->sources));
	if (!replay->sources)
		return -ENOMEM;
	replay->source_count = count;
	for (size_t i = 0; !err && i < count; i++)
		err = open_source(&replay->sources[i], paths[i]);
	if (err)
		return err;
	replay->reader = replay->sources[0].reader;
	replay->header = replay->sources[0].header;
	return count > 1 ? plan_merge(replay) : 0;
}

int replay_open(struct replay *replay, const char *path)
{
	return replay_open_many(replay, &path, 1);
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

/* ---- one capture's records as the profile gets them ------------------------ */

struct merged_record {
	struct replay *replay;
	struct replay_source *source;
	void *copy; /* a record with the profile's id and time, when merging */
	size_t copy_size;
};

/*
 * The record with its process id and timestamp on the merged timeline (every
 * record starts with the timestamp, tgid and tid of struct record_event), or
 * itself when nothing is merged. A clock anchor moves the capture's offset.
 */
static const void *merged(struct merged_record *m, const struct capture_record *record)
{
	struct replay_source *source = m->source;
	struct record_event *head;
	uintptr_t mapped;

	if (m->replay->source_count < 2 || record->size < sizeof(*head))
		return record->data;
	if (record->type == RECORD_CLOCK && record->size >= sizeof(struct record_clock)) {
		const struct record_clock *clock = record->data;

		source->offset_ns = (int64_t)(clock->realtime_ns - clock->timestamp) -
				    clock_delta(m->replay->header);
	}
	if (m->copy_size < record->size) {
		void *grown = realloc(m->copy, record->size);

		if (!grown)
			return NULL;
		m->copy = grown;
		m->copy_size = record->size;
	}
	memcpy(m->copy, record->data, record->size);
	head = m->copy;
	if (head->timestamp) /* 0: no time (a string read by the recorder itself) */
		head->timestamp += (uint64_t)source->offset_ns;
	mapped = (uintptr_t)idmap_get(&source->pids, head->tgid, 0);
	if (mapped)
		head->tgid = (uint32_t)(mapped - 1);
	return m->copy;
}

struct scan_pass {
	struct merged_record m;
	int (*fn)(void *ctx, unsigned int type, const void *record, size_t size);
	void *ctx;
};

static int scan_record(void *ctx, const struct capture_record *record)
{
	struct scan_pass *pass = ctx;
	const void *data = merged(&pass->m, record);

	return data ? pass->fn(pass->ctx, record->type, data, record->size) : -ENOMEM;
}

int replay_scan(struct replay *replay,
		int (*fn)(void *ctx, unsigned int type, const void *record, size_t size), void *ctx)
{
	struct scan_pass pass = { .m.replay = replay, .fn = fn, .ctx = ctx };
	int err = 0;

	for (size_t i = 0; !err && i < replay->source_count; i++) {
		int64_t offset = replay->sources[i].offset_ns;

		pass.m.source = &replay->sources[i];
		err = read_records(pass.m.source, scan_record, &pass);
		replay->sources[i].offset_ns = offset; /* the next pass starts over */
		replay->sources[i].status = capture_reader_status(replay->sources[i].reader);
		if (err < 0)
			diag("cannot read %s: %s", replay->sources[i].path, strerror(-err));
	}
	free(pass.m.copy);
	return err < 0 ? err : 0;
}

/* ---- GPU records: a pass of their own ------------------------------------- */

static int add_gpu_record(void *ctx, unsigned int type, const void *record, size_t size)
{
	struct replay *replay = ctx;

	if (!record_is_gpu(type))
		return 0;
	return gpu_index_add_record(&replay->gpu, type, record, size);
}

/* Moves the GPU activity added since (activities, launches) onto the merged timeline. */
static void shift_gpu(struct gpu_index *gpu, size_t activities, size_t launches, int64_t offset_ns)
{
	for (size_t i = activities; offset_ns && i < gpu->activity_count; i++) {
		if (gpu->activities[i].time_invalid)
			continue;
		gpu->activities[i].start_ns += (uint64_t)offset_ns;
		gpu->activities[i].end_ns += (uint64_t)offset_ns;
	}
	for (size_t i = launches; offset_ns && i < gpu->launch_count; i++) {
		if (!gpu->launches[i].start_ns)
			continue;
		gpu->launches[i].start_ns += (uint64_t)offset_ns;
		gpu->launches[i].end_ns += (uint64_t)offset_ns;
	}
}

static int read_gpu(struct replay *replay, struct profile *profile)
{
	struct scan_pass pass = { .m.replay = replay, .fn = add_gpu_record, .ctx = replay };
	int err = 0;

	for (size_t i = 0; !err && i < replay->source_count; i++) {
		struct replay_source *source = &replay->sources[i];
		size_t activities = replay->gpu.activity_count, launches = replay->gpu.launch_count;
		int64_t offset = source->offset_ns;
		uint64_t gpu_records = 1;

		/* A clean capture says whether it holds any; else read to see. */
		if (!capture_peek_counter(source->path, capture_counter_name(CAPTURE_GPU_RECORDS),
					  &gpu_records) &&
		    !gpu_records)
			continue;
		replay->gpu.sources++;
		pass.m.source = source;
		err = read_records(source, scan_record, &pass);
		if (err)
			diag("cannot read %s: %s", source->path, strerror(-err));
		/* CUPTI's times are the recording host's: the offset at the start. */
		shift_gpu(&replay->gpu, activities, launches,
			  replay->source_count > 1 ? offset : 0);
		source->offset_ns = offset;
	}
	free(pass.m.copy);
	if (err)
		return err;
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

/*
 * Whether GPU records are attributed as they come (profile_stream_gpu):
 * every capture says it holds gpu_launch records, and no GPU file is merged
 * (its records have no launches). OPTRACE_GPU_READ_AHEAD=1 reads them ahead
 * all the same, to compare.
 */
static bool streams_gpu(struct replay *replay)
{
	const char *read_ahead = getenv("OPTRACE_GPU_READ_AHEAD");
	uint64_t launches;

	if (!replay->source_count || replay->gpu.activity_count || replay->gpu.launch_count ||
	    (read_ahead && !strcmp(read_ahead, "1")))
		return false;
	for (size_t i = 0; i < replay->source_count; i++) {
		if (capture_peek_counter(replay->sources[i].path,
					 capture_counter_name(CAPTURE_GPU_LAUNCHES), &launches) ||
		    !launches)
			return false;
	}
	return true;
}

/* ---- the profile's pass ---------------------------------------------------- */

/* Merged processes keep their pid and host in the profile's names. */
static int name_merged_processes(struct replay *replay, struct profile *profile)
{
	for (size_t i = 0; replay->source_count > 1 && i < replay->source_count; i++) {
		struct replay_source *source = &replay->sources[i];

		for (size_t s = 0; s < source->pids.capacity; s++) {
			uintptr_t mapped = (uintptr_t)source->pids.slots[s].value;
			int err;

			if (!mapped)
				continue;
			err = profile_names_set_origin(&profile->names, (uint32_t)(mapped - 1),
						       (uint32_t)source->pids.slots[s].id,
						       source->header->hostname);
			if (err)
				return err;
		}
	}
	return 0;
}

/* Nothing could be read: a damaged file, not an empty recording. */
static bool nothing_readable(const struct capture_status *status)
{
	return status && !status->records &&
	       (status->end != CAPTURE_END_CLEAN || status->trailer.records_lost);
}

static int feed_source(struct replay *replay, struct replay_source *source, struct profile *profile)
{
	struct merged_record m = { .replay = replay, .source = source };
	bool progress = isatty(STDERR_FILENO);
	struct capture_record record;
	uint64_t records = 0;
	uint64_t size = capture_reader_size(source->reader);
	int err;

	if (size < (16 << 20))
		progress = false; /* small files are read in a blink */
	/* CUPTI's times are the recording host's: the offset at the start. */
	profile_set_gpu_offset(profile, replay->source_count > 1 ? source->offset_ns : 0);
	while ((err = capture_next(source->reader, &record)) > 0) {
		const void *data = merged(&m, &record);

		err = data ? profile_feed(profile, data, record.size) : -ENOMEM;
		if (err)
			break;
		/* Long exports say how far they are, on a terminal. */
		if (progress && (++records & ((1 << 20) - 1)) == 0) {
			double done =
				(double)record.chunk * source->header->chunk_size / (double)size;

			/* A line redrawn in place, not diag(). */
			fprintf(stderr, "\roptrace: reading %s: %3.0f%% (%.0f M records)",
				source->path, done < 1 ? done * 100 : 99.0, records / 1e6);
		}
	}
	free(m.copy);
	/* The progress line erased (not diag(): no line of its own). */
	if (progress && records >= (1 << 20))
		fprintf(stderr, "\r\033[K");
	if (err < 0) {
		diag("cannot read %s: %s", source->path, strerror(-err));
		return err;
	}
	source->status = capture_reader_status(source->reader);
	/* Nothing read at all is said once, by replay_check_readable(). */
	if (source->status->end != CAPTURE_END_CLEAN && !nothing_readable(source->status))
		diag("%s: %s", source->path, source->status->message);
	/* Cut, damaged, records the recorder could not write, bytes ignored: said. */
	if (source->status->end != CAPTURE_END_CLEAN || source->status->trailing_bytes ||
	    source->status->trailer.records_lost) {
		char note[sizeof(replay->notes[0].text)];

		snprintf(note, sizeof(note), "%s: %s", source->path, source->status->message);
		add_note(replay, note,
			 source->status->end != CAPTURE_END_CLEAN ||
				 source->status->trailer.records_lost);
	}
	return 0;
}

int replay_run(struct replay *replay, struct profile *profile)
{
	int err;

	err = streams_gpu(replay) ? profile_stream_gpu(profile) : read_gpu(replay, profile);
	err = err ?: name_merged_processes(replay, profile);
	if (err)
		return err;
	if (!replay->source_count) {
		replay->status = &replay->gpu_only_status;
		profile_finish(profile);
		return 0;
	}
	for (size_t i = 0; !err && i < replay->source_count; i++)
		err = feed_source(replay, &replay->sources[i], profile);
	if (err)
		return err;
	replay->status = replay->sources[0].status;
	profile_finish(profile);
	return 0;
}

uint64_t replay_counter(const struct replay *replay, const char *name)
{
	const struct capture_status *one = replay->status;
	size_t count = replay->source_count ? replay->source_count : 1;
	uint64_t lost = 0;

	for (size_t i = 0; i < count; i++) {
		const struct capture_status *status =
			replay->source_count ? replay->sources[i].status : one;

		for (size_t j = 0;
		     status && status->has_trailer && j < status->trailer.counter_count; j++) {
			if (!strcmp(status->trailer.counters[j].name, name))
				lost += status->trailer.counters[j].value;
		}
	}
	return lost;
}

void replay_close(struct replay *replay)
{
	for (size_t i = 0; i < replay->source_count; i++) {
		if (replay->sources[i].reader)
			capture_reader_close(replay->sources[i].reader);
		idmap_free(&replay->sources[i].pids);
	}
	free(replay->sources);
	gpu_index_free(&replay->gpu);
	memset(replay, 0, sizeof(*replay));
}

int replay_check_readable(const struct replay *replay)
{
	int err = 0;

	for (size_t i = 0; i < replay->source_count; i++) {
		if (nothing_readable(replay->sources[i].status)) {
			diag("nothing in %s could be read: %s", replay->sources[i].path,
			     replay->sources[i].status->message);
			err = -EBADMSG;
		}
	}
	if (!replay->source_count && nothing_readable(replay->status)) {
		diag("nothing in %s could be read: %s", replay->path, replay->status->message);
		err = -EBADMSG;
	}
	return err;
}
