// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>

#include "chrome.h"
#include "json.h"
#include "title.h"

/*
 * Exports write hundreds of megabytes of these: into a buffer of our own
 * with memcpy and a hand-made integer format, not printf or stdio per field.
 */
static void flush_buffer(struct chrome_writer *writer)
{
	if (writer->used && fwrite(writer->buffer, 1, writer->used, writer->out) != writer->used)
		writer->error = -EIO;
	writer->used = 0;
}

static void put_bytes(void *ctx, const char *bytes, size_t length)
{
	struct chrome_writer *writer = ctx;

	if (writer->used + length > sizeof(writer->buffer)) {
		flush_buffer(writer);
		if (length > sizeof(writer->buffer)) {
			fwrite(bytes, 1, length, writer->out);
			return;
		}
	}
	memcpy(writer->buffer + writer->used, bytes, length);
	writer->used += length;
}

static void put(struct chrome_writer *writer, const char *text)
{
	put_bytes(writer, text, strlen(text));
}

static void put_json(struct chrome_writer *writer, const char *text)
{
	json_escape(text, put_bytes, writer);
}

static void put_u64(struct chrome_writer *writer, uint64_t value)
{
	char digits[24], *p = digits + sizeof(digits);

	do {
		*--p = (char)('0' + value % 10);
		value /= 10;
	} while (value);
	put_bytes(writer, p, (size_t)(digits + sizeof(digits) - p));
}

/* ,"key":value */
static void put_field(struct chrome_writer *writer, const char *key, uint64_t value)
{
	put(writer, ",\"");
	put(writer, key);
	put(writer, "\":");
	put_u64(writer, value);
}

/* Microseconds with nanosecond precision. */
static void write_us(struct chrome_writer *writer, const char *key, uint64_t ns)
{
	char fraction[5] = { '.', (char)('0' + ns / 100 % 10), (char)('0' + ns / 10 % 10),
			     (char)('0' + ns % 10), 0 };

	put_field(writer, key, ns / 1000);
	put(writer, fraction);
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
	put(writer, writer->events++ ? ",\n{\"ph\":\"" : "\n{\"ph\":\"");
	put(writer, phase);
	put(writer, "\"");
	put_field(writer, "pid", tgid);
	put_field(writer, "tid", tid);
}

static void name_track(struct chrome_writer *writer, uint32_t tgid, uint32_t tid, const char *role)
{
	char name[96];

	if (!idmap_get(&writer->processes_named, tgid, 0)) {
		idmap_put(&writer->processes_named, tgid, 0, (void *)1);
		begin_event(writer, "M", tgid, tgid);
		put(writer, ",\"name\":\"process_name\",\"args\":{\"name\":\"process ");
		put_u64(writer, tgid);
		put(writer, "\"}}");
	}
	if (idmap_get(&writer->threads_named, tgid, tid))
		return;
	idmap_put(&writer->threads_named, tgid, tid, (void *)1);
	snprintf(name, sizeof(name), "%s %u", role, tid);
	begin_event(writer, "M", tgid, tid);
	put(writer, ",\"name\":\"thread_name\",\"args\":{\"name\":");
	put_json(writer, name);
	put(writer, "}}");
}

static void write_string_arg(struct chrome_writer *writer, const struct profile *profile,
			     uint32_t tgid, const char *key, uint64_t address)
{
	put(writer, ",\"");
	put(writer, key);
	put(writer, "\":");
	put_json(writer, profile_string(profile, tgid, address));
}

