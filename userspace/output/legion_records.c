// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The records of a Legion Prof log, one function per record type: the
 * descriptors (OpDesc, MetaDesc, TaskKind, TaskVariant, ProcDesc, with
 * placeholders for kinds used before they were declared), Provenance,
 * OperationInstance, TaskInfo, GPUTaskInfo, TaskWaitInfo and MetaInfo. Each
 * checks the ids it is given against the writer's (legion_prof_core.c) and orders
 * its times. Section numbers refer to docs/legion-format.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "output/legion_prof.h"
#include "output/legion_prof_core.h"
#include "output/legion_records.h"

/*
 * create <= ready <= start <= stop (§2.8): start is kept, stop is raised to
 * it, ready and create are lowered. Times above INT64_MAX are cut first.
 */
void legion_prof_order_times(uint64_t *create, uint64_t *ready, uint64_t *start, uint64_t *stop)
{
	*start = min_u64(*start, TIME_MAX);
	*stop = max_u64(min_u64(*stop, TIME_MAX), *start);
	*ready = min_u64(*ready, *start);
	*create = min_u64(*create, *ready);
}

/* ---- descriptors -------------------------------------------------------- */

/* Notes key as declared in set, then begins record id; NULL with *err on failure. */
static unsigned char *begin_descriptor(struct legion_prof *prof, struct idmap *set, uint64_t key,
				       uint32_t id, int *err)
{
	unsigned char *p;

	*err = prof->error ?: legion_prof_key_set_add(set, key);
	if (*err)
		return NULL;
	p = legion_prof_record_begin(prof, id);
	if (!p)
		*err = prof->error;
	return p;
}

int legion_prof_op_desc(struct legion_prof *prof, uint32_t kind, const char *name)
{
	unsigned char *p;
	int err;

	p = begin_descriptor(prof, &prof->op_kinds, kind, OP_DESC_ID, &err);
	if (!p)
		return err;
	p = put_u32(p, kind);
	return legion_prof_record_end(prof, put_string(p, name));
}

int legion_prof_meta_desc(struct legion_prof *prof, uint32_t kind, const char *name)
{
	unsigned char *p;
	int err;

	p = begin_descriptor(prof, &prof->meta_kinds, kind, META_DESC_ID, &err);
	if (!p)
		return err;
	p = put_u32(p, kind);
	p = put_u8(p, 0); /* message */
	p = put_u8(p, 0); /* ordered_vc */
	return legion_prof_record_end(prof, put_string(p, name));
}

int legion_prof_task_kind(struct legion_prof *prof, uint32_t task_id, const char *name)
{
	bool again = legion_prof_key_set_has(&prof->task_kinds, task_id);
	unsigned char *p;
	int err;

	p = begin_descriptor(prof, &prof->task_kinds, task_id, TASK_KIND_ID, &err);
	if (!p)
		return err;
	p = put_u32(p, task_id);
	p = put_string(p, name);
	return legion_prof_record_end(prof,
				      put_u8(p, again)); /* overwrite: a second name replaces */
}

bool legion_prof_task_kind_declared(const struct legion_prof *prof, uint32_t task_id)
{
	return legion_prof_key_set_has(&prof->task_kinds, task_id);
}

static uint64_t variant_key(uint32_t task_id, uint32_t variant_id)
{
	return (uint64_t)task_id << 32 | variant_id;
}

int legion_prof_task_variant(struct legion_prof *prof, uint32_t task_id, uint32_t variant_id,
			     const char *name)
{
	unsigned char *p;
	int err;

	p = begin_descriptor(prof, &prof->task_variants, variant_key(task_id, variant_id),
			     TASK_VARIANT_ID, &err);
	if (!p)
		return err;
	p = put_u32(p, task_id);
	p = put_u32(p, variant_id);
	return legion_prof_record_end(prof, put_string(p, name));
}

/* Every (task, variant) used needs both records (§2.4): placeholders if undeclared. */
static int declare_task(struct legion_prof *prof, uint32_t task_id, uint32_t variant_id)
{
	char name[32];
	int err = 0;

	if (!legion_prof_key_set_has(&prof->task_kinds, task_id)) {
		snprintf(name, sizeof(name), "task %u", task_id);
		err = legion_prof_task_kind(prof, task_id, name);
	}
	if (!err &&
	    !legion_prof_key_set_has(&prof->task_variants, variant_key(task_id, variant_id))) {
		snprintf(name, sizeof(name), "variant %u", variant_id);
		err = legion_prof_task_variant(prof, task_id, variant_id, name);
	}
	return err;
}

