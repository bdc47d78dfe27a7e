// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The CUDA variant of Fill, BinaryOp and ScalarReduction. Arrays live in
 * host memory, as in the rest of the runtime, so a point copies its piece
 * of the inputs to the device, runs its kernels on its processor's stream,
 * copies the piece of the result back and synchronizes, all on the
 * processor's worker thread between task_begin and task_end: a tracer then
 * finds each kernel's launch inside the task point that made it.
 *
 * A sum is two kernels, block partials then their total, each in a fixed
 * order, so that its result does not depend on timing (no atomics).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>

extern "C" {
#include "array.h"
#include "error.h"
#include "kernels.h"
#include "work.h"
}

#include "cuda.h"

#define THREADS 256	/* per block, a power of two */
#define MAX_BLOCKS 1024 /* element-wise kernels stride over the rest */
#define SUM_BLOCKS 256	/* at most THREADS: one block adds the partials */

/* Device buffers, grown on demand and kept for the next point. */
enum slot { SLOT_IN0, SLOT_IN1, SLOT_OUT, SLOT_PARTIALS, SLOT_RESULT, SLOT__COUNT };

struct cuda_proc {
	int device;
	cudaStream_t stream;
	void *buffers[SLOT__COUNT];
	size_t sizes[SLOT__COUNT];
};

static int cuda_fail(const char *what, cudaError_t err)
{
	error_set("%s: %s (%s)", what, cudaGetErrorString(err), cudaGetErrorName(err));
	return -1;
}

extern "C" int cuda_device_count(const char **why)
{
	static thread_local char message[256];
	int count = 0;
	cudaError_t err;

	err = cudaGetDeviceCount(&count);
	if (err == cudaErrorInsufficientDriver) {
		/* Also what the static runtime says when there is no libcuda.so.1. */
		snprintf(message, sizeof(message),
			 "no GPU: no NVIDIA driver, or one older than this build's CUDA %d.%d "
			 "(cudaGetDeviceCount: %s)",
			 CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10, cudaGetErrorName(err));
		*why = message;
		return -1;
	}
	if (err != cudaSuccess) {
		snprintf(message, sizeof(message), "no GPU: cudaGetDeviceCount: %s (%s)",
			 cudaGetErrorString(err), cudaGetErrorName(err));
		*why = message;
		return -1;
	}
	if (!count) {
		*why = "no GPU: no CUDA device found";
		return -1;
	}
	return count;
}

extern "C" int cuda_proc_create(unsigned int index, struct cuda_proc **procp)
{
	struct cuda_proc *proc;
	int devices = 0;
	cudaError_t err;

	*procp = NULL;
	err = cudaGetDeviceCount(&devices);
	if (err != cudaSuccess)
		return cuda_fail("cudaGetDeviceCount", err);
	if (!devices) {
		error_set("no CUDA device found");
		return -ENODEV;
	}
	proc = (struct cuda_proc *)calloc(1, sizeof(*proc));
	if (!proc) {
		error_set("GPU processor: out of memory");
		return -ENOMEM;
	}
	proc->device = (int)(index % (unsigned int)devices);
	/* Creates the device's context here, not in the first task point. */
	err = cudaSetDevice(proc->device);
	if (err == cudaSuccess)
		err = cudaStreamCreateWithFlags(&proc->stream, cudaStreamNonBlocking);
	if (err != cudaSuccess) {
		free(proc);
		return cuda_fail("GPU processor", err);
	}
	*procp = proc;
	return 0;
}

extern "C" void cuda_proc_bind(struct cuda_proc *proc)
{
	/* The current device is per thread. */
	if (proc)
		cudaSetDevice(proc->device);
}

extern "C" void cuda_proc_destroy(struct cuda_proc *proc)
{
	int slot;

	if (!proc)
		return;
	cudaSetDevice(proc->device);
	for (slot = 0; slot < SLOT__COUNT; slot++)
		cudaFree(proc->buffers[slot]);
	cudaStreamDestroy(proc->stream);
	free(proc);
}

