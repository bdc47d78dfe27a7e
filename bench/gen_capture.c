// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Writes a synthetic capture of about N events, shaped like a runtime's:
 * root operations that call a helper that launches a two-point task run by
 * two workers, 11 events each, for the export and report benchmarks. With
 * --gpu each point also launches a kernel (a gpu_launch record on its
 * thread, then an API record and a kernel record, 17 events an operation),
 * the GPU records delivered late in batches of 4096, as CUPTI does.
 *
 * With OPTRACE_CAPTURE_FORMAT=1 in the environment it writes format 1, to
 * compare the formats on the same records.
 *
 * Usage: gen_capture FILE N [--gpu]
 */
#include <linux/types.h>
#include <optrace/abi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <optrace/gpu.h>

#include "bpf/events.h"
#include "capture/capture.h"

#define PID 4242
#define ISSUER 4242

enum { ROOT = 0x1000, HELPER = 0x2000, SITE = 0x3000, TASK = 0x4000 };

static struct capture_writer *writer;
static uint64_t now = 1000000;
static uint64_t written;

static void event(uint32_t tid, int type, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3,
		  uint64_t a4)
{
	struct record_event e = {
		.timestamp = now += 250,
		.tgid = PID,
		.tid = tid,
		.type = (__u16)type,
		.args = { a0, a1, a2, a3, a4 },
	};

	if (capture_write(writer, e.type, &e, sizeof(e)))
		exit(1);
	written++;
}

static void string(uint64_t address, const char *text)
{
	struct record_string s = {
		.tgid = PID, .tid = ISSUER, .type = RECORD_STRING, .address = address
	};

	snprintf(s.text, sizeof(s.text), "%s", text);
	if (capture_write(writer, s.type, &s, sizeof(s)))
		exit(1);
}

/* GPU records wait for their "buffer", as CUPTI's do, then go out together. */
#define GPU_BATCH 4096
static struct record_gpu gpu_pending[GPU_BATCH];
static size_t gpu_pending_count;
static uint64_t gpu_written;
static uint32_t next_correlation = 1;

static void flush_gpu(void)
{
	for (size_t i = 0; i < gpu_pending_count; i++) {
		gpu_pending[i].timestamp = now += 10;
		if (capture_write(writer, RECORD_GPU, &gpu_pending[i], sizeof(gpu_pending[i])))
			exit(1);
	}
	written += gpu_pending_count;
	gpu_written += gpu_pending_count;
	gpu_pending_count = 0;
}

static struct record_gpu *gpu_record(void)
{
	struct record_gpu *r;

	if (gpu_pending_count == GPU_BATCH)
		flush_gpu();
	r = &gpu_pending[gpu_pending_count++];
	memset(r, 0, sizeof(*r));
	r->tgid = PID;
	r->tid = PID + 100; /* CUPTI's buffer thread */
	r->type = RECORD_GPU;
	return r;
}

static uint64_t launches_written;

/*
 * A cudaLaunchKernel on worker tid, now: its gpu_launch record in the
 * thread's order (as liboptrace-cupti marks it), its API record and its
 * kernel a little later, in the next "buffer".
 */
static void launch_kernel(uint32_t tid)
{
	uint32_t correlation = next_correlation++;
	struct optrace_gpu_api api = {
		.head = { OPTRACE_GPU_REC_API, OPTRACE_GPU_RECORD_VERSION, sizeof(api), 0 },
		.start_ns = now + 50,
		.end_ns = now + 100,
		.correlation_id = correlation,
		.tid = tid,
	};
	struct optrace_gpu_kernel kernel = {
		.head = { OPTRACE_GPU_REC_KERNEL, OPTRACE_GPU_RECORD_VERSION, sizeof(kernel), 0 },
		.start_ns = now + 150,
		.end_ns = now + 400,
		.correlation_id = correlation,
		.stream_id = 7,
		.grid_x = 64,
		.block_x = 256,
	};
	struct record_gpu *r;

	event(tid, RECORD_GPU_LAUNCH, correlation, OPTRACE_GPU_API_RUNTIME, 0, 0, 0);
	launches_written++;
	r = gpu_record();
	r->size = sizeof(api);
	memcpy(r->data, &api, sizeof(api));
	r = gpu_record();
	r->size = sizeof(kernel);
	memcpy(r->data, &kernel, sizeof(kernel));
}

int main(int argc, char **argv)
{
	struct capture_writer_opts opts = { .target = "gen_capture" };
	struct capture_counter counts[] = { { capture_counter_name(CAPTURE_GPU_RECORDS), 0 },
					    { capture_counter_name(CAPTURE_GPU_LAUNCHES), 0 } };
	bool gpu = argc == 4 && !strcmp(argv[3], "--gpu");
	uint64_t target, op = 1, task = 1;
	struct timespec start;

	if (argc != 3 && !gpu) {
		fprintf(stderr, "usage: gen_capture FILE N [--gpu]\n");
		return 2;
	}
	target = strtoull(argv[2], NULL, 10);
	if (getenv("OPTRACE_CAPTURE_FORMAT"))
		opts.format_major = (uint16_t)atoi(getenv("OPTRACE_CAPTURE_FORMAT"));
	if (capture_writer_open(&writer, argv[1], &opts))
		return 1;
	/* After the header's clock: exports draw times relative to it, not clamped at 0. */
	clock_gettime(CLOCK_MONOTONIC, &start);
	now = (uint64_t)start.tv_sec * 1000000000 + (uint64_t)start.tv_nsec;
	string(ROOT, "bench.mean");
	string(HELPER, "bench.sum");
	string(SITE, "bench.py:12");
	string(TASK, "ScalarReduction");
	while (written < target) {
		uint64_t root = op++, helper = op++, t = task++;

		event(ISSUER, RECORD_OP_BEGIN, root, 0, 0, ROOT, SITE);
		event(ISSUER, RECORD_OP_MODE, root, OPTRACE_MODE_DEFERRED,
		      OPTRACE_MODE_REASON_HELPERS, 0, 0);
		event(ISSUER, RECORD_OP_BEGIN, helper, root, 1, HELPER, SITE);
		event(ISSUER, RECORD_OP_MODE, helper, OPTRACE_MODE_DEFERRED,
		      OPTRACE_MODE_REASON_ABOVE_THRESHOLD, 0, 0);
		event(ISSUER, RECORD_TASK_LAUNCH, t, helper, root, TASK, 2);
		event(ISSUER + 1, RECORD_TASK_BEGIN, t, 0,
		      gpu ? OPTRACE_VARIANT_GPU : OPTRACE_VARIANT_CPU, 0, 0);
		event(ISSUER + 2, RECORD_TASK_BEGIN, t, 1,
		      gpu ? OPTRACE_VARIANT_GPU : OPTRACE_VARIANT_OPENMP, 1, 0);
		if (gpu) {
			launch_kernel(ISSUER + 1);
			launch_kernel(ISSUER + 2);
		}
		event(ISSUER + 1, RECORD_TASK_END, t, 0, 0, 0, 0);
		event(ISSUER + 2, RECORD_TASK_END, t, 1, 0, 0, 0);
		event(ISSUER, RECORD_OP_END, helper, 0, 0, 0, 0);
		event(ISSUER, RECORD_OP_END, root, 0, 0, 0, 0);
	}
	flush_gpu();
	/* As optrace record says it: how many GPU records (none: no pass over them). */
	counts[0].value = gpu_written;
	counts[1].value = launches_written;
	return capture_close(writer, counts, 2) ? 1 : 0;
}
