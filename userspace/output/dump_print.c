// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <optrace/abi.h>

#include "output/dump_print.h"
#include "output/json.h"
#include "output/text_table.h"

#define UNTRACED "not traced when it began"
#define NSEC_PER_MIN ((uint64_t)60 * 1000000000u)

const char *dump_age_text(uint64_t ns, char *buffer, size_t size)
{
	double seconds = (double)ns / 1e9;

	if (ns < 1000000)
		snprintf(buffer, size, "%" PRIu64 " us", ns / 1000);
	else if (seconds < 1)
		snprintf(buffer, size, "%.0f ms", seconds * 1e3);
	else if (seconds < 120)
		snprintf(buffer, size, "%.1f s", seconds);
	else if (seconds < 7200)
		snprintf(buffer, size, "%" PRIu64 " min %" PRIu64 " s", ns / NSEC_PER_MIN,
			 ns / 1000000000u % 60);
	else
		snprintf(buffer, size, "%.1f h", seconds / 3600);
	return buffer;
}

/* "open 12.4 s", or why there is no age. */
static const char *age_phrase(const struct process_view *view, uint64_t begin_ns, const char *verb,
			      char *buffer, size_t size)
{
	char age[32];
	uint64_t ns;

	if (!view_age(view, begin_ns, &ns))
		snprintf(buffer, size, "%s (" UNTRACED ")", verb);
	else
		snprintf(buffer, size, "%s %s", verb, dump_age_text(ns, age, sizeof(age)));
	return buffer;
}

/* A line indented by indent spaces, wrapped under itself two spaces further. */
static void __attribute__((format(printf, 4, 5)))
put_line(FILE *out, int width, int indent, const char *format, ...)
{
	char prefix[80], continuation[80], text[2048];
	va_list args;

	indent = indent < 60 ? indent : 60;
	snprintf(prefix, sizeof(prefix), "%*s", indent, "");
	snprintf(continuation, sizeof(continuation), "%*s", indent + 2, "");
	va_start(args, format);
	vsnprintf(text, sizeof(text), format, args);
	va_end(args);
	text_wrap(out, prefix, continuation, text, width);
}

static void print_op(FILE *out, const struct process_view *view, const struct view_op *op,
		     size_t depth, int width)
{
	char name[VIEW_TEXT_MAX], site[VIEW_TEXT_MAX], mode[64] = "", age[96];

	/* "fallback", not "fallback:fallback": the reason only where it says more */
	if (op->mode >= 0 &&
	    strcmp(optrace_mode_name(op->mode), optrace_mode_reason_name(op->reason)))
		snprintf(mode, sizeof(mode), " %s:%s,", optrace_mode_name(op->mode),
			 optrace_mode_reason_name(op->reason));
	else if (op->mode >= 0)
		snprintf(mode, sizeof(mode), " %s,", optrace_mode_name(op->mode));
	put_line(out, width, 4 + 2 * (int)depth, "%s%s%s:%s %s",
		 printable_text(op->name, name, sizeof(name)), op->callsite[0] ? " @ " : "",
		 printable_text(op->callsite, site, sizeof(site)), mode,
		 age_phrase(view, op->begin_ns, "open", age, sizeof(age)));
}

static void print_point(FILE *out, const struct process_view *view, const struct view_point *p,
			int width)
{
	char name[VIEW_TEXT_MAX], task[VIEW_TEXT_MAX + 32], age[96];

	if (p->name[0])
		snprintf(task, sizeof(task), "task %s point %u",
			 printable_text(p->name, name, sizeof(name)), p->point);
	else if (optrace_task_traced(p->task))
		snprintf(task, sizeof(task), "task %" PRIu64 " point %u", p->task, p->point);
	else
		snprintf(task, sizeof(task), "task point %u (launched untraced)", p->point);
	put_line(out, width, 4, "%s on %s processor %u, %s", task, optrace_variant_name(p->variant),
		 p->processor, age_phrase(view, p->begin_ns, "running", age, sizeof(age)));
}

static void print_thread(FILE *out, const struct process_view *view,
			 const struct view_thread *thread, int width)
{
	char comm[64], what[64], age[96];

	put_line(out, width, 2, "thread %u (%s)", thread->tid,
		 printable_text(thread->comm, comm, sizeof(comm)));
	for (size_t i = 0; i < thread->op_count; i++)
		print_op(out, view, &thread->ops[i], i, width);
	if (thread->depth > thread->op_count)
		put_line(out, width, 4 + 2 * (int)thread->op_count,
			 "(%zu deeper operations not kept)",
			 (size_t)thread->depth - thread->op_count);
	for (size_t i = 0; i < thread->point_count; i++)
		print_point(out, view, &thread->points[i], width);
	if (thread->waiting) {
		snprintf(what, sizeof(what), "waiting for %s",
			 optrace_wait_kind_name(thread->wait_kind));
		put_line(out, width, 4, "%s",
			 age_phrase(view, thread->wait_begin_ns, what, age, sizeof(age)));
	}
}

