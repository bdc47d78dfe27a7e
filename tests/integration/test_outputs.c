// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What optrace writes never destroys what was there, and what it reads
 * never hangs it. record, export --chrome and export --legion write beside
 * their output and rename at the end: a record that cannot trace its
 * targets, an export whose input is missing or damaged, a full disk (a file
 * size limit here) or a kill leave an earlier file as it was, and no
 * temporary file behind (but a killed recorder's OUTPUT.partial, which
 * reads). An output that is an input is refused; an export into the
 * directory of an earlier, larger export removes the logs it did not write;
 * a pipe given as an input is refused instead of blocking open().
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/types.h>
#include <optrace/abi.h>
#include <optrace/optrace.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"
#include "bpf/events.h"
#include "capture/capture.h"

#define BASE_PID 6000
#define NAME_ADDRESS 0x1000
/* Enough operations that each export is far larger than FILE_LIMIT. */
#define BIG_OPS 20000
#define FILE_LIMIT (32 * 1024)
#define TIMEOUT_S 60

/* How long a command may take before it counts as hung. */
static int timeout_s = TIMEOUT_S;

/* ---- files ------------------------------------------------------------------------ */

struct blob {
	char *data;
	size_t size;
};

static void read_blob(const char *path, struct blob *blob)
{
	FILE *file = fopen(path, "re");
	long size;

	ck_assert_msg(file, "cannot open %s: %s", path, strerror(errno));
	ck_assert_int_eq(fseek(file, 0, SEEK_END), 0);
	size = ftell(file);
	ck_assert_int_ge(size, 0);
	rewind(file);
	blob->size = (size_t)size;
	blob->data = malloc(blob->size + 1);
	ck_assert_ptr_nonnull(blob->data);
	ck_assert_uint_eq(fread(blob->data, 1, blob->size, file), blob->size);
	fclose(file);
}

/* path holds exactly what it held before. */
static void assert_unchanged(const char *path, const struct blob *before)
{
	struct blob now;

	read_blob(path, &now);
	ck_assert_msg(now.size == before->size && !memcmp(now.data, before->data, now.size),
		      "%s changed: %zu bytes, was %zu", path, now.size, before->size);
	free(now.data);
}

static void write_text(const char *path, const char *text)
{
	FILE *file = fopen(path, "we");

	ck_assert_ptr_nonnull(file);
	fputs(text, file);
	ck_assert_int_eq(fclose(file), 0);
}

/* No temporary file left in dir (OUTPUT.tmp.PID), nor a recorder's OUTPUT.partial. */
static void assert_no_leftovers(const char *dir_path)
{
	struct dirent *entry;
	DIR *dir = opendir(dir_path);

	ck_assert_ptr_nonnull(dir);
	while ((entry = readdir(dir))) {
		ck_assert_msg(!strstr(entry->d_name, ".tmp.") && !strstr(entry->d_name, ".partial"),
			      "%s/%s left behind", dir_path, entry->d_name);
	}
	closedir(dir);
}

/* ---- captures written here ---------------------------------------------------------- */

static int put_event(struct capture_writer *w, uint64_t *now, uint32_t tgid, int type, uint64_t a0,
		     uint64_t a1, uint64_t a2, uint64_t a3)
{
	struct record_event e = {
		.timestamp = *now += 1000,
		.tgid = tgid,
		.tid = tgid,
		.type = (__u16)type,
		.args = { a0, a1, a2, a3, 0 },
	};

	return capture_write(w, e.type, &e, sizeof(e));
}

/* processes processes (ranks 0, 1, ...), each calling demo.add ops times. */
static void write_capture(const char *path, int processes, int ops)
{
	struct capture_writer_opts opts = { .target = "outputs" };
	struct capture_writer *w;
	struct timespec ts;
	uint64_t now;
	int err = 0;

	ck_assert_int_eq(capture_writer_open(&w, path, &opts), 0);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec + 1000000;
	for (int p = 0; p < processes; p++) {
		uint32_t tgid = BASE_PID + (uint32_t)p;
		struct record_string name = {
			.tgid = tgid,
			.tid = tgid,
			.type = RECORD_STRING,
			.address = NAME_ADDRESS,
			.text = "demo.add",
		};

		err = err
			      ?: put_event(w, &now, tgid, RECORD_RT_INIT, OPTRACE_ABI_VERSION,
					   (uint64_t)p, (uint64_t)processes, 0);
		name.timestamp = now += 1000;
		err = err ?: capture_write(w, name.type, &name, sizeof(name));
		for (int i = 1; i <= ops; i++) {
			err = err
				      ?: put_event(w, &now, tgid, RECORD_OP_BEGIN, (uint64_t)i, 0,
						   0, NAME_ADDRESS);
			err = err
				      ?: put_event(w, &now, tgid, RECORD_OP_END, (uint64_t)i,
						   OPTRACE_STATUS_OK, 0, 0);
		}
	}
	ck_assert_int_eq(err, 0);
	ck_assert_int_eq(capture_close(w, NULL, 0), 0);
}

