// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * GPU activity end to end through real BPF, without a GPU: gpu_replay (a
 * runtime with a pretend GPU, tests/fixtures/) fires liboptrace's
 * optrace_gpu probes as liboptrace-cupti would; optrace record captures
 * them with the operations, and report attributes each kernel and copy to
 * the operation, task and variant that launched it, as gpu_replay's truth
 * says.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu_truth.h"
#include "testlib.h"

#define GPU_REPLAY OPTRACE_BUILD_DIR "/tests/gpu_replay"

START_TEST(test_attribution)
{
	static const char *const modes[] = { "auto", "perf-event" };
	char *capture = test_path("gpu.capture"), *truth = test_path("truth.txt");
	char *json_path = test_path("report.json"), *text_path = test_path("report.txt");
	char *record[] = { OPTRACE, "record",	"-q",  "--attach", (char *)modes[_i], "-o", capture,
			   "--",    GPU_REPLAY, truth, NULL };
	char *report_json[] = { OPTRACE, "report", "--json", capture, NULL };
	char *report_text[] = { OPTRACE, "report", capture, NULL };
	struct jv *report;
	const struct jv *gpu;
	char *text;

	NEED_BPF();
	ck_assert_int_eq(run_command(record, NULL, NULL, 60), 0);
	ck_assert_int_eq(run_command(report_json, json_path, NULL, 60), 0);
	report = read_json_file(json_path);
	gpu = jv_get(report, "gpu");
	ck_assert_msg(gpu && gpu->type == JV_OBJECT, "report --json has no \"gpu\" object");
	check_gpu_truth(truth, gpu);
	/* Kernel names came through the kernel_name probe. */
	ck_assert_int_eq((long)jv_number(gpu, "kernels"), 17);
	ck_assert_int_eq((long)jv_number(gpu, "copies"), 1);
	/* Every launch but the one whose API record is lost was marked on its thread. */
	ck_assert_int_eq((long)jv_number(jv_get(jv_get(report, "capture"), "counters"),
					 "records.gpu_launches"),
			 17);
	jv_free(report);
	/* Streamed (the capture has gpu_launch records) as read ahead. */
	ck_assert_int_eq(setenv("OPTRACE_GPU_READ_AHEAD", "1", 1), 0);
	ck_assert_int_eq(run_command(report_json, json_path, NULL, 60), 0);
	unsetenv("OPTRACE_GPU_READ_AHEAD");
	report = read_json_file(json_path);
	check_gpu_truth(truth, jv_get(report, "gpu"));
	jv_free(report);

	ck_assert_int_eq(run_command(report_text, text_path, NULL, 60), 0);
	text = read_file(text_path);
	ck_assert_msg(strstr(text, "sum_reduce<double>") && strstr(text, "add_kernel<double>"),
		      "kernel names missing:\n%s", text);
	ck_assert_msg(strstr(text, "3 dropped by CUPTI"), "%s", text);
	free(text);
	free(capture);
	free(truth);
	free(json_path);
	free(text_path);
}
END_TEST

/*
 * In a container (its own pid namespace) CUPTI's thread ids are the
 * container's, BPF's the host's: the recorded op_begin and task_begin carry
 * both, and attribution is the same.
 */
START_TEST(test_pid_namespace)
{
	char *capture = test_path("ns.capture"), *truth = test_path("truth.txt");
	char *json_path = test_path("report.json");
	char *record[] = { OPTRACE,   "record", "-q",	  "-o",	      capture, "--",
			   "unshare", "--pid",	"--fork", GPU_REPLAY, truth,   NULL };
	char *report_json[] = { OPTRACE, "report", "--json", capture, NULL };
	char *trace_path = test_path("trace.json");
	char *chrome[] = { OPTRACE, "export", "--chrome", "-o", trace_path, capture, NULL };
	const struct jv *events;
	struct jv *report, *trace;
	int flows = 0;

	NEED_BPF();
	ck_assert_int_eq(run_command(record, NULL, NULL, 60), 0);
	ck_assert_int_eq(run_command(report_json, json_path, NULL, 60), 0);
	report = read_json_file(json_path);
	check_gpu_truth(truth, jv_get(report, "gpu"));
	jv_free(report);
	/* Flows start on the launching threads' tracks: the host's ids, not CUPTI's. */
	ck_assert_int_eq(run_command(chrome, NULL, NULL, 60), 0);
	trace = read_json_file(trace_path);
	events = jv_get(trace, "traceEvents");
	ck_assert_ptr_nonnull(events);
	for (size_t i = 0; i < events->count; i++) {
		const struct jv *flow = events->items[i];
		bool on_a_track = false;

		if (strcmp(jv_string(flow, "ph"), "s"))
			continue;
		for (size_t j = 0; j < events->count && !on_a_track; j++) {
			const struct jv *slice = events->items[j];

			on_a_track = !strcmp(jv_string(slice, "ph"), "X") &&
				     (!strcmp(jv_string(slice, "cat"), "op") ||
				      !strcmp(jv_string(slice, "cat"), "task")) &&
				     jv_number(slice, "tid") == jv_number(flow, "tid");
		}
		ck_assert_msg(on_a_track, "a flow starts on thread %.0f, which ran nothing",
			      jv_number(flow, "tid"));
		flows++;
	}
	ck_assert_int_ge(flows, 16);
	jv_free(trace);
	free(trace_path);
	free(capture);
	free(truth);
	free(json_path);
}
END_TEST

