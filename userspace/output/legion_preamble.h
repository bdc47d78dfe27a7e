/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The start of every Legion Prof log (legion_preamble.c), for legion_prof_log.c:
 * the text preamble, MachineDesc and ZeroTime (docs/legion-format.md §2).
 */
#ifndef OPTRACE_OUTPUT_LEGION_PREAMBLE_H
#define OPTRACE_OUTPUT_LEGION_PREAMBLE_H

#include "output/legion_prof.h"

int legion_prof_write_header(struct legion_prof *prof, const struct legion_prof_options *options);

#endif /* OPTRACE_OUTPUT_LEGION_PREAMBLE_H */
