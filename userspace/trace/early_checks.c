// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/diag.h"
#include "trace/early_checks.h"
#include "trace/targets.h"

/* 0 if path is a file this process may execute, else why not. */
static int runnable_file(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return errno;
	if (!S_ISREG(st.st_mode) || access(path, X_OK))
		return EACCES; /* what execve() says of a folder, or of a file not executable */
	return 0;
}

int command_runnable(const char *file)
{
	const char *path = getenv("PATH"), *start;
	bool refused = false;

	if (!*file)
		return ENOENT;
	if (strchr(file, '/'))
		return runnable_file(file);
	/* execvp()'s own default, from glibc's confstr(_CS_PATH). */
	if (!path)
		path = "/bin:/usr/bin";
	for (start = path;; start++) {
		const char *end = strchrnul(start, ':');
		char candidate[PATH_MAX];
		int length, error;

		/* An empty entry is the current folder, as execvp() reads it. */
		length = end == start ? snprintf(candidate, sizeof(candidate), "%s", file)
				      : snprintf(candidate, sizeof(candidate), "%.*s/%s",
						 (int)(end - start), start, file);
		if (length > 0 && (size_t)length < sizeof(candidate)) {
			error = runnable_file(candidate);
			if (!error)
				return 0;
			refused |= error == EACCES;
		}
		if (!*end)
			break;
		start = end;
	}
	return refused ? EACCES : ENOENT;
}

bool process_alive(pid_t pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

static int no_process(pid_t pid)
{
	diag("no process %d: -p takes the pid of a running process (optrace list shows those "
	     "that map liboptrace)",
	     pid);
	return -ESRCH;
}

int check_pid_alive(pid_t pid)
{
	return process_alive(pid) ? 0 : no_process(pid);
}

int say_not_regular(pid_t pid)
{
	diag("process %d maps liboptrace at a path that holds no regular file now (a FIFO or a "
	     "device put there, in its own mount namespace or by another user): optrace does "
	     "not read it",
	     pid);
	return -ENOTREGULAR;
}

int check_target_pid(pid_t pid, struct library *library)
{
	int err = find_liboptrace(pid, library);

	if (err == -ESRCH)
		return no_process(pid);
	if (err == -ENOTREGULAR)
		return say_not_regular(pid);
	if (err == -ENOENT) {
		diag("process %d does not map liboptrace: it is not an "
		     "instrumented runtime (optrace list -p %d shows what it has)",
		     pid, pid);
		return err;
	}
	if (err)
		diag("cannot read the mappings of process %d: %s (%s)", pid, strerror(-err),
		     mappings_refused_hint());
	return err;
}
