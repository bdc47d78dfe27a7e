// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace export of captures written by hand: one with hostile strings
 * and an operation left open, whose Legion Prof logs and Chrome trace JSON
 * must stay valid for any input, and one whose processes announce their
 * ranks out of order, which name the files.
 */
#define _GNU_SOURCE
#include <linux/types.h>
#include <optrace/abi.h>
#include <stdio.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "export_chrome.h"
#include "export_legion.h"
#include "export_run.h"
#include "json_read.h"
#include "legion_popup.h"
#include "legion_read.h"
#include "testlib.h"
#include "bpf/events.h"
#include "capture/capture.h"
#include "output/legion_prof.h"

/* ---- a capture written by hand, with hostile strings ------------------------------------ */

#define HOSTILE_PID 4242
#define WORKER_A 4243
#define WORKER_B 4244

/* String addresses in the hostile process; NOT_SENT never gets its text. */
enum {
	BAD_NAME = 0x1000,
	LONG_NAME = 0x2000,
	BAD_SITE = 0x3000,
	BAD_TASK = 0x4000,
	BAD_DETAIL = 0x5000,
	UNREADABLE = 0x6000,
	OPEN_NAME = 0x7000,
	NOT_SENT = 0x8000,
};

struct hand_capture {
	struct capture_writer *writer;
	uint64_t now;
	uint32_t tgid;
};

static void put_event(struct hand_capture *c, uint32_t tid, int type, uint64_t a0, uint64_t a1,
		      uint64_t a2, uint64_t a3, uint64_t a4)
{
	struct record_event e = {
		.timestamp = c->now += 1000,
		.tgid = c->tgid,
		.tid = tid,
		.type = (__u16)type,
		.args = { a0, a1, a2, a3, a4 },
	};

	ck_assert_int_eq(capture_write(c->writer, e.type, &e, sizeof(e)), 0);
}

static void hand_capture_open(struct hand_capture *c, const char *path,
			      const struct capture_writer_opts *opts)
{
	struct timespec ts;

	ck_assert_int_eq(capture_writer_open(&c->writer, path, opts), 0);
	/* events a little after the header's clock pair: time zero */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	c->now = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec + 1000000;
}

/* length bytes of text (at most RECORD_STRING_LEN - 1), as record.bpf.c sends them. */
static void put_string(struct hand_capture *c, uint64_t address, const char *text, size_t length,
		       bool truncated, bool unreadable)
{
	struct record_string s = {
		.timestamp = c->now += 1000,
		.tgid = c->tgid,
		.tid = c->tgid,
		.type = RECORD_STRING,
		.truncated = truncated,
		.unreadable = unreadable,
		.address = address,
	};

	ck_assert_uint_lt(length, sizeof(s.text));
	memcpy(s.text, text, length);
	ck_assert_int_eq(capture_write(c->writer, s.type, &s, sizeof(s)), 0);
}

static void put_text(struct hand_capture *c, uint64_t address, const char *text)
{
	put_string(c, address, text, strlen(text), false, false);
}

/* 127 bytes (the most a string record holds) that end inside a character, marked cut. */
static void put_long_name(struct hand_capture *c)
{
	char text[RECORD_STRING_LEN] = "demo.long$|\"\n";

	while (strlen(text) < RECORD_STRING_LEN - 1)
		strncat(text, "\xe2\x82\xac", RECORD_STRING_LEN - 1 - strlen(text)); /* "€" */
	ck_assert_uint_eq(strlen(text), RECORD_STRING_LEN - 1);
	put_string(c, LONG_NAME, text, strlen(text), true, false);
}

static void put_strings(struct hand_capture *c)
{
	put_text(c, BAD_NAME, "demo.bad\xff\xfe$name|\"quoted\"\nline\ttab\\{}");
	put_long_name(c);
	put_text(c, BAD_SITE, "site\"$|\n\r\x01.c:12\xc3");
	put_text(c, BAD_TASK, "Task$|\"\xc0\x80\n\x7f\xed\xa0\x80");
	put_text(c, BAD_DETAIL, "detail \xf4\x90\x80\x80 $ \"\\\"");
	put_string(c, UNREADABLE, "", 0, false, true);
	put_text(c, OPEN_NAME, "demo.open$\"|");
}

