// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Records into the capture: routing, the reorder window, the names and
 * ranks of what is met first, the losses at the end; see recorder_core.h.
 */
#include <string.h>

#include "common/diag.h"
#include "session/recorder_core.h"

static void note_error(struct recorder_core *core, int err)
{
	keep_first_error(&core->error, err);
}

void recorder_core_init(struct recorder_core *core, struct capture_writer *writer,
			const struct record_facts *facts)
{
	memset(core, 0, sizeof(*core));
	core->writer = writer;
	core->facts = facts ? facts : &record_facts_proc;
	core->held_max = HELD_MAX;
}

void recorder_core_start(struct recorder_core *core, bool fast_path, uint64_t start_ns)
{
	core->fast_path = fast_path;
	batch_decoder_init(&core->decoder, start_ns);
}

/*
 * The rank a process announced before the recording began, read from
 * liboptrace's memory the first time the process is met (as stat -p does):
 * a capture of a live job keeps its ranks. Ordered with the events, as the
 * probe's rt_init is.
 */
static void write_announced_rank(struct recorder_core *core, uint64_t timestamp, uint32_t tgid,
				 uint32_t tid)
{
	struct record_event event;

	if (core->gpu_only || idmap_get(&core->ranked, tgid, 0))
		return;
	note_error(core, idmap_put(&core->ranked, tgid, 0, (void *)1));
	if (!record_meta_rank(core->facts, timestamp, tgid, tid, &event))
		return; /* not announced yet: its probe will say it */
	if (core->fast_path) {
		note_error(core, batch_decoder_push(&core->decoder, &event));
		core->pushed++;
		return;
	}
	note_error(core, capture_write(core->writer, event.type, &event, sizeof(event)));
	core->events++;
}

/*
 * Names thread tid and its process in the capture, the first time either is
 * met: from the kernel's comms when given (a batch brings them), else from
 * the facts. Written as events arrive, before they wait to be put in order:
 * a short run has exited by then.
 */
static void write_names(struct recorder_core *core, uint64_t timestamp, uint32_t tgid, uint32_t tid,
			const char *process_comm, const char *thread_comm)
{
	const char *given[2] = { process_comm, thread_comm };
	uint32_t ids[2] = { 0, tid };

	for (int i = 0; i < 2; i++) {
		struct record_name record;

		if (idmap_get(&core->named, tgid, ids[i]))
			continue;
		/* Asked once: a process that has exited keeps its pid as its name. */
		note_error(core, idmap_put(&core->named, tgid, ids[i], (void *)1));
		if (record_meta_name(core->facts, timestamp, tgid, ids[i], given[i], &record))
			note_error(core, capture_write(core->writer, RECORD_NAME, &record,
						       sizeof(record)));
	}
	write_announced_rank(core, timestamp, tgid, tid);
}

void recorder_core_clock(struct recorder_core *core)
{
	struct record_clock record;

	record_meta_clock(&record);
	note_error(core, capture_write(core->writer, RECORD_CLOCK, &record, sizeof(record)));
}

void recorder_core_tick(struct recorder_core *core)
{
	recorder_core_clock(core);
	capture_flush(core->writer);
	batch_decoder_trim(&core->decoder);
}

static int write_event(void *ctx, const struct record_event *event)
{
	struct recorder_core *core = ctx;

	note_error(core, capture_write(core->writer, event->type, event, sizeof(*event)));
	core->events++;
	core->decoded_written++;
	if (event->type == RECORD_GPU_LAUNCH)
		core->gpu_launches++;
	return 0;
}

static int on_batch(struct recorder_core *core, const struct record_batch *batch, size_t size)
{
	struct batch_origin origin = {
		.tgid = batch->tgid,
		.tid = batch->tid,
		.buffer = batch->buffer,
		.cpu = batch->cpu,
		.ns_tid = batch->ns_tid,
	};

	if (size < RECORD_BATCH_SIZE(0) || batch->count > OPTRACE_BATCH_EVENTS ||
	    size < RECORD_BATCH_SIZE(batch->count))
		return 0; /* cannot be: the kernel wrote it */
	write_names(core, batch->timestamp, batch->tgid, batch->tid, batch->process_comm,
		    batch->thread_comm);
	note_error(core, batch_decoder_add(&core->decoder, &origin, batch->sequence, batch->count,
					   batch->events));
	return 0;
}

/* A string an idle thread's event names, which no batch brought: read here. */
static void write_string(struct recorder_core *core, pid_t pid, uint64_t address)
{
	struct record_string record;

	if (!address || idmap_get(&core->strings, (uint32_t)pid, address))
		return;
	record_meta_string(core->facts, core->decoder.written_ns, pid, address, &record);
	note_error(core, capture_write(core->writer, RECORD_STRING, &record, sizeof(record)));
	note_error(core, idmap_put(&core->strings, (uint32_t)pid, address, (void *)1));
}

int recorder_core_idle_buffer(void *ctx, pid_t pid, uint32_t tid, uint64_t address,
			      uint64_t sequence, uint32_t count, const struct optrace_event *events)
{
	struct recorder_core *core = ctx;
	struct batch_origin origin = {
		.tgid = (uint32_t)pid, .tid = tid, .buffer = address, .idle = true
	};

	write_names(core, core->decoder.written_ns, (uint32_t)pid, tid, NULL, NULL);
	for (uint32_t i = 0; i < count; i++) {
		uint64_t strings[OPTRACE_EVENT_MAX_STRINGS];
		unsigned int string_count = optrace_event_strings(&events[i], false, strings);

		for (unsigned int k = 0; k < string_count; k++)
			write_string(core, pid, strings[k]);
	}
	note_error(core, batch_decoder_add(&core->decoder, &origin, sequence, count, events));
	return 0;
}