static bool dtype_has_kernels(enum demo_dtype dtype)
{
	return dtype == DEMO_FLOAT64 || dtype == DEMO_FLOAT32 || dtype == DEMO_INT64;
}

extern "C" bool cuda_supports(const struct work *w)
{
	enum demo_dtype dtype;

	switch (w->kind) {
	case WORK_FILL:
		return dtype_has_kernels(w->out->dtype);
	case WORK_BINARY:
		/* One dtype throughout: mixed ones stay on the CPU's generic loop. */
		dtype = w->out->dtype;
		if (!dtype_has_kernels(dtype) || w->in[0]->dtype != dtype)
			return false;
		if (w->in[1] && w->in[1]->dtype != dtype)
			return false;
		return dtype != DEMO_INT64 || (w->in[1] && w->code != BINOP_DIVIDE);
	case WORK_SUM:
		/* A 0-d input is a single value: nothing for a GPU to add. */
		return w->in[0]->ndim && dtype_has_kernels(w->in[0]->dtype);
	default:
		return false;
	}
}

/* ---- kernels ---- */

/* Grid-stride loops: any n with a bounded grid. */
__device__ static size_t first_index(void)
{
	return blockIdx.x * (size_t)blockDim.x + threadIdx.x;
}

__device__ static size_t grid_stride(void)
{
	return (size_t)gridDim.x * blockDim.x;
}

template <typename T> __global__ void fill_kernel(T *out, T value, size_t n)
{
	for (size_t i = first_index(); i < n; i += grid_stride())
		out[i] = value;
}

/* x or y NULL: that operand is the value beside it (a scalar or a 0-d array). */
template <typename T, typename U>
__global__ void binary_kernel(const T *x, T xv, const T *y, T yv, T *out, int code, size_t n)
{
	for (size_t i = first_index(); i < n; i += grid_stride()) {
		U a = x ? (U)x[i] : (U)xv, b = y ? (U)y[i] : (U)yv, r;

		switch (code) {
		case BINOP_ADD:
			r = a + b;
			break;
		case BINOP_SUBTRACT:
			r = a - b;
			break;
		case BINOP_MULTIPLY:
			r = a * b;
			break;
		default:
			r = a / b;
			break;
		}
		out[i] = (T)r;
	}
}

/* The total of a block's cache, added in a fixed tree order (every thread calls it). */
template <typename A> __device__ A block_total(A *cache)
{
	__syncthreads();
	for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
		if (threadIdx.x < s)
			cache[threadIdx.x] += cache[threadIdx.x + s];
		__syncthreads();
	}
	return cache[0];
}

/* Each block's total of its grid-stride share, in a fixed tree order. */
template <typename T, typename A>
__global__ void sum_blocks_kernel(const T *x, size_t n, A *partials)
{
	__shared__ A cache[THREADS];
	A acc = 0;

	for (size_t i = first_index(); i < n; i += grid_stride())
		acc += (A)x[i];
	cache[threadIdx.x] = acc;
	acc = block_total(cache);
	if (!threadIdx.x)
		partials[blockIdx.x] = acc;
}

/* One block: the partials' total. */
template <typename A>
__global__ void sum_partials_kernel(const A *partials, unsigned int count, A *result)
{
	__shared__ A cache[THREADS];
	A total;

	cache[threadIdx.x] = threadIdx.x < count ? partials[threadIdx.x] : (A)0;
	total = block_total(cache);
	if (!threadIdx.x)
		*result = total;
}

/* ---- a point ---- */

struct point_ctx {
	struct cuda_proc *proc;
	struct cuda_counts *counts;
};

static unsigned int grid_for(size_t n, unsigned int max_blocks)
{
	size_t blocks = (n + THREADS - 1) / THREADS;

	return blocks > max_blocks ? max_blocks : (unsigned int)blocks;
}

