/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef OPTRACE_STARPU_INTERN_H
#define OPTRACE_STARPU_INTERN_H

/*
 * A copy of name that lives as long as the process (tracers read names by
 * address, after the task that had it may be gone); the same copy for the
 * same text. "(too many names)" past a bound, NULL never.
 */
const char *optrace_starpu_intern(const char *name);

#endif /* OPTRACE_STARPU_INTERN_H */
