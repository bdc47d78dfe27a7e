// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The stat model without BPF: merging, percentiles, roll-up, output. */
#define _GNU_SOURCE
#include <optrace/abi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"
#include "testlib.h"
#include "output/json.h"
#include "output/stat_print.h"

static void record(struct latency *latency, __u64 ns, __u64 self_ns)
{
	int slot = 0;

	while (slot + 1 < STAT_HIST_SLOTS && (1ULL << (slot + 1)) <= ns)
		slot++;
	latency->hist[slot]++;
	if (!latency->count || ns < latency->min_ns)
		latency->min_ns = ns;
	if (ns > latency->max_ns)
		latency->max_ns = ns;
	latency->count++;
	latency->total_ns += ns;
	latency->self_ns += self_ns;
}

START_TEST(test_merge_and_percentiles)
{
	struct latency a = { 0 }, b = { 0 }, sum = { 0 };
	double p50, p99;

	for (int i = 0; i < 99; i++)
		record(&a, 1000, 1000); /* slot 9: [512, 1024) */
	record(&b, 1000000, 10);
	latency_merge(&sum, &a);
	latency_merge(&sum, &b);
	ck_assert_uint_eq(sum.count, 100);
	ck_assert_uint_eq(sum.total_ns, 99 * 1000 + 1000000);
	ck_assert_uint_eq(sum.self_ns, 99 * 1000 + 10);
	ck_assert_uint_eq(sum.min_ns, 1000);
	ck_assert_uint_eq(sum.max_ns, 1000000);
	p50 = latency_percentile(&sum, 0.5);
	p99 = latency_percentile(&sum, 0.99);
	ck_assert_msg(p50 >= 1000 && p50 <= 1024, "p50 %f", p50);
	ck_assert_msg(p99 >= 1000 && p99 <= 1024, "p99 %f", p99);
	ck_assert(latency_percentile(&sum, 1.0) == 1000000);
	ck_assert(latency_percentile(&(struct latency){ 0 }, 0.5) == 0);
	latency_merge(&sum, &(struct latency){ 0 }); /* an empty CPU changes nothing */
	ck_assert_uint_eq(sum.min_ns, 1000);
}
END_TEST

static const char mean_name[] = "demo.mean", sum_name[] = "demo.sum", evil[] = "evil\"\n\xff$|";

static void add_string(struct stat_snapshot *s, __u32 tgid, const char *text, int truncated)
{
	struct string_row *row;

	s->strings = realloc(s->strings, (s->string_count + 1) * sizeof(*s->strings));
	row = &s->strings[s->string_count++];
	memset(row, 0, sizeof(*row));
	row->key.tgid = tgid;
	row->key.address = (__u64)(unsigned long)text;
	snprintf(row->value.text, sizeof(row->value.text), "%s", text);
	row->value.truncated = (__u8)truncated;
}

static struct op_row *add_op(struct stat_snapshot *s, __u32 tgid, const char *name,
			     const char *parent, __u32 depth, int mode, int reason, int status)
{
	struct op_row *row;

	s->ops = realloc(s->ops, (s->op_count + 1) * sizeof(*s->ops));
	row = &s->ops[s->op_count++];
	memset(row, 0, sizeof(*row));
	row->key = (struct op_key){ .tgid = tgid,
				    .depth = depth,
				    .name = (__u64)(unsigned long)name,
				    .parent_name = (__u64)(unsigned long)parent,
				    .root_name = (__u64)(unsigned long)parent,
				    .mode = (__u8)mode,
				    .mode_reason = (__u8)reason,
				    .status = (__u8)status };
	return row;
}

static struct stat_snapshot sample(void)
{
	struct stat_snapshot s = { 0 };

