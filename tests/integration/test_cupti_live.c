// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `optrace record --cuda -p PID` loads the GPU collector into a process
 * that runs already (userspace/trace/inject.c), over the fake CUPTI of
 * tests/fixtures/ (see test_cupti_e2e.c): cuda_app --pause, started without
 * CUDA_INJECTION64_PATH, is blocked in a read() system call with known
 * vector registers while real-time signals rain on it; the load must leave
 * the read to restart, the registers as they were and every signal
 * delivered, and every kernel it launches afterwards must be in the capture,
 * attributed as its truth says; once optrace left, the collector is dormant.
 * Then the refusals, each said and the process left running: a process
 * without CUDA, one in seccomp mode, a statically linked one, one traced by
 * another, a stopped one (within seconds, left stopped), one whose CUPTI
 * another profiler holds; and the process that has
 * the collector already, which is recorded as it is.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpu_truth.h"
#include "testlib.h"
#include "trace/inject.h"

#define CUDA_APP OPTRACE_BUILD_DIR "/tests/cuda_app"
#define FAKE_CUPTI OPTRACE_BUILD_DIR "/tests/libfakecupti.so"
#define COLLECTOR OPTRACE_BUILD_DIR "/lib/liboptrace-cupti.so"
#define WAITER OPTRACE_BUILD_DIR "/tests/waiter"
#define WAITER_STATIC OPTRACE_BUILD_DIR "/tests/waiter-static"

static void use_fake_cupti(void)
{
	ck_assert_int_eq(setenv("OPTRACE_CUPTI_PATH", FAKE_CUPTI, 1), 0);
	unsetenv("CUDA_INJECTION64_PATH");
	unsetenv("OPTRACE_GPU_FILE");
	unsetenv("CUDA_APP_LIVE");
	unsetenv("FAKE_CUPTI_TAKEN");
}

/*
 * Starts argv with stdout to /dev/null and stderr to err_path (NULL:
 * inherited); with stdin a pipe whose write end goes to *input (input not
 * NULL). It gets SIGTERM if this test process dies: nothing outlives a
 * failed test.
 */
static pid_t spawn(char *const argv[], int *input, const char *err_path)
{
	int fds[2] = { -1, -1 };
	pid_t pid;

	if (input)
		ck_assert_int_eq(pipe2(fds, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		prctl(PR_SET_PDEATHSIG, SIGTERM);
		dup2(null, STDOUT_FILENO);
		if (err_path) {
			int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

			dup2(err, STDERR_FILENO);
		}
		if (input)
			dup2(fds[0], STDIN_FILENO);
		execv(argv[0], argv);
		_exit(127);
	}
	if (input) {
		close(fds[0]);
		*input = fds[1];
	}
	return pid;
}

/* The first line of /proc/PID/FILE, or "" when it is gone. */
static void proc_line(pid_t pid, const char *file, char *line, size_t size)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, file);
	line[0] = '\0';
	f = fopen(path, "re");
	if (f) {
		if (!fgets(line, (int)size, f))
			line[0] = '\0';
		fclose(f);
	}
}

/* Alive and not a zombie (a child of ours that ended is one until reaped). */
static bool running(pid_t pid)
{
	char line[512], *paren;

	proc_line(pid, "stat", line, sizeof(line));
	paren = strrchr(line, ')');
	return paren && paren[1] == ' ' && paren[2] != 'Z' && paren[2] != 'X';
}

/* Waits until thread pid sits in system call nr (read: 0), or 10 s. */
static void wait_in_syscall(pid_t pid, long nr)
{
	char line[256];
	long now = -1;

	for (int waited = 0; waited < 1000; waited++) {
		proc_line(pid, "syscall", line, sizeof(line));
		if (sscanf(line, "%ld", &now) == 1 && now == nr)
			return;
		usleep(10 * 1000);
	}
	ck_abort_msg("process %d never blocked in system call %ld (at %s)", pid, nr, line);
}

static bool maps_collector(pid_t pid)
{
	char path[64], *text;
	bool found;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	text = read_file(path);
	found = text && strstr(text, "/liboptrace-cupti.so");
	free(text);
	return found;
}

/* The process still runs; a byte on its stdin ends it with status 0. */
static void check_left_running(pid_t pid, int input, char word)
{
	int status;

	ck_assert_msg(running(pid), "process %d did not survive", pid);
	ck_assert_msg(!maps_collector(pid), "process %d was left with the collector", pid);
	ck_assert_int_eq(write(input, &word, 1), 1);
	close(input);
	status = reap_within(pid, 0, 30);
	ck_assert_msg(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "process %d ended with status %#x", pid, status);
}

