// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>

#include "output/track_names.h"

/* Above any thread's (sort index 0): GPU streams come after the threads. */
#define GPU_SORT_BASE 0x40000000u

const char *track_process_name(const struct profile *profile, uint32_t tgid, char *buffer,
			       size_t size)
{
	return profile_names_describe(&profile->names, tgid, buffer, size);
}

const char *track_thread_name(const struct profile *profile, uint32_t tgid, uint32_t tid,
			      const struct profile_run *run, char *buffer, size_t size)
{
	const char *name = profile_names_thread(&profile->names, tgid, tid);

	/* Its own name, as the recorder read it; not what it happened to run first. */
	(void)run;
	if (name && name[0])
		snprintf(buffer, size, "%s %u", name, tid);
	else
		snprintf(buffer, size, "thread %u", tid);
	return buffer;
}

const char *track_gpu_name(uint32_t device_id, uint32_t stream_id, char *buffer, size_t size)
{
	snprintf(buffer, size, "GPU %u stream %u", device_id, stream_id);
	return buffer;
}

uint64_t track_gpu_sort_index(uint32_t device_id, uint32_t stream_id)
{
	uint32_t device = device_id < 0xff ? device_id : 0xff;
	uint32_t stream = stream_id < 0xffff ? stream_id : 0xffff;

	return GPU_SORT_BASE | device << 16 | stream;
}
