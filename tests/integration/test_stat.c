// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace stat against the demo runtime: real BPF programs in this kernel,
 * real processes, and the demo's own ground truth to compare with.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "json_read.h"
#include "tables_check.h"
#include "testlib.h"

static void stat_counts(const char *json_path, struct counts *counts, int *processes)
{
	stat_json_counts(json_path, 0, counts, processes);
}

/*
 * optrace stat --json [--attach MODE] -- optrace-demo ARGS: its counts must
 * equal the truth. attach_mode NULL: optrace's default.
 */
static void check_command_attached(const char *attach_mode, const char *const demo_args[],
				   int expected_processes)
{
	char *json = test_path("stat.json"), *truth_path = test_path("truth.txt");
	char *argv[40], message[8192];
	struct counts truth = { 0 }, traced = { 0 };
	int argc = 0, status, processes;

	argv[argc++] = OPTRACE;
	argv[argc++] = "stat";
	argv[argc++] = "--json";
	if (attach_mode) {
		argv[argc++] = "--attach";
		argv[argc++] = (char *)attach_mode;
	}
	argv[argc++] = "--";
	argv[argc++] = DEMO;
	for (int i = 0; demo_args[i]; i++)
		argv[argc++] = (char *)demo_args[i];
	argv[argc++] = "--truth";
	argv[argc++] = truth_path;
	argv[argc++] = "-q";
	argv[argc] = NULL;
	status = run_command(argv, json, NULL, 240);
	ck_assert_msg(status == 0, "optrace stat -- optrace-demo failed (status %d)", status);

	ck_assert_int_ge(truth_parse(truth_path, &truth), 1);
	stat_counts(json, &traced, &processes);
	ck_assert_int_eq(processes, expected_processes);
	ck_assert_msg(counts_diff(&truth, &traced, message, sizeof(message)) == 0,
		      "optrace stat differs from the ground truth:\n%s", message);
	counts_free(&truth);
	counts_free(&traced);
	free(json);
	free(truth_path);
}

static void check_command(const char *const demo_args[], int expected_processes)
{
	check_command_attached(NULL, demo_args, expected_processes);
}

START_TEST(test_jacobi)
{
	static const char *const args[] = { "--workload", "jacobi", NULL };

	NEED_BPF();
	check_command(args, 1);
}
END_TEST

START_TEST(test_stats)
{
	static const char *const args[] = { "--workload", "stats", NULL };

	NEED_BPF();
	check_command(args, 1);
}
END_TEST

START_TEST(test_fallback)
{
	static const char *const args[] = { "--workload", "fallback", NULL };

	NEED_BPF();
	check_command(args, 1);
}
END_TEST

START_TEST(test_openmp_threads)
{
	static const char *const args[] = { "--workload", "all", "--omp", "2",
					    "--threads",  "2",	 NULL };

	NEED_BPF();
	check_command(args, 1);
}
END_TEST

/*
 * A table of rows allocated as they come fails a new row for a moment when
 * the kernel's caches of them run dry (a burst on a busy machine): its
 * reserve takes it. Here the tables hold one row each, so that the reserves
 * take the rest: every count still exact, nothing lost.
 */
START_TEST(test_reserves_take_rows)
{
	static const char *const args[] = { "--workload", "all", "--omp", "2", NULL };

	NEED_BPF();
	setenv("OPTRACE_STAT_TABLE_ROWS", "1", 1);
	check_command(args, 1);
	unsetenv("OPTRACE_STAT_TABLE_ROWS");
}
END_TEST

/* The same counts through libbpf's perf-event uprobes, the older kernels' way. */
START_TEST(test_perf_event_attach)
{
	static const char *const args[] = { "--workload", "all", "--omp", "1", NULL };

	NEED_BPF();
	check_command_attached("perf-event", args, 1);
}
END_TEST

START_TEST(test_follows_children)
{
	static const char *const args[] = { "--workload", "stats", "--procs", "3", NULL };

	NEED_BPF();
	check_command(args, 3);
}
END_TEST

/*
 * Processes that announce their rank and end within a few ms, before optrace
 * could read it from their memory: the kernel kept what they announced.
 */