/* record --cuda -p pid, which must refuse, saying what; no capture is left. */
static void check_refused(pid_t pid, const char *expected)
{
	char *capture = test_path("refused.capture"), *err_path = test_path("record.err");
	char pid_text[16], *text;
	char *record[] = { OPTRACE, "record", "-q", "--cuda", "-o", capture, "-p", pid_text, NULL };
	int status;

	snprintf(pid_text, sizeof(pid_text), "%d", pid);
	status = run_command(record, NULL, err_path, 60);
	text = read_file(err_path);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 1, "record: %#x: %s", status,
		      text);
	ck_assert_msg(text && strstr(text, expected), "record said: %s (expected \"%s\")",
		      text ? text : "", expected);
	ck_assert_msg(access(capture, F_OK) && errno == ENOENT, "a refused record left %s",
		      capture);
	free(text);
	free(capture);
	free(err_path);
}

START_TEST(test_live_load)
{
	char *capture = test_path("live.capture"), *truth = test_path("truth.txt");
	char *json_path = test_path("report.json"), *err_path = test_path("record.err");
	char pid_text[16], *text;
	char *app[] = { CUDA_APP, "--pause", truth, NULL };
	char *record[] = { OPTRACE, "record", "--cuda", "-o", capture, "-p", pid_text, NULL };
	char *report_json[] = { OPTRACE, "report", "--json", capture, NULL };
	union sigval value = { .sival_int = 7 };
	pid_t app_pid, optrace_pid;
	int input, status, sent = 0;
	struct jv *report;

	NEED_BPF();
	use_fake_cupti();
	app_pid = spawn(app, &input, NULL);
	wait_in_syscall(app_pid, 0);
	snprintf(pid_text, sizeof(pid_text), "%d", app_pid);
	optrace_pid = spawn(record, NULL, err_path);
	/* Signals all along the load: each must reach the application once. */
	for (int i = 0; i < 30 * 1000 * 10; i++) {
		if (i % 20 == 0 && maps_collector(app_pid))
			break;
		if (!sigqueue(app_pid, SIGRTMIN + 1, value))
			sent++;
		usleep(100);
	}
	ck_assert_msg(maps_collector(app_pid), "the collector never came into process %d", app_pid);
	ck_assert_int_eq(write(input, "g", 1), 1);
	close(input);
	/* The truth is written right after the last launch. */
	for (int waited = 0; access(truth, F_OK) && waited < 3000; waited++)
		usleep(10 * 1000);
	ck_assert_msg(!access(truth, F_OK), "cuda_app never saw the tracer");
	usleep(100 * 1000);
	ck_assert_int_ne(status = reap_within(optrace_pid, SIGINT, 30), -1);
	text = read_file(err_path);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "optrace record: %#x: %s",
		      status, text);
	ck_assert_msg(text && strstr(text, "Loaded liboptrace-cupti into process"), "%s", text);
	free(text);
	status = reap_within(app_pid, 0, 30);
	ck_assert_msg(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "cuda_app: %#x (3: its read failed, 4: its vector registers changed)",
		      status);

	/* Everything launched after the load, armed, is in the capture and attributed. */
	ck_assert_int_eq(gpu_truth_value(truth, "recorded"), 6);
	ck_assert_int_eq(run_command(report_json, json_path, NULL, 60), 0);
	report = read_json_file(json_path);
	check_gpu_truth(truth, jv_get(report, "gpu"));
	jv_free(report);
	/* optrace gone, the collector went dormant: a launch then is not recorded. */
	ck_assert_int_eq(gpu_truth_value(truth, "after_detach"), 0);
	ck_assert_int_eq(gpu_truth_value(truth, "signals"), sent);
	free(capture);
	free(truth);
	free(json_path);
	free(err_path);
}
END_TEST

