// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <optrace/gpu.h>
#include <string.h>

#include "output/async_out.h"
#include "output/chrome.h"
#include "output/export_format.h"
#include "output/json.h"
#include "output/op_title.h"
#include "output/track_names.h"

/*
 * Exports write hundreds of megabytes of these: into a buffer of our own
 * with memcpy and a hand-made integer format, not printf or stdio per field,
 * and written to the file by a thread of its own (async_out) meanwhile.
 */
static void flush_buffer(struct chrome_writer *writer)
{
	if (writer->used)
		writer->buffer = async_out_swap(writer->async, writer->buffer, writer->used);
	writer->used = 0;
}

/* A piece that does not fit: fill the buffer, hand it over, go on. */
static __attribute__((noinline)) void put_spilling(struct chrome_writer *writer, const char *bytes,
						   size_t length)
{
	while (writer->used + length > ASYNC_OUT_BUFFER) {
		size_t room = ASYNC_OUT_BUFFER - writer->used;

		memcpy(writer->buffer + writer->used, bytes, room);
		writer->used += room;
		bytes += room;
		length -= room;
		flush_buffer(writer);
	}
	memcpy(writer->buffer + writer->used, bytes, length);
	writer->used += length;
}

/* Inlined: the pieces are mostly literals, whose length and copy then fold. */
static inline __attribute__((always_inline)) void put_inline(struct chrome_writer *writer,
							     const char *bytes, size_t length)
{
	if (__builtin_expect(writer->used + length > ASYNC_OUT_BUFFER, 0)) {
		put_spilling(writer, bytes, length);
		return;
	}
	memcpy(writer->buffer + writer->used, bytes, length);
	writer->used += length;
}

static void put_bytes(void *ctx, const char *bytes, size_t length)
{
	put_inline(ctx, bytes, length);
}

static inline __attribute__((always_inline)) void put(struct chrome_writer *writer,
						      const char *text)
{
	put_inline(writer, text, strlen(text));
}

static void put_json(struct chrome_writer *writer, const char *text)
{
	json_escape(text, put_bytes, writer);
}

struct unquoted {
	struct chrome_writer *writer;
	bool opened;
};

/* json_escape's pieces less its opening quote: text of ours comes before. */
static void put_unquoted(void *ctx, const char *bytes, size_t length)
{
	struct unquoted *unquoted = ctx;

	if (!unquoted->opened) {
		unquoted->opened = true;
		return;
	}
	put_bytes(unquoted->writer, bytes, length);
}

/* Two digits per division: timestamps and ids are most of the output. */
static void put_u64(struct chrome_writer *writer, uint64_t value)
{
	static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930"
				    "31323334353637383940414243444546474849505152535455565758596061"
				    "62636465666768697071727374757677787980818283848586878889909192"
				    "93949596979899";
	char digits[24], *p = digits + sizeof(digits);

	while (value >= 100) {
		unsigned int pair = (unsigned int)(value % 100) * 2;

		value /= 100;
		*--p = pairs[pair + 1];
		*--p = pairs[pair];
	}
	if (value >= 10) {
		*--p = pairs[value * 2 + 1];
		*--p = pairs[value * 2];
	} else {
		*--p = (char)('0' + value);
	}
	put_inline(writer, p, (size_t)(digits + sizeof(digits) - p));
}

/* ,"key":value */
static inline __attribute__((always_inline)) void put_field(struct chrome_writer *writer,
							    const char *key, uint64_t value)
{
	put(writer, ",\"");
	put(writer, key);
	put(writer, "\":");
	put_u64(writer, value);
}

/* Microseconds with nanosecond precision. */
static void write_us(struct chrome_writer *writer, const char *key, uint64_t ns)
{
	char fraction[4] = { '.', (char)('0' + ns / 100 % 10), (char)('0' + ns / 10 % 10),
			     (char)('0' + ns % 10) };

	put_field(writer, key, ns / 1000);
	put_inline(writer, fraction, sizeof(fraction));
}

/* A timestamp and a duration, relative to the capture's start. */
static void write_span(struct chrome_writer *writer, uint64_t begin_ns, uint64_t end_ns)
{
	write_us(writer, "ts", begin_ns > writer->base_ns ? begin_ns - writer->base_ns : 0);
	write_us(writer, "dur", end_ns > begin_ns ? end_ns - begin_ns : 0);
}

static void write_time(struct chrome_writer *writer, uint64_t ns)
{
	write_us(writer, "ts", ns > writer->base_ns ? ns - writer->base_ns : 0);
}

