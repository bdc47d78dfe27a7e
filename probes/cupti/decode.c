// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CUPTI activity records into optrace_gpu records.
 *
 * The layouts are the CUDA 13 ones (CUpti_ActivityKernel10, Memcpy6,
 * Memset4, API, Synchronization2); the fields read are all in their common
 * prefix with earlier versions of the same offsets, and the collector
 * refuses a CUPTI older than the headers it was built with.
 */
#include <stdlib.h>
#include <string.h>

#include "decode.h"

#define NAMES_MIN_SLOTS 64

/* CUPTI marks a time it could not take with 0 or INT64_MIN (Legion #1800). */
static bool time_bad(uint64_t t)
{
	return t == 0 || t == (uint64_t)INT64_MIN;
}

struct span {
	uint64_t start;
	uint64_t end;
	uint32_t flags;
};

/* Times usable as they are, or both 0 and flagged. */
static struct span span_of(struct gpu_decoder *decoder, uint64_t start, uint64_t end)
{
	struct span span = { start, end, 0 };

	if (time_bad(start) || time_bad(end) || end < start) {
		span.start = span.end = 0;
		span.flags = OPTRACE_GPU_F_TIME_INVALID;
		decoder->time_invalid++;
	}
	return span;
}

static void set_head(struct optrace_gpu_head *head, int type, size_t size, uint32_t flags)
{
	head->type = type;
	head->version = OPTRACE_GPU_RECORD_VERSION;
	head->size = size;
	head->flags = flags;
}

