// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Workloads. Each reads back its results and checks them against closed
 * forms, so a demo that traces right but computes wrong still fails.
 *
 * jacobi:   x_new[1:-1] = (x[:-2] + x[2:] + b[1:-1]) / 3 on slices, for the
 *           system 3 x_i - x_(i-1) - x_(i+1) = 1 with x = 0 at both ends, with
 *           the norm of the residual at the end of each block of sweeps.
 * stats:    linspace, zeros, full, mean, var, norm, dot (vector and
 *           matrix-vector), sum, sqrt, on large, small, empty, int64 and
 *           float32 arrays.
 * fallback: sort, round with negative decimals, float16 arrays, median
 *           (MIXED), one deliberate length mismatch, between supported ops.
 * hang:     the sort of the head of an arange, whose first pass stalls on
 *           purpose (a job stuck, for optrace dump).
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "demo.h"
#include "workloads.h"

#define HELD_MAX 48

/* The references a pass holds, dropped together at its end. */
struct held {
	struct demo_array *arrays[HELD_MAX];
	unsigned int count;
};

static struct demo_array *hold(struct held *held, struct demo_array *a)
{
	if (!a)
		return NULL;
	if (held->count == HELD_MAX) {
		fprintf(stderr, "optrace-demo: internal: more than %d arrays in a pass\n",
			HELD_MAX);
		demo_array_put(a);
		return NULL;
	}
	held->arrays[held->count++] = a;
	return a;
}

static void drop_all(struct held *held)
{
	while (held->count)
		demo_array_put(held->arrays[--held->count]);
}

static int failed(const char *what)
{
	fprintf(stderr, "optrace-demo: %s: %s\n", what, demo_last_error());
	return -1;
}

static int check_close(const char *what, double got, double want, double tolerance)
{
	if (fabs(got - want) <= tolerance * fmax(1.0, fabs(want)))
		return 0;
	fprintf(stderr, "optrace-demo: %s is %.17g, expected %.17g\n", what, got, want);
	return -1;
}

/* The host reads a 0-d result: a FUTURE wait while it is pending. */
static int item(struct demo_array *a, const char *what, double *value)
{
	if (demo_item(a, value))
		return failed(what);
	return 0;
}

/* The host reads one element: an INLINE_MAP wait while it is pending. */
static int element(struct demo_array *a, size_t i, const char *what, double *value)
{
	if (demo_array_read(a, i, 1, value))
		return failed(what);
	return 0;
}

/* ---- jacobi ---- */

static int jacobi_sweep(struct demo_array *x, struct demo_array *x_new, struct demo_array *b)
{
	size_t n = demo_array_size(x);
	struct held held = { 0 };
	struct demo_array *left, *right, *b_inner, *new_inner, *sides, *total;
	int err = -1;

	left = hold(&held, demo_slice(x, 0, n - 2));
	right = hold(&held, demo_slice(x, 2, n));
	b_inner = hold(&held, demo_slice(b, 1, n - 1));
	new_inner = hold(&held, demo_slice(x_new, 1, n - 1));
	if (!left || !right || !b_inner || !new_inner) {
		failed("slice");
		goto cleanup;
	}
	sides = hold(&held, demo_add(left, right, NULL));
	if (!sides) {
		failed("add");
		goto cleanup;
	}
	total = hold(&held, demo_add(sides, b_inner, NULL));
	if (!total) {
		failed("add");
		goto cleanup;
	}
	if (!hold(&held, demo_divide_scalar(total, 3.0, new_inner))) {
		failed("divide");
		goto cleanup;
	}
	err = 0;
cleanup:
	drop_all(&held);
	return err;
}

/* || b - A x || over the interior, A = tridiag(-1, 3, -1): a 0-d future. */
static struct demo_array *jacobi_residual(struct demo_array *x, struct demo_array *b)
{
	size_t n = demo_array_size(x);
	struct held held = { 0 };
	struct demo_array *left, *right, *inner, *b_inner, *ax, *r, *norm = NULL;