static void begin_event(struct chrome_writer *writer, const char *phase, uint32_t tgid,
			uint32_t tid)
{
	put(writer, writer->events++ ? ",\n{\"ph\":\"" : "\n{\"ph\":\"");
	put(writer, phase);
	put(writer, "\"");
	put_field(writer, "pid", tgid);
	put_field(writer, "tid", tid);
}

static void name_process(struct chrome_writer *writer, const struct profile *profile, uint32_t tgid)
{
	char name[128];

	if (idmap_get(&writer->processes_named, tgid, 0))
		return;
	idmap_put(&writer->processes_named, tgid, 0, (void *)1);
	begin_event(writer, "M", tgid, tgid);
	put(writer, ",\"name\":\"process_name\",\"args\":{\"name\":");
	put_json(writer, track_process_name(profile, tgid, name, sizeof(name)));
	put(writer, "}}");
}

/* A thread's track, named by what first runs on it (track_names.h). */
static void name_track(struct chrome_writer *writer, const struct profile *profile, uint32_t tgid,
		       uint32_t tid, const struct profile_run *run)
{
	char name[128];

	name_process(writer, profile, tgid);
	if (idmap_get(&writer->threads_named, tgid, tid))
		return;
	idmap_put(&writer->threads_named, tgid, tid, (void *)1);
	track_thread_name(profile, tgid, tid, run, name, sizeof(name));
	begin_event(writer, "M", tgid, tid);
	put(writer, ",\"name\":\"thread_name\",\"args\":{\"name\":");
	put_json(writer, name);
	put(writer, "}}");
}

static void write_string_arg(struct chrome_writer *writer, const struct profile *profile,
			     uint32_t tgid, const char *key, uint64_t address)
{
	put(writer, ",\"");
	put(writer, key);
	put(writer, "\":");
	put_json(writer, profile_string(profile, tgid, address));
}

/* ,"key":"name" for names of ours, which need no escaping. */
static void write_name_arg(struct chrome_writer *writer, const char *key, const char *name)
{
	put(writer, ",\"");
	put(writer, key);
	put(writer, "\":\"");
	put(writer, name);
	put(writer, "\"");
}

/*
 * A flow from the slice drawn at from_ns on thread from_tid (the launch) to
 * the one that begins at to_ns on to_tid; "s" and "f" with "bp":"e" bind
 * to the slices enclosing their times, as Perfetto and chrome://tracing
 * read them.
 */
static void write_flow(struct chrome_writer *writer, uint64_t id, uint32_t tgid, uint32_t from_tid,
		       uint64_t from_ns, uint32_t to_tid, uint64_t to_ns)
{
	begin_event(writer, "s", tgid, from_tid);
	put(writer, ",\"cat\":\"launch\",\"name\":\"launch\"");
	put_field(writer, "id", id);
	write_time(writer, from_ns);
	put(writer, "}");
	begin_event(writer, "f", tgid, to_tid);
	put(writer, ",\"bp\":\"e\",\"cat\":\"launch\",\"name\":\"launch\"");
	put_field(writer, "id", id);
	write_time(writer, to_ns);
	put(writer, "}");
}

static void on_op_done(void *ctx, const struct profile *profile, const struct profile_op *op)
{
	struct chrome_writer *writer = ctx;
	char title[512];

	if (op->depth > 0 && !writer->show_helpers)
		return;
	name_track(writer, profile, op->tgid, op->tid, NULL);
	op_title(profile, op, title, sizeof(title));
	begin_event(writer, "X", op->tgid, op->tid);
	put(writer, ",\"cat\":\"op\",\"name\":");
	put_json(writer, title);
	write_span(writer, op->begin_ns, op->end_ns);
	put(writer, ",\"args\":{\"op\":");
	put_u64(writer, op->id);
	put_field(writer, "depth", op->depth);
	write_string_arg(writer, profile, op->tgid, "name", op->name);
	write_name_arg(writer, "mode",
		       op->mode == PROFILE_MODE_UNSET ? "unset" : optrace_mode_name(op->mode));
	write_name_arg(writer, "reason", optrace_mode_reason_name(op->mode_reason));
	if (op->fallback_reason != OPTRACE_FALLBACK_NONE) {
		write_name_arg(writer, "fallback",
			       optrace_fallback_reason_name(op->fallback_reason));
		write_string_arg(writer, profile, op->tgid, "fallback_detail", op->fallback_detail);
	}
	write_string_arg(writer, profile, op->tgid, "callsite", op->callsite);
	write_name_arg(writer, "status", optrace_status_name(op->status));
	put_field(writer, "self_ns",
		  op->end_ns - op->begin_ns > op->child_ns
			  ? op->end_ns - op->begin_ns - op->child_ns
			  : 0);
	put(writer, op->cut ? ",\"cut\":true}}" : "}}");
}

