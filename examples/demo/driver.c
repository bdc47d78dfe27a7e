// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace-demo: run workloads on the instrumented demo array runtime, and
 * write the ground truth of every probe it fired, for tests to compare with
 * what a tracer counted.
 *
 * The truth goes to stdout (or --truth FILE) and nothing else does; the
 * human summary goes to stderr. With --procs N the parent forks N children
 * that each run the workload and append their own block to the truth; the
 * parent runs no operation. With --forever the workload repeats until
 * SIGINT or SIGTERM, then the run ends as usual: fence, truth, exit 0.
 * --gpus asks for GPU processors; where there is no GPU (or no CUDA in
 * this build) the run says so and goes on with CPUs only.
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "demo.h"
#include "workloads.h"

#define GPU_AUTO (-1) /* --gpus auto */

static struct env {
	unsigned int workloads;
	size_t size;
	unsigned int iterations;
	unsigned int cpus;
	unsigned int omp_procs;
	unsigned int omp_threads;
	int gpus; /* GPU_AUTO: one per device found */
	const char *gpus_arg;
	unsigned int threads;
	int64_t eager_volume; /* < 0: the runtime's default */
	unsigned int procs;
	bool forever;
	unsigned int pause_ms; /* between rounds, with --forever */
	unsigned int stall_ms; /* -w hang: 0, until SIGUSR1 */
	const char *truth;
	bool quiet;
} env = {
	.workloads = WORKLOAD_ALL,
	.size = 100000,
	.iterations = 50,
	.cpus = 2,
	.omp_threads = 2,
	.threads = 1,
	.eager_volume = -1,
};

const char *argp_program_version = "optrace-demo 0.1";
const char argp_program_doc[] =
	"Run the instrumented demo array runtime and write the ground truth of its probes.\n"
	"\n"
	"USAGE: optrace-demo [-w WORKLOAD] [-s SIZE] [-i N] [--cpus N] [--omp M]\n"
	"           [--omp-threads T] [--gpus N|auto] [--threads N] [--procs N]\n"
	"           [--eager-volume N] [--forever] [--truth FILE] [-q]\n"
	"\n"
	"EXAMPLES:\n"
	"    optrace-demo                      # all workloads, truth on stdout\n"
	"    optrace-demo -w stats --truth t   # the stats pipeline, truth into t\n"
	"    optrace-demo --omp 2              # tasks on two OpenMP processors\n"
	"    optrace-demo --gpus 1             # fill, add, sum, ... on a GPU (CUDA)\n"
	"    optrace-demo --threads 4          # four issuing threads, one runtime\n"
	"    optrace-demo --procs 3 --truth t  # three processes, a truth block each\n"
	"    optrace-demo --forever -q > t &   # until SIGINT/SIGTERM: attach to it\n"
	"    optrace-demo -s 1000              # small arrays: mostly eager\n"
	"    DEMO_FORCE_MODE=deferred optrace-demo  # every operation deferred\n"
	"\n"
	"ENVIRONMENT:\n"
	"    DEMO_FORCE_MODE=eager|deferred  force the mode (CUPYNUMERIC_FORCE_THUNK)\n"
	"    DEMO_MAX_EAGER_VOLUME=N         the eager threshold, if no --eager-volume\n";

enum {
	OPT_CPUS = 256,
	OPT_OMP,
	OPT_OMP_THREADS,
	OPT_GPUS,
	OPT_THREADS,
	OPT_EAGER_VOLUME,
	OPT_PROCS,
	OPT_FOREVER,
	OPT_PAUSE,
	OPT_TRUTH,
	OPT_STALL_MS,
};

static const struct argp_option opts[] = {
	{ "workload", 'w', "NAME", 0,
	  "jacobi, stats, fallback or all (default all); hang: stalls on purpose (SIGUSR1 "
	  "releases it, SIGUSR2 stalls the next pass)",
	  0 },
	{ "stall-ms", OPT_STALL_MS, "MS", 0,
	  "With -w hang: the stall lasts MS milliseconds (default: until SIGUSR1)", 0 },
	{ "size", 's', "N", 0, "Elements per array, at least 3 (default 100000)", 0 },
	{ "iterations", 'i', "N", 0,
	  "Jacobi sweeps; stats and fallback run once per 10 (default 50)", 0 },
	{ "cpus", OPT_CPUS, "N", 0, "CPU processors (default 2)", 0 },
	{ "omp", OPT_OMP, "M", 0, "OpenMP processors (default 0: none)", 0 },
	{ "omp-threads", OPT_OMP_THREADS, "T", 0, "Threads per OpenMP processor (default 2)", 0 },
	{ "gpus", OPT_GPUS, "N|auto", 0,
	  "GPU processors running the CUDA variant; auto: one per device (default 0: none)", 0 },
	{ "threads", OPT_THREADS, "N", 0, "Issuing threads, each with its own arrays (default 1)",
	  0 },
	{ "eager-volume", OPT_EAGER_VOLUME, "N", 0,
	  "Eager threshold in elements (default $DEMO_MAX_EAGER_VOLUME, else 4096)", 0 },
	{ "procs", OPT_PROCS, "N", 0, "Fork N processes that each run the workload", 0 },
	{ "forever", OPT_FOREVER, NULL, 0, "Repeat the workload until SIGINT or SIGTERM", 0 },
	{ "pause", OPT_PAUSE, "MS", 0,
	  "With --forever: sleep MS milliseconds between rounds (a job that is not always busy)",
	  0 },
	{ "truth", OPT_TRUTH, "FILE", 0, "Write the ground truth to FILE (default stdout)", 0 },
	{ "quiet", 'q', NULL, 0, "No summary on stderr", 0 },
	{ NULL, 'h', NULL, OPTION_HIDDEN, "Show the full help", 0 },
	{},
};

