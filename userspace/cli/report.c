// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace report: a capture file's profile as text (or JSON): the same
 * tables as optrace stat, computed from every recorded event, after a
 * header that says what the capture holds and what, if anything, was lost.
 */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/diag.h"
#include "common/outfile.h"
#include "capture/capture.h"
#include "cli/commands.h"
#include "cli/common_flags.h"
#include "output/json.h"
#include "model/profile.h"
#include "model/replay.h"
#include "model/profile_aggregates.h"
#include "output/gpu_tables.h"
#include "output/stat_print.h"
#include "output/text_table.h"

static struct {
	const char *paths[REPLAY_SOURCES_MAX];
	size_t path_count;
	const char *path; /* the first */
	bool dump;
	bool dump_records;
	bool by_site;
	bool internal;
	const char *output; /* -o: written whole, or left as it was */
	struct stat_print_options print;
} env;

static const char doc[] =
	"Print the profile of a capture file made by `optrace record`.\n"
	"\n"
	"USAGE: optrace report [--show-helpers] [--json] [-o OUTPUT] FILE...\n"
	"       optrace report --dump[=records] FILE\n"
	"\n"
	"EXAMPLES:\n"
	"    optrace report optrace.capture\n"
	"    optrace report --show-helpers run.capture  # with nested operations\n"
	"    optrace report --json -o run.json run.capture\n"
	"    optrace report run.node1.capture run.node2.capture  # a job, merged\n"
	"    optrace report --gpu gpu.bin run.capture   # with an OPTRACE_GPU_FILE's\n"
	"    optrace report gpu.bin                     # GPU activity alone, no eBPF\n"
	"    optrace report --dump run.capture          # the file's chunks, to debug\n";

enum {
	OPT_DUMP = 0x100,
	OPT_BY_SITE,
	OPT_INTERNAL,
};

