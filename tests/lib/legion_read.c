// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A Legion Prof log reader written from shared/legion/FORMAT.md: the
 * preamble (§1.1), the binary records (§1.2, §2) and the rules that make
 * the real reader panic (§3.4), checked once the whole file is read.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "legion_popup.h"
#include "legion_read.h"

/* docs/legion.md: optrace's writer cuts every string to this many bytes. */
#define STRING_MAX 4096
#define FAIL_TEXT_MAX 512

/* ---- files ----------------------------------------------------------------- */

void legion_blob_free(struct legion_blob *blob)
{
	free(blob->data);
	blob->data = NULL;
	blob->length = 0;
}

static int blob_reserve(struct legion_blob *blob, size_t *capacity)
{
	unsigned char *bigger;

	if (blob->length < *capacity)
		return 0;
	bigger = realloc(blob->data, *capacity * 2);
	if (!bigger)
		return -1;
	blob->data = bigger;
	*capacity *= 2;
	return 0;
}

int legion_blob_read(const char *path, bool gzip, struct legion_blob *blob)
{
	size_t capacity = 1 << 16;
	gzFile gz = NULL;
	FILE *file = NULL;
	long n;

	blob->length = 0;
	blob->data = malloc(capacity);
	if (gzip)
		gz = gzopen(path, "rb");
	else
		file = fopen(path, "rb");
	if (!blob->data || (!gz && !file))
		goto fail;
	for (;;) {
		if (blob_reserve(blob, &capacity))
			goto fail;
		if (gz)
			n = gzread(gz, blob->data + blob->length,
				   (unsigned int)(capacity - blob->length));
		else
			n = (long)fread(blob->data + blob->length, 1, capacity - blob->length,
					file);
		if (n < 0)
			goto fail;
		if (n == 0)
			break;
		blob->length += (size_t)n;
	}
	if (gz)
		gzclose(gz);
	if (file)
		fclose(file);
	return 0;
fail:
	if (gz)
		gzclose(gz);
	if (file)
		fclose(file);
	legion_blob_free(blob);
	return -1;
}

/* The first gzip member of raw, as flate2's GzDecoder reads it. */
static int gunzip_first_member(const struct legion_blob *raw, struct legion_blob *out, char *why,
			       size_t size)
{
	size_t capacity = 1 << 16;
	z_stream stream = { 0 };
	int ret = Z_OK;

	out->length = 0;
	out->data = malloc(capacity);
	if (!out->data || inflateInit2(&stream, 15 + 16) != Z_OK) {
		snprintf(why, size, "out of memory");
		legion_blob_free(out);
		return -1;
	}
	stream.next_in = raw->data;
	stream.avail_in = (unsigned int)raw->length;
	while (ret == Z_OK) {
		if (blob_reserve(out, &capacity)) {
			ret = Z_MEM_ERROR;
			break;
		}
		stream.next_out = out->data + out->length;
		stream.avail_out = (unsigned int)(capacity - out->length);
		ret = inflate(&stream, Z_NO_FLUSH);
		out->length = capacity - stream.avail_out;
		if (ret == Z_BUF_ERROR && stream.avail_out)
			break; /* the input ended inside the member */
	}
	inflateEnd(&stream);
	if (ret != Z_STREAM_END) {
		snprintf(why, size, "the gzip stream is cut or corrupt (zlib %d)", ret);
		legion_blob_free(out);
		return -1;
	}
	if (stream.avail_in) {
		snprintf(why, size,
			 "%u bytes after the first gzip member: the reader drops them (§1.3)",
			 stream.avail_in);
		legion_blob_free(out);
		return -1;
	}
	return 0;
}

int legion_blob_read_log(const char *path, struct legion_blob *blob, char *why, size_t size)
{
	struct legion_blob raw;
	int err;

	if (legion_blob_read(path, false, &raw)) {
		snprintf(why, size, "cannot read %s", path);
		return -1;
	}
	if (raw.length < 2 || raw.data[0] != 0x1f || raw.data[1] != 0x8b) {
		*blob = raw;
		return 0;
	}
	err = gunzip_first_member(&raw, blob, why, size);
	legion_blob_free(&raw);
	return err;
}

/* ---- strings and JSON -------------------------------------------------------- */

