// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Names of the probe ABI's values; shared by liboptrace and the tracer. */
#include <optrace/abi.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char *name_of(const char *const *names, unsigned int count, int value)
{
	if (value < 0 || (unsigned int)value >= count || !names[value])
		return "unknown";
	return names[value];
}

static const char *const mode_names[] = {
	[OPTRACE_MODE_EAGER] = "eager",
	[OPTRACE_MODE_DEFERRED] = "deferred",
	[OPTRACE_MODE_MIXED] = "mixed",
	[OPTRACE_MODE_FALLBACK] = "fallback",
};

static const char *const mode_reason_names[] = {
	[OPTRACE_MODE_REASON_NONE] = "none",
	[OPTRACE_MODE_REASON_BELOW_THRESHOLD] = "below_threshold",
	[OPTRACE_MODE_REASON_ABOVE_THRESHOLD] = "above_threshold",
	[OPTRACE_MODE_REASON_FORCED] = "forced",
	[OPTRACE_MODE_REASON_EMPTY] = "empty",
	[OPTRACE_MODE_REASON_INPUTS_DEFERRED] = "inputs_deferred",
	[OPTRACE_MODE_REASON_HELPERS] = "helpers",
	[OPTRACE_MODE_REASON_FALLBACK] = "fallback",
};

static const char *const fallback_reason_names[] = {
	[OPTRACE_FALLBACK_NONE] = "none",
	[OPTRACE_FALLBACK_UNIMPLEMENTED_API] = "unimplemented_api",
	[OPTRACE_FALLBACK_UNSUPPORTED_ARGUMENTS] = "unsupported_arguments",
	[OPTRACE_FALLBACK_UNSUPPORTED_DTYPE] = "unsupported_dtype",
	[OPTRACE_FALLBACK_NO_VARIANT] = "no_variant",
	[OPTRACE_FALLBACK_OTHER] = "other",
};

/* Legion Prof's variant names for the same kinds of processor. */
static const char *const variant_names[] = {
	[OPTRACE_VARIANT_CPU] = "cpu",	     [OPTRACE_VARIANT_OPENMP] = "omp",
	[OPTRACE_VARIANT_GPU] = "gpu",	     [OPTRACE_VARIANT_HOST_REFERENCE] = "fallback",
	[OPTRACE_VARIANT_OPENCL] = "opencl",
};

static const char *const wait_kind_names[] = {
	[OPTRACE_WAIT_FUTURE] = "future",
	[OPTRACE_WAIT_INLINE_MAP] = "inline_map",
	[OPTRACE_WAIT_FENCE] = "fence",
	[OPTRACE_WAIT_OTHER] = "other",
};

static const char *const status_names[] = {
	[OPTRACE_STATUS_OK] = "ok",
	[OPTRACE_STATUS_ERROR] = "error",
};

_Static_assert(ARRAY_SIZE(mode_names) == OPTRACE_MODE__COUNT, "mode names");
_Static_assert(ARRAY_SIZE(mode_reason_names) == OPTRACE_MODE_REASON__COUNT, "reason names");
_Static_assert(ARRAY_SIZE(fallback_reason_names) == OPTRACE_FALLBACK__COUNT, "fallback names");
_Static_assert(ARRAY_SIZE(variant_names) == OPTRACE_VARIANT__COUNT, "variant names");
_Static_assert(ARRAY_SIZE(wait_kind_names) == OPTRACE_WAIT__COUNT, "wait kind names");
_Static_assert(ARRAY_SIZE(status_names) == OPTRACE_STATUS__COUNT, "status names");

const char *optrace_mode_name(int mode)
{
	return name_of(mode_names, ARRAY_SIZE(mode_names), mode);
}

const char *optrace_mode_reason_name(int reason)
{
	return name_of(mode_reason_names, ARRAY_SIZE(mode_reason_names), reason);
}

const char *optrace_fallback_reason_name(int reason)
{
	return name_of(fallback_reason_names, ARRAY_SIZE(fallback_reason_names), reason);
}

const char *optrace_variant_name(int variant)
{
	return name_of(variant_names, ARRAY_SIZE(variant_names), variant);
}

const char *optrace_wait_kind_name(int kind)
{
	return name_of(wait_kind_names, ARRAY_SIZE(wait_kind_names), kind);
}

const char *optrace_status_name(int status)
{
	return name_of(status_names, ARRAY_SIZE(status_names), status);
}
