// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * GPU attribution on hand-built records: each kernel or copy goes to the
 * frame (task point or operation) open on its launching thread at its
 * launch, whatever order the records came in; the edge cases of CUPTI.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <optrace/gpu.h>

#include "feed.h"
#include "testlib.h"
#include "../../probes/cupti/gpufile.h"
#include "output/gpu_tables.h"
#include "model/profile.h"

#define PID 100
#define MAIN 100
#define WORKER 101
#define OTHER 102

enum { ADD = 0x1000, HELPER = 0x2000, TASK = 0x3000 };

static struct profile profile;
static struct gpu_index gpu;

/* What the consumer was handed. */
static struct attributed {
	uint32_t correlation;
	uint64_t op;	 /* op id, 0: none */
	uint64_t root;	 /* root op id */
	int variant;	 /* -1: no run */
	uint64_t run_op; /* the run's op id as handed over, 0: none */
	bool launched;	 /* its launch was captured */
	uint64_t device_ns;
} seen[64];
static int seen_count;
static struct profile_op done[16];
static int done_count;
static struct profile_run runs[16];
static int run_count;

static void on_gpu(void *ctx, const struct profile *p, const struct profile_gpu *g)
{
	(void)ctx;
	(void)p;
	ck_assert_int_lt(seen_count, 64);
	seen[seen_count].correlation = g->activity->correlation_id;
	seen[seen_count].op = g->op ? g->op->id : 0;
	seen[seen_count].root = g->root ? g->root->id : 0;
	seen[seen_count].variant = g->run ? g->run->variant : -1;
	seen[seen_count].run_op = g->run && g->run->op ? g->run->op->id : 0;
	seen[seen_count].launched = g->launch != NULL;
	seen[seen_count].device_ns = g->activity->end_ns - g->activity->start_ns;
	seen_count++;
}

static void on_op_done(void *ctx, const struct profile *p, const struct profile_op *op)
{
	(void)ctx;
	(void)p;
	done[done_count++] = *op;
}

static void on_task_run(void *ctx, const struct profile *p, const struct profile_run *run)
{
	(void)ctx;
	(void)p;
	runs[run_count++] = *run;
}

static void setup(void)
{
	struct profile_consumer consumer = {
		.gpu = on_gpu,
		.op_done = on_op_done,
		.task_run = on_task_run,
	};

	seen_count = done_count = run_count = 0;
	profile_init(&profile, &consumer);
	gpu_index_init(&gpu);
}

static void teardown(void)
{
	profile_free(&profile);
	gpu_index_free(&gpu);
}

static void feed(uint64_t ts, uint32_t tid, int type, uint64_t a0, uint64_t a1, uint64_t a2,
		 uint64_t a3, uint64_t a4)
{
	feed_event(&profile, PID, ts, tid, type, a0, a1, a2, a3, a4);
}

static void add_api(uint32_t tid, uint32_t correlation, uint64_t start, uint8_t kind)
{
	struct optrace_gpu_api api = {
		.head = { OPTRACE_GPU_REC_API, 1, sizeof(api), 0 },
		.start_ns = start,
		.end_ns = start ? start + 5 : 0,
		.correlation_id = correlation,
		.tid = tid,
		.api_kind = kind,
	};

	ck_assert_int_eq(gpu_index_add(&gpu, PID, &api, sizeof(api)), 0);
}

static void add_kernel(uint32_t correlation, uint64_t start, uint32_t flags)
{
	struct optrace_gpu_kernel kernel = {
		.head = { OPTRACE_GPU_REC_KERNEL, 1, sizeof(kernel), flags },
		.start_ns = start,
		.end_ns = start + 100,
		.correlation_id = correlation,
		.stream_id = 7,
		.name_id = 1,
	};

	ck_assert_int_eq(gpu_index_add(&gpu, PID, &kernel, sizeof(kernel)), 0);
}

static const struct attributed *find(uint32_t correlation)
{
	for (int i = 0; i < seen_count; i++) {
		if (seen[i].correlation == correlation)
			return &seen[i];
	}
	ck_abort_msg("correlation %u never attributed", correlation);
	return NULL;
}

