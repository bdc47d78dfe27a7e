/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The optrace probe ABI: the values that travel in probe arguments.
 *
 * These numbers are part of ABI 1. A value is never renumbered or reused;
 * new values are appended before the __COUNT sentinel, and tracers print
 * values they do not know as "unknown".
 */
#ifndef OPTRACE_ABI_H
#define OPTRACE_ABI_H

#ifdef __cplusplus
extern "C" {
#endif

#define OPTRACE_ABI_VERSION 1

/* How an operation ran (op_mode, argument 2). */
enum optrace_mode {
	OPTRACE_MODE_EAGER = 0,	   /* computed at once on the calling thread */
	OPTRACE_MODE_DEFERRED = 1, /* split into tasks run by processors */
	OPTRACE_MODE_MIXED = 2,	   /* its helper operations ran in different modes */
	OPTRACE_MODE_FALLBACK = 3, /* a reference (host) implementation ran */
	OPTRACE_MODE__COUNT
};

/* Why the runtime chose that mode (op_mode, argument 3). */
enum optrace_mode_reason {
	OPTRACE_MODE_REASON_NONE = 0,
	OPTRACE_MODE_REASON_BELOW_THRESHOLD = 1, /* volume at or below the eager threshold */
	OPTRACE_MODE_REASON_ABOVE_THRESHOLD = 2, /* volume above the eager threshold */
	OPTRACE_MODE_REASON_FORCED = 3,		 /* forced by configuration */
	OPTRACE_MODE_REASON_EMPTY = 4,		 /* no elements: nothing to defer */
	OPTRACE_MODE_REASON_INPUTS_DEFERRED = 5, /* small, but an input is deferred */
	OPTRACE_MODE_REASON_HELPERS = 6,	 /* follows the helper operations it called */
	OPTRACE_MODE_REASON_FALLBACK = 7,	 /* see the op_fallback probe */
	OPTRACE_MODE_REASON__COUNT
};

/* Why a reference path ran (op_fallback, argument 2). */
enum optrace_fallback_reason {
	OPTRACE_FALLBACK_NONE = 0,
	OPTRACE_FALLBACK_UNIMPLEMENTED_API = 1,	    /* the runtime lacks the operation */
	OPTRACE_FALLBACK_UNSUPPORTED_ARGUMENTS = 2, /* it lacks these arguments */
	OPTRACE_FALLBACK_UNSUPPORTED_DTYPE = 3,	    /* it lacks this element type */
	OPTRACE_FALLBACK_NO_VARIANT = 4,	    /* no task variant for the target */
	OPTRACE_FALLBACK_OTHER = 5,
	OPTRACE_FALLBACK__COUNT
};

/* Which implementation of a task ran (task_begin, argument 3). */
enum optrace_variant {
	OPTRACE_VARIANT_CPU = 0,
	OPTRACE_VARIANT_OPENMP = 1,
	OPTRACE_VARIANT_GPU = 2,
	OPTRACE_VARIANT_HOST_REFERENCE = 3, /* the reference path, run as a task */
	OPTRACE_VARIANT__COUNT
};

/* What the caller blocked on (wait_begin and wait_end, argument 2). */
enum optrace_wait_kind {
	OPTRACE_WAIT_FUTURE = 0,     /* a scalar result */
	OPTRACE_WAIT_INLINE_MAP = 1, /* host access to a deferred array's data */
	OPTRACE_WAIT_FENCE = 2,	     /* all outstanding work */
	OPTRACE_WAIT_OTHER = 3,
	OPTRACE_WAIT__COUNT
};

/* How an operation or a task ended (op_end and task_end, argument 2). */
enum optrace_status { OPTRACE_STATUS_OK = 0, OPTRACE_STATUS_ERROR = 1, OPTRACE_STATUS__COUNT };

/*
 * Names as tracers print them: lower case, no spaces. Out-of-range values
 * give "unknown", so that a value from a newer runtime prints safely.
 */
const char *optrace_mode_name(int mode);
const char *optrace_mode_reason_name(int reason);
const char *optrace_fallback_reason_name(int reason);
const char *optrace_variant_name(int variant);
const char *optrace_wait_kind_name(int kind);
const char *optrace_status_name(int status);

#ifdef __cplusplus
}
#endif

#endif /* OPTRACE_ABI_H */
