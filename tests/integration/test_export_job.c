// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace export of a job, the files of several processes together: two
 * captures, or one of `record -p A -p B`. Every task name and variant has
 * one id in all the files, invocations are report's, and each process's
 * file is its rank's.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export_legion.h"
#include "export_run.h"
#include "export_truth.h"
#include "json_read.h"
#include "legion_read.h"
#include "testlib.h"

/* optrace report CAPTURE names a process with label. */
static void report_says(const char *capture, const char *label)
{
	char *argv[] = { OPTRACE, "report", (char *)capture, NULL };
	char *out_path = test_path("report.txt"), *text;

	ck_assert_int_eq(run_command(argv, out_path, NULL, 120), 0);
	text = read_file(out_path);
	ck_assert_ptr_nonnull(text);
	if (!strstr(text, label)) /* the processes' headings, to see which it is */
		for (char *line = strstr(text, "\n== "); line; line = strstr(line + 1, "\n== "))
			fprintf(stderr, "%.*s\n", (int)strcspn(line + 1, "\n"), line + 1);
	ck_assert_msg(strstr(text, label), "no \"%s\" in the report", label);
	free(text);
	free(out_path);
}

/* ---- a job: ids that are the job's, invocations that are report's ---------------- */

/* A demo that runs until SIGTERM, with the workload given (tests/integration/test_cli.c's way). */
static pid_t start_forever(const char *workload)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		execl(DEMO, DEMO, "--forever", "--workload", workload, "--pause", "20", "-q",
		      "--truth", "/dev/null", (char *)NULL);
		_exit(127);
	}
	wait_started(pid);
	return pid;
}

/* report --json of the captures: "task NAME VARIANT" and "op NAME" (depth 0) counts. */
static void report_invocations(char *const captures[], int count, struct counts *counts)
{
	char *json_path = test_path("report.json"), *argv[8], *text;
	struct jv *report;
	int argc = 0;

	argv[argc++] = OPTRACE;
	argv[argc++] = "report";
	argv[argc++] = "--json";
	for (int i = 0; i < count; i++)
		argv[argc++] = captures[i];
	argv[argc] = NULL;
	ck_assert_int_eq(run_command(argv, json_path, NULL, 120), 0);
	text = read_file(json_path);
	report = jv_parse(text);
	ck_assert_ptr_nonnull(report);
	for (size_t p = 0; p < jv_get(report, "processes")->count; p++) {
		const struct jv *process = jv_get(report, "processes")->items[p];
		const struct jv *tasks = jv_get(process, "tasks");
		const struct jv *ops = jv_get(process, "operations");
		char key[256];

		for (size_t i = 0; i < tasks->count; i++) {
			snprintf(key, sizeof(key), "task %s %s", jv_string(tasks->items[i], "name"),
				 jv_string(tasks->items[i], "variant"));
			counts_add(counts, key, (long)jv_number(tasks->items[i], "count"));
		}
		for (size_t i = 0; i < ops->count; i++) {
			if (jv_number(ops->items[i], "depth") != 0)
				continue;
			snprintf(key, sizeof(key), "op %s", jv_string(ops->items[i], "name"));
			counts_add(counts, key, (long)jv_number(ops->items[i], "count"));
		}
	}
	jv_free(report);
	free(text);
	free(json_path);
}

/*
 * The files of one export: every task name and (name, variant) has one id
 * in all of them, and invocations per name are report's.
 */
static void check_job(const char *out, int files, const struct counts *expected)
{
	struct counts ids = { 0 }, got = { 0 };
	char path[4096], key[512];

	for (int f = 0; f < files; f++) {
		struct legion_summary s;

		snprintf(path, sizeof(path), "%s/prof_%d.gz", out, f);
		read_summary(path, 1008, &s);
		for (size_t i = 0; i < s.task_count; i++) {
			const struct legion_task *t = &s.tasks[i];

			/* the first id a name got, then every other use checked against it */
			snprintf(key, sizeof(key), "name %s", t->task_name);
			if (!counts_get(&ids, key))
				counts_add(&ids, key, t->task_id);
			ck_assert_msg(counts_get(&ids, key) == t->task_id,
				      "%s has task id %u in prof_%d.gz, %ld elsewhere",
				      t->task_name, t->task_id, f, counts_get(&ids, key));
			snprintf(key, sizeof(key), "variant %s %s", t->task_name, t->variant_name);
			if (!counts_get(&ids, key))
				counts_add(&ids, key, t->variant_id);
			ck_assert_msg(counts_get(&ids, key) == t->variant_id,
				      "%s [%s] has variant id %u in prof_%d.gz, %ld elsewhere",
				      t->task_name, t->variant_name, t->variant_id, f,
				      counts_get(&ids, key));
			if (is_op(t))
				snprintf(key, sizeof(key), "op %s", t->task_name);
			else
				snprintf(key, sizeof(key), "task %s %s", t->task_name,
					 t->variant_name);
			counts_add(&got, key, 1);
		}
		legion_summary_free(&s);
	}
	assert_counts_equal(expected, &got, "Legion Prof invocations against report --json");
	counts_free(&ids);
	counts_free(&got);
}