/*
 * An op (id 1) with a helper (id 2) on MAIN from 100 to 1000; the helper
 * launches task 9 whose point runs on WORKER from 300 to 600.
 */
static void feed_ops(void)
{
	ck_assert_int_eq(gpu_index_seal(&gpu), 0);
	profile_set_gpu(&profile, &gpu);
	feed(100, MAIN, RECORD_OP_BEGIN, 1, 0, 0, ADD, 0);
	feed(200, MAIN, RECORD_OP_BEGIN, 2, 1, 1, HELPER, 0);
	feed(250, MAIN, RECORD_TASK_LAUNCH, 9, 2, 1, TASK, 1);
	feed(300, WORKER, RECORD_TASK_BEGIN, 9, 0, OPTRACE_VARIANT_GPU, 3, 0);
	feed(600, WORKER, RECORD_TASK_END, 9, 0, 0, 0, 0);
	feed(700, MAIN, RECORD_OP_END, 2, 0, 0, 0, 0);
	feed(1000, MAIN, RECORD_OP_END, 1, 0, 0, 0, 0);
	profile_finish(&profile);
}

START_TEST(test_frames)
{
	/* Added newest first, as late buffers deliver them. */
	add_kernel(6, 5000, 0); /* launched on a thread with no frames */
	add_api(OTHER, 6, 400, 0);
	add_kernel(5, 5000, 0); /* launched after the op ended */
	add_api(MAIN, 5, 1100, 0);
	add_kernel(4, 4000, 0); /* the root, after its helper */
	add_api(MAIN, 4, 800, 0);
	add_kernel(3, 3000, 0); /* the helper, on its own thread */
	add_api(MAIN, 3, 350, 0);
	add_kernel(2, 2000, 0); /* the task point */
	add_api(WORKER, 2, 400, 0);
	add_kernel(1, 1000, 0); /* before anything */
	add_api(MAIN, 1, 50, 0);
	feed_ops();

	ck_assert_int_eq(seen_count, 6);
	ck_assert_uint_eq(find(1)->op, 0);
	ck_assert(find(1)->launched);
	ck_assert_uint_eq(find(2)->op, 2); /* the task's launching op ... */
	ck_assert_uint_eq(find(2)->root, 1);
	ck_assert_int_eq(find(2)->variant, OPTRACE_VARIANT_GPU);
	ck_assert_uint_eq(find(3)->op, 2);
	ck_assert_int_eq(find(3)->variant, -1);
	ck_assert_uint_eq(find(4)->op, 1);
	ck_assert_uint_eq(find(5)->op, 0);
	ck_assert_uint_eq(find(6)->op, 0);
	ck_assert_uint_eq(profile.stats.gpu_in_ops, 3);
	ck_assert_uint_eq(profile.stats.gpu_outside, 3);

	/* Totals, before the ops were handed over. */
	ck_assert_int_eq(done_count, 2);
	ck_assert_uint_eq(done[0].id, 2);
	ck_assert_uint_eq(done[0].gpu_count, 2);
	ck_assert_uint_eq(done[0].gpu_ns, 200);
	ck_assert_uint_eq(done[1].id, 1);
	ck_assert_uint_eq(done[1].gpu_count, 1);
	ck_assert_uint_eq(done[1].tree_gpu_ns, 300);
	ck_assert_int_eq(run_count, 1);
	ck_assert_uint_eq(runs[0].gpu_count, 1);
	ck_assert_uint_eq(runs[0].gpu_ns, 100);
}
END_TEST

/* A kernel record as the capture holds it, fed at ts (streamed attribution). */
static void stream_kernel(uint64_t ts, uint32_t correlation, uint64_t start)
{
	struct optrace_gpu_kernel kernel = {
		.head = { OPTRACE_GPU_REC_KERNEL, 1, sizeof(kernel), 0 },
		.start_ns = start,
		.end_ns = start + 100,
		.correlation_id = correlation,
		.stream_id = 7,
	};
	struct record_gpu record = {
		.timestamp = ts,
		.tgid = PID,
		.tid = OTHER,
		.type = RECORD_GPU,
		.size = sizeof(kernel),
	};

	memcpy(record.data, &kernel, sizeof(kernel));
	ck_assert_int_eq(profile_feed(&profile, &record, sizeof(record)), 0);
}

