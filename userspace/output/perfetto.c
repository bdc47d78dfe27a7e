// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Perfetto export: the profile's operations, task runs, waits and GPU
 * activity as TrackEvent slices on one packet sequence.
 *
 * Each slice is a TYPE_SLICE_BEGIN event, which carries its name,
 * category, arguments and flows, followed at once by its TYPE_SLICE_END.
 * The profile hands things over when they are complete, not in time order
 * (an operation after the task points it launched); Perfetto sorts a
 * trace's events by timestamp, keeping the file's order among equal ones,
 * so a track's slices nest by their times as Chrome's complete events do.
 * (Only an operation that began in the same nanosecond as a helper it
 * called would nest under it, being written after it: two clock reads on
 * one thread never give the same time.)
 * A flow is written at both ends by id: flow_ids on the slice it leaves
 * (the operation, task point or launch, drawn after everything it
 * launched), terminating_flow_ids on the one it reaches.
 */
#include <errno.h>
#include <optrace/gpu.h>
#include <stdlib.h>
#include <string.h>

#include "output/async_out.h"
#include "output/export_format.h"
#include "output/op_title.h"
#include "output/perfetto_internal.h"
#include "output/track_names.h"

/* The one packet sequence of the trace (trusted_packet_sequence_id). */
#define SEQUENCE_ID 1

/*
 * Interned text kept before the tables start again (the next packet then
 * says SEQ_INCREMENTAL_STATE_CLEARED and interns anew), so that memory
 * stays bounded however many distinct titles a long recording has.
 */
#define INTERN_MAX_COUNT 65536
#define INTERN_MAX_BYTES (16u << 20)

/* GPU flows are numbered by activity, above the op → task flows' counter. */
#define GPU_FLOW_BIT (1ull << 63)

/* Categories and argument names are ours: interned with fixed iids at each (re)start. */
enum category { CAT_OP = 1, CAT_TASK, CAT_WAIT, CAT_KERNEL, CAT_MEMCPY, CAT_MEMSET, CAT_LAUNCH };

static const char *const category_names[] = {
	[CAT_OP] = "op",	 [CAT_TASK] = "task",	  [CAT_WAIT] = "wait",
	[CAT_KERNEL] = "kernel", [CAT_MEMCPY] = "memcpy", [CAT_MEMSET] = "memset",
	[CAT_LAUNCH] = "launch",
};

enum arg {
	ARG_OP = 1,
	ARG_DEPTH,
	ARG_NAME,
	ARG_MODE,
	ARG_REASON,
	ARG_FALLBACK,
	ARG_FALLBACK_DETAIL,
	ARG_CALLSITE,
	ARG_STATUS,
	ARG_SELF_NS,
	ARG_CUT,
	ARG_TASK,
	ARG_POINT,
	ARG_VARIANT,
	ARG_PROCESSOR,
	ARG_ROOT_OP,
	ARG_CORRELATION_ID,
	ARG_LAUNCHING_OP,
	ARG_GRID,
	ARG_BLOCK,
	ARG_BYTES,
};

/* As the Chrome export names its arguments. */
static const char *const arg_names[] = {
	[ARG_OP] = "op",
	[ARG_DEPTH] = "depth",
	[ARG_NAME] = "name",
	[ARG_MODE] = "mode",
	[ARG_REASON] = "reason",
	[ARG_FALLBACK] = "fallback",
	[ARG_FALLBACK_DETAIL] = "fallback_detail",
	[ARG_CALLSITE] = "callsite",
	[ARG_STATUS] = "status",
	[ARG_SELF_NS] = "self_ns",
	[ARG_CUT] = "cut",
	[ARG_TASK] = "task",
	[ARG_POINT] = "point",
	[ARG_VARIANT] = "variant",
	[ARG_PROCESSOR] = "processor",
	[ARG_ROOT_OP] = "root_op",
	[ARG_CORRELATION_ID] = "correlation_id",
	[ARG_LAUNCHING_OP] = "launching_op",
	[ARG_GRID] = "grid",
	[ARG_BLOCK] = "block",
	[ARG_BYTES] = "bytes",
};

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* The flow ids that a slice not drawn yet will leave with. */
struct perfetto_flows {
	size_t count;
	size_t capacity;
	uint64_t ids[];
};