/* stat --cuda -p loads the collector as record does, and counts the GPU time in the kernel. */
START_TEST(test_stat_live_load)
{
	char *truth = test_path("truth.txt"), *stat_path = test_path("stat.json");
	char *err_path = test_path("stat.err"), pid_text[16], *text;
	char *app[] = { CUDA_APP, "--pause", truth, NULL };
	char *stat[] = {
		OPTRACE, "stat", "--json", "--cuda", "-o", stat_path, "-p", pid_text, NULL
	};
	const struct jv *processes;
	pid_t app_pid, optrace_pid;
	struct jv *doc;
	int input, status;

	NEED_BPF();
	use_fake_cupti();
	app_pid = spawn(app, &input, NULL);
	wait_in_syscall(app_pid, 0);
	snprintf(pid_text, sizeof(pid_text), "%d", app_pid);
	optrace_pid = spawn(stat, NULL, err_path);
	for (int waited = 0; !maps_collector(app_pid) && waited < 3000; waited++)
		usleep(10 * 1000);
	ck_assert_msg(maps_collector(app_pid), "the collector never came into process %d", app_pid);
	ck_assert_int_eq(write(input, "g", 1), 1);
	close(input);
	for (int waited = 0; access(truth, F_OK) && waited < 3000; waited++)
		usleep(10 * 1000);
	ck_assert_msg(!access(truth, F_OK), "cuda_app never saw the tracer");
	usleep(100 * 1000);
	/* stat waits for the collector's next flush, then prints. */
	ck_assert_int_ne(status = reap_within(optrace_pid, SIGINT, 30), -1);
	text = read_file(err_path);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "optrace stat: %#x: %s",
		      status, text);
	free(text);
	status = reap_within(app_pid, 0, 30);
	ck_assert_msg(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "cuda_app: %#x", status);
	ck_assert_int_eq(gpu_truth_value(truth, "recorded"), 6);
	doc = read_json_file(stat_path);
	processes = jv_get(doc, "processes");
	ck_assert_msg(processes && processes->count == 1, "stat: one process");
	check_gpu_truth(truth, jv_get(processes->items[0], "gpu"));
	jv_free(doc);
	free(truth);
	free(stat_path);
	free(err_path);
}
END_TEST

/* A process with the collector already (CUDA_INJECTION64_PATH): recorded as it is. */
START_TEST(test_goes_on_when_there)
{
	char *capture = test_path("there.capture"), *truth = test_path("truth.txt");
	char *json_path = test_path("report.json"), pid_text[16];
	char *app[] = { CUDA_APP, truth, NULL };
	char *record[] = { OPTRACE, "record", "-q", "--cuda", "-o", capture, "-p", pid_text, NULL };
	char *report_json[] = { OPTRACE, "report", "--json", capture, NULL };
	pid_t app_pid, optrace_pid;
	struct jv *report;
	int status;

	NEED_BPF();
	use_fake_cupti();
	ck_assert_int_eq(setenv("CUDA_INJECTION64_PATH", COLLECTOR, 1), 0);
	ck_assert_int_eq(setenv("CUDA_APP_LIVE", "1", 1), 0);
	app_pid = spawn(app, NULL, NULL);
	unsetenv("CUDA_INJECTION64_PATH");
	unsetenv("CUDA_APP_LIVE");
	for (int waited = 0; !maps_collector(app_pid) && waited < 1000; waited++)
		usleep(10 * 1000);
	snprintf(pid_text, sizeof(pid_text), "%d", app_pid);
	optrace_pid = spawn(record, NULL, NULL);
	for (int waited = 0; access(truth, F_OK) && waited < 3000; waited++)
		usleep(10 * 1000);
	ck_assert_msg(!access(truth, F_OK), "cuda_app never saw the tracer");
	ck_assert_int_ne(status = reap_within(optrace_pid, SIGINT, 30), -1);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "optrace record: %#x", status);
	status = reap_within(app_pid, 0, 30);
	ck_assert_msg(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "cuda_app: %#x", status);
	ck_assert_int_eq(gpu_truth_value(truth, "recorded"), 6);
	ck_assert_int_eq(run_command(report_json, json_path, NULL, 60), 0);
	report = read_json_file(json_path);
	check_gpu_truth(truth, jv_get(report, "gpu"));
	jv_free(report);
	free(capture);
	free(truth);
	free(json_path);
}
END_TEST

/* Not a CUDA process: the demo runtime, which maps liboptrace but no CUDA library. */
START_TEST(test_refuses_no_cuda)
{
	char *demo[] = { DEMO,	  "--forever", "--pause", "5",	"--workload",
			 "stats", "--size",    "20000",	  "-q", NULL };
	pid_t pid;
	int status;

	NEED_BPF();
	pid = spawn(demo, NULL, NULL);
	usleep(300 * 1000); /* it maps liboptrace and runs */
	check_refused(pid, "does not use CUDA");
	ck_assert_msg(running(pid), "the demo did not survive");
	ck_assert_msg(!maps_collector(pid), "the demo was left with the collector");
	status = reap_within(pid, SIGTERM, 30);
	ck_assert_msg(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0, "demo: %#x",
		      status);
}
END_TEST

START_TEST(test_refuses_seccomp)
{
	char *waiter[] = { WAITER, "--seccomp", NULL };
	int input;
	pid_t pid;

	NEED_BPF();
	pid = spawn(waiter, &input, NULL);
	wait_in_syscall(pid, 0);
	check_refused(pid, "seccomp filter mode");
	check_left_running(pid, input, 'x');
}
END_TEST