static uint64_t hash_name(const char *s)
{
	uint64_t h = 14695981039346656037ull; /* FNV-1a */

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

static int names_grow(struct gpu_names *names)
{
	uint32_t count = names->slot_count ? names->slot_count * 2 : NAMES_MIN_SLOTS;
	uint32_t *slots = calloc(count, sizeof(*slots));

	if (!slots)
		return -1;
	for (uint32_t id = 1; id <= names->count; id++) {
		uint32_t i = hash_name(names->names[id - 1]) & (count - 1);

		while (slots[i])
			i = (i + 1) & (count - 1);
		slots[i] = id;
	}
	free(names->slots);
	names->slots = slots;
	names->slot_count = count;
	return 0;
}

uint32_t gpu_names_intern(struct gpu_names *names, const char *name, bool *added)
{
	uint32_t i;
	char *copy;

	*added = false;
	if (!name)
		return 0;
	/* At most half full. */
	if ((names->count + 1) * 2 > names->slot_count && names_grow(names))
		return 0;
	i = hash_name(name) & (names->slot_count - 1);
	for (; names->slots[i]; i = (i + 1) & (names->slot_count - 1)) {
		if (!strcmp(names->names[names->slots[i] - 1], name))
			return names->slots[i];
	}
	if (names->count == names->capacity) {
		uint32_t capacity = names->capacity ? names->capacity * 2 : 64;
		char **grown = realloc(names->names, capacity * sizeof(*grown));
		uint32_t *sent;

		if (!grown)
			return 0;
		names->names = grown;
		sent = realloc(names->sent, capacity * sizeof(*sent));
		if (!sent)
			return 0;
		names->sent = sent;
		names->capacity = capacity;
	}
	copy = strdup(name);
	if (!copy)
		return 0;
	names->sent[names->count] = 0;
	names->names[names->count++] = copy;
	names->slots[i] = names->count;
	*added = true;
	return names->count;
}

const char *gpu_names_get(const struct gpu_names *names, uint32_t id)
{
	if (id == 0 || id > names->count)
		return NULL;
	return names->names[id - 1];
}

void gpu_decoder_init(struct gpu_decoder *decoder)
{
	memset(decoder, 0, sizeof(*decoder));
	decoder->session = 1;
}

void gpu_decoder_new_session(struct gpu_decoder *decoder)
{
	decoder->session++;
}

void gpu_decoder_free(struct gpu_decoder *decoder)
{
	for (uint32_t i = 0; i < decoder->names.count; i++)
		free(decoder->names.names[i]);
	free(decoder->names.names);
	free(decoder->names.sent);
	free(decoder->names.slots);
	memset(decoder, 0, sizeof(*decoder));
}

static void decode_kernel(struct gpu_decoder *decoder, const CUpti_ActivityKernel10 *k,
			  struct optrace_gpu_kernel *out, const char **new_name)
{
	struct span span = span_of(decoder, k->start, k->end);
	bool added;

	set_head(&out->head, OPTRACE_GPU_REC_KERNEL, sizeof(*out), span.flags);
	out->start_ns = span.start;
	out->end_ns = span.end;
	out->correlation_id = k->correlationId;
	out->device_id = k->deviceId;
	out->context_id = k->contextId;
	out->stream_id = k->streamId;
	out->grid_x = k->gridX;
	out->grid_y = k->gridY;
	out->grid_z = k->gridZ;
	out->block_x = k->blockX;
	out->block_y = k->blockY;
	out->block_z = k->blockZ;
	out->static_shared_bytes = k->staticSharedMemory;
	out->dynamic_shared_bytes = k->dynamicSharedMemory;
	out->registers_per_thread = k->registersPerThread;
	out->launch_type = k->launchType;
	out->pad = 0;
	out->grid_id = k->gridId;
	out->name_id = gpu_names_intern(&decoder->names, k->name, &added);
	if (k->name && !out->name_id)
		decoder->no_memory++;
	/* Once per name and tracer session, before the first kernel that uses it. */
	if (out->name_id && decoder->names.sent[out->name_id - 1] != decoder->session) {
		decoder->names.sent[out->name_id - 1] = decoder->session;
		*new_name = gpu_names_get(&decoder->names, out->name_id);
	}
}

static void decode_memcpy(struct gpu_decoder *decoder, const CUpti_ActivityMemcpy6 *m,
			  struct optrace_gpu_memcpy *out)
{
	struct span span = span_of(decoder, m->start, m->end);

	set_head(&out->head, OPTRACE_GPU_REC_MEMCPY, sizeof(*out), span.flags);
	out->start_ns = span.start;
	out->end_ns = span.end;
	out->bytes = m->bytes;
	out->correlation_id = m->correlationId;
	out->runtime_correlation_id = m->runtimeCorrelationId;
	out->device_id = m->deviceId;
	out->context_id = m->contextId;
	out->stream_id = m->streamId;
	out->copy_kind = m->copyKind;
	out->src_kind = m->srcKind;
	out->dst_kind = m->dstKind;
	out->cupti_flags = m->flags;
}

static void decode_memset(struct gpu_decoder *decoder, const CUpti_ActivityMemset4 *m,
			  struct optrace_gpu_memset *out)
{
	struct span span = span_of(decoder, m->start, m->end);

	set_head(&out->head, OPTRACE_GPU_REC_MEMSET, sizeof(*out), span.flags);
	out->start_ns = span.start;
	out->end_ns = span.end;
	out->bytes = m->bytes;
	out->correlation_id = m->correlationId;
	out->device_id = m->deviceId;
	out->context_id = m->contextId;
	out->stream_id = m->streamId;
	out->value = m->value;
	out->memory_kind = m->memoryKind;
	out->cupti_flags = m->flags;
}

static void decode_api(struct gpu_decoder *decoder, const CUpti_ActivityAPI *a, int api_kind,
		       struct optrace_gpu_api *out)
{
	struct span span = span_of(decoder, a->start, a->end);

	set_head(&out->head, OPTRACE_GPU_REC_API, sizeof(*out), span.flags);
	out->start_ns = span.start;
	out->end_ns = span.end;
	out->correlation_id = a->correlationId;
	out->cbid = a->cbid;
	out->pid = a->processId;
	out->tid = a->threadId;
	out->result = a->returnValue;
	out->api_kind = api_kind;
	memset(out->pad, 0, sizeof(out->pad));
}

static void decode_sync(struct gpu_decoder *decoder, const CUpti_ActivitySynchronization2 *s,
			struct optrace_gpu_sync *out)
{
	struct span span = span_of(decoder, s->start, s->end);

	set_head(&out->head, OPTRACE_GPU_REC_SYNC, sizeof(*out), span.flags);
	out->start_ns = span.start;
	out->end_ns = span.end;
	out->correlation_id = s->correlationId;
	out->sync_kind = s->type;
	out->context_id = s->contextId;
	out->stream_id = s->streamId;
	out->event_id = s->cudaEventId;
	out->result = s->returnValue;
}

int gpu_decode_record(struct gpu_decoder *decoder, const CUpti_Activity *record,
		      union gpu_record *out, const char **new_name)
{
	*new_name = NULL;
	switch (record->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		decode_kernel(decoder, (const CUpti_ActivityKernel10 *)record, &out->kernel,
			      new_name);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		decode_memcpy(decoder, (const CUpti_ActivityMemcpy6 *)record, &out->memcpy);
		break;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		decode_memset(decoder, (const CUpti_ActivityMemset4 *)record, &out->memset);
		break;
	case CUPTI_ACTIVITY_KIND_RUNTIME:
		decode_api(decoder, (const CUpti_ActivityAPI *)record, OPTRACE_GPU_API_RUNTIME,
			   &out->api);
		break;
	case CUPTI_ACTIVITY_KIND_DRIVER:
		decode_api(decoder, (const CUpti_ActivityAPI *)record, OPTRACE_GPU_API_DRIVER,
			   &out->api);
		break;
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		decode_sync(decoder, (const CUpti_ActivitySynchronization2 *)record, &out->sync);
		break;
	default:
		decoder->unknown++;
		return 0;
	}
	decoder->records++;
	return out->head.type;
}

size_t gpu_decode_buffer(struct gpu_decoder *decoder, gpu_next_record_fn next, uint8_t *buffer,
			 size_t valid_size, const struct gpu_sink *sink)
{
	CUpti_Activity *record = NULL;
	union gpu_record out;
	const char *new_name;
	size_t decoded = 0;

	if (!buffer || !valid_size)
		return 0;
	while (next(buffer, valid_size, &record) == CUPTI_SUCCESS) {
		if (!gpu_decode_record(decoder, record, &out, &new_name))
			continue;
		decoded++;
		if (new_name && sink->kernel_name)
			sink->kernel_name(sink->ctx, out.kernel.name_id, new_name);
		if (sink->record)
			sink->record(sink->ctx, &out);
	}
	return decoded;
}
