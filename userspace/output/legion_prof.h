/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A writer of Legion Prof binary logs (prof_<node>.gz), the files that
 * `legion_prof` opens. The format is specified in docs/legion-format.md;
 * docs/legion.md says how optrace maps onto it. This is the API of the
 * whole writer, which includes no other header of it: legion_prof_log.c
 * opens and closes, legion_prof_core.c hands out ids, legion_records.c and
 * legion_spans.c write records, legion_strings.c makes strings safe.
 *
 * The writer keeps the invariants the reader asserts (docs/legion-format.md §3.4), so a
 * file it writes is valid for any input:
 *  - ids: processors, op ids, events and provenance ids are handed out by the
 *    writer, with the node in every id; records refuse ids it did not hand
 *    out (-EINVAL), a second OperationInstance or task record for one op id
 *    and a second record owning one fevent (-EEXIST);
 *  - descriptors: a task, op or meta-task kind used before it was declared
 *    gets a placeholder descriptor ("task 7", "variant 2", ...) written just
 *    before the record that uses it; at least two colourable descriptors
 *    exist at close;
 *  - times: timestamps above INT64_MAX become INT64_MAX (Legion writes them
 *    as long long); create <= ready <= start <= stop is restored by keeping
 *    start, raising stop to it and lowering ready and create (the run is the
 *    measured part); waits are clamped into their task's run;
 *  - user ranges (ApplicationCallInfo) exist only inside a span, so they
 *    always sit on their task's processor, inside its run, nested or
 *    disjoint, after their Provenance; a span still open at close is ended;
 *  - strings: every string is sanitised (legion_prof_sanitize()).
 *
 * Every function that can fail returns 0 or a negative errno. Argument
 * errors skip the record and leave the file valid. The first I/O error
 * (disk full, ...) is sticky: later calls return it and write nothing, and
 * legion_prof_close() returns it. A writer is not thread-safe.
 */
#ifndef OPTRACE_OUTPUT_LEGION_PROF_H
#define OPTRACE_OUTPUT_LEGION_PROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* MachineDesc.version: 1008 for Legion 25.06 readers, 1007 for 24.09-25.03. */
#define LEGION_PROF_VERSION 1008
#define LEGION_PROF_VERSION_1007 1007

/* Longest string written, in bytes without the NUL; longer ones end in "…". */
#define LEGION_PROF_STRING_MAX 4096
/* Realm's limits: 16-bit node field with all ones reserved, 12-bit proc index. */
#define LEGION_PROF_NODE_MAX 65534
#define LEGION_PROF_PROCS_MAX 4096
/* OperationInstance.parent_id of an operation launched by no task. */
#define LEGION_PROF_NO_PARENT UINT64_MAX
/* The OpDesc kind of tasks; the writer declares it ("Task") when it opens. */
#define LEGION_PROF_OP_KIND_TASK 30

/* ProcDesc.kind: Realm's Processor::Kind (docs/legion-format.md §2.3). */
enum legion_prof_proc_kind {
	LEGION_PROF_PROC_GPU = 1,
	LEGION_PROF_PROC_CPU = 2,
	LEGION_PROF_PROC_UTILITY = 3,
	LEGION_PROF_PROC_IO = 4,
	LEGION_PROF_PROC_OPENMP = 7,
	LEGION_PROF_PROC_PYTHON = 8,
};

/* What MachineDesc and ZeroTime say, and how the file is written. */
struct legion_prof_options {
	uint32_t version;     /* LEGION_PROF_VERSION (also when 0) or _1007 */
	uint32_t node_id;     /* this file's node: < num_nodes, <= LEGION_PROF_NODE_MAX */
	uint32_t num_nodes;   /* files in the profile; 0 means 1 */
	bool raw;	      /* no gzip (the reader accepts both) */
	const char *hostname; /* free text; NULL: "" */
	uint64_t host_id;
	uint32_t process_id;
	int64_t zero_time_ns; /* absolute time of timestamp 0 (ZeroTime) */
	/*
	 * A new descriptor of the same file, open for appending, or a negative
	 * errno: how the writer gets its file back after
	 * legion_prof_release_fd(). NULL: the descriptor is never released.
	 */
	int (*reopen)(void *ctx);
	void *reopen_ctx;
};

struct legion_prof;
struct legion_prof_kv; /* below */

/*
 * Creates path (truncating it) and writes the preamble, MachineDesc,
 * ZeroTime and OpDesc(30, "Task"). options may be NULL for the defaults.
 * Output is one gzip member (the reader decodes only the first) unless raw.
 */