static int parse_number(struct argp_state *state, const char *arg, unsigned long long min,
			unsigned long long max, unsigned long long *value)
{
	char *end;

	errno = 0;
	*value = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || *value < min || *value > max) {
		argp_error(state, "'%s' is not a number from %llu to %llu", arg, min, max);
		return -EINVAL;
	}
	return 0;
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	unsigned long long value = 0;

	switch (key) {
	case 'h':
		argp_state_help(state, stderr, ARGP_HELP_STD_HELP);
		break;
	case 'w':
		if (!strcmp(arg, "jacobi"))
			env.workloads = WORKLOAD_JACOBI;
		else if (!strcmp(arg, "stats"))
			env.workloads = WORKLOAD_STATS;
		else if (!strcmp(arg, "fallback"))
			env.workloads = WORKLOAD_FALLBACK;
		else if (!strcmp(arg, "all"))
			env.workloads = WORKLOAD_ALL;
		else if (!strcmp(arg, "hang"))
			env.workloads = WORKLOAD_HANG;
		else
			argp_error(state, "unknown workload '%s'", arg);
		break;
	case 's':
		if (!parse_number(state, arg, 3, 1ULL << 40, &value))
			env.size = (size_t)value;
		break;
	case 'i':
		if (!parse_number(state, arg, 1, 1000000000, &value))
			env.iterations = (unsigned int)value;
		break;
	case OPT_CPUS:
		if (!parse_number(state, arg, 1, 1024, &value))
			env.cpus = (unsigned int)value;
		break;
	case OPT_OMP:
		if (!parse_number(state, arg, 0, 1024, &value))
			env.omp_procs = (unsigned int)value;
		break;
	case OPT_OMP_THREADS:
		if (!parse_number(state, arg, 1, 256, &value))
			env.omp_threads = (unsigned int)value;
		break;
	case OPT_GPUS:
		env.gpus_arg = arg;
		if (!strcmp(arg, "auto"))
			env.gpus = GPU_AUTO;
		else if (!parse_number(state, arg, 0, 64, &value))
			env.gpus = (int)value;
		break;
	case OPT_THREADS:
		if (!parse_number(state, arg, 1, 1024, &value))
			env.threads = (unsigned int)value;
		break;
	case OPT_EAGER_VOLUME:
		if (!parse_number(state, arg, 0, INT64_MAX, &value))
			env.eager_volume = (int64_t)value;
		break;
	case OPT_PROCS:
		if (!parse_number(state, arg, 1, 1024, &value))
			env.procs = (unsigned int)value;
		break;
	case OPT_FOREVER:
		env.forever = true;
		break;
	case OPT_PAUSE:
		if (!parse_number(state, arg, 0, 60000, &value))
			env.pause_ms = (unsigned int)value;
		break;
	case OPT_STALL_MS:
		if (!parse_number(state, arg, 1, 3600000, &value))
			env.stall_ms = (unsigned int)value;
		break;
	case OPT_TRUTH:
		env.truth = arg;
		break;
	case 'q':
		env.quiet = true;
		break;
	case ARGP_KEY_ARG:
		argp_usage(state);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* ---- stopping: SIGINT and SIGTERM end the run cleanly ---- */

static int stop_requested;
static volatile sig_atomic_t forwarding; /* the parent of --procs passes signals on */
static pid_t *children;
static volatile sig_atomic_t children_started;

static void on_signal(int sig)
{
	int saved_errno = errno;
	sig_atomic_t i;

	(void)sig;
	__atomic_store_n(&stop_requested, 1, __ATOMIC_RELAXED);
	/* -w hang: a stalled point would never see the request; it goes on and the run ends. */
	demo_stall_release();
	if (forwarding)
		for (i = 0; i < children_started; i++)
			kill(children[i], SIGTERM);
	errno = saved_errno;
}

/* -w hang: SIGUSR1 lets the stalled task point go on; SIGUSR2 stalls the next pass. */
static void on_hang_signal(int sig)
{
	if (sig == SIGUSR1)
		demo_stall_release();
	else
		workload_hang_again();
}

static bool should_stop(void)
{
	return __atomic_load_n(&stop_requested, __ATOMIC_RELAXED);
}

static int install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	struct sigaction hang = { .sa_handler = on_hang_signal };

	sigemptyset(&hang.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL) ||
	    sigaction(SIGUSR1, &hang, NULL) || sigaction(SIGUSR2, &hang, NULL)) {
		perror("optrace-demo: sigaction");
		return -errno;
	}
	return 0;
}