static int declare_op_kind(struct legion_prof *prof, uint32_t kind)
{
	char name[32];

	if (legion_prof_key_set_has(&prof->op_kinds, kind))
		return 0;
	snprintf(name, sizeof(name), "operation kind %u", kind);
	return legion_prof_op_desc(prof, kind, name);
}

static int declare_meta_kind(struct legion_prof *prof, uint32_t kind)
{
	char name[32];

	if (legion_prof_key_set_has(&prof->meta_kinds, kind))
		return 0;
	snprintf(name, sizeof(name), "meta task %u", kind);
	return legion_prof_meta_desc(prof, kind, name);
}

int legion_prof_proc_desc(struct legion_prof *prof, enum legion_prof_proc_kind kind,
			  const uint8_t *cuda_uuid, uint64_t *proc_id)
{
	static const uint8_t no_uuid[16];
	unsigned char *p;

	if (prof->error)
		return prof->error;
	if (kind < LEGION_PROF_PROC_GPU || kind > LEGION_PROF_PROC_PYTHON)
		return -EINVAL; /* any other kind panics the reader (§3.4) */
	if (prof->proc_count >= LEGION_PROF_PROCS_MAX)
		return -ERANGE;
	p = legion_prof_record_begin(prof, PROC_DESC_ID);
	if (!p)
		return prof->error;
	legion_prof_add_proc(prof, kind, proc_id); /* room checked above */
	p = put_u64(p, *proc_id);
	p = put_u32(p, (uint32_t)kind);
	p = put_u32(p, sizeof(no_uuid));
	memcpy(p, cuda_uuid ? cuda_uuid : no_uuid, sizeof(no_uuid));
	return legion_prof_record_end(prof, p + sizeof(no_uuid));
}

static uint64_t text_hash(const char *text)
{
	return hash_text(HASH_SEED, text);
}

/* Remembers text's id so the next range with the same title reuses it. */
static void provenance_remember(struct legion_prof *prof, uint64_t hash, uint64_t id,
				const char *text)
{
	struct provenance_slot *slot = &prof->provenance_cache[hash % PROVENANCE_CACHE_SLOTS];
	char *copy = strdup(text);

	if (!copy)
		return; /* only a cache */
	free(slot->text);
	slot->hash = hash;
	slot->id = id;
	slot->text = copy;
}

/* Writes prof->text, clean already, as a Provenance; the id of the same text recently seen. */
static int write_provenance(struct legion_prof *prof, uint64_t *provenance)
{
	struct provenance_slot *slot;
	unsigned char *p;
	uint64_t hash;

	hash = text_hash(prof->text);
	slot = &prof->provenance_cache[hash % PROVENANCE_CACHE_SLOTS];
	if (slot->text && slot->hash == hash && !strcmp(slot->text, prof->text)) {
		*provenance = slot->id;
		return 0;
	}
	if (prof->provenances_issued >= SEQUENCE_MAX)
		return -ERANGE;
	p = legion_prof_record_begin(prof, PROVENANCE_ID);
	if (!p)
		return prof->error;
	*provenance = legion_prof_strided_id(prof, prof->provenances_issued++);
	p = put_u64(p, *provenance);
	p = put_clean_string(p, prof->text);
	provenance_remember(prof, hash, *provenance, prof->text);
	return legion_prof_record_end(prof, p);
}

int legion_prof_provenance(struct legion_prof *prof, const char *text, uint64_t *provenance)
{
	if (prof->error)
		return prof->error;
	legion_prof_sanitize(prof->text, sizeof(prof->text), text);
	return write_provenance(prof, provenance);
}

int legion_prof_provenance_fields(struct legion_prof *prof, const char *human,
				  const struct legion_prof_kv *pairs, size_t count,
				  uint64_t *provenance)
{
	if (prof->error)
		return prof->error;
	legion_prof_provenance_json(prof->text, sizeof(prof->text), human, pairs, count);
	return write_provenance(prof, provenance);
}

uint64_t legion_prof_provenance_count(const struct legion_prof *prof)
{
	return prof->provenances_issued;
}