bool legion_utf8_valid(const unsigned char *s, size_t length)
{
	size_t i = 0, n, k;
	uint32_t cp;

	while (i < length) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		if ((s[i] & 0xe0) == 0xc0)
			n = 2, cp = s[i] & 0x1f;
		else if ((s[i] & 0xf0) == 0xe0)
			n = 3, cp = s[i] & 0x0f;
		else if ((s[i] & 0xf8) == 0xf0)
			n = 4, cp = s[i] & 0x07;
		else
			return false;
		if (i + n > length)
			return false;
		for (k = 1; k < n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += n;
	}
	return true;
}

/* A strict JSON checker (serde_json's grammar), enough for provenances. */
struct json_cursor {
	const char *p;
	int depth;
};

static void json_space(struct json_cursor *j)
{
	while (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')
		j->p++;
}

static bool json_string_ok(struct json_cursor *j)
{
	if (*j->p++ != '"')
		return false;
	while (*j->p != '"') {
		unsigned char c = (unsigned char)*j->p++;

		if (c < 0x20)
			return false; /* also the end of the text */
		if (c != '\\')
			continue;
		c = (unsigned char)*j->p++;
		if (c == 'u') {
			for (int i = 0; i < 4; i++)
				if (!strchr("0123456789abcdefABCDEF", *j->p) || !*j->p++)
					return false;
		} else if (!c || !strchr("\"\\/bfnrt", c)) {
			return false;
		}
	}
	j->p++;
	return true;
}

static bool json_number_ok(struct json_cursor *j)
{
	const char *start;

	if (*j->p == '-')
		j->p++;
	start = j->p;
	while (*j->p >= '0' && *j->p <= '9')
		j->p++;
	if (j->p == start || (*start == '0' && j->p - start > 1))
		return false;
	if (*j->p == '.') {
		start = ++j->p;
		while (*j->p >= '0' && *j->p <= '9')
			j->p++;
		if (j->p == start)
			return false;
	}
	if (*j->p == 'e' || *j->p == 'E') {
		j->p++;
		if (*j->p == '+' || *j->p == '-')
			j->p++;
		start = j->p;
		while (*j->p >= '0' && *j->p <= '9')
			j->p++;
		if (j->p == start)
			return false;
	}
	return true;
}

static bool json_value_ok(struct json_cursor *j);

static bool json_members_ok(struct json_cursor *j, char close, bool keyed, size_t *count)
{
	*count = 0;
	json_space(j);
	if (*j->p == close) {
		j->p++;
		return true;
	}
	for (;;) {
		json_space(j);
		if (keyed) {
			if (!json_string_ok(j))
				return false;
			json_space(j);
			if (*j->p++ != ':')
				return false;
		}
		if (!json_value_ok(j))
			return false;
		(*count)++;
		json_space(j);
		if (*j->p == close) {
			j->p++;
			return true;
		}
		if (*j->p++ != ',')
			return false;
	}
}

static bool json_value_ok(struct json_cursor *j)
{
	size_t count;
	bool ok;

	json_space(j);
	if (*j->p == '"')
		return json_string_ok(j);
	if (*j->p == '{' || *j->p == '[') {
		bool object = *j->p++ == '{';

		if (++j->depth > 64)
			return false;
		ok = json_members_ok(j, object ? '}' : ']', object, &count);
		j->depth--;
		return ok;
	}
	if (!strncmp(j->p, "true", 4) || !strncmp(j->p, "null", 4)) {
		j->p += 4;
		return true;
	}
	if (!strncmp(j->p, "false", 5)) {
		j->p += 5;
		return true;
	}
	return json_number_ok(j);
}

int legion_provenance_members(const char *text)
{
	struct json_cursor j = { text, 0 };
	size_t count;

	json_space(&j);
	if (*j.p++ != '[')
		return -1;
	json_space(&j);
	if (!json_string_ok(&j))
		return -1;
	json_space(&j);
	if (*j.p++ != ',')
		return -1;
	json_space(&j);
	if (*j.p++ != '{' || !json_members_ok(&j, '}', true, &count))
		return -1;
	json_space(&j);
	if (*j.p++ != ']')
		return -1;
	json_space(&j);
	return *j.p ? -1 : (int)count;
}

bool legion_json_valid(const char *text)
{
	struct json_cursor j = { text, 0 };

	if (!json_value_ok(&j))
		return false;
	json_space(&j);
	return !*j.p;
}

static bool looks_like_provenance_json(const char *text)
{
	size_t n = strlen(text);

	return n >= 4 && !strncmp(text, "[\"", 2) && !strcmp(text + n - 2, "}]");
}

/* ---- layouts ------------------------------------------------------------------ */

/*
 * Layouts of FORMAT.md §2 (binary order, after the 4-byte id): 1 = u8,
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

static void *vec_push(struct vec *vec, size_t size)
{
	if (vec->count == vec->capacity) {
		size_t capacity = vec->capacity ? 2 * vec->capacity : 64;
		void *items = realloc(vec->items, capacity * size);

		if (!items)
			return NULL;
		vec->items = items;
		vec->capacity = capacity;
	}
	return (char *)vec->items + vec->count++ * size;
}

#define FAIL(p, ...)                                                           \
	do {                                                                   \
		if (!(p)->error[0])                                            \
			snprintf((p)->error, sizeof((p)->error), __VA_ARGS__); \
		return false;                                                  \
	} while (0)

#define PUSH(p, vec, type, value)                          \
	do {                                               \
		type *slot_ = vec_push(vec, sizeof(type)); \
		if (!slot_)                                \
			FAIL(p, "out of memory");          \
		*slot_ = (value);                          \
	} while (0)

static bool key_push(struct legion_check *p, enum key_list list, uint64_t key)
{
	PUSH(p, &p->keys[list], uint64_t, key);
	return true;
}

static bool key_has(const struct legion_check *p, enum key_list list, uint64_t key)
{
	const uint64_t *keys = p->keys[list].items;

	for (size_t i = 0; i < p->keys[list].count; i++)
		if (keys[i] == key)
			return true;
	return false;
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Number of distinct keys; sets *duplicate when one appears twice. */
static size_t key_distinct(struct legion_check *p, enum key_list list, bool *duplicate)
{
	uint64_t *keys = p->keys[list].items;
	size_t count = p->keys[list].count, distinct = 0;

	*duplicate = false;
	if (!count)
		return 0;
	qsort(keys, count, sizeof(uint64_t), compare_u64);
	for (size_t i = 0; i < count; i++) {
		if (i && keys[i] == keys[i - 1])
			*duplicate = true;
		else
			distinct++;
	}
	return distinct;
}

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
static bool parse_preamble(struct legion_check *p, const struct legion_blob *file, size_t *offset)
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

static bool read_record(struct legion_check *p, const struct legion_blob *file, size_t *offset,
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

static bool check_event(struct legion_check *p, uint64_t event, bool required)
{
	if (!event && required)
		FAIL(p, "event 0 where one is required");
	if (event && (event >> 60) != 8)
		FAIL(p, "event 0x%llx is not an event id", (unsigned long long)event);
	return true;
}

static bool check_time(struct legion_check *p, uint64_t t)
{
	if (t > (uint64_t)INT64_MAX)
		FAIL(p, "timestamp above INT64_MAX");
	return true;
}

static bool check_ordered(struct legion_check *p, const uint64_t *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!check_time(p, t[i]))
			return false;
		if (i && t[i - 1] > t[i])
			FAIL(p, "timestamps out of order (%llu > %llu)",
			     (unsigned long long)t[i - 1], (unsigned long long)t[i]);
	}
	return true;
}

