/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The fast path's timestamps: CLOCK_MONOTONIC nanoseconds, the clock of
 * bpf_ktime_get_ns(), as the event layout says. With OPTRACE_CLOCK=tsc,
 * where the TSC is invariant and the kernel itself keeps time with it
 * (clocksource tsc), an event reads
 * the TSC (about a third of a vDSO clock_gettime here) and converts it from
 * its thread's last anchor, a (TSC, CLOCK_MONOTONIC) pair read through the
 * vDSO at most a few milliseconds before, at the rate the two last anchors
 * give: the conversion is the vDSO's own, with the error of a rate over a
 * few milliseconds (up to a few hundred ns) and never backwards. Otherwise
 * every event reads the vDSO: exact, and the default.
 */
#ifndef OPTRACE_PROBES_CLOCK_H
#define OPTRACE_PROBES_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "thread.h"

/* Ticks an anchor serves for: past them, a new one (2^25: about 11 ms at 3 GHz). */
#define OPTRACE_TSC_SPAN (1ull << 25)

/* CLOCK_MONOTONIC through the vDSO. */
static inline uint64_t optrace_now_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* Whether events read the TSC (decided when the library loads). */
extern bool optrace_tsc_usable OPTRACE_INTERNAL;

/* A new anchor for t's clock (or the vDSO's time alone); the time now. */
uint64_t optrace_clock_anchor(struct thread_state *t) OPTRACE_INTERNAL;

/* The time of an event of thread t. */
static inline uint64_t optrace_event_ns(struct thread_state *t)
{
#if defined(__x86_64__)
	struct tsc_clock *clock = &t->clock;

	if (__builtin_expect(clock->mult != 0, 1)) {
		uint64_t ticks = __rdtsc() - clock->tsc;

		if (__builtin_expect(ticks < OPTRACE_TSC_SPAN, 1)) {
			uint64_t ns = clock->ns + (ticks * clock->mult >> 32);

			if (__builtin_expect(ns < clock->last_ns, 0))
				ns = clock->last_ns;
			clock->last_ns = ns;
			return ns;
		}
	}
#endif
	return optrace_clock_anchor(t);
}

#endif /* OPTRACE_PROBES_CLOCK_H */
