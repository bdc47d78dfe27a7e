// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_truth.h"
#include "testlib.h"

struct jv *read_json_file(const char *path)
{
	char *text = read_file(path);
	struct jv *value = text ? jv_parse(text) : NULL;

	ck_assert_msg(value, "not JSON: %s", path);
	free(text);
	return value;
}

static const struct jv *find_op_row(const struct jv *ops, const char *name, const char *variant)
{
	for (size_t i = 0; ops && i < ops->count; i++) {
		if (!strcmp(jv_string(ops->items[i], "op"), name) &&
		    !strcmp(jv_string(ops->items[i], "variant"), variant))
			return ops->items[i];
	}
	return NULL;
}

void check_gpu_truth(const char *truth_path, const struct jv *gpu)
{
	static const struct {
		const char *truth, *json;
	} totals[] = { { "outside", "outside" },
		       { "unlaunched", "unlaunched" },
		       { "invalid", "invalid_times" } };
	char line[256], name[128], variant[16], key[32];
	FILE *truth = fopen(truth_path, "r");
	const struct jv *ops;
	long kernels, copies, value;
	int lines = 0;

	ck_assert_msg(gpu && gpu->type == JV_OBJECT, "report --json has no \"gpu\" object");
	ops = jv_get(gpu, "ops");
	ck_assert_ptr_nonnull(truth);
	ck_assert_ptr_nonnull(ops);
	while (fgets(line, sizeof(line), truth)) {
		if (sscanf(line, "op %127s %15s %ld %ld", name, variant, &kernels, &copies) == 4) {
			const struct jv *row = find_op_row(ops, name, variant);

			ck_assert_msg(row, "no GPU row for %s [%s]", name, variant);
			ck_assert_int_eq((long)jv_number(row, "kernels"), kernels);
			ck_assert_int_eq((long)jv_number(row, "copies"), copies);
		} else if (sscanf(line, "%31s %ld", key, &value) == 2) {
			/* What CUPTI dropped: the activity buffer's, one of the sources. */
			if (!strcmp(key, "dropped"))
				ck_assert_msg(
					(long)jv_number(jv_get(gpu, "dropped"),
							"activity_buffer") == value,
					"dropped: %ld, truth %ld",
					(long)jv_number(jv_get(gpu, "dropped"), "activity_buffer"),
					value);
			for (size_t i = 0; i < sizeof(totals) / sizeof(totals[0]); i++) {
				if (!strcmp(key, totals[i].truth))
					ck_assert_msg((long)jv_number(gpu, totals[i].json) == value,
						      "%s: %ld, truth %ld", key,
						      (long)jv_number(gpu, totals[i].json), value);
			}
		}
		lines++;
	}
	fclose(truth);
	ck_assert_int_ge(lines, 5);
}

long gpu_truth_value(const char *truth_path, const char *key)
{
	char line[256], name[32];
	FILE *truth = fopen(truth_path, "r");
	long value, found = -1;

	ck_assert_ptr_nonnull(truth);
	while (fgets(line, sizeof(line), truth)) {
		if (sscanf(line, "%31s %ld", name, &value) == 2 && !strcmp(name, key))
			found = value;
	}
	fclose(truth);
	return found;
}