	left = hold(&held, demo_slice(x, 0, n - 2));
	right = hold(&held, demo_slice(x, 2, n));
	inner = hold(&held, demo_slice(x, 1, n - 1));
	b_inner = hold(&held, demo_slice(b, 1, n - 1));
	if (!left || !right || !inner || !b_inner) {
		failed("slice");
		goto cleanup;
	}
	ax = hold(&held, demo_multiply_scalar(inner, 3.0, NULL));
	if (!ax || !hold(&held, demo_subtract(ax, left, ax)) ||
	    !hold(&held, demo_subtract(ax, right, ax))) {
		failed("A x");
		goto cleanup;
	}
	r = hold(&held, demo_subtract(b_inner, ax, NULL));
	norm = r ? demo_norm(r) : NULL;
	if (!norm)
		failed("residual");
cleanup:
	drop_all(&held);
	return norm;
}

/*
 * The end of a block: the residual is launched, the host peeks at x (an
 * INLINE_MAP wait behind the sweeps), fences (a FENCE wait behind the
 * residual), then reads the residual, ready by then.
 */
static int jacobi_block_end(struct demo_array *x, struct demo_array *b, double *previous,
			    struct workload_summary *summary)
{
	struct demo_array *norm = jacobi_residual(x, b);
	double residual;
	int err = -1;

	if (!norm)
		return -1;
	if (element(x, demo_array_size(x) / 2, "jacobi x", &summary->jacobi_middle))
		goto cleanup;
	demo_fence();
	if (item(norm, "residual", &residual))
		goto cleanup;
	/* Jacobi contracts by about 2/3 a sweep here: the residual falls. */
	if (!isfinite(residual) || residual > *previous) {
		fprintf(stderr, "optrace-demo: jacobi residual rose to %g from %g\n", residual,
			*previous);
		goto cleanup;
	}
	if (*previous == INFINITY)
		summary->jacobi_first_residual = residual;
	summary->jacobi_last_residual = *previous = residual;
	err = 0;
cleanup:
	demo_array_put(norm);
	return err;
}

static int jacobi(const struct workload_params *params, struct workload_summary *summary)
{
	size_t n = params->size;
	struct demo_array *b, *x, *x_new, *swap;
	double previous = INFINITY;
	unsigned int sweep;
	int err = -1;

	b = demo_full(n, 1.0, DEMO_FLOAT64);
	x = demo_zeros(n, DEMO_FLOAT64);
	x_new = demo_zeros(n, DEMO_FLOAT64);
	if (!b || !x || !x_new) {
		failed("jacobi setup");
		goto cleanup;
	}
	for (sweep = 1; sweep <= params->iterations && !params->should_stop(); sweep++) {
		if (jacobi_sweep(x, x_new, b))
			goto cleanup;
		swap = x;
		x = x_new;
		x_new = swap;
		summary->jacobi_sweeps++;
		if ((sweep % WORKLOAD_BLOCK_SWEEPS == 0 || sweep == params->iterations) &&
		    jacobi_block_end(x, b, &previous, summary))
			goto cleanup;
	}
	err = 0;
cleanup:
	demo_array_put(x_new);
	demo_array_put(x);
	demo_array_put(b);
	return err;
}

/* ---- stats ---- */

struct stats_results {
	double x1, mean, var, norm, dot, sum, int_sum, int_mean, f32_mean, roots;
	double matvec_sum, flat_sum, small_mean, small_var, empty_sum;
};

