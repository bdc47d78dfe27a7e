// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Perfetto export against the Chrome export of the same profile, built
 * in memory: each scenario is fed once to each writer, and
 * tests/python/perfetto_read.py decodes the protobuf with Perfetto's schema
 * (protoc and python3-protobuf) and says whether both hold the same tracks,
 * slices (names, categories, times, arguments) and flows. The scenarios
 * are those a capture rarely shows: GPU activity launched from a task, an
 * op, a helper and outside any op (a launch of several kernels, one
 * without times); names that are not UTF-8 or need escaping; operations
 * and task points cut by the end of the capture; and more distinct names
 * than the writer interns before it starts its tables again.
 */
#define _GNU_SOURCE
#include <optrace/gpu.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "feed.h"
#include "testlib.h"
#include "output/chrome.h"
#include "output/perfetto.h"
#include "model/gpu_index.h"
#include "model/profile.h"

#define PID 300
#define MAIN 300
#define WORKER 301
#define LOADER 302  /* a thread that runs no op: it launches only */
#define BASE_NS 100 /* the writers' time zero */

/* Names are addresses in the traced process; these stand for them. */
enum { SOLVE = 0x1000, INNER = 0x1100, SITE = 0x2000, STEP = 0x3000, DETAIL = 0x4000 };
enum { AXPY = 1, GRAPH_A = 2, GRAPH_B = 3, BROKEN = 4 }; /* kernel name ids */

static struct profile profile;
static struct gpu_index gpu;
static bool with_gpu;

static void feed(uint64_t ts, uint32_t tid, int type, uint64_t a0, uint64_t a1, uint64_t a2,
		 uint64_t a3, uint64_t a4)
{
	feed_event(&profile, PID, ts, tid, type, a0, a1, a2, a3, a4);
}

/* ---- GPU activity ------------------------------------------------------------- */

static void add_api(uint32_t tid, uint32_t correlation, uint64_t start_ns, uint64_t end_ns)
{
	struct optrace_gpu_api api = {
		.head = { OPTRACE_GPU_REC_API, OPTRACE_GPU_RECORD_VERSION, sizeof(api), 0 },
		.start_ns = start_ns,
		.end_ns = end_ns,
		.correlation_id = correlation,
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
		.context_id = 1,
		.stream_id = stream,
		.grid_x = 8,
		.grid_y = 4,
		.grid_z = 1,
		.block_x = 256,
		.block_y = 1,
		.block_z = 1,
		.name_id = name_id,
	};

	ck_assert_int_eq(gpu_index_add(&gpu, PID, &kernel, sizeof(kernel)), 0);
}

static void add_copy(int kind, uint32_t correlation, uint32_t stream, uint64_t start_ns,
		     uint64_t end_ns)
{
	struct optrace_gpu_memcpy copy = {
		.head = { (uint16_t)kind, OPTRACE_GPU_RECORD_VERSION, sizeof(copy), 0 },
		.start_ns = start_ns,
		.end_ns = end_ns,
		.bytes = 1 << 20,
		.correlation_id = correlation,
		.context_id = 1,
		.stream_id = stream,
		.copy_kind = 1, /* HtoD */
	};

	ck_assert_int_eq(gpu_index_add(&gpu, PID, &copy, sizeof(copy)), 0);
}

/*
 * Outside any op, main launches a graph (500-520): a kernel without times,
 * then two back to back on stream 5 (600-700, 700-800). In op solve, helper
 * inner copies (API at 1060, device 1150-1190), the op sets memory (API at
 * 4000, device 4100-4150), and each point of task Step launches axpy on
 * stream 3 (APIs at 1300 and 2100, device 3000-3200 and 3300-3500). A
 * thread that runs no op sets memory (API at 4500, device 4600-4650).
 */
