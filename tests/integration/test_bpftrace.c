// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The first end-to-end truth: bpftrace, a tracer we did not write, attached
 * to liboptrace's probes while the demo runs, must count exactly what the
 * demo says it did (its ground truth). Also when it attaches to one probe
 * of the provider alone: any armed probe makes liboptrace give ids.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <optrace/abi.h>

#include "testlib.h"

#define LIBOPTRACE OPTRACE_BUILD_DIR "/lib/liboptrace.so.1"

static const char *const probe_names[] = {
	"rt_init",    "op_begin", "op_end",	"op_mode",  "op_fallback", "task_launch",
	"task_begin", "task_end", "wait_begin", "wait_end", "batch",
};

/* How long bpftrace may take to print its maps and exit after SIGINT. */
#define TRACER_GRACE_MS (20 * 1000)

/*
 * Counts per (op name, depth), mode, fallback reason, status, task launch,
 * task run per variant, and wait kind, keyed by op and task names through
 * their ids. The probes are those of this build's liboptrace, which only the
 * demo started by the test maps.
 */
static const char bpftrace_program[] =
	"BEGIN { printf(\"ready\\n\"); }\n"
	"usdt:" LIBOPTRACE ":optrace:op_begin {\n"
	"  @op[str(arg3), arg2] = count(); @name[pid, arg0] = str(arg3); }\n"
	"usdt:" LIBOPTRACE ":optrace:op_mode {\n"
	"  @mode[@name[pid, arg0], arg1, arg2] = count(); }\n"
	"usdt:" LIBOPTRACE ":optrace:op_fallback {\n"
	"  @fallback[@name[pid, arg0], arg1] = count(); }\n"
	"usdt:" LIBOPTRACE ":optrace:op_end {\n"
	"  @status[@name[pid, arg0], arg1] = count(); delete(@name[pid, arg0]); }\n"
	"usdt:" LIBOPTRACE ":optrace:task_launch {\n"
	"  @launch[str(arg3)] = count(); @points[str(arg3)] = sum(arg4);\n"
	"  @task_name[pid, arg0] = str(arg3); }\n"
	"usdt:" LIBOPTRACE ":optrace:task_begin {\n"
	"  @task[@task_name[pid, arg0], arg2] = count(); }\n"
	"usdt:" LIBOPTRACE ":optrace:wait_begin {\n"
	"  @wait[arg1] = count(); }\n"
	"END { clear(@name); clear(@task_name); }\n";

struct tracer {
	pid_t pid;
	char *dir;
	char out_path[256];
};

static bool output_contains(const char *path, const char *needle)
{
	char *text = read_file(path);
	bool found = text && strstr(text, needle);

	free(text);
	return found;
}

/* Starts bpftrace on program; returns once every probe is attached. */
static void tracer_start(struct tracer *tracer, const char *program_text)
{
	pid_t parent = getpid();
	char program_path[256];
	FILE *program;

	tracer->dir = make_temp_dir();
	ck_assert_ptr_nonnull(tracer->dir);
	snprintf(program_path, sizeof(program_path), "%s/count.bt", tracer->dir);
	snprintf(tracer->out_path, sizeof(tracer->out_path), "%s/bpftrace.out", tracer->dir);
	program = fopen(program_path, "w");
	ck_assert_ptr_nonnull(program);
	fputs(program_text, program);
	fclose(program);

	tracer->pid = fork();
	ck_assert_int_ge(tracer->pid, 0);
	if (tracer->pid == 0) {
		/* Dies with the test, whatever ends it (an abort, Check's timeout). */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(126);
		if (!freopen(tracer->out_path, "w", stdout) ||
		    dup2(STDOUT_FILENO, STDERR_FILENO) < 0)
			_exit(126);
		execlp("bpftrace", "bpftrace", program_path, (char *)NULL);
		_exit(127);
	}
	/* BEGIN runs once every probe is attached. */
	for (int waited = 0; !output_contains(tracer->out_path, "ready"); waited++) {
		int status;

		if (waitpid(tracer->pid, &status, WNOHANG) == tracer->pid) {
			char *text = read_file(tracer->out_path);

			ck_abort_msg("bpftrace exited before attaching:\n%s", text ? text : "");
		}
		if (waited >= 3000) {
			kill(tracer->pid, SIGKILL);
			waitpid(tracer->pid, &status, 0);
			ck_abort_msg("bpftrace did not attach within 30 s");
		}
		usleep(10 * 1000);
	}
}

