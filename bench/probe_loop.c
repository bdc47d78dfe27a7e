// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fires liboptrace probes in a tight loop: each iteration is one operation
 * (op_begin + op_end, two probe hits). With --wait it first waits for
 * SIGUSR1, so that a tracer can attach before the measured loop. Prints the
 * thread's CPU time per probe hit, what the traced thread pays (its wall
 * time also counts a tracer's reader that the scheduler put on its core: on
 * 2 cores, 15 ns an event in one run of a few); with --threads N, N threads
 * each run the loop and it prints their CPU time per probe hit, averaged. With
 * --arm it arms the batch probe's semaphore itself, as a tracer would but
 * with no program on the probe: what the library alone costs a traced event.
 * With --names N the operations take N names and call sites in turn, and
 * with --mode each announces its mode (three events an operation): a mix
 * like a runtime's, where one name repeated is the tracers' best case.
 */
#define _GNU_SOURCE
#include <argp.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <optrace/optrace.h>

#include "trace/usdt_notes.h"

#include "start_signal.h"

#define MAX_THREADS 256
#define MAX_NAMES 16

static struct {
	long iterations;
	int wait;
	int threads;
	int arm;
	int names;
	int mode;
	long rate; /* operations a second, 0: as fast as it goes */
} env = { .iterations = 2000000, .names = 1 };

/* Distinct strings, as a runtime's operations and call sites are. */
static const char *const names[MAX_NAMES] = {
	"bench.add",	 "bench.subtract", "bench.multiply", "bench.divide",
	"bench.sum",	 "bench.mean",	   "bench.sqrt",     "bench.exp",
	"bench.dot",	 "bench.sort",	   "bench.fill",     "bench.arange",
	"bench.reshape", "bench.copy",	   "bench.where",    "bench.clip",
};
static const char *const callsites[MAX_NAMES] = {
	"probe_loop.c:1",  "probe_loop.c:2",  "probe_loop.c:3",	 "probe_loop.c:4",
	"probe_loop.c:5",  "probe_loop.c:6",  "probe_loop.c:7",	 "probe_loop.c:8",
	"probe_loop.c:9",  "probe_loop.c:10", "probe_loop.c:11", "probe_loop.c:12",
	"probe_loop.c:13", "probe_loop.c:14", "probe_loop.c:15", "probe_loop.c:16",
};

static const char doc[] = "Fire op_begin/op_end probes in a loop; print ns per probe hit.\n"
			  "\n"
			  "EXAMPLES:\n"
			  "    probe_loop -n 1000000\n"
			  "    probe_loop --wait &   # attach a tracer, then: kill -USR1 $!\n"
			  "    probe_loop -t 8 -n 200000   # 8 threads: CPU ns per hit of each\n"
			  "    probe_loop --arm      # the fast path's library half alone\n"
			  "    probe_loop --names 16 --mode   # a runtime's mix: 16 names, modes\n"
			  "    probe_loop --mode -r 1000000 -n 8000000   # 8 s of 3 M events/s\n";