static int stats_pass(size_t n, struct workload_summary *summary)
{
	size_t rows = n >= 64 ? 64 : 1, cols = n / rows;
	double dn = (double)n;
	struct held held = { 0 };
	struct stats_results r;
	struct demo_array *x, *zeros, *y, *ones, *ints, *x32, *roots, *flat, *matrix, *v;
	struct demo_array *mv, *small, *empty;
	struct demo_array *mean, *var, *norm, *dot, *sum, *int_sum, *int_mean, *f32_mean;
	struct demo_array *roots_sum, *matvec_sum, *flat_sum, *small_mean, *small_var, *empty_sum;
	int err = -1;

	x = hold(&held, demo_linspace(0.0, 1.0, n));
	if (!x || element(x, 1, "linspace", &r.x1))
		goto cleanup;
	zeros = hold(&held, demo_zeros(n, DEMO_FLOAT64));
	y = zeros ? hold(&held, demo_add(zeros, x, NULL)) : NULL;
	mean = hold(&held, demo_mean(x));
	var = hold(&held, demo_var(x));
	norm = hold(&held, demo_norm(x));
	ones = hold(&held, demo_full(n, 1.0, DEMO_FLOAT64));
	dot = ones ? hold(&held, demo_dot(x, ones)) : NULL;
	sum = y ? hold(&held, demo_sum(y)) : NULL;
	if (!y || !mean || !var || !norm || !dot || !sum) {
		failed("stats on float64");
		goto cleanup;
	}

	ints = hold(&held, demo_arange(n, DEMO_INT64));
	int_sum = ints ? hold(&held, demo_sum(ints)) : NULL;
	int_mean = ints ? hold(&held, demo_mean(ints)) : NULL;
	x32 = hold(&held, demo_full(n, 0.5, DEMO_FLOAT32));
	f32_mean = x32 ? hold(&held, demo_mean(x32)) : NULL;
	roots = hold(&held, demo_sqrt(x, NULL));
	roots_sum = roots ? hold(&held, demo_sum(roots)) : NULL;
	if (!int_sum || !int_mean || !f32_mean || !roots_sum) {
		failed("stats on int64 and float32");
		goto cleanup;
	}

	/* A matrix-vector product over a view of x: its row sums add up to x's sum. */
	flat = hold(&held, demo_slice(x, 0, rows * cols));
	matrix = flat ? hold(&held, demo_reshape(flat, rows, cols)) : NULL;
	v = hold(&held, demo_full(cols, 1.0, DEMO_FLOAT64));
	mv = matrix && v ? hold(&held, demo_dot(matrix, v)) : NULL;
	matvec_sum = mv ? hold(&held, demo_sum(mv)) : NULL;
	flat_sum = flat ? hold(&held, demo_sum(flat)) : NULL;
	if (!matvec_sum || !flat_sum) {
		failed("matrix-vector product");
		goto cleanup;
	}

	/* Small and empty arrays stay eager. */
	small = hold(&held, demo_linspace(0.0, 1.0, 101));
	small_mean = small ? hold(&held, demo_mean(small)) : NULL;
	small_var = small ? hold(&held, demo_var(small)) : NULL;
	empty = hold(&held, demo_zeros(0, DEMO_FLOAT64));
	empty_sum = empty ? hold(&held, demo_sum(empty)) : NULL;
	if (!small_mean || !small_var || !empty_sum) {
		failed("stats on small arrays");
		goto cleanup;
	}

	if (item(mean, "mean", &r.mean) || item(var, "var", &r.var) ||
	    item(norm, "norm", &r.norm) || item(dot, "dot", &r.dot) || item(sum, "sum", &r.sum) ||
	    item(int_sum, "int sum", &r.int_sum) || item(int_mean, "int mean", &r.int_mean) ||
	    item(f32_mean, "float32 mean", &r.f32_mean) || item(roots_sum, "sqrt", &r.roots) ||
	    item(matvec_sum, "matvec", &r.matvec_sum) || item(flat_sum, "sum", &r.flat_sum) ||
	    item(small_mean, "small mean", &r.small_mean) ||
	    item(small_var, "small var", &r.small_var) ||
	    item(empty_sum, "empty sum", &r.empty_sum))
		goto cleanup;

	/* Closed forms for linspace(0, 1, n): x_i = i / (n - 1). */
	if (check_close("linspace[1]", r.x1, 1.0 / (dn - 1), 1e-12) ||
	    check_close("mean", r.mean, 0.5, 1e-9) ||
	    check_close("var", r.var, (dn + 1) / (12 * (dn - 1)), 1e-9) ||
	    check_close("norm", r.norm, sqrt(dn * (2 * dn - 1) / (6 * (dn - 1))), 1e-9) ||
	    check_close("dot", r.dot, dn / 2, 1e-9) || check_close("sum", r.sum, dn / 2, 1e-9) ||
	    check_close("int64 sum", r.int_sum, dn * (dn - 1) / 2, 0) ||
	    check_close("int64 mean", r.int_mean, (dn - 1) / 2, 1e-12) ||
	    check_close("float32 mean", r.f32_mean, 0.5, 1e-6) ||
	    check_close("matvec row sums", r.matvec_sum, r.flat_sum, 1e-9) ||
	    check_close("small mean", r.small_mean, 0.5, 1e-12) ||
	    check_close("small var", r.small_var, 102.0 / 1200, 1e-12) ||
	    check_close("empty sum", r.empty_sum, 0, 0))
		goto cleanup;
	if (!(r.roots > 0 && r.roots < dn)) {
		fprintf(stderr, "optrace-demo: sum of sqrt is %g\n", r.roots);
		goto cleanup;
	}
	summary->stats_mean = r.mean;
	summary->stats_var = r.var;
	summary->stats_norm = r.norm;
	summary->stats_dot = r.dot;
	err = 0;
cleanup:
	drop_all(&held);
	return err;
}

