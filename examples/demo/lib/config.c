// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Configuration. As in cuPyNumeric, the environment is read once, when the
 * runtime starts: DEMO_FORCE_MODE mirrors CUPYNUMERIC_FORCE_THUNK and
 * DEMO_MAX_EAGER_VOLUME mirrors CUPYNUMERIC_MAX_EAGER_VOLUME. A value the
 * driver sets explicitly wins over the environment.
 */
#include <errno.h>
#include <stdlib.h>
#include <strings.h>

#include "config.h"
#include "cuda.h"
#include "error.h"

struct runtime_config runtime_config = {
	.cpus = 1,
	.omp_threads = 1,
	.max_eager_volume = DEMO_DEFAULT_MAX_EAGER_VOLUME,
};

static int force_from_environment(enum force_mode *force)
{
	const char *text = getenv("DEMO_FORCE_MODE");

	*force = FORCE_NONE;
	if (!text || !*text)
		return 0;
	if (!strcasecmp(text, "eager"))
		*force = FORCE_EAGER;
	else if (!strcasecmp(text, "deferred"))
		*force = FORCE_DEFERRED;
	else
		return -EINVAL;
	return 0;
}

static int volume_from_environment(uint64_t *volume)
{
	const char *text = getenv("DEMO_MAX_EAGER_VOLUME");
	unsigned long long value;
	char *end;

	if (!text || !*text)
		return 0;
	errno = 0;
	value = strtoull(text, &end, 10);
	if (errno || *end || text[0] == '-')
		return -EINVAL;
	*volume = value;
	return 0;
}

int config_load(const struct demo_config *config)
{
	struct runtime_config next = {
		.cpus = config->cpus,
		.omp_procs = config->omp_procs,
		.omp_threads = config->omp_threads ? config->omp_threads : 1,
		.gpu_procs = config->gpus,
		.max_eager_volume = DEMO_DEFAULT_MAX_EAGER_VOLUME,
	};

	if (!next.cpus) {
		error_set("the runtime needs at least one CPU processor");
		return -EINVAL;
	}
	if (next.omp_threads > CONFIG_MAX_OMP_THREADS) {
		error_set("at most %d threads per OpenMP processor", CONFIG_MAX_OMP_THREADS);
		return -EINVAL;
	}
	if (next.gpu_procs) {
		const char *why = NULL;

		if (cuda_device_count(&why) < 0) {
			error_set("cannot start %u GPU processor%s: %s", next.gpu_procs,
				  next.gpu_procs == 1 ? "" : "s", why);
			return -ENODEV;
		}
	}
	if (force_from_environment(&next.force)) {
		error_set("DEMO_FORCE_MODE must be eager or deferred, not '%s'",
			  getenv("DEMO_FORCE_MODE"));
		return -EINVAL;
	}
	if (config->max_eager_volume >= 0) {
		next.max_eager_volume = (uint64_t)config->max_eager_volume;
	} else if (volume_from_environment(&next.max_eager_volume)) {
		error_set("DEMO_MAX_EAGER_VOLUME must be a number of elements, not '%s'",
			  getenv("DEMO_MAX_EAGER_VOLUME"));
		return -EINVAL;
	}
	runtime_config = next;
	return 0;
}

int demo_gpu_devices(const char **why)
{
	return cuda_device_count(why);
}

uint64_t demo_max_eager_volume(void)
{
	return runtime_config.max_eager_volume;
}
