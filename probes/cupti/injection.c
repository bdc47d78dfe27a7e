// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * liboptrace-cupti: loaded into a CUDA process through
 * CUDA_INJECTION64_PATH, it re-fires CUPTI's activity records as
 * liboptrace's optrace_gpu USDT probes (and, with OPTRACE_GPU_FILE=path, writes them to
 * that file). libcupti is opened at run time: $OPTRACE_CUPTI_PATH, else the
 * usual places.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include <optrace/gpu.h>

#define EXPORT __attribute__((visibility("default")))

static struct cupti_api cupti;
static struct gpu_collector collector;

/*
 * Why InitializeInjection() returned 0 ("" until then, and when it did not):
 * a tracer that loaded the collector into the running process (optrace
 * record --cuda -p) reads it from the process's memory to say why.
 */
EXPORT char optrace_cupti_error[256];

static void __attribute__((format(printf, 1, 2))) init_failed(const char *format, ...)
{
	va_list args;

	va_start(args, format);
	vsnprintf(optrace_cupti_error, sizeof(optrace_cupti_error), format, args);
	va_end(args);
	fprintf(stderr, "optrace-cupti: %s\n", optrace_cupti_error);
}

static bool tracer_armed(void)
{
	return optrace_gpu_enabled();
}

static void fire_record(void *ctx, const union gpu_record *record)
{
	(void)ctx;
	optrace_gpu_record(record);
}

static void fire_kernel_name(void *ctx, uint32_t name_id, const char *name)
{
	(void)ctx;
	optrace_gpu_kernel_name(name_id, name);
}

static void fire_dropped(void *ctx, uint64_t count)
{
	(void)ctx;
	optrace_gpu_dropped(count);
}

static bool fire_launch(void *ctx, uint32_t correlation_id, int api_kind, uint32_t flags)
{
	(void)ctx;
	return optrace_gpu_launch(correlation_id, api_kind, flags);
}

static void fire_dropped_from(void *ctx, uint64_t count, int source)
{
	(void)ctx;
	optrace_gpu_dropped_from(count, source);
}

static void *open_cupti(void)
{
	static const char *const places[] = {
		"libcupti.so",
		"libcupti.so.13",
		"/usr/local/cuda/lib64/libcupti.so",
		"/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
	};
	const char *path = getenv("OPTRACE_CUPTI_PATH");
	char buffer[4096];
	void *handle;

	if (path && *path)
		return dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	path = getenv("CUDA_HOME");
	if (path && *path) {
		snprintf(buffer, sizeof(buffer), "%s/lib64/libcupti.so", path);
		handle = dlopen(buffer, RTLD_NOW | RTLD_GLOBAL);
		if (handle)
			return handle;
		snprintf(buffer, sizeof(buffer), "%s/extras/CUPTI/lib64/libcupti.so", path);
		handle = dlopen(buffer, RTLD_NOW | RTLD_GLOBAL);
		if (handle)
			return handle;
	}
	for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
		handle = dlopen(places[i], RTLD_NOW | RTLD_GLOBAL);
		if (handle)
			return handle;
	}
	return NULL;
}