static const struct run *find_run_by_op(const struct legion_check *p, uint64_t op)
{
	const struct run *runs = p->runs.items;

	for (size_t i = 0; i < p->runs.count; i++)
		if (runs[i].op == op)
			return &runs[i];
	return NULL;
}

static const struct run *find_run_by_fevent(const struct legion_check *p, uint64_t fevent)
{
	const struct run *runs = p->runs.items;

	for (size_t i = 0; i < p->runs.count; i++)
		if (runs[i].fevent == fevent)
			return &runs[i];
	return NULL;
}

/* MetaInfo: times, events, a kind that needs its MetaDesc. */
static bool check_meta_run(struct legion_check *p, const struct legion_record *r)
{
	struct run run = { .op = UINT64_MAX,
			   .proc = r->v[2],
			   .start = r->v[5],
			   .stop = r->v[6],
			   .fevent = r->v[9],
			   .task = UINT32_MAX };

	if (!key_push(p, USED_META_KINDS, r->v[1])) /* checked against MetaDesc at the end */
		return false;
	if (!check_event(p, r->v[7], false) || !check_ordered(p, &r->v[3], 4) ||
	    !check_event(p, run.fevent, true) || !key_push(p, FEVENTS, run.fevent))
		return false;
	PUSH(p, &p->runs, struct run, run);
	return true;
}

