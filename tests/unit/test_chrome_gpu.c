// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Chrome trace export of GPU activity, on a profile built in memory: a
 * track per stream, kernels and copies at their device times, flows from
 * the launching task or op slice, and nothing for activity without times.
 */
#include <math.h>
#include <optrace/gpu.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"
#include "legion_read.h"
#include "feed.h"
#include "testlib.h"
#include "output/chrome.h"
#include "model/gpu_index.h"
#include "model/profile.h"

#define PID 100
#define MAIN 100
#define WORKER 101
#define BASE_NS 500 /* the writer's time zero */

/* Names are addresses in the traced process; these stand for them. */
enum { MATMUL = 0x1000, SITE = 0x2000, TASK = 0x3000 };
enum { GEMM = 1, BAD = 2, INIT = 3 }; /* kernel name ids */
#define INIT_NAME "init<\"x\">"	      /* escaped in JSON, also after "launch " */

static struct profile profile;
static struct gpu_index gpu;

static void feed(uint64_t ts, uint32_t tid, int type, uint64_t a0, uint64_t a1, uint64_t a2,
		 uint64_t a3, uint64_t a4)
{
	feed_event(&profile, PID, ts, tid, type, a0, a1, a2, a3, a4);
}

static void feed_string(uint64_t address, const char *text)
{
	feed_text(&profile, PID, address, text);
}

static void add_api(uint32_t tid, uint32_t correlation, uint64_t start_ns, uint64_t end_ns)
{
	struct optrace_gpu_api api = {
		.head = { OPTRACE_GPU_REC_API, OPTRACE_GPU_RECORD_VERSION, sizeof(api), 0 },
		.start_ns = start_ns,
		.end_ns = end_ns,
		.correlation_id = correlation,
		.cbid = 211, /* cudaLaunchKernel; not read */
		.pid = PID,
		.tid = tid,
	};

	ck_assert_int_eq(gpu_index_add(&gpu, PID, &api, sizeof(api)), 0);
}

static void add_kernel(uint32_t correlation, uint32_t stream, uint32_t name_id, uint32_t flags,
		       uint64_t start_ns, uint64_t end_ns)
{
	struct optrace_gpu_kernel kernel = {
		.head = { OPTRACE_GPU_REC_KERNEL, OPTRACE_GPU_RECORD_VERSION, sizeof(kernel),
			  flags },
		.start_ns = start_ns,
		.end_ns = end_ns,
		.correlation_id = correlation,
		.device_id = 0,
		.context_id = 1,
		.stream_id = stream,
		.grid_x = 2,
		.grid_y = 1,
		.grid_z = 1,
		.block_x = 128,
		.block_y = 1,
		.block_z = 1,
		.name_id = name_id,
	};

	ck_assert_int_eq(gpu_index_add(&gpu, PID, &kernel, sizeof(kernel)), 0);
}

static void add_memcpy(uint32_t correlation, uint32_t stream, uint64_t start_ns, uint64_t end_ns)
{
	struct optrace_gpu_memcpy copy = {
		.head = { OPTRACE_GPU_REC_MEMCPY, OPTRACE_GPU_RECORD_VERSION, sizeof(copy), 0 },
		.start_ns = start_ns,
		.end_ns = end_ns,
		.bytes = 4096,
		.correlation_id = correlation,
		.device_id = 0,
		.context_id = 1,
		.stream_id = stream,
		.copy_kind = 1, /* HtoD */
	};

	ck_assert_int_eq(gpu_index_add(&gpu, PID, &copy, sizeof(copy)), 0);
}

/*
 * Main: a kernel launched outside any op (600), then op matmul (1000-2500)
 * launching task MatMul, which runs on the worker (1200-2000) and launches
 * gemm (API at 1300, device 2100-3100); inside the op, main copies (API at
 * 1400, device 1500-1700) and launches a kernel CUPTI gave no times for.
 */
static void build_gpu(void)
{
	gpu_index_init(&gpu);
	add_api(MAIN, 10, 600, 620);
	add_kernel(10, 7, INIT, 0, 700, 800);
	add_api(WORKER, 1, 1300, 1310);
	add_kernel(1, 7, GEMM, 0, 2100, 3100);
	add_api(MAIN, 2, 1400, 1450);
	add_memcpy(2, 7, 1500, 1700);
	add_api(MAIN, 3, 1460, 1470);
	add_kernel(3, 9, BAD, OPTRACE_GPU_F_TIME_INVALID, 0, 0);
	ck_assert_int_eq(gpu_index_add_name(&gpu, PID, GEMM, "gemm<float>"), 0);
	ck_assert_int_eq(gpu_index_add_name(&gpu, PID, BAD, "bad_kernel"), 0);
	ck_assert_int_eq(gpu_index_add_name(&gpu, PID, INIT, INIT_NAME), 0);
	ck_assert_int_eq(gpu_index_seal(&gpu), 0);
}

