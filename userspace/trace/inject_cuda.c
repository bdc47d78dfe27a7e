// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The policy of `--cuda -p` (inject_cuda.h): which processes get the GPU
 * collector, and which collector, loaded through the generic loader
 * (inject.c), which knows nothing of it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace/process_read.h"
#include "trace/inject.h"
#include "trace/inject_cuda.h"
#include "trace/inject_target.h"
#include "trace/targets.h"

/* Whether /proc/PID/root/path is the file optrace knows as path (same device and inode). */
static bool visible_in(pid_t pid, const char *path, bool same_file)
{
	char inside[PATH_MAX + 64];
	struct stat here, there;

	snprintf(inside, sizeof(inside), "/proc/%d/root%s", pid, path);
	if (stat(inside, &there) || !S_ISREG(there.st_mode))
		return false;
	if (!same_file)
		return true;
	return !stat(path, &here) && here.st_dev == there.st_dev && here.st_ino == there.st_ino;
}

/* The collector to load: given, beside the process's liboptrace, or beside optrace's. */
static int choose_collector(pid_t pid, const struct library *liboptrace, const char *given,
			    const char *fallback, char *out, size_t out_size, char *why,
			    size_t size)
{
	const char *slash = strrchr(liboptrace->mapped_path, '/');
	char resolved[PATH_MAX];

	if (given) {
		snprintf(out, out_size, "%s", given);
		if (given[0] == '/' && visible_in(pid, given, true))
			return 0;
		snprintf(why, size,
			 "CUDA_INJECTION64_PATH=%s is not a file that process %d sees at that path "
			 "(an absolute path; a process in a container has files of its own)",
			 given, pid);
		return -ENOENT;
	}
	if (slash) {
		snprintf(out, out_size, "%.*s/liboptrace-cupti.so",
			 (int)(slash - liboptrace->mapped_path), liboptrace->mapped_path);
		if (visible_in(pid, out, false))
			return 0;
	}
	if (fallback && (slash = strrchr(fallback, '/'))) {
		snprintf(resolved, sizeof(resolved), "%.*s/liboptrace-cupti.so",
			 (int)(slash - fallback), fallback);
		if (realpath(resolved, out) && visible_in(pid, out, true))
			return 0;
	}
	snprintf(why, size,
		 "no liboptrace-cupti.so beside %s%s%s for process %d: it is built only where "
		 "CUPTI's headers are found (CUDA_HOME); or set CUDA_INJECTION64_PATH",
		 liboptrace->mapped_path, fallback ? " or " : "", fallback ? fallback : "", pid);
	return -ENOENT;
}

int inject_cuda_collector(pid_t pid, const char *collector, const char *fallback_liboptrace,
			  char *why, size_t size)
{
	static const char *const collectors[] = { "liboptrace-cupti.so", NULL };
	static const char *const cuda[] = { "libcuda.so", "libcudart.so", NULL };
	struct inject_request request = {
		.init = "InitializeInjection",
		.error = "optrace_cupti_error",
		.unload_on_failure = true,
	};
	char path[PATH_MAX], name[64], error[256] = "";
	struct library liboptrace;
	uint64_t address;
	bool truncated;
	int err;

	why[0] = '\0';
	process_name(pid, name, sizeof(name));
	if (inject_maps(pid, collectors, path, sizeof(path))) {
		/* There: go on; say so if its start failed (it left its reason). */
		if (!inject_symbol_address(pid, path, request.error, &address) &&
		    !process_read_string(pid, address, error, sizeof(error), &truncated) &&
		    error[0])
			snprintf(why, size,
				 "%s is in process %d (%s) but did not start: %s; no GPU activity "
				 "will come from it",
				 path, pid, name, error);
		return INJECT_ALREADY;
	}
	err = inject_check(pid, why, size);
	if (err)
		return err;
	if (!inject_maps(pid, cuda, NULL, 0)) {
		snprintf(why, size,
			 "process %d (%s) does not use CUDA (it maps neither libcuda nor "
			 "libcudart): there is no GPU activity to record; it is left untouched",
			 pid, name);
		return -ENOENT;
	}
	err = find_liboptrace(pid, &liboptrace);
	if (err == -ENOENT)
		snprintf(why, size,
			 "process %d (%s) does not map liboptrace: it is not an instrumented "
			 "runtime; it is left untouched",
			 pid, name);
	else if (err)
		snprintf(why, size, "cannot read the mappings of process %d (%s): %s (%s)", pid,
			 name, strerror(-err), mappings_refused_hint());
	if (err)
		return err;
	err = choose_collector(pid, &liboptrace, collector, fallback_liboptrace, path, sizeof(path),
			       why, size);
	if (err)
		return err;
	request.library = path;
	return inject_library(pid, &request, why, size);
}
