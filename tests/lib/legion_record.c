// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Legion Prof reader's parser, written from docs/legion-format.md:
 * the preamble (§1.1) with the types the real reader knows, and each
 * binary record by the layouts of §2 (§1.2).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "legion_read_internal.h"

/* docs/legion.md: optrace's writer cuts every string to this many bytes. */
#define STRING_MAX 4096

/* ---- layouts ------------------------------------------------------------------ */

/*
 * Layouts of docs/legion-format.md §2 (binary order, after the 4-byte id): 1 = u8,
 * 4 = u32/i32, 8 = u64/i64, s = NUL-terminated UTF-8, u = u32 count + bytes.
 */
static const struct layout {
	const char *name;
	const char *fields;
} layouts[LEGION_RECORD_KINDS] = {
	[LEGION_MACHINE_DESC] = { "MachineDesc", "444s84" },
	[LEGION_ZERO_TIME] = { "ZeroTime", "8" },
	[LEGION_CALIBRATION_ERR] = { "CalibrationErr", "8" },
	[LEGION_MAX_DIM_DESC] = { "MaxDimDesc", "4" },
	[LEGION_PROC_DESC] = { "ProcDesc", "84u" },
	[LEGION_MEM_DESC] = { "MemDesc", "848" },
	[LEGION_OP_DESC] = { "OpDesc", "4s" },
	[LEGION_META_DESC] = { "MetaDesc", "411s" },
	[LEGION_TASK_KIND] = { "TaskKind", "4s1" },
	[LEGION_TASK_VARIANT] = { "TaskVariant", "44s" },
	[LEGION_PROVENANCE] = { "Provenance", "8s" },
	[LEGION_OPERATION_INSTANCE] = { "OperationInstance", "8848" },
	[LEGION_TASK_INFO] = { "TaskInfo", "84488888888" },
	[LEGION_GPU_TASK_INFO] = { "GPUTaskInfo", "8448888888888" },
	[LEGION_META_INFO] = { "MetaInfo", "8488888888" },
	[LEGION_TASK_WAIT_INFO] = { "TaskWaitInfo", "8448888" },
	[LEGION_APPLICATION_CALL_INFO] = { "ApplicationCallInfo", "88888" },
};

/* Type spellings the reader knows (§1.1): anything else fails the header. */
// clang-format off
static const char *const known_types[] = {
	"array", "BacktraceID", "bool", "DepPartOpKind", "IDType", "InstID", "MapperID",
	"MappingCallKind", "maxdim", "MemID", "MemKind", "MessageKind", "point", "uuid",
	"uuid_size", "ProcID", "ProcKind", "RuntimeCallKind", "string", "TaskID", "timestamp_t",
	"unsigned", "unsigned long long", "long long", "UniqueID", "VariantID",
};
// clang-format on

/* ---- the preamble ------------------------------------------------------------------- */

static bool known_type(const char *type)
{
	for (size_t i = 0; i < sizeof(known_types) / sizeof(known_types[0]); i++)
		if (!strcmp(type, known_types[i]))
			return true;
	return false;
}

/* The fields of one header line, "field:type:size, ..." (text is modified). */
static bool parse_header_fields(struct legion_check *p, const char *name, char *text)
{
	static const char name_chars[] = "abcdefghijklmnopqrstuvwxyz"
					 "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";
	char *field, *save = NULL;

	for (field = strtok_r(text, ",", &save); field; field = strtok_r(NULL, ",", &save)) {
		char *type, *size;

		if (field != text && *field++ != ' ')
			FAIL(p, "separator is not \", \" in %s", name);
		type = strchr(field, ':');
		size = type ? strrchr(type + 1, ':') : NULL;
		if (!type || !size || type == field ||
		    strspn(field, name_chars) != (size_t)(type - field))
			FAIL(p, "bad field in %s", name);
		*size = '\0';
		if (!known_type(type + 1))
			FAIL(p, "unknown type %s in %s", type + 1, name);
	}
	return true;
}

