/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The runtime's configuration: the driver's choices and the environment's. */
#ifndef DEMO_CONFIG_H
#define DEMO_CONFIG_H

#include <stdint.h>

#include "demo.h"

/* Like CUPYNUMERIC_FORCE_THUNK: $DEMO_FORCE_MODE=eager|deferred. */
enum force_mode { FORCE_NONE, FORCE_EAGER, FORCE_DEFERRED };

/* The most threads an OpenMP processor's team may have. */
#define CONFIG_MAX_OMP_THREADS 256

struct runtime_config {
	unsigned int cpus;
	unsigned int omp_procs;
	unsigned int omp_threads;
	unsigned int gpu_procs;
	uint64_t max_eager_volume;
	enum force_mode force;
};

/* Set once by demo_runtime_start(), before any processor runs; read-only after. */
extern struct runtime_config runtime_config;

int config_load(const struct demo_config *config);

#endif /* DEMO_CONFIG_H */
