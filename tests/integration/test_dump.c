// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace dump on a job stuck on purpose (optrace-demo -w hang: an Arange
 * point spins on a worker while demo.sort waits for it): the exact
 * operation, its call site, its wait and the task point with its variant,
 * on a process never traced and on one traced from its start (then with
 * ages, and top marks them STUCK); on a process whose views lie, what makes sense and an end; and a
 * clear refusal where there is nothing to show.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "json_read.h"
#include "testlib.h"

#define STUCK_S 20 /* for the demo to reach its stall */
#define GRACE_S 10

static pid_t spawn(char *const argv[], const char *out_path)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (out_path && !freopen(out_path, "w", stdout))
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* The child of parent named optrace-demo, within seconds; 0 if none. */
static pid_t demo_child_of(pid_t parent, int seconds)
{
	for (int waited = 0; waited < seconds * 10; waited++) {
		DIR *proc = opendir("/proc");
		struct dirent *entry;
		pid_t found = 0;

		while (proc && (entry = readdir(proc)) && !found) {
			char path[300], line[512], comm[64];
			int pid = atoi(entry->d_name), ppid = 0;
			FILE *file;

			if (pid <= 0)
				continue;
			snprintf(path, sizeof(path), "/proc/%d/stat", pid);
			file = fopen(path, "r");
			if (file && fgets(line, sizeof(line), file) &&
			    sscanf(line, "%*d (%63[^)]) %*c %d", comm, &ppid) == 2 &&
			    ppid == parent && !strcmp(comm, "optrace-demo"))
				found = pid;
			if (file)
				fclose(file);
		}
		if (proc)
			closedir(proc);
		if (found)
			return found;
		usleep(100 * 1000);
	}
	return 0;
}

/* dump --json of pid, parsed; NULL if it failed. */
static struct jv *dump_json(pid_t pid)
{
	char pid_text[16], *out = test_path("dump.json"), *text;
	char *argv[] = { OPTRACE, "dump", "-p", pid_text, "--json", NULL };
	struct jv *json = NULL;
	int status;

	snprintf(pid_text, sizeof(pid_text), "%d", pid);
	status = run_command(argv, out, NULL, 30);
	text = read_file(out);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && text)
		json = jv_parse(text);
	free(text);
	free(out);
	return json;
}

static const struct jv *first_process(const struct jv *json)
{
	const struct jv *processes = jv_get(json, "processes");

	ck_assert_msg(processes && processes->count == 1, "not one process");
	return processes->items[0];
}

/* The thread whose innermost operation is demo.sort, or NULL. */
static const struct jv *sorting_thread(const struct jv *process)
{
	const struct jv *threads = jv_get(process, "threads");

	for (size_t i = 0; threads && i < threads->count; i++) {
		const struct jv *ops = jv_get(threads->items[i], "operations");

		if (ops && ops->count &&
		    !strcmp(jv_string(ops->items[ops->count - 1], "name"), "demo.sort"))
			return threads->items[i];
	}
	return NULL;
}

/* The thread running a task point, or NULL. */
static const struct jv *working_thread(const struct jv *process)
{
	const struct jv *threads = jv_get(process, "threads");

	for (size_t i = 0; threads && i < threads->count; i++) {
		const struct jv *points = jv_get(threads->items[i], "task_points");

		if (points && points->count)
			return threads->items[i];
	}
	return NULL;
}

/* Polls dump until pid shows its stall (both threads); the dump then, the caller's to free. */
static struct jv *dump_when_stuck(pid_t pid)
{
	for (int waited = 0; waited < STUCK_S * 5; waited++) {
		struct jv *json = dump_json(pid);

		if (json && sorting_thread(first_process(json)) &&
		    working_thread(first_process(json)))
			return json;
		jv_free(json);
		usleep(200 * 1000);
	}
	ck_abort_msg("optrace dump never showed the demo's stall within %d s", STUCK_S);
	return NULL;
}

/* The line of examples/demo/workloads.c that callsite names ("FILE:LINE"). */
static void assert_call_site(const char *callsite, const char *code)
{
	const char *colon = strrchr(callsite, ':');
	char *source = read_file(OPTRACE_SOURCE_DIR "/examples/demo/workloads.c"), *line;
	int number = colon ? atoi(colon + 1) : 0;

	ck_assert_msg(colon && strstr(callsite, "workloads.c"), "call site %s", callsite);
	ck_assert_ptr_nonnull(source);
	line = source;
	for (int i = 1; i < number && line; i++) {
		line = strchr(line, '\n');
		line = line ? line + 1 : NULL;
	}
	ck_assert_msg(line && strstr(line, code) && strstr(line, code) < strchr(line, '\n'),
		      "%s is not the line with %s", callsite, code);
	free(source);
}