/*
 * Root 1 (bad name) calls helper 2 (the long name, a fallback) that
 * launches task 10 on two workers, one with a variant out of range; root 3
 * has an unreadable name, a call site never sent, a mode and a status out
 * of range; a wait outside any operation; root 4 and its helper 5 are still
 * open at the end, with a task point still running.
 */
static void write_hostile_capture(const char *path)
{
	struct capture_writer_opts opts = { .target = "hand-made \"$|\n\xff",
					    .hostname = "h$\xff" };
	struct hand_capture c = { .tgid = HOSTILE_PID };
	const uint32_t issuer = HOSTILE_PID;

	hand_capture_open(&c, path, &opts);
	put_event(&c, issuer, RECORD_RT_INIT, OPTRACE_ABI_VERSION, 0, 1, 0, 0);
	put_strings(&c);
	put_event(&c, issuer, RECORD_OP_BEGIN, 1, 0, 0, BAD_NAME, BAD_SITE);
	put_event(&c, issuer, RECORD_OP_MODE, 1, OPTRACE_MODE_DEFERRED, OPTRACE_MODE_REASON_HELPERS,
		  0, 0);
	put_event(&c, issuer, RECORD_OP_BEGIN, 2, 1, 1, LONG_NAME, BAD_SITE);
	put_event(&c, issuer, RECORD_OP_MODE, 2, OPTRACE_MODE_FALLBACK,
		  OPTRACE_MODE_REASON_FALLBACK, 0, 0);
	put_event(&c, issuer, RECORD_OP_FALLBACK, 2, OPTRACE_FALLBACK_UNSUPPORTED_DTYPE, BAD_DETAIL,
		  0, 0);
	put_event(&c, issuer, RECORD_TASK_LAUNCH, 10, 2, 1, BAD_TASK, 2);
	put_event(&c, WORKER_A, RECORD_TASK_BEGIN, 10, 0, OPTRACE_VARIANT_CPU, 0, 0);
	put_event(&c, WORKER_B, RECORD_TASK_BEGIN, 10, 1, 99, 1, 0);
	put_event(&c, WORKER_A, RECORD_TASK_END, 10, 0, OPTRACE_STATUS_OK, 0, 0);
	put_event(&c, WORKER_B, RECORD_TASK_END, 10, 1, OPTRACE_STATUS_OK, 0, 0);
	put_event(&c, issuer, RECORD_OP_END, 2, OPTRACE_STATUS_OK, 0, 0, 0);
	put_event(&c, issuer, RECORD_OP_END, 1, OPTRACE_STATUS_OK, 0, 0, 0);
	put_event(&c, issuer, RECORD_OP_BEGIN, 3, 0, 0, UNREADABLE, NOT_SENT);
	put_event(&c, issuer, RECORD_OP_MODE, 3, 77, 99, 0, 0);
	put_event(&c, issuer, RECORD_OP_END, 3, 5, 0, 0, 0);
	put_event(&c, issuer, RECORD_WAIT_BEGIN, 0, OPTRACE_WAIT_FUTURE, 0, 0, 0);
	put_event(&c, issuer, RECORD_WAIT_END, 0, OPTRACE_WAIT_FUTURE, 0, 0, 0);
	put_event(&c, issuer, RECORD_OP_BEGIN, 4, 0, 0, OPEN_NAME, BAD_SITE);
	put_event(&c, issuer, RECORD_OP_MODE, 4, OPTRACE_MODE_DEFERRED,
		  OPTRACE_MODE_REASON_ABOVE_THRESHOLD, 0, 0);
	put_event(&c, issuer, RECORD_OP_BEGIN, 5, 4, 1, BAD_NAME, 0);
	put_event(&c, issuer, RECORD_TASK_LAUNCH, 11, 5, 4, BAD_TASK, 1);
	put_event(&c, WORKER_A, RECORD_TASK_BEGIN, 11, 0, OPTRACE_VARIANT_OPENMP, 2, 0);
	ck_assert_int_eq(capture_close(c.writer, NULL, 0), 0);
}

/* Titles that say "(cut)"; each must be the open root or its open helper. */
static size_t cut_titles(const char *const *titles, size_t count)
{
	size_t cut = 0;

	for (size_t i = 0; i < count; i++) {
		ck_assert_ptr_nonnull(titles[i]);
		if (!strstr(titles[i], "] (cut)"))
			continue;
		cut++;
		ck_assert_msg(!strncmp(titles[i], "demo.open", 9) ||
				      !strncmp(titles[i], "demo.bad", 8),
			      "%s is cut", titles[i]);
	}
	return cut;
}

