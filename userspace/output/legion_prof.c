// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Legion Prof binary log writer. The layouts and the reader's checks are in
 * shared/legion/FORMAT.md; section numbers below refer to it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "common/idmap.h"
#include "common/utf8.h"
#include "output/json.h"
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

/*
 * The preamble Legion 25.06 writes (x86-64 sizes), byte for byte: the reader
 * maps names to ids from it and ignores the field lists (§1.1). Writing all
 * of it also satisfies the 24.09 reader, which wanted every name declared.
 * "since" marks the line 1007 files must not have (§3.2).
 */
static const char preamble_first_line[] = "FileType: BinaryLegionProf v: 1.0\n";
static const struct preamble_line {
	const char *text;
	unsigned int since;
} preamble_lines[] = {
	{ "MapperName {id:1, mapper_id:MapperID:4, mapper_proc:ProcID:8, name:string:-1}\n", 0 },
	{ "MapperCallDesc {id:2, kind:unsigned:4, name:string:-1}\n", 0 },
	{ "RuntimeCallDesc {id:3, kind:unsigned:4, name:string:-1}\n", 0 },
	{ "MetaDesc {id:4, kind:unsigned:4, message:bool:1, ordered_vc:bool:1, name:string:-1}\n",
	  0 },
	{ "OpDesc {id:5, kind:unsigned:4, name:string:-1}\n", 0 },
	{ "ProcDesc {id:6, proc_id:ProcID:8, kind:ProcKind:4, uuid_size:uuid_size:4, "
	  "cuda_device_uuid:uuid:1}\n",
	  0 },
	{ "MaxDimDesc {id:8, max_dim:maxdim:4}\n", 0 },
	{ "RuntimeConfig {id:9, debug:bool:1, spy:bool:1, gc:bool:1, inorder:bool:1, "
	  "safe_mapper:bool:1, safe_runtime:bool:1, safe_ctrlrepl:bool:1, part_checks:bool:1, "
	  "bounds_checks:bool:1, resilient:bool:1}\n",
	  0 },
	{ "MachineDesc {id:10, node_id:unsigned:4, num_nodes:unsigned:4, version:unsigned:4, "
	  "hostname:string:-1, host_id:unsigned long long:8, process_id:unsigned:4}\n",
	  0 },
	{ "CalibrationErr {id:61, calibration_err:long long:8}\n", 0 },
	{ "ZeroTime {id:60, zero_time:long long:8}\n", 0 },
	{ "Provenance {id:62, provenance:unsigned long long:8, prov:string:-1}\n", 0 },
	{ "MemDesc {id:7, mem_id:MemID:8, kind:MemKind:4, capacity:unsigned long long:8}\n", 0 },
	{ "ProcMDesc {id:30, proc_id:ProcID:8, mem_id:MemID:8, bandwidth:unsigned:4, "
	  "latency:unsigned:4}\n",
	  0 },
	{ "IndexSpacePointDesc {id:31, unique_id:IDType:8, dim:unsigned:4, rem:point:8}\n", 0 },
	{ "IndexSpaceRectDesc {id:32, unique_id:IDType:8, dim:unsigned:4, rem:array:8}\n", 0 },
	{ "IndexSpaceEmptyDesc {id:33, unique_id:IDType:8}\n", 0 },
	{ "FieldDesc {id:34, unique_id:UniqueID:8, field_id:unsigned:4, size:unsigned long long:8, "
	  "name:string:-1}\n",
	  0 },
	{ "FieldSpaceDesc {id:35, unique_id:UniqueID:8, name:string:-1}\n", 0 },
	{ "PartDesc {id:36, unique_id:UniqueID:8, name:string:-1}\n", 0 },
	{ "IndexSpaceDesc {id:38, unique_id:UniqueID:8, name:string:-1}\n", 0 },
	{ "IndexSubSpaceDesc {id:39, parent_id:UniqueID:8, unique_id:UniqueID:8}\n", 0 },
	{ "IndexPartitionDesc {id:37, parent_id:UniqueID:8, unique_id:UniqueID:8, disjoint:bool:1, "
	  "point0:unsigned long long:8}\n",
	  0 },
	{ "IndexSpaceSizeDesc {id:45, unique_id:UniqueID:8, dense_size:unsigned long long:8, "
	  "sparse_size:unsigned long long:8, is_sparse:bool:1}\n",
	  0 },
	{ "LogicalRegionDesc {id:40, ispace_id:IDType:8, fspace_id:unsigned:4, tree_id:unsigned:4, "
	  "name:string:-1}\n",
	  0 },
	{ "PhysicalInstRegionDesc {id:41, inst_uid:unsigned long long:8, ispace_id:IDType:8, "
	  "fspace_id:unsigned:4, tree_id:unsigned:4}\n",
	  0 },
	{ "PhysicalInstLayoutDesc {id:42, inst_uid:unsigned long long:8, field_id:unsigned:4, "
	  "fspace_id:unsigned:4, has_align:bool:1, eqk:unsigned:4, align_desc:unsigned:4}\n",
	  0 },
	{ "PhysicalInstDimOrderDesc {id:43, inst_uid:unsigned long long:8, dim:unsigned:4, "
	  "dim_kind:unsigned:4}\n",
	  0 },
	{ "PhysicalInstanceUsage {id:44, inst_uid:unsigned long long:8, op_id:UniqueID:8, "
	  "index_id:unsigned:4, field_id:unsigned:4}\n",
	  0 },
	{ "TaskKind {id:11, task_id:TaskID:4, name:string:-1, overwrite:bool:1}\n", 0 },
	{ "TaskVariant {id:12, task_id:TaskID:4, variant_id:VariantID:4, name:string:-1}\n", 0 },
	{ "OperationInstance {id:13, op_id:UniqueID:8, parent_id:UniqueID:8, kind:unsigned:4, "
	  "provenance:unsigned long long:8}\n",
	  0 },
	{ "MultiTask {id:14, op_id:UniqueID:8, task_id:TaskID:4}\n", 0 },
	{ "SliceOwner {id:15, parent_id:UniqueID:8, op_id:UniqueID:8}\n", 0 },
	{ "TaskWaitInfo {id:16, op_id:UniqueID:8, task_id:TaskID:4, variant_id:VariantID:4, "
	  "wait_start:timestamp_t:8, wait_ready:timestamp_t:8, wait_end:timestamp_t:8, "
	  "wait_event:unsigned long long:8}\n",
	  0 },
	{ "MetaWaitInfo {id:17, op_id:UniqueID:8, lg_id:unsigned:4, wait_start:timestamp_t:8, "
	  "wait_ready:timestamp_t:8, wait_end:timestamp_t:8, wait_event:unsigned long long:8}\n",
	  0 },
	{ "TaskInfo {id:18, op_id:UniqueID:8, task_id:TaskID:4, variant_id:VariantID:4, "
	  "proc_id:ProcID:8, create:timestamp_t:8, ready:timestamp_t:8, start:timestamp_t:8, "
	  "stop:timestamp_t:8, creator:unsigned long long:8, critical:unsigned long long:8, "
	  "fevent:unsigned long long:8}\n",
	  0 },
	{ "ImplicitTaskInfo {id:28, op_id:UniqueID:8, task_id:TaskID:4, variant_id:VariantID:4, "
	  "proc_id:ProcID:8, create:timestamp_t:8, ready:timestamp_t:8, start:timestamp_t:8, "
	  "stop:timestamp_t:8, creator:unsigned long long:8, critical:unsigned long long:8, "
	  "fevent:unsigned long long:8}\n",
	  0 },
	{ "GPUTaskInfo {id:29, op_id:UniqueID:8, task_id:TaskID:4, variant_id:VariantID:4, "
	  "proc_id:ProcID:8, create:timestamp_t:8, ready:timestamp_t:8, start:timestamp_t:8, "
	  "stop:timestamp_t:8, gpu_start:timestamp_t:8, gpu_stop:timestamp_t:8, creator:unsigned "
	  "long long:8, critical:unsigned long long:8, fevent:unsigned long long:8}\n",
	  0 },
	{ "MetaInfo {id:19, op_id:UniqueID:8, lg_id:unsigned:4, proc_id:ProcID:8, "
	  "create:timestamp_t:8, ready:timestamp_t:8, start:timestamp_t:8, stop:timestamp_t:8, "
	  "creator:unsigned long long:8, critical:unsigned long long:8, fevent:unsigned long "
	  "long:8}\n",
	  0 },
	{ "MessageInfo {id:24, op_id:UniqueID:8, lg_id:unsigned:4, proc_id:ProcID:8, "
	  "spawn:timestamp_t:8, create:timestamp_t:8, ready:timestamp_t:8, start:timestamp_t:8, "
	  "stop:timestamp_t:8, creator:unsigned long long:8, critical:unsigned long long:8, "
	  "fevent:unsigned long long:8}\n",
	  0 },
	{ "CopyInfo {id:20, op_id:UniqueID:8, size:unsigned long long:8, create:timestamp_t:8, "
	  "ready:timestamp_t:8, start:timestamp_t:8, stop:timestamp_t:8, creator:unsigned long "
	  "long:8, critical:unsigned long long:8, fevent:unsigned long long:8, "
	  "collective:unsigned:4}\n",
	  0 },
	{ "CopyInstInfo {id:47, src:MemID:8, dst:MemID:8, src_fid:unsigned:4, dst_fid:unsigned:4, "
	  "src_inst:unsigned long long:8, dst_inst:unsigned long long:8, fevent:unsigned long "
	  "long:8, num_hops:unsigned:4, indirect:bool:1}\n",
	  0 },
	{ "FillInfo {id:21, op_id:UniqueID:8, size:unsigned long long:8, create:timestamp_t:8, "
	  "ready:timestamp_t:8, start:timestamp_t:8, stop:timestamp_t:8, creator:unsigned long "
	  "long:8, critical:unsigned long long:8, fevent:unsigned long long:8}\n",
	  0 },
	{ "FillInstInfo {id:48, dst:MemID:8, fid:unsigned:4, dst_inst:unsigned long long:8, "
	  "fevent:unsigned long long:8}\n",
	  0 },
	{ "InstTimelineInfo {id:22, inst_uid:unsigned long long:8, inst_id:InstID:8, "
	  "mem_id:MemID:8, size:unsigned long long:8, op_id:UniqueID:8, create:timestamp_t:8, "
	  "ready:timestamp_t:8, destroy:timestamp_t:8, creator:unsigned long long:8}\n",
	  0 },
	{ "PartitionInfo {id:23, op_id:UniqueID:8, part_op:DepPartOpKind:4, create:timestamp_t:8, "
	  "ready:timestamp_t:8, start:timestamp_t:8, stop:timestamp_t:8, creator:unsigned long "
	  "long:8, critical:unsigned long long:8, fevent:unsigned long long:8}\n",
	  0 },
	{ "MapperCallInfo {id:25, mapper_id:MapperID:4, mapper_proc:ProcID:8, "
	  "kind:MappingCallKind:4, op_id:UniqueID:8, start:timestamp_t:8, stop:timestamp_t:8, "
	  "proc_id:ProcID:8, fevent:unsigned long long:8}\n",
	  0 },
	{ "RuntimeCallInfo {id:26, kind:RuntimeCallKind:4, start:timestamp_t:8, "
	  "stop:timestamp_t:8, proc_id:ProcID:8, fevent:unsigned long long:8}\n",
	  0 },
	{ "ApplicationCallInfo {id:27, provenance:unsigned long long:8, start:timestamp_t:8, "
	  "stop:timestamp_t:8, proc_id:ProcID:8, fevent:unsigned long long:8}\n",
	  0 },
	{ "BacktraceDesc {id:49, backtrace_id:unsigned long long:8, backtrace:string:-1}\n", 0 },
	{ "EventWaitInfo {id:50, proc_id:ProcID:8, fevent:unsigned long long:8, "
	  "wait_event:unsigned long long:8, backtrace_id:unsigned long long:8}\n",
	  0 },
	{ "EventMergerInfo {id:51, result:unsigned long long:8, fevent:unsigned long long:8, "
	  "performed:timestamp_t:8, pre0:unsigned long long:8, pre1:unsigned long long:8, "
	  "pre2:unsigned long long:8, pre3:unsigned long long:8}\n",
	  0 },
	{ "EventTriggerInfo {id:52, result:unsigned long long:8, fevent:unsigned long long:8, "
	  "precondition:unsigned long long:8, performed:timestamp_t:8}\n",
	  0 },
	{ "EventPoisonInfo {id:53, result:unsigned long long:8, fevent:unsigned long long:8, "
	  "performed:timestamp_t:8}\n",
	  0 },
	{ "BarrierArrivalInfo {id:54, result:unsigned long long:8, fevent:unsigned long long:8, "
	  "precondition:unsigned long long:8, performed:timestamp_t:8}\n",
	  0 },
	{ "ReservationAcquireInfo {id:55, result:unsigned long long:8, fevent:unsigned long "
	  "long:8, precondition:unsigned long long:8, performed:timestamp_t:8, "
	  "reservation:unsigned long long:8}\n",
	  0 },
	{ "InstanceReadyInfo {id:56, result:unsigned long long:8, precondition:unsigned long "
	  "long:8, inst_uid:unsigned long long:8, performed:timestamp_t:8}\n",
	  0 },
	{ "InstanceRedistrictInfo {id:57, result:unsigned long long:8, precondition:unsigned long "
	  "long:8, previous:unsigned long long:8, next:unsigned long long:8, "
	  "performed:timestamp_t:8}\n",
	  1008 },
	{ "CompletionQueueInfo {id:58, result:unsigned long long:8, fevent:unsigned long long:8, "
	  "performed:timestamp_t:8, pre0:unsigned long long:8, pre1:unsigned long long:8, "
	  "pre2:unsigned long long:8, pre3:unsigned long long:8}\n",
	  0 },
	{ "ProfTaskInfo {id:59, proc_id:ProcID:8, op_id:UniqueID:8, start:timestamp_t:8, "
	  "stop:timestamp_t:8, creator:unsigned long long:8, fevent:unsigned long long:8, "
	  "completion:bool:1}\n",
	  0 },
};