/* ---- the file: packets into large buffers, written on a thread of their own ---- */

static void output(struct perfetto_writer *writer, const uint8_t *bytes, size_t length)
{
	while (length) {
		size_t room = ASYNC_OUT_BUFFER - writer->used;
		size_t piece = length < room ? length : room;

		memcpy(writer->buffer + writer->used, bytes, piece);
		writer->used += piece;
		bytes += piece;
		length -= piece;
		if (writer->used == ASYNC_OUT_BUFFER) {
			writer->buffer =
				async_out_swap(writer->async, writer->buffer, writer->used);
			writer->used = 0;
		}
	}
}

static void fail(struct perfetto_writer *writer, int err)
{
	if (!writer->error)
		writer->error = err;
}

/* ---- interning ------------------------------------------------------------------ */

/* An InternedData entry: {iid, name}. */
static void interned_entry(struct perfetto_writer *writer, uint32_t field, uint64_t iid,
			   const char *text)
{
	size_t start = pw_open(&writer->interned, field);

	pw_uint(&writer->interned, PF_INTERNED_IID, iid);
	pw_string(&writer->interned, PF_INTERNED_NAME, text);
	pw_close(&writer->interned, start);
}

/* text's iid in table, interned on the packet being built if it is new. */
static uint64_t intern(struct perfetto_writer *writer, struct perfetto_strings *table,
		       uint32_t field, const char *text)
{
	bool added;
	uint64_t iid = perfetto_strings_intern(table, text, &added);

	if (!iid)
		fail(writer, -ENOMEM);
	else if (added)
		interned_entry(writer, field, iid, text);
	return iid;
}

/* The interned state (re)starts: our categories and argument names first. */
static void intern_ours(struct perfetto_writer *writer)
{
	for (size_t i = 1; i < COUNT_OF(category_names); i++)
		interned_entry(writer, PF_INTERNED_CATEGORIES, i, category_names[i]);
	for (size_t i = 1; i < COUNT_OF(arg_names); i++)
		interned_entry(writer, PF_INTERNED_ARG_NAMES, i, arg_names[i]);
}

/* ---- packets and events ---------------------------------------------------------- */

/*
 * Starts a packet in writer->packet; returns where its body starts. With
 * interning, it uses interned data (set SEQ_NEEDS_INCREMENTAL_STATE): its
 * strings are interned only after this, as this may start the tables anew.
 */
static size_t packet_begin(struct perfetto_writer *writer, bool interning)
{
	struct pw_buf *packet = &writer->packet;
	uint32_t flags = interning ? PF_SEQ_NEEDS_INCREMENTAL_STATE : 0;
	size_t start;

	if (writer->names.count + writer->values.count > INTERN_MAX_COUNT ||
	    writer->names.bytes + writer->values.bytes > INTERN_MAX_BYTES) {
		perfetto_strings_clear(&writer->names);
		perfetto_strings_clear(&writer->values);
		writer->cleared = true;
	}
	packet->used = 0;
	start = pw_open(packet, PF_TRACE_PACKET);
	pw_uint(packet, PF_PACKET_SEQUENCE_ID, SEQUENCE_ID);
	if (writer->cleared) {
		writer->cleared = false;
		flags |= PF_SEQ_INCREMENTAL_STATE_CLEARED;
		intern_ours(writer);
	}
	if (flags)
		pw_uint(packet, PF_PACKET_SEQUENCE_FLAGS, flags);
	return start;
}

