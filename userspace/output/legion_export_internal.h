/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the pieces of the Legion Prof export share (callers have
 * output/legion_export.h): the exporter, its processes and their issuing
 * threads, workers and provenance cache, and the functions one piece calls
 * in another. legion_export.c holds the passes over a capture, the
 * processes and their log files; legion_export_ops.c the issuing threads
 * and the ranges of their operations; legion_export_tasks.c the workers,
 * task kinds, provenances and task runs; legion_export_gpu.c GPU activity.
 */
#ifndef OPTRACE_OUTPUT_LEGION_EXPORT_INTERNAL_H
#define OPTRACE_OUTPUT_LEGION_EXPORT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/idmap.h"
#include "common/outfile.h"
#include "model/replay.h"
#include "output/legion_export.h"
#include "output/legion_prof.h"

#include "output/legion_kinds.h"

#define MAX_PROCESSES 4096
/* Task groups an operation's fields list: the largest; the rest are counted. */
#define OP_GROUPS_MAX 32
#define OP_GROUPS_SHOWN 5

/* The task points of one kind and variant an operation launched. */
struct task_group {
	uint32_t task_id;
	int variant;
	uint32_t points;
	uint64_t ns;
};

/*
 * An operation drawn as a task on its issuing thread's processor (every
 * root, and helpers with show_helpers), from its begin until it is done:
 * its op id and fevent are given out at its begin, so that the task runs it
 * launches name it as their parent and creator before its own record.
 */
struct op_entry {
	uint64_t op_id;
	uint64_t fevent;
	struct task_group groups[OP_GROUPS_MAX];
	size_t group_count;
	uint32_t other_points; /* of groups past OP_GROUPS_MAX */
	uint64_t other_ns;
	uint32_t other_groups;
};

struct issuer {
	uint64_t proc;
};

struct worker {
	uint64_t proc;
	int variant;
	/* The run that launched GPU activity: its op id and fevent, given out early. */
	uint64_t run_task;
	uint32_t run_point;
	uint64_t run_begin_ns;
	uint64_t run_op; /* 0: none */
	uint64_t run_fevent;
};

/*
 * Task points of one kind of operation share one provenance: remembered by
 * what it says, so that it is built and written once, not once per point.
 */
#define PROVENANCE_CACHE 256

struct provenance_key {
	uint64_t task_name; /* 0: GPU activity */
	uint64_t op_name;
	uint64_t root_name;
	uint64_t callsite;
	uint64_t root_callsite; /* the user's, for a helper's points */
	int mode;
	int reason;
	int fallback;
	int variant;
};

struct provenance_cache_entry {
	struct provenance_key key;
	uint64_t id; /* 0: empty */
};

struct process {
	struct provenance_cache_entry provenances[PROVENANCE_CACHE];
	uint32_t tgid;
	int rank;
	uint32_t node;
	struct legion_prof *prof;
	struct out_file out; /* prof_<node>.gz, written under a temporary name */
	bool out_open;
	struct exporter *exporter; /* for the writer's reopen callback */
	uint64_t fd_opened;	   /* when its descriptor was opened (a tick); 0: not held */
	struct idmap issuers;	   /* tid -> struct issuer */
	struct idmap workers;	   /* tid -> struct worker */
	struct idmap tasks;	   /* task name address -> the job's task id */
	struct idmap ops;	   /* profile op id -> struct op_entry, while drawn and not done */
	struct idmap gpus;	   /* CUDA device id -> its GPU processor id */
	struct idmap gpu_tasks;	   /* (activity kind, name id or copy kind) -> task id */
};

struct exporter {
	const struct legion_export_options *options;
	const struct capture_header *header;
	struct process *processes;
	size_t process_count;
	struct idmap by_tgid;	   /* tgid -> process index + 1 */
	struct idmap ranks;	   /* tgid -> the rank it announced + 1 */
	struct legion_kinds kinds; /* the job's task kinds, one id per name in every file */
	uint64_t drawn_estimate;   /* operations and task launches the first pass saw */
	uint64_t gpu_untimed;	   /* GPU activities CUPTI gave no times for: not drawn */
	bool made_directory;	   /* removed again if the export fails */
	int directory;		   /* the output directory, opened once (-1: not yet) */
	size_t fds_held;	   /* descriptors of logs held open */
	size_t fd_budget;	   /* at most that many, from RLIMIT_NOFILE */
	uint64_t fd_tick;
	bool procs_said; /* the processor limit was said */
	int error;
};

/* legion_export.c: the processes, and what every piece uses. */
uint64_t legion_export_since_zero(const struct exporter *exporter, uint64_t ns);
void legion_export_note_error(struct exporter *exporter, int err);
/*
 * A processor of the process's log (legion_prof_proc_desc()); past Legion
 * Prof's 4,096 processors a process, a message that says what to do, once.
 */
int legion_export_proc_desc(struct exporter *exporter, struct process *process,
			    enum legion_prof_proc_kind kind, uint64_t *proc);
struct process *legion_export_process_of(struct exporter *exporter, uint32_t tgid, bool add);

/* legion_export_ops.c: the issuing threads and their operations. */
void legion_export_on_op_begin(void *ctx, const struct profile *profile,
			       const struct profile_op *op);
void legion_export_on_op_done(void *ctx, const struct profile *profile,
			      const struct profile_op *op);
/* The drawn operation a task run or GPU activity of op belongs to, or NULL. */
struct op_entry *legion_export_drawn_op(struct exporter *exporter, struct process *process,
					const struct profile_op *op);
/*
 * The creator a record made at create_ns can name: the fevent of the
 * drawn operation of op when create_ns lies inside its run (the viewer
 * looks the creator up at that time), else 0.
 */
uint64_t legion_export_creator(struct exporter *exporter, struct process *process,
			       const struct profile_op *op, uint64_t create_ns);
/* "3.2 ms", "450 us", "12 ns". */
void legion_export_duration(char *text, size_t size, uint64_t ns);

/* legion_export_tasks.c: the workers, task kinds, provenances and task runs. */
void legion_export_on_task_run(void *ctx, const struct profile *profile,
			       const struct profile_run *run);
struct worker *legion_export_worker_of(struct exporter *exporter, struct process *process,
				       uint32_t tid, int variant);
int legion_export_run_variant(const struct profile_run *run);
int legion_export_claim_run(struct process *process, struct worker *worker,
			    const struct profile_run *run);
int legion_export_provenance_of(struct exporter *exporter, struct process *process,
				const struct profile *profile, const struct profile_op *op,
				uint64_t task_name, uint64_t op_name, uint64_t root_name,
				int variant, uint64_t *provenance);

/* legion_export_gpu.c: kernels, copies and memsets. */
void legion_export_on_gpu(void *ctx, const struct profile *profile, const struct profile_gpu *gpu);

#endif /* OPTRACE_OUTPUT_LEGION_EXPORT_INTERNAL_H */
