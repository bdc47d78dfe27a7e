// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "trace/batch_read.h"
#include "trace/runtime_info.h"
#include "trace/view_read.h"

/* Views a registry may list: more is a loop or garbage. */
#define MAX_VIEWS 65536
/* Deeper than this is garbage, not a runtime's recursion. */
#define MAX_DEPTH (1u << 20)

static void read_comm(const char *path, char *comm, size_t size)
{
	FILE *file = fopen(path, "re");

	if (!file || !fgets(comm, (int)size, file))
		snprintf(comm, size, "?");
	else
		comm[strcspn(comm, "\n")] = '\0';
	if (file)
		fclose(file);
}

/* True if tid is a thread of process pid now; its name into comm. */
static bool live_thread(pid_t pid, uint32_t tid, char *comm, size_t size)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%u/comm", pid, tid);
	if (access(path, F_OK))
		return false;
	read_comm(path, comm, size);
	return true;
}

/* A string of the process: "" for none, "(unreadable)" where it cannot be read. */
static void read_text(pid_t pid, uint64_t address, char *text, size_t size)
{
	bool truncated = false;

	text[0] = '\0';
	if (!address)
		return;
	if (process_read_string(pid, address, text, size, &truncated)) {
		snprintf(text, size, "(unreadable)");
		return;
	}
	if (truncated && size > 4)
		memcpy(text + size - 4, "...", 4);
}

/* A time the view holds, kept if it can be one: not after the read, nor 0. */
static uint64_t checked_time(const struct process_view *view, uint64_t ns)
{
	return ns && ns <= view->now_ns ? ns : 0;
}

static void take_ops(pid_t pid, const struct process_view *view,
		     const struct optrace_thread_view *in, struct view_thread *out, bool names)
{
	out->depth = in->depth;
	out->op_count = in->depth < OPTRACE_VIEW_DEPTH ? in->depth : OPTRACE_VIEW_DEPTH;
	for (size_t i = 0; i < out->op_count; i++) {
		const struct optrace_open_op *op = &in->ops[i];
		struct view_op *o = &out->ops[i];

		o->id = op->op;
		o->begin_ns = checked_time(view, op->begin_ns);
		o->mode = op->mode ? op->mode - 1 : -1;
		o->reason = op->reason;
		if (!names)
			continue;
		read_text(pid, op->name, o->name, sizeof(o->name));
		if (!o->name[0])
			snprintf(o->name, sizeof(o->name), "(unnamed)");
		read_text(pid, op->callsite, o->callsite, sizeof(o->callsite));
	}
}

static void take_points(pid_t pid, const struct process_view *view,
			const struct optrace_thread_view *in, struct view_thread *out, bool names)
{
	out->point_count = 0;
	for (int i = 0; i < OPTRACE_VIEW_POINTS; i++) {
		const struct optrace_running_point *p = &in->points[i];
		struct view_point *o = &out->points[out->point_count];

		if (p->used != 1)
			continue;
		o->task = p->task;
		o->begin_ns = checked_time(view, p->begin_ns);
		o->point = p->point;
		o->processor = p->processor;
		o->variant = p->variant;
		if (names)
			read_text(pid, p->name, o->name, sizeof(o->name));
		out->point_count++;
	}
}

/* One view at address into out; 1 if it is a live thread's, 0 if free or gone, -EPROTO. */
static int take_view(pid_t pid, struct process_view *view, uint64_t address,
		     struct optrace_thread_view *in, struct view_thread *out, bool names)
{
	if (process_read(pid, address, in, sizeof(*in)))
		return -EPROTO;
	if (in->magic != OPTRACE_VIEW_MAGIC)
		return -EPROTO;
	if (!in->tid || !live_thread(pid, in->tid, out->comm, sizeof(out->comm)))
		return 0;
	if (in->depth > MAX_DEPTH) {
		view->rejected++;
		return 0;
	}
	out->tid = in->tid;
	take_ops(pid, view, in, out, names);
	take_points(pid, view, in, out, names);
	out->waiting = in->waiting == 1;
	out->wait_kind = in->wait_kind;
	out->wait_op = in->wait_op;
	out->wait_begin_ns = checked_time(view, in->wait_begin_ns);
	return 1;
}

/* Keeps one view per thread: a hostile registry may list a thread twice. */
static bool seen_thread(const struct process_view *view, uint32_t tid)
{
	for (size_t i = 0; i < view->thread_count; i++) {
		if (view->threads[i].tid == tid)
			return true;
	}
	return false;
}

static bool visited(const uint64_t *visits, int count, uint64_t address)
{
	for (int i = 0; i < count; i++) {
		if (visits[i] == address)
			return true;
	}
	return false;
}

