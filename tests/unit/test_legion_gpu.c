// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * GPU activity in the Legion Prof export: a capture built record by record
 * (an op whose task point runs on a worker and launches kernels, a memset
 * the op launched itself, a copy launched outside any op, a kernel CUPTI
 * gave no times for), exported and read back by the independent reader of
 * tests/lib/legion_read.c. The GPU records come inside the capture, as
 * `optrace record` writes them (late, after the task ended), or from an
 * OPTRACE_GPU_FILE, beside the capture or alone.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/types.h>
#include <optrace/abi.h>
#include <optrace/gpu.h>

#include "legion_read.h"
#include "testlib.h"
#include "bpf/events.h"
#include "../../probes/cupti/gpufile.h"
#include "capture/capture.h"
#include "output/export_format.h"
#include "session/export_run.h"

#define WORKER_TID_OFFSET 1
#define OP_ID 1
#define TASK_ID 7
#define OP_NAME_ADDR 0x1000
#define SITE_ADDR 0x2000
#define TASK_NAME_ADDR 0x3000
#define KERNEL_NAME_ID 1

/* Correlation ids of the launches. */
enum {
	CORR_KERNEL_DEV0 = 11, /* in the task run, device 0 */
	CORR_COPY = 12,	       /* on the main thread, after the op: outside any op */
	CORR_INVALID = 13,     /* in the task run, no device times */
	CORR_KERNEL_DEV1 = 14, /* in the task run, device 1 */
	CORR_MEMSET = 15,      /* on the main thread, inside the op, before its task */
};

/* Times, ns after base. */
enum {
	T_OP_BEGIN = 100,
	T_MEMSET_API = 150,
	T_TASK_LAUNCH = 200,
	T_TASK_BEGIN = 300,
	T_KERNEL0_API = 400,
	T_INVALID_API = 600,
	T_KERNEL1_API = 700,
	T_TASK_END = 900,
	T_OP_END = 1000,
	T_COPY_API = 2000,
	T_DELIVERY = 3000, /* when the GPU records reach the capture */
};

static uint32_t pid, main_tid, worker_tid;
static uint64_t base;

static uint64_t monotonic_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
}

static void setup(void)
{
	test_dir_setup();
	/* A GPU file's records belong to the process that wrote it: this one. */
	pid = (uint32_t)getpid();
	main_tid = pid;
	worker_tid = pid + WORKER_TID_OFFSET;
	/* Well after the capture's or the GPU file's own clock reading. */
	base = monotonic_ns() + 1000000000ULL;
}

static void teardown(void)
{
	test_dir_teardown();
}

/* ---- GPU records ------------------------------------------------------------ */

union gpu_record {
	struct optrace_gpu_head head;
	struct optrace_gpu_api api;
	struct optrace_gpu_kernel kernel;
	struct optrace_gpu_memcpy copy;
	struct optrace_gpu_memset set;
};

static union gpu_record api(uint32_t correlation_id, uint32_t tid, uint64_t start)
{
	union gpu_record r = { 0 };

	r.api.head = (struct optrace_gpu_head){ OPTRACE_GPU_REC_API, OPTRACE_GPU_RECORD_VERSION,
						sizeof(r.api), 0 };
	r.api.start_ns = base + start;
	r.api.end_ns = base + start + 50;
	r.api.correlation_id = correlation_id;
	r.api.cbid = 211; /* cudaLaunchKernel; not read */
	r.api.pid = pid;
	r.api.tid = tid;
	return r;
}

/* start 0: CUPTI gave no times. */
static union gpu_record kernel(uint32_t correlation_id, uint32_t device_id, uint64_t start,
			       uint64_t end)
{
	union gpu_record r = { 0 };

	r.kernel.head = (struct optrace_gpu_head){ OPTRACE_GPU_REC_KERNEL,
						   OPTRACE_GPU_RECORD_VERSION, sizeof(r.kernel),
						   start ? 0 : OPTRACE_GPU_F_TIME_INVALID };
	r.kernel.start_ns = start ? base + start : 0;
	r.kernel.end_ns = start ? base + end : 0;
	r.kernel.correlation_id = correlation_id;
	r.kernel.device_id = device_id;
	r.kernel.context_id = 1;
	r.kernel.stream_id = 7;
	r.kernel.grid_x = r.kernel.grid_y = r.kernel.grid_z = 1;
	r.kernel.block_x = 128;
	r.kernel.block_y = r.kernel.block_z = 1;
	r.kernel.name_id = KERNEL_NAME_ID;
	return r;
}

