// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The fast path's clock (probes/clock.c): where the TSC serves, events'
 * times stay within microseconds of CLOCK_MONOTONIC read through the vDSO
 * just before and just after, across anchors, idle gaps and a long sleep,
 * and never go backwards.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../probes/clock.c"
#include "testlib.h"

#define SLACK_NS 5000 /* the error of a rate over a few milliseconds, and more */

static struct thread_state state;

START_TEST(test_event_times_follow_clock_monotonic)
{
	uint64_t last = 0, worst_ahead = 0, worst_behind = 0;

	for (long i = 0; i < 3000000; i++) {
		uint64_t before = optrace_now_ns(), ns = optrace_event_ns(&state),
			 after = optrace_now_ns();

		ck_assert_msg(ns >= last, "backwards by %llu ns at %ld",
			      (unsigned long long)(last - ns), i);
		last = ns;
		if (ns > after && ns - after > worst_ahead)
			worst_ahead = ns - after;
		if (ns < before && before - ns > worst_behind)
			worst_behind = before - ns;
		if (i % 500000 == 499999)
			usleep(i % 1000000 == 999999 ? 50000 : 2000); /* past a span, and idle */
	}
	printf("clock: %s, worst %llu ns ahead, %llu ns behind the vDSO\n",
	       optrace_tsc_usable ? "TSC" : "vDSO", (unsigned long long)worst_ahead,
	       (unsigned long long)worst_behind);
	ck_assert_uint_le(worst_ahead, SLACK_NS);
	ck_assert_uint_le(worst_behind, SLACK_NS);
	if (optrace_tsc_usable)
		ck_assert_msg(state.clock.mult != 0, "the TSC never got a rate");
}
END_TEST

int main(void)
{
	/* the TSC is asked for (the library's constructor read no OPTRACE_CLOCK) */
	setenv("OPTRACE_CLOCK", "tsc", 1);
#if defined(__x86_64__)
	choose_clock();
#endif
	Suite *suite = suite_create("tsc_clock");
	TCase *tc = tcase_create("clock");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_event_times_follow_clock_monotonic);
	suite_add_tcase(suite, tc);
	return run_suite(suite);
}
