/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CUPTI activity records into optrace_gpu records (include/optrace/gpu.h).
 * Pure: no CUPTI call but the record iterator handed in, so that tests run
 * it over hand-built buffers without a GPU.
 */
#ifndef OPTRACE_CUPTI_DECODE_H
#define OPTRACE_CUPTI_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

#include <optrace/gpu.h>

union gpu_record {
	struct optrace_gpu_head head;
	struct optrace_gpu_kernel kernel;
	struct optrace_gpu_memcpy memcpy;
	struct optrace_gpu_memset memset;
	struct optrace_gpu_api api;
	struct optrace_gpu_sync sync;
};

/* Where decoded records go; any member may be NULL. */
struct gpu_sink {
	void (*record)(void *ctx, const union gpu_record *record);
	/* A kernel name seen for the first time; name stays valid for the
	 * life of the decoder (of the process, in liboptrace-cupti). */
	void (*kernel_name)(void *ctx, uint32_t name_id, const char *name);
	void (*dropped)(void *ctx, uint64_t count);
	/* The collector's own: a CUDA call that launches, on its thread (false: not kept). */
	bool (*launch)(void *ctx, uint32_t correlation_id, int api_kind, uint32_t flags);
	/* Records lost at a source other than CUPTI's buffers (enum optrace_gpu_drop_source). */
	void (*dropped_from)(void *ctx, uint64_t count, int source);
	void *ctx;
};

/* Kernel names, interned: id i (from 1) is names[i - 1]. */
struct gpu_names {
	char **names;
	uint32_t *sent; /* per name: the decoder session it was last sent in */
	uint32_t count;
	uint32_t capacity;
	uint32_t *slots; /* open addressing: id, 0 if empty */
	uint32_t slot_count;
};

struct gpu_decoder {
	struct gpu_names names;
	uint32_t session;      /* a tracer's stay: each gets every name it sees, once */
	uint64_t records;      /* decoded */
	uint64_t unknown;      /* records of kinds not decoded */
	uint64_t time_invalid; /* decoded with OPTRACE_GPU_F_TIME_INVALID */
	uint64_t no_memory;    /* kernel names not interned for want of memory */
};

/* cuptiActivityGetNextRecord's shape. */
typedef CUptiResult (*gpu_next_record_fn)(uint8_t *buffer, size_t valid_size,
					  CUpti_Activity **record);

void gpu_decoder_init(struct gpu_decoder *decoder);
/*
 * A new tracer came: names are sent again before their next use, since the
 * one that saw them first is gone (and a name its ring buffer dropped too).
 */
void gpu_decoder_new_session(struct gpu_decoder *decoder);
/* Frees the names: only once nothing holds a name pointer any more. */
void gpu_decoder_free(struct gpu_decoder *decoder);

/*
 * Decodes one record into *out. Returns its OPTRACE_GPU_REC_* type, or 0 for
 * a kind it does not decode (counted in decoder->unknown). A kernel whose
 * name is new sets *new_name to the interned name (else NULL).
 */
int gpu_decode_record(struct gpu_decoder *decoder, const CUpti_Activity *record,
		      union gpu_record *out, const char **new_name);

/*
 * Decodes every record of buffer (valid_size bytes) that next() yields and
 * hands each to sink, a new kernel name before its first kernel. Returns the
 * number of records decoded.
 */
size_t gpu_decode_buffer(struct gpu_decoder *decoder, gpu_next_record_fn next, uint8_t *buffer,
			 size_t valid_size, const struct gpu_sink *sink);

/* The id of an interned name; 0 if none or out of memory. */
uint32_t gpu_names_intern(struct gpu_names *names, const char *name, bool *added);
const char *gpu_names_get(const struct gpu_names *names, uint32_t id);

#endif /* OPTRACE_CUPTI_DECODE_H */
