// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Output that fits a terminal (issue 25): report's and stat's tables at 80
 * and 120 columns, top in batch mode and on a real pseudo-terminal of 80x24
 * driven by its keys, durations with fractions and units.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

/* Characters (UTF-8) in the longest line of text; the line's number in *at. */
static int widest_line(const char *text, int *at)
{
	int widest = 0, width = 0, line = 1;

	*at = 0;
	for (const char *p = text;; p++) {
		if (*p == '\n' || !*p) {
			if (width > widest) {
				widest = width;
				*at = line;
			}
			if (!*p)
				break;
			width = 0;
			line++;
			continue;
		}
		width += ((unsigned char)*p & 0xc0) != 0x80;
	}
	return widest;
}

static void assert_fits(const char *text, int columns, const char *what)
{
	int at, widest = widest_line(text, &at);

	if (widest > columns)
		fputs(text, stderr);
	ck_assert_msg(widest <= columns, "%s: line %d is %d wide, over %d", what, at, widest,
		      columns);
}

/* optrace ARGS with COLUMNS=columns (0: unset); stdout. */
static char *run_at(int columns, char *const argv[])
{
	char *out = test_path("out.txt"), *text, number[16];

	snprintf(number, sizeof(number), "%d", columns);
	if (columns)
		setenv("COLUMNS", number, 1);
	else
		unsetenv("COLUMNS");
	ck_assert_int_eq(run_command(argv, out, NULL, 120), 0);
	unsetenv("COLUMNS");
	text = read_file(out);
	ck_assert_ptr_nonnull(text);
	free(out);
	return text;
}

/* The demo's fallback workload, recorded once per test. */
static char *record_fallback(void)
{
	char *capture = test_path("run.capture");
	char *record[] = { OPTRACE, "record", "-q",	    "-o",	 capture,
			   "--",    DEMO,     "--workload", "all",	 "--omp",
			   "1",	    "-q",     "--truth",    "/dev/null", NULL };

	ck_assert_int_eq(run_command(record, NULL, NULL, 240), 0);
	return capture;
}

START_TEST(test_report_fits)
{
	char *capture, *text, *wide, *json80, *json_wide;
	char *plain[] = { OPTRACE, "report", NULL, NULL, NULL };
	char *helpers[] = { OPTRACE, "report", "--show-helpers", "--by-site", NULL, NULL };
	char *wide_args[] = { OPTRACE, "report", "--wide", NULL, NULL };
	char *json[] = { OPTRACE, "report", "--json", NULL, NULL };
	static const int widths[] = { 80, 120 };

	NEED_BPF();
	capture = record_fallback();
	plain[2] = helpers[4] = wide_args[3] = json[3] = capture;
	for (int i = 0; i < 2; i++) {
		text = run_at(widths[i], plain);
		assert_fits(text, widths[i], "report");
		/* what was left out is said, and where to see it */
		ck_assert_msg(strstr(text, "# not shown at") && strstr(text, "--wide"), "%s", text);
		ck_assert_msg(strstr(text, "\nlost:"), "%s", text);
		free(text);
		text = run_at(widths[i], helpers);
		assert_fits(text, widths[i], "report --show-helpers --by-site");
		free(text);
	}
	/* Not a terminal and no COLUMNS: 80. */
	text = run_at(0, plain);
	assert_fits(text, 80, "report into a file");
	free(text);
	/* --wide: every column, the reasons on the row */
	wide = run_at(80, wide_args);
	ck_assert_msg(strstr(wide, " EAGER DEFERRED MIXED ") && !strstr(wide, "# not shown"), "%s",
		      wide);
	ck_assert_msg(!strstr(wide, "\u21b3"), "%s", wide);
	free(wide);
	/* JSON is no table */
	json80 = run_at(80, json);
	json_wide = run_at(400, json);
	ck_assert_str_eq(json80, json_wide);
	free(json80);
	free(json_wide);
	free(capture);
}
END_TEST