/*
 * What the stall must look like: demo.sort open at its call site, a fallback,
 * waiting for an inline map; an Arange point running as the CPU variant.
 * traced: with ages (and the task's name).
 */
static void assert_stall(const struct jv *process, bool traced)
{
	const struct jv *sorting = sorting_thread(process), *working = working_thread(process);
	const struct jv *ops = jv_get(sorting, "operations");
	const struct jv *op = ops->items[ops->count - 1];
	const struct jv *wait = jv_get(sorting, "wait");
	const struct jv *point = jv_get(working, "task_points")->items[0];

	ck_assert_uint_eq(ops->count, 1); /* the user's call, no helper open */
	assert_call_site(jv_string(op, "callsite"), "demo_sort(head)");
	ck_assert_str_eq(jv_string(op, "mode"), "fallback");
	ck_assert_ptr_nonnull(wait);
	ck_assert_str_eq(jv_string(wait, "kind"), "inline_map");
	ck_assert_str_eq(jv_string(point, "variant"), "cpu");
	ck_assert_int_ne(jv_number(working, "tid"), jv_number(sorting, "tid"));
	if (!traced) {
		ck_assert(jv_get(op, "open_seconds")->type == JV_NULL);
		ck_assert(jv_get(wait, "seconds")->type == JV_NULL);
		ck_assert(jv_get(point, "running_seconds")->type == JV_NULL);
		/* named though launched untraced; its id known to no tracer (issue 43) */
		ck_assert_str_eq(jv_string(point, "name"), "Arange");
		ck_assert(jv_get(point, "task")->type == JV_NULL);
		/* no age known: no oldest either, not 0 (issue 43) */
		ck_assert(jv_get(jv_get(process, "oldest_open_seconds"), "operation")->type ==
			  JV_NULL);
		ck_assert(jv_get(jv_get(process, "oldest_open_seconds"), "task_point")->type ==
			  JV_NULL);
		return;
	}
	ck_assert_str_eq(jv_string(point, "name"), "Arange");
	ck_assert_msg(jv_number(op, "open_seconds") > 0 && jv_number(op, "open_seconds") < 600,
		      "open %g s", jv_number(op, "open_seconds"));
	ck_assert(jv_number(wait, "seconds") > 0);
	ck_assert(jv_number(point, "running_seconds") > 0);
	ck_assert(jv_number(jv_get(process, "oldest_open_seconds"), "operation") >=
		  jv_number(op, "open_seconds"));
	ck_assert(jv_number(jv_get(process, "oldest_open_seconds"), "task_point") > 0);
}

