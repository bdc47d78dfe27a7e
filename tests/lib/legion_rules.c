// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Legion Prof reader's rules: what each record must hold, and what
 * needs the whole file (docs/legion-format.md §2.3-2.7, §3.4), checked once it is read;
 * a broken rule is what makes the real reader (legion_prof 25.06) panic or
 * lose data. Strict mode adds what optrace's writer promises (docs/legion.md).
 */
#include <stdlib.h>
#include <string.h>

#include "legion_popup.h"
#include "legion_read_internal.h"

static void *vec_push(struct vec *vec, size_t size)
{
	if (vec->count == vec->capacity) {
		size_t capacity = vec->capacity ? 2 * vec->capacity : 64;
		void *items = realloc(vec->items, capacity * size);

		if (!items)
			return NULL;
		vec->items = items;
		vec->capacity = capacity;
	}
	return (char *)vec->items + vec->count++ * size;
}

#define PUSH(p, vec, type, value)                          \
	do {                                               \
		type *slot_ = vec_push(vec, sizeof(type)); \
		if (!slot_)                                \
			FAIL(p, "out of memory");          \
		*slot_ = (value);                          \
	} while (0)

static bool key_push(struct legion_check *p, enum key_list list, uint64_t key)
{
	PUSH(p, &p->keys[list], uint64_t, key);
	return true;
}

static bool key_has(const struct legion_check *p, enum key_list list, uint64_t key)
{
	const uint64_t *keys = p->keys[list].items;

	for (size_t i = 0; i < p->keys[list].count; i++)
		if (keys[i] == key)
			return true;
	return false;
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Number of distinct keys; sets *duplicate when one appears twice. */
static size_t key_distinct(struct legion_check *p, enum key_list list, bool *duplicate)
{
	uint64_t *keys = p->keys[list].items;
	size_t count = p->keys[list].count, distinct = 0;

	*duplicate = false;
	if (!count)
		return 0;
	qsort(keys, count, sizeof(uint64_t), compare_u64);
	for (size_t i = 0; i < count; i++) {
		if (i && keys[i] == keys[i - 1])
			*duplicate = true;
		else
			distinct++;
	}
	return distinct;
}

static bool check_event(struct legion_check *p, uint64_t event, bool required)
{
	if (!event && required)
		FAIL(p, "event 0 where one is required");
	if (event && (event >> 60) != 8)
		FAIL(p, "event 0x%llx is not an event id", (unsigned long long)event);
	return true;
}

static bool check_time(struct legion_check *p, uint64_t t)
{
	if (t > (uint64_t)INT64_MAX)
		FAIL(p, "timestamp above INT64_MAX");
	return true;
}

static bool check_ordered(struct legion_check *p, const uint64_t *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!check_time(p, t[i]))
			return false;
		if (i && t[i - 1] > t[i])
			FAIL(p, "timestamps out of order (%llu > %llu)",
			     (unsigned long long)t[i - 1], (unsigned long long)t[i]);
	}
	return true;
}

static const struct run *find_run_by_op(const struct legion_check *p, uint64_t op)
{
	const struct run *runs = p->runs.items;

	for (size_t i = 0; i < p->runs.count; i++)
		if (runs[i].op == op)
			return &runs[i];
	return NULL;
}

static const struct run *find_run_by_fevent(const struct legion_check *p, uint64_t fevent)
{
	const struct run *runs = p->runs.items;

	for (size_t i = 0; i < p->runs.count; i++)
		if (runs[i].fevent == fevent)
			return &runs[i];
	return NULL;
}

/* MetaInfo: times, events, a kind that needs its MetaDesc. */
static bool check_meta_run(struct legion_check *p, const struct legion_record *r)
{
	struct run run = { .op = UINT64_MAX,
			   .proc = r->v[2],
			   .start = r->v[5],
			   .stop = r->v[6],
			   .fevent = r->v[9],
			   .task = UINT32_MAX };

	if (!key_push(p, USED_META_KINDS, r->v[1])) /* checked against MetaDesc at the end */
		return false;
	if (!check_event(p, r->v[7], false) || !check_ordered(p, &r->v[3], 4) ||
	    !check_event(p, run.fevent, true) || !key_push(p, FEVENTS, run.fevent))
		return false;
	PUSH(p, &p->runs, struct run, run);
	return true;
}

/* TaskInfo, GPUTaskInfo: ids, order of times, the fevent. */
static bool check_run(struct legion_check *p, const struct legion_record *r)
{
	struct run run = { .op = r->v[0],
			   .task = (uint32_t)r->v[1],
			   .variant = (uint32_t)r->v[2],
			   .proc = r->v[3],
			   .gpu = r->kind == LEGION_GPU_TASK_INFO };

	run.fevent = r->v[run.gpu ? 12 : 10];
	if (!check_event(p, r->v[run.gpu ? 10 : 8], false))
		return false;
	if (run.gpu && (!check_ordered(p, &r->v[8], 2)))
		return false;
	if (run.op == UINT64_MAX)
		FAIL(p, "task op id UINT64_MAX");
	if (find_run_by_op(p, run.op))
		FAIL(p, "two task records for op %llu", (unsigned long long)run.op);
	if (!check_ordered(p, &r->v[4], 4) || !check_event(p, run.fevent, true))
		return false;
	run.start = r->v[6];
	run.stop = r->v[7];
	if (!key_push(p, FEVENTS, run.fevent))
		return false;
	PUSH(p, &p->runs, struct run, run);
	return true;
}

