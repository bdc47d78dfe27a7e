// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The real collector, end to end, without a GPU: cuda_app loads
 * liboptrace-cupti as the CUDA driver would, liboptrace-cupti opens
 * libfakecupti.so as it would open libcupti.so (tests/fixtures/), and the
 * kernels it "launches" travel CUPTI's way (timestamp callback, thread id
 * type, buffers, CUDA 13 layouts, the periodic and the exit flush) through
 * liboptrace's optrace_gpu probes into optrace record, whose report must
 * equal the application's truth. Built only where CUPTI's headers are.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu_truth.h"
#include "http_get.h"
#include "testlib.h"

#define CUDA_APP OPTRACE_BUILD_DIR "/tests/cuda_app"
#define FAKE_CUPTI OPTRACE_BUILD_DIR "/tests/libfakecupti.so"
#define COLLECTOR OPTRACE_BUILD_DIR "/lib/liboptrace-cupti.so"

static void use_fake_cupti(void)
{
	ck_assert_int_eq(setenv("OPTRACE_CUPTI_PATH", FAKE_CUPTI, 1), 0);
	unsetenv("CUDA_INJECTION64_PATH");
	unsetenv("OPTRACE_GPU_FILE");
}

START_TEST(test_recorded_through_bpf)
{
	char *capture = test_path("app.capture"), *truth = test_path("truth.txt");
	char *json_path = test_path("report.json"), *text_path = test_path("report.txt");
	char *record[] = { OPTRACE, "record", "-q",	"--cuda", "-o",
			   capture, "--",     CUDA_APP, truth,	  NULL };
	char *report_json[] = { OPTRACE, "report", "--json", capture, NULL };
	char *report_text[] = { OPTRACE, "report", capture, NULL };
	struct jv *report;
	char *text;

	NEED_BPF();
	use_fake_cupti();
	ck_assert_int_eq(run_command(record, NULL, NULL, 60), 0);
	ck_assert_int_eq(gpu_truth_value(truth, "recorded"), 6);
	ck_assert_int_eq(run_command(report_json, json_path, NULL, 60), 0);
	report = read_json_file(json_path);
	check_gpu_truth(truth, jv_get(report, "gpu"));
	jv_free(report);
	/* Names came through the kernel_name probe, from CUPTI's strings. */
	ck_assert_int_eq(run_command(report_text, text_path, NULL, 60), 0);
	text = read_file(text_path);
	ck_assert_msg(strstr(text, "add_kernel<float>") && strstr(text, "sum_kernel<float>") &&
			      strstr(text, "setup_kernel"),
		      "%s", text);
	free(text);
	free(capture);
	free(truth);
	free(json_path);
	free(text_path);
}
END_TEST

static pid_t spawn(char *const argv[])
{
	pid_t pid = fork();

	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDOUT_FILENO);
		execv(argv[0], argv);
		_exit(127);
	}
	ck_assert_int_gt(pid, 0);
	return pid;
}

/* cuda_app with the collector, started untraced: it waits for a tracer to come. */
static pid_t spawn_live_app(char *const argv[])
{
	pid_t pid;

	ck_assert_int_eq(setenv("CUDA_INJECTION64_PATH", COLLECTOR, 1), 0);
	ck_assert_int_eq(setenv("CUDA_APP_LIVE", "1", 1), 0);
	pid = spawn(argv);
	unsetenv("CUDA_INJECTION64_PATH");
	unsetenv("CUDA_APP_LIVE");
	usleep(300 * 1000); /* loaded, the collector dormant */
	return pid;
}

/*
 * Attached to a live CUDA process, and stopped right after its last launch:
 * the collector arms CUPTI when the tracer comes, and optrace waits for its
 * next periodic flush before it detaches, so the last launch is not lost.
 */
