/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The Legion Prof logs of optrace export, read by the independent reader
 * of legion_read.h, against the demo's ground truth, for the tests of
 * optrace export (test_export*.c).
 */
#ifndef OPTRACE_TEST_EXPORT_LEGION_H
#define OPTRACE_TEST_EXPORT_LEGION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "legion_read.h"
#include "testlib.h"

/* What one file of an export must say of its process. */
struct legion_expect {
	uint32_t version;
	uint32_t node;
	uint32_t nodes;
	pid_t pid;
	int threads; /* issuing threads: one top-level task each */
	bool python;
	bool show_helpers;
};

/* Reads the file at path into summary; it must be a valid log of version. */
void read_summary(const char *path, uint32_t version, struct legion_summary *summary);

/* An operation drawn as a task: its popup says where its work ran. */
bool is_op(const struct legion_task *t);

/*
 * The file at path against its process's truth and e: tasks, operations
 * and their popups; ranges gets its operations by title (the keys of
 * count_title()).
 */
void check_legion_file(const char *path, const struct counts *truth, const struct legion_expect *e,
		       struct counts *ranges);

/* The prof_*.gz of an export directory: exactly the nodes expected. */
void check_file_names(const char *out, const uint32_t *nodes, int count);

#endif /* OPTRACE_TEST_EXPORT_LEGION_H */
