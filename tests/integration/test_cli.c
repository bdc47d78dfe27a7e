// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The command line as bcc, perf and time users expect it: -h everywhere,
 * the command's exit status back, stat -o keeping its JSON apart from the
 * command's output, reports timestamped only with -T, several -p for list,
 * a thread id naming its process, report -o, -o's %h.
 */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "json_read.h"
#include "testlib.h"

/* The demo, running until stopped, with its rounds 100 ms apart. */
static pid_t start_demo(void)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		execl(DEMO, DEMO, "--forever", "--workload", "stats", "--threads", "2", "--pause",
		      "100", "-q", "--truth", "/dev/null", (char *)NULL);
		_exit(127);
	}
	wait_started(pid);
	return pid;
}

/* A thread of pid other than its main one, or 0. */
static pid_t other_thread(pid_t pid)
{
	char path[64];
	struct dirent *entry;
	pid_t tid = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	while (dir && (entry = readdir(dir))) {
		if (atoi(entry->d_name) > 0 && atoi(entry->d_name) != pid)
			tid = atoi(entry->d_name);
	}
	if (dir)
		closedir(dir);
	return tid;
}

/*
 * No word left alone at column 0 by argp's wrapping (issue 43): a usage line or
 * an example that did not fit goes on unindented under it.
 */
static void assert_no_orphans(const char *command, const char *text)
{
	const char *line = text, *previous = "";

	while (*line) {
		const char *end = strchr(line, '\n');
		size_t length = end ? (size_t)(end - line) : strlen(line);

		if (length && line[0] != ' ' && line[length - 1] != ':' &&
		    (!strncmp(previous, "    ", 4) || !strncmp(previous, "USAGE", 5)))
			ck_abort_msg("%s --help: \"%.*s\" is left alone under \"%.*s\"", command,
				     (int)length, line, (int)(line - previous - 1), previous);
		previous = line;
		if (!end)
			break;
		line = end + 1;
	}
}

START_TEST(test_help_everywhere)
{
	static const char *const commands[] = { "list",	  "stat",  "top",  "record", "report",
						"export", "serve", "dump", NULL };
	char *out = test_path("help.txt"), *text;

	for (int i = 0; commands[i]; i++) {
		char *argv[] = { OPTRACE, (char *)commands[i], "-h", NULL };

		ck_assert_int_eq(run_command(argv, out, NULL, 30), 0);
		text = read_file(out);
		ck_assert_msg(strstr(text, "Usage: optrace "), "%s -h:\n%s", commands[i], text);
		assert_no_orphans(commands[i], text);
		free(text);
	}
	free(out);
}
END_TEST

/* optrace help CMD, CMD --version, an unknown command in two lines (issue 43). */
START_TEST(test_help_version_and_unknown)
{
	char *help[] = { OPTRACE, "help", "stat", NULL };
	char *version[] = { OPTRACE, "stat", "--version", NULL };
	char *unknown[] = { OPTRACE, "frob", NULL };
	char *out = test_path("help.txt"), *err = test_path("help.err"), *text;

	ck_assert_int_eq(run_command(help, out, NULL, 30), 0);
	text = read_file(out);
	ck_assert_msg(strstr(text, "Usage: optrace stat") && strstr(text, "--show-helpers"), "%s",
		      text);
	free(text);
	ck_assert_int_eq(run_command(version, out, NULL, 30), 0);
	text = read_file(out);
	ck_assert_msg(!strncmp(text, "optrace ", 8), "%s", text);
	free(text);
	ck_assert_int_eq(WEXITSTATUS(run_command(unknown, NULL, err, 30)), 2);
	text = read_file(err);
	ck_assert_msg(strstr(text, "unknown command 'frob'") && strstr(text, "list, stat, top") &&
			      !strstr(text, "Examples"),
		      "%s", text);
	free(text);
	free(out);
	free(err);
}
END_TEST

/* The legends: in a report by default, not with --no-legend, nor in stat -q (issue 43). */
START_TEST(test_no_legend)
{
	char *capture = test_path("legend.capture"), *out = test_path("legend.txt"), *text;
	char *record[] = { OPTRACE, "record", "-q", "-o",      capture,	    "--", DEMO,
			   "-w",    "stats",  "-q", "--truth", "/dev/null", NULL };
	char *report[] = { OPTRACE, "report", capture, NULL };
	char *bare[] = { OPTRACE, "report", "--no-legend", capture, NULL };
	char *quiet[] = { OPTRACE, "stat", "-q",      "--",	   DEMO, "-w",
			  "stats", "-q",   "--truth", "/dev/null", NULL };

	NEED_BPF();
	ck_assert_int_eq(run_command(record, NULL, NULL, 120), 0);
	ck_assert_int_eq(run_command(report, out, NULL, 60), 0);
	text = read_file(out);
	ck_assert_msg(strstr(text, "# CALL:") && strstr(text, "demo."), "%s", text);
	free(text);
	ck_assert_int_eq(run_command(bare, out, NULL, 60), 0);
	text = read_file(out);
	ck_assert_msg(!strstr(text, "# CALL:") && strstr(text, "demo."), "%s", text);
	free(text);
	ck_assert_int_eq(run_command(quiet, out, NULL, 120), 0);
	text = read_file(out);
	ck_assert_msg(!strstr(text, "# CALL:") && strstr(text, "demo."), "%s", text);
	free(text);
	free(capture);
	free(out);
}
END_TEST