START_TEST(test_short_lived_ranks)
{
	char *json = test_path("ranks.json"), *truth = test_path("truth.txt"), *text;
	char *argv[] = { OPTRACE, "stat",    "--json", "--",	 DEMO,	"--workload",
			 "stats", "--procs", "3",      "--size", "100", "--iterations",
			 "1",	  "--truth", truth,    "-q",	 NULL };
	const struct jv *list;
	struct jv *root;
	unsigned int ranks_seen = 0;

	NEED_BPF();
	ck_assert_int_eq(run_command(argv, json, NULL, 60), 0);
	text = read_file(json);
	root = text ? jv_parse(text) : NULL;
	list = jv_get(root, "processes");
	ck_assert_msg(list && list->type == JV_ARRAY && list->count == 3, "%.500s", text);
	for (size_t i = 0; i < list->count; i++) {
		double rank = jv_number(list->items[i], "rank");

		ck_assert_msg(jv_number(list->items[i], "rank_count") == 3, "%.500s", text);
		ck_assert_msg(rank >= 0 && rank < 3, "%.500s", text);
		ranks_seen |= 1u << (int)rank;
	}
	ck_assert_msg(ranks_seen == 7, "not the ranks 0, 1 and 2:\n%.500s", text);
	jv_free(root);
	free(text);
	free(truth);
	free(json);
}
END_TEST

/* A demo running until signalled; returns its pid. */
static pid_t start_forever_demo(const char *truth_name)
{
	char *truth_path = test_path(truth_name);
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/*
		 * Paused between rounds: two demos that keep both CPUs of a
		 * small VM busy can starve the kernel's workers, and a
		 * detach then waits tens of seconds for an RCU grace period.
		 */
		execl(DEMO, DEMO, "--forever", "--pause", "5", "--workload", "stats", "--size",
		      "20000", "-q", "--truth", truth_path, (char *)NULL);
		_exit(127);
	}
	free(truth_path);
	wait_started(pid);
	return pid;
}

static int stop_demo(pid_t pid)
{
	int status;

	status = reap_within(pid, SIGTERM, 30);
	ck_assert_int_ne(status, -1);
	return status;
}

static long total_ops(const char *json_path, int *processes)
{
	struct counts traced = { 0 };
	long total = 0;

	stat_counts(json_path, &traced, processes);
	for (size_t i = 0; i < traced.length; i++) {
		if (!strncmp(traced.entries[i].key, "op ", 3))
			total += traced.entries[i].count;
	}
	counts_free(&traced);
	return total;
}

static bool semaphores_armed(pid_t pid)
{
	char pid_text[16], *out = test_path("list.txt"), *text;
	char *argv[] = { OPTRACE, "list", "-p", pid_text, NULL };
	bool armed;

	snprintf(pid_text, sizeof(pid_text), "%d", pid);
	ck_assert_int_eq(run_command(argv, out, NULL, 30), 0);
	text = read_file(out);
	ck_assert_msg(strstr(text, "op_begin"), "optrace list shows no probes:\n%s", text);
	armed = strstr(text, " yes(") != NULL;
	free(text);
	free(out);
	return armed;
}

START_TEST(test_attach_and_detach_live)
{
	char pid_text[16], *json = test_path("live.json"), *text;
	char *argv[] = { OPTRACE, "stat", "--json", "-d", "2", "-p", pid_text, NULL };
	int status, processes;
	pid_t demo;

	NEED_BPF();
	/* As an MPI launcher would start rank 3 of 8. */
	setenv("OMPI_COMM_WORLD_RANK", "3", 1);
	setenv("OMPI_COMM_WORLD_SIZE", "8", 1);
	demo = start_forever_demo("truth.txt");
	snprintf(pid_text, sizeof(pid_text), "%d", demo);
	ck_assert(!semaphores_armed(demo));
	status = run_command(argv, json, NULL, 60);
	ck_assert_int_eq(status, 0);
	ck_assert_int_gt(total_ops(json, &processes), 0);
	ck_assert_int_eq(processes, 1);
	/* The rank it announced, read from its memory (attached after rt_init). */
	text = read_file(json);
	ck_assert_msg(strstr(text, "\"rank\":3,\"rank_count\":8"), "%.300s", text);
	free(text);
	/* Detached: the semaphores are back to 0 and the demo runs on. */
	ck_assert(!semaphores_armed(demo));
	ck_assert_int_eq(kill(demo, 0), 0);
	status = stop_demo(demo);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "the demo failed after detach");
	free(json);
}
END_TEST