/* ---- running optrace ---------------------------------------------------------------- */

/*
 * Runs argv with stderr into *err_text (the caller frees it), under a file
 * size limit when fsize is not 0 (set in the child only: this process
 * writes Check's messages). Returns the exit status, or -1 if it died of a
 * signal or did not end within timeout_s (a hang).
 */
static int run(char *const argv[], rlim_t fsize, char **err_text)
{
	char *err_path = test_path("stderr.txt");
	struct rlimit limit = { fsize, fsize };
	int status;
	pid_t pid;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int out = open("/dev/null", O_WRONLY);
		int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		/* optrace ignores SIGXFSZ itself: going past the limit is a write error. */
		if (out < 0 || err < 0 || dup2(out, STDOUT_FILENO) < 0 ||
		    dup2(err, STDERR_FILENO) < 0 || (fsize && setrlimit(RLIMIT_FSIZE, &limit)))
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	status = reap_within(pid, 0, timeout_s);
	*err_text = read_file(err_path);
	if (!*err_text)
		*err_text = strdup("");
	free(err_path);
	if (status == -1 || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* optrace ARGS... fails (exit 1) and says what. */
static void expect_failure(char *const argv[], rlim_t fsize, const char *says)
{
	char *text;
	int status = run(argv, fsize, &text);

	ck_assert_msg(status != -1, "optrace %s %s hung or died:\n%s", argv[1], argv[2], text);
	ck_assert_msg(status == 1, "optrace %s %s: exit %d, not 1:\n%s", argv[1], argv[2], status,
		      text);
	ck_assert_msg(!says || strstr(text, says), "optrace %s %s does not say \"%s\":\n%s",
		      argv[1], argv[2], says, text);
	ck_assert_msg(!strstr(text, "wrote "), "optrace %s %s failed but says it wrote:\n%s",
		      argv[1], argv[2], text);
	free(text);
}

static void expect_success(char *const argv[])
{
	char *text;
	int status = run(argv, 0, &text);

	ck_assert_msg(status == 0, "optrace %s %s: exit %d:\n%s", argv[1], argv[2], status, text);
	free(text);
}

/* ---- 1. record: an earlier capture survives a record that fails ------------------- */

static void check_record_keeps(char *pid_text)
{
	char *capture = test_path("keep.capture");
	char *argv[] = { OPTRACE, "record", "-p", pid_text, "-o", capture, NULL };
	struct blob before;

	write_capture(capture, 1, 10);
	read_blob(capture, &before);
	expect_failure(argv, 0, NULL);
	assert_unchanged(capture, &before);
	assert_no_leftovers(test_dir);
	free(before.data);
	free(capture);
}

START_TEST(test_record_without_process_keeps_capture)
{
	NEED_BPF();
	check_record_keeps("4000000");
}
END_TEST

START_TEST(test_record_without_liboptrace_keeps_capture)
{
	char pid_text[16];
	pid_t sleeper;

	NEED_BPF();
	sleeper = fork();
	ck_assert_int_ge(sleeper, 0);
	if (sleeper == 0) {
		execl("/bin/sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	snprintf(pid_text, sizeof(pid_text), "%d", sleeper);
	check_record_keeps(pid_text);
	reap_within(sleeper, SIGKILL, 5);
}
END_TEST

/* A record that succeeds replaces the earlier capture at its end, and leaves nothing else. */
START_TEST(test_record_replaces_at_end)
{
	char *capture = test_path("keep.capture"), *text;
	char *record[] = { OPTRACE, "record", "-q", "-o",      capture,	    "--", DEMO,
			   "-w",    "stats",  "-q", "--truth", "/dev/null", NULL };
	char *report[] = { OPTRACE, "report", capture, NULL };
	struct blob before, after;

	NEED_BPF();
	write_capture(capture, 1, 10);
	read_blob(capture, &before);
	expect_success(record);
	read_blob(capture, &after);
	ck_assert_msg(after.size != before.size || memcmp(after.data, before.data, after.size),
		      "the capture was not replaced");
	assert_no_leftovers(test_dir);
	ck_assert_int_eq(run(report, 0, &text), 0);
	free(text);
	free(before.data);
	free(after.data);
	free(capture);
}
END_TEST

/*
 * A recorder killed with SIGKILL leaves the earlier capture as it was and
 * what it recorded in OUTPUT.partial, which reads; the next record to that
 * output refuses to overwrite it.
 */
START_TEST(test_record_killed_leaves_partial)
{
	char *capture = test_path("keep.capture"), *partial = test_path("keep.capture.partial");
	char *report[] = { OPTRACE, "report", partial, NULL };
	char *again[] = { OPTRACE, "record", "-q", "-p", "1", "-o", capture, NULL };
	char children[64], *text;
	struct blob before, partial_before;
	pid_t recorder, demo;
	struct stat st;

	NEED_BPF();
	write_capture(capture, 1, 10);
	read_blob(capture, &before);
	recorder = fork();
	ck_assert_int_ge(recorder, 0);
	if (recorder == 0) {
		execl(OPTRACE, OPTRACE, "record", "-q", "-o", capture, "--", DEMO, "--forever",
		      "-q", "--truth", "/dev/null", (char *)NULL);
		_exit(127);
	}
	/* A chunk is written every second. */
	for (int i = 0; i < 100 && (stat(partial, &st) || st.st_size < 4096); i++)
		usleep(100 * 1000);
	sleep(2);
	snprintf(children, sizeof(children), "/proc/%d/task/%d/children", recorder, recorder);
	text = read_file(children);
	ck_assert_ptr_nonnull(text);
	demo = atoi(text);
	free(text);
	ck_assert_int_ne(reap_within(recorder, SIGKILL, 20), -1);
	/* The demo, orphaned, goes on: stop it. */
	ck_assert_int_gt(demo, 0);
	kill(demo, SIGTERM);

	assert_unchanged(capture, &before);
	ck_assert_int_eq(run(report, 0, &text), 0);
	ck_assert_msg(strstr(text, "end marker"), "the report does not say it was cut:\n%s", text);
	free(text);

	read_blob(partial, &partial_before);
	expect_failure(again, 0, "keep.capture.partial exists");
	assert_unchanged(capture, &before);
	assert_unchanged(partial, &partial_before);
	free(partial_before.data);
	free(before.data);
	free(capture);
	free(partial);
}
END_TEST

/* ---- 2. export: read the input first, write beside, rename on success -------------- */

/* Every way export --chrome can fail leaves an earlier trace.json as it was. */
START_TEST(test_chrome_failures_keep_output)
{
	char *capture = test_path("s.capture"), *json = test_path("trace.json");
	char *garbage = test_path("garbage.capture"), *missing = test_path("missing.capture");
	char *big = test_path("big.capture"), *soft = test_path("soft.capture");
	char *hard = test_path("hard.capture");
	char *onto_input[] = { OPTRACE, "export", "--chrome", "-o", capture, capture, NULL };
	char *onto_link[] = { OPTRACE, "export", "--chrome", "-o", soft, capture, NULL };
	char *onto_hard[] = { OPTRACE, "export", "--chrome", "-o", hard, capture, NULL };
	char *from_missing[] = { OPTRACE, "export", "--chrome", "-o", json, missing, NULL };
	char *from_garbage[] = { OPTRACE, "export", "--chrome", "-o", json, garbage, NULL };
	char *full_disk[] = { OPTRACE, "export", "--chrome", "-o", json, big, NULL };
	char *good[] = { OPTRACE, "export", "--chrome", "-o", json, capture, NULL };
	struct blob capture_before, json_before;
	struct stat st;

	write_capture(capture, 1, 10);
	write_capture(big, 1, BIG_OPS);
	write_text(garbage, "this is not a capture\n");
	ck_assert_int_eq(symlink(capture, soft), 0);
	ck_assert_int_eq(link(capture, hard), 0);
	read_blob(capture, &capture_before);

	/* The output is the input, by name, through a symlink, through a hard link. */
	expect_failure(onto_input, 0, "input");
	assert_unchanged(capture, &capture_before);
	expect_failure(onto_link, 0, "input");
	assert_unchanged(capture, &capture_before);
	expect_failure(onto_hard, 0, "input");
	assert_unchanged(capture, &capture_before);

	/* An earlier trace.json, with a mode of its own. */
	write_text(json, "{\"traceEvents\":[]}\n");
	ck_assert_int_eq(chmod(json, 0600), 0);
	read_blob(json, &json_before);
	expect_failure(from_missing, 0, "missing.capture");
	assert_unchanged(json, &json_before);
	expect_failure(from_garbage, 0, "not an optrace capture");
	assert_unchanged(json, &json_before);
	expect_failure(full_disk, FILE_LIMIT, "File too large");
	assert_unchanged(json, &json_before);
	assert_no_leftovers(test_dir);

	/* And one that succeeds replaces it, keeping its mode. */
	expect_success(good);
	ck_assert_int_eq(stat(json, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	assert_no_leftovers(test_dir);
	free(capture_before.data);
	free(json_before.data);
	free(capture);
	free(json);
	free(garbage);
	free(missing);
	free(big);
	free(soft);
	free(hard);
}
END_TEST

/* export --legion: a failure leaves the earlier logs as they were, and no temporary file. */
START_TEST(test_legion_failures_keep_output)
{
	char *capture = test_path("s.capture"), *big = test_path("big.capture");
	char *garbage = test_path("garbage.capture"), *out = test_path("prof");
	char *log = test_path("prof/prof_0.gz");
	char *good[] = { OPTRACE, "export", "--legion", "-o", out, capture, NULL };
	char *from_garbage[] = { OPTRACE, "export", "--legion", "-o", out, garbage, NULL };
	char *full_disk[] = { OPTRACE, "export", "--legion", "-o", out, big, NULL };
	char *into_input[] = { OPTRACE, "export", "--legion", "-o", capture, capture, NULL };
	struct blob log_before, capture_before;

	write_capture(capture, 1, 10);
	write_capture(big, 1, BIG_OPS);
	write_text(garbage, "this is not a capture\n");
	expect_success(good);
	read_blob(log, &log_before);
	read_blob(capture, &capture_before);

	expect_failure(from_garbage, 0, "not an optrace capture");
	assert_unchanged(log, &log_before);
	expect_failure(full_disk, FILE_LIMIT, "File too large");
	assert_unchanged(log, &log_before);
	assert_no_leftovers(out);
	expect_failure(into_input, 0, "not a directory");
	assert_unchanged(capture, &capture_before);
	free(log_before.data);
	free(capture_before.data);
	free(capture);
	free(big);
	free(garbage);
	free(out);
	free(log);
}
END_TEST

/* ---- 3. export --legion into the directory of an earlier, larger export ------------ */

START_TEST(test_legion_removes_stale_logs)
{
	char *three = test_path("three.capture"), *one = test_path("one.capture");
	char *out = test_path("prof"), *text, path[4096];
	char *first[] = { OPTRACE, "export", "--legion", "-o", out, three, NULL };
	char *second[] = { OPTRACE, "export", "--legion", "-o", out, one, NULL };
	char *from_inside[] = { OPTRACE, "export", "--legion", "-o", out, path, NULL };
	static const char *const kept[] = { "notes.txt", "prof_x.gz", "prof_1.gz.bak", "prof_.gz" };

	write_capture(three, 3, 5);
	write_capture(one, 1, 5);
	expect_success(first);
	for (int node = 0; node < 3; node++) {
		snprintf(path, sizeof(path), "%s/prof_%d.gz", out, node);
		ck_assert_msg(!access(path, F_OK), "no %s", path);
	}
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", out, kept[i]);
		write_text(path, "not optrace's\n");
	}

	ck_assert_int_eq(run(second, 0, &text), 0);
	ck_assert_msg(strstr(text, "removed 2 logs"), "%s", text);
	free(text);
	snprintf(path, sizeof(path), "%s/prof_0.gz", out);
	ck_assert_msg(!access(path, F_OK), "no %s", path);
	for (int node = 1; node < 3; node++) {
		snprintf(path, sizeof(path), "%s/prof_%d.gz", out, node);
		ck_assert_msg(access(path, F_OK), "%s, an earlier export's, is still there", path);
	}
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", out, kept[i]);
		ck_assert_msg(!access(path, F_OK), "%s, not optrace's, was removed", path);
	}

	/* A capture named like a log, in that directory and read by the export, stays. */
	snprintf(path, sizeof(path), "%s/prof_7.gz", out);
	ck_assert_int_eq(rename(three, path), 0);
	expect_success(from_inside);
	ck_assert_msg(!access(path, F_OK), "the input %s was removed", path);
	free(three);
	free(one);
	free(out);
}
END_TEST

/* ---- 6. an input that is a pipe is refused, not waited on ------------------------- */

START_TEST(test_pipe_inputs_refused)
{
	char *fifo = test_path("fifo"), *capture = test_path("s.capture");
	char *json = test_path("trace.json"), *out = test_path("prof");
	char *commands[][10] = {
		{ OPTRACE, "report", fifo, NULL },
		{ OPTRACE, "report", "--dump", fifo, NULL },
		{ OPTRACE, "report", "--gpu", fifo, capture, NULL },
		{ OPTRACE, "export", "--chrome", "-o", json, fifo, NULL },
		{ OPTRACE, "export", "--chrome", "-o", json, "--gpu", fifo, capture, NULL },
		{ OPTRACE, "export", "--legion", "-o", out, fifo, NULL },
		{ OPTRACE, "list", fifo, NULL },
	};
	struct blob json_before;

	timeout_s = 10; /* each would wait for ever for a writer */
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	write_capture(capture, 1, 10);
	write_text(json, "{}\n");
	read_blob(json, &json_before);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		/* --dump says why on stdout, with the dump */
		expect_failure(commands[i], 0, i == 1 ? NULL : "not a regular file");
	assert_unchanged(json, &json_before);
	ck_assert_msg(access(out, F_OK), "export --legion created %s", out);
	free(json_before.data);
	free(fifo);
	free(capture);
	free(json);
	free(out);
}
END_TEST

/* `cat run.capture | optrace report /dev/stdin`: refused, saying why. */
START_TEST(test_report_from_stdin_pipe_refused)
{
	char *capture = test_path("s.capture"), command[4096];
	char *argv[] = { "/bin/sh", "-c", command, NULL };
	char *text;
	int status;

	timeout_s = 10;
	write_capture(capture, 1, 10);
	snprintf(command, sizeof(command), "cat '%s' | exec %s report /dev/stdin", capture,
		 OPTRACE);
	status = run(argv, 0, &text);
	ck_assert_msg(status == 1, "exit %d:\n%s", status, text);
	ck_assert_msg(strstr(text, "/dev/stdin is not a regular file (a pipe)"), "%s", text);
	free(text);
	free(capture);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("outputs");
	TCase *record = tcase_create("record"), *export = tcase_create("export");
	TCase *inputs = tcase_create("inputs");

	tcase_set_timeout(record, 120);
	tcase_add_checked_fixture(record, test_dir_setup, test_dir_teardown);
	tcase_add_test(record, test_record_without_process_keeps_capture);
	tcase_add_test(record, test_record_without_liboptrace_keeps_capture);
	tcase_add_test(record, test_record_replaces_at_end);
	tcase_add_test(record, test_record_killed_leaves_partial);
	suite_add_tcase(suite, record);

	tcase_set_timeout(export, 120);
	tcase_add_checked_fixture(export, test_dir_setup, test_dir_teardown);
	tcase_add_test(export, test_chrome_failures_keep_output);
	tcase_add_test(export, test_legion_failures_keep_output);
	tcase_add_test(export, test_legion_removes_stale_logs);
	suite_add_tcase(suite, export);

	tcase_set_timeout(inputs, 120);
	tcase_add_checked_fixture(inputs, test_dir_setup, test_dir_teardown);
	tcase_add_test(inputs, test_pipe_inputs_refused);
	tcase_add_test(inputs, test_report_from_stdin_pipe_refused);
	suite_add_tcase(suite, inputs);

	return run_suite(suite);
}
