/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The optrace provider's semaphores as one object (probes/semaphores.c). */
#ifndef OPTRACE_SEMAPHORES_H
#define OPTRACE_SEMAPHORES_H

#include <stdbool.h>
#include <stdint.h>

/* One slot per probe of probes/optrace.d, in its order; the rest stay 0. */
#define OPTRACE_SEMAPHORE_SLOTS 12

union optrace_semaphores {
	unsigned short slot[OPTRACE_SEMAPHORE_SLOTS];
	uint64_t words[OPTRACE_SEMAPHORE_SLOTS / 4];
};

extern union optrace_semaphores optrace_semaphores;

/* True while a tracer arms any probe of the provider, the batch probe included. */
static inline bool optrace_any_armed(void)
{
	const volatile uint64_t *words = optrace_semaphores.words;

	return __builtin_expect((words[0] | words[1] | words[2]) != 0, 0);
}

#endif /* OPTRACE_SEMAPHORES_H */
