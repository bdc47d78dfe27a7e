// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * docs/legion-format.md against the writer, so that the document the code
 * cites cannot drift from it: every record kind the writer writes in a
 * profile has a table in the document (a line "**`Name`** (id N)" and the
 * table under it) whose fields are those the writer's preamble declares
 * for that record, in the same order and of the same sizes, under the same
 * id; and every record table of the document describes a record of the
 * preamble that way.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "legion_read.h"
#include "legion_write.h"
#include "testlib.h"
#include "output/legion_prof.h"

#define DOC "docs/legion-format.md"
#define MAX_RECORDS 128
#define MAX_FIELDS 24

struct field {
	char name[64];
	int size; /* bytes; -1: a string; 0: the bytes a uuid_size counts */
};

struct record {
	char name[64];
	unsigned int id;
	struct field fields[MAX_FIELDS];
	size_t field_count;
};

/* The record kinds the test reader counts, by the names they have in the preamble. */
static const struct {
	enum legion_record_kind kind;
	const char *name;
} kind_names[] = {
	{ LEGION_MACHINE_DESC, "MachineDesc" },
	{ LEGION_ZERO_TIME, "ZeroTime" },
	{ LEGION_CALIBRATION_ERR, "CalibrationErr" },
	{ LEGION_MAX_DIM_DESC, "MaxDimDesc" },
	{ LEGION_PROC_DESC, "ProcDesc" },
	{ LEGION_MEM_DESC, "MemDesc" },
	{ LEGION_OP_DESC, "OpDesc" },
	{ LEGION_META_DESC, "MetaDesc" },
	{ LEGION_TASK_KIND, "TaskKind" },
	{ LEGION_TASK_VARIANT, "TaskVariant" },
	{ LEGION_PROVENANCE, "Provenance" },
	{ LEGION_OPERATION_INSTANCE, "OperationInstance" },
	{ LEGION_TASK_INFO, "TaskInfo" },
	{ LEGION_GPU_TASK_INFO, "GPUTaskInfo" },
	{ LEGION_META_INFO, "MetaInfo" },
	{ LEGION_TASK_WAIT_INFO, "TaskWaitInfo" },
	{ LEGION_APPLICATION_CALL_INFO, "ApplicationCallInfo" },
};

static const struct record *find(const struct record *records, size_t count, const char *name)
{
	for (size_t i = 0; i < count; i++)
		if (!strcmp(records[i].name, name))
			return &records[i];
	return NULL;
}

/* "Name {id:N, field:type:size, ...}": a field's size is after its last ':'. */
static void parse_preamble_line(const char *line, struct record *record)
{
	const char *p = strstr(line, " {id:"), *end;

	ck_assert_msg(p, "preamble line without an id: %s", line);
	ck_assert_int_lt(p - line, (long)sizeof(record->name));
	memcpy(record->name, line, (size_t)(p - line));
	record->name[p - line] = '\0';
	record->id = (unsigned int)strtoul(p + 5, (char **)&p, 10);
	while (*p == ',') {
		struct field *field = &record->fields[record->field_count++];
		const char *colon = strchr(p + 2, ':');

		ck_assert_uint_le(record->field_count, MAX_FIELDS);
		end = strpbrk(p + 2, ",}");
		ck_assert(colon && end && colon < end);
		snprintf(field->name, sizeof(field->name), "%.*s", (int)(colon - p - 2), p + 2);
		field->size = (int)strtol(memrchr(p, ':', (size_t)(end - p)) + 1, NULL, 10);
		if (strstr(line, "uuid:1") && !strcmp(field->name, "cuda_device_uuid"))
			field->size = 0;
		p = end;
	}
}

/* The record lines of the preamble at the start of a raw log. */
static size_t read_preamble(const struct legion_blob *file, struct record *records)
{
	const char *text = (const char *)file->data, *end = text + file->length, *line, *eol;
	size_t count = 0;

	line = memchr(text, '\n', file->length) + 1; /* FileType: ... */
	while (line < end && *line != '\n') {
		char buffer[2048];

		eol = memchr(line, '\n', (size_t)(end - line));
		ck_assert(eol && eol - line < (long)sizeof(buffer));
		memcpy(buffer, line, (size_t)(eol - line));
		buffer[eol - line] = '\0';
		ck_assert_uint_lt(count, MAX_RECORDS);
		memset(&records[count], 0, sizeof(records[count]));
		parse_preamble_line(buffer, &records[count++]);
		line = eol + 1;
	}
	return count;
}

/* The size of a type the document names. */
static int doc_type_size(const char *type)
{
	if (!strcmp(type, "u8"))
		return 1;
	if (!strcmp(type, "u32") || !strcmp(type, "i32"))
		return 4;
	if (!strcmp(type, "u64") || !strcmp(type, "i64"))
		return 8;
	if (!strcmp(type, "string"))
		return -1;
	if (!strcmp(type, "u8[uuid_size]"))
		return 0;
	ck_abort_msg(DOC ": a field of type \"%s\", which is none of §1.2's", type);
	return -2;
}

