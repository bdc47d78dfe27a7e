/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The state of the Legion Prof reader of legion_read.h, shared by its
 * files: legion_record.c reads the preamble and the records,
 * legion_rules.c checks them, legion_summary.c sums them up and
 * legion_read.c reads whole files. Tests include legion_read.h.
 */
#ifndef OPTRACE_LEGION_READ_INTERNAL_H
#define OPTRACE_LEGION_READ_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "legion_read.h"

#define FAIL_TEXT_MAX 512

/* ---- what the reader collects ---------------------------------------------------- */

struct run {
	uint64_t op, proc, start, stop, fevent;
	uint32_t task, variant;
	bool gpu;
};

struct interval {
	uint64_t start, stop, fevent, proc;
	bool call;
};

enum key_list {
	TASK_KINDS,
	VARIANTS,
	OP_KINDS,
	META_KINDS,
	PROVENANCES,
	OP_INSTANCES,
	FEVENTS,
	USED_OP_KINDS,
	USED_META_KINDS,
	KEY_LISTS
};

/* A growable array of elements of one size. */
struct vec {
	void *items;
	size_t count;
	size_t capacity;
};

struct legion_check {
	bool strict; /* files of optrace's writer: sanitised strings, runs hold their waits */
	uint32_t expect_version;
	uint32_t ids[LEGION_RECORD_KINDS];
	bool declared[LEGION_RECORD_KINDS];
	size_t counts[LEGION_RECORD_KINDS];
	uint32_t node_id;
	struct vec procs;		/* struct legion_proc */
	struct vec keys[KEY_LISTS];	/* uint64_t, by enum key_list */
	struct vec runs;		/* struct run */
	struct vec intervals;		/* struct interval: calls and waits, by task fevent */
	struct legion_summary *summary; /* filled in when not NULL */
	char error[FAIL_TEXT_MAX];
};

/* Keeps the text of the first rule that failed, and returns false. */
#define FAIL(p, ...)                                                           \
	do {                                                                   \
		if (!(p)->error[0])                                            \
			snprintf((p)->error, sizeof((p)->error), __VA_ARGS__); \
		return false;                                                  \
	} while (0)

/* legion_record.c: the preamble (§1.1), then one record at *offset (§1.2, §2). */
bool legion_parse_preamble(struct legion_check *p, const struct legion_blob *file, size_t *offset);
bool legion_read_record(struct legion_check *p, const struct legion_blob *file, size_t *offset,
			struct legion_record *r);

/* legion_rules.c: the rules one record must keep, then those of the whole file (§3.4). */
bool legion_check_record(struct legion_check *p, const struct legion_record *r);
bool legion_check_whole(struct legion_check *p);

/* legion_summary.c: one record into p->summary, then names and links resolved by id. */
bool legion_note_record(struct legion_check *p, const struct legion_record *r);
int legion_summary_resolve(struct legion_summary *s);

#endif /* OPTRACE_LEGION_READ_INTERNAL_H */