#define LOAD(field, symbol)                                        \
	do {                                                       \
		*(void **)&api->field = dlsym(handle, #symbol);    \
		if (!api->field) {                                 \
			init_failed("no %s in libcupti", #symbol); \
			goto fail;                                 \
		}                                                  \
	} while (0)

static void CUPTIAPI ignore_callback(void *data, CUpti_CallbackDomain domain, CUpti_CallbackId id,
				     const void *info)
{
	(void)data;
	(void)domain;
	(void)id;
	(void)info;
}

/*
 * CUPTI serves one profiler at a time: Nsight Systems, Nsight Compute,
 * cuda-gdb or a framework's profiler holds its subscriber when there is one.
 * Subscribing and leaving at once tells, before anything of ours is
 * registered (staying subscribed would lock the others out while dormant).
 */
static int check_cupti_free(void *handle)
{
	CUptiResult (*subscribe_v2)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *,
				    CUpti_SubscriberParams *);
	CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
	CUptiResult (*unsubscribe)(CUpti_SubscriberHandle);
	char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = "";
	CUpti_SubscriberParams params = {
		.structSize = CUpti_SubscriberParams_STRUCT_SIZE,
		.subscriberName = "optrace",
		.oldSubscriberName = holder,
		.oldSubscriberSize = sizeof(holder),
	};
	CUpti_SubscriberHandle subscriber = NULL;
	CUptiResult result;

	*(void **)&subscribe_v2 = dlsym(handle, "cuptiSubscribe_v2");
	*(void **)&subscribe = dlsym(handle, "cuptiSubscribe");
	*(void **)&unsubscribe = dlsym(handle, "cuptiUnsubscribe");
	if ((!subscribe_v2 && !subscribe) || !unsubscribe)
		return 0; /* cannot tell */
	result = subscribe_v2 ? subscribe_v2(&subscriber, ignore_callback, NULL, &params)
			      : subscribe(&subscriber, ignore_callback, NULL);
	if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		holder[sizeof(holder) - 1] = '\0';
		init_failed(
			"CUPTI is taken by another profiler%s%s%s (cuptiSubscribe: "
			"CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED): it serves one at a time",
			holder[0] ? " (" : "", holder, holder[0] ? ")" : "");
		return -1;
	}
	if (result == CUPTI_SUCCESS)
		unsubscribe(subscriber);
	return 0;
}

static int load_cupti(struct cupti_api *api)
{
	uint32_t version = 0;
	void *handle = open_cupti();

	if (!handle) {
		init_failed("cannot open libcupti (%s); set OPTRACE_CUPTI_PATH", dlerror());
		return -1;
	}
	LOAD(get_version, cuptiGetVersion);
	LOAD(activity_enable, cuptiActivityEnable);
	LOAD(activity_disable, cuptiActivityDisable);
	LOAD(activity_register_callbacks, cuptiActivityRegisterCallbacks);
	LOAD(activity_register_timestamp_callback, cuptiActivityRegisterTimestampCallback);
	LOAD(activity_flush_all, cuptiActivityFlushAll);
	LOAD(activity_get_next_record, cuptiActivityGetNextRecord);
	LOAD(activity_get_num_dropped_records, cuptiActivityGetNumDroppedRecords);
	LOAD(get_result_string, cuptiGetResultString);
	LOAD(set_thread_id_type, cuptiSetThreadIdType);
	LOAD(subscribe, cuptiSubscribe);
	LOAD(unsubscribe, cuptiUnsubscribe);
	LOAD(enable_domain, cuptiEnableDomain);
	/* The records are decoded with this build's layouts. */
	if (api->get_version(&version) != CUPTI_SUCCESS || version < CUPTI_API_VERSION) {
		init_failed("CUPTI API version %u, built for %u or later", version,
			    (unsigned int)CUPTI_API_VERSION);
		goto fail;
	}
	if (check_cupti_free(handle))
		goto fail;
	return 0;
fail:
	/* Nothing of ours is left in CUPTI: it goes as it came. */
	dlclose(handle);
	return -1;
}

static void at_exit(void)
{
	gpu_collector_shutdown(&collector);
}

static int initialize(void)
{
	const struct gpu_sink probes = {
		.record = fire_record,
		.kernel_name = fire_kernel_name,
		.dropped = fire_dropped,
		.launch = fire_launch,
		.dropped_from = fire_dropped_from,
	};
	const char *file = getenv("OPTRACE_GPU_FILE");
	int err;

	if (load_cupti(&cupti))
		return 0;
	err = gpu_collector_init(&collector, &cupti, tracer_armed, &probes, file);
	collector.tracers = optrace_gpu_tracers;
	if (err) {
		init_failed("cannot create %s: %s", file, strerror(-err));
		return 0;
	}
	atexit(at_exit);
	/* With a file, or a tracer already attached, start at once. */
	gpu_collector_update(&collector);
	if (gpu_collector_start_poller(&collector, GPU_POLL_INTERVAL_MS))
		fprintf(stderr, "optrace-cupti: no poller thread: armed only at buffer ends\n");
	return 1;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_result;

static void init_once(void)
{
	init_result = initialize();
}

/* CUDA's injection entry point: 1 on success. */
EXPORT int InitializeInjection(void)
{
	pthread_once(&once, init_once);
	return init_result;
}