	add_string(&s, 7, mean_name, 0);
	add_string(&s, 7, sum_name, 0);
	add_string(&s, 7, evil, 1);
	/* mean (helpers: sum) in two modes; one error; sum nested under mean. */
	record(&add_op(&s, 7, mean_name, NULL, 0, OPTRACE_MODE_DEFERRED,
		       OPTRACE_MODE_REASON_HELPERS, OPTRACE_STATUS_OK)
			->latency,
	       5000, 1000);
	record(&add_op(&s, 7, mean_name, NULL, 0, OPTRACE_MODE_EAGER, OPTRACE_MODE_REASON_HELPERS,
		       OPTRACE_STATUS_ERROR)
			->latency,
	       3000, 500);
	record(&add_op(&s, 7, sum_name, mean_name, 1, OPTRACE_MODE_DEFERRED,
		       OPTRACE_MODE_REASON_ABOVE_THRESHOLD, OPTRACE_STATUS_OK)
			->latency,
	       4000, 4000);
	record(&add_op(&s, 7, evil, NULL, 0, STAT_MODE_UNSET, 0, OPTRACE_STATUS_OK)->latency, 10,
	       10);
	/* a helper whose caller began before attach */
	record(&add_op(&s, 7, sum_name, NULL, 1, OPTRACE_MODE_EAGER,
		       OPTRACE_MODE_REASON_BELOW_THRESHOLD, OPTRACE_STATUS_OK)
			->latency,
	       10, 10);
	s.losses[STAT_LOSS_STRING_TRUNCATED] = 1;
	return s;
}

static char *print_to_string(struct stat_snapshot *s, bool json, bool helpers)
{
	struct stat_print_options options = { .json = json, .show_helpers = helpers };
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	stat_print(out, s, &options);
	fclose(out);
	return text;
}

START_TEST(test_text_rolls_helpers_into_callers)
{
	struct stat_snapshot s = sample();
	char *plain = print_to_string(&s, false, false),
	     *helpers = print_to_string(&s, false, true);

	ck_assert_msg(strstr(plain, "== process 7"), "%s", plain);
	/* mean: 2 calls, 1 eager 1 deferred, 1 error; slowest first */
	ck_assert_msg(strstr(plain, "demo.mean                               2        1        1"),
		      "%s", plain);
	ck_assert_msg(strstr(plain, "deferred:helpers=1"), "%s", plain);
	/* helpers only with --show-helpers, indented */
	ck_assert_msg(!strstr(plain, "  demo.sum"), "%s", plain);
	ck_assert_msg(strstr(helpers, "\n  demo.sum "), "%s", helpers);
	ck_assert_msg(strstr(plain, "1 helper calls of operations that began before optrace "
				    "attached"),
		      "%s", plain);
	/* an untrusted name cannot break the table's lines */
	ck_assert_msg(strstr(plain, "evil\"??$|..."), "%s", plain);
	ck_assert_msg(strstr(plain, "lost: string_truncated=1"), "%s", plain);
	free(plain);
	free(helpers);
	stat_snapshot_free(&s);
}
END_TEST

START_TEST(test_json_is_valid_and_complete)
{
	struct stat_snapshot s = sample();
	char *text = print_to_string(&s, true, false);
	struct jv *root = jv_parse(text);
	const struct jv *ops, *mean = NULL;

	ck_assert_msg(root, "invalid JSON:\n%s", text);
	ops = jv_get(jv_get(root, "processes")->items[0], "operations");
	ck_assert_int_eq(ops->count, 4);
	for (size_t i = 0; i < ops->count; i++) {
		if (!strcmp(jv_string(ops->items[i], "name"), "demo.mean"))
			mean = ops->items[i];
	}
	ck_assert_ptr_nonnull(mean);
	ck_assert(jv_number(mean, "count") == 2);
	ck_assert(jv_number(mean, "errors") == 1);
	ck_assert(jv_number(mean, "total_ns") == 8000);
	ck_assert(jv_number(mean, "self_ns") == 1500);
	ck_assert_int_eq(jv_get(mean, "modes")->count, 2);
	ck_assert(jv_get(mean, "parent")->type == JV_NULL);
	ck_assert(jv_number(jv_get(root, "lost"), "string_truncated") == 1);
	jv_free(root);
	free(text);
	stat_snapshot_free(&s);
}
END_TEST