static void stream_launch(uint64_t ts, uint32_t tid, uint32_t correlation, uint32_t flags)
{
	feed(ts, tid, RECORD_GPU_LAUNCH, correlation, OPTRACE_GPU_API_RUNTIME, flags, 0, 0);
}

/*
 * Streamed (a capture with gpu_launch records): each activity goes to the
 * frame open at its launch's record, however late it comes; the frames wait
 * for it (an op is handed over with its GPU time whole); an activity before
 * its launch waits for the launch; a graph's several activities all count;
 * a call whose activity never comes lets its frame go after the horizon.
 */
START_TEST(test_streamed)
{
	ck_assert_int_eq(profile_stream_gpu(&profile), 0);
	stream_launch(50, MAIN, 1, 0); /* before anything */
	feed(100, MAIN, RECORD_OP_BEGIN, 1, 0, 0, ADD, 0);
	stream_kernel(150, 7, 7000); /* before its launch's record */
	stream_launch(160, MAIN, 7, 0);
	feed(200, MAIN, RECORD_OP_BEGIN, 2, 1, 1, HELPER, 0);
	feed(250, MAIN, RECORD_TASK_LAUNCH, 9, 2, 1, TASK, 1);
	feed(300, WORKER, RECORD_TASK_BEGIN, 9, 0, OPTRACE_VARIANT_GPU, 3, 0);
	stream_launch(350, MAIN, 3, 0);	  /* the helper, on its own thread */
	stream_launch(400, WORKER, 2, 0); /* the task point */
	stream_launch(400, OTHER, 6, 0);  /* a thread with no frames */
	feed(600, WORKER, RECORD_TASK_END, 9, 0, 0, 0, 0);
	feed(700, MAIN, RECORD_OP_END, 2, 0, 0, 0, 0);
	stream_launch(800, MAIN, 4, 0); /* the root, after its helper */
	stream_launch(801, MAIN, 4, 0); /* the driver's call of that runtime call */
	stream_launch(900, MAIN, 9, OPTRACE_GPU_LAUNCH_MANY); /* a graph */
	feed(1000, MAIN, RECORD_OP_END, 1, 0, 0, 0, 0);
	stream_launch(1100, MAIN, 5, 0); /* after the op ended */
	/* Nothing is handed over before its GPU work came. */
	ck_assert_int_eq(done_count, 0);
	ck_assert_int_eq(run_count, 0);
	for (uint32_t c = 6; c >= 1; c--)
		stream_kernel(2000 + c, c, c * 1000);
	stream_kernel(2010, 9, 9000);
	stream_kernel(2011, 9, 9500);
	stream_kernel(2012, 8, 8000); /* never launched */
	ck_assert_int_eq(run_count, 1);
	ck_assert_uint_eq(runs[0].gpu_count, 1);
	ck_assert_int_eq(done_count, 1); /* the helper; the root waits for its graph */
	ck_assert_uint_eq(done[0].id, 2);
	ck_assert_uint_eq(done[0].gpu_count, 2);
	ck_assert_uint_eq(done[0].gpu_ns, 200);
	/* A call whose activity never comes holds its op for the horizon only. */
	feed(3000, MAIN, RECORD_OP_BEGIN, 3, 0, 0, ADD, 0);
	stream_launch(3100, MAIN, 10, 0);
	feed(3200, MAIN, RECORD_OP_END, 3, 0, 0, 0, 0);
	ck_assert_int_eq(done_count, 1);
	feed(3200 + 11000000000ull, MAIN, RECORD_OP_BEGIN, 4, 0, 0, ADD, 0);
	ck_assert_int_eq(done_count, 3); /* the graph's and the unfinished call's ops */
	profile_finish(&profile);

	ck_assert_int_eq(seen_count, 10);
	ck_assert_uint_eq(find(1)->op, 0);
	ck_assert(find(1)->launched);
	ck_assert_uint_eq(find(2)->op, 2);
	ck_assert_uint_eq(find(2)->root, 1);
	ck_assert_int_eq(find(2)->variant, OPTRACE_VARIANT_GPU);
	ck_assert_uint_eq(find(3)->op, 2);
	ck_assert_int_eq(find(3)->variant, -1);
	ck_assert_uint_eq(find(4)->op, 1);
	ck_assert_uint_eq(find(5)->op, 0);
	ck_assert_uint_eq(find(6)->op, 0);
	ck_assert_uint_eq(find(7)->op, 1);
	ck_assert(!find(8)->launched);
	ck_assert_uint_eq(profile.stats.gpu_in_ops, 6);
	ck_assert_uint_eq(profile.stats.gpu_outside, 3);
	ck_assert_uint_eq(profile.stats.gpu_unlaunched, 1);
	ck_assert_uint_eq(done[1].id, 1);
	ck_assert_uint_eq(done[1].gpu_count, 4);
	ck_assert_uint_eq(done[1].tree_gpu_ns, 600);
	ck_assert_uint_eq(done[2].id, 3);
}
END_TEST

