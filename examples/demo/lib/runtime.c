// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Starting, fencing and stopping the runtime. */
#include "config.h"
#include "demo.h"
#include "probe.h"
#include "sched.h"

void demo_announce(int rank, int rank_count)
{
	probe_rt_init(rank, rank_count);
}

int demo_runtime_start(const struct demo_config *config)
{
	int err;

	err = config_load(config);
	if (err)
		return err;
	return sched_start(runtime_config.cpus, runtime_config.omp_procs,
			   runtime_config.omp_threads, runtime_config.gpu_procs);
}

void demo_runtime_stop(void)
{
	sched_stop();
}

void demo_fence(void)
{
	sched_fence(probe_current_op());
}
