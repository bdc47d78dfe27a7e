// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace export against the demo runtime's ground truth: the demo is
 * recorded, its capture exported as Legion Prof logs (read back by the
 * independent reader of tests/lib/legion_read.c) and as Chrome trace JSON,
 * and what they hold is compared with what the demo counted
 * (tests/lib/export_*.c). Jobs of several captures or processes:
 * test_export_job.c; captures written by hand: test_export_handmade.c.
 */
#define _GNU_SOURCE
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export_chrome.h"
#include "export_legion.h"
#include "export_run.h"
#include "export_truth.h"
#include "legion_colour.h"
#include "legion_read.h"
#include "testlib.h"
#include "bpf/events.h"
#include "capture/capture.h"

/* ---- the demo's processes in the capture ------------------------------------------------ */

struct process {
	pid_t pid;
	int rank;
	bool ops;
};

/* The processes that ran operations, and the rank each announced. */
static int capture_processes(const char *path, struct process *processes, int max)
{
	struct capture_reader *reader;
	struct capture_record record;
	char why[256];
	int count = 0, kept = 0, err;

	ck_assert_msg(capture_reader_open(&reader, path, why, sizeof(why)) == 0, "%s", why);
	while ((err = capture_next(reader, &record)) > 0) {
		const struct record_event *event = record.data;
		int i;

		if (record.size < sizeof(*event) ||
		    (event->type != RECORD_RT_INIT && event->type != RECORD_OP_BEGIN))
			continue;
		for (i = 0; i < count && processes[i].pid != (pid_t)event->tgid; i++)
			;
		if (i == count) {
			ck_assert_int_lt(count, max);
			processes[count++] = (struct process){ (pid_t)event->tgid, -1, false };
		}
		if (event->type == RECORD_RT_INIT)
			processes[i].rank = (int)event->rt_init.rank;
		else
			processes[i].ops = true;
	}
	ck_assert_int_eq(err, 0);
	capture_reader_close(reader);
	/* keep those that ran operations: the parent of --procs runs none */
	for (int i = 0; i < count; i++)
		if (processes[i].ops)
			processes[kept++] = processes[i];
	return kept;
}

/* ---- one recorded run, every export ---------------------------------------------------- */

struct demo_run {
	const char *const *args;
	int processes;
	int threads; /* issuing threads per process */
	bool python; /* also export with --python */
};

struct recorded {
	char *capture;
	struct truth_block blocks[DEMO_MAX_PROCESSES];
	int count;
	struct process processes[DEMO_MAX_PROCESSES];
	uint32_t nodes[DEMO_MAX_PROCESSES]; /* the rank of each block's process */
};

static void record_run(const struct demo_run *run, struct recorded *r)
{
	char *truth = test_path("truth.txt");
	int found;

	r->capture = test_path("run.capture");
	record_demo(run->args, r->capture, truth);
	r->count = truth_blocks(truth, r->blocks, DEMO_MAX_PROCESSES);
	ck_assert_int_eq(r->count, run->processes);
	found = capture_processes(r->capture, r->processes, DEMO_MAX_PROCESSES);
	ck_assert_int_eq(found, run->processes);
	for (int b = 0; b < r->count; b++) {
		int i;

		for (i = 0; i < found && r->processes[i].pid != r->blocks[b].pid; i++)
			;
		ck_assert_msg(i < found, "process %d of the truth is not in the capture",
			      r->blocks[b].pid);
		ck_assert_int_ge(r->processes[i].rank, 0);
		r->nodes[b] = (uint32_t)r->processes[i].rank;
	}
	free(truth);
}

/*
 * One Legion export of the recorded run into dir/name, each file checked
 * against its process's truth; ranges gets each file's ranges by title.
 */
static void check_legion_export(const struct demo_run *run, struct recorded *r,
				const struct legion_expect *base, const char *name,
				const char *const options[], struct counts *ranges)
{
	char *out = test_path(name), path[4096];

	run_export(options, out, r->capture);
	check_file_names(out, r->nodes, r->count);
	for (int b = 0; b < r->count; b++) {
		struct legion_expect e = *base;

		e.node = r->nodes[b];
		e.nodes = (uint32_t)r->count;
		e.pid = r->blocks[b].pid;
		e.threads = run->threads;
		snprintf(path, sizeof(path), "%s/prof_%u.gz", out, e.node);
		check_legion_file(path, &r->blocks[b].counts, &e, &ranges[b]);
	}
	free(out);
}