START_TEST(test_refuses_static)
{
	char *waiter[] = { WAITER_STATIC, NULL };
	int input;
	pid_t pid;

	NEED_BPF();
	pid = spawn(waiter, &input, NULL);
	wait_in_syscall(pid, 0);
	check_refused(pid, "is statically linked");
	check_left_running(pid, input, 'x');
}
END_TEST

/* Traced by another (this test, as a debugger would): one tracer at a time. */
START_TEST(test_refuses_traced)
{
	char *waiter[] = { WAITER, NULL };
	int input;
	pid_t pid;

	NEED_BPF();
	pid = spawn(waiter, &input, NULL);
	wait_in_syscall(pid, 0);
	ck_assert_int_eq(ptrace(PTRACE_SEIZE, pid, NULL, NULL), 0);
	check_refused(pid, "is traced by process");
	check_left_running(pid, input, 'x');
}
END_TEST

/* Waits until process pid's state (/proc/PID/stat) is state, or 10 s. */
static void wait_state(pid_t pid, char state)
{
	char line[512], *paren = NULL;

	for (int waited = 0; waited < 1000; waited++) {
		proc_line(pid, "stat", line, sizeof(line));
		paren = strrchr(line, ')');
		if (paren && paren[1] == ' ' && paren[2] == state)
			return;
		usleep(10 * 1000);
	}
	ck_abort_msg("process %d never reached state %c (%s)", pid, state, line);
}

static double seconds_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

/*
 * A stopped target (SIGSTOP, as Ctrl-Z would), issue 41: record --cuda -p
 * and the loader itself return within seconds, say which process and what
 * to do, and leave it stopped as it was; continued, it runs on.
 */
START_TEST(test_refuses_stopped)
{
	static const struct inject_request request = {
		.library = COLLECTOR,
		.init = "InitializeInjection",
	};
	char *waiter[] = { WAITER, NULL };
	char why[INJECT_WHY_SIZE], expected[96];
	struct timespec start;
	int input, err;
	pid_t pid;

	NEED_BPF();
	pid = spawn(waiter, &input, NULL);
	wait_in_syscall(pid, 0);
	ck_assert_int_eq(kill(pid, SIGSTOP), 0);
	wait_state(pid, 'T');
	snprintf(expected, sizeof(expected), "process %d (waiter) is stopped", pid);
	clock_gettime(CLOCK_MONOTONIC, &start);
	check_refused(pid, expected);
	ck_assert_msg(seconds_since(&start) < 10, "record took %.1f s", seconds_since(&start));
	clock_gettime(CLOCK_MONOTONIC, &start);
	err = inject_library(pid, &request, why, sizeof(why));
	ck_assert_msg(err == -EAGAIN && strstr(why, expected) && strstr(why, "let it run first"),
		      "inject_library: %d: %s", err, why);
	ck_assert_msg(seconds_since(&start) < 5, "the loader took %.1f s", seconds_since(&start));
	ck_assert_msg(!maps_collector(pid), "process %d was left with the collector", pid);
	wait_state(pid, 'T');
	ck_assert_int_eq(kill(pid, SIGCONT), 0);
	check_left_running(pid, input, 'x');
}
END_TEST

static void on_alarm(int signo)
{
	(void)signo;
}

/*
 * A stop signal while optrace waits on a load that does not end (issue 41):
 * the loader returns at once, saying that its helper finishes alone; the
 * helper does, once the call returns, and puts the thread back. The call is
 * libc's getchar() on the waiter's own stdin, which returns when a byte
 * comes: the waiter's read then restarts, and it exits 0 at the next one.
 */
START_TEST(test_stop_signal_while_loading)
{
	static const char *const libc_names[] = { "libc.so", NULL };
	struct sigaction action = { .sa_handler = on_alarm }; /* no SA_RESTART */
	char *waiter[] = { WAITER, NULL };
	char why[INJECT_WHY_SIZE], libc[PATH_MAX];
	struct inject_request request = { .library = libc, .init = "getchar" };
	struct timespec start;
	int input, err, helper = 0;
	const char *at;
	pid_t pid;

	NEED_BPF();
	pid = spawn(waiter, &input, NULL);
	wait_in_syscall(pid, 0);
	ck_assert(inject_maps(pid, libc_names, libc, sizeof(libc)));
	ck_assert_int_eq(sigaction(SIGALRM, &action, NULL), 0);
	clock_gettime(CLOCK_MONOTONIC, &start);
	alarm(1);
	err = inject_library(pid, &request, why, sizeof(why));
	ck_assert_msg(err == -EINTR && strstr(why, "the helper finishes alone"),
		      "inject_library: %d: %s", err, why);
	ck_assert_msg(seconds_since(&start) < 3, "the stop took %.1f s", seconds_since(&start));
	at = strstr(why, "helper (process ");
	ck_assert_msg(at && sscanf(at, "helper (process %d)", &helper) == 1, "%s", why);
	ck_assert_int_eq(write(input, "a", 1), 1); /* getchar() returns */
	ck_assert_msg(reap_within(helper, 0, 30) != -1, "helper %d did not end", helper);
	check_left_running(pid, input, 'x');
}
END_TEST