int legion_prof_colour_padding(struct legion_prof *prof, uint64_t count)
{
	for (uint64_t i = 0; i < count; i++) {
		unsigned char *p;

		if (prof->error)
			return prof->error;
		if (prof->provenances_issued >= SEQUENCE_MAX)
			return -ERANGE;
		p = legion_prof_record_begin(prof, PROVENANCE_ID);
		if (!p)
			return prof->error;
		p = put_u64(p, legion_prof_strided_id(prof, prof->provenances_issued++));
		legion_prof_record_end(prof, put_string(p, ""));
	}
	return prof->error;
}

/* The colour generator panics with fewer than 2 colourable descriptors (§2.5). */
int legion_prof_complete_descriptors(struct legion_prof *prof)
{
	size_t colourable = prof->task_variants.count + prof->op_kinds.count +
			    prof->meta_kinds.count + prof->provenances_issued;

	if (colourable >= 2)
		return 0;
	return legion_prof_op_desc(prof, 0, "Mapping"); /* Legion's kind 0 */
}

/* ---- operations and runs ------------------------------------------------ */

int legion_prof_operation_instance(struct legion_prof *prof, uint64_t op_id, uint64_t parent_id,
				   uint32_t kind, uint64_t provenance)
{
	uint64_t number, parent_number, provenance_number;
	unsigned char *p;
	int err;

	if (prof->error)
		return prof->error;
	err = legion_prof_op_number(prof, op_id, &number);
	if (!err && parent_id != LEGION_PROF_NO_PARENT)
		err = legion_prof_op_number(prof, parent_id, &parent_number);
	if (!err && provenance)
		err = legion_prof_strided_number(prof, provenance, prof->provenances_issued,
						 &provenance_number);
	if (!err)
		err = legion_prof_claim_set_check(&prof->op_instances,
						  number); /* a second one panics */
	if (!err)
		err = declare_op_kind(prof, kind);
	if (err)
		return err;
	p = legion_prof_record_begin(prof, OPERATION_INSTANCE_ID);
	if (!p)
		return prof->error;
	legion_prof_claim_set_take(&prof->op_instances, number);
	p = put_u64(p, op_id);
	p = put_u64(p, parent_id);
	p = put_u32(p, kind);
	return legion_prof_record_end(prof, put_u64(p, provenance));
}

/*
 * Checks what a task run refers to and declares its kinds. On success the
 * op and fevent numbers are ready for legion_prof_claim_set_take().
 */
int legion_prof_check_task(struct legion_prof *prof, const struct legion_prof_task *task, bool gpu,
			   uint64_t *op, uint64_t *fevent)
{
	int kind = legion_prof_proc_kind_of(prof, task->proc_id), err;

	if (!kind || (gpu && kind != LEGION_PROF_PROC_GPU))
		return -EINVAL;
	err = legion_prof_op_number(prof, task->op_id, op);
	if (!err)
		err = legion_prof_check_event_reference(prof, task->creator);
	if (!err)
		err = legion_prof_claim_set_check(&prof->op_runs, *op);
	if (!err)
		err = legion_prof_check_fevent(prof, task->fevent, fevent);
	if (!err)
		err = declare_task(prof, task->task_id, task->variant_id);
	return err;
}

/*
 * TaskInfo, and GPUTaskInfo (gpu: the device interval after the host's): the
 * same fields but for that interval.
 */
static int write_task_record(struct legion_prof *prof, const struct legion_prof_task *task,
			     bool gpu)
{
	unsigned char *p = legion_prof_record_begin(prof, gpu ? GPU_TASK_INFO_ID : TASK_INFO_ID);

	if (!p)
		return prof->error;
	p = put_u64(p, task->op_id);
	p = put_u32(p, task->task_id);
	p = put_u32(p, task->variant_id);
	p = put_u64(p, task->proc_id);
	p = put_time(p, task->create);
	p = put_time(p, task->ready);
	p = put_time(p, task->start);
	p = put_time(p, task->stop);
	if (gpu) {
		p = put_time(p, task->gpu_start);
		p = put_time(p, task->gpu_stop);
	}
	p = put_u64(p, task->creator);
	p = put_u64(p, 0); /* critical: no event graph */
	return legion_prof_record_end(prof, put_u64(p, task->fevent));
}

int legion_prof_write_task_info(struct legion_prof *prof, const struct legion_prof_task *task)
{
	return write_task_record(prof, task, false);
}