static void check_hostile_legion(const char *capture, const char *name, uint32_t version,
				 const char *const options[], size_t ranges, size_t cut)
{
	char *out = test_path(name), path[4096], titles[16][512];
	const char *title_pointers[16];
	struct legion_summary s;
	uint32_t node = 0;
	size_t count = 0, last = 0;
	bool replaced = false;

	run_export(options, out, capture);
	check_file_names(out, &node, 1);
	snprintf(path, sizeof(path), "%s/prof_0.gz", out);
	read_summary(path, version, &s);
	ck_assert_int_eq(s.process_id, HOSTILE_PID);
	for (size_t i = 0; i < s.task_count; i++) {
		if (!is_op(&s.tasks[i]))
			continue;
		ck_assert_uint_lt(count, 16);
		legion_popup_human(s.tasks[i].provenance, titles[count], sizeof(titles[count]));
		/* the legacy viewer splits on '$': sanitised to U+FF04 but for its split */
		ck_assert_msg(!strchr(titles[count], '$'), "a '$' in title %s", titles[count]);
		ck_assert_msg(!strchr(s.tasks[i].task_name, '$'), "a '$' in %s",
			      s.tasks[i].task_name);
		last = count++;
	}
	ck_assert_uint_eq(count, ranges);
	for (size_t i = 0; i < count; i++)
		title_pointers[i] = titles[i];
	ck_assert_ptr_nonnull(strstr(titles[last], "demo.open\xef\xbc\x84"));
	ck_assert_uint_eq(cut_titles(title_pointers, count), cut);
	/* three task points (one cut) and the operations */
	ck_assert_uint_eq(s.task_count, 3 + count);
	for (size_t i = 0; i < count && !replaced; i++)
		replaced = strstr(titles[i], "\xef\xbf\xbd"); /* U+FFFD */
	ck_assert_msg(replaced, "no operation's title has the bad bytes replaced");
	legion_summary_free(&s);
	free(out);
}

static void check_hostile_chrome(const char *capture, const char *const options[],
				 size_t expect_ops, size_t cut)
{
	char *json = test_path("hostile.json"), *text;
	const char *titles[16];
	const struct jv *events;
	size_t ops = 0, tasks = 0, cut_args = 0;

	struct jv *root;

	run_export(options, json, capture);
	root = chrome_read(json, &text);
	events = jv_get(root, "traceEvents");
	for (size_t i = 0; i < events->count; i++) {
		const struct jv *event = events->items[i], *args = jv_get(event, "args");

		if (strcmp(jv_string(event, "ph"), "X"))
			continue;
		if (!strcmp(jv_string(event, "cat"), "task"))
			tasks++;
		if (strcmp(jv_string(event, "cat"), "op"))
			continue;
		ck_assert_uint_lt(ops, 16);
		titles[ops++] = jv_string(event, "name");
		cut_args += jv_get(args, "cut") != NULL;
	}
	ck_assert_uint_eq(ops, expect_ops);
	ck_assert_uint_eq(tasks, 3);
	ck_assert_uint_eq(cut_args, cut);
	ck_assert_uint_eq(cut_titles(titles, ops), cut);
	jv_free(root);
	free(text);
	free(json);
}

START_TEST(test_hostile_capture)
{
	char *capture = test_path("hostile.capture");

	write_hostile_capture(capture);
	check_hostile_legion(capture, "legion", 1008, export_legion_options, 3, 1);
	check_hostile_legion(capture, "helpers", 1008, export_helper_options, 5, 2);
	check_hostile_legion(capture, "v1007", 1007, export_v1007_options, 3, 1);
	check_hostile_legion(capture, "python", 1008, export_python_options, 3, 1);
	check_hostile_chrome(capture, export_chrome_options, 3, 1);
	check_hostile_chrome(capture, export_chrome_helper_options, 5, 2);
	free(capture);
}
END_TEST

/*
 * Ranks are announced (rt_init) before a process's first operation, and the
 * processes need not start in rank order: rank 1 runs first here, and a
 * parent that announces itself but runs nothing gets no file.
 */
