/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --cuda, for record, stat, top and serve: GPU activity from liboptrace-cupti,
 * the collector started with the command (CUDA_INJECTION64_PATH) or loaded
 * into running processes (-p) through ptrace (trace/inject.c).
 */
#ifndef OPTRACE_SESSION_CUDA_H
#define OPTRACE_SESSION_CUDA_H

#include <stdbool.h>

struct bpf_object;
struct tracer;

/* Leaves the optrace_gpu probes unarmed: CUPTI stays off, and costs nothing. */
void cuda_skip_programs(struct bpf_object *obj);

/*
 * After tracer_prepare(), for the tracer's targets: the command gets
 * CUDA_INJECTION64_PATH, or each process of -p the collector now (unless it has it). With -a,
 * refused, unless counts_all (stat, top, serve): then the processes that have the collector are
 * counted, and it is loaded into none. 0, or a negative errno once said why (the processes run on
 * as they were).
 */
int cuda_prepare(const struct tracer *tracer, bool quiet, bool counts_all);

/* liboptrace-cupti flushes every 1000 ms; slack for a busy host. */
#define CUDA_GRACE_MS 2000

/* A target still runs and maps liboptrace-cupti: its next flush is to come. */
bool cuda_collector_running(struct tracer *tracer);

/*
 * After the stop, while targets still run with the collector: CUPTI holds up
 * to a second of records, which the collector's next flush brings.
 */
void cuda_linger(struct tracer *tracer);

#endif /* OPTRACE_SESSION_CUDA_H */
