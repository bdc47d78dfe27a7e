/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The core of the Legion Prof writer (legion_prof_core.c), which callers
 * must not use (they have output/legion_prof.h): the record ids, the limits,
 * the structs of the writer and its spans, the byte encoders every record
 * uses, the ids, the output buffer and the file. The encoders sit above it
 * and call only down: legion_preamble.c (what every file starts with),
 * legion_records.c (the other records), legion_spans.c (spans and their
 * user ranges); legion_prof_log.c opens and closes a log with all of them.
 * Section numbers refer to docs/legion-format.md.
 */
#ifndef OPTRACE_OUTPUT_LEGION_PROF_CORE_H
#define OPTRACE_OUTPUT_LEGION_PROF_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include "common/idmap.h"
#include "output/legion_prof.h"

/* Record ids: Legion's own numbering (legion_profiling_serializer.h). */
enum record_id {
	META_DESC_ID = 4,
	OP_DESC_ID = 5,
	PROC_DESC_ID = 6,
	MACHINE_DESC_ID = 10,
	TASK_KIND_ID = 11,
	TASK_VARIANT_ID = 12,
	OPERATION_INSTANCE_ID = 13,
	TASK_WAIT_INFO_ID = 16,
	TASK_INFO_ID = 18,
	META_INFO_ID = 19,
	APPLICATION_CALL_INFO_ID = 27,
	GPU_TASK_INFO_ID = 29,
	ZERO_TIME_ID = 60,
	PROVENANCE_ID = 62,
};

/* Event ids (§2.8): 1 << 63 | node << 47 | index << 20 | generation. */
#define EVENT_GENERATION_BITS 20
#define EVENT_INDEX_BITS 27
#define EVENT_INDEXES ((1ULL << EVENT_INDEX_BITS) - 1) /* 1 .. 2^27 - 1 */
#define EVENT_GENERATIONS ((1ULL << EVENT_GENERATION_BITS) - 1)
/* Op and provenance ids stay far below UINT64_MAX (the "none" op id). */
#define SEQUENCE_MAX (1ULL << 48)

#define OUTPUT_BUFFER_SIZE (64 * 1024)
#define GZIP_BUFFER_SIZE (128 * 1024)
/* The largest record: fixed fields plus one sanitised string. */
#define RECORD_MAX (128 + LEGION_PROF_STRING_MAX + 1)
#define SPAN_DEPTH_MAX 256
#define PROVENANCE_CACHE_SLOTS 1024
#define TIME_MAX ((uint64_t)INT64_MAX)

/*
 * Which of the ids handed out so far a record has used, for the ids that a
 * record may use once. Ids are numbered 0, 1, ... in the order they are
 * handed out; only chunks that still hold an unused id are kept, so memory
 * follows the ids outstanding, not the length of the profile.
 */
#define CHUNK_IDS 4096
struct claim_chunk {
	uint64_t first; /* number of bit 0 */
	uint32_t used;
	uint64_t bits[CHUNK_IDS / 64];
};

struct claim_set {
	struct claim_chunk **chunks; /* ascending by first */
	size_t count, capacity;
	uint64_t issued; /* numbers below this were handed out */
};

struct provenance_slot {
	uint64_t hash;
	uint64_t id;
	char *text;
};

struct range_frame {
	uint64_t start;
	uint64_t children_stop; /* where the last child ended (start before any) */
};

struct legion_prof_span {
	struct legion_prof *prof;
	struct legion_prof_span *next, *prev;
	struct legion_prof_task task;
	struct range_frame frames[SPAN_DEPTH_MAX + 1]; /* frames[0]: the task's run */
	unsigned int depth;			       /* open ranges */
	unsigned int dropped;			       /* ranges begun too deep, not yet ended */
};

struct legion_prof {
	int fd;			  /* -1 while released */
	int (*reopen)(void *ctx); /* the descriptor again, after legion_prof_release_fd() */
	void *reopen_ctx;
	z_stream z;		/* the gzip stream, when zbuffer is not NULL */
	unsigned char *zbuffer; /* what the stream gives out; NULL when raw */
	size_t zlength;		/* bytes in zbuffer not yet written */
	int error;		/* the first I/O error, sticky */
	uint32_t version, node_id, num_nodes;
	unsigned char *buffer;
	size_t length;
	uint64_t provenances_issued;
	struct claim_set op_instances; /* op ids with an OperationInstance */
	struct claim_set op_runs;      /* op ids with a task record */
	struct claim_set fevents;      /* events owned by a record */
	struct idmap task_kinds, task_variants, op_kinds, meta_kinds; /* sets: value 1 */
	uint8_t proc_kinds[LEGION_PROF_PROCS_MAX];
	uint32_t proc_count;
	struct provenance_slot *provenance_cache;
	struct legion_prof_span *spans; /* open */
	char text[LEGION_PROF_STRING_MAX + 1];
};

