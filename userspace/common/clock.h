/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Times as nanoseconds: the one conversion from struct timespec. */
#ifndef OPTRACE_COMMON_CLOCK_H
#define OPTRACE_COMMON_CLOCK_H

#include <stdint.h>
#include <time.h>

#define NSEC_PER_SEC 1000000000ull

static inline uint64_t timespec_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * NSEC_PER_SEC + (uint64_t)ts->tv_nsec;
}

/* clock's time now, in nanoseconds. */
static inline uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return timespec_ns(&ts);
}

/* Seconds from start to CLOCK_MONOTONIC's now (start: clock_ns(CLOCK_MONOTONIC)). */
static inline double seconds_since(uint64_t start_ns)
{
	return (double)(clock_ns(CLOCK_MONOTONIC) - start_ns) / 1e9;
}

#endif /* OPTRACE_COMMON_CLOCK_H */
