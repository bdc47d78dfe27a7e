// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The job's task kinds and where the reader's colour generator puts them
 * (legion_kinds.h). The register and the hue are Legion Prof's own
 * (tools/legion_prof_rs/src/state.rs at legion-25.06.0: Lfsr, compute_color,
 * assign_colors), replayed so that the export knows each variant's hue.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <optrace/abi.h>

#include "common/hash.h"
#include "output/legion_kinds.h"

#define SEED_CONFIGURATION 0xa4f3a3u /* 0b101001001111001110100011 */
#define BITS_MIN 2
#define BITS_MAX 24

/* The register's taps by width (maximal-length polynomials). */
static const uint8_t taps[BITS_MAX + 1][4] = {
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

/* Lfsr::new: the width for size descriptors is floor(log2(size)) + 1. */
static unsigned int register_bits(uint64_t size)
{
	unsigned int bits = 0;

	while (size >> bits)
		bits++;
	return bits < BITS_MIN ? BITS_MIN : bits > BITS_MAX ? BITS_MAX : bits;
}

static uint32_t register_seed(unsigned int bits)
{
	return (SEED_CONFIGURATION & (((1u << bits) - 1) << (24 - bits))) >> (24 - bits);
}

static uint32_t register_next(uint32_t value, unsigned int bits)
{
	uint32_t xor = 0;

	for (int i = 0; i < 4 && taps[bits][i]; i++)
		xor += (value >> (bits - taps[bits][i])) & 1;
	return ((value >> 1) | ((xor&1) << (bits - 1))) & ((1u << bits) - 1);
}

double legion_kinds_hue(uint32_t value, unsigned int bits)
{
	return (double)value / (double)(1u << bits);
}

static double hue_distance(double a, double b)
{
	double d = a > b ? a - b : b - a;

	return d > 0.5 ? 1.0 - d : d;
}

void legion_kinds_init(struct legion_kinds *kinds, uint64_t estimate, uint32_t first_task_id)
{
	memset(kinds, 0, sizeof(*kinds));
	kinds->bits = register_bits(estimate);
	kinds->first_task_id = first_task_id;
}

void legion_kinds_free(struct legion_kinds *kinds)
{
	for (size_t i = 0; i < kinds->count; i++)
		free(kinds->kinds[i].name);
	free(kinds->kinds);
	free(kinds->steps);
	idmap_free(&kinds->by_name);
	memset(kinds, 0, sizeof(*kinds));
}

static const int variant_counts[LEGION_KIND_CLASSES] = {
	[LEGION_KIND_OP] = LEGION_KIND_MODE_UNSET + 1,
	[LEGION_KIND_TASK] = OPTRACE_VARIANT__COUNT,
	[LEGION_KIND_GPU] = 1,
};

/* Where a variant sits in its kind's block (the order of its ids). */
static int variant_index(enum legion_kind_class class, int variant)
{
	if (class == LEGION_KIND_GPU)
		return 0;
	if (variant < 0 || variant >= variant_counts[class])
		return class == LEGION_KIND_OP ? LEGION_KIND_MODE_UNSET : 0;
	return variant;
}

uint32_t legion_kinds_variant_id(enum legion_kind_class class, int variant)
{
	return LEGION_KINDS_SKIP_MAX + 1 + (uint32_t)variant_index(class, variant);
}

const char *legion_kinds_variant_name(enum legion_kind_class class, int variant)
{
	int index = variant_index(class, variant);

	switch (class) {
	case LEGION_KIND_OP:
		return index == LEGION_KIND_MODE_UNSET ? "mode not announced"
						       : optrace_mode_name(index);
	case LEGION_KIND_TASK:
		return optrace_variant_name(index);
	default:
		return "gpu";
	}
}

const char *legion_kinds_name(const struct legion_kinds *kinds, uint32_t task_id)
{
	size_t index = task_id - kinds->first_task_id;

	return task_id >= kinds->first_task_id && index < kinds->count ? kinds->kinds[index].name
								       : NULL;
}

static uint64_t name_hash(const char *name)
{
	return hash_text(HASH_SEED, name);
}

/* The hue the reader gives the variant at position (its rank among all variants). */
static int hue_at(struct legion_kinds *kinds, uint32_t position, double *hue)
{
	while (kinds->step_count <= position) {
		size_t capacity = kinds->step_count ? kinds->step_count * 2 : 256;
		uint32_t *steps = realloc(kinds->steps, capacity * sizeof(*steps));
		uint32_t value;

		if (!steps)
			return -ENOMEM;
		kinds->steps = steps;
		value = kinds->step_count ? steps[kinds->step_count - 1]
					  : register_seed(kinds->bits);
		while (kinds->step_count < capacity) {
			value = register_next(value, kinds->bits);
			steps[kinds->step_count++] = value;
		}
	}
	*hue = legion_kinds_hue(kinds->steps[position], kinds->bits);
	return 0;
}

/* How many unused variants to put first, for a hue far from the class's recent ones. */
static int choose_skip(struct legion_kinds *kinds, enum legion_kind_class class, int index,
		       uint32_t *skip, double *hue)
{
	double best = -1.0;
	int err;

	*skip = 0;
	for (uint32_t s = 0; s <= LEGION_KINDS_SKIP_MAX; s++) {
		double h, nearest = 1.0;

		err = hue_at(kinds, kinds->positions + s + (uint32_t)index, &h);
		if (err)
			return err;
		/* The kinds just used count most: older ones are drawn farther away. */
		for (unsigned int r = 0; r < kinds->recent_count[class]; r++) {
			unsigned int age = kinds->recent_count[class] - 1 - r;
			double d = hue_distance(h, kinds->recent[class][r]) * (1.0 + 0.5 * age);

			nearest = d < nearest ? d : nearest;
		}
		if (nearest > best) {
			best = nearest;
			*skip = s;
			*hue = h;
		}
		if (!kinds->recent_count[class])
			break;
	}
	return 0;
}

static void remember_hue(struct legion_kinds *kinds, enum legion_kind_class class, double hue)
{
	double *recent = kinds->recent[class];
	unsigned int *count = &kinds->recent_count[class];

	if (*count == LEGION_KINDS_WINDOW)
		memmove(recent, recent + 1, (LEGION_KINDS_WINDOW - 1) * sizeof(*recent));
	else
		(*count)++;
	recent[*count - 1] = hue;
}

static int add_kind(struct legion_kinds *kinds, enum legion_kind_class class, const char *name,
		    int variant, uint64_t hash, struct legion_kind **added, uint32_t *skip)
{
	struct legion_kind *kind;
	double hue = 0.0;
	int err;

	if (kinds->count == kinds->capacity) {
		size_t capacity = kinds->capacity ? kinds->capacity * 2 : 64;
		struct legion_kind *grown = realloc(kinds->kinds, capacity * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		kinds->kinds = grown;
		kinds->capacity = capacity;
	}
	err = choose_skip(kinds, class, variant_index(class, variant), skip, &hue);
	if (err)
		return err;
	kind = &kinds->kinds[kinds->count];
	kind->name = strdup(name);
	if (!kind->name)
		return -ENOMEM;
	kind->class = class;
	kind->task_id = kinds->first_task_id + (uint32_t)kinds->count;
	kind->position = kinds->positions + *skip;
	err = idmap_put(&kinds->by_name, class, hash, (void *)(uintptr_t)(kinds->count + 1));
	if (err) {
		free(kind->name);
		return err;
	}
	kinds->count++;
	kinds->positions += *skip + (uint32_t)variant_counts[class];
	remember_hue(kinds, class, hue);
	*added = kind;
	return 0;
}

/* The kind of (class, name): equal hashes of other names probe on. */
static struct legion_kind *find_kind(struct legion_kinds *kinds, enum legion_kind_class class,
				     const char *name, uint64_t *hash)
{
	for (;; (*hash)++) {
		uintptr_t index = (uintptr_t)idmap_get(&kinds->by_name, class, *hash);

		if (!index)
			return NULL;
		if (!strcmp(kinds->kinds[index - 1].name, name))
			return &kinds->kinds[index - 1];
	}
}

int legion_kinds_use(struct legion_kinds *kinds, struct legion_prof *prof,
		     enum legion_kind_class class, const char *name, int variant, uint32_t *task_id)
{
	uint64_t hash = name_hash(name);
	struct legion_kind *kind = find_kind(kinds, class, name, &hash);
	uint32_t skip = 0;
	int err = 0;

	if (!kind) {
		err = add_kind(kinds, class, name, variant, hash, &kind, &skip);
		if (err)
			return err;
	}
	*task_id = kind->task_id;
	if (legion_prof_task_kind_declared(prof, kind->task_id))
		return 0;
	err = legion_prof_task_kind(prof, kind->task_id, name);
	/* Never drawn: they only move the kind's colours along the register. */
	for (uint32_t s = 1; !err && s <= skip; s++)
		err = legion_prof_task_variant(prof, kind->task_id, s, "unused");
	for (int v = 0; !err && v < variant_counts[class]; v++)
		err = legion_prof_task_variant(prof, kind->task_id,
					       legion_kinds_variant_id(class, v),
					       legion_kinds_variant_name(class, v));
	return err;
}

uint64_t legion_kinds_padding(const struct legion_kinds *kinds, uint64_t provenances,
			      uint64_t op_kinds)
{
	uint64_t have = kinds->positions + provenances + op_kinds;
	uint64_t least = 1ULL << (kinds->bits - 1);

	if (have >= 1ULL << kinds->bits)
		return 0;
	return have < least ? least - have : 0;
}