/* SIGINT: bpftrace prints its maps and exits; SIGKILL if it does not. */
static void tracer_stop(struct tracer *tracer)
{
	int status, waited_ms = 0;
	pid_t done;

	kill(tracer->pid, SIGINT);
	while ((done = waitpid(tracer->pid, &status, WNOHANG)) == 0 &&
	       waited_ms < TRACER_GRACE_MS) {
		usleep(10 * 1000);
		waited_ms += 10;
	}
	if (done == 0) {
		kill(tracer->pid, SIGKILL);
		waitpid(tracer->pid, &status, 0);
		ck_abort_msg("bpftrace did not exit within %d s of SIGINT", TRACER_GRACE_MS / 1000);
	}
	ck_assert_int_eq(done, tracer->pid);
}

/* A bpftrace map key "[a, b, c]" with numbers turned into ABI names. */
static void add_map_line(struct counts *counts, const char *map, char *keys, long value)
{
	char *fields[4] = { "", "", "", "" }, key[512], *field;
	int n = 0;

	/* Keep empty fields: a name bpftrace could not read prints as "". */
	while (n < 4 && (field = strsep(&keys, ",")))
		fields[n++] = field + strspn(field, " ");
	if (!strcmp(map, "op"))
		snprintf(key, sizeof(key), "op %s %s", fields[0], fields[1]);
	else if (!strcmp(map, "mode"))
		snprintf(key, sizeof(key), "mode %s %s %s", fields[0],
			 optrace_mode_name(atoi(fields[1])),
			 optrace_mode_reason_name(atoi(fields[2])));
	else if (!strcmp(map, "fallback"))
		snprintf(key, sizeof(key), "fallback %s %s", fields[0],
			 optrace_fallback_reason_name(atoi(fields[1])));
	else if (!strcmp(map, "status"))
		snprintf(key, sizeof(key), "status %s %s", fields[0],
			 optrace_status_name(atoi(fields[1])));
	else if (!strcmp(map, "launch") || !strcmp(map, "points"))
		snprintf(key, sizeof(key), "%s %s", map, fields[0]);
	else if (!strcmp(map, "task"))
		snprintf(key, sizeof(key), "task %s %s", fields[0],
			 optrace_variant_name(atoi(fields[1])));
	else if (!strcmp(map, "wait"))
		snprintf(key, sizeof(key), "wait %s", optrace_wait_kind_name(atoi(fields[0])));
	else
		return;
	counts_add(counts, key, value);
}

/* Lines like "@mode[demo.add, 0, 1]: 12". */
static void parse_bpftrace_maps(const char *path, struct counts *counts)
{
	char *text = read_file(path), *line, *save;

	ck_assert_ptr_nonnull(text);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char map[32], keys[400];
		long value;

		if (sscanf(line, "@%31[a-z_][%399[^]]]: %ld", map, keys, &value) == 3)
			add_map_line(counts, map, keys, value);
	}
	free(text);
}

/*
 * Runs the demo with demo_args under the started tracer, stops the tracer
 * and reads the demo's ground truth into truth.
 */
static void run_demo_traced(struct tracer *tracer, const char *const demo_args[],
			    struct counts *truth)
{
	char *argv[32], truth_path[256];
	int status, argc = 0, blocks;

	snprintf(truth_path, sizeof(truth_path), "%s/truth.txt", tracer->dir);
	argv[argc++] = DEMO;
	for (int i = 0; demo_args[i]; i++)
		argv[argc++] = (char *)demo_args[i];
	argv[argc++] = "--truth";
	argv[argc++] = truth_path;
	argv[argc++] = "-q";
	argv[argc] = NULL;
	status = run_command(argv, NULL, NULL, 120);
	tracer_stop(tracer);

	ck_assert_msg(status == 0, "optrace-demo failed (status %d)", status);
	blocks = truth_parse(truth_path, truth);
	ck_assert_msg(blocks >= 1, "unreadable ground truth in %s", truth_path);
}

static void check_demo_against_bpftrace(const char *const demo_args[])
{
	struct counts truth = { 0 }, traced = { 0 };
	struct tracer tracer;
	char message[8192], *text;
	const char *why;

	why = bpf_unavailable_reason();
	if (why)
		SKIP_TEST("%s", why);

	tracer_start(&tracer, bpftrace_program);
	run_demo_traced(&tracer, demo_args, &truth);
	ck_assert_msg(counts_get(&truth, "op demo.add 0") + counts_get(&truth, "op demo.zeros 0") +
				      counts_get(&truth, "op demo.sort 0") >
			      0,
		      "the demo reports no operations");
	parse_bpftrace_maps(tracer.out_path, &traced);
	if (counts_diff(&truth, &traced, message, sizeof(message))) {
		text = read_file(tracer.out_path);
		ck_abort_msg(
			"bpftrace's counts differ from the ground truth:\n%s\nbpftrace:\n%.3000s",
			message, text ? text : "");
	}
	counts_free(&truth);
	counts_free(&traced);
	rm_rf(tracer.dir);
	free(tracer.dir);
}