START_TEST(test_cupti_edge_cases)
{
	struct optrace_gpu_memcpy copy = {
		.head = { OPTRACE_GPU_REC_MEMCPY, 1, sizeof(copy), 0 },
		.start_ns = 900,
		.end_ns = 950,
		.correlation_id = 77, /* the driver's call, not captured */
		.runtime_correlation_id = 13,
		.copy_kind = 1,
	};

	/* Runtime and driver records share an id: attributed once. */
	add_api(WORKER, 11, 420, OPTRACE_GPU_API_DRIVER);
	add_api(WORKER, 11, 410, OPTRACE_GPU_API_RUNTIME);
	add_kernel(11, 2000, 0);
	/* CUPTI's times were 0 / INT64_MIN: kept, counted, 0 ns. */
	add_api(WORKER, 12, 450, 0);
	add_kernel(12, 0, OPTRACE_GPU_F_TIME_INVALID);
	/* A copy found through its runtime correlation id. */
	add_api(MAIN, 13, 150, 0);
	ck_assert_int_eq(gpu_index_add(&gpu, PID, &copy, sizeof(copy)), 0);
	/* No API record at all; and an API record with no time. */
	add_kernel(14, 3000, 0);
	add_api(WORKER, 15, 0, 0);
	add_kernel(15, 3100, 0);
	/* A record too short for its type is counted, not read. */
	ck_assert_int_eq(gpu_index_add(&gpu, PID, &copy, 20), 0);
	/* Ids far apart (not CUPTI's dense ones) are hashed, not arrayed. */
	add_api(MAIN, 4000000000u, 120, 0);
	add_kernel(4000000000u, 3200, 0);
	feed_ops();

	ck_assert_int_eq(seen_count, 6);
	ck_assert_uint_eq(find(4000000000u)->op, 1);
	ck_assert_int_eq(find(11)->variant, OPTRACE_VARIANT_GPU);
	ck_assert_uint_eq(gpu.stats.duplicate_apis, 1);
	ck_assert_uint_eq(find(12)->op, 2);
	ck_assert_uint_eq(find(12)->device_ns, 0);
	ck_assert_uint_eq(gpu.stats.invalid_times, 1);
	ck_assert_uint_eq(find(77)->op, 1);
	ck_assert(!find(14)->launched);
	ck_assert_uint_eq(find(14)->op, 0);
	ck_assert_uint_eq(find(15)->op, 0);
	ck_assert_uint_eq(profile.stats.gpu_unlaunched, 1);
	ck_assert_uint_eq(gpu.stats.malformed, 1);
}
END_TEST

/* A launch still open at the capture's end goes to the frames open then. */
START_TEST(test_cut_frames)
{
	add_api(MAIN, 1, 500, 0);
	add_kernel(1, 600, 0);
	ck_assert_int_eq(gpu_index_seal(&gpu), 0);
	profile_set_gpu(&profile, &gpu);
	feed(100, MAIN, RECORD_OP_BEGIN, 1, 0, 0, ADD, 0);
	feed(200, MAIN, RECORD_WAIT_BEGIN, 1, 0, 0, 0, 0);
	profile_finish(&profile);
	ck_assert_int_eq(seen_count, 1);
	ck_assert_uint_eq(seen[0].op, 1);
	ck_assert_int_eq(done_count, 1);
	ck_assert(done[0].cut);
	ck_assert_uint_eq(done[0].gpu_count, 1);
}
END_TEST