static int by_tid(const void *a, const void *b)
{
	uint32_t x = ((const struct view_thread *)a)->tid, y = ((const struct view_thread *)b)->tid;

	return (x > y) - (x < y);
}

/* Room for one more thread in view; false without memory. */
static bool room_for_thread(struct process_view *view, size_t *capacity)
{
	struct view_thread *grown;
	size_t wanted = *capacity ? 2 * *capacity : 16;

	if (view->thread_count < *capacity)
		return true;
	grown = realloc(view->threads, wanted * sizeof(*grown));
	if (!grown)
		return false;
	view->threads = grown;
	*capacity = wanted;
	return true;
}

static bool view_registry_valid(const void *buffer)
{
	const struct optrace_view_registry *registry = buffer;

	return registry->magic == OPTRACE_VIEW_REGISTRY_MAGIC &&
	       registry->view_size == sizeof(struct optrace_thread_view);
}

int view_read_process(pid_t pid, struct process_view *view, unsigned int flags)
{
	struct optrace_view_registry registry;
	struct optrace_runtime_info info;
	struct optrace_thread_view *in = NULL;
	uint64_t address = 0, *visits = NULL;
	size_t capacity = 0;
	char path[64];
	int err, limit;

	memset(view, 0, sizeof(*view));
	view->pid = pid;
	view->rank = -1;
	err = liboptrace_symbol_read(pid, "optrace_threads", &registry, sizeof(registry),
				     view_registry_valid, &address);
	if (err)
		return err == -ENOENT &&
				       !liboptrace_symbol_address(pid, "optrace_runtime", &address)
			       ? -ENOTSUP
			       : err;
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	read_comm(path, view->comm, sizeof(view->comm));
	if (!runtime_info_read(pid, &info)) {
		view->rank = info.rank;
		view->rank_count = info.rank_count;
	}
	/*
	 * As batch_read.c's walk: a few times the threads at most, and never
	 * back to a view already read (a loop a hostile process made).
	 */
	limit = 4 * process_thread_count(pid, MAX_VIEWS / 4) + 64;
	in = malloc(sizeof(*in));
	visits = calloc((size_t)limit, sizeof(*visits));
	if (!in || !visits) {
		err = -ENOMEM;
		goto cleanup;
	}
	view->now_ns = clock_ns(CLOCK_MONOTONIC);
	address = registry.head;
	for (int i = 0; address && i < limit; i++) {
		struct view_thread *out;
		int taken;

		/* back where it was: a loop (a registry only grows at its head) */
		if (visited(visits, i, address)) {
			view->rejected++;
			break;
		}
		visits[i] = address;
		if (!room_for_thread(view, &capacity)) {
			err = -ENOMEM;
			goto cleanup;
		}
		out = &view->threads[view->thread_count];
		memset(out, 0, sizeof(*out));
		taken = take_view(pid, view, address, in, out, !(flags & VIEW_READ_AGES));

		if (taken < 0) {
			view->rejected++;
			break;
		}
		if (taken && !seen_thread(view, out->tid))
			view->thread_count++;
		address = in->next;
	}
	/* the process's first thread first, then as they were made (none: no array) */
	if (view->thread_count)
		qsort(view->threads, view->thread_count, sizeof(*view->threads), by_tid);
	err = 0;
cleanup:
	free(visits);
	free(in);
	if (err)
		process_view_free(view);
	return err;
}

void process_view_free(struct process_view *view)
{
	free(view->threads);
	view->threads = NULL;
	view->thread_count = 0;
}

bool view_thread_idle(const struct view_thread *thread)
{
	return !thread->depth && !thread->point_count && !thread->waiting;
}

bool view_age(const struct process_view *view, uint64_t begin_ns, uint64_t *age_ns)
{
	if (!begin_ns || begin_ns > view->now_ns)
		return false;
	*age_ns = view->now_ns - begin_ns;
	return true;
}

/* One open thing begun at begin_ns: its age into the oldest, or unknown. */
static void note_age(const struct process_view *view, uint64_t begin_ns, uint64_t *oldest_ns,
		     bool *unknown)
{
	uint64_t age;

	if (!view_age(view, begin_ns, &age))
		*unknown = true;
	else if (age > *oldest_ns)
		*oldest_ns = age;
}

void process_view_oldest(const struct process_view *view, struct view_oldest *oldest)
{
	*oldest = (struct view_oldest){ 0 };
	for (size_t t = 0; t < view->thread_count; t++) {
		const struct view_thread *thread = &view->threads[t];

		for (size_t i = 0; i < thread->op_count; i++)
			note_age(view, thread->ops[i].begin_ns, &oldest->op_ns,
				 &oldest->op_unknown);
		for (size_t i = 0; i < thread->point_count; i++)
			note_age(view, thread->points[i].begin_ns, &oldest->point_ns,
				 &oldest->point_unknown);
	}
}
