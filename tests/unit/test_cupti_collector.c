// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* liboptrace-cupti's life cycle and file output, over a fake CUPTI. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cupti_records.h"
#include "testlib.h"
#include "collector.h"

/* What the fake CUPTI was asked, in order. */
enum call { REGISTER_CALLBACKS, REGISTER_CLOCK, THREAD_ID_TYPE, ENABLE, DISABLE, FLUSH };
static struct {
	enum call call;
	int arg;
} calls[128];
static int call_count;
static bool semaphore;
static CUpti_TimestampCallbackFunc clock_fn;
static CUpti_BuffersCallbackRequestFunc requested_fn;
static CUpti_BuffersCallbackCompleteFunc completed_fn;

/* A buffer the next flush completes, and its record offsets. */
static uint8_t *pending;
static size_t pending_used;
static size_t dropped_next;

static void log_call(enum call call, int arg)
{
	ck_assert_int_lt(call_count, 128);
	calls[call_count].call = call;
	calls[call_count++].arg = arg;
}

static CUptiResult fake_register_callbacks(CUpti_BuffersCallbackRequestFunc requested,
					   CUpti_BuffersCallbackCompleteFunc completed)
{
	log_call(REGISTER_CALLBACKS, 0);
	requested_fn = requested;
	completed_fn = completed;
	return CUPTI_SUCCESS;
}

static CUptiResult fake_register_clock(CUpti_TimestampCallbackFunc fn)
{
	log_call(REGISTER_CLOCK, 0);
	clock_fn = fn;
	return CUPTI_SUCCESS;
}

static CUptiResult fake_thread_id_type(CUpti_ActivityThreadIdType type)
{
	log_call(THREAD_ID_TYPE, type);
	return CUPTI_SUCCESS;
}

static CUptiResult fake_enable(CUpti_ActivityKind kind)
{
	log_call(ENABLE, kind);
	return CUPTI_SUCCESS;
}

static CUptiResult fake_disable(CUpti_ActivityKind kind)
{
	log_call(DISABLE, kind);
	return CUPTI_SUCCESS;
}

static CUptiResult fake_flush(uint32_t flag)
{
	uint8_t *buffer = pending;

	log_call(FLUSH, flag);
	if (buffer) {
		pending = NULL;
		completed_fn(NULL, 0, buffer, GPU_BUFFER_SIZE, pending_used);
	}
	return CUPTI_SUCCESS;
}

static CUptiResult fake_dropped(CUcontext context, uint32_t stream, size_t *dropped)
{
	(void)context;
	(void)stream;
	*dropped = dropped_next;
	dropped_next = 0;
	return CUPTI_SUCCESS;
}

static const struct cupti_api fake = {
	.activity_enable = fake_enable,
	.activity_disable = fake_disable,
	.activity_register_callbacks = fake_register_callbacks,
	.activity_register_timestamp_callback = fake_register_clock,
	.activity_flush_all = fake_flush,
	.activity_get_next_record = fake_next,
	.activity_get_num_dropped_records = fake_dropped,
	.set_thread_id_type = fake_thread_id_type,
};

static bool fake_armed(void)
{
	return semaphore;
}

/* What the probes would have fired. */
static int probe_records, probe_names;
static uint64_t probe_dropped;

static void on_record(void *ctx, const union gpu_record *record)
{
	(void)ctx;
	(void)record;
	probe_records++;
}

static void on_name(void *ctx, uint32_t id, const char *name)
{
	(void)ctx;
	(void)id;
	(void)name;
	probe_names++;
}

static void on_dropped(void *ctx, uint64_t count)
{
	(void)ctx;
	probe_dropped += count;
}

static const struct gpu_sink probes = {
	.record = on_record,
	.kernel_name = on_name,
	.dropped = on_dropped,
};

static struct gpu_collector collector;

static void setup(void)
{
	test_dir_setup();
	call_count = 0;
	semaphore = false;
	clock_fn = NULL;
	pending = NULL;
	pending_used = record_count = 0;
	dropped_next = 0;
	probe_records = probe_names = 0;
	probe_dropped = 0;
}

static void teardown(void)
{
	gpu_collector_free(&collector);
	free(pending);
	test_dir_teardown();
}

/* Stages a buffer, from the collector's own allocator, for the next flush. */
static void stage(const void *record, size_t size)
{
	size_t capacity, max;

	if (!pending) {
		requested_fn(&pending, &capacity, &max);
		ck_assert_ptr_nonnull(pending);
		ck_assert_uint_eq((uintptr_t)pending % 8, 0);
		pending_used = record_count = 0;
	}
	memcpy(pending + pending_used, record, size);
	offsets[record_count++] = pending_used;
	pending_used += size;
}