/*
 * Another profiler holds CUPTI: the collector's start says so, optrace
 * shows it and unloads the collector again; the application runs on (its
 * read restarted, its registers kept: else it exits 3 or 4).
 */
START_TEST(test_refuses_cupti_taken)
{
	char *truth = test_path("truth.txt");
	char *app[] = { CUDA_APP, "--pause", truth, NULL };
	int input;
	pid_t pid;

	NEED_BPF();
	use_fake_cupti();
	ck_assert_int_eq(setenv("FAKE_CUPTI_TAKEN", "Nsight Systems", 1), 0);
	pid = spawn(app, &input, NULL);
	unsetenv("FAKE_CUPTI_TAKEN");
	wait_in_syscall(pid, 0);
	check_refused(pid, "CUPTI is taken by another profiler (CUPTI for Nsight Systems)");
	check_left_running(pid, input, 'q');
	free(truth);
}
END_TEST

/*
 * What is read of a process before it is touched, on this one: its loader's
 * dlopen, and a data symbol of a library (liboptrace's optrace_runtime),
 * where the loader itself put them.
 */
START_TEST(test_reads_the_process)
{
	static const char *const liboptrace[] = { "liboptrace.so", NULL };
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *lib = dlopen("liboptrace.so.1", RTLD_NOW | RTLD_NOLOAD);
	struct inject_loader loader;
	char path[4096], why[INJECT_WHY_SIZE];
	uint64_t address = 0;

	ck_assert_ptr_nonnull(libc);
	ck_assert_ptr_nonnull(lib);
	ck_assert_int_eq(inject_find_loader(getpid(), &loader), 0);
	ck_assert_msg(loader.dlopen == (uint64_t)(uintptr_t)dlsym(libc, "dlopen"), "%s",
		      loader.found_in);
	ck_assert_uint_eq(loader.dlclose, (uint64_t)(uintptr_t)dlsym(libc, "dlclose"));
	ck_assert(inject_maps(getpid(), liboptrace, path, sizeof(path)));
	ck_assert_int_eq(inject_symbol_address(getpid(), path, "optrace_runtime", &address), 0);
	ck_assert_uint_eq(address, (uint64_t)(uintptr_t)dlsym(lib, "optrace_runtime"));
	ck_assert_int_eq(inject_symbol_address(getpid(), path, "no_such_symbol", &address),
			 -ENOENT);
	ck_assert_int_eq(inject_check(getpid(), why, sizeof(why)), 0);
	dlclose(libc);
	dlclose(lib);
}
END_TEST

START_TEST(test_refuses_every_process)
{
	char *err_path = test_path("record.err"), *text;
	char *record[] = { OPTRACE, "record", "-q", "--cuda", "-a", "-d", "1", NULL };
	int status;

	NEED_BPF();
	status = run_command(record, NULL, err_path, 60);
	text = read_file(err_path);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 1 && text &&
			      strstr(text, "not into every process (-a)"),
		      "record: %#x: %s", status, text);
	free(text);
	free(err_path);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("cupti_live");
	TCase *tc = tcase_create("live load");

	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, test_dir_setup, test_dir_teardown);
	tcase_add_test(tc, test_live_load);
	tcase_add_test(tc, test_stat_live_load);
	tcase_add_test(tc, test_goes_on_when_there);
	tcase_add_test(tc, test_refuses_no_cuda);
	tcase_add_test(tc, test_refuses_seccomp);
	tcase_add_test(tc, test_refuses_static);
	tcase_add_test(tc, test_refuses_traced);
	tcase_add_test(tc, test_refuses_stopped);
	tcase_add_test(tc, test_stop_signal_while_loading);
	tcase_add_test(tc, test_refuses_cupti_taken);
	tcase_add_test(tc, test_refuses_every_process);
	tcase_add_test(tc, test_reads_the_process);
	suite_add_tcase(suite, tc);

	return run_suite(suite);
}