static int reserve(struct point_ctx *ctx, enum slot slot, size_t bytes, void **ptr)
{
	struct cuda_proc *proc = ctx->proc;
	cudaError_t err;

	if (proc->sizes[slot] < bytes) {
		cudaFree(proc->buffers[slot]);
		proc->buffers[slot] = NULL;
		proc->sizes[slot] = 0;
		err = cudaMalloc(&proc->buffers[slot], bytes);
		if (err != cudaSuccess)
			return cuda_fail("cudaMalloc", err);
		proc->sizes[slot] = bytes;
	}
	*ptr = proc->buffers[slot];
	return 0;
}

static int copy(struct point_ctx *ctx, void *dst, const void *src, size_t bytes,
		cudaMemcpyKind kind)
{
	cudaError_t err = cudaMemcpyAsync(dst, src, bytes, kind, ctx->proc->stream);

	if (err != cudaSuccess)
		return cuda_fail("cudaMemcpyAsync", err);
	ctx->counts->copies++;
	return 0;
}

/* After a <<<>>> launch: count it, or say why it was refused. */
static int launched(struct point_ctx *ctx)
{
	cudaError_t err = cudaGetLastError();

	if (err != cudaSuccess)
		return cuda_fail("kernel launch", err);
	ctx->counts->kernels++;
	return 0;
}

/* An input operand's piece on the device, or its one value when it is 0-d. */
template <typename T>
static int stage_input(struct point_ctx *ctx, enum slot slot, const struct demo_array *a,
		       size_t begin, size_t n, const T **dptr, T *value)
{
	void *buffer;

	*dptr = NULL;
	if (!a->ndim) {
		/* Written by an earlier launch, which the stream has completed. */
		*value = *(const T *)array_data(a);
		return 0;
	}
	if (reserve(ctx, slot, n * sizeof(T), &buffer))
		return -1;
	*dptr = (const T *)buffer;
	return copy(ctx, buffer, (const T *)array_data(a) + begin, n * sizeof(T),
		    cudaMemcpyHostToDevice);
}

template <typename T>
static int run_fill(struct point_ctx *ctx, const struct work *w, T value, size_t begin, size_t n)
{
	void *out;

	if (reserve(ctx, SLOT_OUT, n * sizeof(T), &out))
		return -1;
	fill_kernel<T>
		<<<grid_for(n, MAX_BLOCKS), THREADS, 0, ctx->proc->stream>>>((T *)out, value, n);
	if (launched(ctx))
		return -1;
	return copy(ctx, (T *)array_data(w->out) + begin, out, n * sizeof(T),
		    cudaMemcpyDeviceToHost);
}

template <typename T, typename U>
static int run_binary(struct point_ctx *ctx, const struct work *w, size_t begin, size_t n)
{
	const T *x, *y = NULL;
	T xv = 0, yv = (T)w->scalar;
	void *out;

	if (stage_input<T>(ctx, SLOT_IN0, w->in[0], begin, n, &x, &xv))
		return -1;
	if (w->in[1] && stage_input<T>(ctx, SLOT_IN1, w->in[1], begin, n, &y, &yv))
		return -1;
	if (reserve(ctx, SLOT_OUT, n * sizeof(T), &out))
		return -1;
	binary_kernel<T, U><<<grid_for(n, MAX_BLOCKS), THREADS, 0, ctx->proc->stream>>>(
		x, xv, y, yv, (T *)out, w->code, n);
	if (launched(ctx))
		return -1;
	return copy(ctx, (T *)array_data(w->out) + begin, out, n * sizeof(T),
		    cudaMemcpyDeviceToHost);
}

