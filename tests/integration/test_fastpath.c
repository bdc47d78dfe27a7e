// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The fast path's promises that the demo's truth tests do not reach: events
 * an idle thread still holds are counted and recorded at the stop (read
 * from its buffer), and the per-event path (--per-event) stays exact.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpu_truth.h"
#include "json_read.h"
#include "testlib.h"
#include "trace/batch_read.h"
#include "trace/runtime_info.h"

#define IDLE_THREADS OPTRACE_BUILD_DIR "/tests/idle_threads"
#define IDLE_OPERATIONS 50 /* per thread: fewer than a batch */

/* Starts argv in the background, stdout to out_path; returns its pid. */
static pid_t spawn(char *const argv[], const char *out_path)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (!freopen(out_path, "w", stdout))
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* Waits for pid, killing it after timeout_s; returns its status. */
static int reap(pid_t pid, int timeout_s)
{
	int status = -1;

	for (int i = 0; i < timeout_s * 10; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		usleep(100 * 1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

/* Waits up to 30 s for a tracer to arm pid's probes (optrace list shows "yes("). */
static bool wait_armed(pid_t pid)
{
	char pid_text[16], *out = test_path("list.txt");
	char *argv[] = { OPTRACE, "list", "-p", pid_text, NULL };
	bool armed = false;

	snprintf(pid_text, sizeof(pid_text), "%d", pid);
	for (int i = 0; i < 300 && !armed; i++) {
		char *text;

		if (run_command(argv, out, NULL, 30) == 0) {
			text = read_file(out);
			armed = text && strstr(text, " yes(");
			free(text);
		}
		if (!armed)
			usleep(100 * 1000);
	}
	free(out);
	return armed;
}

static long ops_in(const char *json_path)
{
	struct counts traced = { 0 };
	long total = 0;
	int processes;

	stat_json_counts(json_path, 0, &traced, &processes);
	for (size_t i = 0; i < traced.length; i++) {
		if (!strncmp(traced.entries[i].key, "op ", 3))
			total += traced.entries[i].count;
	}
	counts_free(&traced);
	return total;
}

/*
 * Traces a fixture that waits for SIGUSR1, runs its operations, prints
 * "done" and stays idle: optrace stat (or record, then report) -p for 3 s.
 * The report's JSON goes to json; the fixture, still running, is returned.
 */
static pid_t trace_fixture(char *const fixture_argv[], bool record, const char *json,
			   const char *capture)
{
	char *fixture_out = test_path("fixture.txt"), pid_text[16];
	char *stat_argv[] = { OPTRACE, "stat", "--json", "-d", "3", "-p", pid_text, NULL };
	char *record_argv[] = { OPTRACE, "record",	  "-q", "-d",	  "3",
				"-o",	 (char *)capture, "-p", pid_text, NULL };
	char *report_argv[] = { OPTRACE, "report", "--json", (char *)capture, NULL };
	pid_t fixture, tracer;
	int status;

	fixture = spawn(fixture_argv, fixture_out);
	ck_assert(wait_for_text(fixture_out, "ready", 0, 120));
	snprintf(pid_text, sizeof(pid_text), "%d", fixture);
	tracer = spawn(record ? record_argv : stat_argv, record ? "/dev/null" : json);
	ck_assert(wait_armed(fixture)); /* attached: the tracer's -d counts from then on */
	kill(fixture, SIGUSR1);
	ck_assert(wait_for_text(fixture_out, "done", 0, 120));
	status = reap(tracer, 30);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the tracer failed (%d)",
		      status);
	if (record)
		ck_assert_int_eq(run_command(report_argv, json, NULL, 30), 0);
	free(fixture_out);
	return fixture;
}

static void stop_fixture(pid_t fixture)
{
	int status;

	kill(fixture, SIGTERM);
	status = reap(fixture, 10);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/*
 * optrace (stat or record) -p on the idle fixture for 3 s: the fixture runs
 * its operations early and stays idle, so that only the read of its
 * threads' buffers at the stop finds them.
 */
static void check_idle(bool record)
{
	char *json = test_path("out.json"), *capture = test_path("idle.capture");
	char *fixture_argv[] = { IDLE_THREADS, "50", NULL };
	pid_t fixture = trace_fixture(fixture_argv, record, json, capture);

	/* Its events were still buffered, not handed over, when the tracer stopped. */
	ck_assert_int_eq(ops_in(json), 2 * IDLE_OPERATIONS);
	stop_fixture(fixture);
	free(json);
	free(capture);
}

START_TEST(test_stat_counts_idle_threads)
{
	NEED_BPF();
	check_idle(false);
}
END_TEST

START_TEST(test_record_keeps_idle_threads)
{
	NEED_BPF();
	check_idle(true);
}
END_TEST

#define HOSTILE_BATCH OPTRACE_BUILD_DIR "/tests/hostile_batch"
#define HOSTILE_GOOD 20

/* The number after "name": in the JSON at path, or -1. */
static long json_number(const char *path, const char *name)
{
	char *text = read_file(path), key[64], *at;
	long value = -1;

	snprintf(key, sizeof(key), "\"%s\":", name);
	at = text ? strstr(text, key) : NULL;
	if (at)
		value = strtol(at + strlen(key), NULL, 10);
	free(text);
	return value;
}

/*
 * A process that writes garbage into its own buffer: its good operations
 * are counted exactly, the bad events are counted as losses (stat) or
 * dropped and said in the capture (record: the begins it claimed stay, as
 * the per-event path would keep them), and optrace does not crash.
 */
static void check_hostile(bool record)
{
	char *json = test_path("out.json"), *capture = test_path("hostile.capture"), good[16];
	char *fixture_argv[] = { HOSTILE_BATCH, good, NULL };
	struct counts traced = { 0 };
	pid_t fixture;
	int processes;

	snprintf(good, sizeof(good), "%d", HOSTILE_GOOD);
	fixture = trace_fixture(fixture_argv, record, json, capture);
	stat_json_counts(json, 0, &traced, &processes);
	ck_assert_int_eq(counts_get(&traced, "op hostile.good 0"), 2 * HOSTILE_GOOD);
	if (record) {
		/* The capture says what it dropped: the events of unknown kinds. */
		char *text_argv[] = { OPTRACE, "report", capture, NULL }, *text;

		ck_assert_int_eq(run_command(text_argv, json, NULL, 30), 0);
		text = read_file(json);
		ck_assert_msg(text && strstr(text, "lost.batch_malformed"), "%s", text);
		free(text);
	} else {
		/* Nothing invented: the only operation is the good one. */
		for (size_t i = 0; i < traced.length; i++) {
			if (!strncmp(traced.entries[i].key, "op ", 3))
				ck_assert_str_eq(traced.entries[i].key, "op hostile.good 0");
		}
		ck_assert_int_gt(json_number(json, "batch_malformed"), 0);
		ck_assert_int_gt(json_number(json, "unmatched"), 0);
		ck_assert_int_gt(json_number(json, "too_deep"), 0);
	}
	counts_free(&traced);
	stop_fixture(fixture);
	free(json);
	free(capture);
}

START_TEST(test_stat_survives_hostile_batches)
{
	NEED_BPF();
	check_hostile(false);
}
END_TEST

START_TEST(test_record_survives_hostile_batches)
{
	NEED_BPF();
	check_hostile(true);
}
END_TEST

#define MANY_NAMES OPTRACE_BUILD_DIR "/tests/many_names"
#define MANY_NAMES_ROUNDS 10

/*
 * Batches that name more strings than the batch probe lists (128 names in
 * 128 operations, each name in no other batch): record then looks for them
 * in the events, and every operation keeps its name, as do those of the
 * batches with a whole list.
 */
static void check_many_names(bool record)
{
	char *json = test_path("out.json"), *capture = test_path("names.capture"), rounds[16];
	char *fixture_argv[] = { MANY_NAMES, rounds, NULL };
	struct counts traced = { 0 };
	pid_t fixture;
	int processes;

	snprintf(rounds, sizeof(rounds), "%d", MANY_NAMES_ROUNDS);
	fixture = trace_fixture(fixture_argv, record, json, capture);
	stat_json_counts(json, 0, &traced, &processes);
	for (int i = 0; i < 1000; i++) {
		char key[32];

		snprintf(key, sizeof(key), "op names.%d 0", i);
		ck_assert_msg(counts_get(&traced, key) == (i < 3 ? 1 + MANY_NAMES_ROUNDS : 1),
			      "%s: %ld", key, counts_get(&traced, key));
	}
	ck_assert_int_eq(ops_in(json), 1000 + 3 * MANY_NAMES_ROUNDS);
	counts_free(&traced);
	stop_fixture(fixture);
	free(json);
	free(capture);
}

START_TEST(test_stat_names_many_strings)
{
	NEED_BPF();
	check_many_names(false);
}
END_TEST

START_TEST(test_record_names_many_strings)
{
	NEED_BPF();
	check_many_names(true);
}
END_TEST

/* The process of pid in stat's JSON, or NULL. */
static const struct jv *process_of(const struct jv *json, pid_t pid)
{
	const struct jv *processes = jv_get(json, "processes");

	for (size_t i = 0; processes && i < processes->count; i++) {
		if ((pid_t)jv_number(processes->items[i], "pid") == pid)
			return processes->items[i];
	}
	return NULL;
}

/*
 * Issue 41: one process with 20,000 operation names, more than stat's
 * shared tables hold (16,384 rows), traced beside another with 1,000: the
 * first takes its quota (4,096 rows and names) and is refused the rest,
 * said against it; the second, traced after it, is counted exactly.
 */
START_TEST(test_stat_rows_shared_fairly)
{
	char *json_path = test_path("out.json"), *hog_out = test_path("hog.txt");
	char *fair_out = test_path("fair.txt"), rounds[16], pids[40];
	char *hog_argv[] = { MANY_NAMES, "0", "20000", NULL };
	char *fair_argv[] = { MANY_NAMES, rounds, NULL };
	char *stat_argv[] = { OPTRACE, "stat", "--json", "-d", "4", "-p", pids, NULL };
	struct counts traced = { 0 };
	const struct jv *hog_json, *fair_json;
	struct jv *json;
	pid_t hog, fair, tracer;
	int processes, status;

	NEED_BPF();
	snprintf(rounds, sizeof(rounds), "%d", MANY_NAMES_ROUNDS);
	hog = spawn(hog_argv, hog_out);
	fair = spawn(fair_argv, fair_out);
	ck_assert(wait_for_text(hog_out, "ready", 0, 120));
	ck_assert(wait_for_text(fair_out, "ready", 0, 120));
	snprintf(pids, sizeof(pids), "%d,%d", hog, fair);
	tracer = spawn(stat_argv, json_path);
	ck_assert(wait_armed(hog) && wait_armed(fair));
	/* The hog first: without a quota it would leave the other nothing. */
	kill(hog, SIGUSR1);
	ck_assert(wait_for_text(hog_out, "done", 0, 120));
	kill(fair, SIGUSR1);
	ck_assert(wait_for_text(fair_out, "done", 0, 120));
	status = reap(tracer, 60);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "stat failed (%d)", status);

	stat_json_counts(json_path, fair, &traced, &processes);
	for (int i = 0; i < 1000; i++) {
		char key[32];

		snprintf(key, sizeof(key), "op names.%d 0", i);
		ck_assert_msg(counts_get(&traced, key) == (i < 3 ? 1 + MANY_NAMES_ROUNDS : 1),
			      "%s: %ld", key, counts_get(&traced, key));
	}
	counts_free(&traced);
	json = read_json_file(json_path);
	hog_json = process_of(json, hog);
	fair_json = process_of(json, fair);
	ck_assert_msg(hog_json && fair_json, "both processes in the JSON");
	ck_assert_int_eq((long)jv_number(fair_json, "rows_refused"), 0);
	/* 20,000 rows asked, 4,096 kept (a refused row's names are not asked for). */
	ck_assert_int_ge((long)jv_number(hog_json, "rows_refused"), 20000 - 4096);
	ck_assert_int_le(jv_get(hog_json, "operations")->count, 4096);
	jv_free(json);
	stop_fixture(hog);
	stop_fixture(fair);
	free(json_path);
	free(hog_out);
	free(fair_out);
}
END_TEST

#define OVERLAP_POINTS OPTRACE_BUILD_DIR "/tests/overlap_points"
#define OVERLAP_ROUNDS 10

/*
 * Task points that overlap on one thread, and points that end on another
 * thread than the one they began on: each counted once, by (task, point),
 * through both paths, by stat and by record.
 */
/*
 * A row no table can take (here the operations' table, its overflow and
 * its reserve hold 1 + 1 + 256 rows, OPTRACE_STAT_TABLE_ROWS=1) is lost as
 * "map full", and not charged to its process's quota: of 20,000 names,
 * none is refused, whatever the lost ones asked.
 */
START_TEST(test_rows_lost_not_charged)
{
	char *json_path = test_path("out.json"), *capture = test_path("unused.capture");
	char *hog_argv[] = { MANY_NAMES, "0", "20000", NULL };
	const struct jv *process;
	struct jv *json;
	pid_t hog;

	NEED_BPF();
	setenv("OPTRACE_STAT_TABLE_ROWS", "1", 1);
	hog = trace_fixture(hog_argv, false, json_path, capture);
	unsetenv("OPTRACE_STAT_TABLE_ROWS");
	json = read_json_file(json_path);
	process = process_of(json, hog);
	ck_assert_msg(process, "the fixture in the JSON");
	ck_assert_int_eq((long)jv_number(process, "rows_refused"), 0);
	ck_assert_int_eq(jv_get(process, "operations")->count, 1 + 1 + 256);
	ck_assert_int_eq((long)jv_number(jv_get(json, "lost"), "map_full"), 20000 - 258);
	jv_free(json);
	stop_fixture(hog);
	free(json_path);
	free(capture);
}
END_TEST

START_TEST(test_task_points_by_task_and_point)
{
	static const char *const paths[] = { NULL, "--per-event" };
	char *json = test_path("out.json"), *capture = test_path("overlap.capture");
	char *report_argv[] = { OPTRACE, "report", "--json", capture, NULL };
	char rounds[16];

	NEED_BPF();
	snprintf(rounds, sizeof(rounds), "%d", OVERLAP_ROUNDS);
	for (int i = 0; i < 4; i++) {
		const char *path = paths[i % 2] ? paths[i % 2] : "--attach=auto";
		bool record = i >= 2;
		char *stat_argv[] = { OPTRACE, "stat",	       "--json", (char *)path,
				      "--",    OVERLAP_POINTS, rounds,	 NULL };
		char *record_argv[] = { OPTRACE, "record", "-q",	   (char *)path, "-o",
					capture, "--",	   OVERLAP_POINTS, rounds,	 NULL };
		struct counts traced = { 0 };
		int processes;

		if (record) {
			ck_assert_int_eq(run_command(record_argv, NULL, NULL, 60), 0);
			ck_assert_int_eq(run_command(report_argv, json, NULL, 60), 0);
		} else {
			ck_assert_int_eq(run_command(stat_argv, json, NULL, 60), 0);
		}
		stat_json_counts(json, 0, &traced, &processes);
		ck_assert_msg(
			counts_get(&traced, "task Scheduled omp") == OVERLAP_ROUNDS * 8 &&
				counts_get(&traced, "task Migrating cpu") == OVERLAP_ROUNDS * 8 &&
				counts_get(&traced, "op overlap.round 0") == OVERLAP_ROUNDS,
			"%s %s: Scheduled %ld, Migrating %ld, rounds %ld",
			record ? "record" : "stat", path, counts_get(&traced, "task Scheduled omp"),
			counts_get(&traced, "task Migrating cpu"),
			counts_get(&traced, "op overlap.round 0"));
		ck_assert_int_eq(json_number(json, "unmatched"), 0);
		counts_free(&traced);
	}
	free(json);
	free(capture);
}
END_TEST

#define DLCLOSE_APP OPTRACE_BUILD_DIR "/tests/dlclose_app"
#define LIBOPTRACE OPTRACE_BUILD_DIR "/lib/liboptrace.so.1"

/* A runtime that dlclose()s liboptrace while a traced thread lives: no crash at its exit. */
START_TEST(test_dlclose_while_traced)
{
	char *json = test_path("out.json"), *err_path = test_path("err.txt"), *text;
	char *argv[] = { OPTRACE, "stat", "--json", "--", DLCLOSE_APP, LIBOPTRACE, NULL };
	struct counts traced = { 0 };
	int status, processes;

	NEED_BPF();
	status = run_command(argv, json, err_path, 60);
	text = read_file(err_path);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
			      !(text && strstr(text, "the command")),
		      "the traced runtime failed (status %d): %s", status, text);
	free(text);
	free(err_path);
	stat_json_counts(json, 0, &traced, &processes);
	ck_assert_int_eq(counts_get(&traced, "op dlclose.op 0"), 10);
	counts_free(&traced);
	free(json);
}
END_TEST

static int count_buffers(void *ctx, pid_t pid, uint32_t tid, uint64_t address, uint64_t sequence,
			 uint32_t count, const struct optrace_event *events)
{
	(void)ctx, (void)pid, (void)tid, (void)address, (void)sequence, (void)count, (void)events;
	return 0;
}

/*
 * Starts argv at pid, once free (as CRIU restores pids), its stdout to
 * out_path; 0 if another took it.
 */
static pid_t start_at_pid(pid_t pid, char *const argv[], const char *out_path)
{
	FILE *last = fopen("/proc/sys/kernel/ns_last_pid", "w");
	pid_t child;

	ck_assert_msg(last, "cannot open /proc/sys/kernel/ns_last_pid: %m");
	fprintf(last, "%d", (int)pid - 1);
	/* the file is 0666: only the write says whether this process may set it */
	ck_assert_msg(!fclose(last), "cannot write /proc/sys/kernel/ns_last_pid: %m");
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		if (!freopen(out_path, "w", stdout))
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	if (child == pid)
		return child;
	reap_within(child, SIGKILL, 5);
	return 0;
}

/*
 * A tracer reads every process's buffers 20 times a second: where
 * liboptrace's registry lies is looked up in the maps and the ELF once per
 * process, and again for a new process that reuses the pid (its liboptrace
 * elsewhere).
 */
START_TEST(test_registry_address_kept)
{
	char count_text[16] = "1", *idle_argv[] = { IDLE_THREADS, count_text, NULL };
	char *again_out = test_path("again.out");
	uint64_t lookups;
	pid_t pid, again = 0;

	NEED_BPF();
	pid = start_demo_forever("all");
	/* Once its registry can be read (its threads' buffers made), no more lookups. */
	for (int i = 0; i < 6000 && batch_read_process(pid, count_buffers, NULL) < 0; i++)
		usleep(20 * 1000);
	lookups = liboptrace_symbol_lookups();
	for (int i = 0; i < 5; i++)
		ck_assert_int_ge(batch_read_process(pid, count_buffers, NULL), 0);
	ck_assert_uint_eq(liboptrace_symbol_lookups() - lookups, 0);
	reap_within(pid, SIGKILL, 5);
	for (int tries = 0; tries < 50 && !again; tries++) {
		again = start_at_pid(pid, idle_argv, again_out);
		if (!again)
			usleep(20 * 1000); /* another fork took it: once it is gone */
	}
	ck_assert_msg(again, "pid %d was never free again", (int)pid);
	ck_assert_msg(wait_for_text(again_out, "ready", again, 120), "pid %d never got ready",
		      (int)again);
	lookups = liboptrace_symbol_lookups();
	/* the same pid, another process: its registry, looked up again, then kept */
	ck_assert_int_ge(batch_read_process(pid, count_buffers, NULL), 0);
	ck_assert_uint_eq(liboptrace_symbol_lookups() - lookups, 1);
	ck_assert_int_ge(batch_read_process(pid, count_buffers, NULL), 0);
	ck_assert_uint_eq(liboptrace_symbol_lookups() - lookups, 1);
	reap_within(pid, SIGKILL, 5);
}
END_TEST

/* The per-event path against the demo's truth: stat and record. */
START_TEST(test_per_event_is_exact)
{
	char *json = test_path("out.json"), *truth_path = test_path("truth.txt");
	char *capture = test_path("per-event.capture"), message[8192];
	char *stat_argv[] = { OPTRACE, "stat",	"--json", "--per-event", "--",	     DEMO, "-w",
			      "stats", "--omp", "1",	  "--truth",	 truth_path, "-q", NULL };
	char *record_argv[] = { OPTRACE,   "record",   "-q", "--per-event", "-o",
				capture,   "--",       DEMO, "-w",	    "stats",
				"--truth", truth_path, "-q", NULL };
	char *report_argv[] = { OPTRACE, "report", "--json", capture, NULL };

	NEED_BPF();
	for (int pass = 0; pass < 2; pass++) {
		struct counts truth = { 0 }, traced = { 0 };
		int processes;

		if (pass == 0) {
			ck_assert_int_eq(run_command(stat_argv, json, NULL, 120), 0);
		} else {
			ck_assert_int_eq(run_command(record_argv, NULL, NULL, 120), 0);
			ck_assert_int_eq(run_command(report_argv, json, NULL, 60), 0);
		}
		ck_assert_int_ge(truth_parse(truth_path, &truth), 1);
		stat_json_counts(json, 0, &traced, &processes);
		ck_assert_int_eq(processes, 1);
		ck_assert_msg(counts_diff(&truth, &traced, message, sizeof(message)) == 0,
			      "%s --per-event differs from the truth:\n%s",
			      pass ? "record" : "stat", message);
		counts_free(&truth);
		counts_free(&traced);
	}
	free(json);
	free(truth_path);
	free(capture);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("fastpath");
	TCase *tc = tcase_create("idle");

	tcase_set_timeout(tc, 180);
	tcase_add_checked_fixture(tc, test_dir_setup, test_dir_teardown);
	tcase_add_test(tc, test_stat_counts_idle_threads);
	tcase_add_test(tc, test_record_keeps_idle_threads);
	tcase_add_test(tc, test_per_event_is_exact);
	tcase_add_test(tc, test_stat_survives_hostile_batches);
	tcase_add_test(tc, test_record_survives_hostile_batches);
	tcase_add_test(tc, test_stat_names_many_strings);
	tcase_add_test(tc, test_record_names_many_strings);
	tcase_add_test(tc, test_stat_rows_shared_fairly);
	tcase_add_test(tc, test_rows_lost_not_charged);
	tcase_add_test(tc, test_task_points_by_task_and_point);
	tcase_add_test(tc, test_dlclose_while_traced);
	tcase_add_test(tc, test_registry_address_kept);
	suite_add_tcase(suite, tc);
	return run_suite(suite);
}