START_TEST(test_attach_live_and_stop)
{
	char *capture = test_path("live.capture"), *truth = test_path("truth.txt");
	char *json_path = test_path("report.json"), pid_text[16];
	char *app[] = { CUDA_APP, truth, NULL };
	char *record[] = { OPTRACE, "record", "-q", "-o", capture, "-p", pid_text, NULL };
	char *report_json[] = { OPTRACE, "report", "--json", capture, NULL };
	pid_t app_pid, optrace_pid;
	struct jv *report;
	int status;

	NEED_BPF();
	use_fake_cupti();
	app_pid = spawn_live_app(app);
	snprintf(pid_text, sizeof(pid_text), "%d", app_pid);
	optrace_pid = spawn(record);
	/* The truth is written right after the last launch. */
	for (int waited = 0; access(truth, F_OK) && waited < 1500; waited++)
		usleep(10 * 1000);
	ck_assert_msg(!access(truth, F_OK), "cuda_app never saw the tracer");
	ck_assert_int_ne(status = reap_within(optrace_pid, SIGINT, 30), -1);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "optrace record: %d", status);
	ck_assert_int_ne(reap_within(app_pid, 0, 30), -1);
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

/* optrace list says whether a process has the collector in it. */
START_TEST(test_list_shows_the_collector)
{
	char *truth = test_path("truth.txt"), *out = test_path("list.txt"), pid_text[16], *text;
	char *app[] = { CUDA_APP, truth, NULL };
	char *list[] = { OPTRACE, "list", "-p", pid_text, NULL };
	pid_t app_pid;

	NEED_BPF();
	use_fake_cupti();
	app_pid = spawn_live_app(app);
	snprintf(pid_text, sizeof(pid_text), "%d", app_pid);
	ck_assert_int_eq(run_command(list, out, NULL, 30), 0);
	kill(app_pid, SIGKILL);
	reap_within(app_pid, 0, 30);
	text = read_file(out);
	ck_assert_msg(strstr(text, "GPU collector: ") && strstr(text, "/liboptrace-cupti.so") &&
			      strstr(text, "optrace_gpu:kernel "),
		      "%s", text);
	free(text);
	free(truth);
	free(out);
}
END_TEST

/* No tracer, no file: CUPTI's activity is never turned on. */
START_TEST(test_dormant_without_a_tracer)
{
	char *truth = test_path("truth.txt");
	char *run[] = { CUDA_APP, truth, NULL };

	use_fake_cupti();
	ck_assert_int_eq(setenv("CUDA_INJECTION64_PATH", COLLECTOR, 1), 0);
	ck_assert_int_eq(run_command(run, NULL, NULL, 60), 0);
	ck_assert_int_eq(gpu_truth_value(truth, "recorded"), 0);
	unsetenv("CUDA_INJECTION64_PATH");
	free(truth);
}
END_TEST

/* optrace stat does not arm the GPU probes: CUPTI stays off under it. */
START_TEST(test_stat_leaves_cupti_off)
{
	char *truth = test_path("truth.txt");
	char *stat[] = { OPTRACE, "stat", "--json", "--", CUDA_APP, truth, NULL };

	NEED_BPF();
	use_fake_cupti();
	ck_assert_int_eq(setenv("CUDA_INJECTION64_PATH", COLLECTOR, 1), 0);
	ck_assert_int_eq(run_command(stat, NULL, NULL, 60), 0);
	unsetenv("CUDA_INJECTION64_PATH");
	ck_assert_int_eq(gpu_truth_value(truth, "recorded"), 0);
	free(truth);
}
END_TEST

/* Every GPU row of report's: the same row in stat's, with the same numbers. */
static void check_same_gpu_rows(const struct jv *stat_gpu, const struct jv *report_gpu)
{
	static const char *const numbers[] = { "kernels", "copies", "memsets",
					       "gpu_ns",  "max_ns", "bytes" };
	const struct jv *stat_ops = jv_get(stat_gpu, "ops"),
			*report_ops = jv_get(report_gpu, "ops");

	ck_assert_ptr_nonnull(stat_ops);
	ck_assert_ptr_nonnull(report_ops);
	ck_assert_uint_eq(stat_ops->count, report_ops->count);
	for (size_t i = 0; i < report_ops->count; i++) {
		const struct jv *want = report_ops->items[i], *got = NULL;

		for (size_t j = 0; j < stat_ops->count && !got; j++) {
			if (!strcmp(jv_string(stat_ops->items[j], "op"), jv_string(want, "op")) &&
			    !strcmp(jv_string(stat_ops->items[j], "variant"),
				    jv_string(want, "variant")))
				got = stat_ops->items[j];
		}
		ck_assert_msg(got, "stat has no GPU row for %s [%s]", jv_string(want, "op"),
			      jv_string(want, "variant"));
		for (size_t k = 0; k < sizeof(numbers) / sizeof(numbers[0]); k++)
			ck_assert_msg(jv_number(got, numbers[k]) == jv_number(want, numbers[k]),
				      "%s [%s] %s: stat %.0f, report %.0f", jv_string(want, "op"),
				      jv_string(want, "variant"), numbers[k],
				      jv_number(got, numbers[k]), jv_number(want, numbers[k]));
	}
	for (size_t k = 0; k < 3; k++) {
		static const char *const totals[] = { "in_ops", "outside", "unlaunched" };

		ck_assert_int_eq((long)jv_number(stat_gpu, totals[k]),
				 (long)jv_number(report_gpu, totals[k]));
	}
}

