// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace record and report against the demo runtime: every event through
 * the ring buffer into a capture file, and the report's counts equal to the
 * demo's ground truth.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "json_read.h"
#include "tables_check.h"
#include "testlib.h"

/* Records optrace-demo ARGS, reports the capture: counts equal the truth. */
static void check_recorded(const char *const demo_args[], int expected_processes)
{
	char *capture = test_path("run.capture"), *truth_path = test_path("truth.txt");
	char *json = test_path("report.json"), message[8192];
	char *report[] = { OPTRACE, "report", "--json", capture, NULL };
	struct counts truth = { 0 }, traced = { 0 };
	char *argv[40];
	int argc = 0, processes;

	argv[argc++] = OPTRACE;
	argv[argc++] = "record";
	argv[argc++] = "-q";
	argv[argc++] = "-o";
	argv[argc++] = capture;
	argv[argc++] = "--";
	argv[argc++] = DEMO;
	for (int i = 0; demo_args[i]; i++)
		argv[argc++] = (char *)demo_args[i];
	argv[argc++] = "--truth";
	argv[argc++] = truth_path;
	argv[argc++] = "-q";
	argv[argc] = NULL;
	ck_assert_int_eq(run_command(argv, NULL, NULL, 240), 0);
	ck_assert_int_eq(run_command(report, json, NULL, 120), 0);

	ck_assert_int_ge(truth_parse(truth_path, &truth), 1);
	stat_json_counts(json, 0, &traced, &processes);
	ck_assert_int_eq(processes, expected_processes);
	ck_assert_msg(counts_diff(&truth, &traced, message, sizeof(message)) == 0,
		      "optrace report differs from the ground truth:\n%s", message);
	counts_free(&truth);
	counts_free(&traced);
	free(capture);
	free(truth_path);
	free(json);
}

START_TEST(test_each_workload)
{
	static const char *const workloads[] = { "jacobi", "stats", "fallback" };
	const char *args[] = { "--workload", workloads[_i], NULL };

	NEED_BPF();
	check_recorded(args, 1);
}
END_TEST

START_TEST(test_openmp_threads_and_children)
{
	static const char *const args[] = { "--workload", "all",     "--omp", "1", "--threads",
					    "2",	  "--procs", "2",     NULL };

	NEED_BPF();
	check_recorded(args, 2);
}
END_TEST

static long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : (long)st.st_size;
}

/*
 * Killed with SIGKILL: what was flushed reads, under the name the recorder
 * writes until it ends (OUTPUT.partial), and the report says it was cut.
 */
START_TEST(test_recorder_killed)
{
	char *capture = test_path("killed.capture"), *out = test_path("report.txt");
	char *err_path = test_path("report.err"), *text;
	char *partial = test_path("killed.capture.partial");
	char *report[] = { OPTRACE, "report", partial, NULL };
	char children[64];
	pid_t recorder, demo;
	int status;

	NEED_BPF();
	recorder = fork();
	ck_assert_int_ge(recorder, 0);
	if (recorder == 0) {
		execl(OPTRACE, OPTRACE, "record", "-q", "-o", capture, "--", DEMO, "--forever",
		      "-q", "--truth", "/dev/null", (char *)NULL);
		_exit(127);
	}
	/* Until a chunk is flushed (every second; later on a busy machine). */
	for (int waited = 0; waited < 300 && file_size(partial) < 4096; waited++)
		usleep(100 * 1000);
	ck_assert_msg(file_size(partial) >= 4096, "nothing flushed to %s in 30 s", partial);
	snprintf(children, sizeof(children), "/proc/%d/task/%d/children", recorder, recorder);
	text = read_file(children);
	ck_assert_ptr_nonnull(text);
	demo = atoi(text);
	free(text);
	ck_assert_int_ne(status = reap_within(recorder, SIGKILL, 20), -1);
	/* The demo, orphaned, goes on: stop it. */
	ck_assert_int_gt(demo, 0);
	kill(demo, SIGTERM);

	ck_assert_int_eq(run_command(report, out, err_path, 60), 0);
	text = read_file(err_path);
	ck_assert_msg(strstr(text, "end marker") || strstr(text, "cut") || strstr(text, "ends"),
		      "the report does not say the capture was cut:\n%s", text);
	free(text);
	text = read_file(out);
	ck_assert_msg(strstr(text, "demo."), "nothing read from the cut capture:\n%s", text);
	free(text);
	/* Nothing was renamed into place: the run did not end. */
	ck_assert_int_ne(access(capture, F_OK), 0);
	free(capture);
	free(partial);
	free(out);
	free(err_path);
}
END_TEST

