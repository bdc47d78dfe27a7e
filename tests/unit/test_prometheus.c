// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* optrace serve's metrics without BPF: snapshots built by hand, the exposition text checked. */
#define _GNU_SOURCE
#include <optrace/abi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "output/prometheus.h"

static const char add_name[] = "demo.add", mean_name[] = "demo.mean", sum_name[] = "demo.sum",
		  add_copy[] = "demo.add", task_name[] = "BinaryOp",
		  evil[] = "ev\\il\"\nname\xff\xc3\xa9";

#define ADDRESS(text) ((__u64)(unsigned long)(text))

#define GROW(array, count) \
	(array = realloc(array, ((count) + 1) * sizeof(*(array))), &(array)[(count)++])

static void add_string(struct stat_snapshot *s, __u32 tgid, const char *text)
{
	struct string_row *row = GROW(s->strings, s->string_count);

	memset(row, 0, sizeof(*row));
	row->key.tgid = tgid;
	row->key.address = ADDRESS(text);
	snprintf(row->value.text, sizeof(row->value.text), "%s", text);
}

static void add_process(struct stat_snapshot *s, __u32 tgid, const char *comm, int rank,
			int rank_count)
{
	struct process_row *row = GROW(s->processes, s->process_count);

	memset(row, 0, sizeof(*row));
	row->tgid = tgid;
	snprintf(row->info.comm, sizeof(row->info.comm), "%s", comm);
	row->rank = rank;
	row->rank_count = rank_count;
}

static void add_op(struct stat_snapshot *s, __u32 tgid, const char *name, const char *parent,
		   const char *root, __u32 depth, int mode, __u64 count, __u64 total_ns)
{
	struct op_row *row = GROW(s->ops, s->op_count);

	memset(row, 0, sizeof(*row));
	row->key.tgid = tgid;
	row->key.depth = depth;
	row->key.name = ADDRESS(name);
	row->key.parent_name = ADDRESS(parent);
	row->key.root_name = ADDRESS(root);
	row->key.mode = (__u8)mode;
	row->key.mode_reason = mode == OPTRACE_MODE_EAGER      ? OPTRACE_MODE_REASON_BELOW_THRESHOLD
			       : mode == OPTRACE_MODE_DEFERRED ? OPTRACE_MODE_REASON_INPUTS_DEFERRED
							       : OPTRACE_MODE_REASON_NONE;
	row->key.status = OPTRACE_STATUS_OK;
	row->latency.count = count;
	row->latency.total_ns = total_ns;
	row->latency.self_ns = total_ns / 2;
}

/* Two processes: 7 (rank 1 of 2, exited) and 9 (no rank, no strings of its own but one). */
static struct stat_snapshot sample(void)
{
	struct stat_snapshot s = { 0 };
	struct fallback_row *fallback;
	struct task_row *task;
	struct launch_row *launch;
	struct wait_row *wait;

	add_process(&s, 7, "optrace-demo", 1, 2);
	add_process(&s, 9, "py\"thon", 0, 0);
	add_string(&s, 7, add_name);
	add_string(&s, 7, add_copy); /* the same name at another address */
	add_string(&s, 7, mean_name);
	add_string(&s, 7, sum_name);
	add_string(&s, 7, task_name);
	add_string(&s, 9, evil);
	/* Two rows that differ only in the caller and the name's address: one series. */
	add_op(&s, 7, add_name, NULL, NULL, 0, OPTRACE_MODE_DEFERRED, 3, 1500000001);
	add_op(&s, 7, add_copy, NULL, NULL, 0, OPTRACE_MODE_DEFERRED, 2, 1000000000);
	add_op(&s, 7, sum_name, mean_name, mean_name, 1, OPTRACE_MODE_EAGER, 4, 40);
	add_op(&s, 7, sum_name, add_name, mean_name, 2, OPTRACE_MODE_EAGER, 1, 10);
	add_op(&s, 7, mean_name, NULL, NULL, 0, STAT_MODE_UNSET, 1, 1);
	add_op(&s, 9, evil, NULL, NULL, 0, OPTRACE_MODE_EAGER, 6, 60);

