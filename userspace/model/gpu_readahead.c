// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * GPU activity read ahead (a capture replayed whole, or a --gpu file): the
 * whole gpu_index is at hand before the records, so each thread's launches
 * are handed to the frame open on it at their time, as the thread's records
 * go by. gpu_stream.c does the same for activity that comes with the
 * records (a live run).
 */
#include <stdint.h>

#include "model/profile_internal.h"

/*
 * The launches CUPTI recorded under thread id cupti_tid become thread's,
 * unless another thread took them (a host tid equal to another thread's
 * container tid): then it has none, rather than another's.
 */
static void take_launches(struct profile *profile, struct profile_thread *thread, uint32_t tgid,
			  uint32_t cupti_tid)
{
	const struct gpu_thread_launches *launches =
		gpu_index_thread(profile->gpu, tgid, cupti_tid);
	void *owner = idmap_get(&profile->gpu_claimed, tgid, cupti_tid);

	thread->launches_taken = true;
	thread->cupti_tid = cupti_tid;
	if (!launches || (owner && owner != thread))
		return;
	if (idmap_put(&profile->gpu_claimed, tgid, cupti_tid, thread))
		return; /* no memory: left to the end, as unclaimed */
	thread->launches = launches;
}

static void emit_launch(struct profile *profile, struct profile_thread *thread,
			const struct gpu_launch *launch)
{
	struct profile_run *run = NULL;
	struct profile_op *op = NULL;
	/* The host's id of the launching thread; CUPTI's when it had no frames. */
	uint32_t tid = thread ? thread->tid : launch->tid;
	bool drawn = false;

	/* A launch whose time CUPTI did not give belongs to no frame. */
	if (launch->start_ns)
		profile_open_frame(profile, thread, &run, &op);
	for (uint32_t i = 0; i < launch->activity_count; i++) {
		const struct gpu_activity *activity = gpu_launch_activity(profile->gpu, launch, i);
		bool first = !drawn && !activity->time_invalid;

		drawn = drawn || first;
		profile_emit_gpu(profile, activity, launch, tid, run, op, first);
	}
}

/* The thread's launches that began before until_ns, in the frames open now. */
static void attribute_until(struct profile *profile, struct profile_thread *thread,
			    uint64_t until_ns)
{
	const struct gpu_thread_launches *launches = thread->launches;

	while (launches && thread->next_launch < launches->count) {
		const struct gpu_launch *launch =
			&profile->gpu->launches[launches->first + thread->next_launch];

		if (launch->start_ns >= until_ns)
			break;
		thread->next_launch++;
		emit_launch(profile, thread, launch);
	}
}

/* The events after which a different frame is open on their thread. */
static bool opens_or_closes_frame(int type)
{
	return type == RECORD_OP_BEGIN || type == RECORD_OP_END || type == RECORD_TASK_BEGIN ||
	       type == RECORD_TASK_END;
}

static void gpu_readahead_before(struct profile *profile, const struct record_event *event)
{
	struct profile_thread *thread;

	if (!opens_or_closes_frame(event->type))
		return;
	thread = profile_thread_of(profile, event->tgid, event->tid);
	if (!thread)
		return;
	/*
	 * At its first op_begin or task_begin, which carry the thread's id in
	 * its own pid namespace: what CUPTI reports, in a container too (0 in
	 * captures from before optrace recorded it: the host's id then). A thread
	 * first seen ending something begun earlier takes none yet.
	 */
	if (!thread->launches_taken &&
	    (event->type == RECORD_OP_BEGIN || event->type == RECORD_TASK_BEGIN))
		take_launches(profile, thread, event->tgid, event->ns_tid ?: event->tid);
	attribute_until(profile, thread, event->timestamp);
}

static void gpu_readahead_flush(struct profile *profile)
{
	for (size_t i = 0; i < profile->threads.capacity; i++) {
		struct profile_thread *thread = profile->threads.slots[i].value;

		if (thread)
			attribute_until(profile, thread, UINT64_MAX);
	}
}

static void gpu_readahead_finish(struct profile *profile)
{
	const struct gpu_index *gpu = profile->gpu;

	for (size_t i = 0; i < gpu->threads.capacity; i++) {
		const struct idmap_slot *slot = &gpu->threads.slots[i];
		const struct gpu_thread_launches *launches = slot->value;

		if (!launches || idmap_get(&profile->gpu_claimed, slot->tgid, slot->id))
			continue;
		for (size_t j = 0; j < launches->count; j++)
			emit_launch(profile, NULL, &gpu->launches[launches->first + j]);
	}
	for (size_t i = 0; i < gpu->activity_count; i++) {
		if (gpu->activities[i].launch == GPU_NO_LAUNCH)
			profile_emit_gpu(profile, &gpu->activities[i], NULL, 0, NULL, NULL, false);
	}
}

/* The records themselves pass by: their activity was read ahead. */
static int gpu_readahead_record(struct profile *profile, const struct record_event *event,
				size_t size)
{
	(void)profile;
	(void)event;
	(void)size;
	return 0;
}

/* The index is the caller's. */
static void gpu_readahead_free(struct profile *profile)
{
	(void)profile;
}

static const struct gpu_attribution read_ahead = {
	.before = gpu_readahead_before,
	.record = gpu_readahead_record,
	.flush = gpu_readahead_flush,
	.finish = gpu_readahead_finish,
	.free = gpu_readahead_free,
};

void profile_set_gpu(struct profile *profile, const struct gpu_index *gpu)
{
	profile->gpu = gpu;
	profile->attribution = gpu ? &read_ahead : NULL;
}
