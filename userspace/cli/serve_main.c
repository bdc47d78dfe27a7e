// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace-serve: `optrace serve` (cli/serve.c) as a program of its own, in
 * PREFIX/libexec, that optrace runs in its place (cli/serve_exec.c): the
 * only program linked with libmicrohttpd, GnuTLS and libcrypt.
 */
#include <argp.h>
#include <signal.h>

#include "cli/commands.h"

const char *argp_program_version = "optrace " OPTRACE_VERSION;

int main(int argc, char **argv)
{
	/* As optrace's main() has it: usage errors exit 2, SIGXFSZ is an EFBIG. */
	argp_err_exit_status = 2;
	signal(SIGXFSZ, SIG_IGN);
	/* "Usage: optrace serve ...", whoever ran it. */
	if (argc > 0)
		argv[0] = "optrace serve";
	return cmd_serve(argc, argv);
}