static void feed_capture(void)
{
	feed_string(MATMUL, "matmul");
	feed_string(SITE, "main.py:7");
	feed_string(TASK, "MatMul");
	feed(1000, MAIN, RECORD_OP_BEGIN, 1, 0, 0, MATMUL, SITE);
	feed(1100, MAIN, RECORD_TASK_LAUNCH, 10, 1, 1, TASK, 1);
	feed(1200, WORKER, RECORD_TASK_BEGIN, 10, 0, OPTRACE_VARIANT_GPU, 3, 0);
	feed(2000, WORKER, RECORD_TASK_END, 10, 0, 0, 0, 0);
	feed(2500, MAIN, RECORD_OP_END, 1, 0, 0, 0, 0);
	profile_finish(&profile);
}

/* The export of the capture, with the GPU activity or without. */
static struct jv *export(bool with_gpu, char **text)
{
	struct profile_consumer consumer;
	struct chrome_writer *writer = malloc(sizeof(*writer));
	struct jv *root;
	FILE *out = tmpfile();
	long size;

	ck_assert_ptr_nonnull(writer);
	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(chrome_writer_begin(writer, out, BASE_NS, false, &consumer), 0);
	profile_init(&profile, &consumer);
	if (with_gpu) {
		build_gpu();
		profile_set_gpu(&profile, &gpu);
	}
	feed_capture();
	ck_assert_int_eq(chrome_writer_end(writer), 0);
	profile_free(&profile);
	if (with_gpu)
		gpu_index_free(&gpu);
	free(writer);

	size = ftell(out);
	ck_assert_int_gt(size, 0);
	*text = calloc(1, (size_t)size + 1);
	ck_assert_ptr_nonnull(*text);
	rewind(out);
	ck_assert_uint_eq(fread(*text, 1, (size_t)size, out), (size_t)size);
	fclose(out);

	ck_assert_msg(legion_json_valid(*text), "not valid JSON:\n%s", *text);
	root = jv_parse(*text);
	ck_assert_ptr_nonnull(root);
	ck_assert_ptr_nonnull(jv_get(root, "traceEvents"));
	ck_assert_int_eq(jv_get(root, "traceEvents")->type, JV_ARRAY);
	return root;
}

/* Timestamps are microseconds; compared in whole nanoseconds. */
static long long ns(const struct jv *event, const char *key)
{
	return llround(jv_number(event, key) * 1000.0);
}

/* The only event of phase ph named name (any name: NULL) on tid (any: 0). */
static const struct jv *find(const struct jv *root, const char *ph, const char *name, uint32_t tid)
{
	const struct jv *events = jv_get(root, "traceEvents"), *found = NULL;

	for (size_t i = 0; i < events->count; i++) {
		const struct jv *event = events->items[i];

		if (strcmp(jv_string(event, "ph"), ph) ||
		    (name && strcmp(jv_string(event, "name"), name)) ||
		    (tid && (uint32_t)jv_number(event, "tid") != tid))
			continue;
		ck_assert_msg(!found, "two %s events named %s", ph, name ? name : "(any)");
		found = event;
	}
	return found;
}

/* The operation's slice, on main. */
static const struct jv *find_op(const struct jv *root)
{
	const struct jv *events = jv_get(root, "traceEvents");

	for (size_t i = 0; i < events->count; i++) {
		const struct jv *event = events->items[i];

		if (!strcmp(jv_string(event, "ph"), "X") &&
		    !strcmp(jv_string(event, "cat"), "op") && jv_number(event, "tid") == MAIN)
			return event;
	}
	return NULL;
}

/* The track named name: its tid, or 0. */
static uint32_t track(const struct jv *root, const char *name)
{
	const struct jv *events = jv_get(root, "traceEvents");
	uint32_t tid = 0;

	for (size_t i = 0; i < events->count; i++) {
		const struct jv *event = events->items[i];

		if (strcmp(jv_string(event, "ph"), "M") ||
		    strcmp(jv_string(event, "name"), "thread_name") ||
		    strcmp(jv_string(jv_get(event, "args"), "name"), name))
			continue;
		ck_assert_msg(!tid, "two tracks named %s", name);
		ck_assert_int_eq(jv_number(event, "pid"), PID);
		tid = (uint32_t)jv_number(event, "tid");
	}
	return tid;
}