static void on_task_run(void *ctx, const struct profile *profile, const struct profile_run *run)
{
	struct chrome_writer *writer = ctx;
	uint64_t flow = ++writer->flow_ids;

	name_track(writer, profile, run->tgid, run->tid, run);
	begin_event(writer, "X", run->tgid, run->tid);
	put(writer, ",\"cat\":\"task\",\"name\":");
	put_json(writer, profile_string(profile, run->tgid, run->task_name));
	write_span(writer, run->begin_ns, run->end_ns);
	put(writer, ",\"args\":{\"task\":");
	put_u64(writer, run->task);
	put_field(writer, "point", run->point);
	write_name_arg(writer, "variant", optrace_variant_name(run->variant));
	put_field(writer, "processor", run->processor);
	write_string_arg(writer, profile, run->tgid, "op", run->op_name);
	write_string_arg(writer, profile, run->tgid, "root_op", run->root_name);
	put(writer, run->cut ? ",\"cut\":true}}" : "}}");

	/* The flow from the launch, on the launching op's thread, to this point. */
	if (run->op)
		write_flow(writer, flow, run->tgid, run->op->tid, run->launch_ns, run->tid,
			   run->begin_ns);
}

static void on_wait(void *ctx, const struct profile *profile, const struct profile_wait *wait)
{
	struct chrome_writer *writer = ctx;

	name_track(writer, profile, wait->tgid, wait->tid, NULL);
	begin_event(writer, "X", wait->tgid, wait->tid);
	put(writer, ",\"cat\":\"wait\",\"name\":\"wait: ");
	put(writer, optrace_wait_kind_name(wait->kind));
	put(writer, "\"");
	write_span(writer, wait->begin_ns, wait->end_ns);
	put(writer, "}");
}

/*
 * GPU streams are pseudo-threads of their process, above any real tid
 * (pid_max is at most 2^22) and numbered across processes, as Perfetto
 * keys threads by tid alone.
 */
#define GPU_TRACK_TID 0x40000000u

static uint32_t gpu_track(struct chrome_writer *writer, const struct profile *profile,
			  const struct gpu_activity *activity)
{
	uint64_t key = (uint64_t)activity->device_id << 32 | activity->stream_id;
	uint32_t tid = (uint32_t)(uintptr_t)idmap_get(&writer->gpu_tracks, activity->tgid, key);
	char name[64];

	if (tid)
		return tid;
	tid = GPU_TRACK_TID + ++writer->gpu_track_count;
	if (idmap_put(&writer->gpu_tracks, activity->tgid, key, (void *)(uintptr_t)tid))
		writer->error = -ENOMEM;
	name_process(writer, profile, activity->tgid);
	track_gpu_name(activity->device_id, activity->stream_id, name, sizeof(name));
	begin_event(writer, "M", activity->tgid, tid);
	put(writer, ",\"name\":\"thread_name\",\"args\":{\"name\":");
	put_json(writer, name);
	put(writer, "}}");
	/* After the CPU threads (sort index 0), by device, then stream. */
	begin_event(writer, "M", activity->tgid, tid);
	put(writer, ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":");
	put_u64(writer, track_gpu_sort_index(activity->device_id, activity->stream_id));
	put(writer, "}}");
	return tid;
}

/* ,"key":[x,y,z] */
static void write_dim3(struct chrome_writer *writer, const char *key, const int32_t dim[3])
{
	put(writer, ",\"");
	put(writer, key);
	put(writer, "\":[");
	for (int i = 0; i < 3; i++) {
		if (i)
			put(writer, ",");
		put_u64(writer, dim[i] > 0 ? (uint64_t)dim[i] : 0);
	}
	put(writer, "]");
}