/* ---- encoding ---------------------------------------------------------- */

static inline unsigned char *put_u8(unsigned char *p, uint8_t value)
{
	*p = value;
	return p + 1;
}

static inline unsigned char *put_u32(unsigned char *p, uint32_t value)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(value >> 8 * i);
	return p + 4;
}

static inline unsigned char *put_u64(unsigned char *p, uint64_t value)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(value >> 8 * i);
	return p + 8;
}

/* Timestamps: the writer's type is long long (§1.2), so never above INT64_MAX. */
static inline unsigned char *put_time(unsigned char *p, uint64_t ns)
{
	return put_u64(p, ns < TIME_MAX ? ns : TIME_MAX);
}

static inline unsigned char *put_string(unsigned char *p, const char *text)
{
	return p + legion_prof_sanitize((char *)p, LEGION_PROF_STRING_MAX + 1, text) + 1;
}

/* A string the writer built clean itself (at most LEGION_PROF_STRING_MAX bytes). */
static inline unsigned char *put_clean_string(unsigned char *p, const char *text)
{
	size_t n = strnlen(text, LEGION_PROF_STRING_MAX);

	memcpy(p, text, n);
	p[n] = '\0';
	return p + n + 1;
}

static inline uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static inline uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* The ids handed out and the claims records make on them. */
int legion_prof_claim_set_check(struct claim_set *set, uint64_t number);
void legion_prof_claim_set_take(struct claim_set *set, uint64_t number);
bool legion_prof_key_set_has(const struct idmap *set, uint64_t key);
int legion_prof_key_set_add(struct idmap *set, uint64_t key);
uint64_t legion_prof_strided_id(const struct legion_prof *prof, uint64_t number);
int legion_prof_strided_number(const struct legion_prof *prof, uint64_t id, uint64_t issued,
			       uint64_t *number);
int legion_prof_op_number(const struct legion_prof *prof, uint64_t op_id, uint64_t *number);
int legion_prof_event_number(const struct legion_prof *prof, uint64_t event, uint64_t *number);
int legion_prof_check_event_reference(const struct legion_prof *prof, uint64_t event);
int legion_prof_check_fevent(struct legion_prof *prof, uint64_t fevent, uint64_t *number);
int legion_prof_take_fevent(struct legion_prof *prof, uint64_t *fevent, uint64_t number);
int legion_prof_add_proc(struct legion_prof *prof, enum legion_prof_proc_kind kind,
			 uint64_t *proc_id);
int legion_prof_proc_kind_of(const struct legion_prof *prof, uint64_t proc_id);

/* The output buffer: records are begun, filled with put_*() and ended. */
int legion_prof_drain(struct legion_prof *prof);
unsigned char *legion_prof_record_begin(struct legion_prof *prof, uint32_t id);
int legion_prof_record_end(struct legion_prof *prof, unsigned char *end);
/* Bytes as they are (the text preamble), at most OUTPUT_BUFFER_SIZE. */
int legion_prof_put_bytes(struct legion_prof *prof, const void *bytes, size_t size);

/*
 * A span's state: linked into the writer's open spans with its task; the
 * innermost range popped, its start and its stop (in: the one asked for,
 * out: no earlier than its children); unlinked and freed.
 */
int legion_prof_span_link(struct legion_prof *prof, const struct legion_prof_task *task,
			  struct legion_prof_span **span);
int legion_prof_range_pop(struct legion_prof_span *span, uint64_t *start, uint64_t *stop);
void legion_prof_span_unlink(struct legion_prof_span *span);

/*
 * The file: a writer on fd with options checked (and its gzip stream),
 * nothing written yet; discarded on a failed open, leaving fd open; closed
 * (drained, fd closed, freed), the first error.
 */
int legion_prof_core_open(struct legion_prof **prof, int fd,
			  const struct legion_prof_options *options);
void legion_prof_core_discard(struct legion_prof *prof);
int legion_prof_core_close(struct legion_prof *prof);

#endif /* OPTRACE_OUTPUT_LEGION_PROF_CORE_H */