/* The OPTRACE_GPU_FILE the collector writes reads back into the index. */
START_TEST(test_gpu_file)
{
	struct optrace_gpu_kernel kernel = {
		.head = { OPTRACE_GPU_REC_KERNEL, 1, sizeof(kernel), 0 },
		.start_ns = 10,
		.end_ns = 20,
		.correlation_id = 1,
		.name_id = 1,
	};
	struct optrace_gpu_api api = {
		.head = { OPTRACE_GPU_REC_API, 1, sizeof(api), 0 },
		.start_ns = 5,
		.end_ns = 8,
		.correlation_id = 1,
		.tid = 42,
	};
	struct gpu_file_writer writer = { 0 };
	char *path = test_path("gpu.bin"), why[512] = "";
	struct stat st;
	FILE *file;

	ck_assert_int_eq(gpu_file_create(&writer, path), 0);
	ck_assert_int_eq(gpu_file_write_name(&writer, 1, "axpy<float>"), 0);
	ck_assert_int_eq(gpu_file_flush(&writer), 0); /* a block each */
	ck_assert_int_eq(gpu_file_write(&writer, &api), 0);
	ck_assert_int_eq(gpu_file_flush(&writer), 0);
	ck_assert_int_eq(gpu_file_write(&writer, &kernel), 0);
	ck_assert_int_eq(gpu_file_flush(&writer), 0);
	ck_assert_int_eq(gpu_file_write_dropped(&writer, 2), 0);
	ck_assert_int_eq(gpu_file_close(&writer), 0);
	ck_assert(gpu_index_is_file(path));
	ck_assert_int_eq(gpu_index_read_file(&gpu, path, why, sizeof(why)), 4);
	ck_assert_str_eq(why, "");
	ck_assert_int_eq(gpu.file_end, GPU_FILE_END_CLEAN);
	ck_assert_int_eq(gpu_index_seal(&gpu), 0);
	ck_assert_uint_eq(gpu.stats.kernels, 1);
	ck_assert_uint_eq(gpu.stats.dropped, 2);
	ck_assert_str_eq(gpu_activity_name(&gpu, &gpu.activities[0]), "axpy<float>");
	ck_assert_uint_eq(gpu.activities[0].launch, 0);
	ck_assert_uint_eq(gpu.launches[0].tid, 42);

	/* Cut inside its last block of records (the process was killed): the rest reads. */
	ck_assert_int_eq(stat(path, &st), 0);
	/* before the end block (32 + 16) and 8 of the dropped record's 16 */
	ck_assert_int_eq(truncate(path, st.st_size - 48 - 8), 0);
	gpu_index_free(&gpu);
	ck_assert_int_eq(gpu_index_read_file(&gpu, path, why, sizeof(why)), 3);
	ck_assert_msg(strstr(why, "ends 40 bytes into block 3"), "%s", why);
	ck_assert_int_eq(gpu.file_end, GPU_FILE_END_TRUNCATED);

	/* Not a GPU file. */
	file = fopen(path, "w");
	fputs("hello", file);
	fclose(file);
	ck_assert(!gpu_index_is_file(path));
	ck_assert_int_eq(gpu_index_read_file(&gpu, path, why, sizeof(why)), -EPROTO);
	ck_assert_msg(strstr(why, "not an OPTRACE_GPU_FILE"), "%s", why);
	free(path);
}
END_TEST

