// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace serve, as the optrace program runs it: serve is a program of its
 * own, PREFIX/libexec/optrace-serve (cli/serve_main.c), so that its HTTP
 * server, TLS and bcrypt (libmicrohttpd, GnuTLS, libcrypt) are loaded by
 * serve alone, not by every command. It is run in optrace's place (exec):
 * same process, arguments, messages and exit status, as systemd's unit
 * expects of `optrace serve`.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/diag.h"

/* PREFIX/bin/optrace finds PREFIX/libexec/optrace-serve, as .output/bin its .output/libexec. */
static int serve_program(char *path, size_t size)
{
	char self[PATH_MAX];
	ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (length <= 0)
		return -errno;
	self[length] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	if (snprintf(path, size, "%s/../libexec/optrace-serve", self) >= (int)size)
		return -ENAMETOOLONG;
	return 0;
}

/* argv[0] is "optrace serve" (main.c), and -h already --help: passed on as they are. */
int cmd_serve(int argc, char **argv)
{
	char path[PATH_MAX];
	int err = serve_program(path, sizeof(path));

	(void)argc;
	if (err) {
		diag("cannot find optrace-serve beside optrace: %s", strerror(-err));
		return 1;
	}
	execv(path, argv);
	diag("cannot run %s: %s: serve is installed with optrace (make install, or the "
	     "optrace package)",
	     path, strerror(errno));
	return 1;
}
