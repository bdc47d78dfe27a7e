// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The first point of task_name to begin after demo_stall_task() spins,
 * on its worker, until demo_stall_release() (safe from a signal handler)
 * or until its time is up: a spin, not a sleep, as a kernel that never
 * converges would be.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "demo.h"
#include "stall.h"

static _Atomic(const char *) armed_task;
static atomic_uint stall_ms;
static atomic_bool released;

void demo_stall_task(const char *task_name, unsigned int ms)
{
	atomic_store(&released, false);
	atomic_store(&stall_ms, ms);
	atomic_store(&armed_task, task_name);
}

void demo_stall_release(void)
{
	atomic_store(&released, true);
}

static uint64_t now_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000;
}

void stall_point(const char *task_name, uint32_t point)
{
	const char *armed = atomic_load_explicit(&armed_task, memory_order_relaxed);
	uint64_t deadline;

	(void)point;
	if (__builtin_expect(!armed, 1) || strcmp(armed, task_name) ||
	    !atomic_compare_exchange_strong(&armed_task, &armed, NULL))
		return;
	deadline = atomic_load(&stall_ms) ? now_ms() + atomic_load(&stall_ms) : UINT64_MAX;
	while (!atomic_load_explicit(&released, memory_order_relaxed) && now_ms() < deadline) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	}
}