#define ELLIPSIS "\xe2\x80\xa6" /* U+2026, marks a cut string */
#define ELLIPSIS_LEN 3
#define FULLWIDTH_DOLLAR "\xef\xbc\x84" /* U+FF04, for '$' */

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
	int fd;
	gzFile gz; /* NULL when raw */
	int error; /* the first I/O error, sticky */
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

/* ---- strings ------------------------------------------------------------ */

/* What the character at s becomes in a sanitised string; sets *consumed. */
static unsigned int sanitize_char(const unsigned char *s, unsigned int *consumed,
				  unsigned char *out)
{
	unsigned int n = utf8_sequence_length(s);

	*consumed = n ? n : 1;
	if (!n) {
		memcpy(out, UTF8_REPLACEMENT, UTF8_REPLACEMENT_LEN);
		return 3;
	}
	if ((n == 1 && (s[0] < 0x20 || s[0] == 0x7f)) || (n == 2 && s[0] == 0xc2 && s[1] < 0xa0)) {
		out[0] = ' '; /* C0, DEL and C1 controls */
		return 1;
	}
	if (n == 1 && s[0] == '$') {
		memcpy(out, FULLWIDTH_DOLLAR, 3);
		return 3;
	}
	memcpy(out, s, n);
	return n;
}

size_t legion_prof_sanitize(char *dst, size_t size, const char *src)
{
	const unsigned char *s = (const unsigned char *)(src ? src : "");
	size_t limit, length = 0, cut = 0;
	unsigned char piece[4];
	unsigned int n, consumed;

	if (!size)
		return 0;
	limit = size - 1 < LEGION_PROF_STRING_MAX ? size - 1 : LEGION_PROF_STRING_MAX;
	while (*s) {
		if (*s >= 0x20 && *s < 0x7f && *s != '$' && length < limit) {
			/* printable ASCII, the common case, kept as is */
			dst[length++] = (char)*s++;
			if (length + ELLIPSIS_LEN <= limit)
				cut = length;
			continue;
		}
		n = sanitize_char(s, &consumed, piece);
		if (length + n > limit) {
			/* too long: back to the last point where "…" still fits */
			if (limit >= ELLIPSIS_LEN) {
				memcpy(dst + cut, ELLIPSIS, ELLIPSIS_LEN);
				length = cut + ELLIPSIS_LEN;
			}
			break;
		}
		memcpy(dst + length, piece, n);
		length += n;
		s += consumed;
		if (length + ELLIPSIS_LEN <= limit)
			cut = length;
	}
	dst[length] = '\0';
	return length;
}