/* The hue of each "name [variant]" in an export's files, as Legion Prof colours them. */
static void export_hues(const char *name, struct recorded *r, struct counts *hues,
			double *neighbours)
{
	struct legion_summary files[DEMO_MAX_PROCESSES];
	struct legion_colours colours;
	char *out = test_path(name), path[4096], key[512];
	double sum = 0;
	long pairs = 0;

	for (int b = 0; b < r->count; b++) {
		snprintf(path, sizeof(path), "%s/prof_%u.gz", out, r->nodes[b]);
		read_summary(path, 1008, &files[b]);
	}
	ck_assert_int_eq(legion_colours_of(files, (size_t)r->count, &colours), 0);
	for (int b = 0; b < r->count; b++) {
		const struct legion_summary *s = &files[b];

		for (size_t i = 0; i < s->task_count; i++) {
			const struct legion_task *t = &s->tasks[i], *next = NULL;
			double hue = legion_colour_hue(&colours, t->task_id, t->variant_id);

			ck_assert(hue >= 0);
			/* hues in millionths: counts hold integers */
			snprintf(key, sizeof(key), "%s [%s]", t->task_name, t->variant_name);
			if (!counts_get(hues, key))
				counts_add(hues, key, (long)(hue * 1e6) + 1);
			/* the next task drawn on the same processor, if of another kind */
			for (size_t j = i + 1; j < s->task_count && !next; j++)
				if (s->tasks[j].proc_id == t->proc_id)
					next = &s->tasks[j];
			if (next &&
			    (next->task_id != t->task_id || next->variant_id != t->variant_id)) {
				sum += legion_hue_distance(
					hue, legion_colour_hue(&colours, next->task_id,
							       next->variant_id));
				pairs++;
			}
		}
	}
	*neighbours = pairs ? sum / (double)pairs : 0.5;
	legion_colours_free(&colours);
	for (int b = 0; b < r->count; b++)
		legion_summary_free(&files[b]);
	free(out);
}

/*
 * Colours: each kind keeps its colour from one export of the job to the
 * next (with helpers or without), and kinds drawn one after the other on a
 * processor are far apart on the colour wheel (0.25 on average by chance, 0.28 to 0.43 on the
 * demo's workloads).
 */
static void check_colours(struct recorded *r)
{
	struct counts plain = { 0 }, helpers = { 0 };
	double plain_neighbours, helper_neighbours;

	export_hues("legion", r, &plain, &plain_neighbours);
	export_hues("helpers", r, &helpers, &helper_neighbours);
	for (size_t i = 0; i < plain.length; i++) {
		long other = counts_get(&helpers, plain.entries[i].key);

		ck_assert_msg(other == plain.entries[i].count,
			      "%s has hue %.3f, %.3f with --show-helpers", plain.entries[i].key,
			      (double)(plain.entries[i].count - 1) / 1e6,
			      (double)(other - 1) / 1e6);
	}
	ck_assert_msg(plain_neighbours >= 0.2, "neighbours' hues %.3f apart", plain_neighbours);
	counts_free(&plain);
	counts_free(&helpers);
}

static void counts_free_all(struct counts *counts, int count)
{
	for (int i = 0; i < count; i++)
		counts_free(&counts[i]);
}

/* The depth-0 ranges of --show-helpers are the ranges without it, title for title. */
static void check_same_depth0(const struct counts *plain, const struct counts *helpers)
{
	static const char *const prefixes[] = { "op ", "mode0 ", "fallback0 ", "points " };
	struct counts depth0 = { 0 }, shown = { 0 };

	for (size_t p = 0; p < sizeof(prefixes) / sizeof(prefixes[0]); p++) {
		counts_select(plain, prefixes[p], &shown);
		counts_select(helpers, prefixes[p], &depth0);
	}
	for (size_t i = 0; i < depth0.length; i++) {
		char name[128];
		unsigned int depth;

		if (sscanf(depth0.entries[i].key, "op %127s %u", name, &depth) == 2 && depth)
			depth0.entries[i].count = 0;
	}
	assert_counts_equal(&shown, &depth0, "depth-0 ranges with and without --show-helpers");
	counts_free(&depth0);
	counts_free(&shown);
}