/* A version 1 file (records after a 32-byte header, no CRC) still reads, and says so. */
START_TEST(test_gpu_file_versions)
{
	struct optrace_gpu_file_header header = {
		.magic = OPTRACE_GPU_FILE_MAGIC,
		.version = 1,
		.header_size = 32,
		.pid = 77,
		.clock_id = 1,
		.record_version = 1,
	};
	struct optrace_gpu_kernel kernel = {
		.head = { OPTRACE_GPU_REC_KERNEL, 1, sizeof(kernel), 0 },
		.start_ns = 10,
		.end_ns = 20,
		.correlation_id = 1,
	};
	char *path = test_path("gpu.bin"), why[512] = "";
	FILE *file;

	file = fopen(path, "w");
	ck_assert_int_eq(fwrite(&header, 32, 1, file), 1);
	ck_assert_int_eq(fwrite(&kernel, sizeof(kernel), 1, file), 1);
	ck_assert_int_eq(fwrite(&kernel, sizeof(kernel), 1, file), 1);
	fclose(file);
	ck_assert_int_eq(gpu_index_read_file(&gpu, path, why, sizeof(why)), 2);
	ck_assert_msg(strstr(why, "version 1, without checksums"), "%s", why);
	ck_assert_int_eq(gpu.file_end, GPU_FILE_END_CLEAN);

	/* A newer version is refused, saying so. */
	header.version = 3;
	file = fopen(path, "w");
	ck_assert_int_eq(fwrite(&header, sizeof(header), 1, file), 1);
	fclose(file);
	ck_assert_int_eq(gpu_index_read_file(&gpu, path, why, sizeof(why)), -EPROTONOSUPPORT);
	ck_assert_msg(strstr(why, "version 3, newer than this optrace reads"), "%s", why);

	/* A version 2 header that fails its CRC: nothing in the file is used. */
	header.version = 2;
	header.header_size = sizeof(header);
	header.crc = 12345;
	file = fopen(path, "w");
	ck_assert_int_eq(fwrite(&header, sizeof(header), 1, file), 1);
	fclose(file);
	ck_assert_int_eq(gpu_index_read_file(&gpu, path, why, sizeof(why)), -EBADMSG);
	ck_assert_msg(strstr(why, "header is damaged"), "%s", why);
	free(path);
}
END_TEST

/* A tracer that came late sees CUPTI's ids in the millions: still found (dense from min). */
START_TEST(test_late_correlation_ids)
{
	add_api(WORKER, 5000001, 400, 0);
	add_kernel(5000001, 2000, 0);
	add_api(MAIN, 5000000, 150, 0);
	add_kernel(5000000, 1000, 0);
	feed_ops();
	ck_assert_int_eq(seen_count, 2);
	ck_assert_int_eq(find(5000001)->variant, OPTRACE_VARIANT_GPU);
	ck_assert_uint_eq(find(5000000)->op, 1);
}
END_TEST

static void feed_ns(uint64_t ts, uint32_t tid, uint32_t ns_tid, int type, uint64_t a0, uint64_t a1,
		    uint64_t a2, uint64_t a3)
{
	struct record_event event = {
		.timestamp = ts,
		.tgid = PID,
		.tid = tid,
		.type = (__u16)type,
		.ns_tid = ns_tid,
		.args = { a0, a1, a2, a3, 0 },
	};

	ck_assert_int_eq(profile_feed(&profile, &event, sizeof(event)), 0);
}

/*
 * In a container CUPTI's tids are the container's: thread B (host 5000,
 * container 7) and thread A (host 7, container 8). A's host id equals B's
 * container id; each still gets its own launches, once. A is first seen
 * ending an op begun before the capture (no container id on an end).
 */
START_TEST(test_container_tids)
{
	add_api(7, 1, 400, 0);
	add_kernel(1, 1000, 0);
	add_api(8, 2, 600, 0);
	add_kernel(2, 1100, 0);
	ck_assert_int_eq(gpu_index_seal(&gpu), 0);
	profile_set_gpu(&profile, &gpu);
	feed_ns(100, 5000, 7, RECORD_OP_BEGIN, 1, 0, 0, ADD);
	feed_ns(300, 7, 0, RECORD_OP_END, 99, 0, 0, 0); /* begun before the capture */
	feed_ns(500, 7, 8, RECORD_OP_BEGIN, 2, 0, 0, HELPER);
	feed_ns(900, 7, 0, RECORD_OP_END, 2, 0, 0, 0);
	feed_ns(1000, 5000, 0, RECORD_OP_END, 1, 0, 0, 0);
	profile_finish(&profile);
	ck_assert_int_eq(seen_count, 2);
	ck_assert_uint_eq(find(1)->op, 1);
	ck_assert_uint_eq(find(2)->op, 2);
	ck_assert_uint_eq(profile.stats.gpu_outside, 0);
}
END_TEST