/* TaskInfo, GPUTaskInfo: ids, order of times, the fevent. */
static bool check_run(struct legion_check *p, const struct legion_record *r)
{
	struct run run = { .op = r->v[0],
			   .task = (uint32_t)r->v[1],
			   .variant = (uint32_t)r->v[2],
			   .proc = r->v[3],
			   .gpu = r->kind == LEGION_GPU_TASK_INFO };

	run.fevent = r->v[run.gpu ? 12 : 10];
	if (!check_event(p, r->v[run.gpu ? 10 : 8], false))
		return false;
	if (run.gpu && (!check_ordered(p, &r->v[8], 2)))
		return false;
	if (run.op == UINT64_MAX)
		FAIL(p, "task op id UINT64_MAX");
	if (find_run_by_op(p, run.op))
		FAIL(p, "two task records for op %llu", (unsigned long long)run.op);
	if (!check_ordered(p, &r->v[4], 4) || !check_event(p, run.fevent, true))
		return false;
	run.start = r->v[6];
	run.stop = r->v[7];
	if (!key_push(p, FEVENTS, run.fevent))
		return false;
	PUSH(p, &p->runs, struct run, run);
	return true;
}

static bool check_wait(struct legion_check *p, const struct legion_record *r)
{
	const struct run *run = find_run_by_op(p, r->v[0]);
	struct interval wait;

	if (!run)
		FAIL(p, "TaskWaitInfo before its TaskInfo");
	if (!check_ordered(p, &r->v[3], 3) || !check_event(p, r->v[6], true))
		return false;
	if (p->strict && (r->v[3] < run->start || r->v[5] > run->stop))
		FAIL(p, "wait outside its task's run");
	wait = (struct interval){ r->v[3], r->v[5], run->fevent, run->proc, false };
	PUSH(p, &p->intervals, struct interval, wait);
	return true;
}

static bool check_call(struct legion_check *p, const struct legion_record *r)
{
	struct interval call = { r->v[1], r->v[2], r->v[4], r->v[3], true };

	if (!key_has(p, PROVENANCES, r->v[0]))
		FAIL(p, "ApplicationCallInfo before its Provenance");
	if (!check_ordered(p, &r->v[1], 2) || !check_event(p, r->v[4], true))
		return false;
	PUSH(p, &p->intervals, struct interval, call);
	return true;
}

/* Both viewers show the same keys, in the same order (the values' look-alikes aside). */
static bool popups_agree(const char *text)
{
	static struct legion_popup viewer, legacy;

	legion_popup_viewer(text, &viewer);
	legion_popup_legacy(text, &legacy);
	if (viewer.count != legacy.count)
		return false;
	for (int i = 0; i < viewer.count; i++) {
		size_t key = strcspn(viewer.lines[i], ":");

		if (strncmp(viewer.lines[i], legacy.lines[i], key + 1))
			return false;
	}
	return true;
}

static bool check_provenance(struct legion_check *p, const struct legion_record *r)
{
	if (!r->v[0])
		FAIL(p, "provenance id 0");
	/* other text is shown verbatim (§2.6); the JSON form must parse */
	if (p->strict && looks_like_provenance_json(r->s[0]) &&
	    legion_provenance_members(r->s[0]) < 0)
		FAIL(p, "provenance is not [\"human\", {...}] JSON: %.200s", r->s[0]);
	if (p->strict && strchr(r->s[0], '$') && !popups_agree(r->s[0]))
		FAIL(p, "the viewers' popups of a provenance differ: %.300s", r->s[0]);
	return key_push(p, PROVENANCES, r->v[0]);
}

static bool check_operation(struct legion_check *p, const struct legion_record *r)
{
	if (r->v[0] == UINT64_MAX)
		FAIL(p, "OperationInstance op id UINT64_MAX");
	if (!key_push(p, OP_INSTANCES, r->v[0]) || !key_push(p, USED_OP_KINDS, r->v[2]))
		return false;
	if (r->v[3] && p->strict && !key_has(p, PROVENANCES, r->v[3]))
		FAIL(p, "OperationInstance provenance %llu unknown", (unsigned long long)r->v[3]);
	return true;
}

static bool check_machine(struct legion_check *p, const struct legion_record *r)
{
	if (r->v[2] != p->expect_version)
		FAIL(p, "MachineDesc version %llu", (unsigned long long)r->v[2]);
	if (r->v[0] >= r->v[1])
		FAIL(p, "node_id %llu of %llu nodes", (unsigned long long)r->v[0],
		     (unsigned long long)r->v[1]);
	p->node_id = (uint32_t)r->v[0];
	return true;
}

