// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Captures of several hosts merged: recorded apart (the second in a UTS
 * namespace of its own, as another host), then reported and exported
 * together: every operation of both runs counted, every process its own
 * (also when two hosts' processes share a pid), one Legion Prof log per
 * process, the same process twice refused.
 */
#define _GNU_SOURCE
#include <check.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bpf/events.h"
#include "capture/capture.h"
#include "json_read.h"
#include "legion_read.h"
#include "testlib.h"

/* Records optrace-demo ARGS into capture, as host (NULL: this one's name). */
static void record_demo(const char *capture, const char *truth, const char *host, const char *args)
{
	char command[2048];
	char *argv[] = { "unshare", "--uts", "sh", "-c", command, NULL };

	snprintf(command, sizeof(command),
		 "%s%s%s exec %s record -q -o %s -- %s %s --truth %s -q >/dev/null",
		 host ? "hostname " : "", host ? host : "", host ? " &&" : "", OPTRACE, capture,
		 DEMO, args, truth);
	ck_assert_int_eq(run_command(argv, NULL, NULL, 240), 0);
}

/* CLOCK_REALTIME when capture path started recording, in ns. */
static double capture_start(const char *path)
{
	struct capture_reader *reader;
	char why[256];
	double start;

	ck_assert_msg(capture_reader_open(&reader, path, why, sizeof(why)) == 0, "%s", why);
	start = (double)capture_reader_header(reader)->realtime_ns;
	capture_reader_close(reader);
	return start;
}

/*
 * The Chrome trace of both: the second host's process begins after the
 * first's by the time between the two recordings (each run starts within a
 * second of its recorder).
 */
static void check_timeline(const char *json_path, const char *a, const char *b)
{
	char *text = read_file(json_path);
	struct jv *trace = jv_parse(text);
	const struct jv *events = trace ? jv_get(trace, "traceEvents") : NULL;
	double first[2] = { -1, -1 }, gap_us = (capture_start(b) - capture_start(a)) / 1000;
	double pids[2] = { 0, 0 };

	ck_assert_ptr_nonnull(events);
	for (size_t i = 0; i < events->count; i++) {
		const struct jv *event = events->items[i];
		double pid = jv_number(event, "pid"), ts = jv_number(event, "ts");
		int slot;

		if (strcmp(jv_string(event, "ph"), "X"))
			continue;
		slot = pids[0] == 0 || pids[0] == pid ? 0 : 1;
		if (slot == 1 && pids[1] != 0 && pids[1] != pid)
			continue; /* a third process: the second capture's --procs children */
		pids[slot] = pid;
		if (first[slot] < 0 || ts < first[slot])
			first[slot] = ts;
	}
	ck_assert_msg(first[0] >= 0 && first[1] >= 0, "one host's slices are missing");
	ck_assert_msg(gap_us > 500000, "the recordings were %.0f us apart", gap_us);
	ck_assert_msg(
		first[1] - first[0] > gap_us - 1e6 && first[1] - first[0] < gap_us + 1e6,
		"second host's first slice %.0f us after the first's, recordings %.0f us apart",
		first[1] - first[0], gap_us);
	jv_free(trace);
	free(text);
}

START_TEST(test_two_hosts)
{
	char *a = test_path("run.a.capture"), *b = test_path("run.b.capture");
	char *truth_a = test_path("truth.a"), *truth_b = test_path("truth.b");
	char *json = test_path("report.json"), *text_path = test_path("report.txt");
	char *err_path = test_path("err.txt"), *legion = test_path("legion"), *text;
	char *report_json[] = { OPTRACE, "report", "--json", a, b, NULL };
	char *report_text[] = { OPTRACE, "report", "--wide", a, b, NULL };
	char *copy = test_path("run.a.copy.capture");
	char *copy_argv[] = { "cp", a, copy, NULL };
	char *twice[] = { OPTRACE, "report", a, copy, NULL };
	char *same_file[] = { OPTRACE, "report", a, a, NULL };
	char *export[] = { OPTRACE, "export", "--legion", "-o", legion, a, b, NULL };
	char *chrome = test_path("job.json");
	char *export_chrome[] = { OPTRACE, "export", "--chrome", "-o", chrome, a, b, NULL };
	struct counts truth = { 0 }, traced = { 0 };
	char message[8192], path[512], why[256];
	int processes;

	NEED_BPF();
	record_demo(a, truth_a, NULL, "--workload all --omp 1");
	sleep(1); /* the hosts' recordings apart in time */
	record_demo(b, truth_b, "optrace-node2", "--workload stats --procs 2");

	/* Every operation of both runs. */
	ck_assert_int_eq(run_command(report_json, json, NULL, 120), 0);
	ck_assert_int_ge(truth_parse(truth_a, &truth), 1);
	ck_assert_int_ge(truth_parse(truth_b, &truth), 1);
	stat_json_counts(json, 0, &traced, &processes);
	ck_assert_int_eq(processes, 3);
	ck_assert_msg(counts_diff(&truth, &traced, message, sizeof(message)) == 0,
		      "the merged report differs from the two runs' truth:\n%s", message);

	/* Both captures and their hosts are named; one timeline. */
	ck_assert_int_eq(run_command(report_text, text_path, NULL, 120), 0);
	text = read_file(text_path);
	if (!strstr(text, " on optrace-node2,") || !strstr(text, "merged onto one timeline"))
		fputs(text, stderr);
	ck_assert(strstr(text, " on optrace-node2,") && strstr(text, "merged onto one timeline"));
	free(text);

	/* One Legion Prof log per process, each valid. */
	ck_assert_int_eq(run_command(export, NULL, NULL, 120), 0);
	for (int node = 0; node < 3; node++) {
		snprintf(path, sizeof(path), "%s/prof_%d.gz", legion, node);
		ck_assert_msg(legion_validate_file(path, 1008, why, sizeof(why)) == 0, "%s: %s",
			      path, why);
	}
	snprintf(path, sizeof(path), "%s/prof_3.gz", legion);
	ck_assert_msg(access(path, F_OK) != 0, "a log for a process that ran nothing");

	/* One timeline: the second host's run after the first's. */
	ck_assert_int_eq(run_command(export_chrome, NULL, NULL, 120), 0);
	check_timeline(chrome, a, b);

	/* The same process in two captures: refused, said; one file given twice too. */
	ck_assert_int_eq(run_command(copy_argv, NULL, NULL, 60), 0);
	ck_assert_int_eq(WEXITSTATUS(run_command(twice, NULL, err_path, 60)), 1);
	text = read_file(err_path);
	ck_assert_msg(strstr(text, "two tracers recorded it"), "%s", text);
	free(text);
	ck_assert_int_eq(WEXITSTATUS(run_command(same_file, NULL, err_path, 60)), 1);
	text = read_file(err_path);
	ck_assert_msg(strstr(text, "is given twice"), "%s", text);
	free(text);
	free(copy);

	counts_free(&truth);
	counts_free(&traced);
	free(a);
	free(b);
	free(truth_a);
	free(truth_b);
	free(json);
	free(text_path);
	free(err_path);
	free(legion);
	free(chrome);
}
END_TEST

/* ---- two hosts whose processes share a pid: captures written here ---------------- */

#define SHARED_PID 4242u
#define NAME_ADDRESS 0x1000u

static void put(struct capture_writer *w, const void *record, size_t size)
{
	const struct record_event *event = record;

	ck_assert_int_eq(capture_write(w, event->type, record, (uint32_t)size), 0);
}

/* A capture of host: process SHARED_PID calling "demo.add" ops times. */
static void write_host_capture(const char *path, const char *host, const char *boot, int ops)
{
	struct capture_meta meta[] = { { CAPTURE_KEY_BOOT_ID, boot } };
	struct capture_writer_opts opts = {
		.target = "merge", .hostname = host, .meta = meta, .meta_count = 1
	};
	struct record_string name = {
		.tgid = SHARED_PID,
		.tid = SHARED_PID,
		.type = RECORD_STRING,
		.address = NAME_ADDRESS,
		.text = "demo.add",
	};
	struct record_name command = {
		.tgid = SHARED_PID,
		.type = RECORD_NAME,
		.name = "hostapp",
	};
	struct capture_writer *w;
	struct timespec ts;
	uint64_t now;

	ck_assert_int_eq(capture_writer_open(&w, path, &opts), 0);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	put(w, &name, sizeof(name));
	put(w, &command, sizeof(command));
	for (int i = 0; i < ops; i++) {
		struct record_event begin = {
			.timestamp = now += 1000,
			.tgid = SHARED_PID,
			.tid = SHARED_PID,
			.type = RECORD_OP_BEGIN,
			.op_begin = { .op = (__u64)i + 1, .name = NAME_ADDRESS },
		};
		struct record_event end = {
			.timestamp = now += 1000,
			.tgid = SHARED_PID,
			.tid = SHARED_PID,
			.type = RECORD_OP_END,
			.op_end = { .op = (__u64)i + 1 },
		};

		put(w, &begin, sizeof(begin));
		put(w, &end, sizeof(end));
	}
	ck_assert_int_eq(capture_close(w, NULL, 0), 0);
}

START_TEST(test_shared_pid_of_two_hosts)
{
	char *a = test_path("host.a.capture"), *b = test_path("host.b.capture");
	char *json = test_path("merged.json");
	char *report[] = { OPTRACE, "report", "--json", a, b, NULL };
	struct counts traced = { 0 };
	int processes;

	write_host_capture(a, "host-a", "11111111-1111-1111-1111-111111111111", 3);
	write_host_capture(b, "host-b", "22222222-2222-2222-2222-222222222222", 5);
	ck_assert_int_eq(run_command(report, json, NULL, 60), 0);
	stat_json_counts(json, 0, &traced, &processes);
	ck_assert_int_eq(processes, 2); /* one pid, two processes */
	ck_assert_int_eq(counts_get(&traced, "op demo.add 0"), 8);
	counts_free(&traced);
	free(a);
	free(b);
	free(json);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("merge");
	TCase *tc = tcase_create("merge");

	tcase_set_timeout(tc, 600);
	tcase_add_checked_fixture(tc, test_dir_setup, test_dir_teardown);
	tcase_add_test(tc, test_two_hosts);
	tcase_add_test(tc, test_shared_pid_of_two_hosts);
	suite_add_tcase(suite, tc);
	return run_suite(suite);
}
