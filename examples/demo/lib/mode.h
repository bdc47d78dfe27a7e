/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Where an operation runs: eager, deferred, or (for fallbacks) inline or as a task. */
#ifndef DEMO_MODE_H
#define DEMO_MODE_H

#include <stdbool.h>

#include "work.h"

struct mode_choice {
	int mode;   /* enum optrace_mode */
	int reason; /* enum optrace_mode_reason */
};

/* cuPyNumeric's decision between an eager and a deferred array. */
struct mode_choice mode_decide(const struct work *w);

/* Whether a fallback runs as a HostReference task instead of inline. */
bool mode_fallback_as_task(const struct work *w);

/* A composite's mode from its helpers' (a mask over enum optrace_mode). */
int mode_of_helpers(unsigned int helper_modes);

#endif /* DEMO_MODE_H */