/*
 * A task point past the task's count still runs after its op ended: its
 * launches go to no op, and the run handed over names none (not a freed one).
 */
START_TEST(test_point_past_its_task)
{
	add_api(OTHER, 1, 550, 0);
	add_kernel(1, 700, 0);
	ck_assert_int_eq(gpu_index_seal(&gpu), 0);
	profile_set_gpu(&profile, &gpu);
	feed(100, MAIN, RECORD_OP_BEGIN, 1, 0, 0, ADD, 0);
	feed(150, MAIN, RECORD_TASK_LAUNCH, 7, 1, 1, TASK, 1);
	feed(200, WORKER, RECORD_TASK_BEGIN, 7, 0, OPTRACE_VARIANT_GPU, 0, 0);
	feed(210, OTHER, RECORD_TASK_BEGIN, 7, 1, OPTRACE_VARIANT_GPU, 1, 0);
	feed(300, WORKER, RECORD_TASK_END, 7, 0, 0, 0, 0);
	feed(400, MAIN, RECORD_OP_END, 1, 0, 0, 0, 0);
	feed(600, OTHER, RECORD_TASK_END, 7, 1, 0, 0, 0);
	profile_finish(&profile);
	ck_assert_int_eq(seen_count, 1);
	ck_assert_uint_eq(seen[0].op, 0);
	ck_assert_uint_eq(seen[0].run_op, 0);
	ck_assert_int_eq(seen[0].variant, OPTRACE_VARIANT_GPU);
}
END_TEST

/* A root id that is not the op's ancestor is not trusted: the outermost op is. */
START_TEST(test_root_not_an_ancestor)
{
	add_api(WORKER, 1, 450, 0);
	add_kernel(1, 700, 0);
	ck_assert_int_eq(gpu_index_seal(&gpu), 0);
	profile_set_gpu(&profile, &gpu);
	feed(100, MAIN, RECORD_OP_BEGIN, 1, 0, 0, ADD, 0);
	feed(110, OTHER, RECORD_OP_BEGIN, 2, 0, 0, HELPER, 0);
	feed(150, OTHER, RECORD_TASK_LAUNCH, 9, 2, 1, TASK, 1); /* root: op 1, elsewhere */
	feed(200, MAIN, RECORD_OP_END, 1, 0, 0, 0, 0);
	feed(400, WORKER, RECORD_TASK_BEGIN, 9, 0, OPTRACE_VARIANT_GPU, 0, 0);
	feed(500, WORKER, RECORD_TASK_END, 9, 0, 0, 0, 0);
	feed(600, OTHER, RECORD_OP_END, 2, 0, 0, 0, 0);
	profile_finish(&profile);
	ck_assert_int_eq(seen_count, 1);
	ck_assert_uint_eq(seen[0].op, 2);
	ck_assert_uint_eq(seen[0].root, 2);
}
END_TEST

/* Times no clock gives, and the same records twice (a capture's and a file's). */
START_TEST(test_bad_times_and_duplicates)
{
	struct optrace_gpu_kernel wild = {
		.head = { OPTRACE_GPU_REC_KERNEL, 1, sizeof(wild), 0 },
		.start_ns = 2000,
		.end_ns = 0xffffffffffffff00ull,
		.correlation_id = 3,
	};

	gpu.sources = 2; /* as if a capture and its file were both read */
	ck_assert_int_eq(gpu_index_add(&gpu, PID, &wild, sizeof(wild)), 0);
	add_api(MAIN, 3, 0x8000000000000000ull, 0); /* INT64_MIN, unflagged */
	for (int copy = 0; copy < 2; copy++) {
		add_api(WORKER, 2, 400, 0);
		add_kernel(2, 2000, 0);
	}
	feed_ops();
	ck_assert_uint_eq(gpu.stats.duplicate_records, 2);
	ck_assert_uint_eq(gpu.stats.kernels, 2);
	ck_assert_uint_eq(gpu.stats.invalid_times, 1);
	ck_assert_int_eq(seen_count, 2);
	ck_assert_uint_eq(find(3)->device_ns, 0);
	ck_assert_uint_eq(find(3)->op, 0); /* its launch has no time: no frame */
	ck_assert_uint_eq(find(2)->op, 2);
	ck_assert_uint_eq(done[1].tree_gpu_ns, 100);
}
END_TEST

