// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The fast path's clock (probes/clock.c): an event's time is exactly
 * CLOCK_MONOTONIC, never before a clock_gettime() just before it and never
 * after one just after, through the kernel's updates of the vDSO page
 * (every tick), idle gaps and a long sleep; never backwards; and with
 * OPTRACE_CLOCK=vdso, from clock_gettime() alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../probes/clock.c"
#include "testlib.h"

static struct thread_state state;

START_TEST(test_event_times_are_clock_monotonic)
{
	uint64_t last = 0, ahead = 0, behind = 0;

	for (long i = 0; i < 3000000; i++) {
		uint64_t before = optrace_now_ns(), ns = optrace_event_ns(&state),
			 after = optrace_now_ns();

		ck_assert_msg(ns >= last, "backwards by %llu ns at %ld",
			      (unsigned long long)(last - ns), i);
		last = ns;
		if (ns > after)
			ahead++;
		if (ns < before)
			behind++;
		if (i % 500000 == 499999)
			usleep(i % 1000000 == 999999 ? 50000 : 2000); /* idle, and past ticks */
	}
	printf("clock: %s; of 3000000 events, %llu after the vDSO's time just after, %llu before "
	       "the one just before\n",
	       optrace_vclock.seq ? "TSC through the kernel's vDSO parameters" : "vDSO",
	       (unsigned long long)ahead, (unsigned long long)behind);
	ck_assert_uint_eq(ahead, 0);
	ck_assert_uint_eq(behind, 0);
}
END_TEST

#if defined(__x86_64__)
/*
 * Where the kernel keeps time with the TSC, whether its page was found: said,
 * not asserted, since a kernel may lay the page out anew (the vDSO then
 * serves, exact and slower: bench/probe_overhead.sh shows the cost).
 */
START_TEST(test_the_kernel_page)
{
	if (!tsc_is_the_clock())
		printf("clock: the clocksource is not an invariant TSC here: the vDSO serves\n");
	else if (!optrace_vclock.seq)
		printf("clock: NOTE: the TSC is the clocksource, but the vDSO page's layout was "
		       "not recognised: events read clock_gettime()\n");
}
END_TEST

/* OPTRACE_CLOCK=vdso: every event reads clock_gettime(). */
START_TEST(test_vdso_when_asked)
{
	setenv("OPTRACE_CLOCK", "vdso", 1);
	choose_clock();
	ck_assert_ptr_null((const void *)optrace_vclock.seq);
	unsetenv("OPTRACE_CLOCK");
	choose_clock();
}
END_TEST
#endif

int main(void)
{
	Suite *suite = suite_create("tsc_clock");
	TCase *tc = tcase_create("clock");

	tcase_set_timeout(tc, 60);
#if defined(__x86_64__)
	tcase_add_test(tc, test_the_kernel_page);
	tcase_add_test(tc, test_vdso_when_asked);
#endif
	tcase_add_test(tc, test_event_times_are_clock_monotonic);
	suite_add_tcase(suite, tc);
	return run_suite(suite);
}