/* Ends the packet, with what it interned, and hands it to the file. */
static void packet_end(struct perfetto_writer *writer, size_t start)
{
	struct pw_buf *packet = &writer->packet;

	if (writer->interned.used) {
		pw_bytes(packet, PF_PACKET_INTERNED_DATA, writer->interned.data,
			 writer->interned.used);
		writer->interned.used = 0;
	}
	pw_close(packet, start);
	if (packet->error || writer->interned.error) {
		fail(writer, packet->error ?: writer->interned.error);
		return;
	}
	output(writer, packet->data, packet->used);
	writer->packets++;
}

struct event {
	size_t packet;
	size_t event;
};

static struct event event_begin(struct perfetto_writer *writer, uint64_t ns, int type,
				uint64_t track, bool interning)
{
	struct pw_buf *packet = &writer->packet;
	struct event event;

	event.packet = packet_begin(writer, interning);
	pw_uint(packet, PF_PACKET_TIMESTAMP, ns);
	event.event = pw_open(packet, PF_PACKET_TRACK_EVENT);
	pw_uint(packet, PF_EVENT_TYPE, (uint64_t)type);
	pw_uint(packet, PF_EVENT_TRACK_UUID, track);
	return event;
}

static void event_end(struct perfetto_writer *writer, struct event event)
{
	pw_close(&writer->packet, event.event);
	packet_end(writer, event.packet);
}

/* Relative to the capture's start, as Chrome's timestamps. */
static uint64_t relative(const struct perfetto_writer *writer, uint64_t ns)
{
	return ns > writer->base_ns ? ns - writer->base_ns : 0;
}

/* A slice's begin: its arguments and flows follow, then event_end(). */
static struct event slice_begin(struct perfetto_writer *writer, uint64_t track, uint64_t begin_ns,
				enum category category, const char *name)
{
	struct event event =
		event_begin(writer, relative(writer, begin_ns), PF_TYPE_SLICE_BEGIN, track, true);

	pw_uint(&writer->packet, PF_EVENT_CATEGORY_IIDS, category);
	pw_uint(&writer->packet, PF_EVENT_NAME_IID,
		intern(writer, &writer->names, PF_INTERNED_EVENT_NAMES, name));
	return event;
}

/* Its end, as long after its begin as Chrome's duration says. */
static void slice_end(struct perfetto_writer *writer, uint64_t track, uint64_t begin_ns,
		      uint64_t end_ns)
{
	uint64_t ns = relative(writer, begin_ns) + (end_ns > begin_ns ? end_ns - begin_ns : 0);

	event_end(writer, event_begin(writer, ns, PF_TYPE_SLICE_END, track, false));
}

/*
 * A debug annotation {name_iid, field: value} of a varint value; the most
 * common thing written, so its length is known first and it is encoded in
 * one go (every part a varint: at most 4 of PW_VARINT_MAX bytes).
 */
static void arg_varint(struct perfetto_writer *writer, enum arg name, uint32_t field,
		       uint64_t value)
{
	struct pw_buf *packet = &writer->packet;
	uint64_t tag = (uint64_t)field << 3 | PW_VARINT;
	uint8_t *p;

	if (!pw_room(packet, 5 * PW_VARINT_MAX))
		return;
	p = packet->data + packet->used;
	p = pw_encode_varint(p, PF_EVENT_DEBUG_ANNOTATIONS << 3 | PW_LEN);
	p = pw_encode_varint(p, 1 + pw_varint_size(name) + pw_varint_size(tag) +
					pw_varint_size(value));
	p = pw_encode_varint(p, PF_ARG_NAME_IID << 3 | PW_VARINT);
	p = pw_encode_varint(p, name);
	p = pw_encode_varint(p, tag);
	p = pw_encode_varint(p, value);
	packet->used = (size_t)(p - packet->data);
}

static void arg_uint(struct perfetto_writer *writer, enum arg name, uint64_t value)
{
	arg_varint(writer, name, PF_ARG_UINT, value);
}

