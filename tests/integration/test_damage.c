// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Damaged captures through the commands a user runs: a real capture is cut,
 * has bytes flipped and garbage appended, and report and both exports run on
 * each copy. Never a crash or a hang, never an output file left empty or
 * half-written, and never a silent success: a damaged input is said.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"

static char *capture_text; /* the whole capture */
static size_t capture_size;

static void write_bytes(const char *path, const char *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data, size), (ssize_t)size);
	close(fd);
}

static char *read_bytes(const char *path, size_t *size)
{
	struct stat st;
	char *data;
	int fd = open(path, O_RDONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	data = malloc((size_t)st.st_size + 1);
	ck_assert_int_eq(read(fd, data, (size_t)st.st_size), st.st_size);
	close(fd);
	*size = (size_t)st.st_size;
	return data;
}

/* Says the input is damaged: in what it printed, or by failing. */
static bool said_damaged(int status, const char *out_path, const char *err_path)
{
	static const char *const words[] = { "cut",	   "corrupt", "damaged",
					     "truncated",  "garbage", "not an optrace",
					     "end marker", "LOST",    NULL };
	char *out = read_file(out_path), *err = read_file(err_path);
	bool said = WIFEXITED(status) && WEXITSTATUS(status) != 0;

	for (int i = 0; !said && words[i]; i++)
		said = (out && strstr(out, words[i])) || (err && strstr(err, words[i]));
	free(out);
	free(err);
	return said;
}

/* Whether stderr names the file at most once: the damage said once (issue 43). */
static bool said_once(const char *err_path, const char *file)
{
	char *err = read_file(err_path);
	const char *at = err ? strstr(err, file) : NULL;
	bool once = !at || !strstr(at + strlen(file), file);

	free(err);
	return once;
}

/* One damaged copy through report and the exports. */
static void check_copy(const char *what, const char *data, size_t size)
{
	char *copy = test_path("damaged.capture"), *out = test_path("out.txt");
	char *err = test_path("err.txt"), *json = test_path("trace.json");
	char *legion = test_path("legion");
	char *report[] = { OPTRACE, "report", copy, NULL };
	char *chrome[] = { OPTRACE, "export", "--chrome", "-o", json, copy, NULL };
	char *legion_export[] = { OPTRACE, "export", "--legion", "-o", legion, copy, NULL };
	struct stat st;
	int status;

	write_bytes(copy, data, size);
	status = run_command(report, out, err, 30);
	ck_assert_msg(status != -1, "%s: report hung", what);
	ck_assert_msg(WIFEXITED(status), "%s: report died of signal %d", what, WTERMSIG(status));
	ck_assert_msg(said_damaged(status, out, err), "%s: report said nothing of the damage",
		      what);
	ck_assert_msg(said_once(err, copy), "%s: report said the damage twice", what);

	unlink(json);
	status = run_command(chrome, NULL, err, 30);
	ck_assert_msg(status != -1 && WIFEXITED(status), "%s: export --chrome hung or died", what);
	if (WEXITSTATUS(status))
		ck_assert_msg(stat(json, &st) != 0, "%s: a failed export left %s", what, json);
	else
		ck_assert_msg(stat(json, &st) == 0 && st.st_size > 0, "%s: empty trace", what);

	status = run_command(legion_export, NULL, err, 30);
	ck_assert_msg(status != -1 && WIFEXITED(status), "%s: export --legion hung or died", what);
	free(copy);
	free(out);
	free(err);
	free(json);
	free(legion);
}

START_TEST(test_damaged_captures)
{
	char *capture = test_path("good.capture"), *copy, what[64];
	char *record[] = { OPTRACE, "record", "-q", "-o",      capture,	    "--", DEMO,
			   "-w",    "stats",  "-q", "--truth", "/dev/null", NULL };

	NEED_BPF();
	ck_assert_int_eq(run_command(record, NULL, NULL, 120), 0);
	capture_text = read_bytes(capture, &capture_size);
	ck_assert_uint_gt(capture_size, 1024);
	/* The words below are not in what an intact capture's report says. */
	{
		char *out = test_path("out.txt"), *err = test_path("err.txt");
		char *report[] = { OPTRACE, "report", capture, NULL };

		ck_assert(!said_damaged(run_command(report, out, err, 30), out, err));
		free(out);
		free(err);
	}
	copy = malloc(capture_size + 4096);
	srand(42);
	/* Cut: inside the header, inside a chunk, inside the end marker. */
	for (int i = 0; i < 12; i++) {
		size_t at = i < 4 ? (size_t)i * 40 + 1 : (size_t)rand() % (capture_size - 1) + 1;

		snprintf(what, sizeof(what), "cut at %zu of %zu", at, capture_size);
		check_copy(what, capture_text, at);
	}
	/* A byte flipped anywhere. */
	for (int i = 0; i < 16; i++) {
		size_t at = (size_t)rand() % capture_size;

		memcpy(copy, capture_text, capture_size);
		copy[at] ^= (char)(1 + rand() % 255);
		snprintf(what, sizeof(what), "byte %zu of %zu flipped", at, capture_size);
		check_copy(what, copy, capture_size);
	}
	/* Garbage after a clean end. */
	memcpy(copy, capture_text, capture_size);
	memset(copy + capture_size, 0x5a, 4096);
	check_copy("4096 bytes appended", copy, capture_size + 4096);
	free(copy);
	free(capture_text);
	free(capture);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("damage");
	TCase *tc = tcase_create("damage");

	tcase_set_timeout(tc, 600);
	tcase_add_checked_fixture(tc, test_dir_setup, test_dir_teardown);
	tcase_add_test(tc, test_damaged_captures);
	suite_add_tcase(suite, tc);
	return run_suite(suite);
}