void dump_print_text(FILE *out, const struct process_view *view, const struct dump_options *options)
{
	size_t idle = 0, busy = 0;
	char comm[64], rank[48] = "";

	for (size_t t = 0; t < view->thread_count; t++)
		idle += view_thread_idle(&view->threads[t]);
	busy = view->thread_count - idle;
	if (view->rank >= 0 && view->rank_count > 1)
		snprintf(rank, sizeof(rank), " rank %d of %d", view->rank, view->rank_count);
	put_line(out, options->width, 0, "process %d (%s)%s: %zu busy thread%s, %zu idle",
		 view->pid, printable_text(view->comm, comm, sizeof(comm)), rank, busy,
		 busy == 1 ? "" : "s", idle);
	for (size_t t = 0; t < view->thread_count; t++) {
		const struct view_thread *thread = &view->threads[t];

		if (!view_thread_idle(thread) || options->idle_threads)
			print_thread(out, view, thread, options->width);
	}
	if (view->rejected)
		put_line(out, options->width, 2,
			 "(%u thread views made no sense and were left out: memory the process "
			 "overwrote, or one read while it changed)",
			 view->rejected);
}

/* A time as seconds of age, or null where it is not known. */
static void json_age(FILE *out, const struct process_view *view, uint64_t begin_ns)
{
	uint64_t ns;

	if (view_age(view, begin_ns, &ns))
		fprintf(out, "%.6f", (double)ns / 1e9);
	else
		fputs("null", out);
}

static void json_thread(FILE *out, const struct process_view *view,
			const struct view_thread *thread)
{
	fprintf(out, "{\"tid\": %u, \"name\": ", thread->tid);
	json_string(out, thread->comm);
	fprintf(out, ", \"depth\": %u, \"operations\": [", thread->depth);
	for (size_t i = 0; i < thread->op_count; i++) {
		const struct view_op *op = &thread->ops[i];

		fprintf(out, "%s{\"name\": ", i ? ", " : "");
		json_string(out, op->name);
		fputs(", \"callsite\": ", out);
		if (op->callsite[0])
			json_string(out, op->callsite);
		else
			fputs("null", out);
		fprintf(out, ", \"id\": %" PRIu64 ", \"mode\": ", op->id);
		if (op->mode >= 0) {
			json_string(out, optrace_mode_name(op->mode));
			fputs(", \"reason\": ", out);
			json_string(out, optrace_mode_reason_name(op->reason));
		} else {
			fputs("null, \"reason\": null", out);
		}
		fputs(", \"open_seconds\": ", out);
		json_age(out, view, op->begin_ns);
		fputs("}", out);
	}
	fputs("], \"task_points\": [", out);
	for (size_t i = 0; i < thread->point_count; i++) {
		const struct view_point *p = &thread->points[i];

		/* a task launched untraced: no tracer knows its id */
		if (optrace_task_traced(p->task))
			fprintf(out, "%s{\"task\": %" PRIu64 ", \"name\": ", i ? ", " : "",
				p->task);
		else
			fprintf(out, "%s{\"task\": null, \"name\": ", i ? ", " : "");
		if (p->name[0])
			json_string(out, p->name);
		else
			fputs("null", out);
		fprintf(out, ", \"point\": %u, \"variant\": ", p->point);
		json_string(out, optrace_variant_name(p->variant));
		fprintf(out, ", \"processor\": %u, \"running_seconds\": ", p->processor);
		json_age(out, view, p->begin_ns);
		fputs("}", out);
	}
	fputs("], \"wait\": ", out);
	if (thread->waiting) {
		fputs("{\"kind\": ", out);
		json_string(out, optrace_wait_kind_name(thread->wait_kind));
		fprintf(out, ", \"op\": %" PRIu64 ", \"seconds\": ", thread->wait_op);
		json_age(out, view, thread->wait_begin_ns);
		fputs("}", out);
	} else {
		fputs("null", out);
	}
	fputs("}", out);
}

static void json_seconds_or_null(FILE *out, uint64_t ns, bool unknown)
{
	if (unknown)
		fputs("null", out);
	else
		fprintf(out, "%.6f", (double)ns / 1e9);
}

void dump_print_json(FILE *out, const struct process_view *view)
{
	struct view_oldest oldest;

	process_view_oldest(view, &oldest);
	fprintf(out, "{\"pid\": %d, \"command\": ", view->pid);
	json_string(out, view->comm);
	if (view->rank >= 0)
		fprintf(out, ", \"rank\": %d, \"rank_count\": %d", view->rank, view->rank_count);
	else
		fputs(", \"rank\": null, \"rank_count\": null", out);
	/* One open since before any tracer has no age: the oldest is not known then. */
	fputs(", \"oldest_open_seconds\": {\"operation\": ", out);
	json_seconds_or_null(out, oldest.op_ns, oldest.op_unknown);
	fputs(", \"task_point\": ", out);
	json_seconds_or_null(out, oldest.point_ns, oldest.point_unknown);
	fprintf(out, "}, \"rejected_views\": %u, \"threads\": [", view->rejected);
	for (size_t t = 0; t < view->thread_count; t++) {
		fputs(t ? ", " : "", out);
		json_thread(out, view, &view->threads[t]);
	}
	fputs("]}", out);
}
