// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The capture formats through optrace report and export: version-1 captures
 * written by the recorder before format 2 (tests/fixtures/captures/) read
 * as they did then; a capture damaged in the middle loses the damaged chunk
 * only, and the report says so; record --capture-format=1 still writes the
 * old format.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json_read.h"
#include "testlib.h"

#define FIXTURES OPTRACE_SOURCE_DIR "/tests/fixtures/captures/"
#define GEN_CAPTURE OPTRACE_BUILD_DIR "/bench/gen_capture"

/* text with every "from" replaced by "to" (to free). */
static char *replaced(const char *text, const char *from, const char *to)
{
	size_t from_length = strlen(from), count = 0;
	char *out, *w;

	for (const char *p = strstr(text, from); p; p = strstr(p + from_length, from))
		count++;
	out = malloc(strlen(text) + count * strlen(to) + 1);
	ck_assert_ptr_nonnull(out);
	w = out;
	for (const char *p = text;;) {
		const char *hit = strstr(p, from);

		if (!hit) {
			strcpy(w, p);
			break;
		}
		memcpy(w, p, (size_t)(hit - p));
		w += hit - p;
		strcpy(w, to);
		w += strlen(to);
		p = hit + from_length;
	}
	return out;
}

/*
 * optrace report --json of a fixture, as the recorder before format 2 read
 * it: the same text, but for the capture's path (the fixture was made as
 * small.capture or gpu.capture), the damage fields that came with format 2
 * and stat's per-process quota (always 0 in a report).
 */
static void check_reads_as_before(const char *name, const char *made_as)
{
	char *capture, *golden_path, *json = test_path("report.json");
	char *report_argv[] = { OPTRACE, "report", "--json", NULL, NULL };
	char *golden, *text, *step1, *step2;

	ck_assert_int_ge(asprintf(&capture, FIXTURES "%s.capture", name), 0);
	ck_assert_int_ge(asprintf(&golden_path, FIXTURES "%s.report.json", name), 0);
	report_argv[3] = capture;
	ck_assert_int_eq(run_command(report_argv, json, NULL, 120), 0);
	text = read_file(json);
	golden = read_file(golden_path);
	step1 = replaced(text, capture, made_as);
	step2 = replaced(step1, "\"chunks_damaged\":0,\"records_damaged\":0,", "");
	free(step1);
	step1 = step2;
	step2 = replaced(step1, "\"rows_refused\":0,", "");
	ck_assert_msg(!strcmp(step2, golden), "%s reads differently now:\n%s\nthen:\n%s", name,
		      step2, golden);
	free(step1);
	free(step2);
	free(text);
	free(golden);
	free(capture);
	free(golden_path);
	free(json);
}

START_TEST(test_version1_reads_as_before)
{
	char *json = test_path("report.json"), *chrome = test_path("trace.json");
	char *report_argv[] = { OPTRACE, "report", "--json", FIXTURES "v1-demo.capture", NULL };
	char *export_argv[] = { OPTRACE, "export", "--chrome",
				"-o",	 chrome,   FIXTURES "v1-demo.capture",
				NULL };
	struct counts truth = { 0 }, traced = { 0 };
	char message[8192], *text, *golden;
	int processes;

	check_reads_as_before("v1-demo", "small.capture");
	check_reads_as_before("v1-cuda-app", "gpu.capture");

	/* And what the demo did, as its truth says. */
	ck_assert_int_eq(run_command(report_argv, json, NULL, 120), 0);
	ck_assert_int_ge(truth_parse(FIXTURES "v1-demo.truth", &truth), 1);
	stat_json_counts(json, 0, &traced, &processes);
	ck_assert_int_eq(processes, 2);
	ck_assert_msg(counts_diff(&truth, &traced, message, sizeof(message)) == 0,
		      "the version-1 capture differs from the ground truth:\n%s", message);
	counts_free(&truth);
	counts_free(&traced);

	/* The Chrome trace, byte for byte. */
	ck_assert_int_eq(run_command(export_argv, NULL, NULL, 120), 0);
	text = read_file(chrome);
	golden = read_file(FIXTURES "v1-demo.chrome.json");
	ck_assert_msg(!strcmp(text, golden), "the Chrome trace of v1-demo.capture changed");
	free(text);
	free(golden);
	free(json);
	free(chrome);
}
END_TEST

/* The byte at offset of path, flipped. */
static void flip_byte(const char *path, long offset)
{
	FILE *file = fopen(path, "r+");
	int byte;

	ck_assert_ptr_nonnull(file);
	ck_assert_int_eq(fseek(file, offset, SEEK_SET), 0);
	byte = fgetc(file);
	ck_assert_int_eq(fseek(file, offset, SEEK_SET), 0);
	fputc(byte ^ 0x5a, file);
	fclose(file);
}