START_TEST(test_ranks_name_files)
{
	static const char *const options[] = { "--legion", NULL };
	static const uint32_t pids[] = { 5000, 5002, 5001 }, ranks[] = { 0, 1, 0 };
	struct capture_writer_opts opts = { .target = "ranks" };
	char *capture = test_path("ranks.capture"), *out = test_path("ranks"), path[4096];
	uint32_t nodes[] = { 0, 1 };
	struct hand_capture c = { 0 };

	hand_capture_open(&c, capture, &opts);
	for (int i = 0; i < 3; i++) {
		c.tgid = pids[i];
		put_event(&c, c.tgid, RECORD_RT_INIT, OPTRACE_ABI_VERSION, ranks[i], i ? 2 : 1, 0,
			  0);
		put_text(&c, BAD_NAME, "demo.add");
		if (!i)
			continue;
		put_event(&c, c.tgid, RECORD_OP_BEGIN, 1, 0, 0, BAD_NAME, 0);
		put_event(&c, c.tgid, RECORD_OP_END, 1, OPTRACE_STATUS_OK, 0, 0, 0);
	}
	ck_assert_int_eq(capture_close(c.writer, NULL, 0), 0);
	run_export(options, out, capture);
	check_file_names(out, nodes, 2);
	for (uint32_t node = 0; node < 2; node++) {
		struct legion_summary s;

		snprintf(path, sizeof(path), "%s/prof_%u.gz", out, node);
		read_summary(path, 1008, &s);
		ck_assert_uint_eq(s.node_id, node);
		ck_assert_uint_eq(s.num_nodes, 2);
		ck_assert_uint_eq(s.process_id, (node ? 5002u : 5001u));
		ck_assert_uint_eq(s.task_count, 1);
		ck_assert(is_op(&s.tasks[0]));
		ck_assert_str_eq(s.tasks[0].task_name, "demo.add");
		legion_summary_free(&s);
	}
	free(capture);
	free(out);
}
END_TEST

/*
 * An operation's mode and reason are what a capture says: any 32 bits.
 * Operations with INT_MAX, INT_MIN and -1 there each launch a task: their
 * points' provenance (keyed by mode and reason) exports, with no signed
 * overflow under make sanitize (UBSan stopped the export before).
 */
START_TEST(test_modes_out_of_range)
{
	static const uint64_t modes[][2] = { { 0x7fffffff, 0x80000000 },
					     { 0xffffffff, 0x7fffffff },
					     { 0x80000000, 0xffffffffffffffffULL } };
	struct capture_writer_opts opts = { .target = "modes" };
	char *capture = test_path("modes.capture"), *out = test_path("modes"), path[4096];
	char *json = test_path("modes.json"), *text;
	struct hand_capture c = { .tgid = HOSTILE_PID };
	const size_t count = sizeof(modes) / sizeof(modes[0]);
	struct legion_summary s;
	size_t ops = 0;
	struct jv *root;

	hand_capture_open(&c, capture, &opts);
	put_event(&c, c.tgid, RECORD_RT_INIT, OPTRACE_ABI_VERSION, 0, 1, 0, 0);
	put_text(&c, BAD_NAME, "demo.add");
	put_text(&c, BAD_TASK, "AddTask");
	for (uint64_t i = 0; i < count; i++) {
		uint64_t op = i + 1, task = i + 10;

		put_event(&c, c.tgid, RECORD_OP_BEGIN, op, 0, 0, BAD_NAME, 0);
		put_event(&c, c.tgid, RECORD_OP_MODE, op, modes[i][0], modes[i][1], 0, 0);
		put_event(&c, c.tgid, RECORD_TASK_LAUNCH, task, op, op, BAD_TASK, 1);
		put_event(&c, WORKER_A, RECORD_TASK_BEGIN, task, 0, OPTRACE_VARIANT_CPU, 0, 0);
		put_event(&c, WORKER_A, RECORD_TASK_END, task, 0, OPTRACE_STATUS_OK, 0, 0);
		put_event(&c, c.tgid, RECORD_OP_END, op, OPTRACE_STATUS_OK, 0, 0, 0);
	}
	ck_assert_int_eq(capture_close(c.writer, NULL, 0), 0);

	run_export(export_legion_options, out, capture);
	snprintf(path, sizeof(path), "%s/prof_0.gz", out);
	read_summary(path, 1008, &s);
	for (size_t i = 0; i < s.task_count; i++)
		ops += is_op(&s.tasks[i]);
	ck_assert_uint_eq(ops, count);
	ck_assert_uint_eq(s.task_count, 2 * count); /* each operation and its task's point */
	legion_summary_free(&s);
	run_export(export_chrome_options, json, capture);
	root = chrome_read(json, &text);
	ck_assert_ptr_nonnull(jv_get(root, "traceEvents"));
	jv_free(root);
	free(text);
	free(json);
	free(out);
	free(capture);
}
END_TEST