/* The flow event of phase ph with the id of the other end. */
static const struct jv *flow_end(const struct jv *root, const char *ph, double id)
{
	const struct jv *events = jv_get(root, "traceEvents");

	for (size_t i = 0; i < events->count; i++) {
		const struct jv *event = events->items[i];

		if (!strcmp(jv_string(event, "ph"), ph) && jv_number(event, "id") == id)
			return event;
	}
	return NULL;
}

/* The flow ending at slice (an "f" bound to it) starts inside enclosing: its "s". */
static void check_flow(const struct jv *root, const struct jv *slice, const struct jv *enclosing,
		       long long launch_ns)
{
	const struct jv *f = NULL, *s, *events = jv_get(root, "traceEvents");

	for (size_t i = 0; i < events->count && !f; i++) {
		const struct jv *event = events->items[i];

		if (!strcmp(jv_string(event, "ph"), "f") &&
		    jv_number(event, "tid") == jv_number(slice, "tid") &&
		    ns(event, "ts") == ns(slice, "ts"))
			f = event;
	}
	ck_assert_msg(f, "no flow ends at %s", jv_string(slice, "name"));
	ck_assert_str_eq(jv_string(f, "bp"), "e");
	s = flow_end(root, "s", jv_number(f, "id"));
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(jv_string(s, "cat"), jv_string(f, "cat"));
	ck_assert_str_eq(jv_string(s, "name"), jv_string(f, "name"));
	ck_assert_int_eq(jv_number(s, "pid"), PID);
	ck_assert_int_eq(jv_number(s, "tid"), jv_number(enclosing, "tid"));
	ck_assert_int_eq(ns(s, "ts"), launch_ns - BASE_NS);
	ck_assert_int_ge(ns(s, "ts"), ns(enclosing, "ts"));
	ck_assert_int_le(ns(s, "ts"), ns(enclosing, "ts") + ns(enclosing, "dur"));
}

static void check_dim3(const struct jv *args, const char *key, int x)
{
	const struct jv *dim = jv_get(args, key);

	ck_assert_ptr_nonnull(dim);
	ck_assert_int_eq(dim->type, JV_ARRAY);
	ck_assert_uint_eq(dim->count, 3);
	ck_assert_int_eq(dim->items[0]->number, x);
	ck_assert_int_eq(dim->items[1]->number, 1);
	ck_assert_int_eq(dim->items[2]->number, 1);
}

START_TEST(test_kernel_on_its_stream_track)
{
	char *text;
	struct jv *root = export(true, &text);
	const struct jv *kernel, *args, *sort;
	uint32_t stream = track(root, "GPU 0 stream 7");

	ck_assert_uint_ne(stream, 0);
	/* A pseudo-thread of the process, after its CPU threads. */
	ck_assert_uint_ne(stream, MAIN);
	ck_assert_uint_ne(stream, WORKER);
	sort = find(root, "M", "thread_sort_index", stream);
	ck_assert_ptr_nonnull(sort);
	ck_assert_int_gt(jv_number(jv_get(sort, "args"), "sort_index"), 0);

	kernel = find(root, "X", "gemm<float>", 0);
	ck_assert_ptr_nonnull(kernel);
	ck_assert_str_eq(jv_string(kernel, "cat"), "kernel");
	ck_assert_int_eq(jv_number(kernel, "pid"), PID);
	ck_assert_uint_eq((uint32_t)jv_number(kernel, "tid"), stream);
	ck_assert_int_eq(ns(kernel, "ts"), 2100 - BASE_NS);
	ck_assert_int_eq(ns(kernel, "dur"), 1000);
	args = jv_get(kernel, "args");
	ck_assert_str_eq(jv_string(args, "op"), "matmul");
	ck_assert_str_eq(jv_string(args, "launching_op"), "matmul");
	ck_assert_str_eq(jv_string(args, "task"), "MatMul");
	ck_assert_str_eq(jv_string(args, "variant"), "gpu");
	ck_assert_int_eq(jv_number(args, "correlation_id"), 1);
	check_dim3(args, "grid", 2);
	check_dim3(args, "block", 128);
	ck_assert_ptr_null(jv_get(args, "bytes"));
	jv_free(root);
	free(text);
}
END_TEST