static union gpu_record copy_htod(uint32_t correlation_id, uint64_t start, uint64_t end)
{
	union gpu_record r = { 0 };

	r.copy.head = (struct optrace_gpu_head){ OPTRACE_GPU_REC_MEMCPY, OPTRACE_GPU_RECORD_VERSION,
						 sizeof(r.copy), 0 };
	r.copy.start_ns = base + start;
	r.copy.end_ns = base + end;
	r.copy.bytes = 4096;
	r.copy.correlation_id = correlation_id;
	r.copy.device_id = 0;
	r.copy.context_id = 1;
	r.copy.stream_id = 7;
	r.copy.copy_kind = 1; /* HtoD */
	return r;
}

static union gpu_record memset_record(uint32_t correlation_id, uint64_t start, uint64_t end)
{
	union gpu_record r = { 0 };

	r.set.head = (struct optrace_gpu_head){ OPTRACE_GPU_REC_MEMSET, OPTRACE_GPU_RECORD_VERSION,
						sizeof(r.set), 0 };
	r.set.start_ns = base + start;
	r.set.end_ns = base + end;
	r.set.bytes = 256;
	r.set.correlation_id = correlation_id;
	r.set.device_id = 0;
	r.set.context_id = 1;
	r.set.stream_id = 7;
	return r;
}

/* What CUPTI would deliver for the scenario, in one late batch. */
static size_t gpu_records(union gpu_record *out)
{
	size_t n = 0;

	out[n++] = api(CORR_MEMSET, main_tid, T_MEMSET_API);
	out[n++] = memset_record(CORR_MEMSET, 160, 170);
	out[n++] = api(CORR_KERNEL_DEV0, worker_tid, T_KERNEL0_API);
	out[n++] = kernel(CORR_KERNEL_DEV0, 0, 500, 1500);
	out[n++] = api(CORR_INVALID, worker_tid, T_INVALID_API);
	out[n++] = kernel(CORR_INVALID, 0, 0, 0);
	out[n++] = api(CORR_KERNEL_DEV1, worker_tid, T_KERNEL1_API);
	out[n++] = kernel(CORR_KERNEL_DEV1, 1, 800, 850);
	out[n++] = api(CORR_COPY, main_tid, T_COPY_API);
	out[n++] = copy_htod(CORR_COPY, 2100, 2200);
	return n;
}

static const char kernel_name[] = "saxpy_kernel";

static uint32_t correlation_of(const union gpu_record *r)
{
	switch (r->head.type) {
	case OPTRACE_GPU_REC_API:
		return r->api.correlation_id;
	case OPTRACE_GPU_REC_KERNEL:
		return r->kernel.correlation_id;
	case OPTRACE_GPU_REC_MEMCPY:
		return r->copy.correlation_id;
	default:
		return r->set.correlation_id;
	}
}

/* only_outside: the copy and the kernel without times, as a program without ops makes. */
static char *write_gpu_file(const char *name, bool only_outside)
{
	union gpu_record records[16];
	size_t count = gpu_records(records);
	struct gpu_file_writer writer;
	char *path = test_path(name);

	ck_assert_int_eq(gpu_file_create(&writer, path), 0);
	ck_assert_int_eq(gpu_file_write_name(&writer, KERNEL_NAME_ID, kernel_name), 0);
	for (size_t i = 0; i < count; i++) {
		uint32_t correlation_id = correlation_of(&records[i]);

		if (only_outside && correlation_id != CORR_COPY && correlation_id != CORR_INVALID)
			continue;
		ck_assert_int_eq(gpu_file_write(&writer, &records[i]), 0);
	}
	ck_assert_int_eq(gpu_file_close(&writer), 0);
	return path;
}

/* ---- the capture ------------------------------------------------------------ */

static void write_event(struct capture_writer *w, uint64_t at, uint32_t tid, int type, uint64_t a0,
			uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4)
{
	struct record_event event = {
		.timestamp = base + at,
		.tgid = pid,
		.tid = tid,
		.type = (__u16)type,
		.args = { a0, a1, a2, a3, a4 },
	};

	ck_assert_int_eq(capture_write(w, (uint16_t)type, &event, sizeof(event)), 0);
}

