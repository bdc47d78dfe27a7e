/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * liboptrace's per-thread state: the op stack and the fast path's buffer.
 * It lives in initial-exec TLS so that reaching it is one instruction.
 */
#ifndef OPTRACE_THREAD_H
#define OPTRACE_THREAD_H

#include <stdint.h>

#include <optrace/abi.h>

/* liboptrace's own symbols, not exported (the version script exports optrace_*). */
#define OPTRACE_INTERNAL __attribute__((visibility("hidden")))

/* Deeper operations are still traced; their parent is reported as 0. */
#define OPTRACE_STACK_DEPTH 32

struct id_block {
	uint64_t next;
	uint64_t end;
};

/* Kept small: a dlopen()ed library's static TLS comes from a small surplus. */
struct thread_state {
	uint32_t depth;
	uint32_t tid; /* set with the batch buffer */
	struct optrace_batch *batch;
	const char *root_name; /* the depth-0 op's name, while it is traced */
	struct id_block ops;
	struct id_block tasks;
	uint64_t stack[OPTRACE_STACK_DEPTH]; /* op ids, 0 while untraced */
};

extern __thread struct thread_state optrace_thread __attribute__((tls_model("initial-exec")))
OPTRACE_INTERNAL;

#endif /* OPTRACE_THREAD_H */