/* ---- the truth file ---- */

static int truth_fd = STDOUT_FILENO;
static pthread_mutex_t *truth_lock; /* in shared memory, with --procs */

static int truth_open(void)
{
	if (!env.truth)
		return 0;
	/* Children append their blocks to the same open file. */
	truth_fd = open(env.truth, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (truth_fd < 0) {
		fprintf(stderr, "optrace-demo: %s: %s\n", env.truth, strerror(errno));
		return -errno;
	}
	return 0;
}

/* A pipe keeps a write whole only up to PIPE_BUF: children take turns. */
static int truth_lock_create(void)
{
	pthread_mutexattr_t attr;

	truth_lock = mmap(NULL, sizeof(*truth_lock), PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (truth_lock == MAP_FAILED) {
		truth_lock = NULL;
		perror("optrace-demo: mmap");
		return -errno;
	}
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(truth_lock, &attr);
	pthread_mutexattr_destroy(&attr);
	return 0;
}

static int truth_write(void)
{
	int err;

	if (truth_lock && pthread_mutex_lock(truth_lock) == EOWNERDEAD)
		pthread_mutex_consistent(truth_lock);
	err = demo_truth_write(truth_fd);
	if (truth_lock)
		pthread_mutex_unlock(truth_lock);
	if (err)
		fprintf(stderr, "optrace-demo: writing the truth: %s\n", strerror(-err));
	return err;
}

/* ---- one process: issuing threads on a shared runtime ---- */

struct issuer {
	pthread_t thread;
	struct workload_params params;
	struct workload_summary summary;
	int err;
};

static void *issuer_main(void *arg)
{
	struct issuer *issuer = arg;

	issuer->err = workload_run(&issuer->params, &issuer->summary);
	return NULL;
}

static double seconds_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

static void print_summary(const struct workload_summary *s, double seconds, unsigned int gpus)
{
	char who[64], gpu_procs[32] = "";

	if (env.procs)
		snprintf(who, sizeof(who), "optrace-demo[%ld]", (long)getpid());
	else
		snprintf(who, sizeof(who), "optrace-demo");
	if (env.workloads & WORKLOAD_JACOBI)
		fprintf(stderr,
			"%s: jacobi: %u sweeps, %zu elements, residual %.3g -> %.3g,\n"
			"  x[%zu] = %.6f\n",
			who, s->jacobi_sweeps, env.size, s->jacobi_first_residual,
			s->jacobi_last_residual, env.size / 2, s->jacobi_middle);
	if (env.workloads & WORKLOAD_STATS)
		fprintf(stderr,
			"%s: stats: %u passes, mean %.6g, var %.6g,\n  norm %.6g, dot %.6g\n", who,
			s->stats_passes, s->stats_mean, s->stats_var, s->stats_norm, s->stats_dot);
	if (env.workloads & WORKLOAD_FALLBACK)
		fprintf(stderr,
			"%s: fallback: %u passes, median %.6g, %u deliberate errors reported\n",
			who, s->fallback_passes, s->fallback_median, s->fallback_errors_seen);
	if (env.workloads & WORKLOAD_HANG)
		fprintf(stderr, "%s: hang: %u passes, the first stalled\n", who, s->hang_passes);
	if (gpus)
		snprintf(gpu_procs, sizeof(gpu_procs), " + %u GPU", gpus);
	fprintf(stderr,
		"%s: %u round%s x %u thread%s on %u CPU + %u OpenMP%s processors,\n"
		"  eager threshold %llu: %.3f s\n",
		who, s->rounds, s->rounds == 1 ? "" : "s", env.threads, env.threads == 1 ? "" : "s",
		env.cpus, env.omp_procs, gpu_procs, (unsigned long long)demo_max_eager_volume(),
		seconds);
}

/*
 * The GPU processors to start. Asked for and not there (no GPU, no driver,
 * or a build without CUDA): say so, and run on CPUs. Called in each process
 * that runs the workload: CUDA must not be initialized before a fork().
 */
static unsigned int gpus_to_start(void)
{
	const char *why = "unknown";
	int devices;

	if (!env.gpus)
		return 0;
	devices = demo_gpu_devices(&why);
	if (devices > 0)
		return env.gpus == GPU_AUTO ? (unsigned int)devices : (unsigned int)env.gpus;
	if (env.gpus != GPU_AUTO || !env.quiet)
		fprintf(stderr, "optrace-demo: --gpus %s: %s; running on CPUs only\n", env.gpus_arg,
			why);
	return 0;
}

static int run_issuers(struct issuer *issuers)
{
	sigset_t all, old;
	unsigned int i, started;
	int failures = 0;

	if (env.threads == 1) {
		issuer_main(&issuers[0]);
		return issuers[0].err ? 1 : 0;
	}
	/* Signals go to the main thread, which only joins. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (started = 0; started < env.threads; started++) {
		if (pthread_create(&issuers[started].thread, NULL, issuer_main,
				   &issuers[started])) {
			fprintf(stderr, "optrace-demo: cannot start issuing thread %u\n", started);
			failures++;
			__atomic_store_n(&stop_requested, 1, __ATOMIC_RELAXED);
			break;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	for (i = 0; i < started; i++) {
		pthread_join(issuers[i].thread, NULL);
		if (issuers[i].err)
			failures++;
	}
	return failures ? 1 : 0;
}

static int run_process(void)
{
	struct demo_config config = {
		.cpus = env.cpus,
		.omp_procs = env.omp_procs,
		.omp_threads = env.omp_threads,
		.max_eager_volume = env.eager_volume,
		.gpus = gpus_to_start(),
	};
	struct issuer *issuers;
	struct timespec start;
	unsigned int i;
	int rc;

	if (demo_runtime_start(&config)) {
		fprintf(stderr, "optrace-demo: %s\n", demo_last_error());
		return 1;
	}
	issuers = calloc(env.threads, sizeof(*issuers));
	if (!issuers) {
		fprintf(stderr, "optrace-demo: out of memory\n");
		demo_runtime_stop();
		return 1;
	}
	for (i = 0; i < env.threads; i++)
		issuers[i].params = (struct workload_params){
			.kinds = env.workloads,
			.size = env.size,
			.iterations = env.iterations,
			.forever = env.forever,
			.pause_ms = env.pause_ms,
			.stall_ms = env.stall_ms,
			.should_stop = should_stop,
		};

	clock_gettime(CLOCK_MONOTONIC, &start);
	rc = run_issuers(issuers);
	/* Every task completes before the truth is taken. */
	demo_fence();
	demo_runtime_stop();
	if (truth_write())
		rc = 1;
	if (!env.quiet)
		print_summary(&issuers[0].summary, seconds_since(&start), config.gpus);
	free(issuers);
	return rc;
}

/* ---- --procs: children that each run the workload ---- */

static int run_children(void)
{
	sigset_t stop_signals, old;
	unsigned int i;
	int status, failures = 0;
	pid_t pid;

	children = calloc(env.procs, sizeof(*children));
	if (!children || truth_lock_create()) {
		fprintf(stderr, "optrace-demo: cannot set up %u processes\n", env.procs);
		return 1;
	}
	/* Until every pid is known, a signal only sets the flag; then it is forwarded. */
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop_signals, &old);
	fflush(NULL);
	for (i = 0; i < env.procs; i++) {
		pid = fork();
		if (pid == 0) {
			sigprocmask(SIG_SETMASK, &old, NULL);
			demo_truth_reset();
			demo_announce((int)i, (int)env.procs);
			exit(run_process());
		}
		if (pid < 0) {
			perror("optrace-demo: fork");
			failures++;
			__atomic_store_n(&stop_requested, 1, __ATOMIC_RELAXED);
			break;
		}
		children[i] = pid;
		children_started = (sig_atomic_t)(i + 1);
	}
	forwarding = 1;
	if (should_stop())
		for (i = 0; i < (unsigned int)children_started; i++)
			kill(children[i], SIGTERM);
	sigprocmask(SIG_SETMASK, &old, NULL);

	for (i = 0; i < (unsigned int)children_started; i++) {
		while (waitpid(children[i], &status, 0) < 0) {
			if (errno != EINTR) {
				perror("optrace-demo: waitpid");
				failures++;
				goto next;
			}
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "optrace-demo: process %ld failed (%s %d)\n",
				(long)children[i], WIFEXITED(status) ? "exit" : "signal",
				WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
			failures++;
		}
next:;
	}
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct argp argp = {
		.options = opts,
		.parser = parse_arg,
		.doc = argp_program_doc,
	};
	int rc;

	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return 2;

	demo_announce(-1, -1);
	if (install_signals() || truth_open() || demo_truth_write_header(truth_fd))
		return 1;

	rc = env.procs ? run_children() : run_process();

	if (truth_fd != STDOUT_FILENO)
		close(truth_fd);
	return rc;
}