START_TEST(test_bpftrace_lists_every_probe)
{
	char *argv[] = { "bpftrace", "-l", "usdt:" LIBOPTRACE ":*", NULL };
	char path[] = "/tmp/optrace-list-XXXXXX", *text;
	const char *why = bpf_unavailable_reason();
	int fd, status;

	if (why)
		SKIP_TEST("%s", why);
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	status = run_command(argv, path, "/dev/null", 60);
	text = read_file(path);
	unlink(path);
	ck_assert_int_eq(status, 0);
	for (size_t i = 0; i < sizeof(probe_names) / sizeof(probe_names[0]); i++) {
		char needle[64];

		snprintf(needle, sizeof(needle), ":optrace:%s\n", probe_names[i]);
		ck_assert_msg(strstr(text, needle), "bpftrace -l does not list %s:\n%s",
			      probe_names[i], text);
	}
	free(text);
}
END_TEST

START_TEST(test_jacobi_counts)
{
	static const char *const args[] = { "--workload", "jacobi", NULL };

	check_demo_against_bpftrace(args);
}
END_TEST

START_TEST(test_stats_counts)
{
	static const char *const args[] = { "--workload", "stats", NULL };

	check_demo_against_bpftrace(args);
}
END_TEST

START_TEST(test_fallback_counts)
{
	static const char *const args[] = { "--workload", "fallback", NULL };

	check_demo_against_bpftrace(args);
}
END_TEST

START_TEST(test_openmp_and_threads_counts)
{
	static const char *const args[] = { "--workload", "all", "--omp", "2",
					    "--threads",  "2",	 NULL };

	check_demo_against_bpftrace(args);
}
END_TEST

START_TEST(test_child_processes_counts)
{
	static const char *const args[] = { "--workload", "stats", "--procs", "2", NULL };

	check_demo_against_bpftrace(args);
}
END_TEST

/*
 * One probe of the provider alone, as a bpftrace one-liner would attach it.
 * Each of its maps is compared with the sum of some ground truth records:
 * key fields fields[] of truth records (1: the first after the kind), plus
 * constant; the map's key fields turned into names by names[] (NULL: as
 * printed).
 */
struct probe_map {
	const char *map;
	const char *truth;
	int fields[3];
	const char *(*names[3])(int value);
	const char *constant;
};

struct probe_case {
	const char *probe;
	const char *action;
	struct probe_map maps[2];
};

static const struct probe_case probe_cases[] = {
	{ .probe = "op_begin",
	  .action = "@op[str(arg3), arg2] = count();",
	  .maps = { { .map = "op", .truth = "op", .fields = { 1, 2 } } } },
	{ .probe = "op_end",
	  .action = "@status[arg1] = count();",
	  .maps = { { .map = "status",
		      .truth = "status",
		      .fields = { 2 },
		      .names = { optrace_status_name } } } },
	{ .probe = "op_mode",
	  .action = "@mode[arg1, arg2] = count();",
	  .maps = { { .map = "mode",
		      .truth = "mode",
		      .fields = { 2, 3 },
		      .names = { optrace_mode_name, optrace_mode_reason_name } } } },
	{ .probe = "op_fallback",
	  .action = "@fallback[arg1] = count();",
	  .maps = { { .map = "fallback",
		      .truth = "fallback",
		      .fields = { 2 },
		      .names = { optrace_fallback_reason_name } } } },
	{ .probe = "task_launch",
	  .action = "@launch[str(arg3)] = count(); @points[str(arg3)] = sum(arg4);",
	  .maps = { { .map = "launch", .truth = "launch", .fields = { 1 } },
		    { .map = "points", .truth = "points", .fields = { 1 } } } },
	{ .probe = "task_begin",
	  .action = "@task[arg2] = count();",
	  .maps = { { .map = "task",
		      .truth = "task",
		      .fields = { 2 },
		      .names = { optrace_variant_name } } } },
	/* The truth counts task_begin; the demo ends every task point ok. */
	{ .probe = "task_end",
	  .action = "@task_end[arg2] = count();",
	  .maps = { { .map = "task_end",
		      .truth = "task",
		      .names = { optrace_status_name },
		      .constant = "ok" } } },
	{ .probe = "wait_begin",
	  .action = "@wait[arg1] = count();",
	  .maps = { { .map = "wait",
		      .truth = "wait",
		      .fields = { 1 },
		      .names = { optrace_wait_kind_name } } } },
	/* The truth counts wait_begin; every wait ends. */
	{ .probe = "wait_end",
	  .action = "@wait_end[arg1] = count();",
	  .maps = { { .map = "wait_end",
		      .truth = "wait",
		      .fields = { 1 },
		      .names = { optrace_wait_kind_name } } } },
};

#define PROBE_CASES ((int)(sizeof(probe_cases) / sizeof(probe_cases[0])))

