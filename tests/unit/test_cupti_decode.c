// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* liboptrace-cupti's decoder on hand-built CUDA 13 activity buffers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cupti_records.h"
#include "testlib.h"
#include "decode.h"

/* A buffer laid out as CUPTI lays one out, and its record offsets. */
static uint8_t buffer[8192] __attribute__((aligned(8)));
static size_t buffer_used;

static void *add(const void *record, size_t size)
{
	ck_assert_uint_eq(size % 8, 0);
	ck_assert_uint_le(buffer_used + size, sizeof(buffer));
	memcpy(buffer + buffer_used, record, size);
	offsets[record_count++] = buffer_used;
	buffer_used += size;
	return buffer + buffer_used - size;
}

static union gpu_record got[64];
static int got_count;
static uint32_t name_ids[8];
static char names_seen[8][64];
static int name_count;

static void on_record(void *ctx, const union gpu_record *record)
{
	(void)ctx;
	ck_assert_int_lt(got_count, 64);
	got[got_count++] = *record;
}

static void on_name(void *ctx, uint32_t id, const char *name)
{
	(void)ctx;
	ck_assert_int_lt(name_count, 8);
	name_ids[name_count] = id;
	snprintf(names_seen[name_count++], sizeof(names_seen[0]), "%s", name);
	/* Before the first kernel that has it. */
	for (int i = 0; i < got_count; i++)
		ck_assert(got[i].head.type != OPTRACE_GPU_REC_KERNEL ||
			  got[i].kernel.name_id != id);
}

static const struct gpu_sink sink = { .record = on_record, .kernel_name = on_name };
static struct gpu_decoder decoder;

static void setup(void)
{
	memset(buffer, 0, sizeof(buffer));
	buffer_used = record_count = 0;
	got_count = name_count = 0;
	gpu_decoder_init(&decoder);
}

static void teardown(void)
{
	gpu_decoder_free(&decoder);
}

static CUpti_ActivityKernel10 kernel(const char *name, uint64_t start, uint64_t end,
				     uint32_t correlation)
{
	CUpti_ActivityKernel10 k;

	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.registersPerThread = 32;
	k.start = start;
	k.end = end;
	k.completed = end;
	k.deviceId = 1;
	k.contextId = 2;
	k.streamId = 7;
	k.gridX = 128;
	k.gridY = 2;
	k.gridZ = 1;
	k.blockX = 256;
	k.blockY = 1;
	k.blockZ = 1;
	k.staticSharedMemory = 1024;
	k.dynamicSharedMemory = 4096;
	k.correlationId = correlation;
	k.gridId = 99;
	k.name = name;
	k.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE;
	return k;
}

static void check_head(const union gpu_record *r, int type, size_t size, uint32_t flags)
{
	ck_assert_uint_eq(r->head.type, type);
	ck_assert_uint_eq(r->head.version, OPTRACE_GPU_RECORD_VERSION);
	ck_assert_uint_eq(r->head.size, size);
	ck_assert_uint_eq(r->head.flags, flags);
}