/* Files of several processes combine: op ids and events unique across them. */
static void check_ids_across_files(struct recorded *r)
{
	struct counts ids = { 0 };
	char path[4096], key[64], *out = test_path("legion");

	for (int b = 0; b < r->count; b++) {
		struct legion_summary s;

		snprintf(path, sizeof(path), "%s/prof_%u.gz", out, r->nodes[b]);
		read_summary(path, 1008, &s);
		for (size_t i = 0; i < s.op_count; i++) {
			snprintf(key, sizeof(key), "op %llu", (unsigned long long)s.ops[i].op_id);
			counts_add(&ids, key, 1);
		}
		for (size_t i = 0; i < s.task_count; i++) {
			snprintf(key, sizeof(key), "event %llx",
				 (unsigned long long)s.tasks[i].fevent);
			counts_add(&ids, key, 1);
		}
		legion_summary_free(&s);
	}
	for (size_t i = 0; i < ids.length; i++)
		ck_assert_msg(ids.entries[i].count == 1, "%s is used in %ld places",
			      ids.entries[i].key, ids.entries[i].count);
	counts_free(&ids);
	free(out);
}

static void check_demo_run(const struct demo_run *run)
{
	struct counts plain[DEMO_MAX_PROCESSES] = { 0 }, helpers[DEMO_MAX_PROCESSES] = { 0 };
	struct legion_expect base = { .version = 1008 };
	struct recorded r = { 0 };
	char *json;

	record_run(run, &r);
	check_legion_export(run, &r, &base, "legion", export_legion_options, plain);
	base.show_helpers = true;
	check_legion_export(run, &r, &base, "helpers", export_helper_options, helpers);
	for (int b = 0; b < r.count; b++)
		check_same_depth0(&plain[b], &helpers[b]);
	check_colours(&r);
	counts_free_all(plain, r.count);
	counts_free_all(helpers, r.count);
	base.show_helpers = false;
	base.version = 1007;
	check_legion_export(run, &r, &base, "v1007", export_v1007_options, plain);
	counts_free_all(plain, r.count);
	if (run->python) {
		base.version = 1008;
		base.python = true;
		check_legion_export(run, &r, &base, "python", export_python_options, plain);
		counts_free_all(plain, r.count);
	}
	if (r.count > 1)
		check_ids_across_files(&r);

	json = test_path("trace.json");
	run_export(export_chrome_options, json, r.capture);
	check_chrome(json, r.blocks, r.count, false);
	run_export(export_chrome_helper_options, json, r.capture);
	check_chrome(json, r.blocks, r.count, true);
	free(json);
	truth_blocks_free(r.blocks, r.count);
	free(r.capture);
}

START_TEST(test_each_workload)
{
	static const char *const workloads[] = { "jacobi", "stats", "fallback" };
	const char *args[] = { "--workload", workloads[_i], NULL };
	struct demo_run run = { .args = args, .processes = 1, .threads = 1 };

	NEED_BPF();
	check_demo_run(&run);
}
END_TEST

START_TEST(test_mixed_threads_openmp)
{
	static const char *const args[] = { "--workload", "all", "--omp", "1",
					    "--threads",  "2",	 NULL };
	struct demo_run run = { .args = args, .processes = 1, .threads = 2, .python = true };

	NEED_BPF();
	check_demo_run(&run);
}
END_TEST

START_TEST(test_two_processes)
{
	static const char *const args[] = { "--workload", "all", "--procs", "2", NULL };
	struct demo_run run = { .args = args, .processes = 2, .threads = 1 };

	NEED_BPF();
	check_demo_run(&run);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("export");
	TCase *demo = tcase_create("demo");

	/* libgomp's idle threads spin otherwise: slow on a machine with few cores */
	setenv("OMP_WAIT_POLICY", "passive", 0);
	tcase_set_timeout(demo, 240);
	tcase_add_checked_fixture(demo, test_dir_setup, test_dir_teardown);
	tcase_add_loop_test(demo, test_each_workload, 0, 3);
	tcase_add_test(demo, test_mixed_threads_openmp);
	tcase_add_test(demo, test_two_processes);
	suite_add_tcase(suite, demo);

	return run_suite(suite);
}