static void arg_string(struct perfetto_writer *writer, enum arg name, const char *text)
{
	arg_varint(writer, name, PF_ARG_STRING_IID,
		   intern(writer, &writer->values, PF_INTERNED_STRING_VALUES, text));
}

static void arg_true(struct perfetto_writer *writer, enum arg name)
{
	arg_varint(writer, name, PF_ARG_BOOL, 1);
}

/* [x, y, z] as an array of unsigned values. */
static void arg_dim3(struct perfetto_writer *writer, enum arg name, const int32_t dim[3])
{
	struct pw_buf *packet = &writer->packet;
	size_t start = pw_open(packet, PF_EVENT_DEBUG_ANNOTATIONS);

	pw_uint(packet, PF_ARG_NAME_IID, name);
	for (int i = 0; i < 3; i++) {
		size_t item = pw_open(packet, PF_ARG_ARRAY);

		pw_uint(packet, PF_ARG_UINT, dim[i] > 0 ? (uint64_t)dim[i] : 0);
		pw_close(packet, item);
	}
	pw_close(packet, start);
}

/* ---- tracks ---------------------------------------------------------------------- */

static uint64_t new_track(struct perfetto_writer *writer, struct idmap *map, uint32_t tgid,
			  uint64_t key)
{
	uint64_t uuid = ++writer->tracks;

	if (idmap_put(map, tgid, key, (void *)(uintptr_t)uuid))
		fail(writer, -ENOMEM);
	return uuid;
}

/* A TrackDescriptor packet's start: {uuid, parent_uuid}; then its own fields. */
static size_t descriptor_begin(struct perfetto_writer *writer, size_t *packet, uint64_t uuid,
			       uint64_t parent)
{
	size_t start;

	*packet = packet_begin(writer, false);
	start = pw_open(&writer->packet, PF_PACKET_TRACK_DESCRIPTOR);
	pw_uint(&writer->packet, PF_TRACK_UUID, uuid);
	if (parent)
		pw_uint(&writer->packet, PF_TRACK_PARENT_UUID, parent);
	return start;
}

static void descriptor_end(struct perfetto_writer *writer, size_t packet, size_t descriptor)
{
	pw_close(&writer->packet, descriptor);
	packet_end(writer, packet);
}

static uint64_t process_track(struct perfetto_writer *writer, const struct profile *profile,
			      uint32_t tgid)
{
	uint64_t uuid = (uintptr_t)idmap_get(&writer->processes, tgid, 0);
	struct pw_buf *packet = &writer->packet;
	size_t packet_start, descriptor, process;
	char name[128];

	if (uuid)
		return uuid;
	uuid = new_track(writer, &writer->processes, tgid, 0);
	descriptor = descriptor_begin(writer, &packet_start, uuid, 0);
	process = pw_open(packet, PF_TRACK_PROCESS);
	pw_uint(packet, PF_PROCESS_PID, tgid);
	pw_string(packet, PF_PROCESS_NAME, track_process_name(profile, tgid, name, sizeof(name)));
	pw_close(packet, process);
	descriptor_end(writer, packet_start, descriptor);
	return uuid;
}

/* A thread's track, named by what first runs on it (run: a task point's worker). */
static uint64_t thread_track(struct perfetto_writer *writer, const struct profile *profile,
			     uint32_t tgid, uint32_t tid, const struct profile_run *run)
{
	uint64_t uuid = (uintptr_t)idmap_get(&writer->threads, tgid, tid), parent;
	struct pw_buf *packet = &writer->packet;
	size_t packet_start, descriptor, thread;
	char name[128];

	if (uuid)
		return uuid;
	parent = process_track(writer, profile, tgid);
	uuid = new_track(writer, &writer->threads, tgid, tid);
	descriptor = descriptor_begin(writer, &packet_start, uuid, parent);
	thread = pw_open(packet, PF_TRACK_THREAD);
	pw_uint(packet, PF_THREAD_PID, tgid);
	pw_uint(packet, PF_THREAD_TID, tid);
	pw_string(packet, PF_THREAD_NAME,
		  track_thread_name(profile, tgid, tid, run, name, sizeof(name)));
	pw_close(packet, thread);
	descriptor_end(writer, packet_start, descriptor);
	return uuid;
}