START_TEST(test_every_kind_field_by_field)
{
	/* Names from a string the decoder must copy: CUPTI reuses its buffers. */
	char name[] = "saxpy_kernel";
	CUpti_ActivityKernel10 k = kernel(name, 1000, 3000, 41);
	CUpti_ActivityMemcpy6 mc;
	CUpti_ActivityMemset4 ms;
	CUpti_ActivityAPI rt, drv;
	CUpti_ActivitySynchronization2 sy;
	const struct optrace_gpu_kernel *gk;
	const struct optrace_gpu_memcpy *gc;
	const struct optrace_gpu_memset *gs;
	const struct optrace_gpu_api *ga;
	const struct optrace_gpu_sync *gy;

	memset(&mc, 0, sizeof(mc));
	mc.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	mc.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	mc.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	mc.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	mc.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
	mc.bytes = 1 << 20;
	mc.start = 500;
	mc.end = 900;
	mc.deviceId = 1;
	mc.contextId = 2;
	mc.streamId = 7;
	mc.correlationId = 40;
	mc.runtimeCorrelationId = 39;

	memset(&ms, 0, sizeof(ms));
	ms.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	ms.value = 0xab;
	ms.bytes = 4096;
	ms.start = 3100;
	ms.end = 3200;
	ms.deviceId = 1;
	ms.contextId = 2;
	ms.streamId = 8;
	ms.correlationId = 42;
	ms.flags = CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC;
	ms.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;

	memset(&rt, 0, sizeof(rt));
	rt.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	rt.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
	rt.start = 900;
	rt.end = 950;
	rt.processId = 1234;
	rt.threadId = 1240;
	rt.correlationId = 41;
	rt.returnValue = 0;
	drv = rt;
	drv.kind = CUPTI_ACTIVITY_KIND_DRIVER;
	drv.cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
	drv.correlationId = 43;
	drv.returnValue = 700;

	memset(&sy, 0, sizeof(sy));
	sy.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	sy.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
	sy.start = 3300;
	sy.end = 3900;
	sy.correlationId = 44;
	sy.contextId = 2;
	sy.streamId = 7;
	sy.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	sy.returnValue = 0;

	add(&mc, sizeof(mc));
	add(&k, sizeof(k));
	add(&ms, sizeof(ms));
	add(&rt, sizeof(rt));
	add(&drv, sizeof(drv));
	add(&sy, sizeof(sy));
	ck_assert_uint_eq(gpu_decode_buffer(&decoder, fake_next, buffer, buffer_used, &sink), 6);
	ck_assert_int_eq(got_count, 6);
	ck_assert_uint_eq(decoder.records, 6);
	ck_assert_uint_eq(decoder.unknown, 0);
	ck_assert_uint_eq(decoder.time_invalid, 0);

	check_head(&got[0], OPTRACE_GPU_REC_MEMCPY, sizeof(*gc), 0);
	gc = &got[0].memcpy;
	ck_assert_uint_eq(gc->start_ns, 500);
	ck_assert_uint_eq(gc->end_ns, 900);
	ck_assert_uint_eq(gc->bytes, 1 << 20);
	ck_assert_uint_eq(gc->correlation_id, 40);
	ck_assert_uint_eq(gc->runtime_correlation_id, 39);
	ck_assert_uint_eq(gc->device_id, 1);
	ck_assert_uint_eq(gc->context_id, 2);
	ck_assert_uint_eq(gc->stream_id, 7);
	ck_assert_uint_eq(gc->copy_kind, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
	ck_assert_uint_eq(gc->src_kind, CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
	ck_assert_uint_eq(gc->dst_kind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
	ck_assert_uint_eq(gc->cupti_flags, CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC);

	check_head(&got[1], OPTRACE_GPU_REC_KERNEL, sizeof(*gk), 0);
	gk = &got[1].kernel;
	ck_assert_uint_eq(gk->start_ns, 1000);
	ck_assert_uint_eq(gk->end_ns, 3000);
	ck_assert_uint_eq(gk->correlation_id, 41);
	ck_assert_uint_eq(gk->device_id, 1);
	ck_assert_uint_eq(gk->context_id, 2);
	ck_assert_uint_eq(gk->stream_id, 7);
	ck_assert_int_eq(gk->grid_x, 128);
	ck_assert_int_eq(gk->grid_y, 2);
	ck_assert_int_eq(gk->grid_z, 1);
	ck_assert_int_eq(gk->block_x, 256);
	ck_assert_int_eq(gk->block_y, 1);
	ck_assert_int_eq(gk->block_z, 1);
	ck_assert_int_eq(gk->static_shared_bytes, 1024);
	ck_assert_int_eq(gk->dynamic_shared_bytes, 4096);
	ck_assert_uint_eq(gk->registers_per_thread, 32);
	ck_assert_uint_eq(gk->launch_type, CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE);
	ck_assert_int_eq(gk->grid_id, 99);
	ck_assert_uint_eq(gk->name_id, 1);
	ck_assert_int_eq(name_count, 1);
	ck_assert_uint_eq(name_ids[0], 1);
	strcpy(name, "overwritten!");
	ck_assert_str_eq(names_seen[0], "saxpy_kernel");
	ck_assert_str_eq(gpu_names_get(&decoder.names, 1), "saxpy_kernel");

	check_head(&got[2], OPTRACE_GPU_REC_MEMSET, sizeof(*gs), 0);
	gs = &got[2].memset;
	ck_assert_uint_eq(gs->start_ns, 3100);
	ck_assert_uint_eq(gs->end_ns, 3200);
	ck_assert_uint_eq(gs->bytes, 4096);
	ck_assert_uint_eq(gs->correlation_id, 42);
	ck_assert_uint_eq(gs->device_id, 1);
	ck_assert_uint_eq(gs->context_id, 2);
	ck_assert_uint_eq(gs->stream_id, 8);
	ck_assert_uint_eq(gs->value, 0xab);
	ck_assert_uint_eq(gs->memory_kind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
	ck_assert_uint_eq(gs->cupti_flags, CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC);

	check_head(&got[3], OPTRACE_GPU_REC_API, sizeof(*ga), 0);
	ga = &got[3].api;
	ck_assert_uint_eq(ga->start_ns, 900);
	ck_assert_uint_eq(ga->end_ns, 950);
	ck_assert_uint_eq(ga->correlation_id, 41);
	ck_assert_uint_eq(ga->cbid, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
	ck_assert_uint_eq(ga->pid, 1234);
	ck_assert_uint_eq(ga->tid, 1240);
	ck_assert_uint_eq(ga->result, 0);
	ck_assert_uint_eq(ga->api_kind, OPTRACE_GPU_API_RUNTIME);

	ga = &got[4].api;
	check_head(&got[4], OPTRACE_GPU_REC_API, sizeof(*ga), 0);
	ck_assert_uint_eq(ga->cbid, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
	ck_assert_uint_eq(ga->correlation_id, 43);
	ck_assert_uint_eq(ga->result, 700);
	ck_assert_uint_eq(ga->api_kind, OPTRACE_GPU_API_DRIVER);

	check_head(&got[5], OPTRACE_GPU_REC_SYNC, sizeof(*gy), 0);
	gy = &got[5].sync;
	ck_assert_uint_eq(gy->start_ns, 3300);
	ck_assert_uint_eq(gy->end_ns, 3900);
	ck_assert_uint_eq(gy->correlation_id, 44);
	ck_assert_uint_eq(gy->sync_kind, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE);
	ck_assert_uint_eq(gy->context_id, 2);
	ck_assert_uint_eq(gy->stream_id, 7);
	ck_assert_uint_eq(gy->event_id, CUPTI_SYNCHRONIZATION_INVALID_VALUE);
	ck_assert_uint_eq(gy->result, 0);
}
END_TEST

START_TEST(test_bad_times_are_marked_invalid)
{
	const uint64_t min = (uint64_t)INT64_MIN;
	uint64_t times[][2] = { { 0, 100 }, { 100, 0 }, { min, 100 }, { 100, min }, { 200, 100 } };
	CUpti_ActivityAPI api;
	CUpti_ActivityKernel10 k;

	for (size_t i = 0; i < 5; i++) {
		k = kernel("k", times[i][0], times[i][1], i);
		add(&k, sizeof(k));
	}
	memset(&api, 0, sizeof(api));
	api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	api.start = min;
	api.end = min;
	add(&api, sizeof(api));
	k = kernel("k", 10, 10, 9); /* zero length is fine */
	add(&k, sizeof(k));

	ck_assert_uint_eq(gpu_decode_buffer(&decoder, fake_next, buffer, buffer_used, &sink), 7);
	for (int i = 0; i < 6; i++) {
		ck_assert_uint_eq(got[i].head.flags, OPTRACE_GPU_F_TIME_INVALID);
		/* api and kernel share the time fields' places */
		ck_assert_uint_eq(got[i].api.start_ns, 0);
		ck_assert_uint_eq(got[i].api.end_ns, 0);
	}
	ck_assert_uint_eq(got[6].head.flags, 0);
	ck_assert_uint_eq(got[6].kernel.start_ns, 10);
	ck_assert_uint_eq(decoder.time_invalid, 6);
	/* The rest of an invalid record is kept. */
	ck_assert_uint_eq(got[2].kernel.correlation_id, 2);
}
END_TEST

START_TEST(test_unknown_kinds_are_counted_and_skipped)
{
	CUpti_ActivityAPI other;
	CUpti_ActivityKernel10 k = kernel("k", 1, 2, 5);

	memset(&other, 0, sizeof(other));
	other.kind = CUPTI_ACTIVITY_KIND_MARKER;
	add(&other, sizeof(other));
	add(&k, sizeof(k));
	other.kind = (CUpti_ActivityKind)0x7000;
	add(&other, sizeof(other));

	ck_assert_uint_eq(gpu_decode_buffer(&decoder, fake_next, buffer, buffer_used, &sink), 1);
	ck_assert_uint_eq(decoder.unknown, 2);
	ck_assert_uint_eq(decoder.records, 1);
	ck_assert_int_eq(got_count, 1);
	ck_assert_uint_eq(got[0].kernel.correlation_id, 5);
	/* An empty buffer is nothing. */
	ck_assert_uint_eq(gpu_decode_buffer(&decoder, fake_next, buffer, 0, &sink), 0);
}
END_TEST

START_TEST(test_kernel_names_interned_once)
{
	const char *order[] = { "a", "b", "a", "c", "b", NULL, "a" };
	const uint32_t ids[] = { 1, 2, 1, 3, 2, 0, 1 };
	CUpti_ActivityKernel10 k;
	char copy[8];

	for (size_t i = 0; i < 7; i++) {
		k = kernel(order[i], 1, 2, i);
		add(&k, sizeof(k));
	}
	ck_assert_uint_eq(gpu_decode_buffer(&decoder, fake_next, buffer, buffer_used, &sink), 7);
	for (int i = 0; i < 7; i++)
		ck_assert_uint_eq(got[i].kernel.name_id, ids[i]);
	ck_assert_int_eq(name_count, 3);
	ck_assert_str_eq(names_seen[0], "a");
	ck_assert_str_eq(names_seen[1], "b");
	ck_assert_str_eq(names_seen[2], "c");

	/* A later buffer: same names, same ids, announced no more. */
	buffer_used = record_count = 0;
	got_count = 0;
	strcpy(copy, "c");
	k = kernel(copy, 1, 2, 0);
	add(&k, sizeof(k));
	gpu_decode_buffer(&decoder, fake_next, buffer, buffer_used, &sink);
	ck_assert_uint_eq(got[0].kernel.name_id, 3);
	ck_assert_int_eq(name_count, 3);
}
END_TEST

START_TEST(test_many_names_grow_the_table)
{
	char name[32];
	bool added;

	for (uint32_t i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "kernel_%u", i);
		ck_assert_uint_eq(gpu_names_intern(&decoder.names, name, &added), i + 1);
		ck_assert(added);
	}
	for (uint32_t i = 0; i < 5000; i += 7) {
		snprintf(name, sizeof(name), "kernel_%u", i);
		ck_assert_uint_eq(gpu_names_intern(&decoder.names, name, &added), i + 1);
		ck_assert(!added);
		ck_assert_str_eq(gpu_names_get(&decoder.names, i + 1), name);
	}
	ck_assert_ptr_null(gpu_names_get(&decoder.names, 0));
	ck_assert_ptr_null(gpu_names_get(&decoder.names, 5001));
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("cupti_decode");
	TCase *tc = tcase_create("decode");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_every_kind_field_by_field);
	tcase_add_test(tc, test_bad_times_are_marked_invalid);
	tcase_add_test(tc, test_unknown_kinds_are_counted_and_skipped);
	tcase_add_test(tc, test_kernel_names_interned_once);
	tcase_add_test(tc, test_many_names_grow_the_table);
	suite_add_tcase(suite, tc);

	return run_suite(suite);
}