#define JSON_TEXT_MAX 1024
#define JSON_KEY_MAX 128
#define JSON_SIZE_MIN 64
/* Room a member needs to be worth writing: its punctuation and some text. */
#define JSON_MEMBER_MIN 48

struct text_out {
	char *buffer;
	size_t length;
	size_t limit; /* most bytes, without the NUL */
};

static void out_raw(struct text_out *out, const char *text)
{
	size_t n = strlen(text);

	memcpy(out->buffer + out->length, text, n);
	out->length += n;
	out->buffer[out->length] = '\0';
}

/* Appends "text" (sanitised to cap bytes, escaped), leaving reserve bytes free. */
static void out_json_string(struct text_out *out, const char *text, size_t cap, size_t reserve)
{
	char clean[JSON_TEXT_MAX + 1];
	size_t room = out->limit - out->length - reserve - 2;

	legion_prof_sanitize(clean, cap + 1, text);
	out_raw(out, "\"");
	out->length += json_escape_into(out->buffer + out->length, room + 1, clean);
	out_raw(out, "\"");
}

int legion_prof_provenance_json(char *dst, size_t size, const char *human,
				const struct legion_prof_kv *pairs, size_t count)
{
	struct text_out out = { dst, 0, LEGION_PROF_STRING_MAX };
	size_t i;

	if (size < JSON_SIZE_MIN)
		return -ENOSPC;
	if (size - 1 < out.limit)
		out.limit = size - 1;
	out_raw(&out, "[");
	out_json_string(&out, human, JSON_TEXT_MAX, strlen(", {}]"));
	out_raw(&out, ", {");
	for (i = 0; i < count; i++) {
		if (out.limit - out.length < JSON_MEMBER_MIN)
			break;
		if (i)
			out_raw(&out, ", ");
		/* the key may take half of what is left, the value the rest */
		out_json_string(&out, pairs[i].key, JSON_KEY_MAX,
				(out.limit - out.length) / 2 + strlen(": \"\"}]"));
		out_raw(&out, ": ");
		out_json_string(&out, pairs[i].value, JSON_TEXT_MAX, strlen("}]"));
	}
	out_raw(&out, "}]");
	return (int)out.length;
}

/* ---- id sets ------------------------------------------------------------ */

static struct claim_chunk **claim_set_find(struct claim_set *set, uint64_t number)
{
	uint64_t first = number - number % CHUNK_IDS;
	size_t low = 0, high = set->count, middle;

	while (low < high) {
		middle = low + (high - low) / 2;
		if (set->chunks[middle]->first < first)
			low = middle + 1;
		else
			high = middle;
	}
	if (low < set->count && set->chunks[low]->first == first)
		return &set->chunks[low];
	return NULL;
}

/* Hands out the next number; a new chunk starts every CHUNK_IDS numbers. */
static int claim_set_issue(struct claim_set *set)
{
	struct claim_chunk *chunk, **chunks;
	size_t capacity;

	if (set->issued % CHUNK_IDS == 0) {
		if (set->count == set->capacity) {
			capacity = set->capacity ? 2 * set->capacity : 16;
			chunks = realloc(set->chunks, capacity * sizeof(*chunks));
			if (!chunks)
				return -ENOMEM;
			set->chunks = chunks;
			set->capacity = capacity;
		}
		chunk = calloc(1, sizeof(*chunk));
		if (!chunk)
			return -ENOMEM;
		chunk->first = set->issued;
		set->chunks[set->count++] = chunk;
	}
	set->issued++;
	return 0;
}