/*
 * A capture without one event, whole and cut at every 32nd byte (in its
 * header, its one chunk, its end marker): export --legion fails with a
 * sentence that gives its reason, never one that ends in ": " (it said
 * "nothing in X could be read: " before).
 */
START_TEST(test_eventless_capture_said)
{
	struct capture_writer_opts opts = { .target = "nothing" };
	char *capture = test_path("empty.capture"), *cut = test_path("cut.capture");
	char *out = test_path("empty-prof"), *err = test_path("said.txt");
	char *argv[] = { OPTRACE, "export", "--legion", "-o", out, cut, NULL };
	struct capture_writer *w;
	char bytes[65536];
	int runs = 0;
	size_t size;
	FILE *f;

	ck_assert_int_eq(capture_writer_open(&w, capture, &opts), 0);
	ck_assert_int_eq(capture_close(w, NULL, 0), 0);
	f = fopen(capture, "re");
	ck_assert_ptr_nonnull(f);
	size = fread(bytes, 1, sizeof(bytes), f);
	fclose(f);
	ck_assert_uint_gt(size, 64);
	for (size_t k = 0;; k++) {
		size_t length = k ? 32 * k : size; /* whole first */
		char *said, *line, *cursor;

		if (k && length >= size)
			break;
		runs++;

		f = fopen(cut, "we");
		ck_assert_ptr_nonnull(f);
		ck_assert_uint_eq(fwrite(bytes, 1, length, f), length);
		fclose(f);
		ck_assert_int_eq(WEXITSTATUS(run_command(argv, NULL, err, 60)), 1);
		said = read_file(err);
		ck_assert_msg(said && *said, "export --legion of %zu bytes said nothing", length);
		for (cursor = said; (line = strsep(&cursor, "\n"));) {
			size_t n = strlen(line);

			ck_assert_msg(!n || (n > 2 && strcmp(line + n - 2, ": ")),
				      "%zu of %zu bytes: a sentence without its reason: '%s'",
				      length, size, line);
		}
		free(said);
	}
	printf("export --legion of an event-less capture (%zu bytes), whole and cut %d ways: "
	       "each said why\n",
	       size, runs - 1);
	free(err);
	free(out);
	free(cut);
	free(capture);
}
END_TEST

/*
 * export --legion holds a descriptor a log at most, and releases the
 * oldest when it may hold no more (issue 41: about 3 a process, and
 * "Cannot allocate memory" at 340 processes under ulimit -n 1024): 300
 * processes under ulimit -n 64, a few of them with enough operations that
 * their logs are written while the others are open, each log whole.
 */
/* The export argv runs fails (exit 1) and its stderr, in err, says text. */
static void export_fails_saying(char *const argv[], const char *err, const char *text)
{
	char *said;

	ck_assert_int_eq(WEXITSTATUS(run_command(argv, NULL, err, 120)), 1);
	said = read_file(err);
	ck_assert_msg(said && strstr(said, text), "wanted \"%s\", said: %s", text, said);
	free(said);
}

#define MANY_PROCESSES 300
#define BUSY_OPS 4000