START_TEST(test_stat_fits)
{
	char *argv[] = { OPTRACE,      "stat",	   "-q", "--show-helpers", "--",	DEMO,
			 "--workload", "fallback", "-q", "--truth",	   "/dev/null", NULL };
	char *text;

	NEED_BPF();
	for (int width = 80; width <= 120; width += 40) {
		text = run_at(width, argv);
		assert_fits(text, width, "stat");
		ck_assert_msg(strstr(text, "demo.median via demo.sort"), "%s", text);
		free(text);
	}
}
END_TEST

/*
 * A runtime installed deeper than a terminal is wide: list's first line puts
 * the library's path on lines of its own, cut after a '/', and loses none of it.
 */
START_TEST(test_list_long_path_fits)
{
	char *top = test_path("a-runtime/installed-in/folders-deeper/than-a-terminal-is-wide");
	char *install[] = {
		"sh",
		"-c",
		"mkdir -p \"$1/bin\" \"$1/lib\" && cp \"$2/bin/optrace-demo\" \"$1/bin/\" && "
		"cp -a \"$2\"/lib/liboptrace.so* \"$1/lib/\"",
		"sh",
		top,
		OPTRACE_BUILD_DIR,
		NULL
	};
	char demo[PATH_MAX], real_top[PATH_MAX], line[PATH_MAX + 64], pid_text[16];
	char *text, *wide, *joined, *in, *out;
	char *list[] = { OPTRACE, "list", "-p", pid_text, NULL };
	char *list_wide[] = { OPTRACE, "list", "-p", pid_text, "--wide", NULL };
	pid_t pid;

	ck_assert_int_eq(run_command(install, NULL, NULL, 30), 0);
	snprintf(demo, sizeof(demo), "%s/bin/optrace-demo", top);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		execl(demo, demo, "--forever", "-q", "--truth", "/dev/null", (char *)NULL);
		_exit(127);
	}
	wait_started(pid);
	snprintf(pid_text, sizeof(pid_text), "%d", (int)pid);
	text = run_at(80, list);
	wide = run_at(80, list_wide);
	reap_within(pid, SIGKILL, 5);
	/* the maps name the file as the kernel resolved it */
	ck_assert_ptr_nonnull(realpath(top, real_top));
	assert_fits(text, 80, "list -p of a deep install");
	/* The path whole, once its continuation lines are joined back. */
	joined = strdup(text);
	ck_assert_ptr_nonnull(joined);
	for (in = out = joined; *in; in++) {
		if (in[0] == '\n' && in[1] == ' ' && in[2] == ' ')
			in += 2;
		else
			*out++ = *in;
	}
	*out = '\0';
	ck_assert_msg(strstr(joined, real_top) && strstr(joined, "/lib/liboptrace.so"), "%s", text);
	ck_assert_msg(strstr(text, "/\n  "), "not cut after a '/': %s", text);
	ck_assert_msg(strstr(text, "optrace:op_begin"), "%s", text);
	/* --wide: the path on the first line, whole */
	snprintf(line, sizeof(line), "process %d maps %s/lib/liboptrace.so", (int)pid, real_top);
	ck_assert_msg(strstr(wide, line), "%s", wide);
	free(joined);
	free(wide);
	free(text);
	free(top);
}
END_TEST

START_TEST(test_top_batch)
{
	char pid_text[16], *text;
	char *argv[] = { OPTRACE, "top", "-b", "-p", pid_text, "-d", "2", "500ms", NULL };
	char *redirected[] = { OPTRACE, "top", "-p", pid_text, "-d", "1.2", NULL };
	pid_t demo;
	int frames = 0;

	NEED_BPF();
	demo = start_demo_forever("fallback");
	snprintf(pid_text, sizeof(pid_text), "%d", demo);
	text = run_at(0, argv);
	ck_assert_msg(!strchr(text, '\033'), "an escape byte in top -b:\n%s", text);
	assert_fits(text, 80, "top -b");
	for (const char *p = text; (p = strstr(p, "optrace top - ")); p++)
		frames++;
	/* every 0.5 s for 2 s: three or four screens, as the ticks fall */
	ck_assert_msg(frames >= 3 && frames <= 4, "%d screens:\n%s", frames, text);
	ck_assert_msg(strstr(text, "every 0.5 s") && strstr(text, "demo.sort"), "%s", text);
	free(text);
	/* top >file is batch mode too */
	text = run_at(0, redirected);
	ck_assert_msg(!strchr(text, '\033') && strstr(text, "optrace top - "), "%s", text);
	free(text);
	reap_within(demo, SIGTERM, 10);
}
END_TEST

