// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The task runs of a Legion Prof export: each worker thread is a processor
 * of its variant's kind (CPU, OpenMP or GPU), each task name a task kind
 * with a variant per way it ran, and each run a TaskInfo whose provenance
 * says which operation launched it and how it ran (one provenance per kind
 * of point, cached). A run that launched GPU activity has its op id and
 * fevent given out early, at the launch (legion_export_claim_run()).
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <optrace/gpu.h>

#include "output/legion_prof.h"
#include "output/legion_export_internal.h"

static enum legion_prof_proc_kind proc_kind(int variant)
{
	switch (variant) {
	case OPTRACE_VARIANT_OPENMP:
		return LEGION_PROF_PROC_OPENMP;
	case OPTRACE_VARIANT_GPU:
	case OPTRACE_VARIANT_OPENCL: /* Legion Prof has no OpenCL kind: a device */
		return LEGION_PROF_PROC_GPU;
	default:
		return LEGION_PROF_PROC_CPU;
	}
}

/* The job's id of a task name, cached per process by the name's address. */
static uint32_t task_id_of(struct exporter *exporter, struct process *process, uint64_t name,
			   const char *text, int variant)
{
	uintptr_t id = (uintptr_t)idmap_get(&process->tasks, 0, name);
	uint32_t task_id = 0;
	int err;

	if (id)
		return (uint32_t)id;
	err = legion_kinds_use(&exporter->kinds, process->prof, LEGION_KIND_TASK, text, variant,
			       &task_id);
	err = err ?: idmap_put(&process->tasks, 0, name, (void *)(uintptr_t)task_id);
	legion_export_note_error(exporter, err);
	return task_id;
}

