// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The first end-to-end truth: bpftrace, a tracer we did not write, attached
 * to liboptrace's probes while the demo runs, must count exactly what the
 * demo says it did (its ground truth).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <optrace/abi.h>

#include "testlib.h"

#define LIBOPTRACE OPTRACE_BUILD_DIR "/lib/liboptrace.so.1"

static const char *const probe_names[] = {
	"rt_init",     "op_begin",   "op_end",	 "op_mode",    "op_fallback",
	"task_launch", "task_begin", "task_end", "wait_begin", "wait_end",
};

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

static void tracer_start(struct tracer *tracer)
{
	char program_path[256];
	FILE *program;

	tracer->dir = make_temp_dir();
	ck_assert_ptr_nonnull(tracer->dir);
	snprintf(program_path, sizeof(program_path), "%s/count.bt", tracer->dir);
	snprintf(tracer->out_path, sizeof(tracer->out_path), "%s/bpftrace.out", tracer->dir);
	program = fopen(program_path, "w");
	ck_assert_ptr_nonnull(program);
	fputs(bpftrace_program, program);
	fclose(program);

	tracer->pid = fork();
	ck_assert_int_ge(tracer->pid, 0);
	if (tracer->pid == 0) {
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
		ck_assert_msg(waited < 3000, "bpftrace did not attach within 30 s");
		usleep(10 * 1000);
	}
}

static void tracer_stop(struct tracer *tracer)
{
	int status;

	kill(tracer->pid, SIGINT);
	ck_assert_int_eq(waitpid(tracer->pid, &status, 0), tracer->pid);
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

static void check_demo_against_bpftrace(const char *const demo_args[])
{
	char *argv[32], truth_path[256], message[8192], *text;
	struct counts truth = { 0 }, traced = { 0 };
	struct tracer tracer;
	const char *why;
	int status, argc = 0, blocks;

	why = bpf_unavailable_reason();
	if (why)
		SKIP_TEST("%s", why);

	tracer_start(&tracer);
	snprintf(truth_path, sizeof(truth_path), "%s/truth.txt", tracer.dir);
	argv[argc++] = DEMO;
	for (int i = 0; demo_args[i]; i++)
		argv[argc++] = (char *)demo_args[i];
	argv[argc++] = "--truth";
	argv[argc++] = truth_path;
	argv[argc++] = "-q";
	argv[argc] = NULL;
	status = run_command(argv, NULL, NULL, 120);
	tracer_stop(&tracer);

	ck_assert_msg(status == 0, "optrace-demo failed (status %d)", status);
	blocks = truth_parse(truth_path, &truth);
	ck_assert_msg(blocks >= 1, "unreadable ground truth in %s", truth_path);
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
	suite_add_tcase(suite, tc);

	return run_suite(suite);
}
