// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The report of `optrace report`, as an export format: a capture's profile
 * as text (or JSON), the same tables as optrace stat computed from every
 * recorded event, after a header that says what the capture holds and
 * what, if anything, was lost.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/diag.h"
#include "capture/capture.h"
#include "model/profile.h"
#include "model/profile_aggregates.h"
#include "model/replay.h"
#include "output/export_format.h"
#include "output/gpu_tables.h"
#include "output/json.h"
#include "output/stat_print.h"
#include "output/text_table.h"

struct report_export {
	struct report_builder builder;
	struct stat_print_options print;
	const struct replay *replay; /* for the JSON members */
	char lost[2 * sizeof(((struct replay_note *)0)->text)];
	bool begun;
};

/* One capture: what it holds, and what its recorder lost. */
static void print_source(FILE *out, int width, const char *path,
			 const struct capture_header *header, const struct capture_status *status,
			 double seconds)
{
	const struct capture_trailer *trailer = &status->trailer;
	char safe[256], target[1024], host[256];
	char span[32] = "";

	if (seconds >= 0)
		snprintf(span, sizeof(span), " over %.3f s", seconds);
	/* The file's words: made printable. */
	text_printf(out, width, "capture %s: %s%s%s, %llu records%s", path,
		    header->target[0] ? printable_text(header->target, target, sizeof(target))
				      : "(no target)",
		    header->hostname[0] ? " on " : "",
		    printable_text(header->hostname, host, sizeof(host)),
		    (unsigned long long)status->records, span);
	for (size_t i = 0; status->has_trailer && i < trailer->counter_count; i++) {
		const struct capture_counter *counter = &trailer->counters[i];

		if (!counter->value || strncmp(counter->name, "lost.", 5))
			continue;
		text_printf(
			out, width, "LOST: %s = %llu%s",
			printable_text(counter->name, safe, sizeof(safe)),
			(unsigned long long)counter->value,
			!strcmp(counter->name, capture_counter_name(CAPTURE_LOST_RINGBUF_FULL)) ||
					!strcmp(counter->name,
						capture_counter_name(CAPTURE_LOST_STRINGS))
				? " (the ring buffer was full: raise --ringbuf)"
				: "");
	}
}

/* What the captures hold, and what they lack, before the tables. */
static void print_summary(FILE *out, int width, const struct replay *replay,
			  const struct profile *profile)
{
	double seconds = (profile->stats.last_ns - profile->stats.first_ns) / 1e9;
	char safe[2 * sizeof(replay->notes[0].text)];

	if (seconds < 0)
		seconds = 0;
	if (!replay->source_count)
		print_source(out, width, replay->path, replay->header, replay->status, seconds);
	for (size_t i = 0; i < replay->source_count; i++)
		print_source(out, width, replay->sources[i].path, replay->sources[i].header,
			     replay->sources[i].status, replay->source_count > 1 ? -1 : seconds);
	if (replay->source_count > 1)
		text_printf(out, width, "merged onto one timeline (by their hosts' clocks): %.3f s",
			    seconds);
	/* How reading ended, when not cleanly; what the recorder could not write. */
	for (size_t i = 0; i < replay->note_count; i++)
		text_printf(out, width, "%s: %s", replay->notes[i].lost ? "LOST" : "NOTE",
			    printable_text(replay->notes[i].text, safe, sizeof(safe)));
	if (profile->stats.cut_ops || profile->stats.cut_runs)
		text_printf(out, width,
			    "%llu operations and %llu task runs were still open at the end: "
			    "closed there",
			    (unsigned long long)profile->stats.cut_ops,
			    (unsigned long long)profile->stats.cut_runs);
	if (profile->stats.unmatched)
		text_printf(out, width,
			    "%llu ends whose begin is not in the capture (begun before "
			    "recording) are left out",
			    (unsigned long long)profile->stats.unmatched);
	fputc('\n', out);
}

