// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "json_read.h"
#include "trace/runtime_info.h"
#include "testlib.h"

void test_skip(const char *test, const char *format, ...)
{
	const char *ci = getenv("CI");
	char reason[512];
	va_list ap;

	va_start(ap, format);
	vsnprintf(reason, sizeof(reason), format, ap);
	va_end(ap);
	if (ci && !strcmp(ci, "true"))
		ck_abort_msg("%s: cannot run (%s), and CI=true does not allow a skip", test,
			     reason);
	fprintf(stderr, "SKIP: %s: %s\n", test, reason);
}

bool have_program(const char *name)
{
	char command[256];

	snprintf(command, sizeof(command), "command -v %s >/dev/null 2>&1", name);
	return system(command) == 0;
}

const char *bpf_unavailable_reason(void)
{
	if (geteuid() != 0)
		return "needs root to load BPF programs";
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		return "no kernel BTF (/sys/kernel/btf/vmlinux)";
	if (access("/sys/kernel/tracing/uprobe_events", F_OK) &&
	    mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) &&
	    access("/sys/kernel/debug/tracing/uprobe_events", F_OK))
		return "no tracefs with uprobe_events (mount -t tracefs nodev /sys/kernel/tracing)";
	if (!have_program("bpftrace"))
		return "bpftrace is not installed (scripts/deps.sh)";
	return NULL;
}

char *test_dir;

void test_dir_setup(void)
{
	test_dir = make_temp_dir();
	ck_assert_ptr_nonnull(test_dir);
}

void test_dir_teardown(void)
{
	rm_rf(test_dir);
	free(test_dir);
	test_dir = NULL;
}

char *test_path(const char *name)
{
	char *path;

	ck_assert_int_gt(asprintf(&path, "%s/%s", test_dir, name), 0);
	return path;
}

int run_suite(Suite *suite)
{
	SRunner *runner = srunner_create(suite);
	int failed;

	srunner_run_all(runner, CK_NORMAL);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? 1 : 0;
}

int reap_within(pid_t pid, int signo, int grace_s)
{
	struct timespec pause = { 0, 20 * 1000 * 1000 };
	int status;

	if (signo)
		kill(pid, signo);
	for (int waited_ms = 0; waited_ms < grace_s * 1000; waited_ms += 20) {
		pid_t done = waitpid(pid, &status, WNOHANG);

		if (done == pid)
			return status;
		if (done < 0)
			return -1;
		nanosleep(&pause, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

/* In a child: stdout to out_path (NULL: /dev/null), stderr to err_path (NULL: kept), exec argv. */
static void __attribute__((noreturn))
exec_redirected(char *const argv[], const char *out_path, const char *err_path, bool own_group)
{
	int out = open(out_path ? out_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (out < 0 || dup2(out, STDOUT_FILENO) < 0)
		_exit(126);
	if (err_path) {
		int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (err < 0 || dup2(err, STDERR_FILENO) < 0)
			_exit(126);
	}
	if (own_group)
		setpgid(0, 0);
	execvp(argv[0], argv);
	_exit(127);
}

int run_command(char *const argv[], const char *out_path, const char *err_path, int timeout_s)
{
	struct timespec pause = { 0, 20 * 1000 * 1000 };
	int status, waited_ms = 0;
	pid_t pid, done;

	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		exec_redirected(argv, out_path, err_path, true);
	for (;;) {
		done = waitpid(pid, &status, WNOHANG);
		if (done == pid)
			return status;
		if (done < 0)
			return -1;
		if (waited_ms >= timeout_s * 1000) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -1;
		}
		nanosleep(&pause, NULL);
		waited_ms += 20;
	}
}

pid_t spawn_command(char *const argv[], const char *out_path, const char *err_path)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		exec_redirected(argv, out_path, err_path, false);
	return pid;
}

/* Whether child pid has ended (left a zombie to reap), without reaping it. */
static bool child_ended(pid_t pid)
{
	siginfo_t info = { 0 };

	return waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) < 0 ||
	       info.si_pid == pid;
}

static bool file_holds(const char *path, const char *text)
{
	char *content = read_file(path);
	bool found = content && strstr(content, text);

	free(content);
	return found;
}

bool wait_for_text(const char *path, const char *text, pid_t pid, int timeout_s)
{
	struct timespec pause = { 0, 20 * 1000 * 1000 };

	for (int waited_ms = 0; waited_ms < timeout_s * 1000; waited_ms += 20) {
		if (file_holds(path, text))
			return true;
		if (pid > 0 && child_ended(pid))
			break;
		nanosleep(&pause, NULL);
	}
	return file_holds(path, text); /* it may have been written just before the end */
}

pid_t start_tracer(char *const argv[], const char *out_path, const char *err_path, const char *says)
{
	pid_t pid = spawn_command(argv, out_path, err_path);
	char *err_text;

	if (wait_for_text(err_path, says, pid, 120))
		return pid;
	err_text = read_file(err_path);
	reap_within(pid, SIGKILL, 10);
	ck_abort_msg("optrace %s did not say \"%s\" within 120 s:\n%s", argv[1], says,
		     err_text ? err_text : "");
	return -1;
}

/* Whether pid runs another program than this test: a fork is this test until its exec. */
static bool exec_done(pid_t pid)
{
	char path[64], exe[PATH_MAX], own[PATH_MAX];
	ssize_t length, own_length;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	length = readlink(path, exe, sizeof(exe));
	own_length = readlink("/proc/self/exe", own, sizeof(own));
	return length > 0 && (length != own_length || memcmp(exe, own, (size_t)length));
}

void wait_started(pid_t pid)
{
	struct timespec pause = { 0, 20 * 1000 * 1000 };
	struct optrace_runtime_info info;

	for (int waited_ms = 0; waited_ms < 120 * 1000; waited_ms += 20) {
		/*
		 * Before its exec, the child reads as this test's liboptrace: a
		 * tracer would keep that registry's address for the demo's pid.
		 */
		if (exec_done(pid) && !runtime_info_read(pid, &info))
			return;
		ck_assert_msg(!child_ended(pid), "process %d ended before it started its runtime",
			      pid);
		nanosleep(&pause, NULL);
	}
	ck_abort_msg("process %d did not start its runtime (optrace_rt_init) within 120 s", pid);
}

pid_t start_foreign_process(void)
{
	char *argv[] = { "sleep", "600", NULL }, comm_path[64];
	pid_t pid = spawn_command(argv, NULL, NULL);

	/* Until its exec, the fork is this test, which maps liboptrace. */
	snprintf(comm_path, sizeof(comm_path), "/proc/%d/comm", pid);
	ck_assert_msg(wait_for_text(comm_path, "sleep", pid, 120), "sleep %d did not start", pid);
	return pid;
}

pid_t start_demo_forever(const char *workload)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		execl(DEMO, DEMO, "--forever", "--workload", workload, "-q", "--truth", "/dev/null",
		      (char *)NULL);
		_exit(127);
	}
	wait_started(pid);
	return pid;
}

