// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>

#include "legion_colour.h"

/* state.rs Lfsr::new's taps, by width. */
static const unsigned int lfsr_taps[25][4] = {
	[2] = { 2, 1 },
	[3] = { 3, 2 },
	[4] = { 4, 3 },
	[5] = { 5, 3 },
	[6] = { 6, 5 },
	[7] = { 7, 6 },
	[8] = { 8, 6, 5, 4 },
	[9] = { 9, 5 },
	[10] = { 10, 7 },
	[11] = { 11, 9 },
	[12] = { 12, 11, 10, 4 },
	[13] = { 13, 12, 11, 8 },
	[14] = { 14, 13, 12, 2 },
	[15] = { 15, 14 },
	[16] = { 16, 15, 13, 4 },
	[17] = { 17, 14 },
	[18] = { 18, 11 },
	[19] = { 19, 18, 17, 14 },
	[20] = { 20, 17 },
	[21] = { 21, 19 },
	[22] = { 22, 21 },
	[23] = { 23, 18 },
	[24] = { 24, 23, 22, 17 },
};

static int compare_colours(const void *a, const void *b)
{
	const struct legion_colour *x = a, *y = b;

	if (x->task_id != y->task_id)
		return x->task_id < y->task_id ? -1 : 1;
	return x->variant_id < y->variant_id ? -1 : x->variant_id > y->variant_id;
}

int legion_colours_of(const struct legion_summary *files, size_t count,
		      struct legion_colours *colours)
{
	size_t total = 0, unique = 0, descriptors;
	uint64_t provenances = 0, op_kinds = 0;
	unsigned int bits = 0;
	uint32_t reg;

	memset(colours, 0, sizeof(*colours));
	for (size_t f = 0; f < count; f++) {
		total += files[f].variant_count;
		provenances += files[f].records[LEGION_PROVENANCE];
		/* optrace's files declare the one op kind "Task" each */
		op_kinds = files[f].records[LEGION_OP_DESC] ? 1 : op_kinds;
	}
	colours->colours = calloc(total ? total : 1, sizeof(*colours->colours));
	if (!colours->colours)
		return -1;
	for (size_t f = 0; f < count; f++)
		for (size_t i = 0; i < files[f].variant_count; i++)
			colours->colours[unique++] =
				(struct legion_colour){ files[f].variants[i].task_id,
							files[f].variants[i].variant_id, 0 };
	qsort(colours->colours, unique, sizeof(*colours->colours), compare_colours);
	/* the variants of all files: a BTreeMap by (task, variant) */
	total = 0;
	for (size_t i = 0; i < unique; i++)
		if (!total || compare_colours(&colours->colours[total - 1], &colours->colours[i]))
			colours->colours[total++] = colours->colours[i];
	colours->count = total;
	descriptors = total + op_kinds + provenances;
	/* needed_bits = floor(log2(size)) + 1 */
	while (descriptors >> bits)
		bits++;
	if (bits < 2 || bits > 24)
		return -1;
	colours->bits = bits;
	reg = (0xa4f3a3u & (((1u << bits) - 1) << (24 - bits))) >> (24 - bits);
	for (size_t i = 0; i < total; i++) {
		uint32_t xor = 0;

		for (int t = 0; t < 4 && lfsr_taps[bits][t]; t++)
			xor += (reg >> (bits - lfsr_taps[bits][t])) & 1;
		reg = ((reg >> 1) | ((xor&1) << (bits - 1))) & ((1u << bits) - 1);
		colours->colours[i].hue = (double)reg / (double)(1u << bits);
	}
	return 0;
}

double legion_colour_hue(const struct legion_colours *colours, uint32_t task_id,
			 uint32_t variant_id)
{
	struct legion_colour key = { task_id, variant_id, 0 };
	const struct legion_colour *found =
		bsearch(&key, colours->colours, colours->count, sizeof(key), compare_colours);

	return found ? found->hue : -1;
}

double legion_hue_distance(double a, double b)
{
	double d = a > b ? a - b : b - a;

	return d > 0.5 ? 1 - d : d;
}

void legion_colours_free(struct legion_colours *colours)
{
	free(colours->colours);
	memset(colours, 0, sizeof(*colours));
}