START_TEST(test_command_status_comes_back)
{
	char *exit3[] = { OPTRACE, "stat", "-q", "--", "sh", "-c", "exit 3", NULL };
	char *segv[] = {
		OPTRACE, "record",	  "-q", "-o", test_path("segv.capture"), "--", "sh",
		"-c",	 "kill -SEGV $$", NULL
	};
	char *stopped[] = { OPTRACE, "stat", "-q", "-d", "1", "--", "sleep", "30", NULL };

	NEED_BPF();
	ck_assert_int_eq(WEXITSTATUS(run_command(exit3, NULL, NULL, 60)), 3);
	ck_assert_int_eq(WEXITSTATUS(run_command(segv, NULL, NULL, 60)), 128 + SIGSEGV);
	/* optrace ended it at -d: optrace did its job. */
	ck_assert_int_eq(WEXITSTATUS(run_command(stopped, NULL, NULL, 60)), 0);
	free(segv[4]);
}
END_TEST

START_TEST(test_stat_output_apart_from_the_command)
{
	char *json = test_path("stat.json"), *out = test_path("stdout.txt"), *text;
	char command[512];
	char *argv[] = { OPTRACE, "stat", "-j", "-o", json, "--", "sh", "-c", command, NULL };
	struct jv *report;

	NEED_BPF();
	snprintf(command, sizeof(command),
		 "echo the command speaks; exec %s --workload stats --truth /dev/null", DEMO);
	ck_assert_int_eq(run_command(argv, out, NULL, 120), 0);
	text = read_file(out);
	ck_assert_msg(strstr(text, "the command speaks") && !strstr(text, "\"processes\""), "%s",
		      text);
	free(text);
	text = read_file(json);
	report = jv_parse(text);
	ck_assert_msg(report && jv_get(report, "processes") && jv_string(report, "time")[0],
		      "not one JSON report with its time:\n%s", text);
	jv_free(report);
	free(text);
	free(json);
	free(out);
}
END_TEST

START_TEST(test_intervals_timestamped_only_with_T)
{
	char *out = test_path("intervals.txt"), *text, pid_text[16];
	char *plain[] = { OPTRACE, "stat", "-q", "-p", pid_text, "1", "2", NULL };
	char *stamped[] = { OPTRACE, "stat", "-q", "-T", "-p", pid_text, "1", "2", NULL };
	pid_t demo;

	NEED_BPF();
	demo = start_demo();
	snprintf(pid_text, sizeof(pid_text), "%d", demo);
	ck_assert_int_eq(run_command(plain, out, NULL, 60), 0);
	text = read_file(out);
	/* Two reports, a blank line between them, no time line. */
	ck_assert_msg(strstr(text, "\n\n== process") && text[2] != ':', "%s", text);
	free(text);
	ck_assert_int_eq(run_command(stamped, out, NULL, 60), 0);
	text = read_file(out);
	ck_assert_msg(text[2] == ':' && text[5] == ':' && strstr(text, "\n\n"), "%s", text);
	free(text);
	reap_within(demo, SIGTERM, 10);
	free(out);
}
END_TEST

/* list, run with argv, lists processes a and b. */
static void assert_lists_both(char **argv, const char *out, pid_t a, pid_t b)
{
	char line[64], *text;

	ck_assert_int_eq(run_command(argv, out, NULL, 30), 0);
	text = read_file(out);
	snprintf(line, sizeof(line), "process %d maps", a);
	ck_assert_msg(strstr(text, line), "%s", text);
	snprintf(line, sizeof(line), "process %d maps", b);
	ck_assert_msg(strstr(text, line), "%s", text);
	free(text);
}

