/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The error contract of every command (docs/optrace.md, EXIT STATUS):
 * results go to stdout or to -o FILE; everything else goes to stderr: errors
 * and warnings one line each, starting "optrace: " (diag()), and progress as
 * bcc's tools print it ("Tracing... Hit Ctrl-C to end."). A command
 * exits 0 when it did its job, 1 when it failed after saying why, 2 on a
 * usage error; a command run with `--` gives its own exit status back.
 */
#ifndef OPTRACE_COMMON_DIAG_H
#define OPTRACE_COMMON_DIAG_H

#define EXIT_USAGE 2

/* *error becomes err unless it holds an error already: the first is what is said. */
static inline void keep_first_error(int *error, int err)
{
	if (err && !*error)
		*error = err;
}

/*
 * -v's count: 0 says errors and warnings, 1 also what optrace does, 2 adds
 * libbpf's debug messages. One level for the process, set once by cli/ as
 * it parses -v, as libbpf-tools keep env.verbose: libbpf's print callback
 * (trace/setup.c) takes no context to carry it, and the lines it gates are
 * said deep in every stage.
 */
void diag_set_verbosity(int level);
int diag_verbosity(void);

/* "optrace: MESSAGE\n" on stderr. */
void diag(const char *format, ...) __attribute__((format(printf, 1, 2)));

#endif /* OPTRACE_COMMON_DIAG_H */
