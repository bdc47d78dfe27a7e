// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The fast path's clock's cold half: whether the TSC serves, and anchors (clock.h). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "clock.h"

/* Fewer ticks between anchors give no rate worth having (2^20: about 0.3 ms). */
#define MIN_RATE_TICKS (1ull << 20)
/* An anchor read with more ticks between its two TSC reads was interrupted. */
#define MAX_READ_TICKS (1ull << 11)

bool optrace_tsc_usable;

uint64_t optrace_clock_anchor(struct thread_state *t)
{
#if defined(__x86_64__)
	struct tsc_clock *clock = &t->clock;
	uint64_t before, ns, after, ticks;

	if (!optrace_tsc_usable)
		return optrace_now_ns();
	for (int tries = 0;; tries++) {
		before = __rdtsc();
		ns = optrace_now_ns();
		after = __rdtsc();
		if (after - before < MAX_READ_TICKS || tries == 3)
			break;
	}
	before += (after - before) / 2; /* the TSC when the vDSO read it, near enough */
	if (ns < clock->last_ns)
		ns = clock->last_ns; /* the last rate ran fast: never backwards */
	ticks = before - clock->tsc;
	if (clock->tsc && before > clock->tsc && ticks < MIN_RATE_TICKS) {
		/* too close to the last anchor for a rate: it stays the base */
		clock->last_ns = ns;
		return ns;
	}
	/* A rate from this anchor and the last, if not too far apart. */
	if (clock->tsc && before > clock->tsc && ns > clock->ns && ns - clock->ns < (1ull << 31))
		clock->mult = ((ns - clock->ns) << 32) / ticks;
	else
		clock->mult = 0; /* the first, or idle for seconds: measure before trusting one */
	clock->tsc = before;
	clock->ns = ns;
	clock->last_ns = ns;
	return ns;
#else
	(void)t;
	return optrace_now_ns();
#endif
}

#if defined(__x86_64__)
/* An invariant TSC (CPUID 0x80000007 EDX bit 8), which the kernel keeps time with. */
static bool tsc_is_the_clock(void)
{
	unsigned int eax, ebx, ecx, edx;
	char source[32] = "";
	FILE *file;

	if (!__get_cpuid(0x80000007, &eax, &ebx, &ecx, &edx) || !(edx & (1u << 8)))
		return false;
	file = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");
	if (!file)
		return false;
	if (!fgets(source, sizeof(source), file))
		source[0] = '\0';
	fclose(file);
	return !strcmp(source, "tsc\n");
}

__attribute__((constructor)) static void choose_clock(void)
{
	const char *choice = getenv("OPTRACE_CLOCK");

	/*
	 * Asked for only: the conversion is within tens to hundreds of ns of
	 * the vDSO, not exact, so an event can sort before a CLOCK_MONOTONIC
	 * time taken just after it elsewhere (a CUDA call's, read ahead).
	 */
	optrace_tsc_usable = choice && !strcmp(choice, "tsc") && tsc_is_the_clock();
}
#endif
