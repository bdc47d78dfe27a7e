/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The task kinds of one Legion Prof export, shared by all its files: the
 * reader takes task and variant ids as global (docs/legion-format.md §2.4), so a name
 * gets one id for the whole job, not one per file.
 *
 * Colours: the reader colours each (task, variant) by its rank in id order,
 * through a linear-feedback shift register whose width follows the number
 * of colourable descriptors (state.rs assign_colors, compute_color, Lfsr).
 * The table plans that width (legion_kinds_init()), replays the register,
 * and places each new kind, in the order kinds are first used, where its
 * main variant's hue is farthest from the kinds used just before it: up to
 * LEGION_KINDS_SKIP_MAX unused variants (ids below the real ones, never
 * drawn) move it along the register. The export pads the descriptors at
 * the end so that the reader's width is the planned one
 * (legion_kinds_padding()). docs/legion.md says how.
 */
#ifndef OPTRACE_OUTPUT_LEGION_KINDS_H
#define OPTRACE_OUTPUT_LEGION_KINDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/idmap.h"
#include "output/legion_prof.h"

enum legion_kind_class {
	LEGION_KIND_OP,	  /* an operation: variants are its modes */
	LEGION_KIND_TASK, /* a task: variants cpu, omp, gpu, fallback */
	LEGION_KIND_GPU,  /* a kernel, copy or memset: variant gpu */
	LEGION_KIND_CLASSES
};

/* An operation whose mode was never announced: its variant. */
#define LEGION_KIND_MODE_UNSET OPTRACE_MODE__COUNT
#define LEGION_KINDS_SKIP_MAX 15
/* Kinds remembered per class when placing the next one. */
#define LEGION_KINDS_WINDOW 16

struct legion_kind {
	char *name;
	enum legion_kind_class class;
	uint32_t task_id;
	uint32_t position; /* of its first real variant among all variants */
};

struct legion_kinds {
	struct legion_kind *kinds; /* by task id - 1 */
	size_t count, capacity;
	struct idmap by_name; /* (class, name hash) -> index + 1 */
	uint32_t positions;   /* variants declared in the job, unused ones too */
	unsigned int bits;    /* the register width planned for */
	uint32_t *steps;      /* the register's values, by position */
	size_t step_count;
	double recent[LEGION_KIND_CLASSES][LEGION_KINDS_WINDOW]; /* hues just placed */
	unsigned int recent_count[LEGION_KIND_CLASSES];
	uint32_t first_task_id;
};

/*
 * estimate: how many colourable descriptors the export will have (its
 * provenances, about one per operation drawn, and its variants);
 * first_task_id: the lowest id to hand out.
 */
void legion_kinds_init(struct legion_kinds *kinds, uint64_t estimate, uint32_t first_task_id);
void legion_kinds_free(struct legion_kinds *kinds);

/*
 * The id of (class, name) in the job; the first time prof uses it, writes
 * its TaskKind and every variant of its class there (and, the first time
 * in the job, the unused variants that place its colour). variant: the
 * variant of this use, the one its colour is chosen for.
 */
int legion_kinds_use(struct legion_kinds *kinds, struct legion_prof *prof,
		     enum legion_kind_class class, const char *name, int variant,
		     uint32_t *task_id);

/* The variant id of a variant of a class (an op's mode, a task's variant). */
uint32_t legion_kinds_variant_id(enum legion_kind_class class, int variant);

/* The variant's name: "deferred", "omp", ... */
const char *legion_kinds_variant_name(enum legion_kind_class class, int variant);

/* The name of a task id of the job, or NULL. */
const char *legion_kinds_name(const struct legion_kinds *kinds, uint32_t task_id);

/*
 * How many empty descriptors to add so that the reader's register is the
 * planned one, given the provenances and op kinds the files hold (0 when
 * there are more than planned: colours are then the reader's own).
 */
uint64_t legion_kinds_padding(const struct legion_kinds *kinds, uint64_t provenances,
			      uint64_t op_kinds);

/* What the reader computes: the hue (0 <= h < 1) of the value'th colour of a 2^bits register. */
double legion_kinds_hue(uint32_t value, unsigned int bits);

#endif /* OPTRACE_OUTPUT_LEGION_KINDS_H */
