// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The life cycle of liboptrace-cupti (see collector.h).
 *
 * Two locks, never nested: state_lock serializes arming and disarming (the
 * poller, exit), decode_lock the buffers CUPTI completes. A flush under
 * state_lock completes buffers on the same thread, so buffer completion
 * never takes state_lock: it only wakes the poller when the tracer came or
 * left.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector.h"

const CUpti_ActivityKind gpu_activity_kinds[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
	CUPTI_ACTIVITY_KIND_MEMCPY,
	CUPTI_ACTIVITY_KIND_MEMSET,
	CUPTI_ACTIVITY_KIND_RUNTIME,
	CUPTI_ACTIVITY_KIND_DRIVER,
	CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
};
const unsigned int gpu_activity_kind_count =
	sizeof(gpu_activity_kinds) / sizeof(gpu_activity_kinds[0]);

static struct gpu_collector *current;

uint64_t CUPTIAPI gpu_monotonic_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000000000ull + now.tv_nsec;
}

static void warn_cupti(struct gpu_collector *c, const char *call, CUptiResult result)
{
	const char *text = NULL;

	c->errors++;
	if (c->api->get_result_string)
		c->api->get_result_string(result, &text);
	fprintf(stderr, "optrace-cupti: %s: %s (%d)\n", call, text ? text : "error", (int)result);
}

/* Records go to the file, then to the probes. */
static void sink_record(void *ctx, const union gpu_record *record)
{
	struct gpu_collector *c = ctx;

	if (c->to_file)
		gpu_file_write(&c->file, record);
	if (c->probes.record)
		c->probes.record(c->probes.ctx, record);
}

static void sink_kernel_name(void *ctx, uint32_t name_id, const char *name)
{
	struct gpu_collector *c = ctx;

	if (c->to_file)
		gpu_file_write_name(&c->file, name_id, name);
	if (c->probes.kernel_name)
		c->probes.kernel_name(c->probes.ctx, name_id, name);
}

static void sink_dropped(void *ctx, uint64_t count)
{
	struct gpu_collector *c = ctx;

	c->dropped += count;
	if (c->to_file)
		gpu_file_write_dropped(&c->file, count);
	if (c->probes.dropped)
		c->probes.dropped(c->probes.ctx, count);
}

int gpu_collector_init(struct gpu_collector *c, const struct cupti_api *api, bool (*armed)(void),
		       const struct gpu_sink *probes, const char *file_path)
{
	int err;

	memset(c, 0, sizeof(*c));
	c->api = api;
	c->armed = armed;
	if (probes)
		c->probes = *probes;
	gpu_decoder_init(&c->decoder);
	if (file_path && *file_path) {
		err = gpu_file_create(&c->file, file_path);
		if (err)
			return err;
		c->to_file = true;
	}
	pthread_mutex_init(&c->state_lock, NULL);
	pthread_mutex_init(&c->decode_lock, NULL);
	pthread_mutex_init(&c->wake_lock, NULL);
	pthread_cond_init(&c->wake, NULL);
	atomic_init(&c->active, false);
	atomic_init(&c->launch_drops, 0);
	current = c;
	return 0;
}

static bool wanted(struct gpu_collector *c)
{
	return c->to_file || (c->armed && c->armed());
}

bool gpu_call_launches(const char *function, uint32_t *flags)
{
	static const struct {
		const char *prefix;
		uint32_t flags; /* OPTRACE_GPU_LAUNCH_* */
	} calls[] = {
		{ "cudaLaunch", 0 }, { "cudaMemcpy", 0 },
		{ "cudaMemset", 0 }, { "cudaGraphLaunch", OPTRACE_GPU_LAUNCH_MANY },
		{ "cuLaunch", 0 },   { "cuMemcpy", 0 },
		{ "cuMemset", 0 },   { "cuGraphLaunch", OPTRACE_GPU_LAUNCH_MANY },
	};

	for (size_t i = 0; function && i < sizeof(calls) / sizeof(calls[0]); i++) {
		if (!strncmp(function, calls[i].prefix, strlen(calls[i].prefix))) {
			*flags = calls[i].flags;
			return true;
		}
	}
	return false;
}

/*
 * CUPTI's API callback, on the thread that makes the call, at its entry:
 * a call that launches is marked there, before its work can complete.
 */
static void CUPTIAPI on_api_call(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId id,
				 const void *info)
{
	struct gpu_collector *c = userdata;
	const CUpti_CallbackData *call = info;
	int api_kind = domain == CUPTI_CB_DOMAIN_DRIVER_API ? OPTRACE_GPU_API_DRIVER
							    : OPTRACE_GPU_API_RUNTIME;
	uint32_t flags;

	(void)id;
	if ((domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) ||
	    !call || call->callbackSite != CUPTI_API_ENTER ||
	    !gpu_call_launches(call->functionName, &flags))
		return;
	if (!c->probes.launch(c->probes.ctx, call->correlationId, api_kind, flags))
		atomic_fetch_add(&c->launch_drops, 1);
}

