// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Attaches bench/floor.bpf.c's empty programs to op_begin and op_end of
 * process PID, exactly as optrace stat attaches its own (userspace/attach.c),
 * and holds them until the process exits or SIGINT.
 *
 * Usage: floor PID [auto|uprobe-multi|perf-event]
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "floor.skel.h"
#include "trace/attach.h"
#include "trace/targets.h"

static volatile sig_atomic_t exiting;

static void on_signal(int signo)
{
	(void)signo;
	exiting = 1;
}

int main(int argc, char **argv)
{
	struct attacher attacher;
	int mode = ATTACH_AUTO;
	struct library library;
	struct floor_bpf *skel;
	pid_t pid;
	int err;

	if (argc < 2 || argc > 3 || (pid = (pid_t)atoi(argv[1])) <= 0 ||
	    (argc == 3 && (mode = attach_mode_parse(argv[2])) < 0)) {
		fprintf(stderr, "usage: floor PID [auto|uprobe-multi|perf-event]\n");
		return 2;
	}
	err = find_liboptrace(pid, &library);
	if (err) {
		fprintf(stderr, "floor: no liboptrace in process %d: %s\n", pid, strerror(-err));
		return 1;
	}
	skel = floor_bpf__open();
	if (!skel) {
		fprintf(stderr, "floor: cannot open: %s\n", strerror(errno));
		return 1;
	}
	err = attacher_prepare(&attacher, skel->obj, mode);
	err = err ?: floor_bpf__load(skel);
	if (err) {
		fprintf(stderr, "floor: cannot load: %s\n", strerror(-err));
		goto cleanup;
	}
	err = attacher_attach(&attacher, library.path, pid);
	if (err) {
		fprintf(stderr, "floor: cannot attach: %s\n", strerror(-err));
		goto cleanup;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fprintf(stderr, "Tracing...\n");
	while (!exiting && kill(pid, 0) == 0)
		usleep(100 * 1000);

cleanup:
	attacher_destroy(&attacher);
	floor_bpf__destroy(skel);
	return err ? 1 : 0;
}
