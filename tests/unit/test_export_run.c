// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The export driver (session/export_run.c) and the table of formats
 * (output/export_formats.c), without root: a format of the test's own sees
 * its hooks called in order, a first pass over every record before begin,
 * the profile's operations through its consumer, and an output put in
 * place only when the export succeeded; report's real row writes its text
 * to -o.
 */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"
#include "bpf/events.h"
#include "capture/capture.h"
#include "output/export_format.h"
#include "session/export_run.h"

#define OPS 3

/* ---- a capture: OPS operations on one thread, each with its name ---------- */

static void put_record(struct capture_writer *w, struct record_event event, uint64_t at)
{
	event.timestamp = at;
	event.tgid = (uint32_t)getpid();
	event.tid = event.tgid;
	ck_assert_int_eq(capture_write(w, event.type, &event, sizeof(event)), 0);
}

static char *write_ops(const char *name)
{
	struct record_string text = { .type = RECORD_STRING, .address = 0x1000 };
	struct timespec now;
	struct capture_writer *w;
	char *path = test_path(name);
	uint64_t at;

	clock_gettime(CLOCK_MONOTONIC, &now);
	at = (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
	ck_assert_int_eq(capture_writer_open(&w, path, NULL), 0);
	text.timestamp = at;
	text.tgid = text.tid = (uint32_t)getpid();
	snprintf(text.text, sizeof(text.text), "demo.add");
	ck_assert_int_eq(capture_write(w, RECORD_STRING, &text, sizeof(text)), 0);
	for (uint64_t op = 1; op <= OPS; op++) {
		put_record(w,
			   (struct record_event){ .type = RECORD_OP_BEGIN,
						  .args = { op, 0, 0, 0x1000 } },
			   at + op * 1000);
		put_record(w, (struct record_event){ .type = RECORD_OP_END, .args = { op } },
			   at + op * 1000 + 500);
	}
	ck_assert_int_eq(capture_close(w, NULL, 0), 0);
	return path;
}

/* ---- a format of the test's own, which says what it was given -------------- */

static struct {
	int first_passes, begins, ends, ops_done;
	unsigned long records_seen;    /* by the first pass */
	int end_err;		       /* what end was given */
	bool output_in_place_at_begin; /* the final name already held this run's output */
	int fail_end;		       /* end returns this */
	const char *output;
} seen;

struct fake_state {
	int magic;
};

static int count_record(void *ctx, unsigned int type, const void *record, size_t size)
{
	(void)ctx, (void)type, (void)record, (void)size;
	seen.records_seen++;
	return 0;
}

static int fake_first_pass(void *state, struct export_job *job)
{
	struct fake_state *fake = state;

	ck_assert_int_eq(fake->magic, 0); /* zeroed */
	fake->magic = 42;
	seen.first_passes++;
	return replay_scan(job->replay, count_record, NULL);
}

static void op_done(void *ctx, const struct profile *profile, const struct profile_op *op)
{
	(void)ctx, (void)profile, (void)op;
	seen.ops_done++;
}

static int fake_begin(void *state, struct export_job *job, struct profile_consumer *consumer)
{
	struct fake_state *fake = state;
	char *text = NULL;
	size_t size = 0;
	FILE *final;

	ck_assert_int_eq(fake->magic, 42);
	ck_assert_int_eq(seen.first_passes, 1);
	ck_assert_ptr_nonnull(job->out);
	final = fopen(seen.output, "r");
	if (final) {
		seen.output_in_place_at_begin =
			getdelim(&text, &size, '\0', final) > 0 && strstr(text, "fake");
		fclose(final);
		free(text);
	}
	seen.begins++;
	consumer->op_done = op_done;
	fputs("fake begins\n", job->out);
	return 0;
}

static int fake_end(void *state, struct export_job *job, int err)
{
	(void)state;
	seen.ends++;
	seen.end_err = err;
	if (job->out) /* NULL: no output was opened (begin was not called) */
		fprintf(job->out, "fake ends: %d operations\n", seen.ops_done);
	return seen.fail_end ?: err;
}

static const struct export_format fake_format = {
	.name = "fake",
	.target = EXPORT_FILE,
	.state_size = sizeof(struct fake_state),
	.first_pass = fake_first_pass,
	.begin = fake_begin,
	.end = fake_end,
};

/* Exports capture into output in format; the fake's end then returns fail_end. */
static int run_export(const struct export_format *format, const char *capture, const char *output,
		      int fail_end)
{
	const char *paths[] = { capture };
	const struct export_options options = {
		.output = output,
		.paths = paths,
		.path_count = 1,
		.inputs = paths,
		.input_count = 1,
	};

	memset(&seen, 0, sizeof(seen));
	seen.output = output;
	seen.fail_end = fail_end;
	return export_run(format, &options);
}

static void write_text(const char *path, const char *text)
{
	FILE *file = fopen(path, "w");

	ck_assert_ptr_nonnull(file);
	fputs(text, file);
	ck_assert_int_eq(fclose(file), 0);
}

static int entries(void)
{
	DIR *dir = opendir(test_dir);
	int count = 0;

	ck_assert_ptr_nonnull(dir);
	while (readdir(dir))
		count++;
	closedir(dir);
	return count - 2; /* . and .. */
}

/* ---- the table -------------------------------------------------------------- */

START_TEST(test_table_rows)
{
	size_t count = 0;

	for (; export_formats[count]; count++) {
		const struct export_format *format = export_formats[count];

		ck_assert_ptr_nonnull(format->name);
		ck_assert_ptr_nonnull(format->begin);
		ck_assert_ptr_nonnull(format->end);
		ck_assert_uint_gt(format->state_size, 0);
		ck_assert_ptr_eq(export_format_find(format->name), format);
	}
	ck_assert_uint_eq(count, 4);
	ck_assert_ptr_null(export_format_find("pprof"));
	/* report is its own command: no export flag, printed rather than written. */
	ck_assert_ptr_null(export_format_find("report")->help);
	ck_assert_int_eq(export_format_find("report")->target, EXPORT_PRINT);
	ck_assert_int_eq(export_format_find("chrome")->target, EXPORT_FILE);
	ck_assert_int_eq(export_format_find("perfetto")->target, EXPORT_FILE);
	/* Legion's logs: one per process, known only after a first pass. */
	ck_assert_int_eq(export_format_find("legion")->target, EXPORT_FOLDER);
	ck_assert_ptr_nonnull(export_format_find("legion")->first_pass);
}
END_TEST

/* ---- the driver ------------------------------------------------------------- */

START_TEST(test_hooks_in_order)
{
	char *capture = write_ops("ops.capture"), *output = test_path("out.txt"), *text;

	ck_assert_int_eq(run_export(&fake_format, capture, output, 0), 0);
	ck_assert_int_eq(seen.first_passes, 1);
	ck_assert_uint_eq(seen.records_seen, 1 + 2 * OPS);
	ck_assert_int_eq(seen.begins, 1);
	ck_assert_int_eq(seen.ends, 1);
	ck_assert_int_eq(seen.end_err, 0);
	ck_assert_int_eq(seen.ops_done, OPS);
	/* Written beside its name, put in place once whole. */
	ck_assert(!seen.output_in_place_at_begin);
	text = read_file(output);
	ck_assert_ptr_nonnull(text);
	ck_assert_str_eq(text, "fake begins\nfake ends: 3 operations\n");
	ck_assert_int_eq(entries(), 2);
	free(text);
	free(output);
	free(capture);
}
END_TEST

/* An export whose format fails leaves the earlier output as it was, and no temporary. */
START_TEST(test_failure_keeps_earlier_output)
{
	char *capture = write_ops("ops.capture"), *output = test_path("out.txt"), *text;

	write_text(output, "an earlier export\n");
	ck_assert_int_eq(run_export(&fake_format, capture, output, -EIO), -EIO);
	ck_assert_int_eq(seen.ends, 1);
	text = read_file(output);
	ck_assert_str_eq(text, "an earlier export\n");
	ck_assert_int_eq(entries(), 2);
	free(text);
	free(output);
	free(capture);
}
END_TEST

/* A capture that cannot be opened: no hook runs, no output is made. */
START_TEST(test_missing_capture_touches_nothing)
{
	char *capture = test_path("missing.capture"), *output = test_path("out.txt");

	ck_assert_int_lt(run_export(&fake_format, capture, output, 0), 0);
	ck_assert_int_eq(seen.first_passes + seen.begins + seen.ends, 0);
	ck_assert_int_ne(access(output, F_OK), 0);
	free(output);
	free(capture);
}
END_TEST

/* An output that is the capture: refused before begin; the capture stays whole. */
START_TEST(test_output_onto_input_refused)
{
	char *capture = write_ops("ops.capture");
	struct stat before, after;

	ck_assert_int_eq(stat(capture, &before), 0);
	ck_assert_int_lt(run_export(&fake_format, capture, capture, 0), 0);
	ck_assert_int_eq(seen.first_passes, 1);
	ck_assert_int_eq(seen.begins, 0);
	ck_assert_int_eq(seen.ends, 1); /* to free what the first pass held */
	ck_assert_int_eq(stat(capture, &after), 0);
	ck_assert_uint_eq(before.st_ino, after.st_ino);
	ck_assert_uint_eq(before.st_size, after.st_size);
	ck_assert_int_eq(entries(), 1);
	free(capture);
}
END_TEST

/* report's row through the driver: its text in the file -o names. */
START_TEST(test_report_row_to_file)
{
	char *capture = write_ops("ops.capture"), *output = test_path("report.txt"), *text;

	ck_assert_int_eq(run_export(export_format_find("report"), capture, output, 0), 0);
	text = read_file(output);
	ck_assert_ptr_nonnull(text);
	ck_assert_msg(strstr(text, "capture ") && strstr(text, "demo.add"), "report:\n%s", text);
	free(text);
	free(output);
	free(capture);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("export_run");
	TCase *table = tcase_create("table"), *driver = tcase_create("driver");

	tcase_add_test(table, test_table_rows);
	suite_add_tcase(suite, table);
	tcase_add_checked_fixture(driver, test_dir_setup, test_dir_teardown);
	tcase_add_test(driver, test_hooks_in_order);
	tcase_add_test(driver, test_failure_keeps_earlier_output);
	tcase_add_test(driver, test_missing_capture_touches_nothing);
	tcase_add_test(driver, test_output_onto_input_refused);
	tcase_add_test(driver, test_report_row_to_file);
	suite_add_tcase(suite, driver);
	return run_suite(suite);
}