START_TEST(test_pid_attach_leaves_others_alone)
{
	static const char *const modes[] = { "uprobe-multi", "perf-event" };
	const char *mode = modes[_i];
	char pid_text[16];
	char *argv[] = {
		OPTRACE, "stat", "--attach", (char *)mode, "-d", "3", "-p", pid_text, NULL
	};
	pid_t target, other, tracer;
	int status;

	NEED_BPF();
	target = start_forever_demo("truth_target.txt");
	other = start_forever_demo("truth_other.txt");
	snprintf(pid_text, sizeof(pid_text), "%d", target);
	tracer = fork();
	ck_assert_int_ge(tracer, 0);
	if (tracer == 0)
		_exit(run_command(argv, NULL, "/dev/null", 60) == 0 ? 0 : 1);
	/* While attached: the target's probes are armed, the other's are not. */
	for (int i = 0; i < 100 && !semaphores_armed(target); i++)
		usleep(50 * 1000);
	ck_assert(semaphores_armed(target));
	ck_assert(!semaphores_armed(other));
	ck_assert_int_ne(status = reap_within(tracer, 0, 60), -1);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert(!semaphores_armed(target));
	stop_demo(target);
	stop_demo(other);
}
END_TEST

START_TEST(test_two_pids_and_all)
{
	char pid_a[16], pid_b[16], *json = test_path("two.json");
	char *by_pid[] = { OPTRACE, "stat", "--json", "-d", "2", "-p", pid_a, "-p", pid_b, NULL };
	char *all[] = { OPTRACE, "stat", "--json", "-d", "2", "-a", NULL };
	pid_t a, b;
	int processes;

	NEED_BPF();
	a = start_forever_demo("truth_a.txt");
	b = start_forever_demo("truth_b.txt");
	snprintf(pid_a, sizeof(pid_a), "%d", a);
	snprintf(pid_b, sizeof(pid_b), "%d", b);
	ck_assert_int_eq(run_command(by_pid, json, NULL, 60), 0);
	ck_assert_int_gt(total_ops(json, &processes), 0);
	ck_assert_int_eq(processes, 2);
	ck_assert_int_eq(run_command(all, json, NULL, 60), 0);
	ck_assert_int_gt(total_ops(json, &processes), 0);
	ck_assert_int_ge(processes, 2);
	stop_demo(a);
	stop_demo(b);
	free(json);
}
END_TEST

/* -a also traces a runtime started after optrace: all of it, exactly. */
START_TEST(test_all_covers_later_processes)
{
	char *json = test_path("all.json"), *truth_path = test_path("truth.txt"), message[8192];
	char *err = test_path("all.err");
	char *tracer_argv[] = { OPTRACE, "stat", "--json", "-d", "600", "-a", NULL };
	char *demo_argv[] = { DEMO, "--workload", "fallback", "-q", "--truth", truth_path, NULL };
	struct counts truth = { 0 }, traced = { 0 };
	pid_t tracer, demo;
	int status, processes;

	NEED_BPF();
	tracer = start_tracer(tracer_argv, json, err, "Tracing...");
	demo = fork();
	ck_assert_int_ge(demo, 0);
	if (demo == 0) {
		execv(DEMO, demo_argv);
		_exit(127);
	}
	ck_assert_int_ne(status = reap_within(demo, 0, 60), -1);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* Counted in the kernel by now: the demo's last batch went at its exit. */
	ck_assert_int_ne(status = reap_within(tracer, SIGINT, 60), -1);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	ck_assert_int_ge(truth_parse(truth_path, &truth), 1);
	stat_json_counts(json, demo, &traced, &processes);
	ck_assert_int_ge(processes, 1);
	ck_assert_msg(counts_diff(&truth, &traced, message, sizeof(message)) == 0,
		      "optrace stat -a differs from the ground truth:\n%s", message);
	counts_free(&truth);
	counts_free(&traced);
	free(json);
	free(err);
	free(truth_path);
}
END_TEST

