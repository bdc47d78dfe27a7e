/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * liboptrace: the runtime side of optrace.
 *
 * An array runtime calls these functions around its operations and tasks.
 * Each fires a USDT probe of provider "optrace" while a tracer has armed the
 * probe's semaphore; otherwise it costs a call and a test. Nothing here
 * allocates, locks or makes a system call.
 *
 * Strings (operation and task names, call sites, fallback details) are passed
 * to the tracer as pointers: they must stay valid for the life of the process
 * (string literals, or strings interned by the runtime).
 *
 * Operations nest per thread: end them in the reverse order of their begins,
 * on the thread that began them. The library keeps the stack, so that each
 * op_begin carries its parent's id and its depth.
 */
#ifndef OPTRACE_OPTRACE_H
#define OPTRACE_OPTRACE_H

#include <stdbool.h>
#include <stdint.h>

#include <optrace/abi.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OPTRACE_STRINGIFY_(x) #x
#define OPTRACE_STRINGIFY(x) OPTRACE_STRINGIFY_(x)

/* "file.c:123" as a string literal: a call site that costs nothing to pass. */
#define OPTRACE_CALLSITE (__FILE__ ":" OPTRACE_STRINGIFY(__LINE__))

/* optrace_op_begin() with the caller's file and line as call site. */
#define OPTRACE_OP_BEGIN_HERE(name) optrace_op_begin((name), OPTRACE_CALLSITE)

/*
 * Announce the runtime: fires rt_init(abi version, rank, rank count).
 * A negative rank or rank_count is taken from the environment of MPI and
 * Slurm launchers (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID
 * and their _SIZE / NTASKS companions), or 0 and 1 when none is set.
 * Call it once, early; a later call updates the rank.
 */
void optrace_rt_init(int rank, int rank_count);

/* True while a tracer is attached: build costly probe arguments only then. */
bool optrace_enabled(void);

/*
 * Begin an operation; returns its id, or 0 while no tracer is attached.
 * Pass the id to every later call about this operation.
 */
uint64_t optrace_op_begin(const char *name, const char *callsite);

/* End the operation begun last on this thread. status: enum optrace_status. */
void optrace_op_end(uint64_t op, int status);

/*
 * The innermost operation open on the calling thread, 0 if none or untraced:
 * for an adapter that launches tasks on behalf of whatever operation the
 * program has open (a library interposed under it, a runtime's hooks).
 */
uint64_t optrace_current_op(void);

/* Where the runtime decides: enum optrace_mode, enum optrace_mode_reason. */
void optrace_op_mode(uint64_t op, int mode, int reason);

/* Just before a reference path runs: enum optrace_fallback_reason, detail. */
void optrace_op_fallback(uint64_t op, int reason, const char *detail);

/*
 * A task of operation op is submitted with points parallel points; returns
 * the task's id, for its points' task_begin and task_end. While no tracer is
 * attached it has OPTRACE_TASK_UNTRACED set, and only its name is kept (for
 * optrace dump). Call it on the thread that began op: the root op id comes
 * from that thread's stack.
 */
uint64_t optrace_task_launch(uint64_t op, const char *task_name, uint32_t points);

/* A point of a task starts on a worker: enum optrace_variant, processor id. */
void optrace_task_begin(uint64_t task, uint32_t point, int variant, uint32_t processor);

/* That point ends. status: enum optrace_status. */
void optrace_task_end(uint64_t task, uint32_t point, int status);

/* The caller blocks on a result of op: enum optrace_wait_kind. */
void optrace_wait_begin(uint64_t op, int kind);
void optrace_wait_end(uint64_t op, int kind);

/*
 * Read by tracers from the process's memory (ELF symbol "optrace_runtime"),
 * so that one attaching after rt_init still learns the rank.
 */
struct optrace_runtime_info {
	uint32_t abi_version;
	int32_t rank;
	int32_t rank_count;
	uint32_t initialized;
};

#ifdef __cplusplus
}
#endif

#endif /* OPTRACE_OPTRACE_H */