START_TEST(test_list_several_and_threads)
{
	char *out = test_path("list.txt"), *err = test_path("list.err"), *text;
	char first[16], second[16], thread[16];
	char *both[] = { OPTRACE, "list", "-p", first, "-p", second, NULL };
	char both_text[40];
	char *comma[] = { OPTRACE, "list", "-p", both_text, NULL };
	char *by_thread[] = { OPTRACE, "list", "-p", thread, NULL };
	char line[64];
	pid_t a, b, tid;

	NEED_BPF();
	a = start_demo();
	b = start_demo();
	snprintf(first, sizeof(first), "%d", a);
	snprintf(second, sizeof(second), "%d", b);
	assert_lists_both(both, out, a, b);
	/* perf's form: -p A,B */
	snprintf(both_text, sizeof(both_text), "%d,%d", a, b);
	assert_lists_both(comma, out, a, b);

	/* Its workers start after it announced itself: however long that takes. */
	for (int i = 0; i < 12000 && !(tid = other_thread(a)); i++)
		usleep(10 * 1000);
	ck_assert_msg(tid > 0, "process %d never started a second thread", (int)a);
	snprintf(thread, sizeof(thread), "%d", tid);
	ck_assert_int_eq(run_command(by_thread, out, err, 30), 0);
	text = read_file(err);
	snprintf(line, sizeof(line), "is a thread of process %d", a);
	ck_assert_msg(strstr(text, line), "%s", text);
	free(text);
	reap_within(a, SIGTERM, 10);
	reap_within(b, SIGTERM, 10);
	free(out);
	free(err);
}
END_TEST

START_TEST(test_report_output_and_capture_target)
{
	char *capture = test_path("run.capture"), *report = test_path("report.txt");
	char *out = test_path("dump.txt"), *text, pid_text[16], expected[64];
	char *record[] = {
		OPTRACE, "record", "-q", "-d", "1", "-o", capture, "-p", pid_text, NULL
	};
	char *to_file[] = { OPTRACE, "report", "-o", report, capture, NULL };
	char *over_input[] = { OPTRACE, "report", "-o", capture, capture, NULL };
	char *dump[] = { OPTRACE, "report", "--dump", capture, NULL };
	pid_t demo;

	NEED_BPF();
	demo = start_demo();
	snprintf(pid_text, sizeof(pid_text), "%d", demo);
	ck_assert_int_eq(run_command(record, NULL, NULL, 60), 0);
	reap_within(demo, SIGTERM, 10);
	/* The capture names what was traced, not optrace's arguments. */
	ck_assert_int_eq(run_command(dump, out, NULL, 30), 0);
	text = read_file(out);
	snprintf(expected, sizeof(expected), "\"target\" = \"process %d (optrace-demo)\"", demo);
	ck_assert_msg(strstr(text, expected), "%s", text);
	free(text);
	ck_assert_int_eq(run_command(to_file, NULL, NULL, 30), 0);
	text = read_file(report);
	ck_assert_msg(strstr(text, "== process"), "%s", text);
	free(text);
	/* An output that is an input is refused, and the input stays. */
	ck_assert_int_eq(WEXITSTATUS(run_command(over_input, NULL, NULL, 30)), 1);
	ck_assert_int_eq(run_command(to_file, NULL, NULL, 30), 0);
	free(capture);
	free(report);
	free(out);
}
END_TEST

START_TEST(test_output_names_the_host)
{
	char host[256] = "", *dot, pattern[512], expected[512];
	char *dir = test_path("");
	char *argv[] = { OPTRACE, "record", "-q", "-o", pattern, "--", "true", NULL };

	NEED_BPF();
	gethostname(host, sizeof(host) - 1);
	dot = strchr(host, '.');
	if (dot)
		*dot = '\0';
	snprintf(pattern, sizeof(pattern), "%srun.%%h.100%%%%.capture", dir);
	snprintf(expected, sizeof(expected), "%srun.%s.100%%.capture", dir, host);
	ck_assert_int_eq(run_command(argv, NULL, NULL, 60), 0);
	ck_assert_msg(access(expected, F_OK) == 0, "no %s", expected);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("cli");
	TCase *tc = tcase_create("cli");

	tcase_set_timeout(tc, 300);
	tcase_add_checked_fixture(tc, test_dir_setup, test_dir_teardown);
	tcase_add_test(tc, test_help_everywhere);
	tcase_add_test(tc, test_help_version_and_unknown);
	tcase_add_test(tc, test_no_legend);
	tcase_add_test(tc, test_command_status_comes_back);
	tcase_add_test(tc, test_stat_output_apart_from_the_command);
	tcase_add_test(tc, test_intervals_timestamped_only_with_T);
	tcase_add_test(tc, test_list_several_and_threads);
	tcase_add_test(tc, test_report_output_and_capture_target);
	tcase_add_test(tc, test_output_names_the_host);
	suite_add_tcase(suite, tc);
	return run_suite(suite);
}