static bool check_proc(struct legion_check *p, const struct legion_record *r)
{
	struct legion_proc proc = { r->v[0], (int32_t)r->v[1] };

	if (proc.kind < 1 || proc.kind > LEGION_PROC_KIND_MAX)
		FAIL(p, "bad processor kind %d", proc.kind);
	if (proc.id >> 56 != 0x1d)
		FAIL(p, "proc id 0x%llx", (unsigned long long)proc.id);
	PUSH(p, &p->procs, struct legion_proc, proc);
	return true;
}

static bool check_record(struct legion_check *p, const struct legion_record *r)
{
	switch (r->kind) {
	case LEGION_MACHINE_DESC:
		return check_machine(p, r);
	case LEGION_PROC_DESC:
		return check_proc(p, r);
	case LEGION_OP_DESC:
		return key_push(p, OP_KINDS, r->v[0]);
	case LEGION_META_DESC:
		return key_push(p, META_KINDS, r->v[0]);
	case LEGION_TASK_KIND:
		return key_push(p, TASK_KINDS, r->v[0]);
	case LEGION_TASK_VARIANT:
		return key_push(p, VARIANTS, r->v[0] << 32 | r->v[1]);
	case LEGION_PROVENANCE:
		return check_provenance(p, r);
	case LEGION_OPERATION_INSTANCE:
		return check_operation(p, r);
	case LEGION_TASK_INFO:
	case LEGION_GPU_TASK_INFO:
		return check_run(p, r);
	case LEGION_META_INFO:
		return check_meta_run(p, r);
	case LEGION_TASK_WAIT_INFO:
		return check_wait(p, r);
	case LEGION_APPLICATION_CALL_INFO:
		return check_call(p, r);
	default:
		return true;
	}
}

static int proc_kind_of(const struct legion_check *p, uint64_t proc)
{
	const struct legion_proc *procs = p->procs.items;

	for (size_t i = 0; i < p->procs.count; i++)
		if (procs[i].id == proc)
			return procs[i].kind;
	return 0;
}

/* Two intervals of one task that overlap without one holding the other. */
static bool overlap_partially(const struct interval *a, const struct interval *b)
{
	if (a->stop <= b->start || b->stop <= a->start)
		return false;
	return !((a->start <= b->start && b->stop <= a->stop) ||
		 (b->start <= a->start && a->stop <= b->stop));
}

/* Calls (and waits) on one task: inside its run, nested or disjoint (state.rs:823/851). */
static bool check_intervals(struct legion_check *p)
{
	const struct interval *intervals = p->intervals.items;

	for (size_t i = 0; i < p->intervals.count; i++) {
		const struct interval *a = &intervals[i];
		const struct run *run = find_run_by_fevent(p, a->fevent);

		if (!run || run->proc != a->proc)
			FAIL(p, "range without its task on the same processor");
		if (a->call && (a->start < run->start || a->stop > run->stop))
			FAIL(p, "range [%llu, %llu] outside its task [%llu, %llu]",
			     (unsigned long long)a->start, (unsigned long long)a->stop,
			     (unsigned long long)run->start, (unsigned long long)run->stop);
		for (size_t k = 0; k < p->intervals.count; k++) {
			const struct interval *b = &intervals[k];

			if (k == i || b->fevent != a->fevent || !(a->call || b->call))
				continue;
			if (overlap_partially(a, b))
				FAIL(p, "ranges [%llu, %llu] and [%llu, %llu] overlap partially",
				     (unsigned long long)a->start, (unsigned long long)a->stop,
				     (unsigned long long)b->start, (unsigned long long)b->stop);
		}
	}
	return true;
}

/* Every run on a declared processor, with its TaskKind and TaskVariant. */
static bool check_runs_declared(struct legion_check *p)
{
	const struct run *runs = p->runs.items;

	for (size_t i = 0; i < p->runs.count; i++) {
		const struct run *run = &runs[i];
		int kind = proc_kind_of(p, run->proc);

		if (!kind)
			FAIL(p, "processor 0x%llx without ProcDesc", (unsigned long long)run->proc);
		if (run->gpu && kind != 1)
			FAIL(p, "GPUTaskInfo on a processor of kind %d", kind);
		if (run->task == UINT32_MAX)
			continue; /* a meta-task */
		if (!key_has(p, TASK_KINDS, run->task) ||
		    !key_has(p, VARIANTS, (uint64_t)run->task << 32 | run->variant))
			FAIL(p, "task %u variant %u without TaskKind/TaskVariant", run->task,
			     run->variant);
	}
	return true;
}

