/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the Perfetto export's files share: the field numbers of the subset
 * of Perfetto's published schema it writes, and its interning tables.
 *
 * The numbers are those of the .proto files under protos/perfetto/trace/ in
 * the Perfetto repository (github.com/google/perfetto), named beside each
 * group; tests/python/perfetto_subset.proto declares the same messages for
 * the tests to decode with.
 */
#ifndef OPTRACE_OUTPUT_PERFETTO_INTERNAL_H
#define OPTRACE_OUTPUT_PERFETTO_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output/perfetto.h"

/* trace.proto: message Trace. */
#define PF_TRACE_PACKET 1

/* trace_packet.proto: message TracePacket and its enum SequenceFlags. */
enum {
	PF_PACKET_TIMESTAMP = 8,
	PF_PACKET_SEQUENCE_ID = 10, /* trusted_packet_sequence_id */
	PF_PACKET_TRACK_EVENT = 11,
	PF_PACKET_INTERNED_DATA = 12,
	PF_PACKET_SEQUENCE_FLAGS = 13,
	PF_PACKET_TRACK_DESCRIPTOR = 60,
	PF_SEQ_INCREMENTAL_STATE_CLEARED = 1,
	PF_SEQ_NEEDS_INCREMENTAL_STATE = 2,
};

/* track_event/track_event.proto: message TrackEvent and its enum Type. */
enum {
	PF_EVENT_CATEGORY_IIDS = 3,
	PF_EVENT_DEBUG_ANNOTATIONS = 4,
	PF_EVENT_TYPE = 9,
	PF_EVENT_NAME_IID = 10,
	PF_EVENT_TRACK_UUID = 11,
	PF_EVENT_FLOW_IDS = 47,		    /* repeated fixed64 */
	PF_EVENT_TERMINATING_FLOW_IDS = 48, /* repeated fixed64 */
	PF_TYPE_SLICE_BEGIN = 1,
	PF_TYPE_SLICE_END = 2,
};

/* track_event/track_descriptor.proto: message TrackDescriptor. */
enum {
	PF_TRACK_UUID = 1,
	PF_TRACK_NAME = 2,
	PF_TRACK_PROCESS = 3,
	PF_TRACK_THREAD = 4,
	PF_TRACK_PARENT_UUID = 5,
};

/* track_event/process_descriptor.proto, thread_descriptor.proto. */
enum {
	PF_PROCESS_PID = 1,
	PF_PROCESS_NAME = 6, /* process_name */
	PF_THREAD_PID = 1,
	PF_THREAD_TID = 2,
	PF_THREAD_NAME = 5, /* thread_name */
};

/* track_event/debug_annotation.proto: message DebugAnnotation. */
enum {
	PF_ARG_NAME_IID = 1,
	PF_ARG_BOOL = 2,	/* bool_value */
	PF_ARG_UINT = 3,	/* uint_value */
	PF_ARG_ARRAY = 12,	/* array_values */
	PF_ARG_STRING_IID = 17, /* string_value_iid */
};

/*
 * interned_data/interned_data.proto: message InternedData. Each entry is an
 * EventCategory, EventName or DebugAnnotationName (track_event.proto,
 * debug_annotation.proto: iid = 1, name = 2) or an InternedString
 * (profiling/profile_common.proto: iid = 1, str = 2).
 */
enum {
	PF_INTERNED_CATEGORIES = 1,
	PF_INTERNED_EVENT_NAMES = 2,
	PF_INTERNED_ARG_NAMES = 3,
	PF_INTERNED_STRING_VALUES = 29, /* debug_annotation_string_values */
	PF_INTERNED_IID = 1,
	PF_INTERNED_NAME = 2,
};

/*
 * The interning tables (perfetto_strings.c): text's iid in table, added
 * (*added set) if it is new; 0 without memory.
 */
uint64_t perfetto_strings_intern(struct perfetto_strings *table, const char *text, bool *added);
/* Forgets every entry: iids start again at 1. */
void perfetto_strings_clear(struct perfetto_strings *table);
void perfetto_strings_free(struct perfetto_strings *table);

#endif /* OPTRACE_OUTPUT_PERFETTO_INTERNAL_H */
