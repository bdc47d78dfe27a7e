// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A Legion Prof log reader written from docs/legion-format.md: whole
 * files read record by record (legion_record.c), checked against the rules
 * that make the real reader panic (legion_rules.c) and summed up
 * (legion_summary.c); the bytes come from legion_blob.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "legion_read_internal.h"

/* ---- the outcome ------------------------------------------------------------------- */

void legion_check_free(struct legion_check *p)
{
	if (!p)
		return;
	for (int i = 0; i < KEY_LISTS; i++)
		free(p->keys[i].items);
	free(p->procs.items);
	free(p->runs.items);
	free(p->intervals.items);
	free(p);
}

const char *legion_check_error(const struct legion_check *p)
{
	return p->error;
}

size_t legion_check_count(const struct legion_check *p, enum legion_record_kind kind)
{
	return kind < LEGION_RECORD_KINDS ? p->counts[kind] : 0;
}

/* ---- reading whole files ------------------------------------------------------------ */

static bool read_all(struct legion_check *p, const struct legion_blob *file)
{
	struct legion_record r;
	size_t offset = 0;

	if (!legion_parse_preamble(p, file, &offset))
		return false;
	while (offset < file->length) {
		memset(&r, 0, sizeof(r));
		if (!legion_read_record(p, file, &offset, &r) || !legion_check_record(p, &r))
			return false;
		if (p->summary && !legion_note_record(p, &r))
			return false;
	}
	return legion_check_whole(p);
}

static struct legion_check *check_new(uint32_t version, bool strict)
{
	struct legion_check *p = calloc(1, sizeof(*p));

	if (p) {
		p->strict = strict;
		p->expect_version = version;
	}
	return p;
}

struct legion_check *legion_check_read(const struct legion_blob *file, uint32_t version,
				       bool strict)
{
	struct legion_check *p = check_new(version, strict);

	if (!p)
		abort(); /* a test cannot go on without its reader */
	read_all(p, file);
	return p;
}

int legion_validate_file(const char *path, uint32_t version, char *why, size_t size)
{
	struct legion_summary summary;
	int err = legion_summary_read(path, version, &summary, why, size);

	legion_summary_free(&summary);
	return err;
}

bool legion_find_task_record(const struct legion_blob *file, uint64_t op,
			     struct legion_record *found)
{
	struct legion_check *p = check_new(0, false);
	struct legion_record r = { 0 };
	size_t offset = 0;
	bool ok = false;

	if (!p || !legion_parse_preamble(p, file, &offset)) {
		legion_check_free(p);
		return false;
	}
	while (!ok && offset < file->length) {
		if (!legion_read_record(p, file, &offset, &r))
			break;
		ok = (r.kind == LEGION_TASK_INFO || r.kind == LEGION_GPU_TASK_INFO) && r.v[0] == op;
	}
	*found = r;
	legion_check_free(p);
	return ok;
}

int legion_summary_read(const char *path, uint32_t version, struct legion_summary *summary,
			char *why, size_t size)
{
	struct legion_check *p;
	bool ok;

	memset(summary, 0, sizeof(*summary));
	if (legion_blob_read_log(path, &summary->blob, why, size))
		return -1;
	p = check_new(version, true);
	if (!p) {
		snprintf(why, size, "out of memory");
		return -1;
	}
	p->summary = summary;
	ok = read_all(p, &summary->blob);
	if (legion_summary_resolve(summary) && ok)
		snprintf(p->error, sizeof(p->error), "out of memory");
	snprintf(why, size, "%s", p->error);
	ok = !p->error[0];
	legion_check_free(p);
	return ok ? 0 : -1;
}
