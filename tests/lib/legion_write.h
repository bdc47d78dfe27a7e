/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Profiles written with optrace's Legion Prof writer for its tests
 * (test_legion_prof*.c), and read back by the independent reader of
 * legion_read.h: scratch files, fixed writer options, and a small profile
 * of what optrace export writes for one process.
 */
#ifndef OPTRACE_TEST_LEGION_WRITE_H
#define OPTRACE_TEST_LEGION_WRITE_H

#include <check.h>
#include <stdbool.h>
#include <stdint.h>

#include "legion_read.h"
#include "output/legion_prof.h"

/*
 * shared/legion/: $OPTRACE_SHARED_DIR/legion if set (.ci/run sets it for a
 * clone made away from shared/), else beside the repository, found from the
 * build directory.
 */
const char *shared_legion_file(const char *name);

/* The file passes every rule of the test reader. */
#define ck_assert_valid(file, version, strict)                                            \
	do {                                                                              \
		struct legion_check *checked_ = legion_check_read(file, version, strict); \
		ck_assert_msg(!legion_check_error(checked_)[0], "invalid profile: %s",    \
			      legion_check_error(checked_));                              \
		legion_check_free(checked_);                                              \
	} while (0)

/* Files in a private directory, made at the first path and removed by scratch_free(). */
struct scratch {
	char *dir;
	char path[4096];
};

const char *scratch_path(struct scratch *scratch, const char *name);
void scratch_free(struct scratch *scratch);

/* Raw (not gzip) files with a fixed host, process and time zero. */
extern const struct legion_prof_options fixed_options;

/* The strings a profile is written with; the hostile test swaps them all. */
struct profile_strings {
	const char *hostname;
	const char *task_name;
	const char *variant_name;
	const char *op_name;
	const char *mode;
	const char *call_site;
	const char *title;
	const char *helper_title;
	const char *meta_name;
	const char *op_kind_name;
};

extern const struct profile_strings plain_strings;

/*
 * Writes the small profile with s to path (see legion_write.c) and reads
 * the file back into file.
 */
void small_profile_file(const char *path, const struct profile_strings *s, bool raw,
			uint32_t version, struct legion_blob *file);

#endif /* OPTRACE_TEST_LEGION_WRITE_H */