/* The rest of report's flags: cli/common_flags.c. */
static const struct argp_option options[] = {
	{ "output", 'o', "OUTPUT", 0, "Write the report to OUTPUT instead of stdout", 0 },
	{ "by-site", OPT_BY_SITE, NULL, 0,
	  "One row per call site of each operation the user called", 0 },
	{ "internal", OPT_INTERNAL, NULL, 0,
	  "Helpers split by their library-internal call sites (implies --show-helpers)", 0 },
	{ "dump", OPT_DUMP, "records", OPTION_ARG_OPTIONAL,
	  "Print the file's header and chunks (=records: and every record) instead", 0 },
	{},
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case OPT_BY_SITE:
		env.by_site = true;
		return 0;
	case OPT_INTERNAL:
		env.internal = true;
		return 0;
	case 'o':
		env.output = arg;
		return 0;
	case OPT_DUMP:
		if (arg && strcmp(arg, "records"))
			argp_error(state, "--dump takes nothing or =records");
		env.dump = true;
		env.dump_records = arg != NULL;
		return 0;
	case ARGP_KEY_ARG:
		if (env.path_count == REPLAY_SOURCES_MAX)
			argp_error(state, "at most %d captures", REPLAY_SOURCES_MAX);
		env.paths[env.path_count++] = arg;
		env.path = env.paths[0];
		return 0;
	case ARGP_KEY_END:
		if (!env.path)
			argp_error(state, "give the capture file to report");
		if (env.dump && env.path_count > 1)
			argp_error(state, "--dump reads one file");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

/* One capture: what it holds, and what its recorder lost. */
static void print_source(FILE *out, const char *path, const struct capture_header *header,
			 const struct capture_status *status, double seconds)
{
	const struct capture_trailer *trailer = &status->trailer;
	char safe[256], target[1024], host[256];
	char span[32] = "";
	int width = env.print.width;

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
static void print_summary(FILE *out, const struct replay *replay, const struct profile *profile)
{
	double seconds = (profile->stats.last_ns - profile->stats.first_ns) / 1e9;
	char safe[2 * sizeof(replay->notes[0].text)];
	int width = env.print.width;

	if (seconds < 0)
		seconds = 0;
	if (!replay->source_count)
		print_source(out, env.path, replay->header, replay->status, seconds);
	for (size_t i = 0; i < replay->source_count; i++)
		print_source(out, replay->sources[i].path, replay->sources[i].header,
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

struct json_members {
	const struct replay *replay;
	struct gpu_report *report;
	const struct profile *profile;
};

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
	struct json_members *members = ctx;
	const struct replay *replay = members->replay;

	/* "capture": the first (or only) one; "captures": every one of a merge. */
	fputs(",\"capture\":", out);
	print_capture_json(out, replay, env.path, replay->status, true);
	fputs(",\"captures\":[", out);
	for (size_t i = 0; i < replay->source_count; i++) {
		if (i)
			fputc(',', out);
		print_capture_json(out, replay, replay->sources[i].path, replay->sources[i].status,
				   false);
	}
	fputc(']', out);
	fputs(",\"gpu\":", out);
	gpu_report_print_json(out, members->report);
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

int cmd_report(int argc, char **argv)
{
	const struct argp_child children[] = {
		{ common_flags_argp(COMMON_JSON | COMMON_WIDE | COMMON_SHOW_HELPERS | COMMON_FORCE |
				    COMMON_GPU_FILE | COMMON_NO_LEGEND),
		  0, NULL, 0 },
		{},
	};
	const struct argp argp = {
		.options = options, .parser = parse_arg, .doc = doc, .children = children
	};
	struct profile_consumer consumer;
	struct report_builder builder;
	struct replay replay = { 0 };
	struct json_members json_members;
	char lost[2 * sizeof(replay.notes[0].text)];
	struct out_file output = { 0 };
	struct profile profile;
	FILE *out = stdout;
	int err;

	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return EXIT_USAGE;
	env.print.json = common_flags.json;
	env.print.show_helpers = common_flags.show_helpers || env.internal;
	env.print.no_legends = common_flags.no_legend;
	if (env.output) {
		const char *inputs[REPLAY_SOURCES_MAX + 1];
		int fd;

		memcpy(inputs, env.paths, env.path_count * sizeof(inputs[0]));
		inputs[env.path_count] = common_flags.gpu_file;
		out_file_named_by("-o");
		fd = out_file_open(&output, env.output, 0, inputs,
				   (int)env.path_count + (common_flags.gpu_file ? 1 : 0));

		if (fd < 0)
			return 1;
		out = fdopen(fd, "w");
		if (!out) {
			diag("cannot write %s: %s", out_file_name(&output), strerror(errno));
			close(fd);
			out_file_discard(&output);
			return 1;
		}
		out_file_remove_on_signals();
	}
	if (env.dump) {
		err = capture_dump(out, env.path, env.dump_records);
		if (err < 0)
			diag("cannot read %s: %s", env.path, strerror(-err));
		goto finish;
	}
	env.print.width = text_output_width(out, common_flags.wide);
	report_builder_init(&builder, &consumer, env.by_site, env.internal);
	builder.gpu.show_helpers = env.print.show_helpers;
	profile_init(&profile, &consumer);
	err = replay_open_many(&replay, env.paths, env.path_count);
	if (!err && common_flags.gpu_file)
		err = replay_add_gpu_file(&replay, common_flags.gpu_file);
	err = err ?: replay_run(&replay, &profile);
	if (err)
		goto cleanup;
	err = report_builder_finish(&builder, &profile);
	for (size_t i = 0; !err && i < replay.source_count; i++)
		err = report_builder_add_capture(&builder, replay.sources[i].status);
	if (!err && !replay.source_count)
		err = report_builder_add_capture(&builder, replay.status);
	err = err ?: profile_names_fill_snapshot(&profile.names, &builder.snapshot);
	if (err) {
		diag("out of memory");
		goto cleanup;
	}
	lost_note(&replay, lost, sizeof(lost));
	builder.snapshot.lost_note = lost;
	gpu_report_summarize(
		&builder.gpu, &profile,
		replay_counter(&replay, capture_counter_name(CAPTURE_LOST_GPU_RINGBUF_FULL)));
	if (!env.print.json)
		print_summary(out, &replay, &profile);
	json_members.replay = &replay;
	json_members.report = &builder.gpu;
	json_members.profile = &profile;
	env.print.json_members = print_json_members;
	env.print.json_members_ctx = &json_members;
	stat_print(out, &builder.snapshot, &env.print);
	if (!env.print.json)
		gpu_report_print(out, &builder.gpu, env.print.width);
	/* What could be read was printed, with why the rest could not: then fail. */
	err = replay_check_readable(&replay) ?: err;

cleanup:
	report_builder_free(&builder);
	profile_free(&profile);
	replay_close(&replay);
finish:
	if (out != stdout) {
		/* A report that failed (or could not be written) leaves OUTPUT as it was. */
		if ((fclose(out) || err < 0) && !err) {
			diag("cannot write %s: %s", out_file_name(&output), strerror(errno));
			err = -EIO;
		}
		if (err < 0)
			out_file_discard(&output);
		else if (out_file_commit(&output))
			err = -EIO;
	}
	return err ? 1 : 0;
}