int legion_prof_open(struct legion_prof **prof, const char *path,
		     const struct legion_prof_options *options);
/* The same on an open file descriptor, which close then owns (not on failure). */
int legion_prof_fdopen(struct legion_prof **prof, int fd,
		       const struct legion_prof_options *options);
/* Pushes everything written so far to the file (a full flush, no new gzip member). */
int legion_prof_flush(struct legion_prof *prof);
/*
 * Hands back the file's descriptor (the caller closes it) when the writer
 * has a reopen callback, so that a program writing more logs than it may
 * hold descriptors keeps only some open: the writer calls reopen when it
 * next has bytes for the file. -EINVAL without one or when released.
 */
int legion_prof_release_fd(struct legion_prof *prof);
/* Ends open spans, completes the descriptors, closes and frees; the first error. */
int legion_prof_close(struct legion_prof *prof);

/* Realm ids as docs/legion-format.md §2.3 and §2.8 lay them out (the node is in the id). */
uint64_t legion_prof_proc_id(uint32_t node, uint32_t index);
uint64_t legion_prof_event_id(uint32_t node, uint64_t index, uint32_t generation);

/*
 * Hands out a new op id: node_id, then steps of num_nodes (node 0 starts at
 * num_nodes), as Legion does, so ids are unique across all the files of a
 * profile written with distinct node_ids. Never 0 or UINT64_MAX.
 */
int legion_prof_new_op(struct legion_prof *prof, uint64_t *op_id);
/*
 * Hands out a new event id (index 1, 2, ..., generation 1, node in the id):
 * the fevent of a task known before its record is written (for spans, and
 * for the creator of its children). Every event handed out should become one
 * record's fevent: until then it costs a bit of memory.
 */
int legion_prof_new_event(struct legion_prof *prof, uint64_t *event);

/* Declares a processor: writes ProcDesc (uuid: 16 bytes, or NULL for zeros). */
int legion_prof_proc_desc(struct legion_prof *prof, enum legion_prof_proc_kind kind,
			  const uint8_t *cuda_uuid, uint64_t *proc_id);
/* Descriptors: each writes one record; declaring again renames. */
int legion_prof_op_desc(struct legion_prof *prof, uint32_t kind, const char *name);
int legion_prof_meta_desc(struct legion_prof *prof, uint32_t kind, const char *name);
int legion_prof_task_kind(struct legion_prof *prof, uint32_t task_id, const char *name);
int legion_prof_task_variant(struct legion_prof *prof, uint32_t task_id, uint32_t variant_id,
			     const char *name);
/*
 * The same for the provenance legion_prof_provenance_json() builds of
 * human and pairs (the form both viewers split into lines), its '$' kept.
 */
int legion_prof_provenance_fields(struct legion_prof *prof, const char *human,
				  const struct legion_prof_kv *pairs, size_t count,
				  uint64_t *provenance);
/* Whether the file has a TaskKind for task_id. */
bool legion_prof_task_kind_declared(const struct legion_prof *prof, uint32_t task_id);
/*
 * Writes a Provenance record for text and returns its id; a text seen
 * recently returns the id it got then instead of a new record.
 */
int legion_prof_provenance(struct legion_prof *prof, const char *text, uint64_t *provenance);

/* Provenance records written so far (each is a colourable descriptor, §2.5). */
uint64_t legion_prof_provenance_count(const struct legion_prof *prof);
/*
 * Writes count empty Provenance records that nothing refers to: they only
 * change how many colours the reader's generator makes (legion_kinds.h).
 */
int legion_prof_colour_padding(struct legion_prof *prof, uint64_t count);

/*
 * OperationInstance: op_id from legion_prof_new_op(), at most once per op;
 * parent_id an op id or LEGION_PROF_NO_PARENT; provenance 0 (none) or an id
 * from legion_prof_provenance().
 */
int legion_prof_operation_instance(struct legion_prof *prof, uint64_t op_id, uint64_t parent_id,
				   uint32_t kind, uint64_t provenance);

/* One run of a task (TaskInfo, GPUTaskInfo, or a span). Times in ns from zero time. */
struct legion_prof_task {
	uint64_t op_id; /* from legion_prof_new_op(); one run per op */
	uint32_t task_id;
	uint32_t variant_id;
	uint64_t proc_id; /* from legion_prof_proc_desc() */
	uint64_t create;  /* launched */
	uint64_t ready;	  /* preconditions met */
	uint64_t start;
	uint64_t stop;	    /* spans: ignored */
	uint64_t gpu_start; /* GPU tasks only: the kernel(s) on the device */
	uint64_t gpu_stop;
	uint64_t creator; /* fevent of the launching task, or 0 */
	uint64_t fevent;  /* in: 0 or from legion_prof_new_event(); out: the one written */
};