/* A (process, device, stream) track: a named child of the process's. */
static uint64_t gpu_track(struct perfetto_writer *writer, const struct profile *profile,
			  const struct gpu_activity *activity)
{
	uint64_t key = (uint64_t)activity->device_id << 32 | activity->stream_id;
	uint64_t uuid = (uintptr_t)idmap_get(&writer->gpu_tracks, activity->tgid, key), parent;
	size_t packet_start, descriptor;
	char name[64];

	if (uuid)
		return uuid;
	parent = process_track(writer, profile, activity->tgid);
	uuid = new_track(writer, &writer->gpu_tracks, activity->tgid, key);
	descriptor = descriptor_begin(writer, &packet_start, uuid, parent);
	pw_string(&writer->packet, PF_TRACK_NAME,
		  track_gpu_name(activity->device_id, activity->stream_id, name, sizeof(name)));
	descriptor_end(writer, packet_start, descriptor);
	return uuid;
}

/* ---- flows ----------------------------------------------------------------------- */

/* Remembers that the slice keyed (tgid, key) in map, not drawn yet, leaves with flow id. */
static void add_flow(struct perfetto_writer *writer, struct idmap *map, uint32_t tgid, uint64_t key,
		     uint64_t id)
{
	struct perfetto_flows *flows = idmap_get(map, tgid, key);

	if (!flows || flows->count == flows->capacity) {
		size_t capacity = flows ? flows->capacity * 2 : 4;
		struct perfetto_flows *grown =
			realloc(flows, sizeof(*flows) + capacity * sizeof(flows->ids[0]));

		if (!grown) {
			fail(writer, -ENOMEM);
			return;
		}
		if (!flows)
			grown->count = 0;
		grown->capacity = capacity;
		flows = grown;
		if (idmap_put(map, tgid, key, flows)) {
			free(flows);
			fail(writer, -ENOMEM);
			return;
		}
	}
	flows->ids[flows->count++] = id;
}

/* The flows a slice leaves with, on its begin; frees them. */
static void put_flows(struct perfetto_writer *writer, struct perfetto_flows *flows)
{
	for (size_t i = 0; flows && i < flows->count; i++)
		pw_fixed64(&writer->packet, PF_EVENT_FLOW_IDS, flows->ids[i]);
	free(flows);
}

static void free_flows(struct idmap *map)
{
	for (size_t i = 0; i < map->capacity; i++)
		free(map->slots[i].value);
	idmap_free(map);
}

/* ---- what the profile hands over -------------------------------------------------- */

