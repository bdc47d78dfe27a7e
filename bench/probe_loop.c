// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fires liboptrace probes in a tight loop: each iteration is one operation
 * (op_begin + op_end, two probe hits). With --wait it first waits for
 * SIGUSR1, so that a tracer can attach before the measured loop. Prints the
 * ns per probe hit.
 */
#include <argp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <optrace/optrace.h>

static struct {
	long iterations;
	int wait;
} env = { .iterations = 2000000 };

static volatile sig_atomic_t go;

static const char doc[] = "Fire op_begin/op_end probes in a loop; print ns per probe hit.\n"
			  "\n"
			  "EXAMPLES:\n"
			  "    probe_loop -n 1000000\n"
			  "    probe_loop --wait &   # attach a tracer, then: kill -USR1 $!\n";

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

static void on_usr1(int signo)
{
	(void)signo;
	go = 1;
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
	if (env.wait) {
		signal(SIGUSR1, on_usr1);
		while (!go)
			pause();
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (long i = 0; i < env.iterations; i++) {
		uint64_t op = optrace_op_begin("bench.op", "probe_loop.c:1");

		optrace_op_end(op, OPTRACE_STATUS_OK);
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	ns = (end.tv_sec - start.tv_sec) * 1e9 + (end.tv_nsec - start.tv_nsec);
	printf("%.1f\n", ns / (2.0 * env.iterations));
	return 0;
}
