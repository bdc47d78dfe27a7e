/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The fast path's timestamps: CLOCK_MONOTONIC nanoseconds, the clock of
 * bpf_ktime_get_ns(), as the event layout says, and exactly the time the
 * vDSO's clock_gettime() would give for the same TSC value.
 *
 * Where the TSC is invariant and the kernel keeps time with it
 * (clocksource tsc), an event reads the TSC and converts it as the vDSO
 * does, with the kernel's own parameters for CLOCK_MONOTONIC (cycle_last,
 * mult, shift, base), read from the vDSO data page ([vvar]) under its
 * sequence count: no function call, no fence, no division. The page's
 * layout is the kernel's, not an ABI, so it is used only after it has
 * been found and checked when the library loads (clock.c): every
 * conversion must fall between two clock_gettime() calls. Elsewhere, in a
 * time namespace, with OPTRACE_CLOCK=vdso, or whenever the page is being
 * updated or the TSC is far past cycle_last, events read clock_gettime().
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

/* CLOCK_MONOTONIC through the vDSO. */
static inline uint64_t optrace_now_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* The kernel's CLOCK_MONOTONIC parameters in the vDSO data page. */
struct optrace_vclock {
	const volatile uint32_t *seq; /* NULL: events read clock_gettime() */
	const volatile uint64_t *cycle_last;
	const volatile uint32_t *mult_shift; /* mult, then shift */
	const volatile uint64_t *base;	     /* seconds, then nanoseconds << shift */
};

/* Found and checked when the library loads. */
extern struct optrace_vclock optrace_vclock OPTRACE_INTERNAL;

/*
 * What the vDSO computes for cycles, if the page held still and cycles is
 * less than 2^32 past cycle_last (the vDSO's own slow cases are left to it).
 */
static inline bool optrace_vclock_convert(const struct optrace_vclock *vc, uint64_t cycles,
					  uint64_t *ns)
{
	uint32_t seq = *vc->seq, mult, shift;
	uint64_t delta, seconds, base;

	__asm__ volatile("" ::: "memory");
	delta = cycles - *vc->cycle_last;
	mult = vc->mult_shift[0];
	shift = vc->mult_shift[1];
	seconds = vc->base[0];
	base = vc->base[1];
	__asm__ volatile("" ::: "memory");
	if (__builtin_expect((seq & 1) || seq != *vc->seq || delta >= (1ull << 32), 0))
		return false;
	*ns = seconds * 1000000000u + ((base + delta * mult) >> shift);
	return true;
}

/* The time of an event of thread t: never before t's last one. */
static inline uint64_t optrace_event_ns(struct thread_state *t)
{
	uint64_t ns;

#if defined(__x86_64__)
	if (!__builtin_expect(optrace_vclock.seq &&
				      optrace_vclock_convert(&optrace_vclock, __rdtsc(), &ns),
			      1))
		ns = optrace_now_ns();
#else
	ns = optrace_now_ns();
#endif
	if (__builtin_expect(ns < t->last_event_ns, 0))
		ns = t->last_event_ns;
	t->last_event_ns = ns;
	return ns;
}

#endif /* OPTRACE_PROBES_CLOCK_H */