/* Takes back the number just issued (when a sibling set could not issue it). */
static void claim_set_unissue(struct claim_set *set)
{
	set->issued--;
	if (set->issued % CHUNK_IDS == 0)
		free(set->chunks[--set->count]);
}

/* 0 if number was handed out and is unused, -EEXIST if used, else -EINVAL. */
static int claim_set_check(struct claim_set *set, uint64_t number)
{
	struct claim_chunk **chunk;
	uint64_t bit;

	if (number >= set->issued)
		return -EINVAL;
	chunk = claim_set_find(set, number);
	if (!chunk)
		return -EEXIST; /* its chunk was used up and dropped */
	bit = number - (*chunk)->first;
	return (*chunk)->bits[bit / 64] & (1ULL << bit % 64) ? -EEXIST : 0;
}

/* Marks a number that claim_set_check() accepted as used. */
static void claim_set_take(struct claim_set *set, uint64_t number)
{
	struct claim_chunk **chunk = claim_set_find(set, number);
	uint64_t bit = number - (*chunk)->first;
	size_t index = (size_t)(chunk - set->chunks);

	(*chunk)->bits[bit / 64] |= 1ULL << bit % 64;
	if (++(*chunk)->used < CHUNK_IDS)
		return;
	free(*chunk);
	memmove(chunk, chunk + 1, (set->count - index - 1) * sizeof(*chunk));
	set->count--;
}

static void claim_set_free(struct claim_set *set)
{
	size_t i;

	for (i = 0; i < set->count; i++)
		free(set->chunks[i]);
	free(set->chunks);
}

/* Sets of declared keys (task kinds, (task, variant) pairs, op and meta kinds). */
static bool key_set_has(const struct idmap *set, uint64_t key)
{
	return idmap_get(set, 0, key) != NULL;
}

static int key_set_add(struct idmap *set, uint64_t key)
{
	return key_set_has(set, key) ? 0 : idmap_put(set, 0, key, (void *)1);
}

/* ---- ids ---------------------------------------------------------------- */

uint64_t legion_prof_proc_id(uint32_t node, uint32_t index)
{
	return 0x1dULL << 56 | (uint64_t)(node & 0xffff) << 40 | (index & 0xfff);
}

uint64_t legion_prof_event_id(uint32_t node, uint64_t index, uint32_t generation)
{
	return 1ULL << 63 | (uint64_t)(node & 0xffff) << 47 | (index & EVENT_INDEXES) << 20 |
	       (generation & EVENT_GENERATIONS);
}

/* Op and provenance ids: node_id, node_id + num_nodes, ... (node 0 starts at num_nodes). */
static uint64_t strided_first(const struct legion_prof *prof)
{
	return prof->node_id ? prof->node_id : prof->num_nodes;
}

static uint64_t strided_id(const struct legion_prof *prof, uint64_t number)
{
	return strided_first(prof) + number * prof->num_nodes;
}

/* The number of a strided id, or -EINVAL if it is not one of this file's. */
static int strided_number(const struct legion_prof *prof, uint64_t id, uint64_t issued,
			  uint64_t *number)
{
	uint64_t first = strided_first(prof);

	if (id < first || (id - first) % prof->num_nodes)
		return -EINVAL;
	*number = (id - first) / prof->num_nodes;
	return *number < issued ? 0 : -EINVAL;
}

static int op_number(const struct legion_prof *prof, uint64_t op_id, uint64_t *number)
{
	return strided_number(prof, op_id, prof->op_runs.issued, number);
}

/* The number of an event this writer handed out, or -EINVAL. */
static int event_number(const struct legion_prof *prof, uint64_t event, uint64_t *number)
{
	uint64_t index = event >> 20 & EVENT_INDEXES, generation = event & EVENT_GENERATIONS;

	if (!(event >> 63) || (event >> 47 & 0xffff) != prof->node_id || !index || !generation)
		return -EINVAL;
	*number = (generation - 1) * EVENT_INDEXES + index - 1;
	return *number < prof->fevents.issued ? 0 : -EINVAL;
}

int legion_prof_new_op(struct legion_prof *prof, uint64_t *op_id)
{
	int err;

	if (prof->error)
		return prof->error;
	if (prof->op_runs.issued >= SEQUENCE_MAX)
		return -ERANGE;
	err = claim_set_issue(&prof->op_instances);
	if (err)
		return err;
	err = claim_set_issue(&prof->op_runs);
	if (err) {
		claim_set_unissue(&prof->op_instances);
		return err;
	}
	*op_id = strided_id(prof, prof->op_runs.issued - 1);
	return 0;
}

int legion_prof_new_event(struct legion_prof *prof, uint64_t *event)
{
	uint64_t number = prof->fevents.issued;
	int err;

	if (prof->error)
		return prof->error;
	if (number >= EVENT_INDEXES * EVENT_GENERATIONS)
		return -ERANGE;
	err = claim_set_issue(&prof->fevents);
	if (err)
		return err;
	*event = legion_prof_event_id(prof->node_id, number % EVENT_INDEXES + 1,
				      (uint32_t)(number / EVENT_INDEXES + 1));
	return 0;
}

/* 0 (none) or an event handed out here: what creator fields may hold. */
static int check_event_reference(const struct legion_prof *prof, uint64_t event)
{
	uint64_t number;

	return event ? event_number(prof, event, &number) : 0;
}

/* An fevent the record will own: given (handed out, unused) or 0 for a new one. */
static int check_fevent(struct legion_prof *prof, uint64_t fevent, uint64_t *number)
{
	int err;

	if (!fevent) {
		*number = UINT64_MAX; /* handed out by take_fevent() */
		return 0;
	}
	err = event_number(prof, fevent, number);
	return err ? err : claim_set_check(&prof->fevents, *number);
}

static int take_fevent(struct legion_prof *prof, uint64_t *fevent, uint64_t number)
{
	int err;

	if (number == UINT64_MAX) {
		err = legion_prof_new_event(prof, fevent);
		if (err)
			return err;
		number = prof->fevents.issued - 1;
	}
	claim_set_take(&prof->fevents, number);
	return 0;
}

/* The kind of a processor declared here, or 0. */
static int proc_kind(const struct legion_prof *prof, uint64_t proc_id)
{
	uint32_t index = proc_id & 0xfff;

	if (proc_id != legion_prof_proc_id(prof->node_id, index) || index >= prof->proc_count)
		return 0;
	return prof->proc_kinds[index];
}

/* ---- output ------------------------------------------------------------- */