/* Launches the sink could not keep, reported as drops of the API callback. */
static void report_launch_drops(struct gpu_collector *c)
{
	uint64_t lost = atomic_exchange(&c->launch_drops, 0);

	if (lost && c->probes.dropped_from)
		c->probes.dropped_from(c->probes.ctx, lost, OPTRACE_GPU_DROP_API_CALLBACK);
}

/*
 * Under state_lock. Held only while armed: dormant, the collector leaves
 * CUPTI's one subscriber place to other profilers.
 */
static void subscribe_launches(struct gpu_collector *c)
{
	const struct cupti_api *api = c->api;
	CUptiResult result;

	if (!api->subscribe || !api->enable_domain || !c->probes.launch)
		return;
	result = api->subscribe(&c->subscriber, on_api_call, c);
	if (result != CUPTI_SUCCESS) {
		warn_cupti(c,
			   "cuptiSubscribe (launches are not marked: optrace stat cannot "
			   "attribute GPU time; report uses the API records)",
			   result);
		return;
	}
	c->subscribed = true;
	result = api->enable_domain(1, c->subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
	if (result == CUPTI_SUCCESS)
		result = api->enable_domain(1, c->subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
	if (result != CUPTI_SUCCESS)
		warn_cupti(c, "cuptiEnableDomain", result);
}

static void unsubscribe_launches(struct gpu_collector *c)
{
	CUptiResult result;

	if (!c->subscribed)
		return;
	result = c->api->unsubscribe(c->subscriber);
	if (result != CUPTI_SUCCESS)
		warn_cupti(c, "cuptiUnsubscribe", result);
	c->subscribed = false;
}

/* Under state_lock. */
static void arm(struct gpu_collector *c)
{
	const struct cupti_api *api = c->api;
	CUptiResult result;

	if (!c->callbacks_registered) {
		result = api->activity_register_callbacks(gpu_buffer_requested,
							  gpu_buffer_completed);
		if (result != CUPTI_SUCCESS) {
			warn_cupti(c, "cuptiActivityRegisterCallbacks", result);
			return;
		}
		c->callbacks_registered = true;
	}
	/* Once, before any activity: CUPTI's own clock is not BPF's. */
	if (!c->clock_registered) {
		result = api->activity_register_timestamp_callback(gpu_monotonic_ns);
		if (result != CUPTI_SUCCESS) {
			warn_cupti(c, "cuptiActivityRegisterTimestampCallback", result);
			return;
		}
		c->clock_registered = true;
	}
	/* CUPTI's default thread id is pthread_self(); BPF sees the kernel's. */
	if (!c->thread_ids_set && api->set_thread_id_type) {
		result = api->set_thread_id_type(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
		if (result != CUPTI_SUCCESS)
			warn_cupti(c, "cuptiSetThreadIdType", result);
		c->thread_ids_set = true;
	}
	pthread_mutex_lock(&c->decode_lock);
	gpu_decoder_new_session(&c->decoder);
	pthread_mutex_unlock(&c->decode_lock);
	/* Launches marked before their activity is: none goes unmarked. */
	subscribe_launches(c);
	for (unsigned int i = 0; i < gpu_activity_kind_count; i++) {
		result = api->activity_enable(gpu_activity_kinds[i]);
		if (result == CUPTI_SUCCESS)
			c->enabled_mask |= 1u << i;
		else
			warn_cupti(c, "cuptiActivityEnable", result);
	}
	atomic_store(&c->active, true);
}

/*
 * Under state_lock. Disabled first, then a forced flush: every record taken
 * before the tracer left is delivered now, none is left for the next one.
 */
static void disarm(struct gpu_collector *c)
{
	const struct cupti_api *api = c->api;
	CUptiResult result;

	for (unsigned int i = 0; i < gpu_activity_kind_count; i++) {
		if (!(c->enabled_mask & (1u << i)))
			continue;
		result = api->activity_disable(gpu_activity_kinds[i]);
		if (result != CUPTI_SUCCESS)
			warn_cupti(c, "cuptiActivityDisable", result);
	}
	c->enabled_mask = 0;
	unsubscribe_launches(c); /* after the activity: its last launches were marked */
	result = api->activity_flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	if (result != CUPTI_SUCCESS)
		warn_cupti(c, "cuptiActivityFlushAll", result);
	atomic_store(&c->active, false);
	if (c->to_file) {
		pthread_mutex_lock(&c->decode_lock);
		gpu_file_flush(&c->file);
		pthread_mutex_unlock(&c->decode_lock);
	}
}

/*
 * A tracer came (more listen than before): names go again before their next
 * kernel, as it saw none of them. Also in file mode, armed all along.
 */
static void notice_new_tracers(struct gpu_collector *c)
{
	unsigned int tracers = c->tracers ? c->tracers() : 0;

	if (tracers > c->last_tracers) {
		pthread_mutex_lock(&c->decode_lock);
		gpu_decoder_new_session(&c->decoder);
		pthread_mutex_unlock(&c->decode_lock);
	}
	c->last_tracers = tracers;
}

bool gpu_collector_update(struct gpu_collector *c)
{
	bool want, active;

	pthread_mutex_lock(&c->state_lock);
	notice_new_tracers(c);
	want = !c->shut_down && wanted(c);
	active = atomic_load(&c->active);
	if (want && !active)
		arm(c);
	else if (!want && active)
		disarm(c);
	active = atomic_load(&c->active);
	pthread_mutex_unlock(&c->state_lock);
	return active;
}

static void wake_poller(struct gpu_collector *c)
{
	pthread_mutex_lock(&c->wake_lock);
	c->wake_pending = true;
	pthread_cond_signal(&c->wake);
	pthread_mutex_unlock(&c->wake_lock);
}

static void *poll_loop(void *arg)
{
	struct gpu_collector *c = arg;
	struct timespec deadline;
	unsigned int interval_ms = c->poll_interval_ms;
	bool stop;

	for (;;) {
		pthread_mutex_lock(&c->wake_lock);
		clock_gettime(CLOCK_REALTIME, &deadline);
		deadline.tv_nsec += (long)interval_ms * 1000000;
		deadline.tv_sec += deadline.tv_nsec / 1000000000;
		deadline.tv_nsec %= 1000000000;
		while (!c->wake_pending && !c->stop_poller) {
			if (pthread_cond_timedwait(&c->wake, &c->wake_lock, &deadline) == ETIMEDOUT)
				break;
		}
		c->wake_pending = false;
		stop = c->stop_poller;
		pthread_mutex_unlock(&c->wake_lock);
		if (stop)
			break;
		if (gpu_collector_update(c)) {
			c->since_flush_ms += interval_ms;
			if (c->since_flush_ms >= GPU_FLUSH_INTERVAL_MS) {
				/* Unforced: the records completed so far, buffers partly full. */
				c->api->activity_flush_all(0);
				c->since_flush_ms = 0;
			}
		}
	}
	return NULL;
}

int gpu_collector_start_poller(struct gpu_collector *c, unsigned int interval_ms)
{
	sigset_t all, old;
	int err;

	c->poll_interval_ms = interval_ms ? interval_ms : GPU_POLL_INTERVAL_MS;
	/* The application's signals are not for this thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&c->poller, NULL, poll_loop, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	c->poller_running = true;
	return 0;
}

void gpu_collector_shutdown(struct gpu_collector *c)
{
	if (c->poller_running) {
		pthread_mutex_lock(&c->wake_lock);
		c->stop_poller = true;
		pthread_cond_signal(&c->wake);
		pthread_mutex_unlock(&c->wake_lock);
		pthread_join(c->poller, NULL);
		c->poller_running = false;
	}
	pthread_mutex_lock(&c->state_lock);
	if (!c->shut_down) {
		c->shut_down = true;
		if (atomic_load(&c->active))
			disarm(c);
		if (c->to_file) {
			pthread_mutex_lock(&c->decode_lock);
			gpu_file_close(&c->file);
			c->to_file = false;
			pthread_mutex_unlock(&c->decode_lock);
		}
	}
	pthread_mutex_unlock(&c->state_lock);
}

void gpu_collector_free(struct gpu_collector *c)
{
	gpu_collector_shutdown(c);
	gpu_decoder_free(&c->decoder);
	pthread_mutex_destroy(&c->state_lock);
	pthread_mutex_destroy(&c->decode_lock);
	pthread_mutex_destroy(&c->wake_lock);
	pthread_cond_destroy(&c->wake);
	if (current == c)
		current = NULL;
}

void CUPTIAPI gpu_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	/* CUPTI wants 8-byte aligned buffers. */
	*buffer = aligned_alloc(8, GPU_BUFFER_SIZE);
	*size = *buffer ? GPU_BUFFER_SIZE : 0;
	*max_records = 0;
}

void CUPTIAPI gpu_buffer_completed(CUcontext context, uint32_t stream_id, uint8_t *buffer,
				   size_t size, size_t valid_size)
{
	struct gpu_collector *c = current;
	struct gpu_sink sink = {
		.record = sink_record,
		.kernel_name = sink_kernel_name,
		.dropped = sink_dropped,
	};
	size_t dropped = 0;
	bool active;

	(void)size;
	if (!c)
		goto out;
	sink.ctx = c;
	pthread_mutex_lock(&c->decode_lock);
	gpu_decode_buffer(&c->decoder, c->api->activity_get_next_record, buffer, valid_size, &sink);
	if (c->api->activity_get_num_dropped_records &&
	    c->api->activity_get_num_dropped_records(context, stream_id, &dropped) ==
		    CUPTI_SUCCESS &&
	    dropped)
		sink_dropped(c, dropped);
	report_launch_drops(c);
	/* The buffer's records as whole blocks: a process killed later leaves them. */
	if (c->to_file)
		gpu_file_flush(&c->file);
	pthread_mutex_unlock(&c->decode_lock);
	/* The cheap check: the tracer came or left since the last poll. */
	active = atomic_load(&c->active);
	if (c->poller_running && active != wanted(c))
		wake_poller(c);
out:
	free(buffer);
}
