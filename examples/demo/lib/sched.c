// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The stream and its processors. One mutex guards the queue; processors
 * take points of the head launch only, so launches run in submission order
 * without any dependence analysis. The last point of a launch to end
 * completes it: combines its partial results, pops it, and wakes both the
 * processors (a new head) and the threads waiting on results.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>

#include <optrace/abi.h>

#include "cuda.h"
#include "error.h"
#include "point.h"
#include "probe.h"
#include "sched.h"
#include "stall.h"

struct processor {
	pthread_t thread;
	uint32_t id;
	enum proc_kind kind;
	struct cuda_proc *gpu; /* a GPU processor's device and stream */
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t head_changed;	  /* for processors */
	pthread_cond_t completed_changed; /* for waiters */
	struct launch *head;
	struct launch *tail;
	uint64_t submitted;
	uint64_t completed; /* atomic: waiters test it without the lock */
	bool stopping;
	unsigned int counts[PROC__COUNT];
	unsigned int omp_threads;
	struct processor *procs;
	unsigned int started;
} sched = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.head_changed = PTHREAD_COND_INITIALIZER,
	.completed_changed = PTHREAD_COND_INITIALIZER,
};

static void run_point(const struct processor *proc, struct launch *l, uint32_t point)
{
	probe_task_begin(l->task_id, l->task_name, point, l->variant, proc->id);
	stall_point(l->task_name, point);
	if (l->variant == OPTRACE_VARIANT_GPU)
		point_run_gpu(proc->gpu, l->work, point, l->op_name, l->root_name, l->task_name);
	else
		point_run(l->work, point, l->variant, sched.omp_threads);
	probe_task_end(l->task_id, point, OPTRACE_STATUS_OK);
}

/* Called by the processor that ended l's last point, without the lock. */
static void complete(struct launch *l)
{
	point_finish(l->work);

	pthread_mutex_lock(&sched.lock);
	sched.head = l->next;
	if (!sched.head)
		sched.tail = NULL;
	__atomic_store_n(&sched.completed, l->seq, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&sched.head_changed);
	pthread_cond_broadcast(&sched.completed_changed);
	pthread_mutex_unlock(&sched.lock);

	/* Dropping the references may free arrays: not under the lock. */
	work_free(l->work);
	free(l);
}

static void *processor_main(void *arg)
{
	const struct processor *proc = arg;
	struct launch *l;
	uint32_t point;
	bool last;
	static const char *const kinds[] = {
		[PROC_CPU] = "cpu", [PROC_OMP] = "omp", [PROC_GPU] = "gpu"
	};
	char name[16];

	/* Named as a runtime names its threads: what ps -L and the profiles show. */
	snprintf(name, sizeof(name), "demo-%s%u", kinds[proc->kind], proc->id);
	prctl(PR_SET_NAME, name);

	cuda_proc_bind(proc->gpu);
	pthread_mutex_lock(&sched.lock);
	for (;;) {
		l = sched.head;
		if (!l || l->kind != proc->kind || l->next_point == l->points) {
			if (sched.stopping && !sched.head)
				break;
			pthread_cond_wait(&sched.head_changed, &sched.lock);
			continue;
		}
		point = l->next_point++;
		pthread_mutex_unlock(&sched.lock);

		run_point(proc, l, point);

		pthread_mutex_lock(&sched.lock);
		last = ++l->ended_points == l->points;
		if (last) {
			pthread_mutex_unlock(&sched.lock);
			complete(l);
			pthread_mutex_lock(&sched.lock);
		}
	}
	pthread_mutex_unlock(&sched.lock);
	return NULL;
}

int sched_start(unsigned int cpus, unsigned int omp_procs, unsigned int omp_threads,
		unsigned int gpu_procs)
{
	unsigned int total = cpus + omp_procs + gpu_procs, i;
	sigset_t all, old;
	int err = 0;

	sched.procs = calloc(total, sizeof(*sched.procs));
	if (!sched.procs) {
		error_set("processors: out of memory");
		return -ENOMEM;
	}
	sched.counts[PROC_CPU] = cpus;
	sched.counts[PROC_OMP] = omp_procs;
	sched.counts[PROC_GPU] = gpu_procs;
	sched.omp_threads = omp_threads;
	sched.stopping = false;

	/* Signals are for the issuing threads: processors block them all. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (i = 0; i < total; i++) {
		struct processor *proc = &sched.procs[i];

		proc->id = i;
		proc->kind = i < cpus ? PROC_CPU : i < cpus + omp_procs ? PROC_OMP : PROC_GPU;
		/* Its stream (and the device's context) before its thread runs. */
		if (proc->kind == PROC_GPU) {
			err = cuda_proc_create(i - cpus - omp_procs, &proc->gpu);
			if (err)
				break;
		}
		err = -pthread_create(&proc->thread, NULL, processor_main, proc);
		if (err) {
			error_set("cannot start processor %u", i);
			break;
		}

		sched.started++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		sched_stop();
	return err;
}

void sched_stop(void)
{
	unsigned int total =
		sched.counts[PROC_CPU] + sched.counts[PROC_OMP] + sched.counts[PROC_GPU];
	unsigned int i;

	pthread_mutex_lock(&sched.lock);
	sched.stopping = true;
	pthread_cond_broadcast(&sched.head_changed);
	pthread_mutex_unlock(&sched.lock);

	for (i = 0; i < sched.started; i++)
		pthread_join(sched.procs[i].thread, NULL);
	/* Also the stream of a processor whose thread did not start. */
	for (i = 0; sched.procs && i < total; i++)
		cuda_proc_destroy(sched.procs[i].gpu);
	free(sched.procs);
	sched.procs = NULL;
	sched.started = 0;
	sched.counts[PROC_CPU] = sched.counts[PROC_OMP] = sched.counts[PROC_GPU] = 0;
}

unsigned int sched_procs(enum proc_kind kind)
{
	return sched.counts[kind];
}

uint64_t sched_submit(struct launch *l)
{
	uint64_t seq;

	l->next = NULL;
	l->next_point = 0;
	l->ended_points = 0;

	pthread_mutex_lock(&sched.lock);
	seq = l->seq = ++sched.submitted;
	if (sched.tail)
		sched.tail->next = l;
	else
		sched.head = l;
	sched.tail = l;
	/* Behind other launches it waits for their completion's broadcast. */
	if (sched.head == l)
		pthread_cond_broadcast(&sched.head_changed);
	pthread_mutex_unlock(&sched.lock);
	return seq;
}

static bool sched_completed(uint64_t seq)
{
	return __atomic_load_n(&sched.completed, __ATOMIC_ACQUIRE) >= seq;
}

void sched_wait(uint64_t op, uint64_t seq, int kind)
{
	/* Ready data costs no wait, and none is reported. */
	if (sched_completed(seq))
		return;

	probe_wait_begin(op, kind);
	pthread_mutex_lock(&sched.lock);
	while (!sched_completed(seq))
		pthread_cond_wait(&sched.completed_changed, &sched.lock);
	pthread_mutex_unlock(&sched.lock);
	probe_wait_end(op, kind);
}

void sched_fence(uint64_t op)
{
	uint64_t seq;

	pthread_mutex_lock(&sched.lock);
	seq = sched.submitted;
	pthread_mutex_unlock(&sched.lock);
	sched_wait(op, seq, OPTRACE_WAIT_FENCE);
}