/* ---- fallback ---- */

static int fallback_pass(size_t n, struct workload_summary *summary)
{
	double dn = (double)n, value, want;
	size_t at;
	struct held held = { 0 };
	struct demo_array *x, *reversed, *sorted, *total, *small, *small_reversed, *small_sorted;
	struct demo_array *scaled, *rounded, *hundreds, *small_tens, *half, *doubled, *half_mean;
	struct demo_array *few, *few_plus, *median, *shorter;
	int err = -1;

	x = hold(&held, demo_arange(n, DEMO_FLOAT64));
	reversed = x ? hold(&held, demo_multiply_scalar(x, -1.0, NULL)) : NULL;
	/* sort: UNIMPLEMENTED_API; above the threshold a HostReference task. */
	sorted = reversed ? hold(&held, demo_sort(reversed)) : NULL;
	if (!sorted) {
		failed("sort");
		goto cleanup;
	}
	if (element(sorted, 0, "sorted", &value) || check_close("sorted[0]", value, 1 - dn, 0) ||
	    element(sorted, n - 1, "sorted", &value) || check_close("sorted[-1]", value, 0, 0))
		goto cleanup;
	total = hold(&held, demo_sum(sorted));
	if (!total || item(total, "sum of sorted", &value) ||
	    check_close("sum of sorted", value, -dn * (dn - 1) / 2, 1e-12))
		goto cleanup;

	/* Small: the reference runs inline, on the caller. */
	small = hold(&held, demo_linspace(0.0, 10.0, 64));
	small_reversed = small ? hold(&held, demo_multiply_scalar(small, -1.0, NULL)) : NULL;
	small_sorted = small_reversed ? hold(&held, demo_sort(small_reversed)) : NULL;
	if (!small_sorted || element(small_sorted, 0, "small sorted", &value) ||
	    check_close("small sorted[0]", value, -10, 1e-12))
		goto cleanup;

	/* round: supported with decimals >= 0, UNSUPPORTED_ARGUMENTS below. */
	scaled = hold(&held, demo_multiply_scalar(x, 1.2345, NULL));
	rounded = scaled ? hold(&held, demo_round(scaled, 2, NULL)) : NULL;
	hundreds = hold(&held, demo_round(x, -2, NULL));
	small_tens = hold(&held, demo_round(small, -1, NULL));
	if (!rounded || !hundreds || !small_tens) {
		failed("round");
		goto cleanup;
	}
	at = n > 7 ? 7 : n - 1;
	want = nearbyint((double)at * 1.2345 * 100) / 100;
	if (element(rounded, at, "round", &value) || check_close("round(x, 2)", value, want, 0))
		goto cleanup;
	if (n > 151 && (element(hundreds, 149, "round", &value) ||
			check_close("round(x, -2)[149]", value, 100, 0) ||
			element(hundreds, 151, "round", &value) ||
			check_close("round(x, -2)[151]", value, 200, 0)))
		goto cleanup;
	if (element(small_tens, 63, "round", &value) ||
	    check_close("round(small, -1)[-1]", value, 10, 0))
		goto cleanup;

	/* float16: UNSUPPORTED_DTYPE for every operation, composites included. */
	half = hold(&held, demo_full(n, 1.5, DEMO_FLOAT16));
	doubled = half ? hold(&held, demo_add(half, half, NULL)) : NULL;
	half_mean = doubled ? hold(&held, demo_mean(doubled)) : NULL;
	few = hold(&held, demo_zeros(16, DEMO_FLOAT16));
	few_plus = few ? hold(&held, demo_add_scalar(few, 2.5, NULL)) : NULL;
	if (!half_mean || !few_plus) {
		failed("float16");
		goto cleanup;
	}
	if (item(half_mean, "float16 mean", &value) || check_close("float16 mean", value, 3, 0) ||
	    element(few_plus, 3, "float16 add", &value) ||
	    check_close("float16 add", value, 2.5, 0))
		goto cleanup;

	/* median: sort falls back, mean does not: MIXED. */
	median = hold(&held, demo_median(x));
	if (!median || item(median, "median", &value) ||
	    check_close("median", value, (dn - 1) / 2, 1e-12))
		goto cleanup;
	summary->fallback_median = value;

	/* A deliberate error: lengths n and n - 1 do not match. */
	shorter = hold(&held, demo_slice(x, 0, n - 1));
	if (!shorter)
		goto cleanup;
	if (hold(&held, demo_add(x, shorter, NULL))) {
		fprintf(stderr, "optrace-demo: adding mismatched lengths did not fail\n");
		goto cleanup;
	}
	summary->fallback_errors_seen++;
	err = 0;
cleanup:
	drop_all(&held);
	return err;
}