/* ,"key":"name" for names of ours, which need no escaping. */
static void write_name_arg(struct chrome_writer *writer, const char *key, const char *name)
{
	put(writer, ",\"");
	put(writer, key);
	put(writer, "\":\"");
	put(writer, name);
	put(writer, "\"");
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
	put(writer, ",\"cat\":\"op\",\"name\":");
	put_json(writer, title);
	write_span(writer, op->begin_ns, op->end_ns);
	put(writer, ",\"args\":{\"op\":");
	put_u64(writer, op->id);
	put_field(writer, "depth", op->depth);
	write_string_arg(writer, profile, op->tgid, "name", op->name);
	write_name_arg(writer, "mode",
		       op->mode == PROFILE_MODE_UNSET ? "unset" : optrace_mode_name(op->mode));
	write_name_arg(writer, "reason", optrace_mode_reason_name(op->mode_reason));
	if (op->fallback_reason != OPTRACE_FALLBACK_NONE) {
		write_name_arg(writer, "fallback",
			       optrace_fallback_reason_name(op->fallback_reason));
		write_string_arg(writer, profile, op->tgid, "fallback_detail", op->fallback_detail);
	}
	write_string_arg(writer, profile, op->tgid, "callsite", op->callsite);
	write_name_arg(writer, "status", optrace_status_name(op->status));
	put_field(writer, "self_ns",
		  op->end_ns - op->begin_ns > op->child_ns
			  ? op->end_ns - op->begin_ns - op->child_ns
			  : 0);
	put(writer, op->cut ? ",\"cut\":true}}" : "}}");
}

static void on_task_run(void *ctx, const struct profile *profile, const struct profile_run *run)
{
	struct chrome_writer *writer = ctx;
	uint64_t flow = ++writer->flow_ids;

	if (!idmap_get(&writer->threads_named, run->tgid, run->tid)) {
		char role[32];

		snprintf(role, sizeof(role), "%s proc %u", variant_title(run->variant),
			 run->processor);
		name_track(writer, run->tgid, run->tid, role);
	}
	begin_event(writer, "X", run->tgid, run->tid);
	put(writer, ",\"cat\":\"task\",\"name\":");
	put_json(writer, profile_string(profile, run->tgid, run->task_name));
	write_span(writer, run->begin_ns, run->end_ns);
	put(writer, ",\"args\":{\"task\":");
	put_u64(writer, run->task);
	put_field(writer, "point", run->point);
	write_name_arg(writer, "variant", optrace_variant_name(run->variant));
	put_field(writer, "processor", run->processor);
	write_string_arg(writer, profile, run->tgid, "op", run->op_name);
	write_string_arg(writer, profile, run->tgid, "root_op", run->root_name);
	put(writer, run->cut ? ",\"cut\":true}}" : "}}");

	/* The flow from the launch, on the launching op's thread, to this point. */
	if (!run->op)
		return;
	begin_event(writer, "s", run->tgid, run->op->tid);
	put(writer, ",\"cat\":\"launch\",\"name\":\"launch\"");
	put_field(writer, "id", flow);
	write_time(writer, run->launch_ns);
	put(writer, "}");
	begin_event(writer, "f", run->tgid, run->tid);
	put(writer, ",\"bp\":\"e\",\"cat\":\"launch\",\"name\":\"launch\"");
	put_field(writer, "id", flow);
	write_time(writer, run->begin_ns);
	put(writer, "}");
}

static void on_wait(void *ctx, const struct profile *profile, const struct profile_wait *wait)
{
	struct chrome_writer *writer = ctx;

	(void)profile;
	name_track(writer, wait->tgid, wait->tid, "thread");
	begin_event(writer, "X", wait->tgid, wait->tid);
	put(writer, ",\"cat\":\"wait\",\"name\":\"wait: ");
	put(writer, optrace_wait_kind_name(wait->kind));
	put(writer, "\"");
	write_span(writer, wait->begin_ns, wait->end_ns);
	put(writer, "}");
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
	put(writer, "\n]}\n");
	flush_buffer(writer);
	idmap_free(&writer->threads_named);
	idmap_free(&writer->processes_named);
	if (fflush(writer->out) || ferror(writer->out) || writer->error)
		return -(errno ? errno : EIO);
	return 0;
}