/* A capture's object: how reading ended, the end marker's counters, what the report lacks. */
static void print_capture_json(FILE *out, const struct replay *replay, const char *path,
			       const struct capture_status *status, bool notes)
{
	const struct capture_trailer *trailer = &status->trailer;

	fputs("{\"path\":", out);
	json_string(out, path);
	fputs(",\"end\":", out);
	json_string(out, capture_end_name(status->end));
	fputs(",\"message\":", out);
	json_string(out, status->message);
	fprintf(out,
		",\"records\":%llu,\"chunks_damaged\":%llu,\"records_damaged\":%llu,"
		"\"trailing_bytes\":%llu,\"write_error\":",
		(unsigned long long)status->records, (unsigned long long)status->damaged_chunks,
		(unsigned long long)status->damaged_records,
		(unsigned long long)status->trailing_bytes);
	if (status->has_trailer && trailer->write_error)
		json_string(out, strerror(trailer->write_error));
	else
		fputs("null", out);
	fputs(",\"counters\":{", out);
	for (size_t i = 0; status->has_trailer && i < trailer->counter_count; i++) {
		if (i)
			fputc(',', out);
		json_string(out, trailer->counters[i].name);
		fprintf(out, ":%llu", (unsigned long long)trailer->counters[i].value);
	}
	fputs("},\"notes\":[", out);
	for (size_t i = 0; notes && i < replay->note_count; i++) {
		if (i)
			fputc(',', out);
		json_string(out, replay->notes[i].text);
	}
	fputs("]}", out);
}

static void print_json_members(FILE *out, void *ctx)
{
	struct report_export *report = ctx;
	const struct replay *replay = report->replay;

	/* "capture": the first (or only) one; "captures": every one of a merge. */
	fputs(",\"capture\":", out);
	print_capture_json(out, replay, replay->path, replay->status, true);
	fputs(",\"captures\":[", out);
	for (size_t i = 0; i < replay->source_count; i++) {
		if (i)
			fputc(',', out);
		print_capture_json(out, replay, replay->sources[i].path, replay->sources[i].status,
				   false);
	}
	fputc(']', out);
	fputs(",\"gpu\":", out);
	gpu_report_print_json(out, &report->builder.gpu);
}

/* The lost line's words for what the counters do not say: the notes of losses. */
static void lost_note(const struct replay *replay, char *text, size_t size)
{
	size_t used = 0;

	text[0] = '\0';
	for (size_t i = 0; i < replay->note_count && used < size; i++) {
		if (replay->notes[i].lost)
			used += (size_t)snprintf(text + used, size - used, "%s%s", used ? "; " : "",
						 replay->notes[i].text);
	}
}

static int export_begin(void *state, struct export_job *job, struct profile_consumer *consumer)
{
	const struct export_options *options = job->options;
	struct report_export *report = state;

	report->print.json = options->json;
	report->print.show_helpers = options->show_helpers || options->internal;
	report->print.no_legends = options->no_legends;
	report->print.width = text_output_width(job->out, options->wide);
	report_builder_init(&report->builder, consumer, options->by_site, options->internal);
	report->builder.gpu.show_helpers = report->print.show_helpers;
	report->begun = true;
	return 0;
}

/* The tables of what could be read; err -EBADMSG: printed, with why the rest could not. */
static int print_report(struct report_export *report, struct export_job *job)
{
	const struct replay *replay = job->replay;
	struct report_builder *builder = &report->builder;
	FILE *out = job->out;
	int err;

	err = report_builder_finish(builder, job->profile);
	for (size_t i = 0; !err && i < replay->source_count; i++)
		err = report_builder_add_capture(builder, replay->sources[i].status);
	if (!err && !replay->source_count)
		err = report_builder_add_capture(builder, replay->status);
	err = err ?: profile_names_fill_snapshot(&job->profile->names, &builder->snapshot);
	if (err) {
		diag("out of memory");
		return err;
	}
	lost_note(replay, report->lost, sizeof(report->lost));
	builder->snapshot.lost_note = report->lost;
	gpu_report_summarize(
		&builder->gpu, job->profile,
		replay_counter(replay, capture_counter_name(CAPTURE_LOST_GPU_RINGBUF_FULL)));
	if (!report->print.json)
		print_summary(out, report->print.width, replay, job->profile);
	report->replay = replay;
	report->print.json_members = print_json_members;
	report->print.json_members_ctx = report;
	stat_print(out, &builder->snapshot, &report->print);
	if (!report->print.json)
		gpu_report_print(out, &builder->gpu, report->print.width);
	return 0;
}

static int export_end(void *state, struct export_job *job, int err)
{
	struct report_export *report = state;

	if (!report->begun)
		return err;
	/* What could be read is printed, with why the rest could not: then fail. */
	if (!err || err == -EBADMSG)
		err = print_report(report, job) ?: err;
	report_builder_free(&report->builder);
	return err;
}

const struct export_format report_format = {
	.name = "report",
	.target = EXPORT_PRINT,
	.state_size = sizeof(struct report_export),
	.begin = export_begin,
	.end = export_end,
};
