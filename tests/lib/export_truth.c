// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The demo's ground truth against what optrace export shows of it: the
 * truth's blocks, its counts by operation, mode, fallback and task point,
 * and operation titles ("demo.add [deferred; CPU×2 OMP×1] site") counted
 * into the same keys.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export_truth.h"

#define TIMES "\xc3\x97" /* "×" in titles: "CPU×2" */

static const char *const mode_names[] = { "eager", "deferred", "mixed", "fallback", "none" };
static const char *const fallback_names[] = { "unimplemented_api", "unsupported_arguments",
					      "unsupported_dtype", "no_variant", "other" };
/* How titles name variants ("CPU×2") and what Legion Prof calls them ("cpu"). */
static const char *const variant_titles[OPTRACE_VARIANT__COUNT] = { "CPU", "OMP", "GPU", "host",
								    "OpenCL" };
static const char *const variant_names[OPTRACE_VARIANT__COUNT] = { "cpu", "omp", "gpu", "fallback",
								   "opencl" };

/* ---- the truth, one block per process ------------------------------------------ */

int truth_blocks(const char *path, struct truth_block *blocks, int max)
{
	char *text = read_file(path), *begin, *end, *block_path;
	int count = 0;
	FILE *file;

	ck_assert_ptr_nonnull(text);
	for (begin = strstr(text, "\nbegin "); begin; begin = strstr(end, "\nbegin ")) {
		ck_assert_int_lt(count, max);
		end = strstr(begin, "\nend ");
		ck_assert_ptr_nonnull(end);
		end = strchrnul(end + 1, '\n');
		blocks[count].pid = atoi(begin + 7);
		ck_assert_int_gt(asprintf(&block_path, "%s/truth.%d", test_dir, count), 0);
		file = fopen(block_path, "w");
		ck_assert_ptr_nonnull(file);
		fprintf(file, "%.*s\n", (int)(end - begin - 1), begin + 1);
		fclose(file);
		memset(&blocks[count].counts, 0, sizeof(blocks[count].counts));
		ck_assert_int_eq(truth_parse(block_path, &blocks[count].counts), 1);
		free(block_path);
		count++;
	}
	free(text);
	return count;
}

void truth_blocks_free(struct truth_block *blocks, int count)
{
	for (int i = 0; i < count; i++)
		counts_free(&blocks[i].counts);
}

void counts_select(const struct counts *truth, const char *prefix, struct counts *out)
{
	for (size_t i = 0; i < truth->length; i++)
		if (!strncmp(truth->entries[i].key, prefix, strlen(prefix)))
			counts_add(out, truth->entries[i].key, truth->entries[i].count);
}

void assert_counts_equal(const struct counts *expected, const struct counts *got, const char *what)
{
	char message[8192];

	ck_assert_msg(counts_diff(expected, got, message, sizeof(message)) == 0, "%s:\n%s", what,
		      message);
}

/* Every operation name of the truth ("op NAME DEPTH COUNT" keys). */
static int truth_op_names(const struct counts *truth, char names[][64], int max)
{
	int count = 0;

	for (size_t i = 0; i < truth->length; i++) {
		char name[64];
		bool seen = false;

		if (sscanf(truth->entries[i].key, "op %63s", name) != 1)
			continue;
		for (int k = 0; k < count && !seen; k++)
			seen = !strcmp(names[k], name);
		if (seen)
			continue;
		ck_assert_int_lt(count, max);
		strcpy(names[count++], name);
	}
	return count;
}

static long truth_ops(const struct counts *truth, const char *name, int only_depth)
{
	long total = 0;

	for (size_t i = 0; i < truth->length; i++) {
		char key_name[64];
		int depth;

		if (sscanf(truth->entries[i].key, "op %63s %d", key_name, &depth) == 2 &&
		    !strcmp(key_name, name) && (only_depth < 0 || depth == only_depth))
			total += truth->entries[i].count;
	}
	return total;
}

/* "mode NAME MODE" of the truth, summed over reasons; "none": ops that said no mode. */
static long truth_mode(const struct counts *truth, const char *name, const char *mode)
{
	long total = 0, all = 0;

	for (size_t i = 0; i < truth->length; i++) {
		char key_name[64], key_mode[32];

		if (sscanf(truth->entries[i].key, "mode %63s %31s", key_name, key_mode) != 2 ||
		    strcmp(key_name, name))
			continue;
		all += truth->entries[i].count;
		if (!strcmp(key_mode, mode))
			total += truth->entries[i].count;
	}
	return strcmp(mode, "none") ? total : truth_ops(truth, name, -1) - all;
}