static uint64_t hash_provenance(const struct provenance_key *key)
{
	uint64_t h = key->task_name * 31 + key->op_name;

	h = h * 31 + key->root_name;
	h = h * 31 + key->callsite;
	h = h * 31 + key->root_callsite;
	/* Unsigned: mode and reason are what a capture says, any int (int * 64 may overflow). */
	h = h * 31 + (uint64_t)(uint32_t)key->mode * 64 + (uint64_t)(uint32_t)key->reason * 8 +
	    (uint64_t)(uint32_t)key->fallback;
	h = h * 31 + (uint64_t)key->variant;
	return (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ULL;
}

/*
 * The provenance of a point of task_name, or of GPU activity an operation
 * launched (task_name 0, variant -1): which operation launched it and how
 * it ran, one short line each; the variant is in the title already. Points
 * of one kind of operation share it (cached).
 */
int legion_export_provenance_of(struct exporter *exporter, struct process *process,
				const struct profile *profile, const struct profile_op *op,
				uint64_t task_name, uint64_t op_name, uint64_t root_name,
				int variant, uint64_t *provenance)
{
	const struct profile_op *root = op;
	struct provenance_key key;

	/* A helper's own site is inside the library: the user's is its root's. */
	while (root && root->parent && root->depth > 0)
		root = root->parent;
	key = (struct provenance_key){
		.task_name = task_name,
		.op_name = op_name,
		.root_name = root_name,
		.callsite = op ? op->callsite : 0,
		.root_callsite = root ? root->callsite : 0,
		.mode = op ? op->mode : PROFILE_MODE_UNSET,
		.reason = op ? op->mode_reason : 0,
		.fallback = op ? op->fallback_reason : 0,
		.variant = variant,
	};
	struct provenance_cache_entry *slot =
		&process->provenances[hash_provenance(&key) % PROVENANCE_CACHE];
	uint32_t tgid = process->tgid;
	const char *site = key.callsite ? profile_string(profile, tgid, key.callsite) : NULL;
	const char *user_site =
		key.root_callsite ? profile_string(profile, tgid, key.root_callsite) : NULL;
	bool helper = root_name && op_name != root_name;
	/* A fallback's line says its mode and why: each thing once. */
	bool moded = key.mode != PROFILE_MODE_UNSET &&
		     !(key.mode == OPTRACE_MODE_FALLBACK && key.fallback != OPTRACE_FALLBACK_NONE);
	char who[512], human[768];
	struct legion_prof_kv pairs[] = {
		{ "op", who },
		{ "mode", moded ? optrace_mode_name(key.mode) : NULL },
		{ "mode reason", moded && key.reason && key.reason != OPTRACE_MODE_REASON_FALLBACK
					 ? optrace_mode_reason_name(key.reason)
					 : NULL },
		{ "fallback", key.fallback ? optrace_fallback_reason_name(key.fallback) : NULL },
		{ "call site", user_site },
		{ "internal site", helper && exporter->options->internal ? site : NULL },
	};
	int err;

	if (slot->id && !memcmp(&slot->key, &key, sizeof(key))) {
		*provenance = slot->id;
		return 0;
	}
	/* "demo.median via demo.sort": the operation the user called first. */
	snprintf(who, sizeof(who), "%s%s%s",
		 profile_string(profile, tgid, helper ? root_name : op_name), helper ? " via " : "",
		 helper ? profile_string(profile, tgid, op_name) : "");
	if (task_name)
		snprintf(human, sizeof(human), "%s \xe2\x86\x92 %s [%s]", who,
			 profile_string(profile, tgid, task_name), optrace_variant_name(variant));
	else
		snprintf(human, sizeof(human), "%s \xe2\x86\x92 GPU", who);
	err = legion_prof_provenance_fields(process->prof, human, pairs,
					    sizeof(pairs) / sizeof(pairs[0]), provenance);
	if (!err) {
		slot->key = key;
		slot->id = *provenance;
	}
	return err;
}

struct worker *legion_export_worker_of(struct exporter *exporter, struct process *process,
				       uint32_t tid, int variant)
{
	struct worker *worker = idmap_get(&process->workers, tid, 0);

	if (worker)
		return worker;
	worker = calloc(1, sizeof(*worker));
	if (!worker || idmap_put(&process->workers, tid, 0, worker)) {
		free(worker);
		legion_export_note_error(exporter, -ENOMEM);
		return NULL;
	}
	worker->variant = variant;
	legion_export_note_error(
		exporter,
		legion_export_proc_desc(exporter, process, proc_kind(variant), &worker->proc));
	return worker;
}

int legion_export_run_variant(const struct profile_run *run)
{
	return run->variant >= 0 && run->variant < OPTRACE_VARIANT__COUNT ? run->variant : 0;
}

static bool claimed(const struct worker *worker, const struct profile_run *run)
{
	return worker->run_op && worker->run_task == run->task && worker->run_point == run->point &&
	       worker->run_begin_ns == run->begin_ns;
}

/* The run's own record is not written yet: its op id and fevent, given out now. */
int legion_export_claim_run(struct process *process, struct worker *worker,
			    const struct profile_run *run)
{
	int err;

	if (claimed(worker, run))
		return 0;
	err = legion_prof_new_op(process->prof, &worker->run_op);
	err = err ?: legion_prof_new_event(process->prof, &worker->run_fevent);
	if (err) {
		worker->run_op = 0;
		return err;
	}
	worker->run_task = run->task;
	worker->run_point = run->point;
	worker->run_begin_ns = run->begin_ns;
	return 0;
}

/* The run's points and time, in the groups of its operation and of each that called it. */
static void count_run(struct process *process, const struct profile_run *run, uint32_t task_id,
		      int variant)
{
	uint64_t ns = run->end_ns > run->begin_ns ? run->end_ns - run->begin_ns : 0;

	for (const struct profile_op *op = run->op; op; op = op->parent) {
		struct op_entry *entry = idmap_get(&process->ops, 0, op->id);
		struct task_group *g = NULL;

		if (!entry)
			continue;
		for (size_t i = 0; i < entry->group_count && !g; i++)
			if (entry->groups[i].task_id == task_id &&
			    entry->groups[i].variant == variant)
				g = &entry->groups[i];
		if (!g && entry->group_count < OP_GROUPS_MAX) {
			g = &entry->groups[entry->group_count++];
			*g = (struct task_group){ .task_id = task_id, .variant = variant };
		}
		if (!g) {
			entry->other_points++;
			entry->other_ns += ns;
			continue;
		}
		g->points++;
		g->ns += ns;
	}
}

void legion_export_on_task_run(void *ctx, const struct profile *profile,
			       const struct profile_run *run)
{
	struct exporter *exporter = ctx;
	struct process *process = legion_export_process_of(exporter, run->tgid, false);
	struct worker *worker;
	struct op_entry *owner;
	struct legion_prof_task task = { 0 };
	const struct profile_op *op = run->op;
	uint64_t provenance = 0, create_ns;
	int variant = legion_export_run_variant(run);
	int err = 0;

	if (!process)
		return;
	worker = legion_export_worker_of(exporter, process, run->tid, variant);
	if (!worker)
		return;
	task.task_id = task_id_of(exporter, process, run->task_name,
				  profile_string(profile, run->tgid, run->task_name), variant);
	task.variant_id = legion_kinds_variant_id(LEGION_KIND_TASK, variant);
	owner = legion_export_drawn_op(exporter, process, op);
	count_run(process, run, task.task_id, variant);

	/* GPU activity it launched already names its op and fevent. */
	if (claimed(worker, run)) {
		task.op_id = worker->run_op;
		task.fevent = worker->run_fevent;
	} else {
		err = legion_prof_new_op(process->prof, &task.op_id);
	}
	worker->run_op = 0;
	err = err
		      ?: legion_export_provenance_of(exporter, process, profile, op, run->task_name,
						     run->op_name, run->root_name, variant,
						     &provenance);
	err = err
		      ?: legion_prof_operation_instance(process->prof, task.op_id,
							owner ? owner->op_id
							      : LEGION_PROF_NO_PARENT,
							LEGION_PROF_OP_KIND_TASK, provenance);
	/* Launched before it began, or (launch not captured) when it began. */
	create_ns =
		run->launch_ns && run->launch_ns < run->begin_ns ? run->launch_ns : run->begin_ns;
	task.proc_id = worker->proc;
	task.create = legion_export_since_zero(exporter, create_ns);
	task.ready = task.create;
	task.start = legion_export_since_zero(exporter, run->begin_ns);
	task.stop = legion_export_since_zero(exporter, run->end_ns);
	/* The viewer finds the creator running at the task's creation. */
	task.creator = legion_export_creator(exporter, process, op, create_ns);
	err = err ?: legion_prof_task_info(process->prof, &task, NULL, 0);
	legion_export_note_error(exporter, err);
}