static void on_op_done(void *ctx, const struct profile *profile, const struct profile_op *op)
{
	struct perfetto_writer *writer = ctx;
	struct perfetto_flows *flows = idmap_remove(&writer->op_flows, op->tgid, op->id);
	struct event event;
	char title[512];
	uint64_t track;

	if (op->depth > 0 && !writer->show_helpers) {
		free(flows);
		return;
	}
	track = thread_track(writer, profile, op->tgid, op->tid, NULL);
	op_title(profile, op, title, sizeof(title));
	event = slice_begin(writer, track, op->begin_ns, CAT_OP, title);
	arg_uint(writer, ARG_OP, op->id);
	arg_uint(writer, ARG_DEPTH, op->depth);
	arg_string(writer, ARG_NAME, profile_string(profile, op->tgid, op->name));
	arg_string(writer, ARG_MODE,
		   op->mode == PROFILE_MODE_UNSET ? "unset" : optrace_mode_name(op->mode));
	arg_string(writer, ARG_REASON, optrace_mode_reason_name(op->mode_reason));
	if (op->fallback_reason != OPTRACE_FALLBACK_NONE) {
		arg_string(writer, ARG_FALLBACK, optrace_fallback_reason_name(op->fallback_reason));
		arg_string(writer, ARG_FALLBACK_DETAIL,
			   profile_string(profile, op->tgid, op->fallback_detail));
	}
	arg_string(writer, ARG_CALLSITE, profile_string(profile, op->tgid, op->callsite));
	arg_string(writer, ARG_STATUS, optrace_status_name(op->status));
	arg_uint(writer, ARG_SELF_NS,
		 op->end_ns - op->begin_ns > op->child_ns ? op->end_ns - op->begin_ns - op->child_ns
							  : 0);
	if (op->cut)
		arg_true(writer, ARG_CUT);
	put_flows(writer, flows);
	event_end(writer, event);
	slice_end(writer, track, op->begin_ns, op->end_ns);
}

/* The op slice a flow from op leaves: op itself, or with helpers hidden its root. */
static const struct profile_op *drawn_op(const struct perfetto_writer *writer,
					 const struct profile_op *op, const struct profile_op *root)
{
	return writer->show_helpers || !root ? op : root;
}

static void on_task_run(void *ctx, const struct profile *profile, const struct profile_run *run)
{
	struct perfetto_writer *writer = ctx;
	struct perfetto_flows *flows =
		idmap_remove(&writer->run_flows, run->tgid, (uint64_t)(uintptr_t)run);
	uint64_t track = thread_track(writer, profile, run->tgid, run->tid, run), flow = 0;
	struct event event;

	/* The flow from the launching op's slice to this point. */
	if (run->op) {
		const struct profile_op *from = drawn_op(writer, run->op, run->root);

		flow = ++writer->flow_ids;
		add_flow(writer, &writer->op_flows, from->tgid, from->id, flow);
	}
	event = slice_begin(writer, track, run->begin_ns, CAT_TASK,
			    profile_string(profile, run->tgid, run->task_name));
	arg_uint(writer, ARG_TASK, run->task);
	arg_uint(writer, ARG_POINT, run->point);
	arg_string(writer, ARG_VARIANT, optrace_variant_name(run->variant));
	arg_uint(writer, ARG_PROCESSOR, run->processor);
	arg_string(writer, ARG_OP, profile_string(profile, run->tgid, run->op_name));
	arg_string(writer, ARG_ROOT_OP, profile_string(profile, run->tgid, run->root_name));
	if (run->cut)
		arg_true(writer, ARG_CUT);
	if (flow)
		pw_fixed64(&writer->packet, PF_EVENT_TERMINATING_FLOW_IDS, flow);
	put_flows(writer, flows);
	event_end(writer, event);
	slice_end(writer, track, run->begin_ns, run->end_ns);
}

static void on_wait(void *ctx, const struct profile *profile, const struct profile_wait *wait)
{
	struct perfetto_writer *writer = ctx;
	uint64_t track = thread_track(writer, profile, wait->tgid, wait->tid, NULL);
	const char *kind = optrace_wait_kind_name(wait->kind);
	char name[64] = "wait: ";

	strncat(name, kind, sizeof(name) - strlen(name) - 1);
	event_end(writer, slice_begin(writer, track, wait->begin_ns, CAT_WAIT, name));
	slice_end(writer, track, wait->begin_ns, wait->end_ns);
}

/* ---- GPU activity ----------------------------------------------------------------- */

static uint64_t gpu_flow_id(const struct profile *profile, const struct gpu_activity *activity)
{
	return GPU_FLOW_BIT | (uint64_t)(activity - profile->gpu->activities);
}

/*
 * A launch outside any op or task: its API call, drawn once (at its first
 * activity that has times) for its flows to leave from, one per activity.
 */