	fallback = GROW(s.fallbacks, s.fallback_count);
	memset(fallback, 0, sizeof(*fallback));
	fallback->key.tgid = 7;
	fallback->key.name = ADDRESS(add_name);
	fallback->key.reason = OPTRACE_FALLBACK_UNSUPPORTED_DTYPE;
	fallback->key.detail = ADDRESS(sum_name);
	fallback->count = 2;
	fallback = GROW(s.fallbacks, s.fallback_count);
	*fallback = s.fallbacks[0];
	fallback->key.detail = ADDRESS(mean_name); /* another detail: the same series */
	fallback->count = 3;

	task = GROW(s.tasks, s.task_count);
	memset(task, 0, sizeof(*task));
	task->key.tgid = 7;
	task->key.variant = OPTRACE_VARIANT_GPU;
	task->key.name = ADDRESS(task_name);
	task->key.root_name = ADDRESS(add_name);
	task->latency.count = 8;
	task->latency.total_ns = 2000000000;
	task = GROW(s.tasks, s.task_count);
	*task = s.tasks[0];
	task->key.variant = OPTRACE_VARIANT_HOST_REFERENCE;
	task->latency.count = 1;
	task->latency.total_ns = 5;

	launch = GROW(s.launches, s.launch_count);
	memset(launch, 0, sizeof(*launch));
	launch->key.tgid = 7;
	launch->key.name = ADDRESS(task_name);
	launch->key.root_name = ADDRESS(add_name);
	launch->stats.count = 5;
	launch->stats.points = 9;

	wait = GROW(s.waits, s.wait_count);
	memset(wait, 0, sizeof(*wait));
	wait->key.tgid = 9;
	wait->key.kind = OPTRACE_WAIT_FUTURE;
	wait->latency.count = 2;
	wait->latency.total_ns = 20;

	s.losses[STAT_LOSS_UNMATCHED] = 4;
	return s;
}

static bool exited_seven(void *ctx, __u32 tgid)
{
	(void)ctx;
	return tgid == 7;
}

static char *render(const struct stat_snapshot *snapshot, const struct prometheus_options *options)
{
	char *text = NULL;
	size_t length = 0;
	FILE *out = open_memstream(&text, &length);

	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(prometheus_write(out, snapshot, options), 0);
	ck_assert_int_eq(fclose(out), 0);
	return text;
}

#define HAS_LINE(text, line) \
	ck_assert_msg(strstr(text, line "\n"), "no line\n%s\nin\n%s", line, text)

#define PROCESS_7 "command=\"optrace-demo\",pid=\"7\",rank=\"1\""