/*
 * Both exports take the GPU activity; the Chrome trace stays valid JSON and
 * says what was lost by source, as both say on stderr.
 */
START_TEST(test_exports)
{
	char *capture = test_path("gpu.capture"), *truth = test_path("truth.txt");
	char *trace = test_path("trace.json"), *legion = test_path("legion");
	char *record[] = { OPTRACE, "record", "-q", "-o", capture, "--", GPU_REPLAY, truth, NULL };
	char *chrome[] = { OPTRACE, "export", "--chrome", "-o", trace, capture, NULL };
	char *legion_export[] = { OPTRACE, "export", "--legion", "-o", legion, capture, NULL };
	char *err_path = test_path("export.err"), *text;
	const struct jv *dropped;
	struct jv *value;

	NEED_BPF();
	ck_assert_int_eq(run_command(record, NULL, NULL, 60), 0);
	ck_assert_int_eq(run_command(chrome, NULL, err_path, 60), 0);
	value = read_json_file(trace);
	/* CUPTI's drops, by source, in the trace and said. */
	dropped = jv_get(jv_get(value, "otherData"), "gpu_dropped");
	ck_assert_msg(dropped, "no otherData.gpu_dropped in the Chrome trace");
	ck_assert_int_eq((long)jv_number(dropped, "activity_buffer"), 3);
	ck_assert_int_eq((long)jv_number(dropped, "api_callback"), 0);
	ck_assert_int_eq((long)jv_number(dropped, "ring_buffer"), 0);
	jv_free(value);
	text = read_file(err_path);
	ck_assert_msg(strstr(text, "LOST: GPU records: 3 dropped by CUPTI"), "%s", text);
	free(text);
	ck_assert_int_eq(run_command(legion_export, NULL, err_path, 60), 0);
	text = read_file(err_path);
	ck_assert_msg(strstr(text, "LOST: GPU records: 3 dropped by CUPTI"), "%s", text);
	free(text);
	free(capture);
	free(truth);
	free(trace);
	free(legion);
	free(err_path);
}
END_TEST

/*
 * stat --cuda counts in the kernel what report attributes: the same truth,
 * launches on workers and issuing threads, outside any operation, not
 * marked, without times, and CUPTI's drops.
 */
START_TEST(test_stat_truth)
{
	char *truth = test_path("truth.txt"), *stat_path = test_path("stat.json");
	char *stat[] = { OPTRACE,   "stat", "--json",	"--cuda", "-o",
			 stat_path, "--",   GPU_REPLAY, truth,	  NULL };
	const struct jv *processes, *gpu;
	struct jv *doc;

	NEED_BPF();
	ck_assert_int_eq(run_command(stat, NULL, NULL, 60), 0);
	doc = read_json_file(stat_path);
	processes = jv_get(doc, "processes");
	ck_assert_msg(processes && processes->count == 1, "stat: one process");
	gpu = jv_get(processes->items[0], "gpu");
	check_gpu_truth(truth, gpu);
	ck_assert_int_eq((long)jv_number(gpu, "kernels"), 17);
	ck_assert_int_eq((long)jv_number(gpu, "copies"), 1);
	jv_free(doc);
	free(truth);
	free(stat_path);
}
END_TEST

/* --no-gpu leaves the GPU probes unarmed: the operations alone. */
START_TEST(test_no_gpu)
{
	char *capture = test_path("gpu.capture"), *truth = test_path("truth.txt");
	char *json_path = test_path("report.json");
	char *record[] = { OPTRACE, "record", "-q",	  "--no-gpu", "-o",
			   capture, "--",     GPU_REPLAY, truth,      NULL };
	char *report_json[] = { OPTRACE, "report", "--json", capture, NULL };
	const struct jv *gpu, *processes;
	struct jv *report;

	NEED_BPF();
	ck_assert_int_eq(run_command(record, NULL, NULL, 60), 0);
	ck_assert_int_eq(run_command(report_json, json_path, NULL, 60), 0);
	report = read_json_file(json_path);
	gpu = jv_get(report, "gpu");
	ck_assert_msg(gpu && gpu->type == JV_NULL, "GPU activity recorded with --no-gpu");
	processes = jv_get(report, "processes");
	ck_assert_msg(processes && processes->count == 1, "the operations were not recorded");
	jv_free(report);
	free(capture);
	free(truth);
	free(json_path);
}
END_TEST

/*
 * Where eBPF is not allowed the collector writes a file: alone it reads as
 * GPU activity outside any operation; merged into a capture of the same
 * process's operations it attributes as the probes would have.
 */