/* The rules that need the whole file: §2.3-2.7, §3.4. */
static bool check_whole(struct legion_check *p)
{
	const uint64_t *used;
	size_t colourable, i;
	bool duplicate;

	if (!check_runs_declared(p))
		return false;
	used = p->keys[USED_META_KINDS].items;
	for (i = 0; i < p->keys[USED_META_KINDS].count; i++)
		if (!key_has(p, META_KINDS, used[i]))
			FAIL(p, "MetaInfo kind without MetaDesc");
	used = p->keys[USED_OP_KINDS].items;
	for (i = 0; i < p->keys[USED_OP_KINDS].count; i++)
		if (!key_has(p, OP_KINDS, used[i]))
			FAIL(p, "OperationInstance kind without OpDesc");
	key_distinct(p, FEVENTS, &duplicate);
	if (duplicate)
		FAIL(p, "duplicate fevent");
	key_distinct(p, OP_INSTANCES, &duplicate);
	if (duplicate)
		FAIL(p, "duplicate OperationInstance op id");
	colourable = key_distinct(p, VARIANTS, &duplicate) + key_distinct(p, OP_KINDS, &duplicate) +
		     key_distinct(p, META_KINDS, &duplicate) +
		     key_distinct(p, PROVENANCES, &duplicate);
	if (colourable < 2)
		FAIL(p, "%zu colourable descriptors", colourable);
	return check_intervals(p);
}

/* ---- the summary, record by record ------------------------------------------------- */

static bool note_name(struct legion_check *p, struct legion_name **names, size_t *count,
		      struct legion_name name)
{
	struct legion_name *grown;

	for (size_t i = 0; i < *count; i++) {
		if ((*names)[i].task_id == name.task_id &&
		    (*names)[i].variant_id == name.variant_id) {
			(*names)[i].name = name.name; /* declaring again renames */
			return true;
		}
	}
	grown = realloc(*names, (*count + 1) * sizeof(**names));
	if (!grown)
		FAIL(p, "out of memory");
	*names = grown;
	grown[(*count)++] = name;
	return true;
}

/* Appends one element to a summary array of its own type. */
#define APPEND(p, array, count, value)                                                     \
	do {                                                                               \
		__typeof__(array) grown_ = realloc(array, ((count) + 1) * sizeof(*array)); \
		if (!grown_)                                                               \
			FAIL(p, "out of memory");                                          \
		(array) = grown_;                                                          \
		(array)[(count)++] = (value);                                              \
	} while (0)

static bool note_task(struct legion_check *p, struct legion_summary *s,
		      const struct legion_record *r)
{
	bool gpu = r->kind == LEGION_GPU_TASK_INFO;
	struct legion_task task = {
		.op_id = r->v[0],
		.task_id = (uint32_t)r->v[1],
		.variant_id = (uint32_t)r->v[2],
		.proc_id = r->v[3],
		.create = r->v[4],
		.ready = r->v[5],
		.start = r->v[6],
		.stop = r->v[7],
		.gpu_start = gpu ? r->v[8] : 0,
		.gpu_stop = gpu ? r->v[9] : 0,
		.creator = r->v[gpu ? 10 : 8],
		.fevent = r->v[gpu ? 12 : 10],
		.gpu = gpu,
		.parent_op = UINT64_MAX,
	};

	APPEND(p, s->tasks, s->task_count, task);
	return true;
}

static bool note_range(struct legion_check *p, struct legion_summary *s,
		       const struct legion_record *r)
{
	struct legion_range range = {
		.provenance_id = r->v[0],
		.start = r->v[1],
		.stop = r->v[2],
		.proc_id = r->v[3],
		.fevent = r->v[4],
	};

	APPEND(p, s->ranges, s->range_count, range);
	return true;
}

