// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The cost of a liboptrace call while no tracer is attached, in ns per call
 * over an empty loop measured in the same run. Budget (DESIGN.md): 2 ns.
 *
 * Each configuration runs REPEATS times and keeps its fastest run, the one
 * least disturbed by the machine; the spread is printed beside it.
 */
#include <argp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <optrace/optrace.h>

static struct {
	long iterations;
	int repeats;
} env = {
	.iterations = 50 * 1000 * 1000,
	.repeats = 7,
};

static const char doc[] = "Cost of untraced liboptrace calls over an empty loop.\n"
			  "\n"
			  "EXAMPLES:\n"
			  "    probe_untraced               # 50M calls, best of 7\n"
			  "    probe_untraced -n 10000000 -r 3\n";

static const struct argp_option options[] = {
	{ "iterations", 'n', "N", 0, "Calls per run (default 50000000)", 0 },
	{ "repeats", 'r', "N", 0, "Runs per configuration (default 7)", 0 },
	{},
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	char *end;
	long value;

	switch (key) {
	case 'n':
	case 'r':
		value = strtol(arg, &end, 10);
		if (*end || value <= 0)
			argp_error(state, "'%s' is not a positive number", arg);
		if (key == 'n')
			env.iterations = value;
		else
			env.repeats = (int)value;
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

/* Keeps the compiler from folding the loops away. */
#define barrier() __asm__ __volatile__("" ::: "memory")

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

typedef void (*body_fn)(long iterations);

static void empty_loop(long n)
{
	for (long i = 0; i < n; i++)
		barrier();
}

static void op_begin_end(long n)
{
	for (long i = 0; i < n; i++) {
		uint64_t op = optrace_op_begin("bench.op", OPTRACE_CALLSITE);

		barrier();
		optrace_op_end(op, OPTRACE_STATUS_OK);
	}
}

static void op_mode(long n)
{
	for (long i = 0; i < n; i++) {
		optrace_op_mode(1, OPTRACE_MODE_EAGER, OPTRACE_MODE_REASON_BELOW_THRESHOLD);
		barrier();
	}
}

static void task_begin_end(long n)
{
	for (long i = 0; i < n; i++) {
		optrace_task_begin(1, 0, OPTRACE_VARIANT_CPU, 0);
		barrier();
		optrace_task_end(1, 0, OPTRACE_STATUS_OK);
	}
}

/* A task as a runtime submits and runs it: untraced, the launch keeps its name for dump. */
static void task_launch_run(long n)
{
	for (long i = 0; i < n; i++) {
		uint64_t task = optrace_task_launch(0, "bench.task", 1);

		optrace_task_begin(task, 0, OPTRACE_VARIANT_CPU, 0);
		barrier();
		optrace_task_end(task, 0, OPTRACE_STATUS_OK);
	}
}

static void enabled(long n)
{
	for (long i = 0; i < n; i++) {
		if (optrace_enabled())
			abort();
		barrier();
	}
}

/* Fastest and slowest of env.repeats runs, in ns per iteration. */
static void measure(body_fn body, double *best, double *worst)
{
	*best = 1e30;
	*worst = 0;
	for (int r = 0; r < env.repeats; r++) {
		double start = now_ns();
		double per_iteration;

		body(env.iterations);
		per_iteration = (now_ns() - start) / env.iterations;
		if (per_iteration < *best)
			*best = per_iteration;
		if (per_iteration > *worst)
			*worst = per_iteration;
	}
}

int main(int argc, char **argv)
{
	static const struct argp argp = { .options = options, .parser = parse_arg, .doc = doc };
	static const struct {
		const char *name;
		body_fn body;
		int calls; /* liboptrace calls per iteration */
	} configs[] = {
		{ "op_begin+op_end", op_begin_end, 2 },
		{ "op_mode", op_mode, 1 },
		{ "task_begin+task_end", task_begin_end, 2 },
		{ "task_launch+begin+end", task_launch_run, 3 },
		{ "optrace_enabled", enabled, 1 },
	};
	double base, base_worst;
	int err;

	err = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (err)
		return err;

	measure(empty_loop, &base, &base_worst);
	printf("%-22s %10s %10s %12s %8s\n", "configuration", "ns/iter", "worst", "ns/call-over",
	       "budget");
	printf("%-22s %10.3f %10.3f %12s %8s\n", "empty loop (baseline)", base, base_worst, "-",
	       "-");
	for (unsigned int i = 0; i < sizeof(configs) / sizeof(configs[0]); i++) {
		double best, worst, per_call;

		measure(configs[i].body, &best, &worst);
		per_call = (best - base) / configs[i].calls;
		printf("%-22s %10.3f %10.3f %12.3f %8s\n", configs[i].name, best, worst, per_call,
		       per_call <= 2.0 ? "ok" : "OVER");
	}
	printf("(%ld iterations, best of %d runs; budget: 2 ns per call over the empty loop)\n",
	       env.iterations, env.repeats);
	return 0;
}
