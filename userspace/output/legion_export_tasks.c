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
		return LEGION_PROF_PROC_GPU;
	default:
		return LEGION_PROF_PROC_CPU;
	}
}

static uint32_t task_id_of(struct process *process, uint64_t name, const char *text)
{
	uintptr_t id = (uintptr_t)idmap_get(&process->tasks, 0, name);

	if (id)
		return (uint32_t)id;
	id = process->next_task_id++;
	idmap_put(&process->tasks, 0, name, (void *)id);
	legion_prof_task_kind(process->prof, (uint32_t)id, text);
	return (uint32_t)id;
}

/* TaskVariant once per (task, variant), before its first run. */
void legion_export_declare_variant(struct process *process, uint32_t task_id, int variant)
{
	size_t bit = (size_t)task_id * OPTRACE_VARIANT__COUNT + (size_t)variant;
	bool tracked = bit < sizeof(process->variants_declared) * 8;

	if (tracked && process->variants_declared[bit / 8] & (1u << bit % 8))
		return;
	if (!legion_prof_task_variant(process->prof, task_id, (uint32_t)variant + 1,
				      optrace_variant_name(variant)) &&
	    tracked)
		process->variants_declared[bit / 8] |= (uint8_t)(1u << bit % 8);
}

static uint64_t hash_provenance(const struct provenance_key *key)
{
	uint64_t h = key->op_name * 31 + key->root_name;

	h = h * 31 + key->callsite;
	h = h * 31 + (uint64_t)(key->mode * 64 + key->reason * 8 + key->fallback);
	h = h * 31 + (uint64_t)key->variant;
	return (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ULL;
}

/*
 * The provenance of a point, or of GPU activity an operation launched
 * (variant -1): which operation launched it, how it ran.
 */
int legion_export_provenance_of(struct process *process, const struct profile *profile,
				const struct profile_op *op, uint64_t op_name, uint64_t root_name,
				int variant, uint64_t *provenance)
{
	struct provenance_key key = {
		.op_name = op_name,
		.root_name = root_name,
		.callsite = op ? op->callsite : 0,
		.mode = op ? op->mode : PROFILE_MODE_UNSET,
		.reason = op ? op->mode_reason : 0,
		.fallback = op ? op->fallback_reason : 0,
		.variant = variant,
	};
	struct provenance_cache_entry *slot =
		&process->provenances[hash_provenance(&key) % PROVENANCE_CACHE];
	const char *mode = key.mode == PROFILE_MODE_UNSET ? "unknown" : optrace_mode_name(key.mode);
	struct legion_prof_kv pairs[] = {
		{ "op", profile_string(profile, process->tgid, op_name) },
		{ "called", profile_string(profile, process->tgid, root_name) },
		{ "mode", op ? mode : "unknown" },
		{ "reason", op ? optrace_mode_reason_name(key.reason) : "unknown" },
		{ "fallback", optrace_fallback_reason_name(key.fallback) },
		{ "site", profile_string(profile, process->tgid, key.callsite) },
		{ "variant", variant >= 0 ? optrace_variant_name(variant) : NULL },
	};
	size_t count = sizeof(pairs) / sizeof(pairs[0]) - (variant < 0);
	char text[2048];
	int err;

	if (slot->id && !memcmp(&slot->key, &key, sizeof(key))) {
		*provenance = slot->id;
		return 0;
	}
	legion_prof_provenance_json(text, sizeof(text),
				    profile_string(profile, process->tgid, op_name), pairs, count);
	err = legion_prof_provenance(process->prof, text, provenance);
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
	legion_export_note_error(exporter, legion_prof_proc_desc(process->prof, proc_kind(variant),
								 NULL, &worker->proc));
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

void legion_export_on_task_run(void *ctx, const struct profile *profile,
			       const struct profile_run *run)
{
	struct exporter *exporter = ctx;
	struct process *process = legion_export_process_of(exporter, run->tgid, false);
	struct worker *worker;
	struct issuer *issuer = NULL;
	struct legion_prof_task task = { 0 };
	const struct profile_op *op = run->op;
	uint64_t provenance = 0;
	int variant = legion_export_run_variant(run);
	int err = 0;

	if (!process)
		return;
	worker = legion_export_worker_of(exporter, process, run->tid, variant);
	if (!worker)
		return;
	task.task_id = task_id_of(process, run->task_name,
				  profile_string(profile, run->tgid, run->task_name));
	task.variant_id = (uint32_t)variant + 1;
	legion_export_declare_variant(process, task.task_id, variant);
	if (op)
		issuer = idmap_get(&process->issuers, op->tid, 0);

	/* GPU activity it launched already names its op and fevent. */
	if (claimed(worker, run)) {
		task.op_id = worker->run_op;
		task.fevent = worker->run_fevent;
	} else {
		err = legion_prof_new_op(process->prof, &task.op_id);
	}
	worker->run_op = 0;
	err = err
		      ?: legion_export_provenance_of(process, profile, op, run->op_name,
						     run->root_name, variant, &provenance);
	err = err
		      ?: legion_prof_operation_instance(process->prof, task.op_id,
							issuer ? issuer->op : LEGION_PROF_NO_PARENT,
							LEGION_PROF_OP_KIND_TASK, provenance);
	task.proc_id = worker->proc;
	task.create = legion_export_since_zero(exporter, run->launch_ns);
	task.ready = task.create;
	task.start = legion_export_since_zero(exporter, run->begin_ns);
	task.stop = legion_export_since_zero(exporter, run->end_ns);
	task.creator = 0;
	err = err ?: legion_prof_task_info(process->prof, &task, NULL, 0);
	legion_export_note_error(exporter, err);
}