START_TEST(test_many_processes_few_descriptors)
{
	struct capture_writer_opts opts = { .target = "many" };
	char *capture = test_path("many.capture"), *out = test_path("many"),
	     *err = test_path("many.txt"), command[8192], path[4096];
	char *argv[] = { "/bin/sh", "-c", command, NULL };
	struct hand_capture c = { 0 };

	hand_capture_open(&c, capture, &opts);
	for (uint32_t i = 0; i < MANY_PROCESSES; i++) {
		int ops = i % 100 ? 1 : BUSY_OPS;

		c.tgid = 10000 + i;
		put_event(&c, c.tgid, RECORD_RT_INIT, OPTRACE_ABI_VERSION, i, 1, 0, 0);
		put_text(&c, BAD_NAME, "demo.add");
		for (int op = 1; op <= ops; op++) {
			put_event(&c, c.tgid, RECORD_OP_BEGIN, (uint64_t)op, 0, 0, BAD_NAME, 0);
			put_event(&c, c.tgid, RECORD_OP_END, (uint64_t)op, OPTRACE_STATUS_OK, 0, 0,
				  0);
		}
	}
	ck_assert_int_eq(capture_close(c.writer, NULL, 0), 0);
	snprintf(command, sizeof(command), "ulimit -n 64 && exec %s export --legion -o %s %s",
		 OPTRACE, out, capture);
	ck_assert_msg(run_command(argv, NULL, err, 120) == 0, "export under ulimit -n 64: %s",
		      read_file(err));
	for (uint32_t node = 0; node < MANY_PROCESSES; node++) {
		struct legion_summary s;

		snprintf(path, sizeof(path), "%s/prof_%u.gz", out, node);
		read_summary(path, 1008, &s);
		ck_assert_uint_eq(s.node_id, node);
		ck_assert_uint_eq(s.num_nodes, MANY_PROCESSES);
		ck_assert_uint_eq(s.process_id, 10000 + node);
		ck_assert_uint_eq(s.task_count, node % 100 ? 1 : BUSY_OPS);
		legion_summary_free(&s);
	}
	/* Legion's own reader, where it was built (shared/legion/reader/build.sh), reads them all
	 */
	if (!access(OPTRACE_BUILD_DIR "/legion-reader/legion_prof", X_OK)) {
		snprintf(command, sizeof(command),
			 "exec %s/legion-reader/legion_prof statistics %s/prof_*.gz",
			 OPTRACE_BUILD_DIR, out);
		ck_assert_msg(run_command(argv, NULL, err, 120) == 0, "legion_prof statistics: %s",
			      read_file(err));
	}
	/* far too few: said, with what to do */
	snprintf(command, sizeof(command), "ulimit -n 10 && exec %s export --legion -o %s %s",
		 OPTRACE, out, capture);
	export_fails_saying(argv, err, "raise the limit (ulimit -n)");
	free(capture);
	free(out);
	free(err);
}
END_TEST

/*
 * Legion Prof has 4,096 processors a process (a 12-bit index in the id):
 * a process with more threads to draw fails the export with a message
 * that says what to do, never a log with a wrong id.
 */
START_TEST(test_too_many_threads_said)
{
	struct capture_writer_opts opts = { .target = "threads" };
	char *capture = test_path("threads.capture"), *out = test_path("threads"),
	     *err = test_path("threads.txt"), path[4096];
	char *argv[] = { OPTRACE, "export", "--legion", "-o", out, capture, NULL };
	struct hand_capture c = { .tgid = 7000 };

	hand_capture_open(&c, capture, &opts);
	put_text(&c, BAD_NAME, "demo.add");
	for (uint32_t tid = 7000; tid <= 7000 + LEGION_PROF_PROCS_MAX; tid++) {
		put_event(&c, tid, RECORD_OP_BEGIN, 1, 0, 0, BAD_NAME, 0);
		put_event(&c, tid, RECORD_OP_END, 1, OPTRACE_STATUS_OK, 0, 0, 0);
	}
	ck_assert_int_eq(capture_close(c.writer, NULL, 0), 0);
	export_fails_saying(argv, err, "process 7000 has more threads");
	export_fails_saying(argv, err, "export it with --perfetto or --chrome");
	/* no log is left with what was written before */
	snprintf(path, sizeof(path), "%s/prof_0.gz", out);
	ck_assert_int_ne(access(path, F_OK), 0);
	free(capture);
	free(out);
	free(err);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("export_handmade");
	TCase *hand = tcase_create("hand-made");

	tcase_set_timeout(hand, 60);
	tcase_add_checked_fixture(hand, test_dir_setup, test_dir_teardown);
	tcase_add_test(hand, test_hostile_capture);
	tcase_add_test(hand, test_ranks_name_files);
	tcase_add_test(hand, test_modes_out_of_range);
	tcase_add_test(hand, test_eventless_capture_said);
	tcase_add_test(hand, test_many_processes_few_descriptors);
	tcase_add_test(hand, test_too_many_threads_said);
	suite_add_tcase(suite, hand);

	return run_suite(suite);
}
