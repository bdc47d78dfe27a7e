// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The fast path's clock's cold half (clock.h): whether the TSC serves, and
 * where the kernel keeps CLOCK_MONOTONIC's parameters in the vDSO data page.
 *
 * The page starts (or, before 6.13 on x86, is 128 bytes into) with the
 * vdso_clock (vdso_data) of the high-resolution clocks
 * (include/vdso/datapage.h): seq, clock_mode, cycle_last, then max_cycles
 * where the kernel protects against overflow (6.x), mask, mult, shift and
 * one (seconds, shifted nanoseconds) base per clock id. Both layouts are
 * tried; one serves only if it says TSC mode with a full mask and its
 * conversions fall, every time, between two clock_gettime() calls.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "clock.h"

struct optrace_vclock optrace_vclock;

#if defined(__x86_64__)
/* VDSO_CLOCKMODE_TSC (arch/x86/include/asm/vdso/clocksource.h) */
#define VDSO_CLOCKMODE_TSC 1
/* the checks at load: conversions that must each fall between two vDSO reads */
#define CHECKS 64

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

/* The start of this process's [vvar] mapping, or NULL. */
static const unsigned char *vvar_page(void)
{
	unsigned long start = 0, end = 0;
	char line[512];
	FILE *maps = fopen("/proc/self/maps", "re");

	if (!maps)
		return NULL;
	while (fgets(line, sizeof(line), maps)) {
		size_t n = strlen(line);

		if (n > 7 && !strcmp(line + n - 7, "[vvar]\n") &&
		    sscanf(line, "%lx-%lx", &start, &end) == 2)
			break;
		start = end = 0;
	}
	fclose(maps);
	/* the fields read lie in the first 256 bytes */
	return start && end - start >= 4096 ? (const unsigned char *)start : NULL;
}

static uint64_t ordered_tsc(void)
{
	_mm_lfence();
	return __rdtsc();
}

/* The layout with max_cycles (overflow) or without, checked against the vDSO. */
static bool layout_serves(const unsigned char *page, bool overflow)
{
	size_t mask_at = overflow ? 24 : 16;
	struct optrace_vclock vc = {
		.seq = (const volatile uint32_t *)page,
		.cycle_last = (const volatile uint64_t *)(page + 8),
		.mult_shift = (const volatile uint32_t *)(page + mask_at + 8),
		/* basetime[CLOCK_MONOTONIC], after basetime[CLOCK_REALTIME] */
		.base = (const volatile uint64_t *)(page + mask_at + 16 + 16),
	};
	int checked = 0;

	if (*(const volatile int32_t *)(page + 4) != VDSO_CLOCKMODE_TSC ||
	    *(const volatile uint64_t *)(page + mask_at) != UINT64_MAX || !vc.mult_shift[0] ||
	    !vc.mult_shift[1] || vc.mult_shift[1] > 32)
		return false;
	for (int tries = 0; checked < CHECKS && tries < 4 * CHECKS; tries++) {
		uint64_t before, ns, after;

		before = optrace_now_ns();
		if (!optrace_vclock_convert(&vc, ordered_tsc(), &ns))
			continue; /* the page was being written */
		_mm_lfence();
		after = optrace_now_ns();
		if (ns < before || ns > after)
			return false;
		checked++;
	}
	if (checked < CHECKS)
		return false;
	optrace_vclock = vc;
	return true;
}

__attribute__((constructor)) static void choose_clock(void)
{
	const char *choice = getenv("OPTRACE_CLOCK");
	const unsigned char *page;

	optrace_vclock.seq = NULL;
	if ((choice && !strcmp(choice, "vdso")) || !tsc_is_the_clock())
		return;
	page = vvar_page();
	/* the page's start (6.13 on), or 128 bytes in (x86's vvar page before) */
	for (size_t at = 0; page && at <= 128; at += 128)
		if (layout_serves(page + at, true) || layout_serves(page + at, false))
			return;
}
#endif