static int drain(struct legion_prof *prof)
{
	size_t done = 0;
	ssize_t n;
	int errnum;

	if (prof->error)
		return prof->error;
	if (prof->gz && prof->length) {
		if (gzwrite(prof->gz, prof->buffer, (unsigned int)prof->length) <= 0) {
			gzerror(prof->gz, &errnum);
			prof->error = errnum == Z_ERRNO && errno ? -errno : -EIO;
		}
		done = prof->length;
	}
	while (done < prof->length && !prof->error) {
		n = write(prof->fd, prof->buffer + done, prof->length - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			prof->error = n < 0 ? -errno : -EIO;
		else
			done += (size_t)n;
	}
	prof->length = 0;
	return prof->error;
}

/* Room for one record at the end of the buffer, or NULL after an I/O error. */
static unsigned char *record_begin(struct legion_prof *prof, uint32_t id)
{
	unsigned char *p;

	if (prof->length + RECORD_MAX > OUTPUT_BUFFER_SIZE && drain(prof))
		return NULL;
	p = prof->buffer + prof->length;
	p[0] = id;
	p[1] = id >> 8;
	p[2] = id >> 16;
	p[3] = id >> 24;
	return p + 4;
}

static int record_end(struct legion_prof *prof, unsigned char *end)
{
	prof->length = (size_t)(end - prof->buffer);
	return 0;
}

static unsigned char *put_u8(unsigned char *p, uint8_t value)
{
	*p = value;
	return p + 1;
}

static unsigned char *put_u32(unsigned char *p, uint32_t value)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(value >> 8 * i);
	return p + 4;
}

static unsigned char *put_u64(unsigned char *p, uint64_t value)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(value >> 8 * i);
	return p + 8;
}

/* Timestamps: the writer's type is long long (§1.2), so never above INT64_MAX. */
static unsigned char *put_time(unsigned char *p, uint64_t ns)
{
	return put_u64(p, ns < TIME_MAX ? ns : TIME_MAX);
}

