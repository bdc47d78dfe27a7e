// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The mode decision, in cuPyNumeric's order: a forced mode first; nothing
 * to compute stays eager; an input that is deferred already makes the
 * operation deferred however small (moving its data back to the host would
 * cost more); otherwise the volume against the eager threshold.
 */
#include <optrace/abi.h>

#include "config.h"
#include "mode.h"

static bool work_touches_deferred(const struct work *w)
{
	unsigned int i;

	for (i = 0; i < 2; i++)
		if (w->in[i] && w->in[i]->store->deferred)
			return true;
	return w->out->store->deferred;
}

struct mode_choice mode_decide(const struct work *w)
{
	size_t volume = work_volume(w);

	if (runtime_config.force == FORCE_EAGER)
		return (struct mode_choice){ OPTRACE_MODE_EAGER, OPTRACE_MODE_REASON_FORCED };
	if (runtime_config.force == FORCE_DEFERRED)
		return (struct mode_choice){ OPTRACE_MODE_DEFERRED, OPTRACE_MODE_REASON_FORCED };
	if (volume == 0)
		return (struct mode_choice){ OPTRACE_MODE_EAGER, OPTRACE_MODE_REASON_EMPTY };
	if (work_touches_deferred(w))
		return (struct mode_choice){ OPTRACE_MODE_DEFERRED,
					     OPTRACE_MODE_REASON_INPUTS_DEFERRED };
	if (volume <= runtime_config.max_eager_volume)
		return (struct mode_choice){ OPTRACE_MODE_EAGER,
					     OPTRACE_MODE_REASON_BELOW_THRESHOLD };
	return (struct mode_choice){ OPTRACE_MODE_DEFERRED, OPTRACE_MODE_REASON_ABOVE_THRESHOLD };
}

bool mode_fallback_as_task(const struct work *w)
{
	if (runtime_config.force != FORCE_NONE)
		return runtime_config.force == FORCE_DEFERRED;
	return work_volume(w) > runtime_config.max_eager_volume;
}

int mode_of_helpers(unsigned int helper_modes)
{
	int mode;

	for (mode = 0; mode < OPTRACE_MODE__COUNT; mode++)
		if (helper_modes == 1u << mode)
			return mode;
	/* No helper ran (cannot happen: each composite calls one) counts as eager. */
	return helper_modes ? OPTRACE_MODE_MIXED : OPTRACE_MODE_EAGER;
}