/* A number after key in text ("\"records\":" ...), or -1. */
static long long number_after(const char *text, const char *key)
{
	const char *at = strstr(text, key);

	return at ? atoll(at + strlen(key)) : -1;
}

/*
 * A capture of 1 M events in 11 chunks, a byte of its fifth chunk damaged:
 * report reads the other ten, says which chunk was lost and how many records
 * it held, and the JSON counts them.
 */
START_TEST(test_damaged_chunk_is_skipped)
{
	char *capture = test_path("gen.capture"), *json = test_path("report.json");
	char *dump = test_path("dump.txt"), *err = test_path("err.txt");
	char *gen_argv[] = { GEN_CAPTURE, capture, "1000000", NULL };
	char *dump_argv[] = { OPTRACE, "report", "--dump", capture, NULL };
	char *report_argv[] = { OPTRACE, "report", "--json", capture, NULL };
	long long records, clean_records, fifth, chunk_records;
	char *text, *line, said[160];
	long offset;

	ck_assert_int_eq(run_command(gen_argv, NULL, NULL, 120), 0);
	ck_assert_int_eq(run_command(report_argv, json, NULL, 120), 0);
	text = read_file(json);
	clean_records = number_after(text, "\"records\":");
	free(text);
	ck_assert_int_eq(run_command(dump_argv, dump, NULL, 120), 0);
	text = read_file(dump);
	line = strstr(text, "  chunk 4 at offset ");
	ck_assert_ptr_nonnull(line);
	offset = atol(line + strlen("  chunk 4 at offset "));
	chunk_records = number_after(line, "), ");
	ck_assert_int_gt(chunk_records, 1000);
	free(text);

	flip_byte(capture, offset + 5000);
	ck_assert_int_eq(run_command(report_argv, json, err, 120), 0);
	text = read_file(json);
	records = number_after(text, "\"records\":");
	fifth = number_after(text, "\"records_damaged\":");
	ck_assert_int_eq(fifth, chunk_records);
	ck_assert_int_eq(records, clean_records - chunk_records);
	ck_assert_int_eq(number_after(text, "\"chunks_damaged\":"), 1);
	ck_assert_msg(strstr(text, "\"end\":\"corrupt\""), "%s", text);
	free(text);
	text = read_file(err);
	snprintf(said, sizeof(said), "chunk 4 at offset %ld is damaged (CRC mismatch", offset);
	ck_assert_msg(strstr(text, said), "%s", text);
	snprintf(said, sizeof(said), "1 damaged chunk skipped, %lld records lost", chunk_records);
	ck_assert_msg(strstr(text, said) && strstr(text, "then clean end"), "%s", text);
	free(text);
	free(capture);
	free(json);
	free(dump);
	free(err);
}
END_TEST

/* record --capture-format=1: the old format, which reads to the demo's truth. */
START_TEST(test_record_format_1)
{
	char *capture = test_path("run.capture"), *truth_path = test_path("truth.txt");
	char *json = test_path("report.json"), *dump = test_path("dump.txt"), message[8192];
	char *record[] = { OPTRACE, "record", "-q",	 "--capture-format=1",
			   "-o",    capture,  "--",	 DEMO,
			   "-w",    "stats",  "--truth", truth_path,
			   "-q",    NULL };
	char *report[] = { OPTRACE, "report", "--json", capture, NULL };
	char *dump_argv[] = { OPTRACE, "report", "--dump", capture, NULL };
	struct counts truth = { 0 }, traced = { 0 };
	int processes;
	char *text;

	NEED_BPF();
	ck_assert_int_eq(run_command(record, NULL, dump, 240), 0);
	/* A quiet recording keeps its reorder window: no overload said. */
	text = read_file(dump);
	ck_assert_msg(!text || !strstr(text, "reorder window is cut short"), "%s", text);
	free(text);
	ck_assert_int_eq(run_command(dump_argv, dump, NULL, 120), 0);
	text = read_file(dump);
	ck_assert_msg(strstr(text, ": format 1.0, header "), "%s", text);
	free(text);
	ck_assert_int_eq(run_command(report, json, NULL, 120), 0);
	ck_assert_int_ge(truth_parse(truth_path, &truth), 1);
	stat_json_counts(json, 0, &traced, &processes);
	ck_assert_msg(counts_diff(&truth, &traced, message, sizeof(message)) == 0,
		      "a format-1 capture differs from the ground truth:\n%s", message);
	counts_free(&truth);
	counts_free(&traced);
	free(capture);
	free(truth_path);
	free(json);
	free(dump);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("capture_formats");
	TCase *tc = tcase_create("capture_formats");

	tcase_add_checked_fixture(tc, test_dir_setup, test_dir_teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_version1_reads_as_before);
	tcase_add_test(tc, test_damaged_chunk_is_skipped);
	tcase_add_test(tc, test_record_format_1);
	suite_add_tcase(suite, tc);

	return run_suite(suite);
}