static unsigned char *put_string(unsigned char *p, const char *text)
{
	return p + legion_prof_sanitize((char *)p, LEGION_PROF_STRING_MAX + 1, text) + 1;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/*
 * create <= ready <= start <= stop (§2.8): start is kept, stop is raised to
 * it, ready and create are lowered. Times above INT64_MAX are cut first.
 */
static void order_times(uint64_t *create, uint64_t *ready, uint64_t *start, uint64_t *stop)
{
	*start = min_u64(*start, TIME_MAX);
	*stop = max_u64(min_u64(*stop, TIME_MAX), *start);
	*ready = min_u64(*ready, *start);
	*create = min_u64(*create, *ready);
}

/* ---- descriptors -------------------------------------------------------- */

static int write_preamble(struct legion_prof *prof)
{
	size_t i, n;

	for (i = 0; i <= sizeof(preamble_lines) / sizeof(preamble_lines[0]); i++) {
		const char *text = i ? preamble_lines[i - 1].text : preamble_first_line;

		if (i && preamble_lines[i - 1].since > prof->version)
			continue;
		n = strlen(text);
		if (prof->length + n + 1 > OUTPUT_BUFFER_SIZE && drain(prof))
			return prof->error;
		memcpy(prof->buffer + prof->length, text, n);
		prof->length += n;
	}
	prof->buffer[prof->length++] = '\n'; /* the empty line that ends it */
	return 0;
}

static int write_machine_desc(struct legion_prof *prof, const struct legion_prof_options *options)
{
	unsigned char *p = record_begin(prof, MACHINE_DESC_ID);

	if (!p)
		return prof->error;
	p = put_u32(p, prof->node_id);
	p = put_u32(p, prof->num_nodes);
	p = put_u32(p, prof->version);
	p = put_string(p, options->hostname);
	p = put_u64(p, options->host_id);
	p = put_u32(p, options->process_id);
	return record_end(prof, p);
}

static int write_zero_time(struct legion_prof *prof, int64_t zero_time_ns)
{
	unsigned char *p = record_begin(prof, ZERO_TIME_ID);

	if (!p)
		return prof->error;
	return record_end(prof, put_u64(p, (uint64_t)zero_time_ns));
}

int legion_prof_op_desc(struct legion_prof *prof, uint32_t kind, const char *name)
{
	unsigned char *p;
	int err;

	if (prof->error)
		return prof->error;
	err = key_set_add(&prof->op_kinds, kind);
	if (err)
		return err;
	p = record_begin(prof, OP_DESC_ID);
	if (!p)
		return prof->error;
	p = put_u32(p, kind);
	return record_end(prof, put_string(p, name));
}

int legion_prof_meta_desc(struct legion_prof *prof, uint32_t kind, const char *name)
{
	unsigned char *p;
	int err;

	if (prof->error)
		return prof->error;
	err = key_set_add(&prof->meta_kinds, kind);
	if (err)
		return err;
	p = record_begin(prof, META_DESC_ID);
	if (!p)
		return prof->error;
	p = put_u32(p, kind);
	p = put_u8(p, 0); /* message */
	p = put_u8(p, 0); /* ordered_vc */
	return record_end(prof, put_string(p, name));
}

int legion_prof_task_kind(struct legion_prof *prof, uint32_t task_id, const char *name)
{
	bool again = key_set_has(&prof->task_kinds, task_id);
	unsigned char *p;
	int err;

	if (prof->error)
		return prof->error;
	err = key_set_add(&prof->task_kinds, task_id);
	if (err)
		return err;
	p = record_begin(prof, TASK_KIND_ID);
	if (!p)
		return prof->error;
	p = put_u32(p, task_id);
	p = put_string(p, name);
	return record_end(prof, put_u8(p, again)); /* overwrite: a second name replaces */
}

static uint64_t variant_key(uint32_t task_id, uint32_t variant_id)
{
	return (uint64_t)task_id << 32 | variant_id;
}

int legion_prof_task_variant(struct legion_prof *prof, uint32_t task_id, uint32_t variant_id,
			     const char *name)
{
	unsigned char *p;
	int err;

	if (prof->error)
		return prof->error;
	err = key_set_add(&prof->task_variants, variant_key(task_id, variant_id));
	if (err)
		return err;
	p = record_begin(prof, TASK_VARIANT_ID);
	if (!p)
		return prof->error;
	p = put_u32(p, task_id);
	p = put_u32(p, variant_id);
	return record_end(prof, put_string(p, name));
}

/* Every (task, variant) used needs both records (§2.4): placeholders if undeclared. */
static int declare_task(struct legion_prof *prof, uint32_t task_id, uint32_t variant_id)
{
	char name[32];
	int err = 0;

	if (!key_set_has(&prof->task_kinds, task_id)) {
		snprintf(name, sizeof(name), "task %u", task_id);
		err = legion_prof_task_kind(prof, task_id, name);
	}
	if (!err && !key_set_has(&prof->task_variants, variant_key(task_id, variant_id))) {
		snprintf(name, sizeof(name), "variant %u", variant_id);
		err = legion_prof_task_variant(prof, task_id, variant_id, name);
	}
	return err;
}

static int declare_op_kind(struct legion_prof *prof, uint32_t kind)
{
	char name[32];

	if (key_set_has(&prof->op_kinds, kind))
		return 0;
	snprintf(name, sizeof(name), "operation kind %u", kind);
	return legion_prof_op_desc(prof, kind, name);
}

static int declare_meta_kind(struct legion_prof *prof, uint32_t kind)
{
	char name[32];

	if (key_set_has(&prof->meta_kinds, kind))
		return 0;
	snprintf(name, sizeof(name), "meta task %u", kind);
	return legion_prof_meta_desc(prof, kind, name);
}

int legion_prof_proc_desc(struct legion_prof *prof, enum legion_prof_proc_kind kind,
			  const uint8_t *cuda_uuid, uint64_t *proc_id)
{
	static const uint8_t no_uuid[16];
	unsigned char *p;

	if (prof->error)
		return prof->error;
	if (kind < LEGION_PROF_PROC_GPU || kind > LEGION_PROF_PROC_PYTHON)
		return -EINVAL; /* any other kind panics the reader (§3.4) */
	if (prof->proc_count >= LEGION_PROF_PROCS_MAX)
		return -ERANGE;
	p = record_begin(prof, PROC_DESC_ID);
	if (!p)
		return prof->error;
	*proc_id = legion_prof_proc_id(prof->node_id, prof->proc_count);
	prof->proc_kinds[prof->proc_count++] = (uint8_t)kind;
	p = put_u64(p, *proc_id);
	p = put_u32(p, (uint32_t)kind);
	p = put_u32(p, sizeof(no_uuid));
	memcpy(p, cuda_uuid ? cuda_uuid : no_uuid, sizeof(no_uuid));
	return record_end(prof, p + sizeof(no_uuid));
}

static uint64_t text_hash(const char *text)
{
	uint64_t hash = 0xcbf29ce484222325ULL; /* FNV-1a */

	while (*text)
		hash = (hash ^ (unsigned char)*text++) * 0x100000001b3ULL;
	return hash;
}

/* Remembers text's id so the next range with the same title reuses it. */
static void provenance_remember(struct legion_prof *prof, uint64_t hash, uint64_t id,
				const char *text)
{
	struct provenance_slot *slot = &prof->provenance_cache[hash % PROVENANCE_CACHE_SLOTS];
	char *copy = strdup(text);

	if (!copy)
		return; /* only a cache */
	free(slot->text);
	slot->hash = hash;
	slot->id = id;
	slot->text = copy;
}

int legion_prof_provenance(struct legion_prof *prof, const char *text, uint64_t *provenance)
{
	struct provenance_slot *slot;
	unsigned char *p;
	uint64_t hash;

	if (prof->error)
		return prof->error;
	legion_prof_sanitize(prof->text, sizeof(prof->text), text);
	hash = text_hash(prof->text);
	slot = &prof->provenance_cache[hash % PROVENANCE_CACHE_SLOTS];
	if (slot->text && slot->hash == hash && !strcmp(slot->text, prof->text)) {
		*provenance = slot->id;
		return 0;
	}
	if (prof->provenances_issued >= SEQUENCE_MAX)
		return -ERANGE;
	p = record_begin(prof, PROVENANCE_ID);
	if (!p)
		return prof->error;
	*provenance = strided_id(prof, prof->provenances_issued++);
	p = put_u64(p, *provenance);
	p = put_string(p, prof->text);
	provenance_remember(prof, hash, *provenance, prof->text);
	return record_end(prof, p);
}

/* ---- operations and runs ------------------------------------------------ */

int legion_prof_operation_instance(struct legion_prof *prof, uint64_t op_id, uint64_t parent_id,
				   uint32_t kind, uint64_t provenance)
{
	uint64_t number, parent_number, provenance_number;
	unsigned char *p;
	int err;

	if (prof->error)
		return prof->error;
	err = op_number(prof, op_id, &number);
	if (!err && parent_id != LEGION_PROF_NO_PARENT)
		err = op_number(prof, parent_id, &parent_number);
	if (!err && provenance)
		err = strided_number(prof, provenance, prof->provenances_issued,
				     &provenance_number);
	if (!err)
		err = claim_set_check(&prof->op_instances, number); /* a second one panics */
	if (!err)
		err = declare_op_kind(prof, kind);
	if (err)
		return err;
	p = record_begin(prof, OPERATION_INSTANCE_ID);
	if (!p)
		return prof->error;
	claim_set_take(&prof->op_instances, number);
	p = put_u64(p, op_id);
	p = put_u64(p, parent_id);
	p = put_u32(p, kind);
	return record_end(prof, put_u64(p, provenance));
}

/*
 * Checks what a task run refers to and declares its kinds. On success the
 * op and fevent numbers are ready for claim_set_take().
 */
static int check_task(struct legion_prof *prof, const struct legion_prof_task *task, bool gpu,
		      uint64_t *op, uint64_t *fevent)
{
	int kind = proc_kind(prof, task->proc_id), err;

	if (!kind || (gpu && kind != LEGION_PROF_PROC_GPU))
		return -EINVAL;
	err = op_number(prof, task->op_id, op);
	if (!err)
		err = check_event_reference(prof, task->creator);
	if (!err)
		err = claim_set_check(&prof->op_runs, *op);
	if (!err)
		err = check_fevent(prof, task->fevent, fevent);
	if (!err)
		err = declare_task(prof, task->task_id, task->variant_id);
	return err;
}

static int write_task_info(struct legion_prof *prof, const struct legion_prof_task *task)
{
	unsigned char *p = record_begin(prof, TASK_INFO_ID);

	if (!p)
		return prof->error;
	p = put_u64(p, task->op_id);
	p = put_u32(p, task->task_id);
	p = put_u32(p, task->variant_id);
	p = put_u64(p, task->proc_id);
	p = put_time(p, task->create);
	p = put_time(p, task->ready);
	p = put_time(p, task->start);
	p = put_time(p, task->stop);
	p = put_u64(p, task->creator);
	p = put_u64(p, 0); /* critical: no event graph */
	return record_end(prof, put_u64(p, task->fevent));
}

static int write_gpu_task_info(struct legion_prof *prof, const struct legion_prof_task *task)
{
	unsigned char *p = record_begin(prof, GPU_TASK_INFO_ID);

	if (!p)
		return prof->error;
	p = put_u64(p, task->op_id);
	p = put_u32(p, task->task_id);
	p = put_u32(p, task->variant_id);
	p = put_u64(p, task->proc_id);
	p = put_time(p, task->create);
	p = put_time(p, task->ready);
	p = put_time(p, task->start);
	p = put_time(p, task->stop);
	p = put_time(p, task->gpu_start);
	p = put_time(p, task->gpu_stop);
	p = put_u64(p, task->creator);
	p = put_u64(p, 0); /* critical */
	return record_end(prof, put_u64(p, task->fevent));
}

/* TaskWaitInfo, clamped into the task's run with start <= ready <= end. */
static int write_task_wait(struct legion_prof *prof, const struct legion_prof_task *task,
			   const struct legion_prof_wait *wait)
{
	uint64_t start = min_u64(max_u64(wait->start, task->start), task->stop);
	uint64_t ready = min_u64(max_u64(wait->ready, start), task->stop);
	uint64_t end = min_u64(max_u64(wait->end, ready), task->stop);
	uint64_t event = wait->event, number;
	unsigned char *p;
	int err;

	if (!event) {
		/* a fresh event, owned at once so it costs no memory */
		err = legion_prof_new_event(prof, &event);
		if (err)
			return err;
		event_number(prof, event, &number);
		claim_set_take(&prof->fevents, number);
	}
	p = record_begin(prof, TASK_WAIT_INFO_ID);
	if (!p)
		return prof->error;
	p = put_u64(p, task->op_id);
	p = put_u32(p, task->task_id);
	p = put_u32(p, task->variant_id);
	p = put_u64(p, start);
	p = put_u64(p, ready);
	p = put_u64(p, end);
	return record_end(prof, put_u64(p, event));
}

static int write_task(struct legion_prof *prof, struct legion_prof_task *task,
		      const struct legion_prof_wait *waits, size_t wait_count, bool gpu)
{
	uint64_t op, fevent;
	size_t i;
	int err;

	if (prof->error)
		return prof->error;
	if (wait_count && !waits)
		return -EINVAL;
	for (i = 0; i < wait_count; i++)
		if (check_event_reference(prof, waits[i].event))
			return -EINVAL;
	err = check_task(prof, task, gpu, &op, &fevent);
	if (!err)
		err = take_fevent(prof, &task->fevent, fevent);
	if (err)
		return err;
	claim_set_take(&prof->op_runs, op);
	order_times(&task->create, &task->ready, &task->start, &task->stop);
	if (gpu) {
		/* the reader computes gpu_stop - 1 when they are reversed: 0 underflows */
		task->gpu_start = min_u64(task->gpu_start, TIME_MAX);
		task->gpu_stop = max_u64(min_u64(task->gpu_stop, TIME_MAX), task->gpu_start);
		err = write_gpu_task_info(prof, task);
	} else {
		err = write_task_info(prof, task);
	}
	for (i = 0; !err && i < wait_count; i++)
		err = write_task_wait(prof, task, &waits[i]);
	return err;
}

int legion_prof_task_info(struct legion_prof *prof, struct legion_prof_task *task,
			  const struct legion_prof_wait *waits, size_t wait_count)
{
	return write_task(prof, task, waits, wait_count, false);
}

int legion_prof_gpu_task_info(struct legion_prof *prof, struct legion_prof_task *task,
			      const struct legion_prof_wait *waits, size_t wait_count)
{
	return write_task(prof, task, waits, wait_count, true);
}

int legion_prof_meta_info(struct legion_prof *prof, struct legion_prof_meta_task *meta)
{
	uint64_t op, fevent;
	unsigned char *p;
	int err;

	if (prof->error)
		return prof->error;
	if (!proc_kind(prof, meta->proc_id))
		return -EINVAL;
	err = op_number(prof, meta->op_id, &op);
	if (!err)
		err = check_event_reference(prof, meta->creator);
	if (!err)
		err = check_fevent(prof, meta->fevent, &fevent);
	if (!err)
		err = declare_meta_kind(prof, meta->kind);
	if (!err)
		err = take_fevent(prof, &meta->fevent, fevent);
	if (err)
		return err;
	order_times(&meta->create, &meta->ready, &meta->start, &meta->stop);
	p = record_begin(prof, META_INFO_ID);
	if (!p)
		return prof->error;
	p = put_u64(p, meta->op_id);
	p = put_u32(p, meta->kind);
	p = put_u64(p, meta->proc_id);
	p = put_u64(p, meta->create);
	p = put_u64(p, meta->ready);
	p = put_u64(p, meta->start);
	p = put_u64(p, meta->stop);
	p = put_u64(p, meta->creator);
	p = put_u64(p, 0); /* critical */
	return record_end(prof, put_u64(p, meta->fevent));
}

/* ---- spans and user ranges ---------------------------------------------- */

int legion_prof_span_begin(struct legion_prof *prof, struct legion_prof_task *task,
			   struct legion_prof_span **span)
{
	struct legion_prof_span *s;
	uint64_t op, fevent;
	int err;

	if (prof->error)
		return prof->error;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	err = check_task(prof, task, false, &op, &fevent);
	if (!err)
		err = take_fevent(prof, &task->fevent, fevent);
	if (err)
		goto cleanup;
	/* the op and fevent are the span's from now on */
	claim_set_take(&prof->op_runs, op);
	task->stop = task->start;
	order_times(&task->create, &task->ready, &task->start, &task->stop);
	s->prof = prof;
	s->task = *task;
	s->frames[0].start = task->start;
	s->frames[0].children_stop = task->start;
	s->next = prof->spans;
	if (prof->spans)
		prof->spans->prev = s;
	prof->spans = s;
	*span = s;
	return 0;

cleanup:
	free(s);
	return err;
}

int legion_prof_range_begin(struct legion_prof_span *span, uint64_t start)
{
	struct range_frame *parent = &span->frames[span->depth];

	if (span->prof->error)
		return span->prof->error;
	if (span->depth == SPAN_DEPTH_MAX || span->dropped) {
		span->dropped++;
		return -ERANGE;
	}
	/* no earlier than its parent began or its previous sibling ended */
	start = max_u64(min_u64(start, TIME_MAX), parent->children_stop);
	span->frames[++span->depth] = (struct range_frame){ start, start };
	return 0;
}

int legion_prof_range_end(struct legion_prof_span *span, const char *title, uint64_t stop)
{
	struct legion_prof *prof = span->prof;
	struct range_frame *frame;
	uint64_t provenance;
	unsigned char *p;
	int err;

	if (prof->error)
		return prof->error;
	if (span->dropped) {
		span->dropped--;
		return -ERANGE;
	}
	if (!span->depth)
		return -EINVAL; /* no open range */
	frame = &span->frames[span->depth--];
	/* no earlier than its children; its parent ends no earlier than it */
	stop = max_u64(min_u64(stop, TIME_MAX), frame->children_stop);
	span->frames[span->depth].children_stop = stop;
	/* the Provenance must come before the range (§2.6) */
	err = legion_prof_provenance(prof, title, &provenance);
	if (err)
		return err;
	p = record_begin(prof, APPLICATION_CALL_INFO_ID);
	if (!p)
		return prof->error;
	p = put_u64(p, provenance);
	p = put_u64(p, frame->start);
	p = put_u64(p, stop);
	p = put_u64(p, span->task.proc_id);
	return record_end(prof, put_u64(p, span->task.fevent));
}

int legion_prof_span_end(struct legion_prof_span *span, uint64_t stop)
{
	struct legion_prof *prof = span->prof;
	int err = 0, range_err;

	span->dropped = 0;
	while (span->depth && !prof->error) {
		range_err = legion_prof_range_end(span, "(unfinished)", 0);
		err = err ? err : range_err;
	}
	/* the ranges written need this TaskInfo, whatever failed: the reader looks it up */
	span->task.stop = max_u64(min_u64(stop, TIME_MAX), span->frames[0].children_stop);
	if (!prof->error)
		err = write_task_info(prof, &span->task) ?: err;
	if (span->prev)
		span->prev->next = span->next;
	else
		prof->spans = span->next;
	if (span->next)
		span->next->prev = span->prev;
	free(span);
	return prof->error ? prof->error : err;
}

/* ---- the file ----------------------------------------------------------- */

static int check_options(const struct legion_prof_options *options, uint32_t version,
			 uint32_t num_nodes)
{
	if (version != LEGION_PROF_VERSION && version != LEGION_PROF_VERSION_1007)
		return -EINVAL;
	if (options->node_id >= num_nodes || options->node_id > LEGION_PROF_NODE_MAX ||
	    num_nodes > LEGION_PROF_NODE_MAX + 1)
		return -EINVAL;
	return 0;
}

static void free_writer(struct legion_prof *prof)
{
	size_t i;

	while (prof->spans) {
		struct legion_prof_span *next = prof->spans->next;

		free(prof->spans);
		prof->spans = next;
	}
	if (prof->provenance_cache)
		for (i = 0; i < PROVENANCE_CACHE_SLOTS; i++)
			free(prof->provenance_cache[i].text);
	free(prof->provenance_cache);
	claim_set_free(&prof->op_instances);
	claim_set_free(&prof->op_runs);
	claim_set_free(&prof->fevents);
	idmap_free(&prof->task_kinds);
	idmap_free(&prof->task_variants);
	idmap_free(&prof->op_kinds);
	idmap_free(&prof->meta_kinds);
	free(prof->buffer);
	free(prof);
}

/*
 * zlib writes through a duplicate of the fd, so that a failed open can
 * close the stream and leave the caller's fd open. Level 1: profiles
 * compress well and the export's speed matters more.
 */
static int open_gzip(struct legion_prof *prof)
{
	int fd = fcntl(prof->fd, F_DUPFD_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	prof->gz = gzdopen(fd, "wb1");
	if (!prof->gz) {
		close(fd);
		return -ENOMEM;
	}
	gzbuffer(prof->gz, GZIP_BUFFER_SIZE);
	return 0;
}

/* The preamble and the records every file starts with (§2.14 steps 1-3). */
static int write_header(struct legion_prof *prof, const struct legion_prof_options *options)
{
	int err = write_preamble(prof);

	if (!err)
		err = write_machine_desc(prof, options);
	if (!err)
		err = write_zero_time(prof, options->zero_time_ns);
	if (!err)
		err = legion_prof_op_desc(prof, LEGION_PROF_OP_KIND_TASK, "Task");
	return err ? err : drain(prof);
}

int legion_prof_fdopen(struct legion_prof **out, int fd, const struct legion_prof_options *options)
{
	static const struct legion_prof_options defaults;
	struct legion_prof *prof;
	uint32_t version, num_nodes;
	int err;

	if (!options)
		options = &defaults;
	version = options->version ? options->version : LEGION_PROF_VERSION;
	num_nodes = options->num_nodes ? options->num_nodes : 1;
	err = check_options(options, version, num_nodes);
	if (err)
		return err;
	prof = calloc(1, sizeof(*prof));
	if (!prof)
		return -ENOMEM;
	prof->fd = fd;
	prof->version = version;
	prof->node_id = options->node_id;
	prof->num_nodes = num_nodes;
	prof->buffer = malloc(OUTPUT_BUFFER_SIZE);
	prof->provenance_cache = calloc(PROVENANCE_CACHE_SLOTS, sizeof(*prof->provenance_cache));
	if (!prof->buffer || !prof->provenance_cache) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (!options->raw) {
		err = open_gzip(prof);
		if (err)
			goto cleanup;
	}
	err = write_header(prof, options);
	if (err)
		goto cleanup;
	*out = prof;
	return 0;

cleanup:
	if (prof->gz)
		gzclose(prof->gz);
	free_writer(prof);
	return err;
}

int legion_prof_open(struct legion_prof **prof, const char *path,
		     const struct legion_prof_options *options)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int err;

	if (fd < 0)
		return -errno;
	err = legion_prof_fdopen(prof, fd, options);
	if (err)
		close(fd);
	return err;
}

int legion_prof_flush(struct legion_prof *prof)
{
	int errnum;

	if (drain(prof))
		return prof->error;
	if (prof->gz && gzflush(prof->gz, Z_FULL_FLUSH) != Z_OK) {
		gzerror(prof->gz, &errnum);
		prof->error = errnum == Z_ERRNO && errno ? -errno : -EIO;
	}
	return prof->error;
}

/* The colour generator panics with fewer than 2 colourable descriptors (§2.5). */
static int complete_descriptors(struct legion_prof *prof)
{
	size_t colourable = prof->task_variants.count + prof->op_kinds.count +
			    prof->meta_kinds.count + prof->provenances_issued;

	if (colourable >= 2)
		return 0;
	return legion_prof_op_desc(prof, 0, "Mapping"); /* Legion's kind 0 */
}

int legion_prof_close(struct legion_prof *prof)
{
	int err, errnum;

	if (!prof)
		return 0;
	while (prof->spans)
		legion_prof_span_end(prof->spans, 0);
	complete_descriptors(prof);
	err = drain(prof);
	if (prof->gz) {
		errnum = gzclose(prof->gz);
		if (!err && errnum != Z_OK)
			err = errnum == Z_ERRNO && errno ? -errno : -EIO;
	}
	if (close(prof->fd) && !err)
		err = -errno;
	free_writer(prof);
	return err;
}
