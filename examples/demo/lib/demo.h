/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * demo: a small array runtime that decides the way cuPyNumeric does.
 *
 * Each operation runs eagerly on the calling thread when it is small, or is
 * deferred as a task whose points run on a pool of processors (CPU threads,
 * OpenMP teams), in order, like a little Legion. What it cannot do (sort,
 * negative round decimals, float16) it runs on a host reference path. Every
 * decision is announced through liboptrace and counted in a ground truth
 * that tests compare with what a tracer saw.
 *
 * Arrays are reference counted: every function that returns an array returns
 * a new reference, which the caller drops with demo_array_put(). A deferred
 * task holds its own references, so an array may be put while tasks that use
 * it are still pending. An array belongs to one issuing thread at a time.
 *
 * Operations return NULL (or -1) on error; demo_last_error() says why.
 */
#ifndef DEMO_H
#define DEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DEMO_STRINGIFY_(x) #x
#define DEMO_STRINGIFY(x) DEMO_STRINGIFY_(x)

/* "file.c:123": the call site that each operation reports to the tracer. */
#define DEMO_CALLSITE (__FILE__ ":" DEMO_STRINGIFY(__LINE__))

/* The eager threshold when neither the config nor the environment sets one. */
#define DEMO_DEFAULT_MAX_EAGER_VOLUME 4096

enum demo_dtype {
	DEMO_FLOAT64,
	DEMO_FLOAT32,
	DEMO_INT64,
	DEMO_FLOAT16, /* stored, but every operation on it falls back */
	DEMO_DTYPE__COUNT
};

struct demo_config {
	unsigned int cpus;	  /* CPU processors, at least 1 */
	unsigned int omp_procs;	  /* OpenMP processors, 0 for none */
	unsigned int omp_threads; /* threads of each OpenMP processor */
	int64_t max_eager_volume; /* < 0: $DEMO_MAX_EAGER_VOLUME or the default */
	unsigned int gpus;	  /* GPU processors (CUDA variant), 0 for none */
};

/* ---- the runtime ---- */

/* Announce the process to liboptrace (rt_init); rank < 0: from the launcher. */
void demo_announce(int rank, int rank_count);

/* Start the processors; reads $DEMO_FORCE_MODE and $DEMO_MAX_EAGER_VOLUME. */
int demo_runtime_start(const struct demo_config *config);

/* Finish all submitted work and stop the processors. */
void demo_runtime_stop(void);

/* Block until all submitted work has completed (a FENCE wait if it must). */
void demo_fence(void);

/*
 * The first point of task task_name (a string of the runtime's, such as
 * "Arange") to begin from now on spins on its worker until
 * demo_stall_release() (async-signal-safe) or for ms milliseconds (0:
 * until released): a job stuck on purpose, for optrace dump.
 */
void demo_stall_task(const char *task_name, unsigned int ms);
void demo_stall_release(void);

/*
 * CUDA devices this process can use, or -1 with *why saying why none: this
 * build has no CUDA variant, or no GPU or driver was found. The first call
 * initializes CUDA: after a fork(), not before.
 */
int demo_gpu_devices(const char **why);

/* The eager threshold in force, after the config and the environment. */
uint64_t demo_max_eager_volume(void);

/* Why the last failed call of this thread failed. */
const char *demo_last_error(void);

/* ---- arrays ---- */

struct demo_array;

struct demo_array *demo_array_get(struct demo_array *a);
void demo_array_put(struct demo_array *a); /* NULL is ignored */

size_t demo_array_size(const struct demo_array *a); /* elements */
unsigned int demo_array_ndim(const struct demo_array *a);
size_t demo_array_dim(const struct demo_array *a, unsigned int axis);
enum demo_dtype demo_array_dtype(const struct demo_array *a);
bool demo_array_is_deferred(const struct demo_array *a);
const char *demo_dtype_name(enum demo_dtype dtype);

/* Views that share a's storage (not operations): a[start:stop], a 2-D view. */
struct demo_array *demo_slice(struct demo_array *a, size_t start, size_t stop);
struct demo_array *demo_reshape(struct demo_array *a, size_t rows, size_t cols);

/*
 * Host access: copy count elements from start, as doubles. Blocks (an
 * INLINE_MAP wait) while deferred work on the array is pending.
 */
int demo_array_read(struct demo_array *a, size_t start, size_t count, double *dst);

/* The value of a one-element array; a FUTURE wait on a pending 0-d result. */
int demo_item(struct demo_array *a, double *value);

/* IEEE binary16 conversions (round to nearest even). */
uint16_t demo_f16_from_double(double value);
double demo_f16_to_double(uint16_t half);

/* ---- operations ---- */

/*
 * Each has a *_at form that takes the caller's call site, and a macro that
 * passes the site of the macro's use.
 */
int demo_fill_at(struct demo_array *a, double value, const char *callsite);
struct demo_array *demo_full_at(size_t n, double value, enum demo_dtype dtype,
				const char *callsite);
