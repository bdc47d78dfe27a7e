// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the formats' hooks share about their job (export_format.h), apart
 * from the table of formats (export_formats.c), which names every format's
 * row: so that the formats depend on this file, and it on none of them.
 */
#include "output/export_format.h"
#include "output/gpu_tables.h"

bool export_gpu_losses(const struct export_job *job, struct gpu_summary *summary)
{
	uint64_t ring_buffer_lost =
		replay_counter(job->replay, capture_counter_name(CAPTURE_LOST_GPU_RINGBUF_FULL));

	return gpu_losses_note(job->profile, ring_buffer_lost, summary);
}