/* ---- hang ---- */

/*
 * The first pass stalls: the Arange point that makes x spins on its worker
 * (until SIGUSR1, or for --stall-ms), and the sort of x's head, small, a
 * fallback the caller runs inline, waits for it inside demo.sort. Later
 * passes (--forever) run free, until workload_hang_again() (SIGUSR2).
 */
static atomic_bool hang_again;

void workload_hang_again(void)
{
	atomic_store(&hang_again, true);
}

static int hang_pass(const struct workload_params *params, size_t n,
		     struct workload_summary *summary)
{
	static bool stalled;
	struct held held = { 0 };
	struct demo_array *x, *head, *sorted;
	double value;
	int err = -1;

	if (!stalled || atomic_exchange(&hang_again, false)) {
		stalled = true;
		demo_stall_task("Arange", params->stall_ms);
	}
	x = hold(&held, demo_arange(n, DEMO_FLOAT64));
	head = x ? hold(&held, demo_slice(x, 0, 3)) : NULL;
	sorted = head ? hold(&held, demo_sort(head)) : NULL;
	if (!sorted) {
		failed("sort of the head");
		goto cleanup;
	}
	if (element(sorted, 2, "sorted head", &value) || check_close("sorted head[2]", value, 2, 0))
		goto cleanup;
	summary->hang_passes++;
	err = 0;
cleanup:
	drop_all(&held);
	return err;
}

/* ---- all of them ---- */

static unsigned int blocks_of(unsigned int iterations)
{
	return (iterations + WORKLOAD_BLOCK_SWEEPS - 1) / WORKLOAD_BLOCK_SWEEPS;
}

static int run_round(const struct workload_params *params, struct workload_summary *summary)
{
	unsigned int block;

	if ((params->kinds & WORKLOAD_JACOBI) && jacobi(params, summary))
		return -1;
	for (block = 0; block < blocks_of(params->iterations); block++) {
		if (params->should_stop())
			return 0;
		if (params->kinds & WORKLOAD_STATS) {
			if (stats_pass(params->size, summary))
				return -1;
			summary->stats_passes++;
		}
		if (params->kinds & WORKLOAD_FALLBACK) {
			if (fallback_pass(params->size, summary))
				return -1;
			summary->fallback_passes++;
		}
		if ((params->kinds & WORKLOAD_HANG) && hang_pass(params, params->size, summary))
			return -1;
		demo_fence();
	}
	return 0;
}

int workload_run(const struct workload_params *params, struct workload_summary *summary)
{
	struct timespec pause = { params->pause_ms / 1000, (params->pause_ms % 1000) * 1000000L };

	do {
		if (run_round(params, summary))
			return -1;
		summary->rounds++;
		if (params->forever && params->pause_ms)
			nanosleep(&pause, NULL);
	} while (params->forever && !params->should_stop());
	return 0;
}