static void draw_launch(struct perfetto_writer *writer, const struct profile *profile,
			const struct profile_gpu *gpu, uint64_t id)
{
	const struct gpu_launch *launch = gpu->launch;
	uint64_t track;
	struct event event;
	char *name;

	if (!gpu->first_of_launch)
		return; /* drawn with an earlier one */
	name = malloc(strlen("launch ") + strlen(gpu->name) + 1);
	if (!name) {
		fail(writer, -ENOMEM);
		return;
	}
	strcpy(name, "launch ");
	strcat(name, gpu->name);
	track = thread_track(writer, profile, gpu->tgid, gpu->tid, NULL);
	event = slice_begin(writer, track, launch->start_ns, CAT_LAUNCH, name);
	free(name);
	arg_uint(writer, ARG_CORRELATION_ID, launch->correlation_id);
	/* Streamed, the later activities of the launch are not known yet. */
	if (!launch->activity_count)
		pw_fixed64(&writer->packet, PF_EVENT_FLOW_IDS, id);
	for (uint32_t i = 0; i < launch->activity_count; i++) {
		const struct gpu_activity *a = gpu_launch_activity(profile->gpu, launch, i);

		if (!a->time_invalid)
			pw_fixed64(&writer->packet, PF_EVENT_FLOW_IDS, gpu_flow_id(profile, a));
	}
	event_end(writer, event);
	slice_end(writer, track, launch->start_ns, launch->end_ns);
}

/* Where the flow to this activity leaves from: its task point, op or launch. */
static void gpu_flow_source(struct perfetto_writer *writer, const struct profile *profile,
			    const struct profile_gpu *gpu, uint64_t id)
{
	if (gpu->run) {
		add_flow(writer, &writer->run_flows, gpu->tgid, (uint64_t)(uintptr_t)gpu->run, id);
	} else if (gpu->op) {
		const struct profile_op *from = drawn_op(writer, gpu->op, gpu->root);

		add_flow(writer, &writer->op_flows, from->tgid, from->id, id);
	} else {
		draw_launch(writer, profile, gpu, id);
	}
}

static void on_gpu(void *ctx, const struct profile *profile, const struct profile_gpu *gpu)
{
	static const enum category categories[] = {
		[OPTRACE_GPU_REC_KERNEL] = CAT_KERNEL,
		[OPTRACE_GPU_REC_MEMCPY] = CAT_MEMCPY,
		[OPTRACE_GPU_REC_MEMSET] = CAT_MEMSET,
	};
	struct perfetto_writer *writer = ctx;
	const struct gpu_activity *activity = gpu->activity;
	const struct profile_run *run = gpu->run;
	uint64_t root_name = gpu->op ? gpu->root_name : run ? run->root_name : 0;
	uint64_t op_name = gpu->op ? gpu->op_name : run ? run->op_name : 0;
	/*
	 * Streamed, a launch outside any frame is drawn at its first activity,
	 * with that one's flow only: the later ones (a graph's) get none.
	 */
	bool flow = gpu->launch && gpu->launch->start_ns &&
		    (gpu->op || run || gpu->first_of_launch || gpu->launch->activity_count);
	/* Read ahead, an activity's place in the index; streamed, a count. */
	uint64_t id = profile->gpu_stream ? GPU_FLOW_BIT | ++writer->gpu_flows
					  : gpu_flow_id(profile, activity);
	struct event event;
	uint64_t track;

	/* No times, no place on the timeline: the report still counts it. */
	if (activity->time_invalid)
		return;
	track = gpu_track(writer, profile, activity);
	if (flow)
		gpu_flow_source(writer, profile, gpu, id);
	event = slice_begin(writer, track, activity->start_ns,
			    activity->kind < COUNT_OF(categories) && categories[activity->kind]
				    ? categories[activity->kind]
				    : CAT_MEMSET,
			    gpu->name);
	arg_uint(writer, ARG_CORRELATION_ID, activity->correlation_id);
	if (root_name) {
		arg_string(writer, ARG_OP, profile_string(profile, gpu->tgid, root_name));
		arg_string(writer, ARG_LAUNCHING_OP, profile_string(profile, gpu->tgid, op_name));
	}
	if (run) {
		arg_string(writer, ARG_TASK, profile_string(profile, gpu->tgid, run->task_name));
		arg_uint(writer, ARG_POINT, run->point);
		arg_string(writer, ARG_VARIANT, optrace_variant_name(run->variant));
	}
	if (activity->kind == OPTRACE_GPU_REC_KERNEL) {
		arg_dim3(writer, ARG_GRID, activity->grid);
		arg_dim3(writer, ARG_BLOCK, activity->block);
	} else {
		arg_uint(writer, ARG_BYTES, activity->bytes);
	}
	if (flow)
		pw_fixed64(&writer->packet, PF_EVENT_TERMINATING_FLOW_IDS, id);
	event_end(writer, event);
	slice_end(writer, track, activity->start_ns, activity->end_ns);
}

