// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "session/cuda.h"
#include "common/diag.h"
#include "trace/inject_cuda.h"
#include "trace/setup.h"
#include "trace/tracer.h"

/* Unarmed, their semaphores keep CUPTI (and its cost to the target) off. */
void cuda_skip_programs(struct bpf_object *obj)
{
	struct bpf_program *prog;

	bpf_object__for_each_program (prog, obj) {
		if (!strncmp(bpf_program__name(prog), "gpu_", 4))
			bpf_program__set_autoload(prog, false);
	}
}

/*
 * --cuda -p: each running process gets the collector now, through ptrace
 * (trace/inject.c), unless it has it already. The one named by
 * CUDA_INJECTION64_PATH when set, else the one beside the liboptrace the
 * process maps, else beside optrace's. A process it cannot go into is
 * refused (said why, left running as it was) before anything is recorded.
 */
static int load_collector_live(const struct tracer_options *targets, bool quiet)
{
	const char *given = getenv("CUDA_INJECTION64_PATH");
	char buffer[PATH_MAX], why[INJECT_WHY_SIZE];
	const char *fallback = targets->library;
	int err;

	if (!fallback)
		fallback = default_liboptrace(buffer, sizeof(buffer));
	for (int i = 0; i < targets->pid_count; i++) {
		pid_t pid = targets->pids[i];

		err = inject_cuda_collector(pid, given && *given ? given : NULL, fallback, why,
					    sizeof(why));
		if (err < 0) {
			diag("--cuda: %s", why);
			return err;
		}
		if (err == INJECT_ALREADY && why[0])
			diag("--cuda: %s", why);
		else if (err == INJECT_ALREADY && diag_verbosity())
			diag("--cuda: process %d has liboptrace-cupti already", pid);
		else if (err == INJECT_LOADED && diag_verbosity())
			diag("--cuda: %s", why);
		/* Progress as bcc's tools print it, not diag(): -q silences it. */
		if (err == INJECT_LOADED && !quiet)
			fprintf(stderr, "Loaded liboptrace-cupti into process %d.\n", pid);
	}
	return 0;
}

/*
 * --cuda: the command inherits CUDA_INJECTION64_PATH naming the GPU collector
 * installed beside liboptrace (whose probes it fires). One already set wins.
 * Running processes (-p) get it now (load_collector_live).
 */
int cuda_prepare(const struct tracer *tracer, bool quiet, bool counts_all)
{
	const struct tracer_options *targets = &tracer->options;
	char path[PATH_MAX];
	const char *slash;

	if (targets->all && counts_all) {
		if (diag_verbosity())
			diag("--cuda -a: the GPU activity of the processes that have "
			     "liboptrace-cupti (started with CUDA_INJECTION64_PATH); it is loaded "
			     "into none");
		return 0;
	}
	if (targets->all) {
		diag("--cuda loads the collector into the processes of -p PID or -- COMMAND, "
		     "not into every process (-a)");
		return -EINVAL;
	}
	if (!targets->command)
		return load_collector_live(targets, quiet);
	if (getenv("CUDA_INJECTION64_PATH"))
		return 0;
	slash = strrchr(targets->library, '/');
	snprintf(path, sizeof(path), "%.*s/liboptrace-cupti.so",
		 slash ? (int)(slash - targets->library) : 1, slash ? targets->library : ".");
	if (access(path, R_OK)) {
		diag("no %s: it is built only where CUPTI's headers are found "
		     "(CUDA_HOME); or set CUDA_INJECTION64_PATH yourself",
		     path);
		return -ENOENT;
	}
	if (diag_verbosity())
		diag("CUDA_INJECTION64_PATH=%s", path);
	return setenv("CUDA_INJECTION64_PATH", path, 1) ? -errno : 0;
}

bool cuda_collector_running(struct tracer *tracer)
{
	return tracer_alive(tracer) && tracer_targets_map(tracer, "/liboptrace-cupti.so");
}

void cuda_linger(struct tracer *tracer)
{
	struct timespec tick = { 0, 100 * 1000 * 1000 };

	if (!cuda_collector_running(tracer))
		return;
	for (int waited = 0; waited < CUDA_GRACE_MS && tracer_alive(tracer); waited += 100)
		nanosleep(&tick, NULL);
}
