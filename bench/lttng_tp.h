// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * LTTng-UST 2.13 tracepoint provider for bench/lttng_loop.c: the same two
 * events with the same arguments as optrace's op_begin and op_end probes.
 * Strings go in as pointers (hex integers), never copied, as optrace does.
 * Found through -Ibench: <lttng/tracepoint-event.h> includes it again.
 */
/* LTTng's macro language, laid out as its documentation does. */
/* clang-format off */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER optrace_lttng

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "lttng_tp.h"

#if !defined(OPTRACE_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define OPTRACE_LTTNG_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(optrace_lttng, op_begin,
	LTTNG_UST_TP_ARGS(uint64_t, op, uint64_t, parent, uint32_t, depth,
			  const char *, name, const char *, callsite),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, op, op)
		lttng_ust_field_integer(uint64_t, parent, parent)
		lttng_ust_field_integer(uint32_t, depth, depth)
		lttng_ust_field_integer_hex(uint64_t, name, (uintptr_t)name)
		lttng_ust_field_integer_hex(uint64_t, callsite, (uintptr_t)callsite)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(optrace_lttng, op_end,
	LTTNG_UST_TP_ARGS(uint64_t, op, int32_t, status),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, op, op)
		lttng_ust_field_integer(int32_t, status, status)
	)
)

/* clang-format on */
#endif /* OPTRACE_LTTNG_TP_H */

#include <lttng/tracepoint-event.h>
