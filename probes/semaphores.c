// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The optrace provider's semaphores, side by side in one object, in place of
 * the ones `dtrace -G` would make: each probe's note names its semaphore's
 * symbol, which is an alias of one slot here, so that liboptrace tests
 * whether any probe is armed in three loads (ids are made then, so that
 * a tracer of any single probe sees them).
 */
#include <stdbool.h>
#include <stdint.h>

#include "semaphores.h"

union optrace_semaphores optrace_semaphores
	__attribute__((section(".probes"), aligned(8), visibility("hidden")));

#define ALIAS(name, slot)                       \
	".globl optrace_" #name "_semaphore\n"  \
	".hidden optrace_" #name "_semaphore\n" \
	".set optrace_" #name "_semaphore, optrace_semaphores + " #slot " * 2\n"

__asm__(ALIAS(rt_init, 0) ALIAS(op_begin, 1) ALIAS(op_end, 2) ALIAS(op_mode, 3)
		ALIAS(op_fallback, 4) ALIAS(task_launch, 5) ALIAS(task_begin, 6) ALIAS(task_end, 7)
			ALIAS(wait_begin, 8) ALIAS(wait_end, 9) ALIAS(batch, 10));