/* What top drew since the last read: at most timeout_ms of waiting. */
static void read_screen(int master, char *buffer, size_t size, size_t *length, int timeout_ms)
{
	struct pollfd input = { .fd = master, .events = POLLIN };
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		long waited;
		ssize_t got;

		clock_gettime(CLOCK_MONOTONIC, &now);
		waited = (now.tv_sec - start.tv_sec) * 1000 +
			 (now.tv_nsec - start.tv_nsec) / 1000000;
		if (waited >= timeout_ms || *length + 1 >= size)
			break;
		if (poll(&input, 1, (int)(timeout_ms - waited)) != 1)
			break;
		got = read(master, buffer + *length, size - *length - 1);
		if (got <= 0)
			break;
		*length += (size_t)got;
	}
	buffer[*length] = '\0';
}

/* The last frame drawn: from the last cursor-home on, escapes removed. */
static char *last_frame(const char *screen)
{
	const char *home = screen, *p;
	char *frame, *out;

	while ((p = strstr(home + 1, "\033[H")))
		home = p;
	frame = malloc(strlen(home) + 1);
	ck_assert_ptr_nonnull(frame);
	out = frame;
	for (p = home; *p; p++) {
		if (*p == '\033') {
			p++;
			if (*p == '[')
				while (p[1] && !((p[1] >= 'A' && p[1] <= 'Z') ||
						 (p[1] >= 'a' && p[1] <= 'z')))
					p++;
			p++;
			continue;
		}
		if (*p != '\r')
			*out++ = *p;
	}
	*out = '\0';
	return frame;
}

/*
 * Reads what top draws until its last frame holds want (or, with absent,
 * no longer holds it), for at most timeout_s: a busy machine may take long
 * to attach, and no test assumes how long. Returns that last frame.
 */
static char *read_frame_until(int master, char *buffer, size_t size, size_t *length,
			      const char *want, bool absent, int timeout_s)
{
	char *frame = NULL;

	for (int waited_ms = 0; waited_ms <= timeout_s * 1000; waited_ms += 200) {
		bool found;

		read_screen(master, buffer, size, length, 200);
		free(frame);
		frame = last_frame(buffer);
		found = strstr(frame, want) != NULL;
		if (found != absent)
			break;
	}
	return frame;
}

START_TEST(test_top_keys_on_a_terminal)
{
	struct winsize size = { .ws_row = 24, .ws_col = 80 };
	static char screen[1 << 20];
	char pid_text[16], *frame, header[64];
	size_t length = 0;
	int master, status, rows = 0;
	pid_t demo, top;

	NEED_BPF();
	demo = start_demo_forever("fallback");
	snprintf(pid_text, sizeof(pid_text), "%d", demo);
	top = forkpty(&master, NULL, NULL, &size);
	ck_assert_int_ge(top, 0);
	if (top == 0) {
		unsetenv("COLUMNS");
		execl(OPTRACE, OPTRACE, "top", "-p", pid_text, "-d", "30", (char *)NULL);
		_exit(127);
	}
	frame = read_frame_until(master, screen, sizeof(screen), &length, "q quit", false, 120);
	ck_assert_msg(strstr(frame, "sort: time - process: all") && strstr(frame, "q quit"), "%s",
		      frame);
	assert_fits(frame, 80, "top's screen");
	for (const char *p = frame; *p; p++)
		rows += *p == '\n';
	ck_assert_msg(rows <= 23, "%d rows on a screen of 24:\n%s", rows + 1, frame);
	free(frame);

	/* s: the next sort; p: this process alone; j: a line down */
	ck_assert_int_eq(write(master, "sp", 2), 2);
	snprintf(header, sizeof(header), "sort: calls - process: %d", demo);
	frame = read_frame_until(master, screen, sizeof(screen), &length, header, false, 60);
	ck_assert_msg(strstr(frame, header), "no \"%s\" in:\n%s", header, frame);
	free(frame);
	ck_assert_int_eq(write(master, "j", 1), 1);
	frame = read_frame_until(master, screen, sizeof(screen), &length, " lines 2-", false, 60);
	ck_assert_msg(strstr(frame, " lines 2-"), "%s", frame);
	free(frame);
	ck_assert_int_eq(write(master, "\033[6~", 4), 4); /* PgDn */
	frame = read_frame_until(master, screen, sizeof(screen), &length, " lines 2-", true, 60);
	ck_assert_msg(!strstr(frame, " lines 2-"), "PgDn did not scroll:\n%s", frame);
	free(frame);

	/* q: out at once, the terminal's own screen back */
	ck_assert_int_eq(write(master, "q", 1), 1);
	read_screen(master, screen, sizeof(screen), &length, 3000);
	ck_assert_int_eq(reap_within(top, SIGTERM, 10), 0);
	ck_assert_msg(strstr(screen, "\033[?1049l"), "the normal screen was not restored");
	close(master);
	reap_within(demo, SIGTERM, 10);
	(void)status;
}
END_TEST