static void build_gpu(void)
{
	gpu_index_init(&gpu);
	add_api(MAIN, 1, 500, 520);
	add_kernel(1, 5, BROKEN, OPTRACE_GPU_F_TIME_INVALID, 0, 0);
	add_kernel(1, 5, GRAPH_A, 0, 600, 700);
	add_kernel(1, 5, GRAPH_B, 0, 700, 800);
	add_api(MAIN, 2, 1060, 1070);
	add_copy(OPTRACE_GPU_REC_MEMCPY, 2, 4, 1150, 1190);
	add_api(WORKER, 3, 1300, 1310);
	add_kernel(3, 3, AXPY, 0, 3000, 3200);
	add_api(WORKER, 4, 2100, 2110);
	add_kernel(4, 3, AXPY, 0, 3300, 3500);
	add_api(MAIN, 5, 4000, 4010);
	add_copy(OPTRACE_GPU_REC_MEMSET, 5, 4, 4100, 4150);
	add_api(LOADER, 6, 4500, 4510);
	add_copy(OPTRACE_GPU_REC_MEMSET, 6, 4, 4600, 4650);
	ck_assert_int_eq(gpu_index_add_name(&gpu, PID, AXPY, "axpy<double>"), 0);
	ck_assert_int_eq(gpu_index_add_name(&gpu, PID, GRAPH_A, "graph_a"), 0);
	ck_assert_int_eq(gpu_index_add_name(&gpu, PID, GRAPH_B, "graph\"b\\"), 0);
	ck_assert_int_eq(gpu_index_add_name(&gpu, PID, BROKEN, "broken"), 0);
	ck_assert_int_eq(gpu_index_seal(&gpu), 0);
}

static void feed_solve(void)
{
	feed_text(&profile, PID, SOLVE, "solve");
	feed_text(&profile, PID, INNER, "solve.inner");
	feed_text(&profile, PID, SITE, "main.py:3");
	feed_text(&profile, PID, STEP, "Step");
	feed(1000, MAIN, RECORD_OP_BEGIN, 1, 0, 0, SOLVE, SITE);
	feed(1010, MAIN, RECORD_OP_MODE, 1, OPTRACE_MODE_DEFERRED, OPTRACE_MODE_REASON_HELPERS, 0,
	     0);
	feed(1050, MAIN, RECORD_OP_BEGIN, 2, 1, 1, INNER, SITE);
	feed(1100, MAIN, RECORD_TASK_LAUNCH, 10, 2, 1, STEP, 2);
	feed(1150, MAIN, RECORD_OP_END, 2, 0, 0, 0, 0);
	feed(1200, WORKER, RECORD_TASK_BEGIN, 10, 0, OPTRACE_VARIANT_GPU, 4, 0);
	feed(1800, WORKER, RECORD_TASK_END, 10, 0, 0, 0, 0);
	feed(2000, WORKER, RECORD_TASK_BEGIN, 10, 1, OPTRACE_VARIANT_GPU, 4, 0);
	feed(2600, WORKER, RECORD_TASK_END, 10, 1, 0, 0, 0);
	feed(2700, MAIN, RECORD_WAIT_BEGIN, 1, OPTRACE_WAIT_FENCE, 0, 0, 0);
	feed(3600, MAIN, RECORD_WAIT_END, 1, OPTRACE_WAIT_FENCE, 0, 0, 0);
	feed(5000, MAIN, RECORD_OP_END, 1, 0, 0, 0, 0);
}

/* ---- strings and cuts ----------------------------------------------------------- */

/*
 * Names with quotes, backslashes, control characters and bytes that are
 * not UTF-8; a call site so long that the title is cut (inside a "×");
 * a fallback; and an op, its helper and a task point still open at the end.
 */