/* A time the task waited inside its run (TaskWaitInfo). */
struct legion_prof_wait {
	uint64_t start;
	uint64_t ready;
	uint64_t end;
	uint64_t event; /* what it waited on: an event handed out here, or 0 for a fresh one */
};

/* TaskInfo, then a TaskWaitInfo for each wait (the reader needs that order). */
int legion_prof_task_info(struct legion_prof *prof, struct legion_prof_task *task,
			  const struct legion_prof_wait *waits, size_t wait_count);
/* GPUTaskInfo (proc_id must be a GPU processor), then its waits. */
int legion_prof_gpu_task_info(struct legion_prof *prof, struct legion_prof_task *task,
			      const struct legion_prof_wait *waits, size_t wait_count);

/* A runtime meta-task on a (Utility) processor: MetaInfo. */
struct legion_prof_meta_task {
	uint64_t op_id; /* the operation it works for (any op id handed out) */
	uint32_t kind;	/* a MetaDesc kind (lg_id) */
	uint64_t proc_id;
	uint64_t create;
	uint64_t ready;
	uint64_t start;
	uint64_t stop;
	uint64_t creator;
	uint64_t fevent; /* in: 0 or from legion_prof_new_event(); out: the one written */
};

int legion_prof_meta_info(struct legion_prof *prof, struct legion_prof_meta_task *meta);

/*
 * A span is a task run whose end is not known yet and that holds user ranges
 * (ApplicationCallInfo), e.g. the top-level task of the thread that issues
 * operations. Ranges form a stack, begun and ended in the order they happen;
 * each is written when it ends, titled by a Provenance. A range starts no
 * earlier than its parent range or its previous sibling ended, and a range
 * or span ends no earlier than its children, so ranges are always nested or
 * disjoint inside the span's run. Nesting deeper than 256 is refused
 * (-ERANGE, on begin and on the matching end).
 */
struct legion_prof_span;

/* Starts a span: task->stop is ignored, task->fevent is filled in. */
int legion_prof_span_begin(struct legion_prof *prof, struct legion_prof_task *task,
			   struct legion_prof_span **span);
int legion_prof_range_begin(struct legion_prof_span *span, uint64_t start);
/* Ends the innermost open range, titled title (e.g. "add [deferred; CPU×2] main.c:12"). */
int legion_prof_range_end(struct legion_prof_span *span, const char *title, uint64_t stop);
/*
 * Ends open ranges (titled "(unfinished)"), writes the span's TaskInfo with
 * stop no earlier than its last range, and frees the span, even on error.
 */
int legion_prof_span_end(struct legion_prof_span *span, uint64_t stop);

/*
 * Makes untrusted text safe for every string field: bytes that are not
 * UTF-8 become U+FFFD (the reader rejects the file otherwise), control
 * characters become spaces (they break the legacy TSV and popup lines), '$'
 * becomes U+FF04 '＄' (the legacy viewer splits titles and provenances on
 * '$'), and text longer than LEGION_PROF_STRING_MAX or size - 1 bytes is cut
 * at a character boundary and ends in "…". src may be NULL. Returns the
 * length written to dst (NUL-terminated when size > 0).
 */
size_t legion_prof_sanitize(char *dst, size_t size, const char *src);

/* One "key": "value" member of a provenance's JSON object. */
struct legion_prof_kv {
	const char *key;
	const char *value;
};

/*
 * Builds a provenance that both viewers split into "key: value" lines, one
 * per pair, sorted by key (the new viewer's order: docs/legion-format.md §2.6, §6):
 * ["human$k1,v1|k2,v2,", {"k1": "v1", "k2": "v2"}]. The new viewer reads the
 * JSON object and drops the first part; the legacy viewer splits the whole
 * text on its one '$', the pairs on '|' and each pair on ',', so the first
 * part carries its pairs, and the ',' after the last one hides the JSON
 * that follows. In that part ',', '|', '"' and '\' become look-alikes.
 * Each part is sanitised (no other '$') and escaped; lines are bounded
 * (keys 32 bytes, values 96, the human text 160) and members that do not
 * fit are left out, so the result is always valid JSON of at most
 * LEGION_PROF_STRING_MAX bytes. Pairs with a NULL key or value are left
 * out. Returns its length, or -ENOSPC if size is below 64.
 */
int legion_prof_provenance_json(char *dst, size_t size, const char *human,
				const struct legion_prof_kv *pairs, size_t count);

#endif /* OPTRACE_OUTPUT_LEGION_PROF_H */