static bool check_wait(struct legion_check *p, const struct legion_record *r)
{
	const struct run *run = find_run_by_op(p, r->v[0]);
	struct interval wait;

	if (!run)
		FAIL(p, "TaskWaitInfo before its TaskInfo");
	if (!check_ordered(p, &r->v[3], 3) || !check_event(p, r->v[6], true))
		return false;
	if (p->strict && (r->v[3] < run->start || r->v[5] > run->stop))
		FAIL(p, "wait outside its task's run");
	wait = (struct interval){ r->v[3], r->v[5], run->fevent, run->proc, false };
	PUSH(p, &p->intervals, struct interval, wait);
	return true;
}

static bool check_call(struct legion_check *p, const struct legion_record *r)
{
	struct interval call = { r->v[1], r->v[2], r->v[4], r->v[3], true };

	if (!key_has(p, PROVENANCES, r->v[0]))
		FAIL(p, "ApplicationCallInfo before its Provenance");
	if (!check_ordered(p, &r->v[1], 2) || !check_event(p, r->v[4], true))
		return false;
	PUSH(p, &p->intervals, struct interval, call);
	return true;
}

/* Both viewers show the same keys, in the same order (the values' look-alikes aside). */
static bool popups_agree(const char *text)
{
	static struct legion_popup viewer, legacy;

	legion_popup_viewer(text, &viewer);
	legion_popup_legacy(text, &legacy);
	if (viewer.count != legacy.count)
		return false;
	for (int i = 0; i < viewer.count; i++) {
		size_t key = strcspn(viewer.lines[i], ":");

		if (strncmp(viewer.lines[i], legacy.lines[i], key + 1))
			return false;
	}
	return true;
}

static bool looks_like_provenance_json(const char *text)
{
	size_t n = strlen(text);

	return n >= 4 && !strncmp(text, "[\"", 2) && !strcmp(text + n - 2, "}]");
}

static bool check_provenance(struct legion_check *p, const struct legion_record *r)
{
	if (!r->v[0])
		FAIL(p, "provenance id 0");
	/* other text is shown verbatim (§2.6); the JSON form must parse */
	if (p->strict && looks_like_provenance_json(r->s[0]) &&
	    legion_provenance_members(r->s[0]) < 0)
		FAIL(p, "provenance is not [\"human\", {...}] JSON: %.200s", r->s[0]);
	if (p->strict && strchr(r->s[0], '$') && !popups_agree(r->s[0]))
		FAIL(p, "the viewers' popups of a provenance differ: %.300s", r->s[0]);
	return key_push(p, PROVENANCES, r->v[0]);
}

static bool check_operation(struct legion_check *p, const struct legion_record *r)
{
	if (r->v[0] == UINT64_MAX)
		FAIL(p, "OperationInstance op id UINT64_MAX");
	if (!key_push(p, OP_INSTANCES, r->v[0]) || !key_push(p, USED_OP_KINDS, r->v[2]))
		return false;
	if (r->v[3] && p->strict && !key_has(p, PROVENANCES, r->v[3]))
		FAIL(p, "OperationInstance provenance %llu unknown", (unsigned long long)r->v[3]);
	return true;
}

static bool check_machine(struct legion_check *p, const struct legion_record *r)
{
	if (r->v[2] != p->expect_version)
		FAIL(p, "MachineDesc version %llu", (unsigned long long)r->v[2]);
	if (r->v[0] >= r->v[1])
		FAIL(p, "node_id %llu of %llu nodes", (unsigned long long)r->v[0],
		     (unsigned long long)r->v[1]);
	p->node_id = (uint32_t)r->v[0];
	return true;
}

static bool check_proc(struct legion_check *p, const struct legion_record *r)
{
	struct legion_proc proc = { r->v[0], (int32_t)r->v[1] };

	if (proc.kind < 1 || proc.kind > LEGION_PROC_KIND_MAX)
		FAIL(p, "bad processor kind %d", proc.kind);
	if (proc.id >> 56 != 0x1d)
		FAIL(p, "proc id 0x%llx", (unsigned long long)proc.id);
	PUSH(p, &p->procs, struct legion_proc, proc);
	return true;
}