static void feed_hostile(void)
{
	char site[700];

	for (size_t i = 0; i + 2 < sizeof(site); i += 2)
		memcpy(site + i, "\xc3\x97", 2);
	site[sizeof(site) - 1] = '\0';
	feed_text(&profile, PID, SOLVE, "np.\"quoted\"\\\x01\t\xff\xc3(x)\xed\xa0\x80");
	feed_text(&profile, PID, INNER, "helper\xe2\x82");
	feed_text(&profile, PID, SITE, site);
	feed_text(&profile, PID, STEP,
		  "T\xc3\xa2"
		  "che");
	feed_text(&profile, PID, DETAIL, "no \"kernel\"\n");
	feed(1000, MAIN, RECORD_OP_BEGIN, 1, 0, 0, SOLVE, SITE);
	feed(1010, MAIN, RECORD_OP_FALLBACK, 1, OPTRACE_FALLBACK_UNSUPPORTED_DTYPE, DETAIL, 0, 0);
	feed(1020, MAIN, RECORD_OP_MODE, 1, OPTRACE_MODE_FALLBACK, OPTRACE_MODE_REASON_FALLBACK, 0,
	     0);
	feed(1030, MAIN, RECORD_OP_END, 1, OPTRACE_STATUS_ERROR, 0, 0, 0);
	feed(2000, MAIN, RECORD_OP_BEGIN, 2, 0, 0, SOLVE, 0);
	feed(2100, MAIN, RECORD_OP_BEGIN, 3, 2, 1, INNER, SITE);
	feed(2200, MAIN, RECORD_TASK_LAUNCH, 20, 3, 2, STEP, 1);
	feed(2300, WORKER, RECORD_TASK_BEGIN, 20, 0, OPTRACE_VARIANT_CPU, 0, 0);
	feed(2400, MAIN, RECORD_WAIT_BEGIN, 3, OPTRACE_WAIT_FUTURE, 0, 0, 0);
}

/* ---- many names --------------------------------------------------------------------- */

#define MANY_OPS 70000

/* More distinct names than the writer keeps (65536): its tables start again. */
static void feed_many_names(void)
{
	char name[32];

	for (uint64_t i = 1; i <= MANY_OPS; i++) {
		snprintf(name, sizeof(name), "op%llu", (unsigned long long)i);
		feed_text(&profile, PID, 0x10000 + i, name);
		feed(1000 + 10 * i, MAIN, RECORD_OP_BEGIN, i, 0, 0, 0x10000 + i, 0);
		feed(1005 + 10 * i, MAIN, RECORD_OP_END, i, 0, 0, 0, 0);
	}
}

/* ---- the two exports, compared -------------------------------------------------- */

/* Feeds the scenario to a fresh profile whose consumer is given. */
static void run_scenario(void (*scenario)(void), const struct profile_consumer *consumer)
{
	profile_init(&profile, consumer);
	if (with_gpu) {
		build_gpu();
		profile_set_gpu(&profile, &gpu);
	}
	scenario();
	profile_finish(&profile);
	profile_free(&profile);
	if (with_gpu)
		gpu_index_free(&gpu);
}

static void export_chrome(void (*scenario)(void), bool show_helpers, const char *path)
{
	struct chrome_writer *writer = malloc(sizeof(*writer));
	struct profile_consumer consumer;
	FILE *out = fopen(path, "w");

	ck_assert_ptr_nonnull(writer);
	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(chrome_writer_begin(writer, out, BASE_NS, show_helpers, &consumer), 0);
	run_scenario(scenario, &consumer);
	ck_assert_int_eq(chrome_writer_end(writer), 0);
	ck_assert_int_eq(fclose(out), 0);
	free(writer);
}

static void export_perfetto(void (*scenario)(void), bool show_helpers, const char *path)
{
	struct perfetto_writer *writer = malloc(sizeof(*writer));
	struct profile_consumer consumer;
	FILE *out = fopen(path, "w");

	ck_assert_ptr_nonnull(writer);
	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(perfetto_writer_begin(writer, out, BASE_NS, show_helpers, &consumer), 0);
	run_scenario(scenario, &consumer);
	ck_assert_int_eq(perfetto_writer_end(writer), 0);
	ck_assert_int_eq(fclose(out), 0);
	free(writer);
}

