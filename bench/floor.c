// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Attaches bench/floor.bpf.c's empty programs to op_begin and op_end of
 * process PID, exactly as optrace stat attaches its own (userspace/attach.c),
 * and holds them until the process exits or SIGINT.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "floor.skel.h"
#include "../userspace/attach.h"
#include "../userspace/targets.h"

static volatile sig_atomic_t exiting;

static void on_signal(int signo)
{
	(void)signo;
	exiting = 1;
}

int main(int argc, char **argv)
{
	struct attachment attachment = {0};
	struct library library;
	struct floor_bpf *skel;
	pid_t pid;
	int err;

	if (argc != 2 || (pid = (pid_t)atoi(argv[1])) <= 0) {
		fprintf(stderr, "usage: floor PID\n");
		return 2;
	}
	err = find_liboptrace(pid, &library);
	if (err) {
		fprintf(stderr, "floor: no liboptrace in process %d: %s\n", pid, strerror(-err));
		return 1;
	}
	skel = floor_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "floor: cannot load: %s\n", strerror(errno));
		return 1;
	}
	err = attach_library(skel->obj, library.path, pid, &attachment);
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
	attachment_destroy(&attachment);
	floor_bpf__destroy(skel);
	return err ? 1 : 0;
}
