// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Legion Prof reader's summary of a file: processors, names, tasks,
 * ranges, operations and provenances record by record, then resolved by id
 * (names, processor kinds, provenance texts, each range's task and depth)
 * once the file is read.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "legion_read_internal.h"

/* ---- the summary, record by record ------------------------------------------------- */

static bool note_name(struct legion_check *p, struct legion_name **names, size_t *count,
		      struct legion_name name)
{
	struct legion_name *grown;

	for (size_t i = 0; i < *count; i++) {
		if ((*names)[i].task_id == name.task_id &&
		    (*names)[i].variant_id == name.variant_id) {
			(*names)[i].name = name.name; /* declaring again renames */
			return true;
		}
	}
	grown = realloc(*names, (*count + 1) * sizeof(**names));
	if (!grown)
		FAIL(p, "out of memory");
	*names = grown;
	grown[(*count)++] = name;
	return true;
}

/* Appends one element to a summary array of its own type. */
#define APPEND(p, array, count, value)                                                     \
	do {                                                                               \
		__typeof__(array) grown_ = realloc(array, ((count) + 1) * sizeof(*array)); \
		if (!grown_)                                                               \
			FAIL(p, "out of memory");                                          \
		(array) = grown_;                                                          \
		(array)[(count)++] = (value);                                              \
	} while (0)

static bool note_task(struct legion_check *p, struct legion_summary *s,
		      const struct legion_record *r)
{
	bool gpu = r->kind == LEGION_GPU_TASK_INFO;
	struct legion_task task = {
		.op_id = r->v[0],
		.task_id = (uint32_t)r->v[1],
		.variant_id = (uint32_t)r->v[2],
		.proc_id = r->v[3],
		.create = r->v[4],
		.ready = r->v[5],
		.start = r->v[6],
		.stop = r->v[7],
		.gpu_start = gpu ? r->v[8] : 0,
		.gpu_stop = gpu ? r->v[9] : 0,
		.creator = r->v[gpu ? 10 : 8],
		.fevent = r->v[gpu ? 12 : 10],
		.gpu = gpu,
		.parent_op = UINT64_MAX,
	};

	APPEND(p, s->tasks, s->task_count, task);
	return true;
}

static bool note_range(struct legion_check *p, struct legion_summary *s,
		       const struct legion_record *r)
{
	struct legion_range range = {
		.provenance_id = r->v[0],
		.start = r->v[1],
		.stop = r->v[2],
		.proc_id = r->v[3],
		.fevent = r->v[4],
	};

	APPEND(p, s->ranges, s->range_count, range);
	return true;
}

bool legion_note_record(struct legion_check *p, const struct legion_record *r)
{
	struct legion_summary *s = p->summary;
	struct legion_op op;

	s->records[r->kind]++;
	switch (r->kind) {
	case LEGION_MACHINE_DESC:
		s->node_id = (uint32_t)r->v[0];
		s->num_nodes = (uint32_t)r->v[1];
		s->version = (uint32_t)r->v[2];
		s->hostname = r->s[0];
		s->process_id = (uint32_t)r->v[5];
		return true;
	case LEGION_PROC_DESC:
		APPEND(p, s->procs, s->proc_count,
		       ((struct legion_proc){ r->v[0], (int32_t)r->v[1] }));
		s->procs_by_kind[(int32_t)r->v[1]]++;
		return true;
	case LEGION_TASK_KIND:
		return note_name(p, &s->task_kinds, &s->task_kind_count,
				 (struct legion_name){ (uint32_t)r->v[0], 0, r->s[0] });
	case LEGION_TASK_VARIANT:
		return note_name(
			p, &s->variants, &s->variant_count,
			(struct legion_name){ (uint32_t)r->v[0], (uint32_t)r->v[1], r->s[0] });
	case LEGION_PROVENANCE:
		APPEND(p, s->provenances, s->provenance_count,
		       ((struct legion_provenance){ r->v[0], r->s[0] }));
		return true;
	case LEGION_OPERATION_INSTANCE:
		op = (struct legion_op){ r->v[0], r->v[1], (uint32_t)r->v[2], r->v[3], NULL };
		APPEND(p, s->ops, s->op_count, op);
		return true;
	case LEGION_TASK_INFO:
	case LEGION_GPU_TASK_INFO:
		return note_task(p, s, r);
	case LEGION_APPLICATION_CALL_INFO:
		return note_range(p, s, r);
	case LEGION_TASK_WAIT_INFO:
		APPEND(p, s->waits, s->wait_count,
		       ((struct legion_wait){ r->v[0], r->v[3], r->v[4], r->v[5] }));
		return true;
	default:
		return true;
	}
}

/* ---- the summary, once the file is read ------------------------------------------------ */

/* A sorted index: (key, position) pairs, found with bsearch. */
struct index_entry {
	uint64_t key;
	size_t position;
};

static int compare_entries(const void *a, const void *b)
{
	const struct index_entry *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->position < y->position ? -1 : x->position > y->position;
}

static struct index_entry *index_build(size_t count, uint64_t (*key)(const void *, size_t),
				       const void *items)
{
	struct index_entry *index = calloc(count ? count : 1, sizeof(*index));

	if (!index)
		return NULL;
	for (size_t i = 0; i < count; i++)
		index[i] = (struct index_entry){ key(items, i), i };
	qsort(index, count, sizeof(*index), compare_entries);
	return index;
}

/* The first position of key, or SIZE_MAX. */
static size_t index_find(const struct index_entry *index, size_t count, uint64_t key)
{
	size_t low = 0, high = count;

	while (low < high) {
		size_t middle = low + (high - low) / 2;

		if (index[middle].key < key)
			low = middle + 1;
		else
			high = middle;
	}
	return low < count && index[low].key == key ? index[low].position : SIZE_MAX;
}

static uint64_t op_key(const void *items, size_t i)
{
	return ((const struct legion_op *)items)[i].op_id;
}

static uint64_t task_fevent_key(const void *items, size_t i)
{
	return ((const struct legion_task *)items)[i].fevent;
}

const char *legion_task_name(const struct legion_summary *s, uint32_t task_id)
{
	for (size_t i = 0; i < s->task_kind_count; i++)
		if (s->task_kinds[i].task_id == task_id)
			return s->task_kinds[i].name;
	return NULL;
}

const char *legion_variant_name(const struct legion_summary *s, uint32_t task_id,
				uint32_t variant_id)
{
	for (size_t i = 0; i < s->variant_count; i++)
		if (s->variants[i].task_id == task_id && s->variants[i].variant_id == variant_id)
			return s->variants[i].name;
	return NULL;
}

static int summary_proc_kind(const struct legion_summary *s, uint64_t proc)
{
	for (size_t i = 0; i < s->proc_count; i++)
		if (s->procs[i].id == proc)
			return s->procs[i].kind;
	return 0;
}

static uint64_t provenance_id_key(const void *items, size_t i)
{
	return ((const struct legion_provenance *)items)[i].id;
}

static const char *provenance_text(const struct legion_summary *s,
				   const struct index_entry *provenances, uint64_t id)
{
	size_t at = index_find(provenances, s->provenance_count, id);

	return at == SIZE_MAX ? NULL : s->provenances[at].text;
}

static int compare_range_order(const void *a, const void *b, void *ranges_arg)
{
	const struct legion_range *ranges = ranges_arg;
	const struct legion_range *x = &ranges[*(const size_t *)a],
				  *y = &ranges[*(const size_t *)b];
	size_t i = *(const size_t *)a, k = *(const size_t *)b;

	if (x->fevent != y->fevent)
		return x->fevent < y->fevent ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->stop != y->stop)
		return x->stop > y->stop ? -1 : 1; /* the longer one holds the other */
	return i > k ? -1 : i < k;		   /* a range is written after those it holds */
}