int recorder_core_record(struct recorder_core *core, const void *data, size_t size)
{
	const struct record_event *event = data;

	if (size < sizeof(*event))
		return 0;
	if (event->type == RECORD_BATCH)
		return on_batch(core, data, size);
	if (event->type == RECORD_STRING && size >= sizeof(struct record_string))
		note_error(core,
			   idmap_put(&core->strings, event->tgid,
				     ((const struct record_string *)data)->address, (void *)1));
	/* The stop is one instant on the per-event path too: nothing after it. */
	if (record_is_probe_event(event->type) && event->timestamp > core->decoder.stop_ns)
		return 0;
	if (event->type == RECORD_RT_INIT)
		note_error(core, idmap_put(&core->ranked, event->tgid, 0, (void *)1));
	/* rt_init waits its turn with the batches' events. */
	if (core->fast_path && event->type == RECORD_RT_INIT) {
		note_error(core, batch_decoder_push(&core->decoder, event));
		core->pushed++;
		return 0;
	}
	if (core->gpu_only && !record_is_gpu(event->type))
		return 0;
	if (record_is_probe_event(event->type))
		write_names(core, event->timestamp, event->tgid, event->tid, NULL, NULL);
	note_error(core, capture_write(core->writer, event->type, data, (uint32_t)size));
	core->events++;
	if (record_is_gpu(event->type))
		core->gpu_records++;
	if (event->type == RECORD_GPU_LAUNCH)
		core->gpu_launches++;
	return 0;
}

void recorder_core_write_ordered(struct recorder_core *core, uint64_t watermark_ns)
{
	/* Held: what the decoder took, from batches or one by one, not yet written. */
	if (core->decoder.stats.decoded + core->pushed - core->decoded_written > core->held_max) {
		watermark_ns = UINT64_MAX;
		if (!core->window_shrunk)
			diag("events come faster than they are written: the reorder window is "
			     "cut short to keep memory bounded (events.late counts what came out "
			     "of order)");
		core->window_shrunk = true;
	}
	batch_decoder_drain(&core->decoder, watermark_ns, write_event, core);
}

void recorder_core_stop_at(struct recorder_core *core, uint64_t stop_ns)
{
	core->decoder.stop_ns = stop_ns;
}

void recorder_core_finish(struct recorder_core *core)
{
	const struct batch_decoder_stats *stats = &core->decoder.stats;

	batch_decoder_finish(&core->decoder);
	batch_decoder_drain(&core->decoder, UINT64_MAX, write_event, core);
	if (stats->missing || stats->late || stats->malformed)
		diag("fast path: %llu events missing from their threads' sequences (lost in the "
		     "kernel, or never handed over), %llu written out of order, %llu malformed",
		     (unsigned long long)stats->missing, (unsigned long long)stats->late,
		     (unsigned long long)stats->malformed);
}

void recorder_core_counters(const struct recorder_core *core,
			    const uint64_t losses[RECORD_LOSS__COUNT],
			    struct capture_counter counters[CAPTURE_COUNTER__COUNT])
{
	const struct batch_decoder_stats *stats = &core->decoder.stats;
	uint64_t values[CAPTURE_COUNTER__COUNT];

	values[CAPTURE_LOST_RINGBUF_FULL] = losses[RECORD_LOSS_RINGBUF_FULL];
	values[CAPTURE_LOST_STRINGS] = losses[RECORD_LOSS_STRING_DROPPED];
	values[CAPTURE_STRINGS_UNREADABLE] = losses[RECORD_LOSS_STRING_UNREADABLE];
	values[CAPTURE_STRINGS_TRUNCATED] = losses[RECORD_LOSS_STRING_TRUNCATED];
	values[CAPTURE_LOST_GPU_UNREADABLE] = losses[RECORD_LOSS_GPU_UNREADABLE];
	values[CAPTURE_GPU_RECORDS] = core->gpu_records;
	values[CAPTURE_LOST_BATCH_MALFORMED] = losses[RECORD_LOSS_BATCH_BAD] + stats->malformed;
	values[CAPTURE_LOST_BATCH_MISSING] = stats->missing;
	values[CAPTURE_EVENTS_LATE] = stats->late;
	values[CAPTURE_EVENTS_DUPLICATE] = stats->duplicates;
	values[CAPTURE_LOST_GPU_RINGBUF_FULL] = losses[RECORD_LOSS_GPU_RINGBUF_FULL];
	values[CAPTURE_GPU_LAUNCHES] = core->gpu_launches;
	for (int i = 0; i < CAPTURE_COUNTER__COUNT; i++)
		counters[i] = (struct capture_counter){ capture_counter_name(i), values[i] };
}

int recorder_core_close(struct recorder_core *core, const uint64_t losses[RECORD_LOSS__COUNT],
			uint64_t *file_bytes)
{
	struct capture_counter counters[CAPTURE_COUNTER__COUNT];
	struct capture_writer_stats written;
	int err;

	recorder_core_counters(core, losses, counters);
	capture_flush(core->writer); /* an error is the writer's, said by capture_close() */
	capture_writer_stats(core->writer, &written);
	*file_bytes = written.file_bytes;
	err = capture_close(core->writer, counters, CAPTURE_COUNTER__COUNT);
	core->writer = NULL;
	return err;
}

void recorder_core_free(struct recorder_core *core)
{
	batch_decoder_free(&core->decoder);
	idmap_free(&core->strings);
	idmap_free(&core->named);
	idmap_free(&core->ranked);
}
