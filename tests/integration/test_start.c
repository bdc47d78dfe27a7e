// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * How tracing starts and how a hang-up ends it: every mistake that can be
 * seen before the BPF programs load (a command that cannot run, a -p that is
 * gone or no runtime, an -o that cannot be written) fails before the load,
 * saying what is wrong; SIGHUP (a dropped ssh session) ends record as
 * SIGTERM does, with a whole capture (stat's: test_stat.c).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"

/* What -v says once the programs are loaded: its absence shows a mistake failed first. */
#define LOADED "BPF programs loaded"

/* A pid that was just a process and is none now. */
static pid_t gone_pid(void)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(0);
	ck_assert_int_ne(reap_within(pid, 0, 30), -1);
	return pid;
}

struct mistake {
	char *argv[12];
	int status; /* the exit status expected */
	const char *said;
};

static void assert_fails_first(const struct mistake *mistake)
{
	char *err_path = test_path("err.txt"), *text;
	int status = run_command(mistake->argv, NULL, err_path, 120);

	text = read_file(err_path);
	ck_assert_msg(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == mistake->status,
		      "%s %s: status %d, not %d:\n%s", mistake->argv[1], mistake->argv[2],
		      WIFEXITED(status) ? WEXITSTATUS(status) : -1, mistake->status, text);
	ck_assert_msg(text && strstr(text, mistake->said), "%s %s: no \"%s\" in:\n%s",
		      mistake->argv[1], mistake->argv[2], mistake->said, text);
	ck_assert_msg(!strstr(text, LOADED), "%s %s: failed only after the load:\n%s",
		      mistake->argv[1], mistake->argv[2], text);
	free(text);
	free(err_path);
}

START_TEST(test_mistakes_fail_before_loading)
{
	char demo_text[16], gone_text[16], sleeper_text[16], said_gone[64], said_foreign[96];
	char *nowhere = "/nonexistent-optrace-test/dir/out";
	pid_t demo, sleeper;

	NEED_BPF();
	demo = start_demo_forever("stats");
	sleeper = start_foreign_process();
	snprintf(demo_text, sizeof(demo_text), "%d", demo);
	snprintf(gone_text, sizeof(gone_text), "%d", gone_pid());
	snprintf(sleeper_text, sizeof(sleeper_text), "%d", sleeper);
	snprintf(said_gone, sizeof(said_gone), "no process %s", gone_text);
	snprintf(said_foreign, sizeof(said_foreign), "process %s does not map liboptrace",
		 sleeper_text);
	{
		const struct mistake mistakes[] = {
			{ { OPTRACE, "stat", "-v", "--", "/nonexistent/cmd", NULL },
			  127,
			  "cannot run /nonexistent/cmd: No such file or directory" },
			{ { OPTRACE, "stat", "-v", "--", "no-such-command-on-path", NULL },
			  127,
			  "cannot run no-such-command-on-path" },
			{ { OPTRACE, "record", "-v", "-o", test_path("a.capture"), "--",
			    "/etc/passwd", NULL },
			  126,
			  "cannot run /etc/passwd: Permission denied" },
			{ { OPTRACE, "stat", "-v", "-p", gone_text, NULL }, 1, said_gone },
			{ { OPTRACE, "top", "-v", "-b", "-p", gone_text, NULL }, 1, said_gone },
			{ { OPTRACE, "stat", "-v", "-p", demo_text, "-p", gone_text, NULL },
			  1,
			  said_gone },
			{ { OPTRACE, "record", "-v", "-o", test_path("b.capture"), "-p",
			    sleeper_text, NULL },
			  1,
			  said_foreign },
			{ { OPTRACE, "record", "-v", "-o", nowhere, "-p", demo_text, NULL },
			  1,
			  "-o: cannot open the folder /nonexistent-optrace-test: No such file" },
			{ { OPTRACE, "stat", "-v", "-o", nowhere, "-p", demo_text, NULL },
			  1,
			  "-o: cannot open the folder /nonexistent-optrace-test: No such file" },
		};

		for (size_t i = 0; i < sizeof(mistakes) / sizeof(mistakes[0]); i++)
			assert_fails_first(&mistakes[i]);
	}
	/* Without a mistake -v does say it: its absence above means something. */
	{
		char *argv[] = { OPTRACE, "stat", "-v", "-d", "100ms", "-p", demo_text, NULL };
		char *err_path = test_path("err.txt"), *text;

		ck_assert_int_eq(run_command(argv, NULL, err_path, 120), 0);
		text = read_file(err_path);
		ck_assert_msg(text && strstr(text, LOADED), "%s", text);
		free(text);
		free(err_path);
	}
	reap_within(sleeper, SIGKILL, 10);
	reap_within(demo, SIGTERM, 30);
}
END_TEST

/* record on SIGHUP: a whole capture under its name, no .partial left. */
START_TEST(test_hangup_closes_the_capture)
{
	char *capture = test_path("hup.capture"), *err_path = test_path("err.txt");
	char *partial = test_path("hup.capture.partial"), *report_err = test_path("report.txt");
	char demo_text[16], *text;
	char *argv[] = { OPTRACE, "record", "-o", capture, "-p", demo_text, NULL };
	char *report[] = { OPTRACE, "report", capture, NULL };
	pid_t demo, recorder;
	int status;

	NEED_BPF();
	demo = start_demo_forever("stats");
	snprintf(demo_text, sizeof(demo_text), "%d", demo);
	recorder = start_tracer(argv, NULL, err_path, "Recording to");
	usleep(300 * 1000); /* a few batches */
	status = reap_within(recorder, SIGHUP, 60);
	text = read_file(err_path);
	ck_assert_msg(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "record on SIGHUP: status %d:\n%s", status, text);
	free(text);
	ck_assert_msg(access(partial, F_OK) != 0, "SIGHUP left %s", partial);
	ck_assert_int_eq(run_command(report, NULL, report_err, 60), 0);
	text = read_file(report_err);
	ck_assert_msg(!text || !strstr(text, "end marker"), "the capture was cut:\n%s", text);
	free(text);
	reap_within(demo, SIGTERM, 30);
	free(capture);
	free(err_path);
	free(partial);
	free(report_err);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("start");
	TCase *tc = tcase_create("start");

	tcase_set_timeout(tc, 300);
	tcase_add_checked_fixture(tc, test_dir_setup, test_dir_teardown);
	tcase_add_test(tc, test_mistakes_fail_before_loading);
	tcase_add_test(tc, test_hangup_closes_the_capture);
	suite_add_tcase(suite, tc);
	return run_suite(suite);
}
