// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The operations of a Legion Prof export: each issuing thread is a CPU (or
 * Python) processor holding one top-level task that spans the recording,
 * and each root operation a range on it, titled by op_title(), with its
 * helpers nested inside when show_helpers asks for them. Root operations
 * are written in the order they began on their thread, once each is done.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/legion_prof.h"
#include "output/op_title.h"
#include "output/legion_export_internal.h"

static struct issuer *issuer_of(struct exporter *exporter, struct process *process, uint32_t tid)
{
	struct issuer *issuer = idmap_get(&process->issuers, tid, 0);
	struct legion_prof_task task = { .task_id = MAIN_TASK_ID, .variant_id = 1 };
	char text[64];
	uint64_t provenance = 0;
	int err;

	if (issuer)
		return issuer;
	issuer = calloc(1, sizeof(*issuer));
	if (!issuer || idmap_put(&process->issuers, tid, 0, issuer)) {
		free(issuer);
		legion_export_note_error(exporter, -ENOMEM);
		return NULL;
	}
	err = legion_prof_proc_desc(process->prof,
				    exporter->options->python ? LEGION_PROF_PROC_PYTHON
							      : LEGION_PROF_PROC_CPU,
				    NULL, &issuer->proc);
	err = err ?: legion_prof_new_op(process->prof, &issuer->op);
	snprintf(text, sizeof(text), "thread %u of process %u", tid, process->tgid);
	err = err ?: legion_prof_provenance(process->prof, text, &provenance);
	err = err
		      ?: legion_prof_operation_instance(process->prof, issuer->op,
							LEGION_PROF_NO_PARENT,
							LEGION_PROF_OP_KIND_TASK, provenance);
	task.op_id = issuer->op;
	task.proc_id = issuer->proc;
	/* It spans the recording: from time zero to the end. */
	err = err ?: legion_prof_span_begin(process->prof, &task, &issuer->span);
	issuer->fevent = task.fevent;
	legion_export_note_error(exporter, err);
	return issuer;
}

void legion_export_on_op_begin(void *ctx, const struct profile *profile,
			       const struct profile_op *op)
{
	struct exporter *exporter = ctx;
	struct process *process = legion_export_process_of(exporter, op->tgid, false);
	struct issuer *issuer;
	struct root_entry *entry;

	(void)profile;
	if (!process || op->depth != 0)
		return;
	issuer = issuer_of(exporter, process, op->tid);
	entry = calloc(1, sizeof(*entry));
	if (!issuer || !entry) {
		free(entry);
		legion_export_note_error(exporter, -ENOMEM);
		return;
	}
	if (issuer->count == issuer->capacity) {
		size_t capacity = issuer->capacity ? issuer->capacity * 2 : 16;
		struct root_entry **queue = realloc(issuer->queue, capacity * sizeof(*queue));

		if (!queue) {
			free(entry);
			legion_export_note_error(exporter, -ENOMEM);
			return;
		}
		issuer->queue = queue;
		issuer->capacity = capacity;
	}
	entry->op = op->id;
	entry->begin_ns = op->begin_ns;
	issuer->queue[issuer->count++] = entry;
	idmap_put(&process->roots, 0, op->id, entry);
}

static int compare_helpers(const void *a, const void *b)
{
	const struct helper *x = a, *y = b;

	if (x->begin_ns != y->begin_ns)
		return x->begin_ns < y->begin_ns ? -1 : 1;
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

/* The root's range, its helpers' nested inside, in the order they began. */
static void write_root(struct exporter *exporter, struct issuer *issuer, struct root_entry *entry)
{
	struct helper *stack[64];
	int depth = 0;

	legion_prof_range_begin(issuer->span, legion_export_since_zero(exporter, entry->begin_ns));
	if (entry->helper_count) /* helpers is NULL without any: qsort() must not get NULL */
		qsort(entry->helpers, entry->helper_count, sizeof(*entry->helpers),
		      compare_helpers);
	for (size_t i = 0; i < entry->helper_count; i++) {
		struct helper *helper = &entry->helpers[i];

		while (depth && stack[depth - 1]->end_ns <= helper->begin_ns) {
			depth--;
			legion_prof_range_end(
				issuer->span, stack[depth]->title,
				legion_export_since_zero(exporter, stack[depth]->end_ns));
		}
		if (depth == 64)
			continue;
		legion_prof_range_begin(issuer->span,
					legion_export_since_zero(exporter, helper->begin_ns));
		stack[depth++] = helper;
	}
	while (depth--)
		legion_prof_range_end(issuer->span, stack[depth]->title,
				      legion_export_since_zero(exporter, stack[depth]->end_ns));
	legion_export_note_error(
		exporter, legion_prof_range_end(issuer->span, entry->title,
						legion_export_since_zero(exporter, entry->end_ns)));
}

void legion_export_free_entry(struct root_entry *entry)
{
	for (size_t i = 0; i < entry->helper_count; i++)
		free(entry->helpers[i].title);
	free(entry->helpers);
	free(entry->title);
	free(entry);
}

void legion_export_flush_issuer(struct exporter *exporter, struct process *process,
				struct issuer *issuer)
{
	while (issuer->head < issuer->count && issuer->queue[issuer->head]->done) {
		struct root_entry *entry = issuer->queue[issuer->head++];

		write_root(exporter, issuer, entry);
		idmap_remove(&process->roots, 0, entry->op);
		legion_export_free_entry(entry);
	}
	if (issuer->head == issuer->count)
		issuer->head = issuer->count = 0;
}

static const struct profile_op *root_of(const struct profile_op *op)
{
	while (op && op->depth > 0)
		op = op->parent;
	return op;
}

void legion_export_on_op_done(void *ctx, const struct profile *profile, const struct profile_op *op)
{
	struct exporter *exporter = ctx;
	struct process *process = legion_export_process_of(exporter, op->tgid, false);
	const struct profile_op *root = root_of(op);
	struct root_entry *entry;
	char title[1024];

	if (!process || !root || (op->depth > 0 && !exporter->options->show_helpers))
		return;
	entry = idmap_get(&process->roots, 0, root->id);
	if (!entry)
		return;
	op_title(profile, op, title, sizeof(title));
	if (op->depth == 0) {
		entry->done = true;
		entry->end_ns = op->end_ns;
		entry->title = strdup(title);
		legion_export_flush_issuer(exporter, process,
					   idmap_get(&process->issuers, op->tid, 0));
		return;
	}
	if (exporter->options->show_helpers) {
		struct helper *helpers =
			realloc(entry->helpers, (entry->helper_count + 1) * sizeof(*helpers));

		if (!helpers) {
			legion_export_note_error(exporter, -ENOMEM);
			return;
		}
		entry->helpers = helpers;
		helpers[entry->helper_count++] = (struct helper){
			.begin_ns = op->begin_ns,
			.end_ns = op->end_ns,
			.depth = op->depth,
			.title = strdup(title),
		};
	}
}
