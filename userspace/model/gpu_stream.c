// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * GPU activity attributed as it comes, for captures with gpu_launch records
 * (liboptrace-cupti marks each launching CUDA call on its thread, in that
 * thread's order): the launch ties the call's correlation id to the frame
 * open there, and holds that frame (an operation's pending count, a run's
 * holds) until the call's activity comes, up to GPU_HORIZON_NS of the
 * capture's time. An activity that comes before its launch (a batch handed
 * over late) waits for it. Memory is the calls in flight and what they
 * hold, not the capture's GPU records: those are decoded one at a time
 * through a gpu_index whose arrays serve as scratch (its names and counts
 * are kept).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <optrace/gpu.h>

#include "model/profile_internal.h"

/* CUPTI hands records over within a second while armed; slack for a busy host. */
#define GPU_HORIZON_NS (10ull * 1000 * 1000 * 1000)

/* A launching call whose activity has not all come. */
struct gpu_call {
	struct gpu_launch launch; /* its thread and time, from the gpu_launch record */
	uint32_t flags;		  /* OPTRACE_GPU_LAUNCH_* */
	struct profile_op *op;	  /* held, or NULL */
	struct run_node *node;	  /* held, or NULL */
	bool drawn;		  /* an activity with times was handed over */
	bool done;		  /* its activity came with its launch: a later mark of its id is a
				   * duplicate (the driver's call of the runtime's), until expired */
	uint64_t expires_ns;
	struct gpu_call *older, *newer; /* in launch order */
};

/* An activity that came before its launch. */
struct parked {
	struct gpu_activity activity;
	struct parked *next;
};

struct gpu_stream {
	struct gpu_index index; /* names and counts; its arrays decode one record */
	struct idmap calls;	/* (tgid, correlation id) -> struct gpu_call */
	struct idmap parked;	/* (tgid, correlation id) -> struct parked list */
	struct gpu_call *oldest, *newest;
	int64_t offset_ns;
};

void profile_set_gpu_offset(struct profile *profile, int64_t offset_ns)
{
	if (profile->gpu_stream)
		profile->gpu_stream->offset_ns = offset_ns;
}

/* GPU activity came: the tables and exports have a GPU part from now on. */
static void note_gpu(struct profile *profile)
{
	profile->gpu = &profile->gpu_stream->index;
}

/* Lets go of what the call holds: its frame may be handed over now. */
static void let_go(struct profile *profile, struct gpu_call *call)
{
	if (call->node && --call->node->holds == 0 && call->node->done)
		profile_complete_run(profile, call->node);
	if (call->op)
		profile_release(profile, call->op);
	call->node = NULL;
	call->op = NULL;
}

static void release_call(struct profile *profile, struct gpu_call *call)
{
	struct gpu_stream *stream = profile->gpu_stream;

	idmap_remove(&stream->calls, call->launch.tgid, call->launch.correlation_id);
	if (call->older)
		call->older->newer = call->newer;
	else
		stream->oldest = call->newer;
	if (call->newer)
		call->newer->older = call->older;
	else
		stream->newest = call->older;
	let_go(profile, call);
	free(call);
}

static void emit(struct profile *profile, struct gpu_call *call,
		 const struct gpu_activity *activity)
{
	bool first = !call->drawn && !activity->time_invalid;

	call->drawn = call->drawn || first;
	profile_emit_gpu(profile, activity, &call->launch, call->launch.tid,
			 call->node ? &call->node->run : NULL, call->op, first);
}

static int gpu_stream_launch(struct profile *profile, const struct record_event *event)
{
	struct gpu_stream *stream = profile->gpu_stream;
	uint32_t correlation_id = (uint32_t)event->gpu_launch.correlation_id;
	struct profile_thread *thread;
	struct profile_run *run = NULL;
	struct profile_op *op = NULL;
	struct parked *parked;
	struct gpu_call *call;

	note_gpu(profile);
	/* The runtime's call, then the driver's it made, with one id: the first. */
	if (idmap_get(&stream->calls, event->tgid, correlation_id))
		return 0;
	thread = profile_thread_of(profile, event->tgid, event->tid);
	call = calloc(1, sizeof(*call));
	if (!thread || !call || idmap_put(&stream->calls, event->tgid, correlation_id, call)) {
		free(call);
		return -ENOMEM;
	}
	call->launch = (struct gpu_launch){
		.tgid = event->tgid,
		.tid = event->tid,
		.correlation_id = correlation_id,
		.api_kind = (uint8_t)event->gpu_launch.api_kind,
		.start_ns = event->timestamp,
		.end_ns = event->timestamp,
	};
	call->flags = (uint32_t)event->gpu_launch.flags;
	call->expires_ns = event->timestamp + GPU_HORIZON_NS;
	profile_open_frame(profile, thread, &run, &op);
	if (op) {
		op->pending++;
		call->op = op;
	}
	if (run) {
		/* A run is the first member of its node (profile_internal.h). */
		call->node = (struct run_node *)run;
		call->node->holds++;
	}
	call->older = stream->newest;
	if (stream->newest)
		stream->newest->newer = call;
	else
		stream->oldest = call;
	stream->newest = call;
	parked = idmap_get(&stream->parked, event->tgid, correlation_id);
	if (!parked)
		return 0;
	idmap_remove(&stream->parked, event->tgid, correlation_id);
	while (parked) {
		struct parked *next = parked->next;

		emit(profile, call, &parked->activity);
		free(parked);
		parked = next;
	}
	/* Kept, holding nothing, for the driver's mark of the runtime's call. */
	if (!(call->flags & OPTRACE_GPU_LAUNCH_MANY)) {
		let_go(profile, call);
		call->done = true;
	}
	return 0;
}

