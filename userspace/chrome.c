// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "chrome.h"
#include "json.h"
#include "title.h"

/* Microseconds with nanosecond precision. */
static void write_us(struct chrome_writer *writer, const char *key, uint64_t ns)
{
	fprintf(writer->out, ",\"%s\":%" PRIu64 ".%03" PRIu64, key, ns / 1000, ns % 1000);
}

/* A timestamp and a duration, relative to the capture's start. */
static void write_span(struct chrome_writer *writer, uint64_t begin_ns, uint64_t end_ns)
{
	write_us(writer, "ts", begin_ns > writer->base_ns ? begin_ns - writer->base_ns : 0);
	write_us(writer, "dur", end_ns > begin_ns ? end_ns - begin_ns : 0);
}

static void write_time(struct chrome_writer *writer, uint64_t ns)
{
	write_us(writer, "ts", ns > writer->base_ns ? ns - writer->base_ns : 0);
}

static void begin_event(struct chrome_writer *writer, const char *phase, uint32_t tgid,
			uint32_t tid)
{
	fprintf(writer->out, "%s\n{\"ph\":\"%s\",\"pid\":%u,\"tid\":%u",
		writer->events++ ? "," : "", phase, tgid, tid);
}

static void name_track(struct chrome_writer *writer, uint32_t tgid, uint32_t tid, const char *role)
{
	char name[96];

	if (!idmap_get(&writer->processes_named, tgid, 0)) {
		idmap_put(&writer->processes_named, tgid, 0, (void *)1);
		begin_event(writer, "M", tgid, tgid);
		fprintf(writer->out,
			",\"name\":\"process_name\",\"args\":{\"name\":\"process %u\"}}", tgid);
	}
	if (idmap_get(&writer->threads_named, tgid, tid))
		return;
	idmap_put(&writer->threads_named, tgid, tid, (void *)1);
	snprintf(name, sizeof(name), "%s %u", role, tid);
	begin_event(writer, "M", tgid, tid);
	fputs(",\"name\":\"thread_name\",\"args\":{\"name\":", writer->out);
	json_string(writer->out, name);
	fputs("}}", writer->out);
}

static void write_string_arg(struct chrome_writer *writer, const struct profile *profile,
			     uint32_t tgid, const char *key, uint64_t address)
{
	fprintf(writer->out, ",\"%s\":", key);
	json_string(writer->out, profile_string(profile, tgid, address));
}

static void on_op_done(void *ctx, const struct profile *profile, const struct profile_op *op)
{
	struct chrome_writer *writer = ctx;
	char title[512];

	if (op->depth > 0 && !writer->show_helpers)
		return;
	name_track(writer, op->tgid, op->tid, "thread");
	op_title(profile, op, title, sizeof(title));
	begin_event(writer, "X", op->tgid, op->tid);
	fputs(",\"cat\":\"op\",\"name\":", writer->out);
	json_string(writer->out, title);
	write_span(writer, op->begin_ns, op->end_ns);
	fputs(",\"args\":{", writer->out);
	fprintf(writer->out, "\"op\":%" PRIu64 ",\"depth\":%u", op->id, op->depth);
	write_string_arg(writer, profile, op->tgid, "name", op->name);
	fprintf(writer->out, ",\"mode\":\"%s\",\"reason\":\"%s\"",
		op->mode == PROFILE_MODE_UNSET ? "unset" : optrace_mode_name(op->mode),
		optrace_mode_reason_name(op->mode_reason));
	if (op->fallback_reason != OPTRACE_FALLBACK_NONE) {
		fprintf(writer->out, ",\"fallback\":\"%s\"",
			optrace_fallback_reason_name(op->fallback_reason));
		write_string_arg(writer, profile, op->tgid, "fallback_detail", op->fallback_detail);
	}
	write_string_arg(writer, profile, op->tgid, "callsite", op->callsite);
	fprintf(writer->out, ",\"status\":\"%s\",\"self_ns\":%" PRIu64 "%s}}",
		optrace_status_name(op->status),
		op->end_ns - op->begin_ns > op->child_ns ? op->end_ns - op->begin_ns - op->child_ns
							 : 0,
		op->cut ? ",\"cut\":true" : "");
}

static void on_task_run(void *ctx, const struct profile *profile, const struct profile_run *run)
{
	struct chrome_writer *writer = ctx;
	char role[32];
	uint64_t flow = ++writer->flow_ids;

	snprintf(role, sizeof(role), "%s proc %u", variant_title(run->variant), run->processor);
	name_track(writer, run->tgid, run->tid, role);
	begin_event(writer, "X", run->tgid, run->tid);
	fputs(",\"cat\":\"task\",\"name\":", writer->out);
	json_string(writer->out, profile_string(profile, run->tgid, run->task_name));
	write_span(writer, run->begin_ns, run->end_ns);
	fprintf(writer->out,
		",\"args\":{\"task\":%" PRIu64 ",\"point\":%u,\"variant\":\"%s\",\"processor\":%u",
		run->task, run->point, optrace_variant_name(run->variant), run->processor);
	write_string_arg(writer, profile, run->tgid, "op", run->op_name);
	write_string_arg(writer, profile, run->tgid, "root_op", run->root_name);
	fprintf(writer->out, "%s}}", run->cut ? ",\"cut\":true" : "");

	/* The flow from the launch, on the launching op's thread, to this point. */
	if (!run->op)
		return;
	begin_event(writer, "s", run->tgid, run->op->tid);
	fprintf(writer->out, ",\"cat\":\"launch\",\"name\":\"launch\",\"id\":%" PRIu64, flow);
	write_time(writer, run->launch_ns);
	fputs("}", writer->out);
	begin_event(writer, "f", run->tgid, run->tid);
	fprintf(writer->out, ",\"bp\":\"e\",\"cat\":\"launch\",\"name\":\"launch\",\"id\":%" PRIu64,
		flow);
	write_time(writer, run->begin_ns);
	fputs("}", writer->out);
}

static void on_wait(void *ctx, const struct profile *profile, const struct profile_wait *wait)
{
	struct chrome_writer *writer = ctx;

	(void)profile;
	name_track(writer, wait->tgid, wait->tid, "thread");
	begin_event(writer, "X", wait->tgid, wait->tid);
	fprintf(writer->out, ",\"cat\":\"wait\",\"name\":\"wait: %s\"",
		optrace_wait_kind_name(wait->kind));
	write_span(writer, wait->begin_ns, wait->end_ns);
	fputs("}", writer->out);
}

void chrome_writer_begin(struct chrome_writer *writer, FILE *out, uint64_t base_ns,
			 bool show_helpers, struct profile_consumer *consumer)
{
	memset(writer, 0, sizeof(*writer));
	writer->out = out;
	writer->base_ns = base_ns;
	writer->show_helpers = show_helpers;
	memset(consumer, 0, sizeof(*consumer));
	consumer->ctx = writer;
	consumer->op_done = on_op_done;
	consumer->task_run = on_task_run;
	consumer->wait = on_wait;
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", out);
}

int chrome_writer_end(struct chrome_writer *writer)
{
	fputs("\n]}\n", writer->out);
	idmap_free(&writer->threads_named);
	idmap_free(&writer->processes_named);
	if (fflush(writer->out) || ferror(writer->out))
		return -(errno ? errno : EIO);
	return 0;
}