static long truth_fallback(const struct counts *truth, const char *name, const char *reason)
{
	char key[160];

	snprintf(key, sizeof(key), "fallback %.63s %.63s", name, reason);
	return counts_get(truth, key);
}

/* Task points per variant, over every task of the truth. */
static long truth_points(const struct counts *truth, const char *variant)
{
	long total = 0;

	for (size_t i = 0; i < truth->length; i++) {
		char task[64], key_variant[32];

		if (sscanf(truth->entries[i].key, "task %63s %31s", task, key_variant) == 2 &&
		    !strcmp(key_variant, variant))
			total += truth->entries[i].count;
	}
	return total;
}

/*
 * The truth counts modes and fallbacks over every depth; a profile without
 * helpers shows depth 0 only. Of all total operations of a name, depth0 are
 * at depth 0; of those with a property (count of them), at least
 * count - (total - depth0) and at most min(count, depth0) are at depth 0:
 * exact when every one of that name is at depth 0 or every one has it.
 */
static void assert_depth0_share(const char *what, const char *name, const char *property, long got,
				long count, long total, long depth0)
{
	long low = count - (total - depth0), high = count < depth0 ? count : depth0;

	if (low < 0)
		low = 0;
	ck_assert_msg(got >= low && got <= high,
		      "%s: %ld depth-0 %s with %s; the truth allows %ld to %ld (%ld of %ld %s "
		      "ops have it, %ld at depth 0)",
		      what, got, name, property, low, high, count, total, name, depth0);
}

/* ---- titles --------------------------------------------------------------------- */

static void title_tokens(const char *inside, struct title *t)
{
	char copy[512], *token, *save = NULL;
	bool first = true;

	snprintf(copy, sizeof(copy), "%s", inside);
	for (token = strtok_r(copy, ";", &save); token; token = strtok_r(NULL, ";", &save)) {
		char *word, *save_word = NULL;

		token += *token == ' ';
		if (!strncmp(token, "fallback: ", 10)) {
			snprintf(t->fallback, sizeof(t->fallback), "%s", token + 10);
		} else if (first && !strstr(token, TIMES)) {
			snprintf(t->mode, sizeof(t->mode), "%s", token);
		} else {
			for (word = strtok_r(token, " ", &save_word); word;
			     word = strtok_r(NULL, " ", &save_word)) {
				char *times = strstr(word, TIMES);

				ck_assert_msg(times, "a title's bracket holds \"%s\"", word);
				*times = '\0';
				for (int v = 0; v < OPTRACE_VARIANT__COUNT; v++)
					if (!strcmp(word, variant_titles[v]))
						t->points[v] += atol(times + strlen(TIMES));
			}
		}
		first = false;
	}
}

void title_parse(const char *text, struct title *t)
{
	const char *space = strchrnul(text, ' '), *close;

	memset(t, 0, sizeof(*t));
	strcpy(t->mode, "none");
	snprintf(t->name, sizeof(t->name), "%.*s", (int)(space - text), text);
	if (!strncmp(space, " [", 2)) {
		close = strchr(space, ']');
		ck_assert_msg(close, "title without ']': %s", text);
		char inside[512];

		snprintf(inside, sizeof(inside), "%.*s", (int)(close - space - 2), space + 2);
		title_tokens(inside, t);
		space = close + 1;
	}
	/* "[fallback: reason]" says the mode once */
	if (t->fallback[0] && !strcmp(t->mode, "none"))
		strcpy(t->mode, "fallback");
	t->cut = !strncmp(space, " (cut)", 6);
}

void count_title(struct counts *counts, const struct title *t, unsigned int depth)
{
	char key[256];

	snprintf(key, sizeof(key), "op %s %u", t->name, depth);
	counts_add(counts, key, 1);
	snprintf(key, sizeof(key), "mode %s %s", t->name, t->mode);
	counts_add(counts, key, 1);
	if (t->fallback[0]) {
		snprintf(key, sizeof(key), "fallback %s %s", t->name, t->fallback);
		counts_add(counts, key, 1);
	}
	if (depth)
		return;
	/* depth 0 alone: what a profile without helpers shows */
	snprintf(key, sizeof(key), "mode0 %s %s", t->name, t->mode);
	counts_add(counts, key, 1);
	if (t->fallback[0]) {
		snprintf(key, sizeof(key), "fallback0 %s %s", t->name, t->fallback);
		counts_add(counts, key, 1);
	}
	for (int v = 0; v < OPTRACE_VARIANT__COUNT; v++) {
		snprintf(key, sizeof(key), "points %s", variant_names[v]);
		if (t->points[v])
			counts_add(counts, key, t->points[v]);
	}
}