/* "| a | b | ..." into its first two cells. */
static bool table_row(const char *line, char *first, char *second, size_t size)
{
	const char *a, *b, *c;

	if (line[0] != '|')
		return false;
	a = line + 1;
	b = strchr(a, '|');
	c = b ? strchr(b + 1, '|') : NULL;
	if (!c)
		return false;
	snprintf(first, size, "%.*s", (int)(b - a), a);
	snprintf(second, size, "%.*s", (int)(c - b - 1), b + 1);
	for (char *s = first; s; s = s == first ? second : NULL) {
		size_t n = strlen(s), start = strspn(s, " ");

		while (n > start && s[n - 1] == ' ')
			n--;
		memmove(s, s + start, n - start);
		s[n - start] = '\0';
	}
	return true;
}

/* Every "**`Name`** (id N)" of the document with the table under it. */
static size_t read_doc(struct record *records)
{
	char line[1024], first[256], second[256];
	struct record *record = NULL;
	size_t count = 0;
	FILE *doc = fopen(DOC, "re");

	if (!doc)
		doc = fopen(OPTRACE_BUILD_DIR "/../" DOC, "re");
	ck_assert_msg(doc, "cannot open " DOC);
	while (fgets(line, sizeof(line), doc)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "**`", 3)) {
			char *tick = strchr(line + 3, '`'), *id = strstr(line, "(id ");

			ck_assert_msg(tick && id, DOC ": a record line without its id: %s", line);
			ck_assert_uint_lt(count, MAX_RECORDS);
			record = &records[count++];
			memset(record, 0, sizeof(*record));
			snprintf(record->name, sizeof(record->name), "%.*s", (int)(tick - line - 3),
				 line + 3);
			record->id = (unsigned int)strtoul(id + 4, NULL, 10);
			continue;
		}
		if (!record)
			continue;
		if (!table_row(line, first, second, sizeof(first))) {
			if (record->field_count)
				record = NULL; /* the table ended */
			continue;
		}
		if (!strcmp(first, "field") || !strncmp(first, "---", 3))
			continue;
		ck_assert_uint_lt(record->field_count, MAX_FIELDS);
		snprintf(record->fields[record->field_count].name, sizeof(first), "%s", first);
		record->fields[record->field_count++].size = doc_type_size(second);
	}
	fclose(doc);
	return count;
}

static void check_same(const struct record *doc, const struct record *preamble)
{
	ck_assert_msg(doc->id == preamble->id, DOC ": %s has id %u, the writer's preamble %u",
		      doc->name, doc->id, preamble->id);
	ck_assert_msg(doc->field_count == preamble->field_count,
		      DOC ": %s has %zu fields, the writer's preamble %zu", doc->name,
		      doc->field_count, preamble->field_count);
	for (size_t i = 0; i < doc->field_count; i++) {
		ck_assert_msg(!strcmp(doc->fields[i].name, preamble->fields[i].name),
			      DOC ": %s's field %zu is %s, the writer's preamble says %s",
			      doc->name, i + 1, doc->fields[i].name, preamble->fields[i].name);
		ck_assert_msg(doc->fields[i].size == preamble->fields[i].size,
			      DOC ": %s.%s is %d bytes, the writer's preamble says %d", doc->name,
			      doc->fields[i].name, doc->fields[i].size, preamble->fields[i].size);
	}
}

START_TEST(test_document_matches_writer)
{
	static struct record preamble[MAX_RECORDS], doc[MAX_RECORDS];
	struct scratch scratch = { 0 };
	struct legion_blob file;
	struct legion_check *check;
	size_t preamble_count, doc_count, written = 0;

	small_profile_file(scratch_path(&scratch, "prof_0"), &plain_strings, true,
			   LEGION_PROF_VERSION, &file);
	preamble_count = read_preamble(&file, preamble);
	doc_count = read_doc(doc);
	ck_assert_uint_gt(preamble_count, 10);
	ck_assert_uint_gt(doc_count, 10);

	/* every record the writer wrote is in the document as its preamble declares it */
	check = legion_check_read(&file, LEGION_PROF_VERSION, true);
	ck_assert_str_eq(legion_check_error(check), "");
	for (size_t i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++) {
		const char *name = kind_names[i].name;
		const struct record *declared = find(preamble, preamble_count, name);
		const struct record *documented = find(doc, doc_count, name);

		if (!legion_check_count(check, kind_names[i].kind))
			continue;
		written++;
		ck_assert_msg(declared, "the writer wrote %s without declaring it", name);
		ck_assert_msg(documented, "the writer writes %s: " DOC " has no table of it", name);
		check_same(documented, declared);
	}
	legion_check_free(check);
	/* the small profile has every record the writer has a function for */
	ck_assert_uint_eq(written, 14);

	/* and the document describes no record otherwise than the preamble */
	for (size_t i = 0; i < doc_count; i++) {
		const struct record *declared = find(preamble, preamble_count, doc[i].name);

		ck_assert_msg(declared, DOC ": %s is not a record of the preamble", doc[i].name);
		check_same(&doc[i], declared);
	}
	legion_blob_free(&file);
	scratch_free(&scratch);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("legion_format_doc");
	TCase *tc = tcase_create("doc");

	tcase_add_test(tc, test_document_matches_writer);
	suite_add_tcase(suite, tc);

	return run_suite(suite);
}