/* A copy of optrace that any user may run: the suite's folder may be root's alone. */
static void copy_executable(const char *from, const char *to)
{
	char buffer[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	ssize_t got;

	ck_assert_int_ge(in, 0);
	ck_assert_int_ge(out, 0);
	while ((got = read(in, buffer, sizeof(buffer))) > 0)
		ck_assert_int_eq(write(out, buffer, (size_t)got), got);
	close(in);
	close(out);
}

/* dump -a as a user who can read no runtime: says so and fails, not silence (issue 43). */
START_TEST(test_dump_all_as_another_user)
{
	char folder[] = "/tmp/optrace-dump-user.XXXXXX", program[64], *err = test_path("user.err");
	char *text;
	pid_t demo, child;
	int status, err_fd;

	NEED_BPF();
	ck_assert_ptr_nonnull(mkdtemp(folder));
	ck_assert_int_eq(chmod(folder, 0755), 0);
	snprintf(program, sizeof(program), "%s/optrace", folder);
	copy_executable(OPTRACE, program);
	demo = start_demo_forever("stats"); /* root's: not the user's to read */
	err_fd = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ck_assert_int_ge(err_fd, 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		if (dup2(err_fd, STDERR_FILENO) < 0 || setgroups(0, NULL) || setgid(65534) ||
		    setuid(65534))
			_exit(126);
		execl(program, "optrace", "dump", "-a", (char *)NULL);
		_exit(127);
	}
	close(err_fd);
	status = reap_within(child, 0, 60);
	reap_within(demo, SIGTERM, 10);
	text = read_file(err);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status %d: %s", status, text);
	ck_assert_msg(strstr(text, "as root"), "%s", text);
	free(text);
	free(err);
	unlink(program);
	rmdir(folder);
}
END_TEST

/* kill PID ends a stalled demo: SIGTERM lets its stalled point go on (issue 43). */
START_TEST(test_hang_ends_on_sigterm)
{
	char *truth = test_path("truth.txt");
	char *demo_argv[] = { DEMO, "-w", "hang", "--forever", "-q", "--truth", truth, NULL };
	pid_t demo = spawn(demo_argv, NULL);
	int status;

	jv_free(dump_when_stuck(demo));
	kill(demo, SIGTERM);
	status = reap_within(demo, 0, 60);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the demo: status %d", status);
	free(truth);
}
END_TEST

START_TEST(test_dump_stuck_process_never_traced)
{
	char *truth = test_path("truth.txt"), *out = test_path("dump.txt"), pid_text[16], *text;
	char *demo_argv[] = { DEMO, "-w", "hang", "-q", "--truth", truth, NULL };
	char *text_argv[] = { OPTRACE, "dump", "-p", pid_text, NULL };
	char *all_argv[] = { OPTRACE, "dump", "-a", NULL };
	pid_t demo = spawn(demo_argv, NULL);
	struct jv *json;
	int status;

	json = dump_when_stuck(demo);
	assert_stall(first_process(json), false);
	jv_free(json);
	snprintf(pid_text, sizeof(pid_text), "%d", demo);
	ck_assert_int_eq(run_command(text_argv, out, NULL, 30), 0);
	text = squeeze_spaces(read_file(out));
	ck_assert_msg(strstr(text, "demo.sort @ ") && strstr(text, "waiting for inline_map") &&
			      /* the first point to begin stalls: 0 or 1, as the workers go */
			      (strstr(text, "task Arange point 0 on cpu processor") ||
			       strstr(text, "task Arange point 1 on cpu processor")) &&
			      strstr(text, ": fallback, ") && !strstr(text, "fallback:fallback") &&
			      strstr(text, "not traced when it began"),
		      "%s", text);
	free(text);
	/* -a finds it too */
	ck_assert_int_eq(run_command(all_argv, out, NULL, 30), 0);
	text = read_file(out);
	snprintf(pid_text, sizeof(pid_text), "process %d ", demo);
	ck_assert_msg(strstr(text, pid_text), "%s", text);
	free(text);
	/* released, it goes on and ends well */
	kill(demo, SIGUSR1);
	status = reap_within(demo, 0, 60);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the demo: status %d", status);
	free(truth);
	free(out);
}
END_TEST

START_TEST(test_dump_stuck_process_traced)
{
	char *truth_path = test_path("truth.txt"), *stat_path = test_path("stat.json");
	char *stat_argv[] = { OPTRACE, "stat", "-q",   "--json", "-o",	    stat_path,	"--",
			      DEMO,    "-w",   "hang", "-q",	 "--truth", truth_path, NULL };
	char *top_path = test_path("top.txt"), pid_text[16], *text;
	char *top_argv[] = { OPTRACE,	"top",	 "-b", "-p", pid_text,
			     "--stuck", "500ms", "-d", "2",  NULL };
	struct counts truth = { 0 }, traced = { 0 };
	char message[4096];
	struct jv *json;
	pid_t tracer, demo;
	int status, processes = 0;

	NEED_BPF();
	tracer = spawn(stat_argv, NULL);
	demo = demo_child_of(tracer, 30);
	ck_assert_msg(demo > 0, "no demo under optrace stat");
	json = dump_when_stuck(demo);
	assert_stall(first_process(json), true);
	jv_free(json);
	/* top marks what is open longer than --stuck, in a screen with no rows */
	snprintf(pid_text, sizeof(pid_text), "%d", demo);
	ck_assert_int_eq(run_command(top_argv, top_path, NULL, 30), 0);
	text = read_file(top_path);
	ck_assert_msg(text && strstr(text, "STUCK") && strstr(text, " demo.sort @ ") &&
			      strstr(text, " task Arange point "),
		      "%s", text ? text : "");
	free(text);
	/* the counts of a job that was stuck are still exact */
	kill(demo, SIGUSR1);
	status = reap_within(tracer, 0, 60);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "optrace stat: status %d",
		      status);
	ck_assert_int_eq(truth_parse(truth_path, &truth), 1);
	stat_json_counts(stat_path, 0, &traced, &processes);
	ck_assert_int_eq(processes, 1);
	ck_assert_msg(counts_diff(&truth, &traced, message, sizeof(message)) == 0, "%s", message);
	counts_free(&truth);
	counts_free(&traced);
	free(truth_path);
	free(stat_path);
	free(top_path);
}
END_TEST

