/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The life cycle of liboptrace-cupti: dormant until a tracer arms the
 * optrace_gpu probes (or OPTRACE_GPU_FILE asks for a file), then CUPTI
 * activity with CLOCK_MONOTONIC timestamps; flushed and disabled when the
 * tracer leaves and at exit. CUPTI is reached only through struct cupti_api,
 * so that tests plug in a fake.
 */
#ifndef OPTRACE_CUPTI_COLLECTOR_H
#define OPTRACE_CUPTI_COLLECTOR_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <cupti.h>

#include "decode.h"
#include "gpufile.h"

/* The CUPTI functions used, loaded with dlopen() (or a test's fakes). */
struct cupti_api {
	CUptiResult (*get_version)(uint32_t *version);
	CUptiResult (*activity_enable)(CUpti_ActivityKind kind);
	CUptiResult (*activity_disable)(CUpti_ActivityKind kind);
	CUptiResult (*activity_register_callbacks)(CUpti_BuffersCallbackRequestFunc requested,
						   CUpti_BuffersCallbackCompleteFunc completed);
	CUptiResult (*activity_register_timestamp_callback)(CUpti_TimestampCallbackFunc timestamp);
	CUptiResult (*activity_flush_all)(uint32_t flag);
	CUptiResult (*activity_get_next_record)(uint8_t *buffer, size_t valid_size,
						CUpti_Activity **record);
	CUptiResult (*activity_get_num_dropped_records)(CUcontext context, uint32_t stream_id,
							size_t *dropped);
	CUptiResult (*get_result_string)(CUptiResult result, const char **text);
	CUptiResult (*set_thread_id_type)(CUpti_ActivityThreadIdType type);
	/* The callback API, for launches on their threads; NULL: not marked. */
	CUptiResult (*subscribe)(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
				 void *userdata);
	CUptiResult (*unsubscribe)(CUpti_SubscriberHandle subscriber);
	CUptiResult (*enable_domain)(uint32_t enable, CUpti_SubscriberHandle subscriber,
				     CUpti_CallbackDomain domain);
};

/* The activity kinds enabled while armed, in the order they are enabled. */
extern const CUpti_ActivityKind gpu_activity_kinds[];
extern const unsigned int gpu_activity_kind_count;

#define GPU_BUFFER_SIZE (1u << 20)
#define GPU_POLL_INTERVAL_MS 100
/* While armed, completed records are asked for this often: a tracer that
 * leaves loses at most this much of the end. */
#define GPU_FLUSH_INTERVAL_MS 1000

struct gpu_collector {
	const struct cupti_api *api;
	bool (*armed)(void);	       /* a tracer is attached: any optrace_gpu semaphore set */
	unsigned int (*tracers)(void); /* how many listen for kernel names; NULL: unknown */
	unsigned int last_tracers;
	struct gpu_sink probes;
	struct gpu_file_writer file;
	bool to_file;

	pthread_mutex_t state_lock; /* arming and disarming */
	bool callbacks_registered;
	bool clock_registered;
	bool thread_ids_set;
	bool shut_down;
	uint32_t enabled_mask; /* bit i: gpu_activity_kinds[i] is enabled */
	atomic_bool active;
	/* Subscribed to CUPTI's API callbacks while armed: launches are marked. */
	CUpti_SubscriberHandle subscriber;
	bool subscribed;
	atomic_uint_fast64_t launch_drops; /* launches the sink could not keep, not reported yet */

	pthread_mutex_t decode_lock; /* buffer completion; never held with state_lock wanted */
	struct gpu_decoder decoder;
	uint64_t dropped; /* records CUPTI dropped, summed */
	uint64_t errors;  /* CUPTI calls that failed */

	pthread_mutex_t wake_lock;
	pthread_cond_t wake;
	bool wake_pending;
	bool stop_poller;
	bool poller_running;
	unsigned int poll_interval_ms;
	unsigned int since_flush_ms;
	pthread_t poller;
};

/*
 * Sets up c; file_path non-NULL: records also go to that file, and the
 * collector is armed with or without a tracer. One collector at a time
 * receives CUPTI's buffers. 0 or -errno (the file could not be created).
 */
int gpu_collector_init(struct gpu_collector *c, const struct cupti_api *api, bool (*armed)(void),
		       const struct gpu_sink *probes, const char *file_path);
/* Arms or disarms as the tracer (or file) wants; returns whether armed. */
bool gpu_collector_update(struct gpu_collector *c);
/* Starts the thread that calls gpu_collector_update every interval_ms. */
int gpu_collector_start_poller(struct gpu_collector *c, unsigned int interval_ms);
/* At exit: stops the poller, flushes, disables, closes the file. Idempotent. */
void gpu_collector_shutdown(struct gpu_collector *c);
/* Frees what init allocated (tests; the library keeps names for good). */
void gpu_collector_free(struct gpu_collector *c);

/*
 * True for a CUDA runtime or driver function that launches device work,
 * with *flags its OPTRACE_GPU_LAUNCH_* (a graph: several activities).
 */
bool gpu_call_launches(const char *function, uint32_t *flags);

/* CUPTI's callbacks, for the current collector. */
void CUPTIAPI gpu_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records);
void CUPTIAPI gpu_buffer_completed(CUcontext context, uint32_t stream_id, uint8_t *buffer,
				   size_t size, size_t valid_size);
uint64_t CUPTIAPI gpu_monotonic_ns(void);

#endif /* OPTRACE_CUPTI_COLLECTOR_H */