static void on_gpu_report(void *ctx, const struct profile *p, const struct profile_gpu *g)
{
	gpu_report_add(ctx, p, g);
}

/* Names from the traced process cannot forge rows or send escapes. */
START_TEST(test_report_names_printable)
{
	struct profile_consumer consumer = { .gpu = on_gpu_report };
	struct gpu_report report;
	char *text = NULL, *line;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);
	int rows = 0;

	gpu_report_init(&report);
	consumer.ctx = &report;
	profile.consumer = consumer;
	ck_assert_int_eq(gpu_index_add_name(&gpu, PID, 1, "evil\nFAKE ROW 9\x1b[31m\xff"), 0);
	add_api(OTHER, 1, 50, 0);
	add_kernel(1, 100, 0);
	ck_assert_int_eq(gpu_index_seal(&gpu), 0);
	profile_set_gpu(&profile, &gpu);
	profile_finish(&profile);
	gpu_report_summarize(&report, &profile, 0);
	gpu_report_print(out, &report, 0);
	fclose(out);
	ck_assert_msg(!strchr(text, '\x1b') && !strstr(text, "\nFAKE"), "%s", text);
	ck_assert_msg(strstr(text, "evil?FAKE ROW 9?[31m?"), "%s", text);
	for (line = text; (line = strchr(line, '\n')); line++)
		rows++;
	/* blank, summary, head, legend, row, blank, head, legend, row */
	ck_assert_int_eq(rows, 9);
	gpu_report_free(&report);
	free(text);
}
END_TEST

/* With helpers shown, GPU rows say which nested operation launched. */
START_TEST(test_report_by_launching_helper)
{
	struct profile_consumer consumer = { .gpu = on_gpu_report };
	struct gpu_report report;
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	gpu_report_init(&report);
	report.show_helpers = true;
	consumer.ctx = &report;
	profile.consumer = consumer;
	feed_text(&profile, PID, ADD, "np.mean");
	feed_text(&profile, PID, HELPER, "np.sum");
	add_api(WORKER, 1, 400, 0); /* the helper's task point */
	add_kernel(1, 1000, 0);
	add_api(MAIN, 2, 800, 0); /* the root itself */
	add_kernel(2, 2000, 0);
	feed_ops();
	gpu_report_summarize(&report, &profile, 0);
	gpu_report_print(out, &report, 0);
	fclose(out);
	ck_assert_msg(strstr(text, "np.mean via np.sum"), "%s", text);
	ck_assert_msg(strstr(text, "\nnp.mean   "), "%s", text);
	gpu_report_free(&report);
	free(text);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("gpu_attribution");
	TCase *tc = tcase_create("attribution");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_checked_fixture(tc, test_dir_setup, test_dir_teardown);
	tcase_add_test(tc, test_frames);
	tcase_add_test(tc, test_streamed);
	tcase_add_test(tc, test_cupti_edge_cases);
	tcase_add_test(tc, test_cut_frames);
	tcase_add_test(tc, test_gpu_file);
	tcase_add_test(tc, test_gpu_file_versions);
	tcase_add_test(tc, test_point_past_its_task);
	tcase_add_test(tc, test_container_tids);
	tcase_add_test(tc, test_late_correlation_ids);
	tcase_add_test(tc, test_root_not_an_ancestor);
	tcase_add_test(tc, test_bad_times_and_duplicates);
	tcase_add_test(tc, test_report_names_printable);
	tcase_add_test(tc, test_report_by_launching_helper);
	suite_add_tcase(suite, tc);

	return run_suite(suite);
}
