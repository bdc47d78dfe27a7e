/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The data files of Legion Prof's legacy HTML viewer, laid out from
 * profiles read by the project's own reader, as `legion_prof legacy`
 * writes them at legion-25.06.0 (tools/legion_prof_rs/src/backend/
 * visualize.rs, emit_interactive_visualization; the rows and levels of
 * state.rs sort_time_range; the utilization of backend/common.rs), for
 * the records optrace writes: processors, tasks, GPU tasks, waits and
 * operations. The viewer itself (index.html, js/) is Legion's and is not
 * written here.
 *
 * It exists so that the legacy viewer can be looked at where legion_prof
 * cannot be built (it needs Rust 1.85): docs/legion.md's pictures.
 */
#ifndef OPTRACE_LEGION_LEGACY_H
#define OPTRACE_LEGION_LEGACY_H

#include <stddef.h>

#include "legion_read.h"

/*
 * Writes legion_prof_processor.tsv, legion_prof_ops.tsv, tsv/ and json/
 * of files[0..count) into dir, which must exist and be empty. 0, or -1
 * with why saying what failed.
 */
int legion_legacy_write(const char *dir, const struct legion_summary *files, size_t count,
			char *why, size_t size);

#endif /* OPTRACE_LEGION_LEGACY_H */