/* Issue 15, items 4 to 6: report's tables of a real run rank, group and say alike. */
START_TEST(test_report_tables)
{
	char *capture = test_path("run.capture"), *json_path = test_path("report.json");
	char *text_path = test_path("report.txt"), *helpers_path = test_path("helpers.txt");
	char *record[] = { OPTRACE, "record", "-q",	    "-o",	 capture,
			   "--",    DEMO,     "--workload", "fallback",	 "--omp",
			   "1",	    "-q",     "--truth",    "/dev/null", NULL };
	char *json_report[] = { OPTRACE, "report", "--json", capture, NULL };
	char *text_report[] = { OPTRACE, "report", "--wide", capture, NULL };
	char *helpers_report[] = { OPTRACE, "report", "--wide", "--show-helpers", capture, NULL };
	char *json, *text, *helpers;

	NEED_BPF();
	ck_assert_int_eq(run_command(record, NULL, NULL, 240), 0);
	ck_assert_int_eq(run_command(json_report, json_path, NULL, 120), 0);
	ck_assert_int_eq(run_command(text_report, text_path, NULL, 120), 0);
	ck_assert_int_eq(run_command(helpers_report, helpers_path, NULL, 120), 0);
	json = read_file(json_path);
	text = read_file(text_path);
	helpers = read_file(helpers_path);
	ck_assert(json && text && helpers);
	check_demo_tables(json, text, helpers, true);
	free(json);
	free(text);
	free(helpers);
	free(capture);
	free(json_path);
	free(text_path);
	free(helpers_path);
}
END_TEST

#define TREE_DEPTHS 8

/* Calls per depth in report's operations table (helpers indented two spaces a level). */
static void tree_calls(const char *text, double calls[TREE_DEPTHS])
{
	const char *line = strstr(text, "\nOPERATION");

	ck_assert_ptr_nonnull(line);
	for (line = strchr(line + 1, '\n'); line && line[1] && line[1] != '\n';
	     line = strchr(line + 1, '\n')) {
		size_t indent = strspn(line + 1, " ");
		double count;

		/* legends and notes; a row's reasons on a line of their own */
		if (line[1] == '#' || line[1] == '(' || !strncmp(line + 1 + indent, "\u21b3", 3))
			continue;
		ck_assert_msg(indent % 2 == 0 && indent / 2 < TREE_DEPTHS, "%.80s", line + 1);
		ck_assert_msg(sscanf(line + 1 + indent, "%*s %lf", &count) == 1, "%.80s", line + 1);
		calls[indent / 2] += count;
	}
}

/*
 * Every helper call shows once in the tree, however it is split (by the
 * user's call sites, by the library's): a helper's children sit under the
 * one call site that made them, so each level sums to the calls made.
 */