static void write_string(struct capture_writer *w, uint64_t address, const char *text)
{
	struct record_string s = {
		.timestamp = base,
		.tgid = pid,
		.tid = main_tid,
		.type = RECORD_STRING,
		.address = address,
	};

	snprintf(s.text, sizeof(s.text), "%s", text);
	ck_assert_int_eq(capture_write(w, RECORD_STRING, &s, sizeof(s)), 0);
}

/*
 * demo.add (deferred) launches add_task, whose one point runs on the worker
 * with the GPU variant; with gpu, the GPU records follow the op's end, with
 * the trailer counter `optrace record` writes.
 */
static char *write_capture(const char *name, bool gpu)
{
	struct capture_writer *w;
	union gpu_record records[16];
	size_t count = 0;
	uint64_t gpu_count = 0;
	char *path = test_path(name);

	ck_assert_int_eq(capture_writer_open(&w, path, NULL), 0);
	write_string(w, OP_NAME_ADDR, "demo.add");
	write_string(w, SITE_ADDR, "main.py:12");
	write_string(w, TASK_NAME_ADDR, "add_task");
	write_event(w, T_OP_BEGIN, main_tid, RECORD_OP_BEGIN, OP_ID, 0, 0, OP_NAME_ADDR, SITE_ADDR);
	write_event(w, T_OP_BEGIN + 10, main_tid, RECORD_OP_MODE, OP_ID, OPTRACE_MODE_DEFERRED, 0,
		    0, 0);
	write_event(w, T_TASK_LAUNCH, main_tid, RECORD_TASK_LAUNCH, TASK_ID, OP_ID, OP_ID,
		    TASK_NAME_ADDR, 1);
	write_event(w, T_TASK_BEGIN, worker_tid, RECORD_TASK_BEGIN, TASK_ID, 0, OPTRACE_VARIANT_GPU,
		    0, 0);
	write_event(w, T_TASK_END, worker_tid, RECORD_TASK_END, TASK_ID, 0, 0, 0, 0);
	write_event(w, T_OP_END, main_tid, RECORD_OP_END, OP_ID, 0, 0, 0, 0);
	if (gpu) {
		struct record_gpu_name n = {
			.timestamp = base + T_DELIVERY,
			.tgid = pid,
			.tid = worker_tid,
			.type = RECORD_GPU_NAME,
			.name_id = KERNEL_NAME_ID,
		};

		snprintf(n.text, sizeof(n.text), "%s", kernel_name);
		ck_assert_int_eq(capture_write(w, RECORD_GPU_NAME, &n, sizeof(n)), 0);
		gpu_count++;
		count = gpu_records(records);
	}
	for (size_t i = 0; i < count; i++) {
		struct record_gpu r = {
			.timestamp = base + T_DELIVERY,
			.tgid = pid,
			.tid = worker_tid, /* CUPTI's buffer thread */
			.type = RECORD_GPU,
			.size = records[i].head.size,
		};

		memcpy(r.data, &records[i], records[i].head.size);
		ck_assert_int_eq(capture_write(w, RECORD_GPU, &r, sizeof(r)), 0);
		gpu_count++;
	}
	{
		struct capture_counter counter = { capture_counter_name(CAPTURE_GPU_RECORDS),
						   gpu_count };

		ck_assert_int_eq(capture_close(w, &counter, 1), 0);
	}
	return path;
}

/* The exporter's time zero: the capture's clock reading, or the GPU file's. */
static uint64_t capture_zero(const char *path)
{
	struct capture_reader *reader;
	uint64_t zero;

	ck_assert_int_eq(capture_reader_open(&reader, path, NULL, 0), 0);
	zero = capture_reader_header(reader)->monotonic_ns;
	capture_reader_close(reader);
	ck_assert_uint_lt(zero, base);
	return zero;
}

static uint64_t gpu_file_zero(const char *path)
{
	struct gpu_file_reader reader;
	uint64_t zero;

	ck_assert_int_eq(gpu_file_open(&reader, path), 0);
	zero = reader.header.created_ns;
	gpu_file_reader_close(&reader);
	ck_assert_uint_lt(zero, base);
	return zero;
}

/* ---- export and read back -------------------------------------------------- */

static void export(const char *path, const char *gpu_file, struct legion_summary *summary)
{
	char *dir = test_path("legion"), *paths[] = { (char *)path }, file[4096], why[512] = "";
	const struct export_options options = {
		.output = dir,
		.paths = (const char *const *)paths,
		.path_count = 1,
		.legion_version = 1008,
		.gpu_file = gpu_file,
	};

	ck_assert_int_eq(export_run(export_format_find("legion"), &options), 0);
	snprintf(file, sizeof(file), "%s/prof_0.gz", dir);
	/* Every rule of docs/legion-format.md the reader checks, strictly. */
	ck_assert_msg(legion_summary_read(file, 1008, summary, why, sizeof(why)) == 0,
		      "%s is not a valid Legion Prof log: %s", file, why);
	ck_assert_uint_eq(summary->process_id, pid);
	free(dir);
}