static const struct probe_map *probe_case_map(const struct probe_case *pc, const char *map)
{
	for (size_t i = 0; i < sizeof(pc->maps) / sizeof(pc->maps[0]) && pc->maps[i].map; i++)
		if (!strcmp(pc->maps[i].map, map))
			return &pc->maps[i];
	return NULL;
}

/* The ground truth as the maps of pc count it. */
static void probe_case_expect(const struct probe_case *pc, const struct counts *truth,
			      struct counts *expected)
{
	for (size_t m = 0; m < sizeof(pc->maps) / sizeof(pc->maps[0]) && pc->maps[m].map; m++) {
		const struct probe_map *map = &pc->maps[m];
		long total = 0;

		for (size_t e = 0; e < truth->length; e++) {
			char record[512], key[512], *fields[8], *save, *field;
			int n = 0;
			size_t used;

			snprintf(record, sizeof(record), "%s", truth->entries[e].key);
			for (field = strtok_r(record, " ", &save); field && n < 8;
			     field = strtok_r(NULL, " ", &save))
				fields[n++] = field;
			if (!n || strcmp(fields[0], map->truth))
				continue;
			used = snprintf(key, sizeof(key), "%s", map->map);
			for (int f = 0; f < 3 && map->fields[f]; f++) {
				ck_assert_int_lt(map->fields[f], n);
				used += snprintf(key + used, sizeof(key) - used, " %s",
						 fields[map->fields[f]]);
			}
			if (map->constant)
				snprintf(key + used, sizeof(key) - used, " %s", map->constant);
			counts_add(expected, key, truth->entries[e].count);
			total += truth->entries[e].count;
		}
		ck_assert_msg(total > 0, "the workload makes no %s call for @%s", pc->probe,
			      map->map);
	}
}

/* bpftrace's lines "@wait[1]: 5" for the maps of pc, keyed as expected. */
static void probe_case_parse(const struct probe_case *pc, const char *path, struct counts *traced)
{
	char *text = read_file(path), *line, *save;

	ck_assert_ptr_nonnull(text);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[32], keys[400], key[512], *rest = keys, *field;
		const struct probe_map *map;
		size_t used;
		long value;

		if (sscanf(line, "@%31[a-z_][%399[^]]]: %ld", name, keys, &value) != 3)
			continue;
		map = probe_case_map(pc, name);
		if (!map) {
			counts_add(traced, line, 1);
			continue;
		}
		used = snprintf(key, sizeof(key), "%s", map->map);
		for (int f = 0; (field = strsep(&rest, ",")); f++) {
			field += strspn(field, " ");
			if (f < 3 && map->names[f])
				field = (char *)map->names[f](atoi(field));
			used += snprintf(key + used, sizeof(key) - used, " %s", field);
		}
		counts_add(traced, key, value);
	}
	free(text);
}

/*
 * A bpftrace one-liner on any single probe counts exactly what the runtime
 * did: the ids that the probes carry are made while any probe is armed.
 */
START_TEST(test_single_probe_counts)
{
	static const char *const args[] = {
		"--workload", "all",   "--size", "5000",	  "--iterations",
		"10",	      "--omp", "1",	 "--omp-threads", "1",
		"--threads",  "2",     NULL
	};
	const struct probe_case *pc = &probe_cases[_i];
	struct counts truth = { 0 }, expected = { 0 }, traced = { 0 };
	char program[1024], message[8192], *text;
	struct tracer tracer;

	NEED_BPF();
	snprintf(program, sizeof(program),
		 "BEGIN { printf(\"ready\\n\"); }\n"
		 "usdt:" LIBOPTRACE ":optrace:%s { %s }\n",
		 pc->probe, pc->action);
	tracer_start(&tracer, program);
	run_demo_traced(&tracer, args, &truth);
	probe_case_expect(pc, &truth, &expected);
	probe_case_parse(pc, tracer.out_path, &traced);
	if (counts_diff(&expected, &traced, message, sizeof(message))) {
		text = read_file(tracer.out_path);
		ck_abort_msg("bpftrace on %s alone differs from the ground truth:\n%s\n"
			     "bpftrace:\n%.3000s",
			     pc->probe, message, text ? text : "");
	}
	counts_free(&truth);
	counts_free(&expected);
	counts_free(&traced);
	rm_rf(tracer.dir);
	free(tracer.dir);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("bpftrace");
	TCase *tc = tcase_create("demo");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_bpftrace_lists_every_probe);
	tcase_add_test(tc, test_jacobi_counts);
	tcase_add_test(tc, test_stats_counts);
	tcase_add_test(tc, test_fallback_counts);
	tcase_add_test(tc, test_openmp_and_threads_counts);
	tcase_add_test(tc, test_child_processes_counts);
	tcase_add_loop_test(tc, test_single_probe_counts, 0, PROBE_CASES);
	suite_add_tcase(suite, tc);

	return run_suite(suite);
}
