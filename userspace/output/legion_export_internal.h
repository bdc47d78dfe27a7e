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
#ifndef OPTRACE_LEGION_EXPORT_INTERNAL_H
#define OPTRACE_LEGION_EXPORT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/idmap.h"
#include "common/outfile.h"
#include "model/replay.h"
#include "output/legion_export.h"
#include "output/legion_prof.h"

#define MAIN_TASK_ID 1
#define MAX_PROCESSES 4096

struct helper {
	uint64_t begin_ns;
	uint64_t end_ns;
	uint32_t depth;
	char *title;
};

/* A root operation, from its begin until it is written. */
struct root_entry {
	uint64_t op;
	bool done;
	uint64_t begin_ns;
	uint64_t end_ns;
	char *title;
	struct helper *helpers;
	size_t helper_count;
};

struct issuer {
	uint64_t proc;
	uint64_t op;	 /* the top-level task's op id */
	uint64_t fevent; /* and its fevent: the creator of what the thread launches */
	struct legion_prof_span *span;
	struct root_entry **queue; /* in begin order */
	size_t head;
	size_t count;
	size_t capacity;
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
	uint64_t op_name;
	uint64_t root_name;
	uint64_t callsite;
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
	struct idmap issuers;	/* tid -> struct issuer */
	struct idmap workers;	/* tid -> struct worker */
	struct idmap tasks;	/* task name address -> task id */
	struct idmap roots;	/* root op id -> struct root_entry */
	struct idmap gpus;	/* CUDA device id -> its GPU processor id */
	struct idmap gpu_tasks; /* (activity kind, name id or copy kind) -> task id */
	uint32_t next_task_id;
	uint8_t variants_declared[MAX_PROCESSES / 8];
};

struct exporter {
	const struct legion_export_options *options;
	const struct capture_header *header;
	struct process *processes;
	size_t process_count;
	struct idmap by_tgid; /* tgid -> process index + 1 */
	struct idmap ranks;   /* tgid -> the rank it announced + 1 */
	uint64_t gpu_untimed; /* GPU activities CUPTI gave no times for: not drawn */
	bool made_directory;  /* removed again if the export fails */
	int error;
};

/* legion_export.c: the processes, and what every piece uses. */
uint64_t legion_export_since_zero(const struct exporter *exporter, uint64_t ns);
void legion_export_note_error(struct exporter *exporter, int err);
struct process *legion_export_process_of(struct exporter *exporter, uint32_t tgid, bool add);

/* legion_export_ops.c: the issuing threads and the ranges of their operations. */
void legion_export_on_op_begin(void *ctx, const struct profile *profile,
			       const struct profile_op *op);
void legion_export_on_op_done(void *ctx, const struct profile *profile,
			      const struct profile_op *op);
void legion_export_flush_issuer(struct exporter *exporter, struct process *process,
				struct issuer *issuer);
void legion_export_free_entry(struct root_entry *entry);

/* legion_export_tasks.c: the workers, task kinds, provenances and task runs. */
void legion_export_on_task_run(void *ctx, const struct profile *profile,
			       const struct profile_run *run);
struct worker *legion_export_worker_of(struct exporter *exporter, struct process *process,
				       uint32_t tid, int variant);
int legion_export_run_variant(const struct profile_run *run);
int legion_export_claim_run(struct process *process, struct worker *worker,
			    const struct profile_run *run);
int legion_export_provenance_of(struct process *process, const struct profile *profile,
				const struct profile_op *op, uint64_t op_name, uint64_t root_name,
				int variant, uint64_t *provenance);
void legion_export_declare_variant(struct process *process, uint32_t task_id, int variant);

/* legion_export_gpu.c: kernels, copies and memsets. */
void legion_export_on_gpu(void *ctx, const struct profile *profile, const struct profile_gpu *gpu);

#endif /* OPTRACE_LEGION_EXPORT_INTERNAL_H */
