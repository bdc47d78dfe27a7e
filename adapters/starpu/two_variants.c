// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A StarPU program with a codelet of two variants (CPU, OpenCL), for
 * liboptrace-starpu's tests: "app.submit", an optrace operation, submits
 * --tasks tasks that each add 1 to a variable; "app.wait" waits for them
 * (starpu_task_wait_for_all); then --outside tasks are submitted with no
 * operation open, and waited for. Which variant runs is StarPU's choice, or
 * forced: STARPU_NCPU=0 (OpenCL), STARPU_NOPENCL=0 (CPU).
 *
 * It ends with "value V of N" and, for bench/starpu_overhead.sh, the wall
 * and process CPU time of the first submit and wait, in ns.
 *
 *   starpu_two_variants [--tasks N] [--outside N]
 */
/* OpenCL 1.2: what pocl and every ICD give */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <starpu.h>

#include <optrace/optrace.h>

static const char increment_source[] =
	"__kernel void increment(__global float *value) { value[0] += 1.0f; }\n";
static struct starpu_opencl_program program;

static void increment_cpu(void *buffers[], void *arg)
{
	float *value = (float *)STARPU_VARIABLE_GET_PTR(buffers[0]);

	(void)arg;
	*value += 1.0f;
}

static void increment_opencl(void *buffers[], void *arg)
{
	cl_mem value = (cl_mem)STARPU_VARIABLE_GET_PTR(buffers[0]);
	int device = starpu_worker_get_devid(starpu_worker_get_id());
	size_t global = 1;
	cl_command_queue queue;
	cl_kernel kernel;
	cl_int err;

	(void)arg;
	err = starpu_opencl_load_kernel(&kernel, &queue, &program, "increment", device);
	if (err != CL_SUCCESS)
		STARPU_OPENCL_REPORT_ERROR(err);
	err = clSetKernelArg(kernel, 0, sizeof(value), &value);
	err = err ?: clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL);
	err = err ?: clFinish(queue);
	if (err != CL_SUCCESS)
		STARPU_OPENCL_REPORT_ERROR(err);
	starpu_opencl_release_kernel(kernel);
}

static struct starpu_codelet increment = {
	.cpu_funcs = { increment_cpu },
	.opencl_funcs = { increment_opencl },
	.nbuffers = 1,
	.modes = { STARPU_RW },
	.name = "increment",
};

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int submit(starpu_data_handle_t handle, int count)
{
	for (int i = 0; i < count; i++) {
		int err = starpu_task_insert(&increment, STARPU_RW, handle, 0);

		if (err) {
			fprintf(stderr, "starpu_task_insert: %s\n", strerror(-err));
			return err;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	int tasks = 100, outside = 10, err;
	starpu_data_handle_t handle;
	uint64_t op, wall, cpu;
	float value = 0.0f;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--tasks"))
			tasks = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--outside"))
			outside = atoi(argv[i + 1]);
	}
	optrace_rt_init(-1, -1);
	err = starpu_init(NULL);
	if (err) {
		fprintf(stderr, "starpu_init: %s\n", strerror(-err));
		return 77;
	}
	if (starpu_opencl_worker_get_count() > 0 &&
	    starpu_opencl_load_opencl_from_string(increment_source, &program, NULL)) {
		fprintf(stderr, "cannot build the OpenCL kernel\n");
		return 1;
	}
	starpu_variable_data_register(&handle, STARPU_MAIN_RAM, (uintptr_t)&value, sizeof(value));

	wall = now_ns(CLOCK_MONOTONIC);
	cpu = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	op = optrace_op_begin("app.submit", OPTRACE_CALLSITE);
	err = submit(handle, tasks);
	optrace_op_end(op, err ? OPTRACE_STATUS_ERROR : OPTRACE_STATUS_OK);
	op = optrace_op_begin("app.wait", OPTRACE_CALLSITE);
	err = err ?: starpu_task_wait_for_all();
	optrace_op_end(op, OPTRACE_STATUS_OK);
	wall = now_ns(CLOCK_MONOTONIC) - wall;
	cpu = now_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu;
	err = err ?: submit(handle, outside);
	err = err ?: starpu_task_wait_for_all();

	starpu_data_unregister(handle);
	if (starpu_opencl_worker_get_count() > 0)
		starpu_opencl_unload_opencl(&program);
	starpu_shutdown();
	printf("value %.0f of %d\ntime %llu %llu\n", value, tasks + outside,
	       (unsigned long long)wall, (unsigned long long)cpu);
	return err || value != (float)(tasks + outside);
}
