// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The operations of a Legion Prof export: each issuing thread is a CPU (or
 * Python) processor, and each operation the user called a task on it (a
 * TaskInfo whose kind is the operation's name and whose variant its mode),
 * so that its popup carries its fields (mode and why, fallback and why, call
 * site, the tasks it launched) and the task runs it launched link to it as
 * their parent ("Operation", "Initiator") and creator. With show_helpers
 * its helpers are tasks too, overlapping it on the same processor (the
 * reader stacks them below it), each the parent of what it launched.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/legion_prof.h"
#include "output/op_title.h"
#include "output/legion_export_internal.h"

static struct issuer *issuer_of(struct exporter *exporter, struct process *process, uint32_t tid)
{
	struct issuer *issuer = idmap_get(&process->issuers, tid, 0);

	if (issuer)
		return issuer;
	issuer = calloc(1, sizeof(*issuer));
	if (!issuer || idmap_put(&process->issuers, tid, 0, issuer)) {
		free(issuer);
		legion_export_note_error(exporter, -ENOMEM);
		return NULL;
	}
	legion_export_note_error(exporter, legion_export_proc_desc(exporter, process,
								   exporter->options->python
									   ? LEGION_PROF_PROC_PYTHON
									   : LEGION_PROF_PROC_CPU,
								   &issuer->proc));
	return issuer;
}

static bool drawn(const struct exporter *exporter, const struct profile_op *op)
{
	return op->depth == 0 || exporter->options->show_helpers;
}

struct op_entry *legion_export_drawn_op(struct exporter *exporter, struct process *process,
					const struct profile_op *op)
{
	while (op && !drawn(exporter, op))
		op = op->parent;
	/* A helper whose root began before the capture is its own root. */
	while (op) {
		struct op_entry *entry = idmap_get(&process->ops, 0, op->id);

		if (entry)
			return entry;
		op = op->parent;
	}
	return NULL;
}

static const struct profile_op *drawn_profile_op(struct exporter *exporter, struct process *process,
						 const struct profile_op *op)
{
	for (; op; op = op->parent)
		if (drawn(exporter, op) && idmap_get(&process->ops, 0, op->id))
			return op;
	return NULL;
}

uint64_t legion_export_creator(struct exporter *exporter, struct process *process,
			       const struct profile_op *op, uint64_t create_ns)
{
	const struct profile_op *owner = drawn_profile_op(exporter, process, op);
	struct op_entry *entry;

	if (!owner)
		return 0;
	entry = idmap_get(&process->ops, 0, owner->id);
	/* Ended or not, its end is no earlier than what was read so far. */
	if (create_ns < owner->begin_ns || (owner->ended && create_ns >= owner->end_ns))
		return 0;
	return entry->fevent;
}

void legion_export_on_op_begin(void *ctx, const struct profile *profile,
			       const struct profile_op *op)
{
	struct exporter *exporter = ctx;
	struct process *process = legion_export_process_of(exporter, op->tgid, false);
	struct op_entry *entry;
	uint32_t task_id;
	int err;

	if (!process)
		return;
	/*
	 * Every operation's kind, drawn or not, in the order they begin: ids
	 * and colours do not depend on show_helpers. Its colour is planned
	 * for "deferred", its mode not known yet.
	 */
	legion_export_note_error(exporter,
				 legion_kinds_use(&exporter->kinds, process->prof, LEGION_KIND_OP,
						  profile_string(profile, op->tgid, op->name),
						  OPTRACE_MODE_DEFERRED, &task_id));
	if (!drawn(exporter, op))
		return;
	entry = calloc(1, sizeof(*entry));
	if (!entry) {
		legion_export_note_error(exporter, -ENOMEM);
		return;
	}
	err = legion_prof_new_op(process->prof, &entry->op_id);
	err = err ?: legion_prof_new_event(process->prof, &entry->fevent);
	err = err ?: idmap_put(&process->ops, 0, op->id, entry);
	if (err) {
		free(entry);
		legion_export_note_error(exporter, err);
	}
}

void legion_export_duration(char *text, size_t size, uint64_t ns)
{
	if (ns >= 10000000000ULL)
		snprintf(text, size, "%.1f s", (double)ns / 1e9);
	else if (ns >= 1000000)
		snprintf(text, size, "%.1f ms", (double)ns / 1e6);
	else if (ns >= 1000)
		snprintf(text, size, "%.1f us", (double)ns / 1e3);
	else
		snprintf(text, size, "%" PRIu64 " ns", ns);
}

static int compare_groups(const void *a, const void *b)
{
	const struct task_group *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return x->points > y->points ? -1 : x->points < y->points;
}

/* The members of an operation's provenance, and the text they point to. */
struct op_fields {
	struct legion_prof_kv pairs[24];
	size_t count;
	char text[2 * OP_GROUPS_SHOWN + 4][192];
	size_t texts;
};

static char *field_text(struct op_fields *f)
{
	return f->text[f->texts++];
}

static void add_field(struct op_fields *f, const char *key, const char *value)
{
	if (value && f->count < sizeof(f->pairs) / sizeof(f->pairs[0]))
		f->pairs[f->count++] = (struct legion_prof_kv){ key, value };
}

/* "task BinaryOp": "4 points, omp, 3.2 ms", the largest groups first. */
static void add_task_groups(struct exporter *exporter, struct op_fields *f, struct op_entry *entry)
{
	size_t shown = entry->group_count < OP_GROUPS_SHOWN ? entry->group_count : OP_GROUPS_SHOWN;
	uint32_t more_points = entry->other_points;
	uint64_t more_ns = entry->other_ns;
	char duration[32];

	qsort(entry->groups, entry->group_count, sizeof(entry->groups[0]), compare_groups);
	for (size_t i = 0; i < entry->group_count; i++) {
		struct task_group *g = &entry->groups[i];
		const char *name = legion_kinds_name(&exporter->kinds, g->task_id);
		const char *variant = legion_kinds_variant_name(LEGION_KIND_TASK, g->variant);
		bool twice = false;
		char *key, *value;

		if (i >= shown) {
			more_points += g->points;
			more_ns += g->ns;
			continue;
		}
		for (size_t j = 0; j < entry->group_count; j++)
			twice |= j != i && entry->groups[j].task_id == g->task_id;
		key = field_text(f);
		value = field_text(f);
		/* Keys are unique: a task that ran two ways has a line per way. */
		snprintf(key, 96, "task %s%s%s%s", name ? name : "?", twice ? " [" : "",
			 twice ? variant : "", twice ? "]" : "");
		legion_export_duration(duration, sizeof(duration), g->ns);
		snprintf(value, 192, "%u point%s, %s, %s", g->points, g->points == 1 ? "" : "s",
			 variant, duration);
		add_field(f, key, value);
	}
	if (entry->group_count > shown || entry->other_groups) {
		char *value = field_text(f);

		legion_export_duration(duration, sizeof(duration), more_ns);
		snprintf(value, 192, "%zu more kind%s, %u points, %s",
			 entry->group_count - shown + entry->other_groups,
			 entry->group_count - shown + entry->other_groups == 1 ? "" : "s",
			 more_points, duration);
		add_field(f, "tasks, more", value);
	}
}

/* What an operation's popup lists, one line each (sorted by key there). */
static void op_fields(struct exporter *exporter, const struct profile *profile,
		      const struct profile_op *op, struct op_entry *entry, struct op_fields *f)
{
	const struct profile_op *root = op;
	uint32_t tgid = op->tgid;
	char *text;

	while (root->parent && root->depth > 0)
		root = root->parent;
	/* A fallback's line says its mode and why: each thing once. */
	if (op->mode != PROFILE_MODE_UNSET &&
	    !(op->mode == OPTRACE_MODE_FALLBACK && op->fallback_reason != OPTRACE_FALLBACK_NONE)) {
		add_field(f, "mode", optrace_mode_name(op->mode));
		if (op->mode_reason != OPTRACE_MODE_REASON_NONE &&
		    op->mode_reason != OPTRACE_MODE_REASON_FALLBACK)
			add_field(f, "mode reason", optrace_mode_reason_name(op->mode_reason));
	}
	if (op->fallback_reason != OPTRACE_FALLBACK_NONE) {
		add_field(f, "fallback", optrace_fallback_reason_name(op->fallback_reason));
		if (op->fallback_detail)
			add_field(f, "fallback detail",
				  profile_string(profile, tgid, op->fallback_detail));
	}
	/* A helper's own site is inside the library: the user's is its root's. */
	if (root->callsite)
		add_field(f, "call site", profile_string(profile, tgid, root->callsite));
	if (op->depth > 0 && op->callsite && exporter->options->internal)
		add_field(f, "internal site", profile_string(profile, tgid, op->callsite));
	if (op->depth > 0 && op->parent_name)
		add_field(f, "called by", profile_string(profile, tgid, op->parent_name));
	if (!op->tree_runs) {
		add_field(f, "ran on",
			  op->tree_gpu_ns ? "the calling thread and the GPU"
					  : "the calling thread (no tasks)");
	} else {
		char *where = field_text(f);
		size_t used = 0;

		where[0] = '\0';
		for (int v = 0; v < OPTRACE_VARIANT__COUNT; v++)
			if (op->tree_points[v])
				used += (size_t)snprintf(where + used, 192 - used, "%s%s ×%u",
							 used ? ", " : "", optrace_variant_name(v),
							 op->tree_points[v]);
		add_field(f, "ran on", where);
	}
	if (op->tree_gpu_ns) {
		char duration[32];

		text = field_text(f);
		legion_export_duration(duration, sizeof(duration), op->tree_gpu_ns);
		snprintf(text, 192, "%s on the device", duration);
		add_field(f, "gpu time", text);
	}
	if (op->cut)
		add_field(f, "cut", "still open when the capture ended");
	if (op->status != OPTRACE_STATUS_OK)
		add_field(f, "status", optrace_status_name(op->status));
	add_task_groups(exporter, f, entry);
}

static int write_op(struct exporter *exporter, struct process *process,
		    const struct profile *profile, const struct profile_op *op,
		    struct op_entry *entry)
{
	const struct profile_op *caller = drawn_profile_op(exporter, process, op->parent);
	struct op_entry *parent = caller ? idmap_get(&process->ops, 0, caller->id) : NULL;
	struct issuer *issuer = issuer_of(exporter, process, op->tid);
	struct legion_prof_task task = {
		.op_id = entry->op_id,
		.variant_id = legion_kinds_variant_id(LEGION_KIND_OP, op->mode),
		.create = legion_export_since_zero(exporter, op->begin_ns),
		.stop = legion_export_since_zero(exporter, op->end_ns),
		.fevent = entry->fevent,
	};
	struct op_fields fields = { 0 };
	char human[1024];
	uint64_t provenance;
	int err;

	if (!issuer)
		return -ENOMEM;
	op_title(profile, op, human, sizeof(human));
	op_fields(exporter, profile, op, entry, &fields);
	err = legion_kinds_use(&exporter->kinds, process->prof, LEGION_KIND_OP,
			       profile_string(profile, op->tgid, op->name), op->mode,
			       &task.task_id);
	err = err
		      ?: legion_prof_provenance_fields(process->prof, human, fields.pairs,
						       fields.count, &provenance);
	err = err
		      ?: legion_prof_operation_instance(process->prof, entry->op_id,
							parent ? parent->op_id
							       : LEGION_PROF_NO_PARENT,
							LEGION_PROF_OP_KIND_TASK, provenance);
	task.proc_id = issuer->proc;
	task.ready = task.start = task.create;
	if (parent)
		task.creator = legion_export_creator(exporter, process, caller, op->begin_ns);
	return err ?: legion_prof_task_info(process->prof, &task, NULL, 0);
}

void legion_export_on_op_done(void *ctx, const struct profile *profile, const struct profile_op *op)
{
	struct exporter *exporter = ctx;
	struct process *process = legion_export_process_of(exporter, op->tgid, false);
	struct op_entry *entry;

	if (!process || !drawn(exporter, op))
		return;
	entry = idmap_get(&process->ops, 0, op->id);
	if (!entry)
		return;
	legion_export_note_error(exporter, write_op(exporter, process, profile, op, entry));
	idmap_remove(&process->ops, 0, op->id);
	free(entry);
}
