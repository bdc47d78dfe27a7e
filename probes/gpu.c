// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * liboptrace's optrace_gpu probes: GPU activity records (include/optrace/
 * gpu.h), fired for whoever produced them (liboptrace-cupti from CUPTI, or a
 * runtime with its own GPU timing). Like the op probes, each tests its
 * semaphore and returns while no tracer is attached.
 */
#include <stdint.h>

#include <optrace/gpu.h>

#include "batch.h"
#include "optrace_gpu_probes.h"
#include "optrace_probes.h"

bool optrace_gpu_enabled(void)
{
	return OPTRACE_GPU_KERNEL_ENABLED() || OPTRACE_GPU_MEMCPY_ENABLED() ||
	       OPTRACE_GPU_MEMSET_ENABLED() || OPTRACE_GPU_API_ENABLED() ||
	       OPTRACE_GPU_SYNC_ENABLED() || OPTRACE_GPU_KERNEL_NAME_ENABLED() ||
	       OPTRACE_GPU_DROPPED_ENABLED() || OPTRACE_GPU_LAUNCH_ENABLED();
}

unsigned int optrace_gpu_tracers(void)
{
	/* Each tracer attached to the probe adds one to its semaphore. */
	return __atomic_load_n(&optrace_gpu_kernel_name_semaphore, __ATOMIC_RELAXED);
}

void optrace_gpu_record(const void *record)
{
	const struct optrace_gpu_head *head = record;

	if (!head)
		return;
	switch (head->type) {
	case OPTRACE_GPU_REC_KERNEL:
		if (OPTRACE_GPU_KERNEL_ENABLED())
			OPTRACE_GPU_KERNEL(record);
		break;
	case OPTRACE_GPU_REC_MEMCPY:
		if (OPTRACE_GPU_MEMCPY_ENABLED())
			OPTRACE_GPU_MEMCPY(record);
		break;
	case OPTRACE_GPU_REC_MEMSET:
		if (OPTRACE_GPU_MEMSET_ENABLED())
			OPTRACE_GPU_MEMSET(record);
		break;
	case OPTRACE_GPU_REC_API:
		if (OPTRACE_GPU_API_ENABLED())
			OPTRACE_GPU_API(record);
		break;
	case OPTRACE_GPU_REC_SYNC:
		if (OPTRACE_GPU_SYNC_ENABLED())
			OPTRACE_GPU_SYNC(record);
		break;
	default:
		break;
	}
}

void optrace_gpu_kernel_name(uint32_t name_id, const char *name)
{
	if (OPTRACE_GPU_KERNEL_NAME_ENABLED())
		OPTRACE_GPU_KERNEL_NAME(name_id, name);
}

void optrace_gpu_dropped(uint64_t count)
{
	optrace_gpu_dropped_from(count, OPTRACE_GPU_DROP_ACTIVITY_BUFFER);
}

void optrace_gpu_dropped_from(uint64_t count, int source)
{
	if (OPTRACE_GPU_DROPPED_ENABLED())
		OPTRACE_GPU_DROPPED(count, (uint32_t)source);
}

/*
 * A fast-path tracer of device activity (any activity probe armed, and the
 * batch probe) gets the launch in the thread's batch, in order with its
 * operations and tasks, for no trap; a per-event tracer arms the launch
 * probe itself.
 */
bool optrace_gpu_launch(uint32_t correlation_id, int api_kind, uint32_t flags)
{
	bool kept = true;

	if (OPTRACE_BATCH_ENABLED() &&
	    (OPTRACE_GPU_KERNEL_ENABLED() || OPTRACE_GPU_MEMCPY_ENABLED() ||
	     OPTRACE_GPU_MEMSET_ENABLED())) {
		struct thread_state *t = &optrace_thread;
		struct optrace_event *event = optrace_batch_next(t, OPTRACE_EVENT_GPU_LAUNCH);

		if (event) {
			event->gpu_launch.api_kind = (uint8_t)api_kind;
			event->gpu_launch.flags = flags;
			event->gpu_launch.correlation_id = correlation_id;
			optrace_batch_commit(t, event);
		} else {
			kept = false;
		}
	}
	if (OPTRACE_GPU_LAUNCH_ENABLED())
		OPTRACE_GPU_LAUNCH(correlation_id, (uint32_t)api_kind, flags);
	return kept;
}
