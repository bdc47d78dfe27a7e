/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * An independent reader of Legion Prof logs, written from
 * docs/legion-format.md and not from optrace's writer: it reads a file
 * record by record with the layouts of its §2 and checks every rule
 * of §3.4 that makes the real reader (legion_prof 25.06) panic or lose
 * data, so that tests can say "Legion Prof would open this". It also sums a
 * file up (processors, tasks, ranges, provenances) for tests that compare a
 * profile with what was traced.
 *
 * Strict mode adds what optrace's writer promises beyond the reader's
 * rules (docs/legion.md): sanitised strings (no control characters, no '$',
 * at most LEGION_PROF_STRING_MAX bytes), JSON provenances that parse, waits
 * inside their task's run, every OperationInstance provenance declared, and
 * a gzip file of a single member.
 */
#ifndef OPTRACE_LEGION_READ_H
#define OPTRACE_LEGION_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The record kinds the reader has layouts for (docs/legion-format.md §2). */
enum legion_record_kind {
	LEGION_MACHINE_DESC,
	LEGION_ZERO_TIME,
	LEGION_CALIBRATION_ERR,
	LEGION_MAX_DIM_DESC,
	LEGION_PROC_DESC,
	LEGION_MEM_DESC,
	LEGION_OP_DESC,
	LEGION_META_DESC,
	LEGION_TASK_KIND,
	LEGION_TASK_VARIANT,
	LEGION_PROVENANCE,
	LEGION_OPERATION_INSTANCE,
	LEGION_TASK_INFO,
	LEGION_GPU_TASK_INFO,
	LEGION_META_INFO,
	LEGION_TASK_WAIT_INFO,
	LEGION_APPLICATION_CALL_INFO,
	LEGION_RECORD_KINDS
};

/* ProcDesc kinds (Realm's, §2.3): 1 GPU, 2 CPU, 3 Utility, 7 OpenMP, 8 Python. */
#define LEGION_PROC_KIND_MAX 8

/* A file's bytes. */
struct legion_blob {
	unsigned char *data;
	size_t length;
};

/*
 * Reads a whole file; with gzip through zlib, which reads a file that is
 * not gzip as it is and every gzip member one after the other. 0 or -1.
 */
int legion_blob_read(const char *path, bool gzip, struct legion_blob *blob);

/*
 * Reads a file as legion_prof does (docs/legion-format.md §1.3): a gzip file is
 * decoded, only its first member, anything else is taken raw. A second
 * member (which the reader silently drops) or a corrupt gzip stream is an
 * error. 0, or -1 with why saying what is wrong.
 */
int legion_blob_read_log(const char *path, struct legion_blob *blob, char *why, size_t size);

void legion_blob_free(struct legion_blob *blob);

/*
 * One record: its numeric fields in binary order in v[] (a string field's
 * slot holds its index in s[], a uuid's its length); strings point into
 * the blob that was read.
 */
struct legion_record {
	enum legion_record_kind kind;
	uint64_t v[16];
	const char *s[2];
};

/* ---- checking -------------------------------------------------------------- */

/* The outcome of reading and checking one file. */
struct legion_check;

/*
 * Reads a whole profile (the decoded bytes) and checks it against the
 * rules of docs/legion-format.md, with MachineDesc.version to equal version. Never
 * NULL; free with legion_check_free().
 */
struct legion_check *legion_check_read(const struct legion_blob *file, uint32_t version,
				       bool strict);
/* "" when every rule holds, else the first rule that failed. */
const char *legion_check_error(const struct legion_check *check);
/* Records of kind read (up to the first failure). */
size_t legion_check_count(const struct legion_check *check, enum legion_record_kind kind);
void legion_check_free(struct legion_check *check);

/*
 * Reads the file at path as legion_prof would and checks it in strict mode.
 * 0 when valid, else -1 with why saying which rule failed.
 */
int legion_validate_file(const char *path, uint32_t version, char *why, size_t size);

/* The first TaskInfo or GPUTaskInfo of op in a file, read without checks. */
bool legion_find_task_record(const struct legion_blob *file, uint64_t op,
			     struct legion_record *found);