static int count_calls(enum call call)
{
	int n = 0;

	for (int i = 0; i < call_count; i++)
		n += calls[i].call == call;
	return n;
}

static void check_armed_sequence(int from)
{
	int first_enable = from + 2;

	ck_assert_int_eq(calls[from].call, REGISTER_CALLBACKS);
	ck_assert_int_eq(calls[from + 1].call, REGISTER_CLOCK);
	/* Kernel thread ids, as BPF sees them; asked once per process. */
	if (from == 0) {
		ck_assert_int_eq(calls[from + 2].call, THREAD_ID_TYPE);
		ck_assert_int_eq(calls[from + 2].arg, CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
		first_enable++;
	}
	ck_assert_int_ge(call_count, first_enable + (int)gpu_activity_kind_count);
	for (unsigned int i = 0; i < gpu_activity_kind_count; i++) {
		ck_assert_int_eq(calls[first_enable + i].call, ENABLE);
		ck_assert_int_eq(calls[first_enable + i].arg, gpu_activity_kinds[i]);
	}
}

START_TEST(test_dormant_armed_disarmed)
{
	ck_assert_int_eq(gpu_collector_init(&collector, &fake, fake_armed, &probes, NULL), 0);
	/* No tracer: nothing asked of CUPTI, however often polled. */
	for (int i = 0; i < 3; i++)
		ck_assert(!gpu_collector_update(&collector));
	ck_assert_int_eq(call_count, 0);

	/* A tracer arms: callbacks, then the clock, then the kinds. */
	semaphore = true;
	ck_assert(gpu_collector_update(&collector));
	ck_assert_int_eq(call_count, 3 + (int)gpu_activity_kind_count);
	check_armed_sequence(0);
	ck_assert_ptr_eq(clock_fn, gpu_monotonic_ns);
	ck_assert_uint_gt(clock_fn(), 0);
	ck_assert(gpu_collector_update(&collector));
	ck_assert_int_eq(call_count, 3 + (int)gpu_activity_kind_count);

	/* The tracer leaves: every kind disabled, then a forced flush. */
	semaphore = false;
	call_count = 0;
	ck_assert(!gpu_collector_update(&collector));
	ck_assert_int_eq(call_count, (int)gpu_activity_kind_count + 1);
	for (unsigned int i = 0; i < gpu_activity_kind_count; i++) {
		ck_assert_int_eq(calls[i].call, DISABLE);
		ck_assert_int_eq(calls[i].arg, gpu_activity_kinds[i]);
	}
	ck_assert_int_eq(calls[gpu_activity_kind_count].call, FLUSH);
	ck_assert_int_eq(calls[gpu_activity_kind_count].arg, CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);

	/* Armed again: the clock and callbacks are not registered twice. */
	semaphore = true;
	call_count = 0;
	ck_assert(gpu_collector_update(&collector));
	ck_assert_int_eq(count_calls(REGISTER_CLOCK), 0);
	ck_assert_int_eq(count_calls(REGISTER_CALLBACKS), 0);
	ck_assert_int_eq(count_calls(THREAD_ID_TYPE), 0);
	ck_assert_int_eq(count_calls(ENABLE), (int)gpu_activity_kind_count);

	/* Exit while armed: disabled and flushed; never armed again. */
	call_count = 0;
	gpu_collector_shutdown(&collector);
	ck_assert_int_eq(count_calls(DISABLE), (int)gpu_activity_kind_count);
	ck_assert_int_eq(count_calls(FLUSH), 1);
	ck_assert_int_eq(calls[call_count - 1].call, FLUSH);
	call_count = 0;
	ck_assert(!gpu_collector_update(&collector));
	gpu_collector_shutdown(&collector);
	ck_assert_int_eq(call_count, 0);
}
END_TEST

START_TEST(test_exit_flushes_records_to_the_probes)
{
	CUpti_ActivityKernel10 k;

	ck_assert_int_eq(gpu_collector_init(&collector, &fake, fake_armed, &probes, NULL), 0);
	semaphore = true;
	gpu_collector_update(&collector);
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = 10;
	k.end = 20;
	k.name = "k";
	stage(&k, sizeof(k));
	stage(&k, sizeof(k));
	dropped_next = 3;
	ck_assert_int_eq(probe_records, 0);
	gpu_collector_shutdown(&collector);
	ck_assert_int_eq(probe_records, 2);
	ck_assert_int_eq(probe_names, 1);
	ck_assert_uint_eq(probe_dropped, 3);
	ck_assert_uint_eq(collector.dropped, 3);
}
END_TEST

static CUpti_ActivityKernel10 saxpy(void)
{
	CUpti_ActivityKernel10 k;

	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = 10;
	k.end = 20;
	k.name = "saxpy";
	return k;
}

/* A second tracer gets the names again: the first one's are gone with it. */
START_TEST(test_names_again_for_each_tracer)
{
	CUpti_ActivityKernel10 k = saxpy();
	ck_assert_int_eq(gpu_collector_init(&collector, &fake, fake_armed, &probes, NULL), 0);
	for (int session = 1; session <= 2; session++) {
		semaphore = true;
		ck_assert(gpu_collector_update(&collector));
		stage(&k, sizeof(k));
		stage(&k, sizeof(k));
		semaphore = false;
		ck_assert(!gpu_collector_update(&collector)); /* the forced flush delivers */
		ck_assert_int_eq(probe_records, 2 * session);
		ck_assert_int_eq(probe_names, session);
	}
}
END_TEST

static unsigned int tracer_count;

static unsigned int fake_tracers(void)
{
	return tracer_count;
}

/*
 * Armed all along for a file, then a tracer comes; then a second one while
 * the first stays: each hears the names of kernels it sees.
 */
START_TEST(test_names_again_for_a_later_tracer)
{
	char *path = test_path("gpu.bin");
	CUpti_ActivityKernel10 k = saxpy();
	tracer_count = 0;
	ck_assert_int_eq(gpu_collector_init(&collector, &fake, fake_armed, &probes, path), 0);
	collector.tracers = fake_tracers;
	for (unsigned int tracers = 0; tracers <= 2; tracers++) {
		tracer_count = tracers;
		ck_assert(gpu_collector_update(&collector));
		stage(&k, sizeof(k));
		ck_assert_int_eq(fake_flush(0), CUPTI_SUCCESS);
		ck_assert_int_eq(probe_names, (int)tracers + 1);
	}
	free(path);
}
END_TEST

START_TEST(test_exit_when_dormant_touches_nothing)
{
	ck_assert_int_eq(gpu_collector_init(&collector, &fake, fake_armed, &probes, NULL), 0);
	gpu_collector_shutdown(&collector);
	ck_assert_int_eq(call_count, 0);
}
END_TEST

START_TEST(test_poller_arms_and_disarms)
{
	ck_assert_int_eq(gpu_collector_init(&collector, &fake, fake_armed, &probes, NULL), 0);
	ck_assert_int_eq(gpu_collector_start_poller(&collector, 5), 0);
	semaphore = true;
	for (int i = 0; i < 400 && !atomic_load(&collector.active); i++)
		usleep(5000);
	ck_assert(atomic_load(&collector.active));
	semaphore = false;
	for (int i = 0; i < 400 && atomic_load(&collector.active); i++)
		usleep(5000);
	ck_assert(!atomic_load(&collector.active));
	gpu_collector_shutdown(&collector);
	ck_assert_int_eq(count_calls(FLUSH), 1);
}
END_TEST

START_TEST(test_file_round_trip)
{
	char *path = test_path("gpu.bin");
	struct gpu_file_reader reader;
	union {
		union gpu_record record;
		struct optrace_gpu_kernel_name name;
		struct optrace_gpu_dropped dropped;
		uint8_t bytes[65536];
	} *in = malloc(sizeof(*in));
	CUpti_ActivityKernel10 k;
	CUpti_ActivityMemcpy6 mc;
	int size;

	ck_assert_ptr_nonnull(in);
	/* With a file the collector arms without a tracer. */
	ck_assert_int_eq(gpu_collector_init(&collector, &fake, fake_armed, &probes, path), 0);
	ck_assert(gpu_collector_update(&collector));
	check_armed_sequence(0);

	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = 1000;
	k.end = 2000;
	k.correlationId = 7;
	k.gridX = 3;
	k.name = "my_kernel";
	memset(&mc, 0, sizeof(mc));
	mc.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	mc.start = (uint64_t)INT64_MIN;
	mc.end = 5;
	mc.bytes = 12345;
	stage(&k, sizeof(k));
	stage(&mc, sizeof(mc));
	stage(&k, sizeof(k));
	dropped_next = 2;
	gpu_collector_shutdown(&collector);

	ck_assert_int_eq(gpu_file_open(&reader, path), 0);
	ck_assert_uint_eq(reader.header.version, OPTRACE_GPU_FILE_VERSION);
	ck_assert_uint_eq(reader.header.header_size, sizeof(struct optrace_gpu_file_header));
	ck_assert_uint_eq(reader.header.pid, getpid());
	ck_assert_uint_eq(reader.header.clock_id, CLOCK_MONOTONIC);
	ck_assert_uint_eq(reader.header.record_version, OPTRACE_GPU_RECORD_VERSION);

	size = gpu_file_next(&reader, in, sizeof(*in));
	ck_assert_int_eq(size, sizeof(struct optrace_gpu_kernel_name) + 9);
	ck_assert_uint_eq(in->name.head.type, OPTRACE_GPU_REC_KERNEL_NAME);
	ck_assert_uint_eq(in->name.name_id, 1);
	ck_assert_uint_eq(in->name.length, 9);
	ck_assert_int_eq(memcmp(in->name.name, "my_kernel", 9), 0);

	size = gpu_file_next(&reader, in, sizeof(*in));
	ck_assert_int_eq(size, sizeof(struct optrace_gpu_kernel));
	ck_assert_uint_eq(in->record.head.type, OPTRACE_GPU_REC_KERNEL);
	ck_assert_uint_eq(in->record.kernel.start_ns, 1000);
	ck_assert_uint_eq(in->record.kernel.end_ns, 2000);
	ck_assert_uint_eq(in->record.kernel.correlation_id, 7);
	ck_assert_int_eq(in->record.kernel.grid_x, 3);
	ck_assert_uint_eq(in->record.kernel.name_id, 1);

	size = gpu_file_next(&reader, in, sizeof(*in));
	ck_assert_int_eq(size, sizeof(struct optrace_gpu_memcpy));
	ck_assert_uint_eq(in->record.head.type, OPTRACE_GPU_REC_MEMCPY);
	ck_assert_uint_eq(in->record.head.flags, OPTRACE_GPU_F_TIME_INVALID);
	ck_assert_uint_eq(in->record.memcpy.bytes, 12345);

	size = gpu_file_next(&reader, in, sizeof(*in));
	ck_assert_int_eq(size, sizeof(struct optrace_gpu_kernel));
	ck_assert_uint_eq(in->record.kernel.name_id, 1);

	size = gpu_file_next(&reader, in, sizeof(*in));
	ck_assert_int_eq(size, sizeof(struct optrace_gpu_dropped));
	ck_assert_uint_eq(in->dropped.head.type, OPTRACE_GPU_REC_DROPPED);
	ck_assert_uint_eq(in->dropped.count, 2);

	ck_assert_int_eq(gpu_file_next(&reader, in, sizeof(*in)), 0);
	gpu_file_reader_close(&reader);
	/* The probe sink was handed the same records. */
	ck_assert_int_eq(probe_records, 3);
	free(in);
	free(path);
}
END_TEST

START_TEST(test_file_truncated_and_foreign)
{
	char *path = test_path("bad.bin"), why[256];
	struct gpu_file_reader reader;
	uint8_t buffer[256];
	FILE *f;

	f = fopen(path, "w");
	fputs("not a gpu file at all, no no no no no", f);
	fclose(f);
	ck_assert_int_eq(gpu_file_open(&reader, path), -EPROTO);

	ck_assert_int_eq(gpu_collector_init(&collector, &fake, fake_armed, NULL, path), 0);
	gpu_collector_shutdown(&collector);
	/* Bytes after the end block: read to the end, and said. */
	f = fopen(path, "a");
	fwrite("\x01\x01\x58\x00\x00\x00\x00\x00\x01\x02", 1, 10, f);
	fclose(f);
	ck_assert_int_eq(gpu_file_open(&reader, path), 0);
	ck_assert_int_eq(gpu_file_next(&reader, buffer, sizeof(buffer)), 0);
	ck_assert_int_eq(gpu_file_reader_status(&reader, why, sizeof(why)), GPU_FILE_END_CLEAN);
	ck_assert_msg(strstr(why, "10 bytes after the end block ignored"), "%s", why);
	gpu_file_reader_close(&reader);
	/* A block cut short (the end block, here): the process was killed. */
	ck_assert_int_eq(truncate(path, sizeof(struct optrace_gpu_file_header) + 10), 0);
	ck_assert_int_eq(gpu_file_open(&reader, path), 0);
	ck_assert_int_eq(gpu_file_next(&reader, buffer, sizeof(buffer)), -EPROTO);
	ck_assert_int_eq(gpu_file_reader_status(&reader, why, sizeof(why)), GPU_FILE_END_TRUNCATED);
	gpu_file_reader_close(&reader);
	free(path);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("cupti_collector");
	TCase *tc = tcase_create("collector");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_dormant_armed_disarmed);
	tcase_add_test(tc, test_exit_flushes_records_to_the_probes);
	tcase_add_test(tc, test_names_again_for_each_tracer);
	tcase_add_test(tc, test_names_again_for_a_later_tracer);
	tcase_add_test(tc, test_exit_when_dormant_touches_nothing);
	tcase_add_test(tc, test_poller_arms_and_disarms);
	tcase_add_test(tc, test_file_round_trip);
	tcase_add_test(tc, test_file_truncated_and_foreign);
	suite_add_tcase(suite, tc);

	return run_suite(suite);
}