START_TEST(test_series_and_labels)
{
	const struct prometheus_options options = { .exited = exited_seven };
	struct stat_snapshot s = sample();
	char *text = render(&s, &options);

	HAS_LINE(text, "optrace_processes{state=\"running\"} 1");
	HAS_LINE(text, "optrace_processes{state=\"exited\"} 1");
	/* Summed: 3 + 2 calls, 2.500000001 s; root is the op itself at depth 0. */
	HAS_LINE(text, "optrace_operations_total{" PROCESS_7 ",op=\"demo.add\",root=\"demo.add\","
		       "depth=\"0\",mode=\"deferred\",mode_reason=\"inputs_deferred\","
		       "status=\"ok\"} 5");
	HAS_LINE(text, "optrace_operation_seconds_total{" PROCESS_7 ",op=\"demo.add\","
		       "root=\"demo.add\",depth=\"0\",mode=\"deferred\","
		       "mode_reason=\"inputs_deferred\",status=\"ok\"} 2.500000001");
	HAS_LINE(text, "optrace_operation_self_seconds_total{" PROCESS_7 ",op=\"demo.add\","
		       "root=\"demo.add\",depth=\"0\",mode=\"deferred\","
		       "mode_reason=\"inputs_deferred\",status=\"ok\"} 1.250000000");
	/* Helpers at depths 1 and 2 under the operation the user called. */
	HAS_LINE(text, "optrace_operations_total{" PROCESS_7 ",op=\"demo.sum\",root=\"demo.mean\","
		       "depth=\"1\",mode=\"eager\",mode_reason=\"below_threshold\","
		       "status=\"ok\"} 4");
	HAS_LINE(text, "optrace_operations_total{" PROCESS_7 ",op=\"demo.sum\",root=\"demo.mean\","
		       "depth=\"2\",mode=\"eager\",mode_reason=\"below_threshold\","
		       "status=\"ok\"} 1");
	HAS_LINE(text, "optrace_operations_total{" PROCESS_7 ",op=\"demo.mean\",root=\"demo.mean\","
		       "depth=\"0\",mode=\"unset\",mode_reason=\"none\","
		       "status=\"ok\"} 1");
	HAS_LINE(text, "optrace_fallbacks_total{" PROCESS_7 ",op=\"demo.add\","
		       "reason=\"unsupported_dtype\"} 5");
	HAS_LINE(text, "optrace_task_points_total{" PROCESS_7 ",task=\"BinaryOp\",variant=\"gpu\","
		       "root=\"demo.add\"} 8");
	HAS_LINE(text, "optrace_task_points_total{" PROCESS_7 ",task=\"BinaryOp\","
		       "variant=\"fallback\",root=\"demo.add\"} 1");
	HAS_LINE(text, "optrace_task_seconds_total{" PROCESS_7 ",task=\"BinaryOp\",variant=\"gpu\","
		       "root=\"demo.add\"} 2.000000000");
	HAS_LINE(text, "optrace_task_launches_total{" PROCESS_7 ",task=\"BinaryOp\","
		       "root=\"demo.add\"} 5");
	HAS_LINE(text, "optrace_task_launch_points_total{" PROCESS_7 ",task=\"BinaryOp\","
		       "root=\"demo.add\"} 9");
	/* No rank announced: rank="". A wait outside operations: root="". */
	HAS_LINE(text, "optrace_waits_total{command=\"py\\\"thon\",pid=\"9\",rank=\"\","
		       "kind=\"future\",root=\"\"} 2");
	HAS_LINE(text, "optrace_events_lost_total{cause=\"unmatched\"} 4");
	HAS_LINE(text, "optrace_events_lost_total{cause=\"map_full\"} 0");
	free(text);
	stat_snapshot_free(&s);
}
END_TEST

/* Backslash, quote and newline escaped; a byte that is not UTF-8 becomes U+FFFD. */
START_TEST(test_escaping)
{
	struct stat_snapshot s = sample();
	char *text = render(&s, NULL);

	HAS_LINE(text,
		 "optrace_operations_total{command=\"py\\\"thon\",pid=\"9\",rank=\"\","
		 "op=\"ev\\\\il\\\"\\nname\xef\xbf\xbd\xc3\xa9\","
		 "root=\"ev\\\\il\\\"\\nname\xef\xbf\xbd\xc3\xa9\",depth=\"0\",mode=\"eager\","
		 "mode_reason=\"below_threshold\",status=\"ok\"} 6");
	/* Without the callback every process runs. */
	HAS_LINE(text, "optrace_processes{state=\"running\"} 2");
	HAS_LINE(text, "optrace_processes{state=\"exited\"} 0");
	free(text);
	stat_snapshot_free(&s);
}
END_TEST

/*
 * Issue 41: ESC, a C1 control (U+009B, CSI to some terminals) and a bidi
 * override (U+202E) in a command and an operation's name never reach the
 * scraper raw: each is U+FFFD.
 */