/* ---- what a profile shows, against the truth ------------------------------------------ */

void check_depth0(const char *what, const struct counts *got, const struct counts *truth)
{
	struct counts expected = { 0 }, ops = { 0 };
	char names[64][64], key[256];
	int name_count = truth_op_names(truth, names, 64);

	for (int i = 0; i < name_count; i++) {
		snprintf(key, sizeof(key), "op %.63s 0", names[i]);
		if (truth_ops(truth, names[i], 0))
			counts_add(&expected, key, truth_ops(truth, names[i], 0));
	}
	counts_select(got, "op ", &ops);
	assert_counts_equal(&expected, &ops, what);
	for (size_t i = 0; i < got->length; i++) {
		char name[64], value[64];
		const char *key_text = got->entries[i].key;
		long total, depth0;

		if (!strncmp(key_text, "mode ", 5) &&
		    sscanf(key_text + 5, "%63s %63s", name, value) == 2) {
			total = truth_ops(truth, name, -1);
			depth0 = truth_ops(truth, name, 0);
			assert_depth0_share(what, name, value, got->entries[i].count,
					    truth_mode(truth, name, value), total, depth0);
		} else if (!strncmp(key_text, "fallback ", 9) &&
			   sscanf(key_text + 9, "%63s %63s", name, value) == 2) {
			total = truth_ops(truth, name, -1);
			depth0 = truth_ops(truth, name, 0);
			assert_depth0_share(what, name, value, got->entries[i].count,
					    truth_fallback(truth, name, value), total, depth0);
		}
	}
	/* a mode the truth has but no title shows must fit too (its share may be 0) */
	for (int i = 0; i < name_count; i++) {
		long total = truth_ops(truth, names[i], -1), depth0 = truth_ops(truth, names[i], 0);

		for (size_t m = 0; m < sizeof(mode_names) / sizeof(mode_names[0]); m++) {
			snprintf(key, sizeof(key), "mode %.63s %s", names[i], mode_names[m]);
			assert_depth0_share(what, names[i], mode_names[m], counts_get(got, key),
					    truth_mode(truth, names[i], mode_names[m]), total,
					    depth0);
		}
		for (size_t f = 0; f < sizeof(fallback_names) / sizeof(fallback_names[0]); f++) {
			snprintf(key, sizeof(key), "fallback %.63s %s", names[i],
				 fallback_names[f]);
			assert_depth0_share(what, names[i], fallback_names[f], counts_get(got, key),
					    truth_fallback(truth, names[i], fallback_names[f]),
					    total, depth0);
		}
	}
	counts_free(&expected);
	counts_free(&ops);
}

void check_all_depths(const char *what, const struct counts *got, const struct counts *truth)
{
	struct counts expected = { 0 }, shown = { 0 };
	char names[64][64], key[256];
	int name_count = truth_op_names(truth, names, 64);

	counts_select(truth, "op ", &expected);
	counts_select(truth, "fallback ", &expected);
	for (int i = 0; i < name_count; i++) {
		for (size_t m = 0; m < sizeof(mode_names) / sizeof(mode_names[0]); m++) {
			long count = truth_mode(truth, names[i], mode_names[m]);

			snprintf(key, sizeof(key), "mode %.63s %s", names[i], mode_names[m]);
			if (count)
				counts_add(&expected, key, count);
		}
	}
	counts_select(got, "op ", &shown);
	counts_select(got, "mode ", &shown);
	counts_select(got, "fallback ", &shown);
	assert_counts_equal(&expected, &shown, what);
	counts_free(&expected);
	counts_free(&shown);
}

void check_title_points(const char *what, const struct counts *got, const struct counts *truth)
{
	char key[64];

	for (int v = 0; v < OPTRACE_VARIANT__COUNT; v++) {
		snprintf(key, sizeof(key), "points %s", variant_names[v]);
		ck_assert_msg(counts_get(got, key) == truth_points(truth, variant_names[v]),
			      "%s: titles say %ld %s points, the truth %ld", what,
			      counts_get(got, key), variant_names[v],
			      truth_points(truth, variant_names[v]));
	}
}