static const struct argp_option options[] = {
	{ "iterations", 'n', "N", 0, "Operations to run (default 2000000)", 0 },
	{ "wait", 'w', NULL, 0, "Wait for SIGUSR1 before the loop", 0 },
	{ "threads", 't', "N", 0, "Run the loop on N threads; print CPU ns per hit", 0 },
	{ "arm", 'a', NULL, 0, "Arm the batch probe without a tracer (the library's cost)", 0 },
	{ "names", 'N', "N", 0, "Take N names and call sites in turn (1 to 16, default 1)", 0 },
	{ "mode", 'm', NULL, 0, "Announce each operation's mode: three events an operation", 0 },
	{ "rate", 'r', "N", 0, "N operations a second at most (a steady state to record)", 0 },
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
	case 'a':
		env.arm = 1;
		return 0;
	case 'N':
		env.names = (int)strtol(arg, &end, 10);
		if (*end || env.names <= 0 || env.names > MAX_NAMES)
			argp_error(state, "'%s' is not a number of names from 1 to %d", arg,
				   MAX_NAMES);
		return 0;
	case 'm':
		env.mode = 1;
		return 0;
	case 'r':
		env.rate = strtol(arg, &end, 10);
		if (*end || env.rate <= 0)
			argp_error(state, "'%s' is not a positive rate", arg);
		return 0;
	case 't':
		env.threads = (int)strtol(arg, &end, 10);
		if (*end || env.threads <= 0 || env.threads > MAX_THREADS)
			argp_error(state, "'%s' is not a number of threads from 1 to %d", arg,
				   MAX_THREADS);
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

/*
 * What a tracer does to liboptrace's batch semaphore when it attaches (the
 * kernel counts it up through the uprobe's ref_ctr_offset), done from inside:
 * the library then takes the fast path, and its probe site stays a nop.
 */
static int arm_batch_probe(void)
{
	struct usdt_notes notes = {};
	const struct usdt_note *batch;
	Dl_info library;
	int err;

	if (!dladdr((void *)optrace_op_begin, &library) || !library.dli_fname) {
		fprintf(stderr, "probe_loop: cannot find liboptrace in this process\n");
		return -1;
	}
	err = usdt_notes_read(library.dli_fname, "optrace", &notes);
	if (err) {
		fprintf(stderr, "probe_loop: cannot read the probes of %s (%d)\n",
			library.dli_fname, err);
		return -1;
	}
	batch = usdt_notes_find(&notes, "batch");
	if (!batch || !batch->semaphore) {
		fprintf(stderr, "probe_loop: %s has no batch probe with a semaphore\n",
			library.dli_fname);
		usdt_notes_free(&notes);
		return -1;
	}
	++*(volatile unsigned short *)((char *)library.dli_fbase + batch->semaphore);
	usdt_notes_free(&notes);
	return 0;
}

/* With --rate: sleeps until operation done is due. */
static void keep_pace(const struct timespec *start, long done)
{
	struct timespec now, due;
	double due_s = (double)done / (double)env.rate;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((double)(now.tv_sec - start->tv_sec) + (now.tv_nsec - start->tv_nsec) / 1e9 >= due_s)
		return;
	due.tv_sec = start->tv_sec + (time_t)due_s;
	due.tv_nsec = start->tv_nsec + (long)((due_s - (double)(time_t)due_s) * 1e9);
	if (due.tv_nsec >= 1000000000) {
		due.tv_sec++;
		due.tv_nsec -= 1000000000;
	}
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL);
}

static void run_loop(void)
{
	struct timespec start;

	clock_gettime(CLOCK_MONOTONIC, &start);
	if (env.names == 1 && !env.mode && !env.rate) {
		/* The loop as it always was: one name, two events. */
		for (long i = 0; i < env.iterations; i++) {
			uint64_t op = optrace_op_begin("bench.op", "probe_loop.c:1");

			optrace_op_end(op, OPTRACE_STATUS_OK);
		}
		return;
	}
	for (long i = 0; i < env.iterations; i++) {
		int which = (int)(i % env.names);
		uint64_t op = optrace_op_begin(names[which], callsites[which]);

		if (env.mode)
			optrace_op_mode(op, which & 1 ? OPTRACE_MODE_EAGER : OPTRACE_MODE_DEFERRED,
					OPTRACE_MODE_REASON_BELOW_THRESHOLD);
		optrace_op_end(op, OPTRACE_STATUS_OK);
		if (env.rate && i % 1000 == 999)
			keep_pace(&start, i + 1);
	}
}

static double events_per_op(void)
{
	return env.mode ? 3.0 : 2.0;
}

static double seconds_ns(const struct timespec *start, const struct timespec *end)
{
	return (double)(end->tv_sec - start->tv_sec) * 1e9 +
	       (double)(end->tv_nsec - start->tv_nsec);
}

/* One thread's loop: its CPU time, in ns, into *arg. */
static void *thread_loop(void *arg)
{
	struct timespec start, end;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
	run_loop();
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &end);
	*(double *)arg = seconds_ns(&start, &end);
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct argp argp = { .options = options, .parser = parse_arg, .doc = doc };
	static pthread_t threads[MAX_THREADS];
	static double cpu_ns[MAX_THREADS];
	double total = 0;
	int err;

	err = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (err)
		return err;
	if (env.arm && arm_batch_probe())
		return 1;
	if (env.wait)
		wait_start_signal();
	if (!env.threads) {
		thread_loop(&cpu_ns[0]);
		printf("%.1f\n", cpu_ns[0] / (events_per_op() * env.iterations));
		return 0;
	}
	for (int i = 0; i < env.threads; i++) {
		if (pthread_create(&threads[i], NULL, thread_loop, &cpu_ns[i])) {
			fprintf(stderr, "probe_loop: cannot start thread %d\n", i);
			return 1;
		}
	}
	for (int i = 0; i < env.threads; i++) {
		pthread_join(threads[i], NULL);
		total += cpu_ns[i];
	}
	printf("%.1f\n", total / env.threads / (events_per_op() * env.iterations));
	return 0;
}