static const struct legion_task *find_task(const struct legion_summary *s, const char *name,
					   bool gpu)
{
	const struct legion_task *found = NULL;

	for (size_t i = 0; i < s->task_count; i++) {
		const struct legion_task *t = &s->tasks[i];

		if (t->gpu != gpu || !t->task_name || strcmp(t->task_name, name))
			continue;
		ck_assert_msg(!found, "two tasks named %s", name);
		found = t;
	}
	ck_assert_msg(found, "no %s task named %s", gpu ? "GPU" : "CPU", name);
	return found;
}

static const struct legion_task *find_gpu_task_on(const struct legion_summary *s, const char *name,
						  uint64_t gpu_start)
{
	for (size_t i = 0; i < s->task_count; i++) {
		const struct legion_task *t = &s->tasks[i];

		if (t->gpu && t->task_name && !strcmp(t->task_name, name) &&
		    t->gpu_start == gpu_start)
			return &s->tasks[i];
	}
	ck_abort_msg("no GPU task %s starting at %llu", name, (unsigned long long)gpu_start);
	return NULL;
}

static size_t gpu_task_count(const struct legion_summary *s)
{
	size_t count = 0;

	for (size_t i = 0; i < s->task_count; i++)
		count += s->tasks[i].gpu;
	return count;
}

/* A GPUTaskInfo: device interval the activity's, host interval its launch (the API call). */
static void check_intervals(const struct legion_task *t, uint64_t zero, uint64_t launch,
			    uint64_t start, uint64_t end)
{
	ck_assert(t->gpu);
	ck_assert_int_eq(t->proc_kind, 1);
	ck_assert_str_eq(t->variant_name, "gpu");
	ck_assert_uint_eq(t->gpu_start, base + start - zero);
	ck_assert_uint_eq(t->gpu_stop, base + end - zero);
	ck_assert_uint_eq(t->create, base + launch - zero);
	ck_assert_uint_eq(t->ready, base + launch - zero);
	ck_assert_uint_eq(t->start, base + launch - zero);
	ck_assert_uint_eq(t->stop, base + launch + 50 - zero);
}

/* What both ways of bringing the GPU records in must give. */
static void check_attributed(const struct legion_summary *s, uint64_t zero)
{
	/* The operation, a task on its thread's processor. */
	const struct legion_task *top = find_task(s, "demo.add", false);
	const struct legion_task *run = find_task(s, "add_task", false);
	const struct legion_task *k0, *k1, *set, *copy;

	/* The invalid one is left out: four drawn of five. */
	ck_assert_uint_eq(gpu_task_count(s), 4);
	ck_assert_uint_eq(s->records[LEGION_GPU_TASK_INFO], 4);
	/* The worker's GPU-variant processor and one per device. */
	ck_assert_uint_eq(s->procs_by_kind[1], 3);

	/* Kernels the task point launched: op of the point, creator its fevent. */
	k0 = find_gpu_task_on(s, kernel_name, base + 500 - zero);
	k1 = find_gpu_task_on(s, kernel_name, base + 800 - zero);
	check_intervals(k0, zero, T_KERNEL0_API, 500, 1500);
	check_intervals(k1, zero, T_KERNEL1_API, 800, 850);
	ck_assert_uint_eq(k0->task_id, k1->task_id);
	ck_assert_uint_ne(k0->proc_id, k1->proc_id);
	ck_assert_uint_ne(k0->proc_id, run->proc_id);
	ck_assert_uint_ne(k1->proc_id, run->proc_id);
	for (int i = 0; i < 2; i++) {
		const struct legion_task *k = i ? k1 : k0;

		ck_assert_uint_ne(k->op_id, run->op_id); /* a task record owns its op id */
		ck_assert_uint_eq(k->parent_op, run->op_id);
		ck_assert_uint_eq(k->creator, run->fevent);
		ck_assert_ptr_nonnull(k->provenance);
		ck_assert_ptr_nonnull(run->provenance);
		ck_assert_str_eq(k->provenance, run->provenance);
	}
	ck_assert_ptr_nonnull(strstr(run->provenance, "\"op\": \"demo.add\""));
	ck_assert_ptr_nonnull(strstr(run->provenance, "\"mode\": \"deferred\""));

	/* The memset demo.add launched on the main thread, before its task. */
	set = find_task(s, "memset", true);
	ck_assert_uint_eq(set->gpu_start, base + 160 - zero);
	ck_assert_uint_eq(set->gpu_stop, base + 170 - zero);
	ck_assert_uint_eq(set->start, base + T_MEMSET_API - zero);
	ck_assert_uint_eq(set->proc_id, k0->proc_id);
	ck_assert_uint_eq(set->parent_op, top->op_id);
	ck_assert_uint_eq(set->creator, top->fevent);
	ck_assert_ptr_nonnull(set->provenance);
	ck_assert_ptr_nonnull(strstr(set->provenance, "\"op\": \"demo.add\""));
	ck_assert_ptr_nonnull(strstr(set->provenance, "\"call site\": \"main.py:12\""));

	/* The copy after the op: outside any operation, from the main thread. */
	copy = find_task(s, "memcpy HtoD", true);
	check_intervals(copy, zero, T_COPY_API, 2100, 2200);
	ck_assert_uint_eq(copy->proc_id, k0->proc_id);
	ck_assert_uint_eq(copy->parent_op, UINT64_MAX);
	ck_assert_uint_eq(copy->creator, 0);
	ck_assert_ptr_nonnull(copy->provenance);
	ck_assert_ptr_nonnull(strstr(copy->provenance, "launched outside any operation"));

	/* Each has an op of its own, with an OperationInstance. */
	for (size_t i = 0; i < s->task_count; i++)
		for (size_t j = 0; j < i; j++)
			ck_assert_uint_ne(s->tasks[i].op_id, s->tasks[j].op_id);
}

