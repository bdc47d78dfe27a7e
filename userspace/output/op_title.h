/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef OPTRACE_OUTPUT_OP_TITLE_H
#define OPTRACE_OUTPUT_OP_TITLE_H

#include <stddef.h>

#include "model/profile.h"

/*
 * An operation's one-line story, as the profile viewers title it:
 * "cupynumeric.add [deferred; CPU×2 OMP×4] main.py:12", with the fallback
 * reason when one ran ("sort [fallback: unimplemented_api; host×1] x.py:3",
 * which says the fallback mode once) and
 * "(cut)" when the capture ended first. Task points are those of the
 * operation and its helpers. The text is as the process gave it: writers
 * sanitise it for their format.
 */
void op_title(const struct profile *profile, const struct profile_op *op, char *buffer,
	      size_t size);

/* "CPU", "OMP", "GPU", "host" (the reference path as a task): how titles name variants. */
const char *variant_title(int variant);

#endif /* OPTRACE_OUTPUT_OP_TITLE_H */
