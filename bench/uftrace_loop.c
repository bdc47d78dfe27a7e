// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bench/probe_loop.c's loop for uftrace: each iteration calls one function
 * built with -pg, whose entry and exit uftrace records (two events, as
 * op_begin and op_end are). Run alone it pays only the mcount stub; under
 * `uftrace record` it is traced. Prints the thread's CPU ns per event (two
 * per call), as probe_loop does.
 *
 * USAGE: uftrace_loop [ITERATIONS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t sink;

/* A runtime's operation: traced by uftrace at its entry and exit. */
__attribute__((noinline)) void bench_operation(uint64_t i)
{
	sink += i;
	__asm__ __volatile__("" ::: "memory");
}

__attribute__((no_instrument_function)) static double cpu_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
	return (double)now.tv_sec * 1e9 + (double)now.tv_nsec;
}

int main(int argc, char **argv)
{
	long iterations = argc > 1 ? atol(argv[1]) : 1000000;
	double start;

	if (iterations <= 0) {
		fprintf(stderr, "usage: uftrace_loop [ITERATIONS]\n");
		return 2;
	}
	start = cpu_ns();
	for (long i = 0; i < iterations; i++)
		bench_operation((uint64_t)i);
	printf("%.3f\n", (cpu_ns() - start) / (2.0 * (double)iterations));
	return 0;
}