/* -d and intervals: fractions and units; what is refused says what is taken. */
START_TEST(test_durations)
{
	char *half[] = { OPTRACE, "stat", "-q", "-d", "500ms", "--", "sleep", "30", NULL };
	char *fraction[] = { OPTRACE, "record", "-q",	 "-d", "0.5", "-o",
			     NULL,    "--",	"sleep", "30", NULL };
	char *bad[] = { OPTRACE, "stat", "-d", "1x", "--", "true", NULL };
	char *err = test_path("err.txt"), *capture = test_path("short.capture"), *text;
	struct timespec start, end;
	double seconds;

	NEED_BPF();
	fraction[6] = capture;
	for (int i = 0; i < 2; i++) {
		clock_gettime(CLOCK_MONOTONIC, &start);
		ck_assert_int_eq(WEXITSTATUS(run_command(i ? fraction : half, NULL, NULL, 60)), 0);
		clock_gettime(CLOCK_MONOTONIC, &end);
		seconds = (double)(end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9;
		/* half a second of tracing, and the setup and teardown around it */
		ck_assert_msg(seconds >= 0.5 && seconds < 10, "%s -d: %.2f s",
			      i ? "record" : "stat", seconds);
	}
	ck_assert_int_eq(WEXITSTATUS(run_command(bad, NULL, err, 30)), 2); /* usage */
	text = read_file(err);
	ck_assert_msg(strstr(text, "'1x' is not a valid duration") && strstr(text, "500ms"), "%s",
		      text);
	free(text);
	free(err);
	free(capture);
}
END_TEST

/* optrace ARGS: exit status; stderr into *err (to free). */
static int run_err(char *const argv[], char **err)
{
	char *path = test_path("stderr.txt");
	int status = run_command(argv, NULL, path, 120);

	*err = read_file(path);
	ck_assert_ptr_nonnull(*err);
	free(path);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The words of issue 25's messages, each as a user meets it. */
START_TEST(test_messages)
{
	char *capture = test_path("m.capture"), *prof = test_path("prof"), *newer, *err;
	char prof_slash[4096], said[4096], pid_text[16];
	char *quiet[] = { OPTRACE, "stat", "-q", "--", "sh", "-c", "exit 7", NULL };
	char *list[] = { OPTRACE, "list", DEMO, NULL };
	char *record[] = { OPTRACE, "record", "-o", capture,   "--",	    DEMO,
			   "-w",    "stats",  "-q", "--truth", "/dev/null", NULL };
	char *export[] = { OPTRACE, "export", "--legion", "-o", prof_slash, capture, NULL };
	char *report_newer[] = { OPTRACE, "report", NULL, NULL };
	char *report_internal[] = { OPTRACE, "report", "--internal", NULL, NULL };
	char *parent[] = { OPTRACE, "stat", "-p", pid_text, "-d", "1", NULL };
	char *copy[] = { "cp", capture, NULL, NULL };
	pid_t launcher;
	FILE *file;

	NEED_BPF();
	/* -q: the command's status is optrace's, and nothing says it */
	ck_assert_int_eq(run_err(quiet, &err), 7);
	ck_assert_msg(!strstr(err, "exited with status"), "%s", err);
	free(err);

	/* a program that uses liboptrace: its probes are in the library */
	ck_assert_int_eq(run_err(list, &err), 1);
	ck_assert_msg(strstr(err, "has no optrace probes: a runtime's probes are in liboptrace") &&
			      strstr(err, "optrace list /") && strstr(err, "-p PID"),
		      "%s", err);
	free(err);

	/* a short recording says its time, not a rate */
	ck_assert_int_eq(run_err(record, &err), 0);
	ck_assert_msg(!strstr(err, "events/s") && strstr(err, " s\n"), "%s", err);
	free(err);

	/* "prof/": no "prof//prof_*.gz" */
	snprintf(prof_slash, sizeof(prof_slash), "%s/", prof);
	ck_assert_int_eq(run_err(export, &err), 0);
	snprintf(said, sizeof(said), "legion_prof view %s/prof_*.gz\n", prof);
	ck_assert_msg(strstr(err, said) && !strstr(err, "//"), "%s", err);
	free(err);

	/* a newer capture format: the file named, the formats this one reads */
	newer = test_path("newer.capture");
	copy[2] = newer;
	ck_assert_int_eq(run_command(copy, NULL, NULL, 30), 0);
	file = fopen(newer, "r+b");
	ck_assert_ptr_nonnull(file);
	ck_assert_int_eq(fseek(file, 8, SEEK_SET), 0);
	ck_assert_int_eq(fputc(9, file), 9);
	fclose(file);
	report_newer[2] = newer;
	ck_assert_int_eq(run_err(report_newer, &err), 1);
	ck_assert_msg(strstr(err, newer) &&
			      strstr(err, "capture format 9.0 is newer than this optrace reads "
					  "(formats 1.x to 2.x): read it with a newer optrace"),
		      "%s", err);
	free(err);

	/* not a capture: the file is named */
	file = fopen(newer, "w");
	ck_assert_ptr_nonnull(file);
	fputs("# not a capture\n", file);
	fclose(file);
	ck_assert_int_eq(run_err(report_newer, &err), 1);
	snprintf(said, sizeof(said), "%s: not an optrace capture: it starts with bytes 23 20",
		 newer);
	ck_assert_msg(strstr(err, said), "%s", err);
	free(err);

	/* --internal alone shows the helpers it splits, by their call sites */
	report_internal[3] = capture;
	err = run_at(0, report_internal);
	ck_assert_msg(strstr(err, "\n  demo.") && strstr(err, "@ "), "%s", err);
	free(err);

	/* a launcher's children are named when it ran nothing itself */
	launcher = fork();
	ck_assert_int_ge(launcher, 0);
	if (launcher == 0) {
		execl(DEMO, DEMO, "--forever", "--procs", "2", "-w", "stats", "-q", "--truth",
		      "/dev/null", (char *)NULL);
		_exit(127);
	}
	usleep(700 * 1000);
	snprintf(pid_text, sizeof(pid_text), "%d", launcher);
	ck_assert_int_eq(run_err(parent, &err), 0);
	snprintf(said, sizeof(said),
		 "process %d ran no operations, but 2 of its children map "
		 "liboptrace: trace them with -p ",
		 launcher);
	ck_assert_msg(strstr(err, said), "%s", err);
	free(err);
	reap_within(launcher, SIGTERM, 10);
	free(newer);
	free(capture);
	free(prof);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("terminal");
	TCase *tc = tcase_create("terminal");

	setenv("OMP_WAIT_POLICY", "passive", 0);
	tcase_set_timeout(tc, 240);
	tcase_add_checked_fixture(tc, test_dir_setup, test_dir_teardown);
	tcase_add_test(tc, test_report_fits);
	tcase_add_test(tc, test_stat_fits);
	tcase_add_test(tc, test_list_long_path_fits);
	tcase_add_test(tc, test_top_batch);
	tcase_add_test(tc, test_top_keys_on_a_terminal);
	tcase_add_test(tc, test_durations);
	tcase_add_test(tc, test_messages);
	suite_add_tcase(suite, tc);
	return run_suite(suite);
}