START_TEST(test_helper_tree_counts_each_call_once)
{
	static const char *const splits[][2] = {
		{ NULL, NULL },
		{ "--by-site", NULL },
		{ "--internal", NULL },
		{ "--by-site", "--internal" },
	};
	char *capture = test_path("run.capture"), *out_path = test_path("report.out");
	char *record[] = { OPTRACE, "record", "-q",	 "-o",	      capture, "--",
			   DEMO,    "-q",     "--truth", "/dev/null", NULL };

	NEED_BPF();
	ck_assert_int_eq(run_command(record, NULL, NULL, 240), 0);
	for (size_t i = 0; i < sizeof(splits) / sizeof(splits[0]); i++) {
		double flat[TREE_DEPTHS] = { 0 }, tree[TREE_DEPTHS] = { 0 };
		char *json_args[8] = { OPTRACE, "report", "--json" },
		     *text_args[8] = { OPTRACE, "report", "--show-helpers", "--wide" };
		int json_argc = 3, text_argc = 4;
		struct jv *json;
		char *text;

		for (int k = 0; k < 2 && splits[i][k]; k++) {
			json_args[json_argc++] = (char *)splits[i][k];
			text_args[text_argc++] = (char *)splits[i][k];
		}
		json_args[json_argc] = text_args[text_argc] = capture;
		ck_assert_int_eq(run_command(json_args, out_path, NULL, 120), 0);
		text = read_file(out_path);
		json = jv_parse(text);
		ck_assert_ptr_nonnull(json);
		free(text);
		for (size_t p = 0; p < jv_get(json, "processes")->count; p++) {
			const struct jv *ops =
				jv_get(jv_get(json, "processes")->items[p], "operations");

			for (size_t o = 0; o < ops->count; o++) {
				double depth = jv_number(ops->items[o], "depth");

				ck_assert(depth >= 0 && depth < TREE_DEPTHS);
				flat[(int)depth] += jv_number(ops->items[o], "count");
			}
		}
		jv_free(json);
		ck_assert_int_eq(run_command(text_args, out_path, NULL, 120), 0);
		text = read_file(out_path);
		tree_calls(text, tree);
		ck_assert_msg(flat[1] > 0 && flat[2] > 0, "the demo calls helpers of helpers");
		for (int d = 0; d < TREE_DEPTHS; d++) {
			if (tree[d] != flat[d])
				fputs(text, stderr); /* the tree, to see where */
			ck_assert_msg(tree[d] == flat[d],
				      "%s %s: %.0f calls at depth %d in the tree, %.0f made",
				      splits[i][0] ? splits[i][0] : "",
				      splits[i][1] ? splits[i][1] : "", tree[d], d, flat[d]);
		}
		free(text);
	}
	free(capture);
	free(out_path);
}
END_TEST

#define PROBE_LOOP OPTRACE_BUILD_DIR "/bench/probe_loop"

/*
 * A target that makes events faster than optrace reads them (4 M events in
 * about 0.1 s, a ring buffer of 1 MiB): batches are lost, counted, and
 * record says what to do about it; what it kept is a capture report reads.
 */
START_TEST(test_ring_buffer_full_says_what_to_do)
{
	char *capture = test_path("full.capture"), *err_path = test_path("full.err"), *text;
	char *argv[] = { OPTRACE, "record",   "--ringbuf", "1",	      "-o", capture,
			 "--",	  PROBE_LOOP, "-n",	   "2000000", NULL };
	char *report[] = { OPTRACE, "report", capture, NULL };

	NEED_BPF();
	ck_assert_int_eq(run_command(argv, NULL, err_path, 120), 0);
	text = read_file(err_path);
	ck_assert_ptr_nonnull(text);
	ck_assert_msg(!strstr(text, " 0 lost in the kernel"), "%s", text);
	ck_assert_msg(strstr(text, "the ring buffer (1 MiB) was full") &&
			      strstr(text, "larger --ringbuf"),
		      "%s", text);
	free(text);
	ck_assert_int_eq(run_command(report, NULL, NULL, 60), 0);
	free(err_path);
	free(capture);
}
END_TEST

START_TEST(test_bad_capture_files)
{
	char *garbage = test_path("garbage"), *err_path = test_path("err.txt"), *text;
	char *report[] = { OPTRACE, "report", garbage, NULL };
	char *missing[] = { OPTRACE, "report", "/nonexistent/x.capture", NULL };
	FILE *file = fopen(garbage, "w");

	fputs("this is not a capture\n", file);
	fclose(file);
	ck_assert_int_eq(WEXITSTATUS(run_command(report, NULL, err_path, 30)), 1);
	text = read_file(err_path);
	ck_assert_msg(strlen(text) > 10 && strstr(text, "optrace:"), "%s", text);
	free(text);
	ck_assert_int_eq(WEXITSTATUS(run_command(missing, NULL, err_path, 30)), 1);
	free(garbage);
	free(err_path);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("record");
	TCase *tc = tcase_create("demo");

	tcase_set_timeout(tc, 300);
	tcase_add_checked_fixture(tc, test_dir_setup, test_dir_teardown);
	tcase_add_loop_test(tc, test_each_workload, 0, 3);
	tcase_add_test(tc, test_openmp_threads_and_children);
	tcase_add_test(tc, test_recorder_killed);
	tcase_add_test(tc, test_bad_capture_files);
	tcase_add_test(tc, test_ring_buffer_full_says_what_to_do);
	tcase_add_test(tc, test_report_tables);
	tcase_add_test(tc, test_helper_tree_counts_each_call_once);
	suite_add_tcase(suite, tc);

	return run_suite(suite);
}