static bool note_record(struct legion_check *p, const struct legion_record *r)
{
	struct legion_summary *s = p->summary;
	struct legion_op op;

	s->records[r->kind]++;
	switch (r->kind) {
	case LEGION_MACHINE_DESC:
		s->node_id = (uint32_t)r->v[0];
		s->num_nodes = (uint32_t)r->v[1];
		s->version = (uint32_t)r->v[2];
		s->hostname = r->s[0];
		s->process_id = (uint32_t)r->v[5];
		return true;
	case LEGION_PROC_DESC:
		APPEND(p, s->procs, s->proc_count,
		       ((struct legion_proc){ r->v[0], (int32_t)r->v[1] }));
		s->procs_by_kind[(int32_t)r->v[1]]++;
		return true;
	case LEGION_TASK_KIND:
		return note_name(p, &s->task_kinds, &s->task_kind_count,
				 (struct legion_name){ (uint32_t)r->v[0], 0, r->s[0] });
	case LEGION_TASK_VARIANT:
		return note_name(
			p, &s->variants, &s->variant_count,
			(struct legion_name){ (uint32_t)r->v[0], (uint32_t)r->v[1], r->s[0] });
	case LEGION_PROVENANCE:
		APPEND(p, s->provenances, s->provenance_count,
		       ((struct legion_provenance){ r->v[0], r->s[0] }));
		return true;
	case LEGION_OPERATION_INSTANCE:
		op = (struct legion_op){ r->v[0], r->v[1], (uint32_t)r->v[2], r->v[3], NULL };
		APPEND(p, s->ops, s->op_count, op);
		return true;
	case LEGION_TASK_INFO:
	case LEGION_GPU_TASK_INFO:
		return note_task(p, s, r);
	case LEGION_APPLICATION_CALL_INFO:
		return note_range(p, s, r);
	default:
		return true;
	}
}

/* ---- the summary, once the file is read ------------------------------------------------ */

/* A sorted index: (key, position) pairs, found with bsearch. */
struct index_entry {
	uint64_t key;
	size_t position;
};

static int compare_entries(const void *a, const void *b)
{
	const struct index_entry *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->position < y->position ? -1 : x->position > y->position;
}

static struct index_entry *index_build(size_t count, uint64_t (*key)(const void *, size_t),
				       const void *items)
{
	struct index_entry *index = calloc(count ? count : 1, sizeof(*index));

	if (!index)
		return NULL;
	for (size_t i = 0; i < count; i++)
		index[i] = (struct index_entry){ key(items, i), i };
	qsort(index, count, sizeof(*index), compare_entries);
	return index;
}

/* The first position of key, or SIZE_MAX. */
static size_t index_find(const struct index_entry *index, size_t count, uint64_t key)
{
	size_t low = 0, high = count;

	while (low < high) {
		size_t middle = low + (high - low) / 2;

		if (index[middle].key < key)
			low = middle + 1;
		else
			high = middle;
	}
	return low < count && index[low].key == key ? index[low].position : SIZE_MAX;
}

static uint64_t op_key(const void *items, size_t i)
{
	return ((const struct legion_op *)items)[i].op_id;
}

static uint64_t task_fevent_key(const void *items, size_t i)
{
	return ((const struct legion_task *)items)[i].fevent;
}

const char *legion_task_name(const struct legion_summary *s, uint32_t task_id)
{
	for (size_t i = 0; i < s->task_kind_count; i++)
		if (s->task_kinds[i].task_id == task_id)
			return s->task_kinds[i].name;
	return NULL;
}

const char *legion_variant_name(const struct legion_summary *s, uint32_t task_id,
				uint32_t variant_id)
{
	for (size_t i = 0; i < s->variant_count; i++)
		if (s->variants[i].task_id == task_id && s->variants[i].variant_id == variant_id)
			return s->variants[i].name;
	return NULL;
}

static int summary_proc_kind(const struct legion_summary *s, uint64_t proc)
{
	for (size_t i = 0; i < s->proc_count; i++)
		if (s->procs[i].id == proc)
			return s->procs[i].kind;
	return 0;
}

static uint64_t provenance_id_key(const void *items, size_t i)
{
	return ((const struct legion_provenance *)items)[i].id;
}

static const char *provenance_text(const struct legion_summary *s,
				   const struct index_entry *provenances, uint64_t id)
{
	size_t at = index_find(provenances, s->provenance_count, id);

	return at == SIZE_MAX ? NULL : s->provenances[at].text;
}