struct demo_array *demo_zeros_at(size_t n, enum demo_dtype dtype, const char *callsite);
struct demo_array *demo_arange_at(size_t n, enum demo_dtype dtype, const char *callsite);
struct demo_array *demo_linspace_at(double start, double stop, size_t n, const char *callsite);

/* a op b (same shape, or one of them 0-d); out: NULL, or where to write. */
struct demo_array *demo_add_at(struct demo_array *a, struct demo_array *b, struct demo_array *out,
			       const char *callsite);
struct demo_array *demo_subtract_at(struct demo_array *a, struct demo_array *b,
				    struct demo_array *out, const char *callsite);
struct demo_array *demo_multiply_at(struct demo_array *a, struct demo_array *b,
				    struct demo_array *out, const char *callsite);
struct demo_array *demo_divide_at(struct demo_array *a, struct demo_array *b,
				  struct demo_array *out, const char *callsite);

/* a op scalar; the scalar is a Python float: int64 arrays give float64. */
struct demo_array *demo_add_scalar_at(struct demo_array *a, double b, struct demo_array *out,
				      const char *callsite);
struct demo_array *demo_subtract_scalar_at(struct demo_array *a, double b, struct demo_array *out,
					   const char *callsite);
struct demo_array *demo_multiply_scalar_at(struct demo_array *a, double b, struct demo_array *out,
					   const char *callsite);
struct demo_array *demo_divide_scalar_at(struct demo_array *a, double b, struct demo_array *out,
					 const char *callsite);

struct demo_array *demo_sqrt_at(struct demo_array *a, struct demo_array *out, const char *callsite);
struct demo_array *demo_round_at(struct demo_array *a, int decimals, struct demo_array *out,
				 const char *callsite);

/* Reductions give 0-d arrays: futures while deferred. */
struct demo_array *demo_sum_at(struct demo_array *a, const char *callsite);
struct demo_array *demo_mean_at(struct demo_array *a, const char *callsite);
struct demo_array *demo_var_at(struct demo_array *a, const char *callsite);
struct demo_array *demo_norm_at(struct demo_array *a, const char *callsite);

/* 1-D . 1-D gives a 0-d array, 2-D . 1-D a 1-D one. */
struct demo_array *demo_dot_at(struct demo_array *a, struct demo_array *b, const char *callsite);

struct demo_array *demo_sort_at(struct demo_array *a, const char *callsite);
struct demo_array *demo_median_at(struct demo_array *a, const char *callsite);

#define demo_fill(a, value) demo_fill_at((a), (value), DEMO_CALLSITE)
#define demo_full(n, value, dtype) demo_full_at((n), (value), (dtype), DEMO_CALLSITE)
#define demo_zeros(n, dtype) demo_zeros_at((n), (dtype), DEMO_CALLSITE)
#define demo_arange(n, dtype) demo_arange_at((n), (dtype), DEMO_CALLSITE)
#define demo_linspace(start, stop, n) demo_linspace_at((start), (stop), (n), DEMO_CALLSITE)
#define demo_add(a, b, out) demo_add_at((a), (b), (out), DEMO_CALLSITE)
#define demo_subtract(a, b, out) demo_subtract_at((a), (b), (out), DEMO_CALLSITE)
#define demo_multiply(a, b, out) demo_multiply_at((a), (b), (out), DEMO_CALLSITE)
#define demo_divide(a, b, out) demo_divide_at((a), (b), (out), DEMO_CALLSITE)
#define demo_add_scalar(a, b, out) demo_add_scalar_at((a), (b), (out), DEMO_CALLSITE)
#define demo_subtract_scalar(a, b, out) demo_subtract_scalar_at((a), (b), (out), DEMO_CALLSITE)
#define demo_multiply_scalar(a, b, out) demo_multiply_scalar_at((a), (b), (out), DEMO_CALLSITE)
#define demo_divide_scalar(a, b, out) demo_divide_scalar_at((a), (b), (out), DEMO_CALLSITE)
#define demo_sqrt(a, out) demo_sqrt_at((a), (out), DEMO_CALLSITE)
#define demo_round(a, decimals, out) demo_round_at((a), (decimals), (out), DEMO_CALLSITE)
#define demo_sum(a) demo_sum_at((a), DEMO_CALLSITE)
#define demo_mean(a) demo_mean_at((a), DEMO_CALLSITE)
#define demo_var(a) demo_var_at((a), DEMO_CALLSITE)
#define demo_norm(a) demo_norm_at((a), DEMO_CALLSITE)
#define demo_dot(a, b) demo_dot_at((a), (b), DEMO_CALLSITE)
#define demo_sort(a) demo_sort_at((a), DEMO_CALLSITE)
#define demo_median(a) demo_median_at((a), DEMO_CALLSITE)

/* ---- ground truth: every probe call this process made, counted ---- */

/* "# optrace-demo ground truth, format 1", once at the top of a file. */
int demo_truth_write_header(int fd);

/* This process's "begin PID" .. "end PID" block, in one write(2). */
int demo_truth_write(int fd);

/* Forget what was counted (a forked child starts from nothing). */
void demo_truth_reset(void);

#ifdef __cplusplus
}
#endif

#endif /* DEMO_H */