/* A sums in double, or in uint64 for int64 (wrapping, as NumPy). */
template <typename T, typename A>
static int run_sum(struct point_ctx *ctx, const struct work *w, size_t begin, size_t n, A *total)
{
	unsigned int blocks = grid_for(n, SUM_BLOCKS);
	void *partials, *result;
	const T *x;
	T unused;

	if (stage_input<T>(ctx, SLOT_IN0, w->in[0], begin, n, &x, &unused))
		return -1;
	if (reserve(ctx, SLOT_PARTIALS, blocks * sizeof(A), &partials) ||
	    reserve(ctx, SLOT_RESULT, sizeof(A), &result))
		return -1;
	sum_blocks_kernel<T, A><<<blocks, THREADS, 0, ctx->proc->stream>>>(x, n, (A *)partials);
	if (launched(ctx))
		return -1;
	sum_partials_kernel<A>
		<<<1, THREADS, 0, ctx->proc->stream>>>((const A *)partials, blocks, (A *)result);
	if (launched(ctx))
		return -1;
	return copy(ctx, total, result, sizeof(A), cudaMemcpyDeviceToHost);
}

static int run_sum_point(struct point_ctx *ctx, const struct work *w, size_t begin, size_t n,
			 union work_value *acc)
{
	union work_value part = { 0 };
	unsigned long long itotal = 0;
	double ftotal = 0;
	int err;

	switch (w->in[0]->dtype) {
	case DEMO_FLOAT64:
		err = run_sum<double, double>(ctx, w, begin, n, &ftotal);
		break;
	case DEMO_FLOAT32:
		err = run_sum<float, double>(ctx, w, begin, n, &ftotal);
		break;
	default:
		err = run_sum<int64_t, unsigned long long>(ctx, w, begin, n, &itotal);
		break;
	}
	/* The total lands in host memory only once the stream is synchronized. */
	if (!err) {
		cudaError_t sync = cudaStreamSynchronize(ctx->proc->stream);

		if (sync != cudaSuccess)
			return cuda_fail("cudaStreamSynchronize", sync);
		if (w->in[0]->dtype == DEMO_INT64)
			part.i = (int64_t)itotal;
		else
			part.f = ftotal;
		kernel_accumulate(w, acc, part);
	}
	return err;
}

static int run_point(struct point_ctx *ctx, const struct work *w, size_t begin, size_t n,
		     union work_value *acc)
{
	switch (w->kind) {
	case WORK_FILL:
		switch (w->out->dtype) {
		case DEMO_FLOAT64:
			return run_fill<double>(ctx, w, w->scalar, begin, n);
		case DEMO_FLOAT32:
			return run_fill<float>(ctx, w, (float)w->scalar, begin, n);
		default:
			return run_fill<int64_t>(ctx, w, dtype_double_to_int64(w->scalar), begin,
						 n);
		}
	case WORK_BINARY:
		switch (w->out->dtype) {
		case DEMO_FLOAT64:
			return run_binary<double, double>(ctx, w, begin, n);
		case DEMO_FLOAT32:
			return run_binary<float, float>(ctx, w, begin, n);
		default:
			return run_binary<int64_t, unsigned long long>(ctx, w, begin, n);
		}
	case WORK_SUM:
		return run_sum_point(ctx, w, begin, n, acc);
	default:
		error_set("no CUDA variant for this work");
		return -1;
	}
}

extern "C" int cuda_point_run(struct cuda_proc *proc, const struct work *w, size_t begin,
			      size_t end, union work_value *acc, struct cuda_counts *counts)
{
	struct point_ctx ctx = { proc, counts };
	cudaError_t err;
	int rc = 0;

	counts->kernels = counts->copies = counts->memsets = 0;
	/* An empty piece (a forced deferred empty array) launches nothing. */
	if (end > begin)
		rc = run_point(&ctx, w, begin, end - begin, acc);
	/* Also after a failure: no copy may still be writing host memory. */
	err = cudaStreamSynchronize(proc->stream);
	if (!rc && err != cudaSuccess)
		rc = cuda_fail("cudaStreamSynchronize", err);
	return rc;
}
