// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Legion Prof writer's strings: hostile bytes anywhere in a profile,
 * sanitising, JSON escapes and provenances, and what both viewers' popups
 * make of them (tests/lib/legion_popup.c); the profiles are read back by
 * the independent reader of tests/lib/legion_read.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "legion_popup.h"
#include "legion_read.h"
#include "legion_write.h"
#include "testlib.h"
#include "output/json.h"
#include "output/legion_prof.h"

static char *repeat(const char *unit, size_t total)
{
	size_t n = strlen(unit), i;
	char *text = malloc(total + 1);

	ck_assert_ptr_nonnull(text);
	for (i = 0; i + n <= total; i += n)
		memcpy(text + i, unit, n);
	text[i] = '\0';
	return text;
}

START_TEST(test_hostile_strings)
{
	/* invalid UTF-8 of every kind, and what breaks titles, TSV and JSON */
	static const char bad_utf8[] =
		"ok\xff\xfe|\xc0\x80|\xed\xa0\x80|\xf4\x90\x80\x80|"
		"\xe2\x82|\xf0\x9f\x98|\x80|é€😀|$|\"{},\n\t\r\x01\x7f\xc2\x85";
	char *huge_dollars = repeat("$|\"{},\n", 100 * 1024);
	char *huge_utf8 = repeat("é$\xff😀\\", 100 * 1024);
	char *huge_plain = repeat("x", 100 * 1024);
	struct profile_strings hostile = {
		.hostname = huge_utf8,
		.task_name = bad_utf8,
		.variant_name = huge_dollars,
		.op_name = huge_dollars,
		.mode = bad_utf8,
		.call_site = huge_utf8,
		.title = huge_dollars,
		.helper_title = bad_utf8,
		.meta_name = huge_plain,
		.op_kind_name = "$",
	};
	struct scratch scratch = { 0 };
	struct legion_blob file;

	small_profile_file(scratch_path(&scratch, "hostile"), &hostile, true, LEGION_PROF_VERSION,
			   &file);
	ck_assert_valid(&file, LEGION_PROF_VERSION, true);
	legion_blob_free(&file);

	/* every string as the provenance's text too */
	hostile.title = bad_utf8;
	hostile.op_name = huge_utf8;
	hostile.hostname = NULL;
	small_profile_file(scratch_path(&scratch, "hostile2"), &hostile, false, LEGION_PROF_VERSION,
			   &file);
	ck_assert_valid(&file, LEGION_PROF_VERSION, true);
	legion_blob_free(&file);
	free(huge_dollars);
	free(huge_utf8);
	free(huge_plain);
	scratch_free(&scratch);
}
END_TEST

START_TEST(test_sanitize)
{
	char out[LEGION_PROF_STRING_MAX + 1], small[10];
	char *huge = repeat("ab", 100 * 1024);
	size_t n;

	ck_assert_uint_eq(legion_prof_sanitize(out, sizeof(out), "a$b"), 5);
	ck_assert_str_eq(out, "a\xef\xbc\x84"
			      "b"); /* U+FF04 */
	legion_prof_sanitize(out, sizeof(out), "x\ny\tz\x7f\xc2\x85|");
	ck_assert_str_eq(out, "x y z  |");
	legion_prof_sanitize(out, sizeof(out), "\xff\xc0\x80\xed\xa0\x80\xf4\x90\x80\x80\xe2\x82");
	ck_assert_uint_eq(strlen(out), 12 * 3); /* each bad byte is one U+FFFD */
	ck_assert(legion_utf8_valid((unsigned char *)out, strlen(out)));
	legion_prof_sanitize(out, sizeof(out), "é€😀 ok");
	ck_assert_str_eq(out, "é€😀 ok");
	legion_prof_sanitize(out, sizeof(out), NULL);
	ck_assert_str_eq(out, "");
	/* cut at a character boundary, marked with "…" */
	legion_prof_sanitize(small, sizeof(small), "abcdefghijkl");
	ck_assert_str_eq(small, "abcdef\xe2\x80\xa6");
	legion_prof_sanitize(small, 8, "ééééé");
	ck_assert_str_eq(small, "éé\xe2\x80\xa6");
	legion_prof_sanitize(small, 3, "abc");
	ck_assert_str_eq(small, "ab");
	n = legion_prof_sanitize(out, sizeof(out), huge);
	ck_assert_uint_le(n, LEGION_PROF_STRING_MAX);
	ck_assert_uint_ge(n, LEGION_PROF_STRING_MAX - 3);
	ck_assert_str_eq(out + n - 3, "\xe2\x80\xa6");
	free(huge);
}
END_TEST