/*
 * stat --cuda attributes in the kernel what report attributes from a
 * capture: per operation and variant, the same kernels and device time, on
 * the fast path (launches in the batches) and one probe hit per event.
 */
START_TEST(test_stat_equals_report)
{
	char *capture = test_path("app.capture"), *truth = test_path("truth.txt");
	char *json_path = test_path("report.json"), *stat_path = test_path("stat.json");
	char *record[] = { OPTRACE, "record", "-q",	"--cuda", "-o",
			   capture, "--",     CUDA_APP, truth,	  NULL };
	char *report_json[] = { OPTRACE, "report", "--json", capture, NULL };
	char *stat[] = { OPTRACE, "stat",   "--json", "--cuda", "-o", stat_path,
			 "--",	  CUDA_APP, truth,    NULL,	NULL };
	const char *path_flag[] = { NULL, "--per-event" };
	struct jv *report, *stat_json;
	const struct jv *processes;

	NEED_BPF();
	use_fake_cupti();
	ck_assert_int_eq(run_command(record, NULL, NULL, 60), 0);
	ck_assert_int_eq(run_command(report_json, json_path, NULL, 60), 0);
	report = read_json_file(json_path);
	if (path_flag[_i]) {
		/* optrace stat --per-event --json --cuda -o FILE -- app truth */
		memmove(&stat[3], &stat[2], 7 * sizeof(stat[0]));
		stat[2] = (char *)path_flag[_i];
	}
	ck_assert_int_eq(run_command(stat, NULL, NULL, 60), 0);
	ck_assert_int_eq(gpu_truth_value(truth, "recorded"), 6);
	stat_json = read_json_file(stat_path);
	processes = jv_get(stat_json, "processes");
	ck_assert_msg(processes && processes->count == 1, "stat: one process");
	check_gpu_truth(truth, jv_get(processes->items[0], "gpu"));
	check_same_gpu_rows(jv_get(processes->items[0], "gpu"), jv_get(report, "gpu"));
	jv_free(stat_json);
	jv_free(report);
	free(capture);
	free(truth);
	free(json_path);
	free(stat_path);
}
END_TEST

/* The value of the series whose line starts with prefix in a scrape, or -1. */
static double series_value(const char *text, const char *prefix)
{
	for (const char *line = text; line && *line; line = strchr(line, '\n')) {
		if (*line == '\n')
			line++;
		if (!strncmp(line, prefix, strlen(prefix)))
			return strtod(line + strlen(prefix), NULL);
	}
	return -1;
}

/*
 * serve --cuda (every process, -a: the collector is loaded into none, and
 * the application has it): its GPU kernels per operation and variant,
 * counted in the kernel, as Prometheus scrapes them.
 */