static int compare_range_order(const void *a, const void *b, void *ranges_arg)
{
	const struct legion_range *ranges = ranges_arg;
	const struct legion_range *x = &ranges[*(const size_t *)a],
				  *y = &ranges[*(const size_t *)b];
	size_t i = *(const size_t *)a, k = *(const size_t *)b;

	if (x->fevent != y->fevent)
		return x->fevent < y->fevent ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->stop != y->stop)
		return x->stop > y->stop ? -1 : 1; /* the longer one holds the other */
	return i > k ? -1 : i < k;		   /* a range is written after those it holds */
}

/* Depth of each range: how many ranges of its task hold it (they are nested or disjoint). */
static int range_depths(struct legion_summary *s)
{
	size_t *order = calloc(s->range_count ? s->range_count : 1, sizeof(*order));
	size_t *stack = calloc(s->range_count ? s->range_count : 1, sizeof(*stack));
	size_t depth = 0;

	if (!order || !stack) {
		free(order);
		free(stack);
		return -1;
	}
	for (size_t i = 0; i < s->range_count; i++)
		order[i] = i;
	qsort_r(order, s->range_count, sizeof(*order), compare_range_order, s->ranges);
	for (size_t i = 0; i < s->range_count; i++) {
		struct legion_range *range = &s->ranges[order[i]];

		while (depth && (s->ranges[stack[depth - 1]].fevent != range->fevent ||
				 s->ranges[stack[depth - 1]].stop <= range->start))
			depth--;
		range->depth = (unsigned int)depth;
		stack[depth++] = order[i];
	}
	free(order);
	free(stack);
	return 0;
}

/* Names, processor kinds, provenance texts and enclosing tasks, by id. */
static int summary_resolve(struct legion_summary *s)
{
	struct index_entry *ops = index_build(s->op_count, op_key, s->ops);
	struct index_entry *fevents = index_build(s->task_count, task_fevent_key, s->tasks);
	struct index_entry *provenances =
		index_build(s->provenance_count, provenance_id_key, s->provenances);
	int err = ops && fevents && provenances ? 0 : -1;

	for (size_t i = 0; !err && i < s->op_count; i++)
		s->ops[i].provenance = provenance_text(s, provenances, s->ops[i].provenance_id);
	for (size_t i = 0; !err && i < s->task_count; i++) {
		struct legion_task *task = &s->tasks[i];
		size_t op = index_find(ops, s->op_count, task->op_id);

		task->task_name = legion_task_name(s, task->task_id);
		task->variant_name = legion_variant_name(s, task->task_id, task->variant_id);
		task->proc_kind = summary_proc_kind(s, task->proc_id);
		if (op != SIZE_MAX) {
			task->provenance = s->ops[op].provenance;
			task->parent_op = s->ops[op].parent_id;
		}
	}
	for (size_t i = 0; !err && i < s->range_count; i++) {
		struct legion_range *range = &s->ranges[i];
		size_t task = index_find(fevents, s->task_count, range->fevent);

		range->title = provenance_text(s, provenances, range->provenance_id);
		range->proc_kind = summary_proc_kind(s, range->proc_id);
		range->task = task == SIZE_MAX ? NULL : &s->tasks[task];
	}
	if (!err)
		err = range_depths(s);
	free(ops);
	free(fevents);
	free(provenances);
	return err;
}

/* ---- reading whole files ------------------------------------------------------------ */

static bool read_all(struct legion_check *p, const struct legion_blob *file)
{
	struct legion_record r;
	size_t offset = 0;

	if (!parse_preamble(p, file, &offset))
		return false;
	while (offset < file->length) {
		memset(&r, 0, sizeof(r));
		if (!read_record(p, file, &offset, &r) || !check_record(p, &r))
			return false;
		if (p->summary && !note_record(p, &r))
			return false;
	}
	return check_whole(p);
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

	if (!p || !parse_preamble(p, file, &offset)) {
		legion_check_free(p);
		return false;
	}
	while (!ok && offset < file->length) {
		if (!read_record(p, file, &offset, &r))
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
	if (summary_resolve(summary) && ok)
		snprintf(p->error, sizeof(p->error), "out of memory");
	snprintf(why, size, "%s", p->error);
	ok = !p->error[0];
	legion_check_free(p);
	return ok ? 0 : -1;
}

void legion_summary_free(struct legion_summary *s)
{
	legion_blob_free(&s->blob);
	free(s->procs);
	free(s->task_kinds);
	free(s->variants);
	free(s->tasks);
	free(s->ranges);
	free(s->ops);
	free(s->provenances);
	memset(s, 0, sizeof(*s));
}
