/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What can be checked of a tracer's targets before its BPF programs load:
 * a user's typo should cost milliseconds, not a load and an attach.
 */
#ifndef OPTRACE_TRACE_EARLY_CHECKS_H
#define OPTRACE_TRACE_EARLY_CHECKS_H

#include <stdbool.h>
#include <sys/types.h>

struct library;

/*
 * 0 if execvp(file) would find a file it may run, else the errno its exec
 * would fail with (ENOENT, EACCES): file with a '/' as it is, else each
 * folder of PATH in turn.
 */
int command_runnable(const char *file);

/* Whether process pid exists (one of another user's counts: EPERM). */
bool process_alive(pid_t pid);

/* 0 if process pid exists, else a negative errno with a message that says what -p takes. */
int check_pid_alive(pid_t pid);

/*
 * Whether process pid can be traced: alive, its mappings readable, liboptrace
 * among them (in *library). 0, or a negative errno with a message that says
 * what is wrong and what to do.
 */
int check_target_pid(pid_t pid, struct library *library);

/*
 * Says that process pid's liboptrace path holds no regular file now (a
 * FIFO planted there): returns -ENOTREGULAR.
 */
int say_not_regular(pid_t pid);

#endif /* OPTRACE_TRACE_EARLY_CHECKS_H */