START_TEST(test_target_exits_mid_trace)
{
	char pid_text[16], *json = test_path("exit.json"), *err = test_path("exit.err");
	char *argv[] = { OPTRACE, "stat", "--json", "-p", pid_text, NULL };
	struct timespec start, end;
	int processes;
	pid_t demo, tracer;

	NEED_BPF();
	demo = start_forever_demo("truth.txt");
	snprintf(pid_text, sizeof(pid_text), "%d", demo);
	tracer = start_tracer(argv, json, err, "Tracing...");
	/* Past a batch or two (the demo pauses 5 ms between rounds). */
	usleep(300 * 1000);
	stop_demo(demo);
	clock_gettime(CLOCK_MONOTONIC, &start);
	/* optrace notices the target is gone, prints and exits by itself. */
	{
		int status;

		ck_assert_int_ne(status = reap_within(tracer, 0, 60), -1);
		ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	ck_assert_int_lt(end.tv_sec - start.tv_sec, 30);
	ck_assert_int_gt(total_ops(json, &processes), 0);
	free(json);
	free(err);
}
END_TEST

/* Ctrl-C, and SIGHUP from a dropped ssh session: the counts printed, the probes disarmed. */
START_TEST(test_signal_prints_and_exits)
{
	static const int signals[] = { SIGINT, SIGHUP };
	char pid_text[16], *out = test_path("sigint.txt"), *err = test_path("sigint.err"), *text;
	char *argv[] = { OPTRACE, "stat", "-p", pid_text, NULL };
	pid_t demo, tracer;
	int status;

	NEED_BPF();
	demo = start_forever_demo("truth.txt");
	snprintf(pid_text, sizeof(pid_text), "%d", demo);
	tracer = start_tracer(argv, out, err, "Tracing...");
	usleep(300 * 1000); /* past a batch or two */
	ck_assert_int_ne(status = reap_within(tracer, signals[_i], 20), -1);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "optrace stat on signal %d: status %d", signals[_i], status);
	text = read_file(out);
	ck_assert_msg(strstr(text, "OPERATION") && strstr(text, "demo.") &&
			      strstr(text, "(optrace-demo)"),
		      "no table after signal %d:\n%s", signals[_i], text);
	ck_assert(!semaphores_armed(demo));
	stop_demo(demo);
	free(text);
	free(out);
	free(err);
}
END_TEST

/* A runtime whose liboptrace was replaced on disk (an upgrade) is still traced. */
START_TEST(test_replaced_library)
{
	char *copy = test_path("copy"), command[1024], pid_text[16], *json = test_path("rep.json");
	char *demo_copy, *argv[] = { OPTRACE, "stat", "--json", "-d", "2", "-p", pid_text, NULL };
	int processes;
	pid_t demo;

	NEED_BPF();
	snprintf(command, sizeof(command),
		 "mkdir -p %s/bin %s/lib && cp %s %s/bin/ && cp %s/lib/liboptrace.so.1 "
		 "%s/lib/liboptrace.so.1",
		 copy, copy, DEMO, copy, OPTRACE_BUILD_DIR, copy);
	ck_assert_int_eq(system(command), 0);
	ck_assert_int_gt(asprintf(&demo_copy, "%s/bin/optrace-demo", copy), 0);
	demo = fork();
	ck_assert_int_ge(demo, 0);
	if (demo == 0) {
		execl(demo_copy, demo_copy, "--forever", "-q", "--truth", "/dev/null",
		      (char *)NULL);
		_exit(127);
	}
	usleep(300 * 1000);
	snprintf(command, sizeof(command), "rm %s/lib/liboptrace.so.1", copy);
	ck_assert_int_eq(system(command), 0);
	snprintf(pid_text, sizeof(pid_text), "%d", demo);
	ck_assert_int_eq(run_command(argv, json, NULL, 60), 0);
	ck_assert_int_gt(total_ops(json, &processes), 0);
	stop_demo(demo);
	free(demo_copy);
	free(copy);
	free(json);
}
END_TEST