START_TEST(test_serve_gpu_series)
{
	char *truth = test_path("truth.txt"), listen[32], prefix[256], *text = NULL;
	char *app[] = { CUDA_APP, truth, NULL };
	char *serve[] = { OPTRACE, "serve", "-q", "--cuda", "--listen", listen, NULL };
	static const struct {
		const char *root, *variant;
		double kernels;
	} want[] = { { "cu.add", "gpu", 4 },
		     { "cu.sum", "-", 1 },
		     { "(launched outside any operation)", "-", 1 } };
	pid_t app_pid, serve_pid;
	int port = free_port(), status = -1;

	NEED_BPF();
	use_fake_cupti();
	app_pid = spawn_live_app(app);
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	serve_pid = spawn(serve);
	for (int waited = 0; access(truth, F_OK) && waited < 1500; waited++)
		usleep(10 * 1000);
	ck_assert_msg(!access(truth, F_OK), "cuda_app never saw the tracer");
	/* The collector flushes every second, and the rest at the application's exit. */
	for (int tries = 0; tries < 60; tries++) {
		size_t found = 0;

		free(text);
		text = NULL;
		usleep(250 * 1000);
		status = http_get(port, "/metrics", &text);
		for (size_t i = 0; status == 200 && text && i < sizeof(want) / sizeof(want[0]);
		     i++) {
			snprintf(prefix, sizeof(prefix),
				 "optrace_gpu_kernels_total{command=\"cuda_app\",pid=\"%d\","
				 "rank=\"0\",root=\"%s\",variant=\"%s\"} ",
				 app_pid, want[i].root, want[i].variant);
			found += series_value(text, prefix) == want[i].kernels;
		}
		if (found == sizeof(want) / sizeof(want[0]))
			break;
	}
	ck_assert_int_eq(status, 200);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		snprintf(prefix, sizeof(prefix),
			 "optrace_gpu_kernels_total{command=\"cuda_app\",pid=\"%d\",rank=\"0\","
			 "root=\"%s\",variant=\"%s\"} ",
			 app_pid, want[i].root, want[i].variant);
		if (series_value(text, prefix) != want[i].kernels)
			fprintf(stderr, "scrape:\n%s\n", text);
		ck_assert_msg(series_value(text, prefix) == want[i].kernels, "no %s%.0f", prefix,
			      want[i].kernels);
	}
	ck_assert(strstr(text, "# TYPE optrace_gpu_seconds_total counter") != NULL);
	free(text);
	ck_assert_int_ne(status = reap_within(serve_pid, SIGINT, 30), -1);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "optrace serve: %d", status);
	ck_assert_int_ne(reap_within(app_pid, 0, 30), -1);
	free(truth);
}
END_TEST

/* Where eBPF is not allowed: the collector's file, read by report. */
START_TEST(test_file_mode)
{
	char *truth = test_path("truth.txt"), *gpu_file = test_path("gpu.bin");
	char *json_path = test_path("report.json");
	char *run[] = { CUDA_APP, truth, NULL };
	char *report_json[] = { OPTRACE, "report", "--json", gpu_file, NULL };
	const struct jv *gpu;
	struct jv *report;

	use_fake_cupti();
	ck_assert_int_eq(setenv("CUDA_INJECTION64_PATH", COLLECTOR, 1), 0);
	ck_assert_int_eq(setenv("OPTRACE_GPU_FILE", gpu_file, 1), 0);
	ck_assert_int_eq(run_command(run, NULL, NULL, 60), 0);
	unsetenv("CUDA_INJECTION64_PATH");
	unsetenv("OPTRACE_GPU_FILE");
	ck_assert_int_eq(gpu_truth_value(truth, "recorded"), 6);
	ck_assert_int_eq(run_command(report_json, json_path, NULL, 60), 0);
	report = read_json_file(json_path);
	gpu = jv_get(report, "gpu");
	ck_assert_msg(gpu && gpu->type == JV_OBJECT, "no GPU activity in the file");
	ck_assert_int_eq((long)jv_number(gpu, "kernels"), 6);
	ck_assert_int_eq((long)jv_number(gpu, "outside"), 6); /* no operations in a file */
	jv_free(report);
	free(truth);
	free(gpu_file);
	free(json_path);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("cupti_e2e");
	TCase *tc = tcase_create("collector");

	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, test_dir_setup, test_dir_teardown);
	tcase_add_test(tc, test_recorded_through_bpf);
	tcase_add_test(tc, test_attach_live_and_stop);
	tcase_add_test(tc, test_list_shows_the_collector);
	tcase_add_test(tc, test_dormant_without_a_tracer);
	tcase_add_test(tc, test_stat_leaves_cupti_off);
	tcase_add_loop_test(tc, test_stat_equals_report, 0, 2);
	tcase_add_test(tc, test_serve_gpu_series);
	tcase_add_test(tc, test_file_mode);
	suite_add_tcase(suite, tc);

	return run_suite(suite);
}