/* tests/python/perfetto_read.py, found from this file's path (tests run from the top). */
static char *reader_path(void)
{
	const char *here = __FILE__, *unit = strstr(here, "unit/test_perfetto.c");
	char *path;

	ck_assert_ptr_nonnull(unit);
	ck_assert_int_gt(asprintf(&path, "%.*spython/perfetto_read.py", (int)(unit - here), here),
			 0);
	return path;
}

/*
 * Exports scenario both ways (helpers shown or not) and has the reader
 * compare them; returns its summary line ("N slices, ... the same").
 */
static char *compare(void (*scenario)(void), bool show_helpers)
{
	char *chrome = test_path("trace.json"), *perfetto = test_path("trace.pftrace");
	char *out_path = test_path("reader.txt"), *reader = reader_path(), *text, *last;
	size_t length;
	const char *python = getenv("PYTHON") ? getenv("PYTHON") : "/usr/bin/python3";
	char *argv[] = { (char *)python, reader, chrome, perfetto, NULL };
	int status;

	export_chrome(scenario, show_helpers, chrome);
	export_perfetto(scenario, show_helpers, perfetto);
	status = run_command(argv, out_path, NULL, 300);
	text = read_file(out_path);
	ck_assert_ptr_nonnull(text);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
		free(text);
		text = NULL;
	} else {
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			      "the exports differ (status %d):\n%.3000s", status, text);
	}
	free(chrome);
	free(perfetto);
	free(out_path);
	free(reader);
	if (!text)
		return NULL;
	/* The last line. */
	length = strlen(text);
	while (length && text[length - 1] == '\n')
		text[--length] = '\0';
	last = strrchr(text, '\n');
	last = strdup(last ? last + 1 : text);
	free(text);
	return last;
}

#define COMPARE(scenario, helpers, summary)                                           \
	do {                                                                          \
		summary = compare(scenario, helpers);                                 \
		if (!summary)                                                         \
			SKIP_TEST("no protoc or python3-protobuf (scripts/deps.sh)"); \
	} while (0)

START_TEST(test_gpu_activity_and_flows)
{
	char *summary;

	with_gpu = true;
	COMPARE(feed_solve, false, summary);
	/*
	 * Op, two points, wait, two launches, 2 graph kernels, copy, 2 axpy,
	 * 2 memsets; flows to the points, and to each kernel, copy and memset.
	 */
	ck_assert_msg(strstr(summary, "13 slices, 9 flows"), "%s", summary);
	free(summary);
	COMPARE(feed_solve, true, summary);
	ck_assert_msg(strstr(summary, "14 slices, 9 flows"), "%s", summary);
	free(summary);
	with_gpu = false;
}
END_TEST

START_TEST(test_hostile_names_and_cuts)
{
	char *summary;

	COMPARE(feed_hostile, false, summary);
	/* Two ops (one cut) and the cut point; the wait never ended: not drawn. */
	ck_assert_msg(strstr(summary, "3 slices, 1 flows"), "%s", summary);
	free(summary);
	COMPARE(feed_hostile, true, summary);
	ck_assert_msg(strstr(summary, "4 slices, 1 flows"), "%s", summary);
	free(summary);
}
END_TEST

START_TEST(test_interned_tables_start_again)
{
	const char *clears;
	char *summary;

	COMPARE(feed_many_names, false, summary);
	ck_assert_msg(strstr(summary, "70000 slices, 0 flows"), "%s", summary);
	/* Titles and name arguments: twice as many strings as the tables keep. */
	clears = strstr(summary, "packets, ");
	ck_assert_ptr_nonnull(clears);
	ck_assert_msg(atoi(clears + strlen("packets, ")) >= 3, "%s", summary);
	free(summary);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("perfetto");
	TCase *tc = tcase_create("against chrome");

	tcase_add_checked_fixture(tc, test_dir_setup, test_dir_teardown);
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_gpu_activity_and_flows);
	tcase_add_test(tc, test_hostile_names_and_cuts);
	tcase_add_test(tc, test_interned_tables_start_again);
	suite_add_tcase(suite, tc);

	return run_suite(suite);
}
