// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bench/probe_loop.c's loop with LTTng-UST tracepoints in place of
 * liboptrace's probes: each iteration is one operation (op_begin + op_end,
 * two tracepoint hits) with the same arguments. With --wait it first waits
 * for SIGUSR1, so that a session can be set up before the measured loop.
 * Prints the ns per tracepoint hit.
 */
#include <argp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The provider lives in this program: one file, so probes and definitions here. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "lttng_tp.h"
#include "start_signal.h"

#define STACK_DEPTH 64

static struct {
	long iterations;
	int wait;
} env = { .iterations = 2000000 };

/* A runtime's own bookkeeping, as liboptrace keeps it: ids, parent, depth. */
static __thread struct {
	uint64_t next_op;
	uint32_t depth;
	uint64_t stack[STACK_DEPTH];
} thread;

static const char doc[] =
	"Fire LTTng-UST op_begin/op_end tracepoints in a loop; print ns per hit.\n"
	"\n"
	"EXAMPLES:\n"
	"    lttng_loop -n 1000000\n"
	"    lttng_loop --wait &   # start an LTTng session, then: kill -USR1 $!\n";

static const struct argp_option options[] = {
	{ "iterations", 'n', "N", 0, "Operations to run (default 2000000)", 0 },
	{ "wait", 'w', NULL, 0, "Wait for SIGUSR1 before the loop", 0 },
	{},
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	char *end;

	switch (key) {
	case 'n':
		env.iterations = strtol(arg, &end, 10);
		if (*end || env.iterations <= 0)
			argp_error(state, "'%s' is not a positive number", arg);
		return 0;
	case 'w':
		env.wait = 1;
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

/* Out of line, as liboptrace's calls are: the loop cannot fold them away. */
static __attribute__((noinline)) uint64_t op_begin(const char *name, const char *callsite)
{
	uint32_t depth = thread.depth++;
	uint64_t parent =
		depth ? thread.stack[depth < STACK_DEPTH ? depth - 1 : STACK_DEPTH - 1] : 0;
	uint64_t op = ++thread.next_op;

	lttng_ust_tracepoint(optrace_lttng, op_begin, op, parent, depth, name, callsite);
	if (depth < STACK_DEPTH)
		thread.stack[depth] = op;
	return op;
}

static __attribute__((noinline)) void op_end(uint64_t op, int32_t status)
{
	if (thread.depth)
		thread.depth--;
	lttng_ust_tracepoint(optrace_lttng, op_end, op, status);
}

int main(int argc, char **argv)
{
	static const struct argp argp = { .options = options, .parser = parse_arg, .doc = doc };
	struct timespec start, end;
	double ns;
	int err;

	err = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (err)
		return err;
	if (env.wait)
		wait_start_signal();
	/* The thread's CPU time, as probe_loop's: not the consumer daemon's on its core. */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
	for (long i = 0; i < env.iterations; i++) {
		uint64_t op = op_begin("bench.op", "lttng_loop.c:1");

		op_end(op, 0);
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &end);
	ns = (end.tv_sec - start.tv_sec) * 1e9 + (end.tv_nsec - start.tv_nsec);
	printf("%.1f\n", ns / (2.0 * env.iterations));
	return 0;
}
