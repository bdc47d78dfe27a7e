/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The colours Legion Prof gives a profile's task variants, written from
 * its code at legion-25.06.0 (tools/legion_prof_rs/src/state.rs:
 * assign_colors, Lfsr, compute_color) and not from optrace's writer: one
 * register step per colourable descriptor of all the files together
 * (variants in (task, variant) order, then op kinds, then provenances), a
 * register as wide as that count needs, the hue of a step its value over
 * the register's range.
 */
#ifndef OPTRACE_LEGION_COLOUR_H
#define OPTRACE_LEGION_COLOUR_H

#include <stddef.h>
#include <stdint.h>

#include "legion_read.h"

struct legion_colour {
	uint32_t task_id;
	uint32_t variant_id;
	double hue; /* 0 <= hue < 1, the H of compute_color's HSV */
};

struct legion_colours {
	struct legion_colour *colours; /* sorted by (task, variant) */
	size_t count;
	unsigned int bits; /* the register's width */
};

/* The colours of the variants of files[0..count). 0, or -1 on no memory. */
int legion_colours_of(const struct legion_summary *files, size_t count,
		      struct legion_colours *colours);
/* The hue of (task, variant), or -1 if it has none. */
double legion_colour_hue(const struct legion_colours *colours, uint32_t task_id,
			 uint32_t variant_id);
/* How far apart two hues are on the colour wheel: 0 to 0.5. */
double legion_hue_distance(double a, double b);
void legion_colours_free(struct legion_colours *colours);

#endif /* OPTRACE_LEGION_COLOUR_H */