/* ---- the trace ---------------------------------------------------------------------- */

int perfetto_writer_begin(struct perfetto_writer *writer, FILE *out, uint64_t base_ns,
			  bool show_helpers, struct profile_consumer *consumer)
{
	static const struct profile_consumer callbacks = {
		.op_done = on_op_done, .task_run = on_task_run, .wait = on_wait, .gpu = on_gpu
	};
	int err;

	*writer = (struct perfetto_writer){ .base_ns = base_ns, .show_helpers = show_helpers };
	*consumer = callbacks;
	consumer->ctx = writer;
	/* The interned state starts with the first packet. */
	writer->cleared = true;
	/* Nothing goes through out's stdio buffer: the packets go straight to its descriptor. */
	if (fflush(out))
		return -errno;
	err = async_out_open(&writer->async, fileno(out), &writer->buffer);
	if (err)
		return err;
	/* The sequence's first packet: its state starts, with our categories and argument names. */
	packet_end(writer, packet_begin(writer, false));
	if (writer->error) {
		err = writer->error;
		perfetto_writer_end(writer);
	}
	return err;
}

int perfetto_writer_end(struct perfetto_writer *writer)
{
	int err = async_out_close(writer->async, writer->buffer, writer->used);

	free_flows(&writer->op_flows);
	free_flows(&writer->run_flows);
	idmap_free(&writer->processes);
	idmap_free(&writer->threads);
	idmap_free(&writer->gpu_tracks);
	perfetto_strings_free(&writer->names);
	perfetto_strings_free(&writer->values);
	pw_free(&writer->packet);
	pw_free(&writer->interned);
	return err ?: writer->error;
}

/* ---- the export format: the trace as the driver's output ---- */

struct perfetto_export {
	struct perfetto_writer writer;
	bool begun;
};

static int export_begin(void *state, struct export_job *job, struct profile_consumer *consumer)
{
	struct perfetto_export *export = state;
	/* Time zero is the moment recording started. */
	int err =
		perfetto_writer_begin(&export->writer, job->out, job->replay->header->monotonic_ns,
				      job->options->show_helpers, consumer);

	export->begun = !err;
	return err;
}

static int export_end(void *state, struct export_job *job, int err)
{
	struct perfetto_export *export = state;
	struct gpu_summary gpu_losses; /* said on stderr; the trace has no place for them */

	if (!export->begun)
		return err;
	export_gpu_losses(job, &gpu_losses);
	return perfetto_writer_end(&export->writer) ?: err;
}

const struct export_format perfetto_format = {
	.name = "perfetto",
	.help = "Perfetto's protobuf trace: smaller and faster to load, for long recordings",
	.target = EXPORT_FILE,
	.state_size = sizeof(struct perfetto_export),
	.begin = export_begin,
	.end = export_end,
};
