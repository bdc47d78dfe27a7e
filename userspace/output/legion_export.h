/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A capture's profile as Legion Prof logs, one prof_<node>.gz per traced
 * process (docs/legion.md): each issuing thread is a processor, each
 * operation the user called a task on it whose popup says how it ran and
 * what it launched (helpers too with show_helpers), each task point a
 * TaskInfo on its worker's CPU, OpenMP or GPU processor whose parent and
 * creator are its operation. Task ids are the job's, one per name. Each
 * kernel, copy and memset is a GPUTaskInfo on a GPU processor per CUDA
 * device: host interval its launch, device interval its run, the launching
 * task or thread its creator. A path may also be an OPTRACE_GPU_FILE alone.
 */
#ifndef OPTRACE_OUTPUT_LEGION_EXPORT_H
#define OPTRACE_OUTPUT_LEGION_EXPORT_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The options of the export format "legion" (output/export_format.h), made
 * from the driver's (session/export_run.c). Each log is written beside its
 * final name and renamed once the export succeeded (on failure none is:
 * the directory stays as it was); then the prof_<N>.gz an earlier export
 * left there and this one did not write are removed, so that legion_prof
 * DIR/prof_*.gz reads this run only.
 */
struct legion_export_options {
	const char *directory;
	uint32_t version; /* 1008 or 1007 */
	bool show_helpers;
	bool internal;		   /* with show_helpers: helpers' library-internal call sites */
	bool python;		   /* issuing threads are Python processors, not CPU ones */
	const char *gpu_file;	   /* an OPTRACE_GPU_FILE to merge, or NULL */
	const char *const *inputs; /* every file read: no log may replace one */
	int input_count;
	bool force; /* --force: common/outfile.h's out_policy */
};

#endif /* OPTRACE_OUTPUT_LEGION_EXPORT_H */