/* Both viewers show members lines "key: value", the same keys in the same order, none wide. */
static void check_popups(const char *provenance, int members)
{
	struct legion_popup viewer, legacy;

	legion_popup_viewer(provenance, &viewer);
	legion_popup_legacy(provenance, &legacy);
	ck_assert_int_eq(viewer.count, members);
	ck_assert_int_eq(legacy.count, members);
	for (int i = 0; i < members; i++) {
		size_t key = strcspn(viewer.lines[i], ":");

		ck_assert_msg(!strncmp(viewer.lines[i], legacy.lines[i], key + 2),
			      "line %d: \"%s\" against the legacy viewer's \"%s\"", i,
			      viewer.lines[i], legacy.lines[i]);
	}
	ck_assert_int_le(legion_popup_width(&viewer), 32 + 2 + 96);
	ck_assert_int_le(legion_popup_width(&legacy), 32 + 2 + 96);
}

START_TEST(test_json_escape_and_provenance)
{
	char out[LEGION_PROF_STRING_MAX + 1], small[4];
	struct legion_prof_kv pairs[] = { { "op", "add" }, { "mode", "deferred" } };
	struct legion_prof_kv hostile[8];
	char *huge = repeat("\"\\$\xff{},|\n", 100 * 1024);
	int n;

	json_escape_into(out, sizeof(out), "a\"b\\c\n\x01\xff/");
	ck_assert_str_eq(out, "a\\\"b\\\\c\\n\\u0001\xef\xbf\xbd/");
	/* never half an escape */
	ck_assert_uint_eq(json_escape_into(small, sizeof(small), "\"\""), 2);
	ck_assert_str_eq(small, "\\\"");
	ck_assert_uint_eq(json_escape_into(small, sizeof(small), "a€"), 1);

	n = legion_prof_provenance_json(out, sizeof(out), "add (main.c:12)", pairs, 2);
	/*
	 * sorted by key; the legacy viewer's pairs first, last key first (it draws its lines
	 * upwards), the ',' after them hides the JSON
	 */
	ck_assert_str_eq(out, "[\"add (main.c:12)$op,add|mode,deferred,\", "
			      "{\"mode\": \"deferred\", \"op\": \"add\"}]");
	ck_assert_int_eq(n, (int)strlen(out));
	ck_assert_int_eq(legion_provenance_members(out), 2);
	check_popups(out, 2);
	/* one '$', the split: the legacy viewer would split on any other */
	legion_prof_provenance_json(out, sizeof(out), "a$b",
				    (struct legion_prof_kv[]){ { "$", "$,|\"\\" } }, 1);
	ck_assert_ptr_eq(strchr(out, '$'), strrchr(out, '$'));
	ck_assert_int_eq(legion_provenance_members(out), 1);
	check_popups(out, 1);

	for (int i = 0; i < 8; i++)
		hostile[i] = (struct legion_prof_kv){ huge, huge };
	n = legion_prof_provenance_json(out, sizeof(out), huge, hostile, 8);
	ck_assert_int_le(n, LEGION_PROF_STRING_MAX);
	ck_assert_int_ge(legion_provenance_members(out), 1);
	check_popups(out, legion_provenance_members(out));
	ck_assert(legion_utf8_valid((unsigned char *)out, strlen(out)));
	n = legion_prof_provenance_json(out, 64, huge, hostile, 8);
	ck_assert_int_le(n, 63);
	ck_assert_int_ge(legion_provenance_members(out), 0);
	ck_assert_int_eq(legion_prof_provenance_json(out, 63, "a", NULL, 0), -ENOSPC);
	ck_assert_int_eq(legion_prof_provenance_json(out, 64, NULL, NULL, 0), 8);
	ck_assert_str_eq(out, "[\"\", {}]");
	free(huge);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("legion_prof_strings");
	TCase *tc = tcase_create("writer");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_hostile_strings);
	tcase_add_test(tc, test_sanitize);
	tcase_add_test(tc, test_json_escape_and_provenance);
	suite_add_tcase(suite, tc);

	return run_suite(suite);
}