START_TEST(test_gpu_file)
{
	char *capture = test_path("ops.capture"), *truth = test_path("truth.txt");
	char *gpu_file = test_path("gpu.bin"), *json_path = test_path("report.json");
	char *file_env = NULL;
	char *record[] = { OPTRACE,    "record", "-q",
			   "--no-gpu", "-o",	 capture,
			   "--",       "env",	 NULL /* OPTRACE_GPU_FILE=... */,
			   GPU_REPLAY, truth,	 NULL };
	char *report_merged[] = { OPTRACE, "report", "--json", "--gpu", gpu_file, capture, NULL };
	char *report_alone[] = { OPTRACE, "report", "--json", gpu_file, NULL };
	struct jv *report;
	const struct jv *gpu;

	NEED_BPF();
	ck_assert_int_ge(asprintf(&file_env, "OPTRACE_GPU_FILE=%s", gpu_file), 0);
	record[8] = file_env;
	ck_assert_int_eq(run_command(record, NULL, NULL, 60), 0);
	ck_assert_int_eq(run_command(report_merged, json_path, NULL, 60), 0);
	report = read_json_file(json_path);
	gpu = jv_get(report, "gpu");
	ck_assert_msg(gpu && gpu->type == JV_OBJECT, "no GPU activity merged from the file");
	check_gpu_truth(truth, gpu);
	jv_free(report);

	ck_assert_int_eq(run_command(report_alone, json_path, NULL, 60), 0);
	report = read_json_file(json_path);
	gpu = jv_get(report, "gpu");
	ck_assert_msg(gpu && gpu->type == JV_OBJECT, "the GPU file alone did not read");
	ck_assert_int_eq((long)jv_number(gpu, "kernels"), 17);
	ck_assert_int_eq((long)jv_number(gpu, "in_ops"), 0);
	ck_assert_int_eq((long)jv_number(gpu, "outside"), 17);
	ck_assert_int_eq((long)jv_number(gpu, "unlaunched"), 1);
	jv_free(report);
	free(file_env);
	free(capture);
	free(truth);
	free(gpu_file);
	free(json_path);
}
END_TEST

/* --cuda hands the command the collector beside liboptrace, or says why not; -p 1 is refused. */
START_TEST(test_cuda_option)
{
	char *capture = test_path("x.capture"), *out = test_path("env.txt");
	char *err_path = test_path("err.txt"), *script = NULL, *text;
	char *record[] = { OPTRACE, "record", "-q", "--cuda",	       "-o", capture,
			   "--",    "sh",     "-c", NULL /* script */, NULL };
	char *with_pid[] = { OPTRACE, "record", "-q", "--cuda", "-o", capture, "-p", "1", NULL };
	bool built = !access(OPTRACE_BUILD_DIR "/lib/liboptrace-cupti.so", R_OK);
	int status;

	NEED_BPF();
	ck_assert_int_ge(asprintf(&script, "printenv CUDA_INJECTION64_PATH > %s", out), 0);
	record[9] = script;
	unsetenv("CUDA_INJECTION64_PATH");
	status = run_command(record, NULL, err_path, 60);
	if (built) {
		ck_assert_int_eq(status, 0);
		text = read_file(out);
		ck_assert_msg(strstr(text, "/lib/liboptrace-cupti.so"), "%s", text);
	} else {
		ck_assert_int_eq(WEXITSTATUS(status), 1);
		text = read_file(err_path);
		ck_assert_msg(strstr(text, "CUPTI"), "%s", text);
	}
	free(text);
	/* pid 1 uses no CUDA (or is refused for another reason): test_cupti_live.c has the rest. */
	ck_assert_int_eq(WEXITSTATUS(run_command(with_pid, NULL, err_path, 60)), 1);
	text = read_file(err_path);
	ck_assert_msg(strstr(text, "--cuda: "), "%s", text);
	free(text);
	free(script);
	free(capture);
	free(out);
	free(err_path);
}
END_TEST

/* Untraced, the pretend runtime runs as well: every probe call returns at once. */
START_TEST(test_untraced_runs)
{
	char *truth = test_path("truth.txt");
	char *run[] = { GPU_REPLAY, truth, NULL };

	ck_assert_int_eq(run_command(run, NULL, NULL, 30), 0);
	free(truth);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("gpu");
	TCase *tc = tcase_create("replay");

	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, test_dir_setup, test_dir_teardown);
	tcase_add_loop_test(tc, test_attribution, 0, 2);
	tcase_add_test(tc, test_pid_namespace);
	tcase_add_test(tc, test_exports);
	tcase_add_test(tc, test_stat_truth);
	tcase_add_test(tc, test_no_gpu);
	tcase_add_test(tc, test_gpu_file);
	tcase_add_test(tc, test_cuda_option);
	tcase_add_test(tc, test_untraced_runs);
	suite_add_tcase(suite, tc);

	return run_suite(suite);
}