START_TEST(test_capture_gpu_records)
{
	char *capture = write_capture("gpu.optrace", true);
	struct legion_summary s;

	export(capture, NULL, &s);
	check_attributed(&s, capture_zero(capture));
	legion_summary_free(&s);
	free(capture);
}
END_TEST

/* `export --gpu FILE`: the same records from a GPU file beside the capture. */
START_TEST(test_capture_with_gpu_file)
{
	char *capture = write_capture("cpu.optrace", false);
	char *gpu = write_gpu_file("gpu.bin", false);
	struct legion_summary s;

	export(capture, gpu, &s);
	check_attributed(&s, capture_zero(capture));
	legion_summary_free(&s);
	free(capture);
	free(gpu);
}
END_TEST

/* A GPU file alone (no eBPF): its process gets a file, the activity its GPU. */
START_TEST(test_gpu_file_alone)
{
	char *gpu = write_gpu_file("gpu.bin", true);
	uint64_t zero = gpu_file_zero(gpu);
	const struct legion_task *copy;
	struct legion_summary s;

	export(gpu, NULL, &s);
	ck_assert_uint_eq(s.task_count, 1);
	ck_assert_uint_eq(s.procs_by_kind[1], 1);
	copy = find_task(&s, "memcpy HtoD", true);
	check_intervals(copy, zero, T_COPY_API, 2100, 2200);
	ck_assert_uint_eq(copy->parent_op, UINT64_MAX);
	ck_assert_uint_eq(copy->creator, 0);
	ck_assert_ptr_nonnull(copy->provenance);
	ck_assert_ptr_nonnull(strstr(copy->provenance, "launched outside any operation"));
	legion_summary_free(&s);
	free(gpu);
}
END_TEST

/* Without GPU records the export has no GPU processor for devices, no GPUTaskInfo. */
START_TEST(test_capture_without_gpu)
{
	char *capture = write_capture("cpu.optrace", false);
	struct legion_summary s;

	export(capture, NULL, &s);
	ck_assert_uint_eq(s.records[LEGION_GPU_TASK_INFO], 0);
	ck_assert_uint_eq(s.procs_by_kind[1], 1); /* the worker's, for the GPU variant */
	find_task(&s, "add_task", false);
	legion_summary_free(&s);
	free(capture);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("legion_gpu");
	TCase *tc = tcase_create("export");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_capture_gpu_records);
	tcase_add_test(tc, test_capture_with_gpu_file);
	tcase_add_test(tc, test_gpu_file_alone);
	tcase_add_test(tc, test_capture_without_gpu);
	suite_add_tcase(suite, tc);
	return run_suite(suite);
}
