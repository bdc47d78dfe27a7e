// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Writes a synthetic capture of about N events, shaped like a runtime's:
 * root operations that call a helper that launches a two-point task run by
 * two workers, 11 events each, for the export and report benchmarks.
 *
 * Usage: gen_capture FILE N
 */
#include <linux/types.h>
#include <optrace/abi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bpf/record.h"
#include "../userspace/capture.h"

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

static const struct capture_counter no_gpu = { CAPTURE_COUNTER_GPU_RECORDS, 0 };

int main(int argc, char **argv)
{
	struct capture_writer_opts opts = { .target = "gen_capture" };
	uint64_t target, op = 1, task = 1;

	if (argc != 3) {
		fprintf(stderr, "usage: gen_capture FILE N\n");
		return 2;
	}
	target = strtoull(argv[2], NULL, 10);
	if (capture_writer_open(&writer, argv[1], &opts))
		return 1;
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
		event(ISSUER + 1, RECORD_TASK_BEGIN, t, 0, OPTRACE_VARIANT_CPU, 0, 0);
		event(ISSUER + 2, RECORD_TASK_BEGIN, t, 1, OPTRACE_VARIANT_OPENMP, 1, 0);
		event(ISSUER + 1, RECORD_TASK_END, t, 0, 0, 0, 0);
		event(ISSUER + 2, RECORD_TASK_END, t, 1, 0, 0, 0);
		event(ISSUER, RECORD_OP_END, helper, 0, 0, 0, 0);
		event(ISSUER, RECORD_OP_END, root, 0, 0, 0, 0);
	}
	/* As optrace record says it: no GPU records, no pass over them. */
	return capture_close(writer, &no_gpu, 1) ? 1 : 0;
}