static void export_job(char *const captures[], int count, const char *out)
{
	char *argv[8];
	int argc = 0;

	argv[argc++] = OPTRACE;
	argv[argc++] = "export";
	argv[argc++] = "--legion";
	argv[argc++] = "-o";
	argv[argc++] = (char *)out;
	for (int i = 0; i < count; i++)
		argv[argc++] = captures[i];
	argv[argc] = NULL;
	run_ok(argv);
}

/* Two captures of processes whose tasks came in another order: one id per name for the job. */
START_TEST(test_job_of_two_captures)
{
	static const char *const stats[] = { "--workload", "stats", NULL };
	static const char *const jacobi[] = { "--workload", "all", NULL };
	char *captures[] = { test_path("a.capture"), test_path("b.capture") };
	char *truth = test_path("truth.txt"), *out = test_path("job");
	struct counts expected = { 0 };

	NEED_BPF();
	record_demo(stats, captures[0], truth);
	record_demo(jacobi, captures[1], truth);
	export_job(captures, 2, out);
	report_invocations(captures, 2, &expected);
	check_job(out, 2, &expected);
	counts_free(&expected);
	free(captures[0]);
	free(captures[1]);
	free(truth);
	free(out);
}
END_TEST

/* One capture of `record -p A -p B`. */
START_TEST(test_job_of_live_processes)
{
	char *capture = test_path("live.capture"), *out = test_path("job"), a_text[16], b_text[16];
	char *record[] = { OPTRACE, "record", "-q",   "-d", "2",    "-o",
			   capture, "-p",     a_text, "-p", b_text, NULL };
	struct counts expected = { 0 };
	pid_t a, b;

	NEED_BPF();
	/* Ranks 1 and 0 of 2, announced before the recording attached. */
	setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
	setenv("OMPI_COMM_WORLD_RANK", "1", 1);
	a = start_forever("stats");
	setenv("OMPI_COMM_WORLD_RANK", "0", 1);
	b = start_forever("all");
	unsetenv("OMPI_COMM_WORLD_RANK");
	unsetenv("OMPI_COMM_WORLD_SIZE");
	snprintf(a_text, sizeof(a_text), "%d", a);
	snprintf(b_text, sizeof(b_text), "%d", b);
	ck_assert_int_eq(run_command(record, NULL, NULL, 60), 0);
	reap_within(a, SIGTERM, 10);
	reap_within(b, SIGTERM, 10);
	export_job(&capture, 1, out);
	report_invocations(&capture, 1, &expected);
	check_job(out, 2, &expected);
	/* The ranks are kept: each process's file is its rank's. */
	for (int rank = 0; rank < 2; rank++) {
		char path[4096], label[64];
		struct legion_summary s;

		snprintf(path, sizeof(path), "%s/prof_%d.gz", out, rank);
		read_summary(path, 1008, &s);
		ck_assert_uint_eq(s.node_id, (unsigned)rank);
		ck_assert_uint_eq(s.num_nodes, 2);
		ck_assert_uint_eq(s.process_id, (unsigned)(rank ? a : b));
		legion_summary_free(&s);
		snprintf(label, sizeof(label), "%d (optrace-demo) rank %d of 2", rank ? a : b,
			 rank);
		report_says(capture, label);
	}
	counts_free(&expected);
	free(capture);
	free(out);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("export_job");
	TCase *demo = tcase_create("demo");

	/* libgomp's idle threads spin otherwise: slow on a machine with few cores */
	setenv("OMP_WAIT_POLICY", "passive", 0);
	tcase_set_timeout(demo, 240);
	tcase_add_checked_fixture(demo, test_dir_setup, test_dir_teardown);
	tcase_add_test(demo, test_job_of_two_captures);
	tcase_add_test(demo, test_job_of_live_processes);
	suite_add_tcase(suite, demo);

	return run_suite(suite);
}