/* Depth of each range: how many ranges of its task hold it (they are nested or disjoint). */
static int range_depths(struct legion_summary *s)
{
	size_t *order = calloc(s->range_count ? s->range_count : 1, sizeof(*order));
	size_t *stack = calloc(s->range_count ? s->range_count : 1, sizeof(*stack));
	size_t depth = 0;

	if (!order || !stack) {
		free(order);
		free(stack);
		return -1;
	}
	for (size_t i = 0; i < s->range_count; i++)
		order[i] = i;
	qsort_r(order, s->range_count, sizeof(*order), compare_range_order, s->ranges);
	for (size_t i = 0; i < s->range_count; i++) {
		struct legion_range *range = &s->ranges[order[i]];

		while (depth && (s->ranges[stack[depth - 1]].fevent != range->fevent ||
				 s->ranges[stack[depth - 1]].stop <= range->start))
			depth--;
		range->depth = (unsigned int)depth;
		stack[depth++] = order[i];
	}
	free(order);
	free(stack);
	return 0;
}

/* Names, processor kinds, provenance texts and enclosing tasks, by id. */
int legion_summary_resolve(struct legion_summary *s)
{
	struct index_entry *ops = index_build(s->op_count, op_key, s->ops);
	struct index_entry *fevents = index_build(s->task_count, task_fevent_key, s->tasks);
	struct index_entry *provenances =
		index_build(s->provenance_count, provenance_id_key, s->provenances);
	int err = ops && fevents && provenances ? 0 : -1;

	for (size_t i = 0; !err && i < s->op_count; i++)
		s->ops[i].provenance = provenance_text(s, provenances, s->ops[i].provenance_id);
	for (size_t i = 0; !err && i < s->task_count; i++) {
		struct legion_task *task = &s->tasks[i];
		size_t op = index_find(ops, s->op_count, task->op_id);

		task->task_name = legion_task_name(s, task->task_id);
		task->variant_name = legion_variant_name(s, task->task_id, task->variant_id);
		task->proc_kind = summary_proc_kind(s, task->proc_id);
		if (op != SIZE_MAX) {
			task->provenance = s->ops[op].provenance;
			task->parent_op = s->ops[op].parent_id;
		}
	}
	for (size_t i = 0; !err && i < s->range_count; i++) {
		struct legion_range *range = &s->ranges[i];
		size_t task = index_find(fevents, s->task_count, range->fevent);

		range->title = provenance_text(s, provenances, range->provenance_id);
		range->proc_kind = summary_proc_kind(s, range->proc_id);
		range->task = task == SIZE_MAX ? NULL : &s->tasks[task];
	}
	if (!err)
		err = range_depths(s);
	free(ops);
	free(fevents);
	free(provenances);
	return err;
}

void legion_summary_free(struct legion_summary *s)
{
	legion_blob_free(&s->blob);
	free(s->procs);
	free(s->task_kinds);
	free(s->variants);
	free(s->tasks);
	free(s->ranges);
	free(s->ops);
	free(s->provenances);
	free(s->waits);
	memset(s, 0, sizeof(*s));
}