bool legion_check_record(struct legion_check *p, const struct legion_record *r)
{
	switch (r->kind) {
	case LEGION_MACHINE_DESC:
		return check_machine(p, r);
	case LEGION_PROC_DESC:
		return check_proc(p, r);
	case LEGION_OP_DESC:
		return key_push(p, OP_KINDS, r->v[0]);
	case LEGION_META_DESC:
		return key_push(p, META_KINDS, r->v[0]);
	case LEGION_TASK_KIND:
		return key_push(p, TASK_KINDS, r->v[0]);
	case LEGION_TASK_VARIANT:
		return key_push(p, VARIANTS, r->v[0] << 32 | r->v[1]);
	case LEGION_PROVENANCE:
		return check_provenance(p, r);
	case LEGION_OPERATION_INSTANCE:
		return check_operation(p, r);
	case LEGION_TASK_INFO:
	case LEGION_GPU_TASK_INFO:
		return check_run(p, r);
	case LEGION_META_INFO:
		return check_meta_run(p, r);
	case LEGION_TASK_WAIT_INFO:
		return check_wait(p, r);
	case LEGION_APPLICATION_CALL_INFO:
		return check_call(p, r);
	default:
		return true;
	}
}

static int proc_kind_of(const struct legion_check *p, uint64_t proc)
{
	const struct legion_proc *procs = p->procs.items;

	for (size_t i = 0; i < p->procs.count; i++)
		if (procs[i].id == proc)
			return procs[i].kind;
	return 0;
}

/* Two intervals of one task that overlap without one holding the other. */
static bool overlap_partially(const struct interval *a, const struct interval *b)
{
	if (a->stop <= b->start || b->stop <= a->start)
		return false;
	return !((a->start <= b->start && b->stop <= a->stop) ||
		 (b->start <= a->start && a->stop <= b->stop));
}

/* Calls (and waits) on one task: inside its run, nested or disjoint (state.rs:823/851). */
static bool check_intervals(struct legion_check *p)
{
	const struct interval *intervals = p->intervals.items;

	for (size_t i = 0; i < p->intervals.count; i++) {
		const struct interval *a = &intervals[i];
		const struct run *run = find_run_by_fevent(p, a->fevent);

		if (!run || run->proc != a->proc)
			FAIL(p, "range without its task on the same processor");
		if (a->call && (a->start < run->start || a->stop > run->stop))
			FAIL(p, "range [%llu, %llu] outside its task [%llu, %llu]",
			     (unsigned long long)a->start, (unsigned long long)a->stop,
			     (unsigned long long)run->start, (unsigned long long)run->stop);
		for (size_t k = 0; k < p->intervals.count; k++) {
			const struct interval *b = &intervals[k];

			if (k == i || b->fevent != a->fevent || !(a->call || b->call))
				continue;
			if (overlap_partially(a, b))
				FAIL(p, "ranges [%llu, %llu] and [%llu, %llu] overlap partially",
				     (unsigned long long)a->start, (unsigned long long)a->stop,
				     (unsigned long long)b->start, (unsigned long long)b->stop);
		}
	}
	return true;
}

/* Every run on a declared processor, with its TaskKind and TaskVariant. */
static bool check_runs_declared(struct legion_check *p)
{
	const struct run *runs = p->runs.items;

	for (size_t i = 0; i < p->runs.count; i++) {
		const struct run *run = &runs[i];
		int kind = proc_kind_of(p, run->proc);

		if (!kind)
			FAIL(p, "processor 0x%llx without ProcDesc", (unsigned long long)run->proc);
		if (run->gpu && kind != 1)
			FAIL(p, "GPUTaskInfo on a processor of kind %d", kind);
		if (run->task == UINT32_MAX)
			continue; /* a meta-task */
		if (!key_has(p, TASK_KINDS, run->task) ||
		    !key_has(p, VARIANTS, (uint64_t)run->task << 32 | run->variant))
			FAIL(p, "task %u variant %u without TaskKind/TaskVariant", run->task,
			     run->variant);
	}
	return true;
}

/* The rules that need the whole file: §2.3-2.7, §3.4. */
bool legion_check_whole(struct legion_check *p)
{
	const uint64_t *used;
	size_t colourable, i;
	bool duplicate;

	if (!check_runs_declared(p))
		return false;
	used = p->keys[USED_META_KINDS].items;
	for (i = 0; i < p->keys[USED_META_KINDS].count; i++)
		if (!key_has(p, META_KINDS, used[i]))
			FAIL(p, "MetaInfo kind without MetaDesc");
	used = p->keys[USED_OP_KINDS].items;
	for (i = 0; i < p->keys[USED_OP_KINDS].count; i++)
		if (!key_has(p, OP_KINDS, used[i]))
			FAIL(p, "OperationInstance kind without OpDesc");
	key_distinct(p, FEVENTS, &duplicate);
	if (duplicate)
		FAIL(p, "duplicate fevent");
	key_distinct(p, OP_INSTANCES, &duplicate);
	if (duplicate)
		FAIL(p, "duplicate OperationInstance op id");
	colourable = key_distinct(p, VARIANTS, &duplicate) + key_distinct(p, OP_KINDS, &duplicate) +
		     key_distinct(p, META_KINDS, &duplicate) +
		     key_distinct(p, PROVENANCES, &duplicate);
	if (colourable < 2)
		FAIL(p, "%zu colourable descriptors", colourable);
	return check_intervals(p);
}
