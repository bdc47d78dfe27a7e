// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The GPU activity of a Legion Prof export: each kernel, copy and memset a
 * GPUTaskInfo on a GPU processor per CUDA device, its host interval the
 * launch (the API call), its device interval the run, a task kind per
 * kernel name, copy kind and memset, and its launcher (the task run or
 * operation open at the launch, else the thread) its parent and creator.
 */
#include <errno.h>
#include <stdio.h>

#include <optrace/gpu.h>

#include "output/legion_prof.h"
#include "output/legion_export_internal.h"

/* One GPU processor per CUDA device of a process. */
static int gpu_proc_of(struct exporter *exporter, struct process *process, uint32_t device_id,
		       uint64_t *proc)
{
	uintptr_t found = (uintptr_t)idmap_get(&process->gpus, 0, device_id);
	int err;

	if (found) {
		*proc = found;
		return 0;
	}
	err = legion_export_proc_desc(exporter, process, LEGION_PROF_PROC_GPU, proc);
	if (err)
		return err;
	return idmap_put(&process->gpus, 0, device_id, (void *)(uintptr_t)*proc);
}

/* A task kind per kernel name, copy kind and memset, with its "gpu" variant. */
static uint32_t gpu_task_id_of(struct exporter *exporter, struct process *process,
			       const struct profile_gpu *gpu)
{
	const struct gpu_activity *activity = gpu->activity;
	uint64_t key = activity->kind == OPTRACE_GPU_REC_KERNEL	  ? activity->name_id
		       : activity->kind == OPTRACE_GPU_REC_MEMCPY ? activity->copy_kind
								  : 0;
	uintptr_t id = (uintptr_t)idmap_get(&process->gpu_tasks, activity->kind, key);
	uint32_t task_id = 0;
	int err;

	if (id)
		return (uint32_t)id;
	err = legion_kinds_use(&exporter->kinds, process->prof, LEGION_KIND_GPU, gpu->name, 0,
			       &task_id);
	err = err
		      ?: idmap_put(&process->gpu_tasks, activity->kind, key,
				   (void *)(uintptr_t)task_id);
	legion_export_note_error(exporter, err);
	return task_id;
}

/* Where the activity came from, when no operation was open at its launch. */
static int outside_provenance(struct process *process, const struct profile_gpu *gpu,
			      uint64_t *provenance)
{
	char tid[32];
	struct legion_prof_kv pairs[] = {
		{ "op", "none: launched outside any operation" },
		{ "thread", tid },
	};

	if (gpu->launch)
		snprintf(tid, sizeof(tid), "%u", gpu->tid);
	else
		snprintf(tid, sizeof(tid), "unknown (launch not captured)");
	return legion_prof_provenance_fields(process->prof, "launched outside any operation", pairs,
					     sizeof(pairs) / sizeof(pairs[0]), provenance);
}

/*
 * Who launched it: the task run open at its launch (its op is the parent, its
 * fevent the creator, its provenance says which operation), else the
 * operation open on the issuing thread (drawn as a task: its parent, and its
 * creator when the launch lies inside it), else nothing but the thread.
 */
static int launcher_of(struct exporter *exporter, struct process *process,
		       const struct profile *profile, const struct profile_gpu *gpu,
		       uint64_t create_ns, uint64_t *parent, uint64_t *creator,
		       uint64_t *provenance)
{
	const struct profile_run *run = gpu->run;
	struct op_entry *owner;
	struct worker *worker;
	int err;

	*parent = LEGION_PROF_NO_PARENT;
	*creator = 0;
	if (run) {
		worker = legion_export_worker_of(exporter, process, run->tid,
						 legion_export_run_variant(run));
		if (!worker)
			return -ENOMEM;
		err = legion_export_claim_run(process, worker, run);
		if (err)
			return err;
		*parent = worker->run_op;
		if (create_ns >= run->begin_ns && (!run->end_ns || create_ns < run->end_ns))
			*creator = worker->run_fevent;
		return legion_export_provenance_of(exporter, process, profile, run->op,
						   run->task_name, run->op_name, run->root_name,
						   legion_export_run_variant(run), provenance);
	}
	if (gpu->op) {
		owner = legion_export_drawn_op(exporter, process, gpu->op);
		if (owner)
			*parent = owner->op_id;
		*creator = legion_export_creator(exporter, process, gpu->op, create_ns);
		return legion_export_provenance_of(exporter, process, profile, gpu->op, 0,
						   gpu->op_name, gpu->root_name, -1, provenance);
	}
	return outside_provenance(process, gpu, provenance);
}

/*
 * A kernel, copy or memset: a GPUTaskInfo on its device's processor, the
 * host interval its launch (the API call), the device interval its run. Its
 * own op id (a task record owns one), whose parent is its launcher's.
 */
void legion_export_on_gpu(void *ctx, const struct profile *profile, const struct profile_gpu *gpu)
{
	struct exporter *exporter = ctx;
	struct process *process = legion_export_process_of(exporter, gpu->tgid, false);
	const struct gpu_activity *activity = gpu->activity;
	const struct gpu_launch *launch = gpu->launch;
	struct legion_prof_task task = { 0 };
	uint64_t parent, provenance, launch_ns;
	int err;

	if (!process)
		return;
	if (activity->time_invalid) {
		exporter->gpu_untimed++;
		return;
	}
	launch_ns = launch && launch->start_ns ? launch->start_ns : activity->start_ns;
	err = gpu_proc_of(exporter, process, activity->device_id, &task.proc_id);
	err = err
		      ?: launcher_of(exporter, process, profile, gpu, launch_ns, &parent,
				     &task.creator, &provenance);
	err = err ?: legion_prof_new_op(process->prof, &task.op_id);
	err = err
		      ?: legion_prof_operation_instance(process->prof, task.op_id, parent,
							LEGION_PROF_OP_KIND_TASK, provenance);
	if (err) {
		legion_export_note_error(exporter, err);
		return;
	}
	task.task_id = gpu_task_id_of(exporter, process, gpu);
	task.variant_id = legion_kinds_variant_id(LEGION_KIND_GPU, 0);
	task.gpu_start = legion_export_since_zero(exporter, activity->start_ns);
	task.gpu_stop = legion_export_since_zero(exporter, activity->end_ns);
	if (launch && launch->start_ns) {
		task.start = legion_export_since_zero(exporter, launch->start_ns);
		task.stop = legion_export_since_zero(exporter, launch->end_ns);
	} else {
		task.start = task.gpu_start;
		task.stop = task.gpu_stop;
	}
	task.create = task.start;
	task.ready = task.start;
	legion_export_note_error(exporter,
				 legion_prof_gpu_task_info(process->prof, &task, NULL, 0));
}