/* §1.1: "Name {id:N, field:type:size, ...}" with known types. */
static bool parse_header_line(struct legion_check *p, const char *line, size_t length)
{
	char text[1024], name[128];
	unsigned int id;
	int used = 0;

	if (length >= sizeof(text))
		FAIL(p, "header line too long");
	memcpy(text, line, length);
	text[length] = '\0';
	if (sscanf(text, "%127[A-Za-z0-9_] {id:%u%n", name, &id, &used) != 2)
		FAIL(p, "bad header line: %.200s", text);
	if (strncmp(text + used, ", ", 2) || text[length - 1] != '}')
		FAIL(p, "header line without fields: %.200s", text);
	text[length - 1] = '\0';
	if (!parse_header_fields(p, name, text + used + 2))
		return false;
	for (size_t i = 0; i < LEGION_RECORD_KINDS; i++) {
		if (strcmp(layouts[i].name, name))
			continue;
		p->ids[i] = id;
		p->declared[i] = true;
	}
	return true;
}

/* The preamble: its first line, record lines, and the empty line (§1.1). */
bool legion_parse_preamble(struct legion_check *p, const struct legion_blob *file, size_t *offset)
{
	static const char first[] = "FileType: BinaryLegionProf v: 1.0\n";
	const char *text = (const char *)file->data, *end = text + file->length, *line, *nl;
	size_t lines = 0;

	if (file->length < sizeof(first) - 1 || memcmp(text, first, sizeof(first) - 1))
		FAIL(p, "no FileType line");
	for (line = text + sizeof(first) - 1; line < end; line = nl + 1) {
		nl = memchr(line, '\n', (size_t)(end - line));
		if (!nl)
			FAIL(p, "preamble does not end");
		if (nl == line) {
			if (!lines)
				FAIL(p, "no record lines");
			*offset = (size_t)(nl + 1 - text);
			return true;
		}
		if (!parse_header_line(p, line, (size_t)(nl - line)))
			return false;
		lines++;
	}
	FAIL(p, "preamble does not end");
}

/* ---- records ----------------------------------------------------------------------- */

static bool take(struct legion_check *p, const struct legion_blob *file, size_t *offset, size_t n,
		 uint64_t *value)
{
	*value = 0;
	if (file->length - *offset < n)
		FAIL(p, "truncated record at %zu", *offset);
	for (size_t i = 0; i < n; i++)
		*value |= (uint64_t)file->data[*offset + i] << 8 * i;
	*offset += n;
	return true;
}

/* A string field: NUL inside the file, valid UTF-8, and in strict mode sanitised. */
static bool take_string(struct legion_check *p, const struct legion_blob *file, size_t *offset,
			const char **s)
{
	const unsigned char *start = file->data + *offset;
	const unsigned char *nul = memchr(start, 0, file->length - *offset);
	size_t length;

	if (!nul)
		FAIL(p, "unterminated string at %zu", *offset);
	length = (size_t)(nul - start);
	if (!legion_utf8_valid(start, length))
		FAIL(p, "invalid UTF-8 at %zu", *offset);
	if (p->strict) {
		if (length > STRING_MAX)
			FAIL(p, "string of %zu bytes at %zu", length, *offset);
		size_t dollars = 0;

		for (size_t i = 0; i < length; i++) {
			dollars += start[i] == '$';
			/* one '$' only: the legacy viewer's split of a JSON provenance */
			if (start[i] < 0x20 || start[i] == 0x7f ||
			    (start[i] == '$' && (dollars > 1 || start[0] != '[')))
				FAIL(p, "forbidden byte 0x%02x at %zu", start[i], *offset + i);
		}
	}
	*s = (const char *)start;
	*offset += length + 1;
	return true;
}

bool legion_read_record(struct legion_check *p, const struct legion_blob *file, size_t *offset,
			struct legion_record *r)
{
	uint64_t id, count;
	size_t i, field = 0, strings = 0;
	int kind = -1;

	if (!take(p, file, offset, 4, &id))
		return false;
	for (i = 0; i < LEGION_RECORD_KINDS; i++)
		if (p->declared[i] && p->ids[i] == id)
			kind = (int)i;
	if (kind < 0)
		FAIL(p, "record id %llu not declared (or no layout here)", (unsigned long long)id);
	r->kind = (enum legion_record_kind)kind;
	for (const char *f = layouts[kind].fields; *f; f++, field++) {
		if (*f == 's') {
			if (!take_string(p, file, offset, &r->s[strings++]))
				return false;
			r->v[field] = strings - 1;
		} else if (*f == 'u') {
			if (!take(p, file, offset, 4, &count) || file->length - *offset < count)
				FAIL(p, "truncated uuid");
			*offset += count;
			r->v[field] = count;
		} else if (!take(p, file, offset, (size_t)(*f - '0'), &r->v[field])) {
			return false;
		}
	}
	p->counts[kind]++;
	return true;
}