START_TEST(test_flow_from_task_to_kernel)
{
	char *text;
	struct jv *root = export(true, &text);
	const struct jv *kernel = find(root, "X", "gemm<float>", 0);
	const struct jv *task = find(root, "X", "MatMul", WORKER);

	ck_assert_ptr_nonnull(kernel);
	ck_assert_ptr_nonnull(task);
	ck_assert_int_eq(ns(task, "ts"), 1200 - BASE_NS);
	check_flow(root, kernel, task, 1300);
	/* The op -> task flow is still there. */
	check_flow(root, task, find_op(root), 1100);
	jv_free(root);
	free(text);
}
END_TEST

START_TEST(test_copy_from_the_op)
{
	char *text;
	struct jv *root = export(true, &text);
	const struct jv *copy = find(root, "X", "memcpy HtoD", 0), *op, *args;

	ck_assert_ptr_nonnull(copy);
	ck_assert_str_eq(jv_string(copy, "cat"), "memcpy");
	ck_assert_uint_eq((uint32_t)jv_number(copy, "tid"), track(root, "GPU 0 stream 7"));
	ck_assert_int_eq(ns(copy, "ts"), 1500 - BASE_NS);
	ck_assert_int_eq(ns(copy, "dur"), 200);
	args = jv_get(copy, "args");
	ck_assert_int_eq(jv_number(args, "bytes"), 4096);
	ck_assert_int_eq(jv_number(args, "correlation_id"), 2);
	ck_assert_str_eq(jv_string(args, "op"), "matmul");
	ck_assert_ptr_null(jv_get(args, "task"));
	ck_assert_ptr_null(jv_get(args, "grid"));
	/* Launched by the op itself: the flow starts in the op's slice. */
	op = find_op(root);
	ck_assert_ptr_nonnull(op);
	check_flow(root, copy, op, 1400);
	jv_free(root);
	free(text);
}
END_TEST

START_TEST(test_launch_outside_ops_is_drawn)
{
	char *text;
	struct jv *root = export(true, &text);
	const struct jv *kernel = find(root, "X", INIT_NAME, 0);
	const struct jv *launch = find(root, "X", "launch " INIT_NAME, MAIN);

	ck_assert_ptr_nonnull(kernel);
	ck_assert_ptr_null(jv_get(jv_get(kernel, "args"), "op"));
	ck_assert_ptr_nonnull(launch);
	ck_assert_int_eq(ns(launch, "ts"), 600 - BASE_NS);
	ck_assert_int_eq(ns(launch, "dur"), 20);
	check_flow(root, kernel, launch, 600);
	/* Launches inside ops and tasks are not drawn: their flows start in those. */
	ck_assert_ptr_null(find(root, "X", "launch gemm<float>", 0));
	ck_assert_ptr_null(find(root, "X", "launch memcpy HtoD", 0));
	jv_free(root);
	free(text);
}
END_TEST

START_TEST(test_invalid_times_not_drawn)
{
	char *text;
	struct jv *root = export(true, &text);
	const struct jv *events = jv_get(root, "traceEvents");
	size_t kernels = 0, flows = 0;

	ck_assert_ptr_null(strstr(text, "bad_kernel"));
	ck_assert_uint_eq(track(root, "GPU 0 stream 9"), 0);
	for (size_t i = 0; i < events->count; i++) {
		const struct jv *event = events->items[i];

		kernels += !strcmp(jv_string(event, "cat"), "kernel");
		flows += !strcmp(jv_string(event, "ph"), "s");
	}
	ck_assert_uint_eq(kernels, 2);
	ck_assert_uint_eq(flows, 4); /* op -> task, and one per drawn activity */
	jv_free(root);
	free(text);
}
END_TEST

START_TEST(test_without_gpu_nothing_changes)
{
	char *text;
	struct jv *root = export(false, &text);

	ck_assert_ptr_null(strstr(text, " stream "));
	ck_assert_ptr_null(strstr(text, "thread_sort_index"));
	ck_assert_ptr_nonnull(find(root, "X", "MatMul", WORKER));
	ck_assert_ptr_nonnull(find(root, "s", NULL, MAIN));
	jv_free(root);
	free(text);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("chrome_gpu");
	TCase *tc = tcase_create("export");

	tcase_add_test(tc, test_kernel_on_its_stream_track);
	tcase_add_test(tc, test_flow_from_task_to_kernel);
	tcase_add_test(tc, test_copy_from_the_op);
	tcase_add_test(tc, test_launch_outside_ops_is_drawn);
	tcase_add_test(tc, test_invalid_times_not_drawn);
	tcase_add_test(tc, test_without_gpu_nothing_changes);
	suite_add_tcase(suite, tc);

	return run_suite(suite);
}