/* optrace killed with SIGKILL: the kernel detaches, the target runs on untraced. */
START_TEST(test_sigkill_detaches)
{
	char pid_text[16];
	pid_t demo, tracer;
	int status;

	NEED_BPF();
	demo = start_forever_demo("truth.txt");
	snprintf(pid_text, sizeof(pid_text), "%d", demo);
	tracer = fork();
	ck_assert_int_ge(tracer, 0);
	if (tracer == 0) {
		if (!freopen("/dev/null", "w", stdout))
			_exit(126);
		execl(OPTRACE, OPTRACE, "stat", "-p", pid_text, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 100 && !semaphores_armed(demo); i++)
		usleep(50 * 1000);
	ck_assert(semaphores_armed(demo));
	reap_within(tracer, SIGKILL, 20);
	for (int i = 0; i < 100 && semaphores_armed(demo); i++)
		usleep(50 * 1000);
	ck_assert(!semaphores_armed(demo));
	status = stop_demo(demo);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
END_TEST

START_TEST(test_clear_errors)
{
	char *err_path = test_path("err.txt"), *text;
	char *no_process[] = { OPTRACE, "stat", "-p", "999999999", NULL };
	char sleeper_pid[16], *no_library[] = { OPTRACE, "stat", "-p", sleeper_pid, NULL };
	char *no_target[] = { OPTRACE, "stat", NULL };
	pid_t sleeper;

	NEED_BPF();
	sleeper = start_foreign_process();
	snprintf(sleeper_pid, sizeof(sleeper_pid), "%d", sleeper);
	ck_assert_int_ne(run_command(no_process, NULL, err_path, 30), 0);
	text = read_file(err_path);
	ck_assert_msg(strstr(text, "no process 999999999"), "%s", text);
	free(text);
	ck_assert_int_ne(run_command(no_library, NULL, err_path, 30), 0);
	text = read_file(err_path);
	ck_assert_msg(strstr(text, "does not map liboptrace"), "%s", text);
	free(text);
	kill(sleeper, SIGKILL);
	waitpid(sleeper, NULL, 0);
	ck_assert_int_eq(WEXITSTATUS(run_command(no_target, NULL, err_path, 30)), 2);
	/* Without root: one sentence saying so (a copy nobody can run). */
	{
		char *copy = test_path("optrace"), command[512];
		char *as_nobody[] = { "setpriv",
				      "--reuid=65534",
				      "--regid=65534",
				      "--clear-groups",
				      copy,
				      "stat",
				      "-p",
				      sleeper_pid,
				      NULL };

		snprintf(command, sizeof(command), "cp %s %s && chmod 755 %s %s", OPTRACE, copy,
			 test_dir, copy);
		ck_assert_int_eq(system(command), 0);

		ck_assert_int_eq(WEXITSTATUS(run_command(as_nobody, NULL, err_path, 30)), 1);
		text = read_file(err_path);
		ck_assert_msg(strstr(text, "needs root"), "%s", text);
		free(text);
		free(copy);
	}
	free(err_path);
}
END_TEST

/*
 * Issue 15, items 4 to 6: stat's tables of a real run rank, group and say as
 * report's do (tests/lib/tables_check.c); no name is counted cut that the
 * report of the same workload keeps whole.
 */
START_TEST(test_tables_as_report)
{
	char *json_path = test_path("stat.json"), *text_path = test_path("stat.txt");
	char *helpers_path = test_path("helpers.txt"), *json, *text, *helpers;
	char *json_stat[] = { OPTRACE,	    "stat",	 "--json", "--", DEMO,
			      "--workload", "fallback",	 "--omp",  "1",	 "-q",
			      "--truth",    "/dev/null", NULL };
	char *text_stat[] = { OPTRACE,	    "stat",	 "--wide", "--", DEMO,
			      "--workload", "fallback",	 "--omp",  "1",	 "-q",
			      "--truth",    "/dev/null", NULL };
	char *helpers_stat[] = { OPTRACE,     "stat", "--wide",	    "--show-helpers",
				 "--",	      DEMO,   "--workload", "fallback",
				 "--omp",     "1",    "-q",	    "--truth",
				 "/dev/null", NULL };

	NEED_BPF();
	ck_assert_int_eq(run_command(json_stat, json_path, NULL, 240), 0);
	ck_assert_int_eq(run_command(text_stat, text_path, NULL, 240), 0);
	ck_assert_int_eq(run_command(helpers_stat, helpers_path, NULL, 240), 0);
	json = read_file(json_path);
	text = read_file(text_path);
	helpers = read_file(helpers_path);
	ck_assert(json && text && helpers);
	check_demo_tables(json, text, helpers, false);
	free(json);
	free(text);
	free(helpers);
	free(json_path);
	free(text_path);
	free(helpers_path);
}
END_TEST

/* Calls of name (depth 0) that fell back: the FALLBACK column / the fallback table. */
static void fallback_counts(const struct jv *process, const char *name, double *column,
			    double *table)
{
	const struct jv *ops = jv_get(process, "operations"), *rows = jv_get(process, "fallbacks");

	*column = *table = 0;
	for (size_t i = 0; i < ops->count; i++) {
		const struct jv *modes = jv_get(ops->items[i], "modes");

		if (jv_number(ops->items[i], "depth") ||
		    strcmp(jv_string(ops->items[i], "name"), name))
			continue;
		for (size_t m = 0; m < modes->count; m++)
			if (!strcmp(jv_string(modes->items[m], "mode"), "fallback"))
				*column += jv_number(modes->items[m], "count");
	}
	for (size_t i = 0; i < rows->count; i++) {
		if (jv_get(rows->items[i], "root")->type == JV_NULL &&
		    !strcmp(jv_string(rows->items[i], "operation"), name))
			*table += jv_number(rows->items[i], "count");
	}
}

/*
 * A live process's screen agrees with itself: the fallback table counts the
 * very calls the FALLBACK column does, in every interval, while operations
 * end as it is read.
 */
START_TEST(test_one_snapshot_agrees)
{
	static const char *const names[] = { "demo.sort", "demo.round", "demo.add", "demo.mean" };
	char *json = test_path("intervals.json"), *text, pid_text[16];
	char *argv[] = { OPTRACE, "stat", "--json", "-q", "-p", pid_text, "1", "4", NULL };
	int intervals = 0;
	pid_t demo;

	NEED_BPF();
	demo = start_demo_forever("fallback");
	snprintf(pid_text, sizeof(pid_text), "%d", demo);
	ck_assert_int_eq(run_command(argv, json, NULL, 60), 0);
	reap_within(demo, SIGTERM, 10);
	text = read_file(json);
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		struct jv *snapshot = jv_parse(line);
		const struct jv *processes;

		ck_assert_msg(snapshot, "not JSON: %.200s", line);
		processes = jv_get(snapshot, "processes");
		ck_assert_uint_eq(processes->count, 1);
		for (size_t n = 0; n < sizeof(names) / sizeof(names[0]); n++) {
			double column, table;

			fallback_counts(processes->items[0], names[n], &column, &table);
			ck_assert_msg(column > 0 && column == table,
				      "interval %d: %s fell back %.0f times in its row, %.0f in "
				      "the table",
				      intervals, names[n], column, table);
		}
		jv_free(snapshot);
		intervals++;
	}
	ck_assert_int_eq(intervals, 4);
	free(text);
	free(json);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("stat");
	TCase *tc = tcase_create("demo");

	tcase_set_timeout(tc, 300);
	tcase_add_checked_fixture(tc, test_dir_setup, test_dir_teardown);
	tcase_add_test(tc, test_jacobi);
	tcase_add_test(tc, test_stats);
	tcase_add_test(tc, test_fallback);
	tcase_add_test(tc, test_openmp_threads);
	tcase_add_test(tc, test_reserves_take_rows);
	tcase_add_test(tc, test_follows_children);
	tcase_add_test(tc, test_short_lived_ranks);
	tcase_add_test(tc, test_attach_and_detach_live);
	tcase_add_test(tc, test_perf_event_attach);
	tcase_add_loop_test(tc, test_pid_attach_leaves_others_alone, 0, 2);
	tcase_add_test(tc, test_two_pids_and_all);
	tcase_add_test(tc, test_all_covers_later_processes);
	tcase_add_test(tc, test_target_exits_mid_trace);
	tcase_add_loop_test(tc, test_signal_prints_and_exits, 0, 2);
	tcase_add_test(tc, test_replaced_library);
	tcase_add_test(tc, test_sigkill_detaches);
	tcase_add_test(tc, test_clear_errors);
	tcase_add_test(tc, test_tables_as_report);
	tcase_add_test(tc, test_one_snapshot_agrees);
	suite_add_tcase(suite, tc);

	return run_suite(suite);
}
