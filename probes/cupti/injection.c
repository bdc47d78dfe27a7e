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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include <optrace/gpu.h>

#define EXPORT __attribute__((visibility("default")))

static struct cupti_api cupti;
static struct gpu_collector collector;

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

#define LOAD(field, symbol)                                                 \
	do {                                                                \
		*(void **)&api->field = dlsym(handle, #symbol);             \
		if (!api->field) {                                          \
			fprintf(stderr, "optrace-cupti: no %s\n", #symbol); \
			return -1;                                          \
		}                                                           \
	} while (0)

static int load_cupti(struct cupti_api *api)
{
	uint32_t version = 0;
	void *handle = open_cupti();

	if (!handle) {
		fprintf(stderr,
			"optrace-cupti: cannot open libcupti (%s); set OPTRACE_CUPTI_PATH\n",
			dlerror());
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
	/* The records are decoded with this build's layouts. */
	if (api->get_version(&version) != CUPTI_SUCCESS || version < CUPTI_API_VERSION) {
		fprintf(stderr, "optrace-cupti: CUPTI API version %u, built for %u or later\n",
			version, (unsigned int)CUPTI_API_VERSION);
		return -1;
	}
	return 0;
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
	};
	const char *file = getenv("OPTRACE_GPU_FILE");
	int err;

	if (load_cupti(&cupti))
		return 0;
	err = gpu_collector_init(&collector, &cupti, tracer_armed, &probes, file);
	collector.tracers = optrace_gpu_tracers;
	if (err) {
		fprintf(stderr, "optrace-cupti: cannot create %s: %s\n", file, strerror(-err));
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