static int attribute(struct profile *profile, const struct gpu_activity *activity)
{
	struct gpu_stream *stream = profile->gpu_stream;
	uint32_t tgid = activity->tgid;
	struct gpu_call *call = idmap_get(&stream->calls, tgid, activity->correlation_id);
	struct parked *parked, *first;

	/* A copy the driver made for a runtime call: that call's id. */
	if ((!call || call->done) && activity->runtime_correlation_id)
		call = idmap_get(&stream->calls, tgid, activity->runtime_correlation_id);
	if (call && !call->done) {
		emit(profile, call, activity);
		if (!(call->flags & OPTRACE_GPU_LAUNCH_MANY))
			release_call(profile, call);
		return 0;
	}
	parked = malloc(sizeof(*parked));
	if (!parked)
		return -ENOMEM;
	parked->activity = *activity;
	parked->next = NULL;
	first = idmap_get(&stream->parked, tgid, activity->correlation_id);
	if (first) {
		/* In their order: the first of a launch is drawn with it. */
		struct parked *last = first;

		while (last->next)
			last = last->next;
		last->next = parked;
		return 0;
	}
	if (idmap_put(&stream->parked, tgid, activity->correlation_id, parked)) {
		free(parked);
		return -ENOMEM;
	}
	return 0;
}

/* A launch's API record in flight: its call's real span and function. */
static void note_api(struct gpu_stream *stream, const struct gpu_launch *api)
{
	struct gpu_call *call = idmap_get(&stream->calls, api->tgid, api->correlation_id);

	if (!call || !api->start_ns)
		return;
	call->launch.start_ns = api->start_ns + (uint64_t)stream->offset_ns;
	call->launch.end_ns = api->end_ns + (uint64_t)stream->offset_ns;
	call->launch.cbid = api->cbid;
}

static int gpu_stream_record(struct profile *profile, unsigned int type, const void *record,
			     size_t size)
{
	struct gpu_stream *stream = profile->gpu_stream;
	struct gpu_index *index = &stream->index;
	struct gpu_activity activity;
	int err;

	note_gpu(profile);
	err = gpu_index_add_record(index, type, record, size);
	if (index->launch_count) {
		note_api(stream, &index->launches[0]);
		index->launch_count = 0;
	}
	if (err || !index->activity_count)
		return err;
	activity = index->activities[0];
	index->activity_count = 0;
	if (!activity.time_invalid) {
		activity.start_ns += (uint64_t)stream->offset_ns;
		activity.end_ns += (uint64_t)stream->offset_ns;
	}
	return attribute(profile, &activity);
}

static void gpu_stream_expire(struct profile *profile, const struct record_event *event)
{
	struct gpu_stream *stream = profile->gpu_stream;
	uint64_t now_ns = event->timestamp;

	while (stream->oldest && stream->oldest->expires_ns < now_ns)
		release_call(profile, stream->oldest);
}

static void gpu_stream_finish(struct profile *profile)
{
	struct gpu_stream *stream = profile->gpu_stream;

	while (stream->oldest)
		release_call(profile, stream->oldest);
	/* Activities whose launch never came. */
	for (size_t i = 0; i < stream->parked.capacity; i++) {
		struct parked *parked = stream->parked.slots[i].value;

		while (parked) {
			struct parked *next = parked->next;

			profile_emit_gpu(profile, &parked->activity, NULL, 0, NULL, NULL, false);
			free(parked);
			parked = next;
		}
		stream->parked.slots[i].value = NULL;
	}
	idmap_free(&stream->parked);
}

static void gpu_stream_free(struct profile *profile)
{
	struct gpu_stream *stream = profile->gpu_stream;

	if (!stream)
		return;
	/* Not finished (an error): what the calls hold goes with them. */
	while (stream->oldest) {
		struct gpu_call *call = stream->oldest;

		stream->oldest = call->newer;
		if (call->node && --call->node->holds == 0 && call->node->done)
			free(call->node);
		free(call);
	}
	for (size_t i = 0; i < stream->parked.capacity; i++) {
		for (struct parked *p = stream->parked.slots[i].value, *next; p; p = next) {
			next = p->next;
			free(p);
		}
	}
	idmap_free(&stream->parked);
	idmap_free(&stream->calls);
	gpu_index_free(&stream->index);
	free(stream);
	profile->gpu_stream = NULL;
	profile->gpu = NULL;
}

static int gpu_stream_feed(struct profile *profile, const struct record_event *event, size_t size)
{
	if (event->type == RECORD_GPU_LAUNCH)
		return gpu_stream_launch(profile, event);
	return gpu_stream_record(profile, event->type, event, size);
}

/* Nothing is left to hand over once the calls were let go (finish). */
static void gpu_stream_done(struct profile *profile)
{
	(void)profile;
}

static const struct gpu_attribution streamed = {
	.before = gpu_stream_expire,
	.record = gpu_stream_feed,
	.flush = gpu_stream_finish,
	.finish = gpu_stream_done,
	.free = gpu_stream_free,
};

int profile_stream_gpu(struct profile *profile)
{
	struct gpu_stream *stream = calloc(1, sizeof(*stream));

	if (!stream)
		return -ENOMEM;
	gpu_index_init(&stream->index);
	profile->gpu_stream = stream;
	profile->attribution = &streamed;
	return 0;
}