/* TaskWaitInfo, clamped into the task's run with start <= ready <= end. */
static int write_task_wait(struct legion_prof *prof, const struct legion_prof_task *task,
			   const struct legion_prof_wait *wait)
{
	uint64_t start = min_u64(max_u64(wait->start, task->start), task->stop);
	uint64_t ready = min_u64(max_u64(wait->ready, start), task->stop);
	uint64_t end = min_u64(max_u64(wait->end, ready), task->stop);
	uint64_t event = wait->event, number;
	unsigned char *p;
	int err;

	if (!event) {
		/* a fresh event, owned at once so it costs no memory */
		err = legion_prof_new_event(prof, &event);
		if (err)
			return err;
		legion_prof_event_number(prof, event, &number);
		legion_prof_claim_set_take(&prof->fevents, number);
	}
	p = legion_prof_record_begin(prof, TASK_WAIT_INFO_ID);
	if (!p)
		return prof->error;
	p = put_u64(p, task->op_id);
	p = put_u32(p, task->task_id);
	p = put_u32(p, task->variant_id);
	p = put_u64(p, start);
	p = put_u64(p, ready);
	p = put_u64(p, end);
	return legion_prof_record_end(prof, put_u64(p, event));
}

static int write_task(struct legion_prof *prof, struct legion_prof_task *task,
		      const struct legion_prof_wait *waits, size_t wait_count, bool gpu)
{
	uint64_t op, fevent;
	size_t i;
	int err;

	if (prof->error)
		return prof->error;
	if (wait_count && !waits)
		return -EINVAL;
	for (i = 0; i < wait_count; i++)
		if (legion_prof_check_event_reference(prof, waits[i].event))
			return -EINVAL;
	err = legion_prof_check_task(prof, task, gpu, &op, &fevent);
	if (!err)
		err = legion_prof_take_fevent(prof, &task->fevent, fevent);
	if (err)
		return err;
	legion_prof_claim_set_take(&prof->op_runs, op);
	legion_prof_order_times(&task->create, &task->ready, &task->start, &task->stop);
	if (gpu) {
		/* the reader computes gpu_stop - 1 when they are reversed: 0 underflows */
		task->gpu_start = min_u64(task->gpu_start, TIME_MAX);
		task->gpu_stop = max_u64(min_u64(task->gpu_stop, TIME_MAX), task->gpu_start);
		err = write_task_record(prof, task, true);
	} else {
		err = legion_prof_write_task_info(prof, task);
	}
	for (i = 0; !err && i < wait_count; i++)
		err = write_task_wait(prof, task, &waits[i]);
	return err;
}

int legion_prof_task_info(struct legion_prof *prof, struct legion_prof_task *task,
			  const struct legion_prof_wait *waits, size_t wait_count)
{
	return write_task(prof, task, waits, wait_count, false);
}

int legion_prof_gpu_task_info(struct legion_prof *prof, struct legion_prof_task *task,
			      const struct legion_prof_wait *waits, size_t wait_count)
{
	return write_task(prof, task, waits, wait_count, true);
}

int legion_prof_meta_info(struct legion_prof *prof, struct legion_prof_meta_task *meta)
{
	uint64_t op, fevent;
	unsigned char *p;
	int err;

	if (prof->error)
		return prof->error;
	if (!legion_prof_proc_kind_of(prof, meta->proc_id))
		return -EINVAL;
	err = legion_prof_op_number(prof, meta->op_id, &op);
	if (!err)
		err = legion_prof_check_event_reference(prof, meta->creator);
	if (!err)
		err = legion_prof_check_fevent(prof, meta->fevent, &fevent);
	if (!err)
		err = declare_meta_kind(prof, meta->kind);
	if (!err)
		err = legion_prof_take_fevent(prof, &meta->fevent, fevent);
	if (err)
		return err;
	legion_prof_order_times(&meta->create, &meta->ready, &meta->start, &meta->stop);
	p = legion_prof_record_begin(prof, META_INFO_ID);
	if (!p)
		return prof->error;
	p = put_u64(p, meta->op_id);
	p = put_u32(p, meta->kind);
	p = put_u64(p, meta->proc_id);
	p = put_u64(p, meta->create);
	p = put_u64(p, meta->ready);
	p = put_u64(p, meta->start);
	p = put_u64(p, meta->stop);
	p = put_u64(p, meta->creator);
	p = put_u64(p, 0); /* critical */
	return legion_prof_record_end(prof, put_u64(p, meta->fevent));
}