START_TEST(test_json_string_escapes_untrusted_text)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	json_string(out,
		    "a\"b\\c\n\x01\xff\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xc0\xaf\xed\xa0\x80");
	fclose(out);
	/* One writer for every output: short escapes, U+FFFD itself for each bad byte. */
	ck_assert_str_eq(text, "\"a\\\"b\\\\c\\n\\u0001\xef\xbf\xbd\xc3\xa9\xe2\x82\xac"
			       "\xf0\x9f\x98\x80\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
			       "\xef\xbf\xbd\"");
	free(text);
}
END_TEST

START_TEST(test_strings_resolve_or_say_why)
{
	struct stat_snapshot s = { 0 };
	char buffer[80];

	add_string(&s, 1, mean_name, 0);
	s.strings[0].value.unreadable = 1;
	ck_assert_str_eq(stat_string(&s, 1, 0, buffer, sizeof(buffer)), "(unknown)");
	ck_assert_str_eq(
		stat_string(&s, 1, (__u64)(unsigned long)mean_name, buffer, sizeof(buffer)),
		"(unreadable)");
	/* the same address in another process is another string */
	ck_assert_str_eq(stat_string(&s, 2, 0x1234, buffer, sizeof(buffer)), "(0x1234)");
	stat_snapshot_free(&s);
}
END_TEST

/* Nothing at all: no rows (NULL arrays, which qsort() must not be given), still a report. */
START_TEST(test_empty_snapshot)
{
	struct stat_snapshot s = { 0 };
	char *text = print_to_string(&s, false, false), *json = print_to_string(&s, true, false);
	struct jv *root = jv_parse(json);

	ck_assert_msg(strstr(text, "no operations traced\n\nlost: nothing\n"), "%s", text);
	ck_assert_msg(root && jv_get(root, "processes")->count == 0, "%s", json);
	jv_free(root);
	free(text);
	free(json);
	stat_snapshot_free(&s);
}
END_TEST

/* A whole text where the kernel's 63 bytes are too few; losses the kernel does not count. */
START_TEST(test_whole_names_and_more_losses)
{
	struct stat_snapshot s = sample();
	char name[128], buffer[STAT_TEXT_MAX], *text, *json;
	struct jv *root;

	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	memcpy(name, "demo.", 5);
	s.strings[0].text = strdup(name); /* demo.mean's row */
	ck_assert_str_eq(stat_string(&s, s.strings[0].key.tgid, s.strings[0].key.address, buffer,
				     sizeof(buffer)),
			 name);
	ck_assert_int_eq(stat_add_loss(&s, "ringbuf_full", 3699), 0);
	ck_assert_int_eq(stat_add_loss(&s, "unwritten", 0), 0);
	ck_assert_int_eq(stat_add_loss(&s, "batch_missing", 5), 0); /* stat's own */
	s.lost_note = "the file ends 10 bytes into chunk 3";
	text = print_to_string(&s, false, false);
	json = print_to_string(&s, true, false);
	ck_assert_msg(strstr(text, name), "%s", text);
	ck_assert_msg(strstr(text, "\nlost: string_truncated=1 batch_missing=5 ringbuf_full=3699; "
				   "the file ends 10 bytes into chunk 3\n"),
		      "%s", text);
	root = jv_parse(json);
	ck_assert_msg(root, "invalid JSON:\n%s", json);
	ck_assert(jv_number(jv_get(root, "lost"), "ringbuf_full") == 3699);
	ck_assert(jv_number(jv_get(root, "lost"), "batch_missing") == 5);
	ck_assert(jv_get(jv_get(root, "lost"), "unwritten")->type == JV_NUMBER);
	ck_assert_msg(strstr(json, name), "%s", json);
	jv_free(root);
	free(text);
	free(json);
	stat_snapshot_free(&s);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("stat_model");
	TCase *tc = tcase_create("model");

	tcase_add_test(tc, test_merge_and_percentiles);
	tcase_add_test(tc, test_text_rolls_helpers_into_callers);
	tcase_add_test(tc, test_json_is_valid_and_complete);
	tcase_add_test(tc, test_json_string_escapes_untrusted_text);
	tcase_add_test(tc, test_strings_resolve_or_say_why);
	tcase_add_test(tc, test_empty_snapshot);
	tcase_add_test(tc, test_whole_names_and_more_losses);
	suite_add_tcase(suite, tc);

	return run_suite(suite);
}