/* Views that lie (tests/fixtures/hostile_views.c): what makes sense, said, and an end. */
START_TEST(test_dump_hostile_views)
{
	char *fixture_argv[] = { OPTRACE_BUILD_DIR "/tests/hostile_views", NULL };
	char *ready = test_path("ready.txt"), *out = test_path("dump.txt"), pid_text[16], *text;
	char *text_argv[] = { OPTRACE, "dump", "-p", pid_text, NULL };
	const struct jv *process, *thread, *ops;
	struct jv *json = NULL;
	pid_t liar = spawn(fixture_argv, ready);

	for (int waited = 0; waited < 100; waited++) {
		text = read_file(ready);
		if (text && strstr(text, "ready")) {
			free(text);
			break;
		}
		free(text);
		usleep(100 * 1000);
	}
	snprintf(pid_text, sizeof(pid_text), "%d", liar);
	ck_assert_int_eq(run_command(text_argv, out, NULL, 10), 0);
	text = read_file(out);
	ck_assert_ptr_nonnull(text);
	ck_assert_msg(!strchr(text, '\033') && !strchr(text, '\a'), "escapes printed:\n%s", text);
	ck_assert_msg(strstr(text, "(unreadable)") && strstr(text, "made no sense"), "%s", text);
	free(text);
	json = dump_json(liar);
	ck_assert_msg(json, "dump --json of the liar failed or is not JSON");
	process = first_process(json);
	ck_assert_int_eq(jv_number(process, "rejected_views"), 2); /* too deep, and the loop */
	ck_assert_uint_eq(jv_get(process, "threads")->count, 1);
	thread = jv_get(process, "threads")->items[0];
	ops = jv_get(thread, "operations");
	ck_assert_uint_eq(ops->count, 4);
	ck_assert_str_eq(jv_string(ops->items[0], "name"), "(unreadable)");
	ck_assert_uint_eq(strlen(jv_string(ops->items[1], "name")), 255); /* cut, with "..." */
	ck_assert_str_eq(jv_string(ops->items[2], "mode"), "unknown");
	ck_assert(jv_get(ops->items[2], "open_seconds")->type == JV_NULL); /* in the future */
	ck_assert_uint_eq(jv_get(thread, "task_points")->count, 1);
	ck_assert_str_eq(jv_string(jv_get(thread, "task_points")->items[0], "variant"), "unknown");
	ck_assert_str_eq(jv_string(jv_get(thread, "wait"), "kind"), "unknown");
	jv_free(json);
	reap_within(liar, SIGTERM, GRACE_S);
	free(ready);
	free(out);
}
END_TEST

/* Nothing to show: said, with what to do, and a failure status. */
START_TEST(test_dump_refuses_clearly)
{
	char *err = test_path("err.txt"), pid_text[16], *text;
	char *argv[] = { OPTRACE, "dump", "-p", pid_text, NULL };
	char *sleeper_argv[] = { "/bin/sleep", "30", NULL };
	pid_t sleeper = spawn(sleeper_argv, NULL);

	usleep(200 * 1000);
	snprintf(pid_text, sizeof(pid_text), "%d", sleeper);
	ck_assert_int_eq(WEXITSTATUS(run_command(argv, NULL, err, 10)), 1);
	text = read_file(err);
	ck_assert_msg(text && strstr(text, "does not map liboptrace"), "%s", text);
	free(text);
	reap_within(sleeper, SIGTERM, GRACE_S);
	/* gone by now */
	ck_assert_int_eq(WEXITSTATUS(run_command(argv, NULL, err, 10)), 1);
	text = read_file(err);
	ck_assert_msg(text && strstr(text, "no process"), "%s", text);
	free(text);
	free(err);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("dump");
	TCase *tc = tcase_create("dump");

	tcase_set_timeout(tc, 240);
	tcase_add_checked_fixture(tc, test_dir_setup, test_dir_teardown);
	tcase_add_test(tc, test_dump_stuck_process_never_traced);
	tcase_add_test(tc, test_hang_ends_on_sigterm);
	tcase_add_test(tc, test_dump_all_as_another_user);
	tcase_add_test(tc, test_dump_stuck_process_traced);
	tcase_add_test(tc, test_dump_hostile_views);
	tcase_add_test(tc, test_dump_refuses_clearly);
	suite_add_tcase(suite, tc);
	return run_suite(suite);
}