START_TEST(test_controls_replaced)
{
	static const char hostile[] = "op\x1b[2J\xc2\x9bx\xe2\x80\xaey";
	struct stat_snapshot s = { 0 };
	char *text;

	add_process(&s, 11, "cmd\x1b]0;t\x07", 0, 0);
	add_string(&s, 11, hostile);
	add_op(&s, 11, hostile, NULL, NULL, 0, OPTRACE_MODE_EAGER, 1, 10);
	text = render(&s, NULL);
	ck_assert_msg(!strchr(text, '\x1b') && !strchr(text, '\x07') && !strstr(text, "\xc2\x9b") &&
			      !strstr(text, "\xe2\x80\xae"),
		      "%s", text);
	ck_assert_msg(strstr(text, "command=\"cmd\xef\xbf\xbd]0;t\xef\xbf\xbd\"") &&
			      strstr(text, "op=\"op\xef\xbf\xbd[2J\xef\xbf\xbdx\xef\xbf\xbdy\""),
		      "%s", text);
	free(text);
	stat_snapshot_free(&s);
}
END_TEST

/*
 * The format's rules: every sample's family has HELP and TYPE before it, a
 * family's samples are together, no series twice, no raw newline or
 * invalid byte in a line.
 */
START_TEST(test_families_whole)
{
	struct stat_snapshot s = sample();
	char *text = render(&s, NULL), *save, *line, family[128] = "", *seen[64];
	char *lines[256];
	size_t seen_count = 0, line_count = 0;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[128];

		if (!strncmp(line, "# HELP ", 7)) {
			ck_assert_int_eq(sscanf(line + 7, "%127s", family), 1);
			for (size_t i = 0; i < seen_count; i++)
				ck_assert_msg(strcmp(seen[i], family), "%s twice", family);
			ck_assert_uint_lt(seen_count, 64);
			seen[seen_count++] = strdup(family);
			continue;
		}
		if (!strncmp(line, "# TYPE ", 7)) {
			ck_assert_msg(!strncmp(line + 7, family, strlen(family)) &&
					      line[7 + strlen(family)] == ' ',
				      "TYPE without its HELP: %s", line);
			continue;
		}
		ck_assert_int_eq(sscanf(line, "%127[a-z_]", name), 1);
		ck_assert_msg(!strcmp(name, family), "%s outside its family %s", line, family);
		for (size_t i = 0; i < line_count; i++)
			ck_assert_msg(strcmp(lines[i], line), "twice: %s", line);
		ck_assert_uint_lt(line_count, 256);
		lines[line_count++] = line;
		for (const unsigned char *c = (const unsigned char *)line; *c; c++)
			ck_assert_msg(*c >= 0x20, "a control byte in %s", line);
	}
	ck_assert_uint_eq(seen_count, 13);
	for (size_t i = 0; i < seen_count; i++)
		free(seen[i]);
	free(text);
	stat_snapshot_free(&s);
}
END_TEST

/* Nothing traced yet: the gauge and the losses, no empty family. */
START_TEST(test_empty)
{
	struct stat_snapshot s = { 0 };
	char *text = render(&s, NULL);

	HAS_LINE(text, "optrace_processes{state=\"running\"} 0");
	HAS_LINE(text, "optrace_events_lost_total{cause=\"batch_missing\"} 0");
	ck_assert_ptr_null(strstr(text, "optrace_operations_total"));
	ck_assert_ptr_null(strstr(text, "optrace_task_points_total"));
	free(text);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("prometheus");
	TCase *tc = tcase_create("exposition");

	tcase_add_test(tc, test_series_and_labels);
	tcase_add_test(tc, test_escaping);
	tcase_add_test(tc, test_controls_replaced);
	tcase_add_test(tc, test_families_whole);
	tcase_add_test(tc, test_empty);
	suite_add_tcase(suite, tc);
	return run_suite(suite);
}