/* Well-formed UTF-8, by code point: what Rust's String::from_utf8 accepts. */
bool legion_utf8_valid(const unsigned char *s, size_t length);

/*
 * A provenance in the form the viewer splits (docs/legion-format.md §2.6),
 * ["human", {"k": "v", ...}], checked with serde_json's grammar: the number
 * of members, or -1.
 */
int legion_provenance_members(const char *text);

/* text is one JSON value by serde_json's grammar (nested at most 64 deep), and nothing else. */
bool legion_json_valid(const char *text);

/* ---- summary ----------------------------------------------------------------- */

struct legion_proc {
	uint64_t id;
	int kind;
};

struct legion_name {
	uint32_t task_id;
	uint32_t variant_id; /* TaskVariant only */
	const char *name;    /* the last one declared */
};

/* A TaskInfo or GPUTaskInfo. Names are NULL when never declared. */
struct legion_task {
	uint64_t op_id;
	uint32_t task_id;
	uint32_t variant_id;
	const char *task_name;
	const char *variant_name;
	uint64_t proc_id;
	int proc_kind; /* 0 when the processor is not declared */
	uint64_t create, ready, start, stop;
	uint64_t gpu_start, gpu_stop; /* GPUTaskInfo only */
	uint64_t creator;
	uint64_t fevent;
	bool gpu;
	const char *provenance; /* its OperationInstance's provenance text, or NULL */
	uint64_t parent_op;	/* its OperationInstance's parent_id (UINT64_MAX: none) */
};

/* An ApplicationCallInfo (a user range). */
struct legion_range {
	uint64_t provenance_id;
	const char *title; /* the text of its Provenance */
	uint64_t start, stop;
	uint64_t proc_id;
	int proc_kind;
	uint64_t fevent;		/* its task's */
	const struct legion_task *task; /* the task of fevent, or NULL */
	unsigned int depth;		/* ranges of the same task that enclose it */
};

struct legion_provenance {
	uint64_t id;
	const char *text;
};

/* A TaskWaitInfo: a time the task of op_id waited. */
struct legion_wait {
	uint64_t op_id;
	uint64_t start, ready, end;
};

/* An OperationInstance. */
struct legion_op {
	uint64_t op_id;
	uint64_t parent_id;
	uint32_t kind;
	uint64_t provenance_id;
	const char *provenance; /* its text, or NULL */
};

struct legion_summary {
	struct legion_blob blob; /* every string below points into it */
	/* MachineDesc */
	uint32_t version;
	uint32_t node_id;
	uint32_t num_nodes;
	const char *hostname;
	uint32_t process_id;
	size_t records[LEGION_RECORD_KINDS];
	size_t procs_by_kind[LEGION_PROC_KIND_MAX + 1];
	struct legion_proc *procs;
	size_t proc_count;
	struct legion_name *task_kinds; /* by task id */
	size_t task_kind_count;
	struct legion_name *variants; /* by (task id, variant id) */
	size_t variant_count;
	struct legion_task *tasks; /* in file order */
	size_t task_count;
	struct legion_range *ranges; /* in file order (a range is written when it ends) */
	size_t range_count;
	struct legion_op *ops; /* in file order */
	size_t op_count;
	struct legion_provenance *provenances; /* in file order */
	size_t provenance_count;
	struct legion_wait *waits; /* in file order */
	size_t wait_count;
};

/*
 * Reads, checks (strict) and sums up the file at path. 0 when it is valid,
 * else -1 with why saying which rule failed; the summary holds what was
 * read either way and is freed with legion_summary_free().
 */
int legion_summary_read(const char *path, uint32_t version, struct legion_summary *summary,
			char *why, size_t size);
void legion_summary_free(struct legion_summary *summary);

/* The name of task_id / (task_id, variant_id), or NULL. */
const char *legion_task_name(const struct legion_summary *summary, uint32_t task_id);
const char *legion_variant_name(const struct legion_summary *summary, uint32_t task_id,
				uint32_t variant_id);

#endif /* OPTRACE_LEGION_READ_H */