static void on_gpu(void *ctx, const struct profile *profile, const struct profile_gpu *gpu)
{
	struct chrome_writer *writer = ctx;
	const struct gpu_activity *activity = gpu->activity;
	const struct gpu_launch *launch = gpu->launch;
	const struct profile_run *run = gpu->run;
	uint64_t root_name = gpu->op ? gpu->root_name : run ? run->root_name : 0;
	uint64_t op_name = gpu->op ? gpu->op_name : run ? run->op_name : 0;
	uint32_t tid;

	/* No times, no place on the timeline: the report still counts it. */
	if (activity->time_invalid)
		return;
	tid = gpu_track(writer, profile, activity);
	begin_event(writer, "X", gpu->tgid, tid);
	put(writer, activity->kind == OPTRACE_GPU_REC_KERNEL   ? ",\"cat\":\"kernel\",\"name\":"
		    : activity->kind == OPTRACE_GPU_REC_MEMCPY ? ",\"cat\":\"memcpy\",\"name\":"
							       : ",\"cat\":\"memset\",\"name\":");
	put_json(writer, gpu->name);
	write_span(writer, activity->start_ns, activity->end_ns);
	put(writer, ",\"args\":{\"correlation_id\":");
	put_u64(writer, activity->correlation_id);
	if (root_name) {
		write_string_arg(writer, profile, gpu->tgid, "op", root_name);
		write_string_arg(writer, profile, gpu->tgid, "launching_op", op_name);
	}
	if (run) {
		write_string_arg(writer, profile, gpu->tgid, "task", run->task_name);
		put_field(writer, "point", run->point);
		write_name_arg(writer, "variant", optrace_variant_name(run->variant));
	}
	if (activity->kind == OPTRACE_GPU_REC_KERNEL) {
		write_dim3(writer, "grid", activity->grid);
		write_dim3(writer, "block", activity->block);
	} else {
		put_field(writer, "bytes", activity->bytes);
	}
	put(writer, "}}");

	if (!launch || !launch->start_ns)
		return;
	/*
	 * Inside an op or a task the flow starts from its slice, so that
	 * selecting it shows its kernels. Outside, nothing is drawn there:
	 * draw the API call, once per launch, for the flow to start from.
	 */
	if (!gpu->op && !run && gpu->first_of_launch) {
		struct unquoted name = { .writer = writer };

		name_track(writer, profile, gpu->tgid, gpu->tid, NULL);
		begin_event(writer, "X", gpu->tgid, gpu->tid);
		put(writer, ",\"cat\":\"launch\",\"name\":\"launch ");
		json_escape(gpu->name, put_unquoted, &name);
		write_span(writer, launch->start_ns, launch->end_ns);
		put(writer, ",\"args\":{\"correlation_id\":");
		put_u64(writer, launch->correlation_id);
		put(writer, "}}");
	}
	write_flow(writer, ++writer->flow_ids, gpu->tgid, gpu->tid, launch->start_ns, tid,
		   activity->start_ns);
}

int chrome_writer_begin(struct chrome_writer *writer, FILE *out, uint64_t base_ns,
			bool show_helpers, struct profile_consumer *consumer)
{
	memset(writer, 0, sizeof(*writer));
	writer->out = out;
	writer->base_ns = base_ns;
	writer->show_helpers = show_helpers;
	*consumer = (struct profile_consumer){
		.ctx = writer,
		.op_done = on_op_done,
		.task_run = on_task_run,
		.wait = on_wait,
		.gpu = on_gpu,
	};
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", out);
	/* From here on the events go straight to the descriptor. */
	if (fflush(out))
		return -errno;
	return async_out_open(&writer->async, fileno(out), &writer->buffer);
}

int chrome_writer_end(struct chrome_writer *writer)
{
	int err;

	put(writer, "\n]");
	if (writer->gpu_losses) {
		put(writer, ",\"otherData\":{\"gpu_dropped\":{");
		for (int i = 0; i < GPU_DROP_SOURCES; i++) {
			put(writer, i ? ",\"" : "\"");
			put(writer, gpu_drop_source_key(writer->gpu_losses, i));
			put(writer, "\":");
			put_u64(writer, writer->gpu_losses->dropped[i]);
		}
		put(writer, "}}");
	}
	put(writer, "}\n");
	err = async_out_close(writer->async, writer->buffer, writer->used);
	idmap_free(&writer->threads_named);
	idmap_free(&writer->processes_named);
	idmap_free(&writer->gpu_tracks);
	return err ?: writer->error;
}

/* ---- the export format: the document as the driver's output ---- */

struct chrome_export {
	struct chrome_writer writer;
	struct gpu_summary gpu_losses; /* in otherData, when there was GPU activity */
	bool begun;
};

static int export_begin(void *state, struct export_job *job, struct profile_consumer *consumer)
{
	struct chrome_export *export = state;
	/* Time zero is the moment recording started. */
	int err = chrome_writer_begin(&export->writer, job->out, job->replay->header->monotonic_ns,
				      job->options->show_helpers, consumer);

	export->begun = !err;
	return err;
}

static int export_end(void *state, struct export_job *job, int err)
{
	struct chrome_export *export = state;

	if (!export->begun)
		return err;
	if (export_gpu_losses(job, &export->gpu_losses))
		export->writer.gpu_losses = &export->gpu_losses;
	return chrome_writer_end(&export->writer) ?: err;
}

const struct export_format chrome_format = {
	.name = "chrome",
	.help = "Chrome trace JSON",
	.target = EXPORT_FILE,
	.state_size = sizeof(struct chrome_export),
	.begin = export_begin,
	.end = export_end,
};