char *squeeze_spaces(char *text)
{
	char *out = text;
	bool line_start = true;

	for (const char *in = text; *in; in++) {
		if (*in == ' ' && !line_start && in[1] == ' ')
			continue; /* the last of the run is kept */
		line_start = *in == '\n' || (line_start && *in == ' ');
		*out++ = *in;
	}
	*out = '\0';
	return text;
}

char *read_file(const char *path)
{
	FILE *file = fopen(path, "re");
	char *text = NULL;
	size_t size = 0;
	ssize_t got;

	if (!file)
		return NULL;
	got = getdelim(&text, &size, '\0', file);
	fclose(file);
	if (got < 0) {
		free(text);
		return strdup("");
	}
	return text;
}

char *make_temp_dir(void)
{
	char *dir = strdup("/tmp/optrace-test.XXXXXX");

	if (!dir || !mkdtemp(dir)) {
		free(dir);
		return NULL;
	}
	return dir;
}

static int remove_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)sb;
	(void)type;
	(void)ftw;
	return remove(path);
}

void rm_rf(const char *path)
{
	if (path)
		nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void counts_add(struct counts *counts, const char *key, long count)
{
	for (size_t i = 0; i < counts->length; i++) {
		if (!strcmp(counts->entries[i].key, key)) {
			counts->entries[i].count += count;
			return;
		}
	}
	counts->entries = realloc(counts->entries, (counts->length + 1) * sizeof(*counts->entries));
	ck_assert_ptr_nonnull(counts->entries);
	counts->entries[counts->length].key = strdup(key);
	counts->entries[counts->length].count = count;
	counts->length++;
}

long counts_get(const struct counts *counts, const char *key)
{
	for (size_t i = 0; i < counts->length; i++) {
		if (!strcmp(counts->entries[i].key, key))
			return counts->entries[i].count;
	}
	return 0;
}

void counts_free(struct counts *counts)
{
	for (size_t i = 0; i < counts->length; i++)
		free(counts->entries[i].key);
	free(counts->entries);
	counts->entries = NULL;
	counts->length = 0;
}

static int diff_one_way(const struct counts *from, const struct counts *to, bool from_expected,
			char *message, size_t size)
{
	int differences = 0;

	for (size_t i = 0; i < from->length; i++) {
		const struct count_entry *e = &from->entries[i];
		long other = counts_get(to, e->key);
		size_t used = strlen(message);

		/* Keys present on both sides are reported once, from expected. */
		if (other == e->count || (!from_expected && other != 0))
			continue;
		differences++;
		snprintf(message + used, size - used, "  %s: expected %ld, got %ld\n", e->key,
			 from_expected ? e->count : other, from_expected ? other : e->count);
	}
	return differences;
}

int counts_diff(const struct counts *expected, const struct counts *actual, char *message,
		size_t size)
{
	message[0] = '\0';
	return diff_one_way(expected, actual, true, message, size) +
	       diff_one_way(actual, expected, false, message, size);
}

/*
 * "launch TASK COUNT POINTS" (COUNT left in line) becomes "launch TASK" =
 * COUNT and "points TASK" = POINTS. Returns COUNT, or -1.
 */
static long split_launch(struct counts *counts, char *line, long points)
{
	char *last_space = strrchr(line, ' '), *end, key[512];
	long count;

	if (!last_space || last_space == line + 6)
		return -1;
	count = strtol(last_space + 1, &end, 10);
	if (*end || count < 0)
		return -1;
	*last_space = '\0';
	snprintf(key, sizeof(key), "points %s", line + 7);
	counts_add(counts, key, points);
	return count;
}

int truth_parse(const char *path, struct counts *counts)
{
	FILE *file = fopen(path, "re");
	char *line = NULL;
	size_t size = 0;
	int blocks = 0;
	bool inside = false;

	if (!file)
		return -1;
	while (getline(&line, &size, file) > 0) {
		char *last_space, *end;
		long count;

		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#' || line[0] == '\0')
			continue;
		if (!strncmp(line, "begin ", 6)) {
			inside = true;
			continue;
		}
		if (!strncmp(line, "end ", 4)) {
			inside = false;
			blocks++;
			continue;
		}
		last_space = strrchr(line, ' ');
		if (!inside || !last_space)
			goto malformed;
		count = strtol(last_space + 1, &end, 10);
		if (*end || count < 0)
			goto malformed;
		*last_space = '\0';
		if (!strncmp(line, "launch ", 7))
			count = split_launch(counts, line, count);
		if (count < 0)
			goto malformed;
		counts_add(counts, line, count);
	}
	free(line);
	fclose(file);
	return inside ? -1 : blocks;

malformed:
	free(line);
	fclose(file);
	return -1;
}

/*
 * optrace stat --json output as truth-like counts, summed over processes
 * (only_pid 0) or of one process.
 */
void stat_json_counts(const char *json_path, pid_t only_pid, struct counts *counts, int *processes)
{
	char *text = read_file(json_path), key[512];
	struct jv *root = text ? jv_parse(text) : NULL;
	const struct jv *list = jv_get(root, "processes");

	ck_assert_msg(list && list->type == JV_ARRAY, "not optrace's JSON:\n%.2000s",
		      text ? text : "(unreadable)");
	*processes = 0;
	for (size_t p = 0; p < list->count; p++) {
		const struct jv *process = list->items[p], *items;

		if (only_pid && jv_number(process, "pid") != only_pid)
			continue;
		(*processes)++;

		items = jv_get(process, "operations");
		for (size_t i = 0; items && i < items->count; i++) {
			const struct jv *op = items->items[i], *modes = jv_get(op, "modes");
			const char *name = jv_string(op, "name");
			long count = (long)jv_number(op, "count"),
			     errors = (long)jv_number(op, "errors");

			snprintf(key, sizeof(key), "op %s %.0f", name, jv_number(op, "depth"));
			counts_add(counts, key, count);
			snprintf(key, sizeof(key), "status %s ok", name);
			if (count - errors)
				counts_add(counts, key, count - errors);
			snprintf(key, sizeof(key), "status %s error", name);
			if (errors)
				counts_add(counts, key, errors);
			for (size_t m = 0; modes && m < modes->count; m++) {
				if (!strcmp(jv_string(modes->items[m], "mode"), "unset"))
					continue;
				snprintf(key, sizeof(key), "mode %s %s %s", name,
					 jv_string(modes->items[m], "mode"),
					 jv_string(modes->items[m], "reason"));
				counts_add(counts, key, (long)jv_number(modes->items[m], "count"));
			}
		}
		items = jv_get(process, "fallbacks");
		for (size_t i = 0; items && i < items->count; i++) {
			snprintf(key, sizeof(key), "fallback %s %s",
				 jv_string(items->items[i], "operation"),
				 jv_string(items->items[i], "reason"));
			counts_add(counts, key, (long)jv_number(items->items[i], "count"));
		}
		items = jv_get(process, "launches");
		for (size_t i = 0; items && i < items->count; i++) {
			snprintf(key, sizeof(key), "launch %s", jv_string(items->items[i], "name"));
			counts_add(counts, key, (long)jv_number(items->items[i], "count"));
			snprintf(key, sizeof(key), "points %s", jv_string(items->items[i], "name"));
			counts_add(counts, key, (long)jv_number(items->items[i], "points"));
		}
		items = jv_get(process, "tasks");
		for (size_t i = 0; items && i < items->count; i++) {
			snprintf(key, sizeof(key), "task %s %s", jv_string(items->items[i], "name"),
				 jv_string(items->items[i], "variant"));
			counts_add(counts, key, (long)jv_number(items->items[i], "count"));
		}
		items = jv_get(process, "waits");
		for (size_t i = 0; items && i < items->count; i++) {
			snprintf(key, sizeof(key), "wait %s", jv_string(items->items[i], "kind"));
			counts_add(counts, key, (long)jv_number(items->items[i], "count"));
		}
	}
	ck_assert_msg(jv_number(jv_get(root, "lost"), "map_full") == 0, "optrace lost events");
	jv_free(root);
	free(text);
}
