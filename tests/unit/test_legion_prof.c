// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Legion Prof writer against shared/legion/FORMAT.md: the preamble and
 * each record byte for byte, and whole profiles read back by a small reader
 * written here from FORMAT.md's layouts, which checks every rule of §3.4.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "testlib.h"
#include "../../userspace/legion_prof.h"

/* preamble_v1008.txt: its size and CRC-32, for when shared/ is not there. */
#define PREAMBLE_1008_SIZE 8202
#define PREAMBLE_1008_CRC32 0x2b473244UL
#define REDISTRICT_LINE                                                                           \
	"InstanceRedistrictInfo {id:57, result:unsigned long long:8, precondition:unsigned long " \
	"long:8, previous:unsigned long long:8, next:unsigned long long:8, "                      \
	"performed:timestamp_t:8}\n"
#define NO_EVENT_GRAPH 0

struct blob {
	unsigned char *data;
	size_t length;
};

static void blob_free(struct blob *blob)
{
	free(blob->data);
	blob->data = NULL;
	blob->length = 0;
}

/* Reads a whole file, through zlib when gzip is set. */
static int slurp(const char *path, bool gzip, struct blob *blob)
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
		if (blob->length == capacity) {
			unsigned char *bigger = realloc(blob->data, capacity * 2);

			if (!bigger)
				goto fail;
			blob->data = bigger;
			capacity *= 2;
		}
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
	blob_free(blob);
	return -1;
}

/* shared/legion/ beside the repository, found from the build directory. */
static const char *shared_legion_file(const char *name)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/../../shared/legion/%s", OPTRACE_BUILD_DIR, name);
	if (access(path, R_OK))
		snprintf(path, sizeof(path), "../shared/legion/%s", name);
	return path;
}

/* ---- an independent reader -------------------------------------------- */

/* Well-formed UTF-8 by code point: what Rust's String::from_utf8 accepts. */
static bool utf8_valid(const unsigned char *s, size_t length)
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

/*
 * The provenance form the viewer splits (§2.6): ["human", {"k": "v", ...}].
 * Returns the number of members, or -1.
 */
static int provenance_members(const char *text)
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

static bool looks_like_provenance_json(const char *text)
{
	size_t n = strlen(text);

	return n >= 4 && !strncmp(text, "[\"", 2) && !strcmp(text + n - 2, "}]");
}

/*
 * Layouts of FORMAT.md §2 (binary order, after the 4-byte id): 1 = u8,
 * 4 = u32/i32, 8 = u64/i64, s = NUL-terminated UTF-8, u = u32 count + bytes.
 */
enum record_kind {
	MACHINE_DESC,
	ZERO_TIME,
	CALIBRATION_ERR,
	MAX_DIM_DESC,
	PROC_DESC,
	MEM_DESC,
	OP_DESC,
	META_DESC,
	TASK_KIND,
	TASK_VARIANT,
	PROVENANCE,
	OPERATION_INSTANCE,
	TASK_INFO,
	GPU_TASK_INFO,
	META_INFO,
	TASK_WAIT_INFO,
	APPLICATION_CALL_INFO,
	RECORD_KINDS
};

static const struct layout {
	const char *name;
	const char *fields;
} layouts[RECORD_KINDS] = {
	[MACHINE_DESC] = { "MachineDesc", "444s84" },
	[ZERO_TIME] = { "ZeroTime", "8" },
	[CALIBRATION_ERR] = { "CalibrationErr", "8" },
	[MAX_DIM_DESC] = { "MaxDimDesc", "4" },
	[PROC_DESC] = { "ProcDesc", "84u" },
	[MEM_DESC] = { "MemDesc", "848" },
	[OP_DESC] = { "OpDesc", "4s" },
	[META_DESC] = { "MetaDesc", "411s" },
	[TASK_KIND] = { "TaskKind", "4s1" },
	[TASK_VARIANT] = { "TaskVariant", "44s" },
	[PROVENANCE] = { "Provenance", "8s" },
	[OPERATION_INSTANCE] = { "OperationInstance", "8848" },
	[TASK_INFO] = { "TaskInfo", "84488888888" },
	[GPU_TASK_INFO] = { "GPUTaskInfo", "8448888888888" },
	[META_INFO] = { "MetaInfo", "8488888888" },
	[TASK_WAIT_INFO] = { "TaskWaitInfo", "8448888" },
	[APPLICATION_CALL_INFO] = { "ApplicationCallInfo", "88888" },
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

struct record {
	enum record_kind kind;
	uint64_t v[16]; /* fields in order; strings are in s[] */
	const char *s[2];
};

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

/* What the reader collects, then checks once the file is read. */
struct profile {
	bool strict; /* files of this writer: sanitised strings, runs hold their waits */
	uint32_t expect_version;
	uint32_t ids[RECORD_KINDS];
	bool declared[RECORD_KINDS];
	size_t counts[RECORD_KINDS];
	uint32_t node_id;
	uint64_t procs[64 * 1024];
	int proc_kinds[64 * 1024];
	size_t proc_count;
	uint64_t *keys[KEY_LISTS]; /* enum key_list */
	size_t key_counts[KEY_LISTS], key_caps[KEY_LISTS];
	struct run *runs;
	size_t run_count, run_cap;
	struct interval *intervals; /* calls and waits, by task fevent */
	size_t interval_count, interval_cap;
	char error[512];
};

static void key_push(struct profile *p, enum key_list list, uint64_t key)
{
	if (p->key_counts[list] == p->key_caps[list]) {
		p->key_caps[list] = p->key_caps[list] ? 2 * p->key_caps[list] : 64;
		p->keys[list] = realloc(p->keys[list], p->key_caps[list] * sizeof(uint64_t));
		ck_assert_ptr_nonnull(p->keys[list]);
	}
	p->keys[list][p->key_counts[list]++] = key;
}

static bool key_has(const struct profile *p, enum key_list list, uint64_t key)
{
	for (size_t i = 0; i < p->key_counts[list]; i++)
		if (p->keys[list][i] == key)
			return true;
	return false;
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Number of distinct keys; sets *duplicate when one appears twice. */
static size_t key_distinct(struct profile *p, enum key_list list, bool *duplicate)
{
	size_t distinct = 0, i;

	*duplicate = false;
	if (!p->key_counts[list])
		return 0;
	qsort(p->keys[list], p->key_counts[list], sizeof(uint64_t), compare_u64);
	for (i = 0; i < p->key_counts[list]; i++) {
		if (i && p->keys[list][i] == p->keys[list][i - 1])
			*duplicate = true;
		else
			distinct++;
	}
	return distinct;
}

static void profile_free(struct profile *p)
{
	for (int i = 0; i < KEY_LISTS; i++)
		free(p->keys[i]);
	free(p->runs);
	free(p->intervals);
	free(p);
}

#define FAIL(p, ...)                                                           \
	do {                                                                   \
		if (!(p)->error[0])                                            \
			snprintf((p)->error, sizeof((p)->error), __VA_ARGS__); \
		return false;                                                  \
	} while (0)

/* §1.1: "Name {id:N, field:type:size, ...}" with known types. */
static bool parse_header_line(struct profile *p, const char *line, size_t length)
{
	char text[1024], name[128], *field, *save = NULL;
	unsigned int id;
	int used = 0;
	size_t i;

	if (length >= sizeof(text))
		FAIL(p, "header line too long");
	memcpy(text, line, length);
	text[length] = '\0';
	if (sscanf(text, "%127[A-Za-z0-9_] {id:%u%n", name, &id, &used) != 2)
		FAIL(p, "bad header line: %.200s", text);
	if (strncmp(text + used, ", ", 2) || text[length - 1] != '}')
		FAIL(p, "header line without fields: %.200s", text);
	text[length - 1] = '\0';
	for (field = strtok_r(text + used + 2, ",", &save); field;
	     field = strtok_r(NULL, ",", &save)) {
		char *type, *size;
		bool known = false;

		if (field != text + used + 2 && *field++ != ' ')
			FAIL(p, "separator is not \", \" in %s", name);
		type = strchr(field, ':');
		size = type ? strrchr(type + 1, ':') : NULL;
		if (!type || !size || type == field ||
		    strspn(field,
			   "abcdefghijklmnopqrstuvwxyz"
			   "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != (size_t)(type - field))
			FAIL(p, "bad field in %s", name);
		*size = '\0';
		for (i = 0; i < sizeof(known_types) / sizeof(known_types[0]); i++)
			known = known || !strcmp(type + 1, known_types[i]);
		if (!known)
			FAIL(p, "unknown type %s in %s", type + 1, name);
	}
	for (i = 0; i < RECORD_KINDS; i++) {
		if (strcmp(layouts[i].name, name))
			continue;
		p->ids[i] = id;
		p->declared[i] = true;
	}
	return true;
}

/* The preamble: its first line, record lines, and the empty line (§1.1). */
static bool parse_preamble(struct profile *p, const struct blob *file, size_t *offset)
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

static bool take(struct profile *p, const struct blob *file, size_t *offset, size_t n,
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
static bool take_string(struct profile *p, const struct blob *file, size_t *offset, const char **s)
{
	const unsigned char *start = file->data + *offset;
	const unsigned char *nul = memchr(start, 0, file->length - *offset);
	size_t length;

	if (!nul)
		FAIL(p, "unterminated string at %zu", *offset);
	length = (size_t)(nul - start);
	if (!utf8_valid(start, length))
		FAIL(p, "invalid UTF-8 at %zu", *offset);
	if (p->strict) {
		if (length > LEGION_PROF_STRING_MAX)
			FAIL(p, "string of %zu bytes at %zu", length, *offset);
		for (size_t i = 0; i < length; i++)
			if (start[i] < 0x20 || start[i] == 0x7f || start[i] == '$')
				FAIL(p, "forbidden byte 0x%02x at %zu", start[i], *offset + i);
	}
	*s = (const char *)start;
	*offset += length + 1;
	return true;
}

static bool read_record(struct profile *p, const struct blob *file, size_t *offset,
			struct record *r)
{
	uint64_t id, count;
	size_t i, field = 0, strings = 0;
	int kind = -1;

	if (!take(p, file, offset, 4, &id))
		return false;
	for (i = 0; i < RECORD_KINDS; i++)
		if (p->declared[i] && p->ids[i] == id)
			kind = (int)i;
	if (kind < 0)
		FAIL(p, "record id %llu not declared (or no layout here)", (unsigned long long)id);
	r->kind = (enum record_kind)kind;
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

static bool check_event(struct profile *p, uint64_t event, bool required)
{
	if (!event && required)
		FAIL(p, "event 0 where one is required");
	if (event && (event >> 60) != 8)
		FAIL(p, "event 0x%llx is not an event id", (unsigned long long)event);
	return true;
}

static bool check_time(struct profile *p, uint64_t t)
{
	if (t > (uint64_t)INT64_MAX)
		FAIL(p, "timestamp above INT64_MAX");
	return true;
}

static bool check_ordered(struct profile *p, const uint64_t *t, size_t n)
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

static void push_run(struct profile *p, const struct run *run)
{
	if (p->run_count == p->run_cap) {
		p->run_cap = p->run_cap ? 2 * p->run_cap : 64;
		p->runs = realloc(p->runs, p->run_cap * sizeof(*p->runs));
		ck_assert_ptr_nonnull(p->runs);
	}
	p->runs[p->run_count++] = *run;
}

static void push_interval(struct profile *p, const struct interval *interval)
{
	if (p->interval_count == p->interval_cap) {
		p->interval_cap = p->interval_cap ? 2 * p->interval_cap : 64;
		p->intervals = realloc(p->intervals, p->interval_cap * sizeof(*p->intervals));
		ck_assert_ptr_nonnull(p->intervals);
	}
	p->intervals[p->interval_count++] = *interval;
}

static const struct run *find_run_by_op(const struct profile *p, uint64_t op)
{
	for (size_t i = 0; i < p->run_count; i++)
		if (p->runs[i].op == op)
			return &p->runs[i];
	return NULL;
}

static const struct run *find_run_by_fevent(const struct profile *p, uint64_t fevent)
{
	for (size_t i = 0; i < p->run_count; i++)
		if (p->runs[i].fevent == fevent)
			return &p->runs[i];
	return NULL;
}

/* TaskInfo, GPUTaskInfo, MetaInfo: ids, order of times, the fevent. */
static bool check_run(struct profile *p, const struct record *r)
{
	struct run run = { 0 };
	const uint64_t *t;
	size_t times;

	if (r->kind == META_INFO) {
		run = (struct run){ .op = r->v[0], .proc = r->v[2], .fevent = r->v[9] };
		t = &r->v[3];
		times = 4;
		key_push(p, USED_META_KINDS, r->v[1]); /* checked against MetaDesc at the end */
		if (!check_event(p, r->v[7], false))
			return false;
	} else {
		run = (struct run){ .op = r->v[0],
				    .task = (uint32_t)r->v[1],
				    .variant = (uint32_t)r->v[2],
				    .proc = r->v[3],
				    .gpu = r->kind == GPU_TASK_INFO };
		t = &r->v[4];
		times = 4;
		run.fevent = r->v[run.gpu ? 12 : 10];
		if (!check_event(p, r->v[run.gpu ? 10 : 8], false))
			return false;
		if (run.gpu && (!check_ordered(p, &r->v[8], 2)))
			return false;
		if (run.op == UINT64_MAX)
			FAIL(p, "task op id UINT64_MAX");
		if (find_run_by_op(p, run.op))
			FAIL(p, "two task records for op %llu", (unsigned long long)run.op);
	}
	if (!check_ordered(p, t, times) || !check_event(p, run.fevent, true))
		return false;
	run.start = t[2];
	run.stop = t[3];
	key_push(p, FEVENTS, run.fevent);
	if (r->kind != META_INFO)
		push_run(p, &run);
	else
		push_run(p, &(struct run){ .op = UINT64_MAX,
					   .proc = run.proc,
					   .start = run.start,
					   .stop = run.stop,
					   .fevent = run.fevent,
					   .task = UINT32_MAX });
	return true;
}

static bool check_wait(struct profile *p, const struct record *r)
{
	const struct run *run = find_run_by_op(p, r->v[0]);

	if (!run)
		FAIL(p, "TaskWaitInfo before its TaskInfo");
	if (!check_ordered(p, &r->v[3], 3) || !check_event(p, r->v[6], true))
		return false;
	if (p->strict && (r->v[3] < run->start || r->v[5] > run->stop))
		FAIL(p, "wait outside its task's run");
	push_interval(p, &(struct interval){ r->v[3], r->v[5], run->fevent, run->proc, false });
	return true;
}

static bool check_record(struct profile *p, const struct record *r)
{
	switch (r->kind) {
	case MACHINE_DESC:
		if (r->v[2] != p->expect_version)
			FAIL(p, "MachineDesc version %llu", (unsigned long long)r->v[2]);
		if (r->v[0] >= r->v[1])
			FAIL(p, "node_id %llu of %llu nodes", (unsigned long long)r->v[0],
			     (unsigned long long)r->v[1]);
		p->node_id = (uint32_t)r->v[0];
		return true;
	case PROC_DESC:
		if ((int32_t)r->v[1] < 1 || (int32_t)r->v[1] > 8)
			FAIL(p, "bad processor kind %lld", (long long)(int32_t)r->v[1]);
		if (r->v[0] >> 56 != 0x1d)
			FAIL(p, "proc id 0x%llx", (unsigned long long)r->v[0]);
		ck_assert_uint_lt(p->proc_count, 64 * 1024);
		p->proc_kinds[p->proc_count] = (int32_t)r->v[1];
		p->procs[p->proc_count++] = r->v[0];
		return true;
	case OP_DESC:
		key_push(p, OP_KINDS, r->v[0]);
		return true;
	case META_DESC:
		key_push(p, META_KINDS, r->v[0]);
		return true;
	case TASK_KIND:
		key_push(p, TASK_KINDS, r->v[0]);
		return true;
	case TASK_VARIANT:
		key_push(p, VARIANTS, r->v[0] << 32 | r->v[1]);
		return true;
	case PROVENANCE:
		if (!r->v[0])
			FAIL(p, "provenance id 0");
		/* other text is shown verbatim (§2.6); the JSON form must parse */
		if (p->strict && looks_like_provenance_json(r->s[0]) &&
		    provenance_members(r->s[0]) < 0)
			FAIL(p, "provenance is not [\"human\", {...}] JSON: %.200s", r->s[0]);
		key_push(p, PROVENANCES, r->v[0]);
		return true;
	case OPERATION_INSTANCE:
		if (r->v[0] == UINT64_MAX)
			FAIL(p, "OperationInstance op id UINT64_MAX");
		key_push(p, OP_INSTANCES, r->v[0]);
		key_push(p, USED_OP_KINDS, r->v[2]);
		if (r->v[3] && p->strict && !key_has(p, PROVENANCES, r->v[3]))
			FAIL(p, "OperationInstance provenance %llu unknown",
			     (unsigned long long)r->v[3]);
		return true;
	case TASK_INFO:
	case GPU_TASK_INFO:
	case META_INFO:
		return check_run(p, r);
	case TASK_WAIT_INFO:
		return check_wait(p, r);
	case APPLICATION_CALL_INFO:
		if (!key_has(p, PROVENANCES, r->v[0]))
			FAIL(p, "ApplicationCallInfo before its Provenance");
		if (!check_ordered(p, &r->v[1], 2) || !check_event(p, r->v[4], true))
			return false;
		push_interval(p, &(struct interval){ r->v[1], r->v[2], r->v[4], r->v[3], true });
		return true;
	default:
		return true;
	}
}

static int proc_kind_of(const struct profile *p, uint64_t proc)
{
	for (size_t i = 0; i < p->proc_count; i++)
		if (p->procs[i] == proc)
			return p->proc_kinds[i];
	return 0;
}

/* Calls (and waits) on one task: inside its run, nested or disjoint (state.rs:823/851). */
static bool check_intervals(struct profile *p)
{
	for (size_t i = 0; i < p->interval_count; i++) {
		const struct interval *a = &p->intervals[i];
		const struct run *run = find_run_by_fevent(p, a->fevent);

		if (!run || run->proc != a->proc)
			FAIL(p, "range without its task on the same processor");
		if (a->call && (a->start < run->start || a->stop > run->stop))
			FAIL(p, "range [%llu, %llu] outside its task [%llu, %llu]",
			     (unsigned long long)a->start, (unsigned long long)a->stop,
			     (unsigned long long)run->start, (unsigned long long)run->stop);
		for (size_t k = 0; k < p->interval_count; k++) {
			const struct interval *b = &p->intervals[k];

			if (k == i || b->fevent != a->fevent || !(a->call || b->call))
				continue;
			if (a->stop <= b->start || b->stop <= a->start)
				continue;
			if ((a->start <= b->start && b->stop <= a->stop) ||
			    (b->start <= a->start && a->stop <= b->stop))
				continue;
			FAIL(p, "ranges [%llu, %llu] and [%llu, %llu] overlap partially",
			     (unsigned long long)a->start, (unsigned long long)a->stop,
			     (unsigned long long)b->start, (unsigned long long)b->stop);
		}
	}
	return true;
}

/* The rules that need the whole file: §2.3-2.7, §3.4. */
static bool check_whole(struct profile *p)
{
	size_t colourable, i;
	bool duplicate;

	for (i = 0; i < p->run_count; i++) {
		const struct run *run = &p->runs[i];
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
	for (i = 0; i < p->key_counts[USED_META_KINDS]; i++)
		if (!key_has(p, META_KINDS, p->keys[USED_META_KINDS][i]))
			FAIL(p, "MetaInfo kind without MetaDesc");
	for (i = 0; i < p->key_counts[USED_OP_KINDS]; i++)
		if (!key_has(p, OP_KINDS, p->keys[USED_OP_KINDS][i]))
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

/*
 * Reads a whole profile and checks it. Returns the profile (free with
 * profile_free()); its error is empty when every rule holds.
 */
static struct profile *read_profile(const struct blob *file, uint32_t version, bool strict)
{
	struct profile *p = calloc(1, sizeof(*p));
	struct record r;
	size_t offset = 0;

	ck_assert_ptr_nonnull(p);
	p->strict = strict;
	p->expect_version = version;
	if (!parse_preamble(p, file, &offset))
		return p;
	while (offset < file->length) {
		memset(&r, 0, sizeof(r));
		if (!read_record(p, file, &offset, &r) || !check_record(p, &r))
			return p;
	}
	check_whole(p);
	return p;
}

#define ck_assert_valid(file, version, strict)                                              \
	do {                                                                                \
		struct profile *checked_ = read_profile(file, version, strict);             \
		ck_assert_msg(!checked_->error[0], "invalid profile: %s", checked_->error); \
		profile_free(checked_);                                                     \
	} while (0)

/* ---- writing ------------------------------------------------------------- */

struct scratch {
	char *dir;
	char path[4096];
};

static const char *scratch_path(struct scratch *scratch, const char *name)
{
	if (!scratch->dir) {
		scratch->dir = make_temp_dir();
		ck_assert_ptr_nonnull(scratch->dir);
	}
	snprintf(scratch->path, sizeof(scratch->path), "%s/%s", scratch->dir, name);
	return scratch->path;
}

static void scratch_free(struct scratch *scratch)
{
	rm_rf(scratch->dir);
	free(scratch->dir);
}

static const struct legion_prof_options fixed_options = {
	.hostname = "h",
	.host_id = 0x0102030405060708ULL,
	.process_id = 42,
	.zero_time_ns = 1000,
	.raw = true,
};

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

static const struct profile_strings plain_strings = {
	.hostname = "node-a",
	.task_name = "demo.add_kernel",
	.variant_name = "fallback",
	.op_name = "demo.add",
	.mode = "deferred",
	.call_site = "main.c:12",
	.title = "demo.add [deferred; CPU×2 OMP×1 GPU×1] main.c:12",
	.helper_title = "demo.broadcast main.c:13",
	.meta_name = "optrace dispatch",
	.op_kind_name = "Index Task",
};

/*
 * What optrace export writes for one process: a Python thread holding the
 * top-level span, one range per operation (one with a nested helper), and
 * for each operation a task on two CPUs, an OpenMP processor and a GPU,
 * each with a JSON provenance; a wait; a meta-task on a Utility processor.
 */
static void write_small_profile(struct legion_prof *prof, const struct profile_strings *s)
{
	uint64_t python, cpu[2], omp, gpu, utility, top_op, op, provenance;
	struct legion_prof_task top = { 0 }, task;
	struct legion_prof_meta_task meta = { 0 };
	struct legion_prof_span *span;
	char json[LEGION_PROF_STRING_MAX + 1];
	struct legion_prof_kv pairs[] = {
		{ "op", s->op_name },
		{ "mode", s->mode },
		{ "fallback", s->variant_name },
		{ "call site", s->call_site },
	};
	struct legion_prof_wait wait = { 0 };

	ck_assert_int_eq(legion_prof_proc_desc(prof, LEGION_PROF_PROC_PYTHON, NULL, &python), 0);
	ck_assert_int_eq(legion_prof_proc_desc(prof, LEGION_PROF_PROC_CPU, NULL, &cpu[0]), 0);
	ck_assert_int_eq(legion_prof_proc_desc(prof, LEGION_PROF_PROC_CPU, NULL, &cpu[1]), 0);
	ck_assert_int_eq(legion_prof_proc_desc(prof, LEGION_PROF_PROC_OPENMP, NULL, &omp), 0);
	ck_assert_int_eq(legion_prof_proc_desc(prof, LEGION_PROF_PROC_GPU, NULL, &gpu), 0);
	ck_assert_int_eq(legion_prof_proc_desc(prof, LEGION_PROF_PROC_UTILITY, NULL, &utility), 0);
	ck_assert_int_eq(legion_prof_task_kind(prof, 1, "python main"), 0);
	ck_assert_int_eq(legion_prof_task_variant(prof, 1, 1, "python main"), 0);
	ck_assert_int_eq(legion_prof_task_kind(prof, 2, s->task_name), 0);
	ck_assert_int_eq(legion_prof_task_variant(prof, 2, 1, "cpu"), 0);
	ck_assert_int_eq(legion_prof_task_variant(prof, 2, 2, "omp"), 0);
	ck_assert_int_eq(legion_prof_task_variant(prof, 2, 3, "gpu"), 0);
	ck_assert_int_eq(legion_prof_task_variant(prof, 2, 4, s->variant_name), 0);
	ck_assert_int_eq(legion_prof_meta_desc(prof, 1, s->meta_name), 0);
	ck_assert_int_eq(legion_prof_op_desc(prof, 40, s->op_kind_name), 0);

	ck_assert_int_eq(legion_prof_new_op(prof, &top_op), 0);
	top = (struct legion_prof_task){
		.op_id = top_op, .task_id = 1, .variant_id = 1, .proc_id = python, .start = 100
	};
	ck_assert_int_eq(legion_prof_span_begin(prof, &top, &span), 0);
	ck_assert_int_eq(legion_prof_operation_instance(prof, top_op, LEGION_PROF_NO_PARENT,
							LEGION_PROF_OP_KIND_TASK, 0),
			 0);
	ck_assert_int_ge(legion_prof_provenance_json(json, sizeof(json), s->title, pairs, 4), 0);
	ck_assert_int_eq(legion_prof_provenance(prof, json, &provenance), 0);

	for (uint64_t i = 0, base = 1000; i < 4; i++, base += 10000) {
		ck_assert_int_eq(legion_prof_range_begin(span, base), 0);
		if (i == 1) {
			ck_assert_int_eq(legion_prof_range_begin(span, base + 100), 0);
			ck_assert_int_eq(legion_prof_range_end(span, s->helper_title, base + 200),
					 0);
		}
		for (uint32_t w = 0; w < 4; w++) {
			uint64_t procs[4] = { cpu[0], cpu[1], omp, gpu };

			ck_assert_int_eq(legion_prof_new_op(prof, &op), 0);
			ck_assert_int_eq(
				legion_prof_operation_instance(prof, op, top_op, 40, provenance),
				0);
			task = (struct legion_prof_task){
				.op_id = op,
				.task_id = 2,
				.variant_id = w == 1 ? 4 : w + 1,
				.proc_id = procs[w],
				.create = base + 300,
				.ready = base + 400,
				.start = base + 500,
				.stop = base + 7000,
				.gpu_start = base + 900,
				.gpu_stop = base + 6000,
				.creator = top.fevent,
			};
			wait = (struct legion_prof_wait){ base + 1000, base + 1500, base + 2000,
							  0 };
			if (w == 3)
				ck_assert_int_eq(legion_prof_gpu_task_info(prof, &task, NULL, 0),
						 0);
			else
				ck_assert_int_eq(legion_prof_task_info(prof, &task, &wait, w == 0),
						 0);
		}
		ck_assert_int_eq(legion_prof_range_end(span, s->title, base + 8000), 0);
	}
	meta = (struct legion_prof_meta_task){ .op_id = top_op,
					       .kind = 1,
					       .proc_id = utility,
					       .create = 10,
					       .ready = 20,
					       .start = 30,
					       .stop = 90,
					       .creator = top.fevent };
	ck_assert_int_eq(legion_prof_meta_info(prof, &meta), 0);
	ck_assert_int_eq(legion_prof_span_end(span, 50000), 0);
}

/* Writes the small profile with s to path and reads the file back. */
static void small_profile_file(const char *path, const struct profile_strings *s, bool raw,
			       uint32_t version, struct blob *file)
{
	struct legion_prof_options options = fixed_options;
	struct legion_prof *prof;

	options.raw = raw;
	options.version = version;
	options.hostname = s->hostname;
	ck_assert_int_eq(legion_prof_open(&prof, path, &options), 0);
	write_small_profile(prof, s);
	ck_assert_int_eq(legion_prof_close(prof), 0);
	ck_assert_int_eq(slurp(path, !raw, file), 0);
}

/* ---- tests ------------------------------------------------------------ */

START_TEST(test_preamble_1008_is_legions)
{
	const char *reference = shared_legion_file("preamble_v1008.txt");
	struct scratch scratch = { 0 };
	struct blob file, expected;
	struct legion_prof *prof;
	const char *path = scratch_path(&scratch, "prof_0.gz");

	ck_assert_int_eq(legion_prof_open(&prof, path, &fixed_options), 0);
	ck_assert_int_eq(legion_prof_close(prof), 0);
	ck_assert_int_eq(slurp(path, false, &file), 0);
	ck_assert_uint_gt(file.length, PREAMBLE_1008_SIZE + 4);
	/* the whole preamble, and the first record (MachineDesc, id 10) right after */
	ck_assert_uint_eq(crc32(0, file.data, PREAMBLE_1008_SIZE), PREAMBLE_1008_CRC32);
	ck_assert_mem_eq(file.data + PREAMBLE_1008_SIZE, "\x0a\0\0\0", 4);
	if (!slurp(reference, false, &expected)) {
		ck_assert_uint_eq(expected.length, PREAMBLE_1008_SIZE);
		ck_assert_mem_eq(file.data, expected.data, expected.length);
		blob_free(&expected);
	}
	ck_assert_valid(&file, LEGION_PROF_VERSION, true);
	blob_free(&file);
	scratch_free(&scratch);
}
END_TEST

/* Expected body of the byte-for-byte scenario, by record (FORMAT.md §2). */
// clang-format off
static const unsigned char expected_header_records[] = {
	/* MachineDesc: id 10, node 0, 1 node, version 1008, "h", host_id, pid 42 */
	0x0a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
	0xf0, 0x03, 0x00, 0x00, 0x68, 0x00, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03,
	0x02, 0x01, 0x2a, 0x00, 0x00, 0x00,
	/* ZeroTime: id 60, 1000 */
	0x3c, 0x00, 0x00, 0x00, 0xe8, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	/* OpDesc: id 5, kind 30, "Task" */
	0x05, 0x00, 0x00, 0x00, 0x1e, 0x00, 0x00, 0x00, 0x54, 0x61, 0x73, 0x6b,
	0x00,
};
// clang-format on

// clang-format off
static const unsigned char expected_records[] = {
	/* ProcDesc: id 6, proc 0x1d00000000000000, kind 2 (CPU), 16 uuid bytes of 0 */
	0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1d,
	0x02, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	/* TaskKind: id 11, task 2, "leaf", overwrite 0 */
	0x0b, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x6c, 0x65, 0x61, 0x66,
	0x00, 0x00,
	/* TaskVariant: id 12, task 2, variant 1, "cpu" */
	0x0c, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
	0x63, 0x70, 0x75, 0x00,
	/* Provenance: id 62, pid 1, "main.py:10" */
	0x3e, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x6d, 0x61, 0x69, 0x6e, 0x2e, 0x70, 0x79, 0x3a, 0x31, 0x30, 0x00,
	/* OperationInstance: id 13, op 2, parent none (u64 max), kind 30, provenance 1 */
	0x0d, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x1e, 0x00, 0x00, 0x00,
	0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	/* TaskInfo: FORMAT.md §1.2's worked example, verbatim */
	0x12, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x02, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x1d, 0x28, 0x23, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x1c, 0x25, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x27, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x30, 0x75, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x01, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x20, 0x00, 0x00, 0x00, 0x00, 0x80,
	/* TaskWaitInfo: id 16, op 2, task 2, variant 1, 12000, 13000, 14000, event idx 3 gen 1 */
	0x10, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x02, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0xe0, 0x2e, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0xc8, 0x32, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0xb0, 0x36, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x30, 0x00,
	0x00, 0x00, 0x00, 0x80,
	/* ProcDesc: proc 0x1d00000000000001, kind 1 (GPU), uuid 00 01 .. 0f */
	0x06, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1d,
	0x01, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x03,
	0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
	/* TaskVariant: task 2, variant 3, "gpu" */
	0x0c, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00,
	0x67, 0x70, 0x75, 0x00,
	/*
	 * GPUTaskInfo: id 29, op 3, task 2, variant 3, GPU proc, 100/200/300/400,
	 * gpu 350/600, creator = event 2, critical 0, fevent = event 4
	 */
	0x1d, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x02, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x1d, 0x64, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0xc8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2c, 0x01, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x90, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x5e, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x58, 0x02, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x20, 0x00, 0x00, 0x00, 0x00, 0x80,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x40, 0x00,
	0x00, 0x00, 0x00, 0x80,
	/* MetaDesc: id 4, kind 5, message 0, ordered_vc 0, "Scheduler" */
	0x04, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x53, 0x63,
	0x68, 0x65, 0x64, 0x75, 0x6c, 0x65, 0x72, 0x00,
	/* ProcDesc: proc 0x1d00000000000002, kind 3 (Utility) */
	0x06, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1d,
	0x03, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	/* MetaInfo: id 19, op 2, kind 5, Utility proc, 50/60/70/80, creator 0, critical 0, event 5
	 */
	0x13, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x05, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1d,
	0x32, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3c, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x46, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x50, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x01, 0x00, 0x50, 0x00, 0x00, 0x00, 0x00, 0x80,
	/* ProcDesc: proc 0x1d00000000000003, kind 8 (Python) */
	0x06, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1d,
	0x08, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	/* TaskKind: task 1, "top_level", overwrite 0 */
	0x0b, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x74, 0x6f, 0x70, 0x5f,
	0x6c, 0x65, 0x76, 0x65, 0x6c, 0x00, 0x00,
	/* TaskVariant: task 1, variant 1, "top_level" */
	0x0c, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
	0x74, 0x6f, 0x70, 0x5f, 0x6c, 0x65, 0x76, 0x65, 0x6c, 0x00,
	/* Provenance: pid 2, "add" (the range's title) */
	0x3e, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x61, 0x64, 0x64, 0x00,
	/* ApplicationCallInfo: id 27, pid 2, 2000, 3000, Python proc, fevent = event 6 */
	0x1b, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0xd0, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xb8, 0x0b, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1d,
	0x01, 0x00, 0x60, 0x00, 0x00, 0x00, 0x00, 0x80,
	/* TaskInfo of the span: op 4, task 1, variant 1, Python, 500/800/1000/5000, event 6 */
	0x12, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x1d, 0xf4, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x20, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe8, 0x03, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x88, 0x13, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x60, 0x00, 0x00, 0x00, 0x00, 0x80,
};
// clang-format on

/* The calls that must produce expected_records, in order. */
static void write_known_records(struct legion_prof *prof)
{
	static const uint8_t uuid[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
	uint64_t cpu, gpu, utility, python, op1, op2, op3, op4, e1, e2, provenance;
	struct legion_prof_wait wait = { 12000, 13000, 14000, 0 };
	struct legion_prof_task task;
	struct legion_prof_meta_task meta;
	struct legion_prof_span *span;

	ck_assert_int_eq(legion_prof_proc_desc(prof, LEGION_PROF_PROC_CPU, NULL, &cpu), 0);
	ck_assert_uint_eq(cpu, 0x1d00000000000000ULL);
	ck_assert_int_eq(legion_prof_task_kind(prof, 2, "leaf"), 0);
	ck_assert_int_eq(legion_prof_task_variant(prof, 2, 1, "cpu"), 0);
	ck_assert_int_eq(legion_prof_provenance(prof, "main.py:10", &provenance), 0);
	ck_assert_uint_eq(provenance, 1);
	ck_assert_int_eq(legion_prof_new_op(prof, &op1), 0);
	ck_assert_int_eq(legion_prof_new_op(prof, &op2), 0);
	ck_assert_uint_eq(op1, 1);
	ck_assert_uint_eq(op2, 2);
	ck_assert_int_eq(legion_prof_new_event(prof, &e1), 0);
	ck_assert_int_eq(legion_prof_new_event(prof, &e2), 0);
	ck_assert_uint_eq(e1, 0x8000000000100001ULL);
	ck_assert_uint_eq(e2, 0x8000000000200001ULL);
	ck_assert_int_eq(
		legion_prof_operation_instance(prof, op2, LEGION_PROF_NO_PARENT, 30, provenance),
		0);
	task = (struct legion_prof_task){ .op_id = op2,
					  .task_id = 2,
					  .variant_id = 1,
					  .proc_id = cpu,
					  .create = 9000,
					  .ready = 9500,
					  .start = 10000,
					  .stop = 30000,
					  .creator = e1,
					  .fevent = e2 };
	ck_assert_int_eq(legion_prof_task_info(prof, &task, &wait, 1), 0);

	ck_assert_int_eq(legion_prof_proc_desc(prof, LEGION_PROF_PROC_GPU, uuid, &gpu), 0);
	ck_assert_int_eq(legion_prof_task_variant(prof, 2, 3, "gpu"), 0);
	ck_assert_int_eq(legion_prof_new_op(prof, &op3), 0);
	task = (struct legion_prof_task){ .op_id = op3,
					  .task_id = 2,
					  .variant_id = 3,
					  .proc_id = gpu,
					  .create = 100,
					  .ready = 200,
					  .start = 300,
					  .stop = 400,
					  .gpu_start = 350,
					  .gpu_stop = 600,
					  .creator = e2 };
	ck_assert_int_eq(legion_prof_gpu_task_info(prof, &task, NULL, 0), 0);
	ck_assert_uint_eq(task.fevent, 0x8000000000400001ULL);

	ck_assert_int_eq(legion_prof_meta_desc(prof, 5, "Scheduler"), 0);
	ck_assert_int_eq(legion_prof_proc_desc(prof, LEGION_PROF_PROC_UTILITY, NULL, &utility), 0);
	meta = (struct legion_prof_meta_task){ .op_id = op2,
					       .kind = 5,
					       .proc_id = utility,
					       .create = 50,
					       .ready = 60,
					       .start = 70,
					       .stop = 80 };
	ck_assert_int_eq(legion_prof_meta_info(prof, &meta), 0);

	ck_assert_int_eq(legion_prof_proc_desc(prof, LEGION_PROF_PROC_PYTHON, NULL, &python), 0);
	ck_assert_int_eq(legion_prof_task_kind(prof, 1, "top_level"), 0);
	ck_assert_int_eq(legion_prof_task_variant(prof, 1, 1, "top_level"), 0);
	ck_assert_int_eq(legion_prof_new_op(prof, &op4), 0);
	task = (struct legion_prof_task){ .op_id = op4,
					  .task_id = 1,
					  .variant_id = 1,
					  .proc_id = python,
					  .create = 500,
					  .ready = 800,
					  .start = 1000 };
	ck_assert_int_eq(legion_prof_span_begin(prof, &task, &span), 0);
	ck_assert_int_eq(legion_prof_range_begin(span, 2000), 0);
	ck_assert_int_eq(legion_prof_range_end(span, "add", 3000), 0);
	ck_assert_int_eq(legion_prof_span_end(span, 5000), 0);
}

static void check_known_body(const struct blob *file, size_t preamble_size)
{
	size_t header = sizeof(expected_header_records);

	ck_assert_uint_eq(file->length, preamble_size + header + sizeof(expected_records));
	for (size_t i = 0; i < sizeof(expected_records); i++)
		ck_assert_msg(file->data[preamble_size + header + i] == expected_records[i],
			      "byte %zu of the records: 0x%02x, expected 0x%02x", i,
			      file->data[preamble_size + header + i], expected_records[i]);
}

START_TEST(test_records_byte_for_byte)
{
	struct scratch scratch = { 0 };
	const char *path = scratch_path(&scratch, "known");
	struct legion_prof *prof;
	struct blob file;

	ck_assert_int_eq(legion_prof_open(&prof, path, &fixed_options), 0);
	write_known_records(prof);
	ck_assert_int_eq(legion_prof_close(prof), 0);
	ck_assert_int_eq(slurp(path, false, &file), 0);
	ck_assert_mem_eq(file.data + PREAMBLE_1008_SIZE, expected_header_records,
			 sizeof(expected_header_records));
	check_known_body(&file, PREAMBLE_1008_SIZE);
	ck_assert_valid(&file, LEGION_PROF_VERSION, true);
	blob_free(&file);
	scratch_free(&scratch);
}
END_TEST

START_TEST(test_version_1007)
{
	struct legion_prof_options options = fixed_options;
	size_t line = strlen(REDISTRICT_LINE), at;
	struct scratch scratch = { 0 };
	const char *path = scratch_path(&scratch, "v1007");
	struct blob file, file_1008;
	struct legion_prof *prof;
	char *found;

	/* the 1008 file, for comparison */
	ck_assert_int_eq(legion_prof_open(&prof, path, &fixed_options), 0);
	write_known_records(prof);
	ck_assert_int_eq(legion_prof_close(prof), 0);
	ck_assert_int_eq(slurp(path, false, &file_1008), 0);

	options.version = LEGION_PROF_VERSION_1007;
	ck_assert_int_eq(legion_prof_open(&prof, path, &options), 0);
	write_known_records(prof);
	ck_assert_int_eq(legion_prof_close(prof), 0);
	ck_assert_int_eq(slurp(path, false, &file), 0);

	/* the 1008 preamble less InstanceRedistrictInfo, the one 1007 -> 1008 change (§3.2) */
	found = memmem(file_1008.data, PREAMBLE_1008_SIZE, REDISTRICT_LINE, line);
	ck_assert_ptr_nonnull(found);
	at = (size_t)(found - (char *)file_1008.data);
	ck_assert_ptr_null(memmem(file.data, PREAMBLE_1008_SIZE - line, "InstanceRedistrict", 18));
	ck_assert_mem_eq(file.data, file_1008.data, at);
	ck_assert_mem_eq(file.data + at, file_1008.data + at + line,
			 PREAMBLE_1008_SIZE - line - at);
	/* MachineDesc says 1007; every other byte is the same */
	ck_assert_uint_eq(file.length, file_1008.length - line);
	ck_assert_mem_eq(file.data + PREAMBLE_1008_SIZE - line + 12, "\xef\x03\0\0", 4);
	ck_assert_mem_eq(file.data + PREAMBLE_1008_SIZE - line + 16,
			 file_1008.data + PREAMBLE_1008_SIZE + 16,
			 file.length - (PREAMBLE_1008_SIZE - line + 16));
	ck_assert_valid(&file, LEGION_PROF_VERSION_1007, true);
	blob_free(&file);

	small_profile_file(path, &plain_strings, true, LEGION_PROF_VERSION_1007, &file);
	ck_assert_valid(&file, LEGION_PROF_VERSION_1007, true);
	blob_free(&file);
	blob_free(&file_1008);
	scratch_free(&scratch);
}
END_TEST

START_TEST(test_ids_carry_the_node)
{
	struct legion_prof_options options = fixed_options;
	struct scratch scratch = { 0 };
	uint64_t id, event, proc, provenance;
	struct legion_prof *prof;

	ck_assert_uint_eq(legion_prof_proc_id(0, 0), 0x1d00000000000000ULL);
	ck_assert_uint_eq(legion_prof_proc_id(3, 7), 0x1d00030000000007ULL);
	ck_assert_uint_eq(legion_prof_event_id(0, 1, 1), 0x8000000000100001ULL);
	ck_assert_uint_eq(legion_prof_event_id(2, 5, 1), 0x8001000000500001ULL);

	/* node 2 of 4: op and provenance ids 2, 6, 10, ...; node bits in procs and events */
	options.node_id = 2;
	options.num_nodes = 4;
	ck_assert_int_eq(legion_prof_open(&prof, scratch_path(&scratch, "n2"), &options), 0);
	for (uint64_t expect = 2; expect <= 10; expect += 4) {
		ck_assert_int_eq(legion_prof_new_op(prof, &id), 0);
		ck_assert_uint_eq(id, expect);
	}
	ck_assert_int_eq(legion_prof_new_event(prof, &event), 0);
	ck_assert_uint_eq(event, legion_prof_event_id(2, 1, 1));
	ck_assert_int_eq(legion_prof_proc_desc(prof, LEGION_PROF_PROC_CPU, NULL, &proc), 0);
	ck_assert_uint_eq(proc, legion_prof_proc_id(2, 0));
	ck_assert_int_eq(legion_prof_provenance(prof, "a", &provenance), 0);
	ck_assert_uint_eq(provenance, 2);
	ck_assert_int_eq(legion_prof_provenance(prof, "b", &provenance), 0);
	ck_assert_uint_eq(provenance, 6);
	/* an op id of another node is refused */
	ck_assert_int_eq(legion_prof_operation_instance(prof, 3, LEGION_PROF_NO_PARENT, 30, 0),
			 -EINVAL);
	ck_assert_int_eq(legion_prof_close(prof), 0);

	/* node 0 starts at the stride: 0 would look like "none" */
	options.node_id = 0;
	ck_assert_int_eq(legion_prof_open(&prof, scratch_path(&scratch, "n0"), &options), 0);
	ck_assert_int_eq(legion_prof_new_op(prof, &id), 0);
	ck_assert_uint_eq(id, 4);
	ck_assert_int_eq(legion_prof_close(prof), 0);

	options.node_id = 4; /* not below num_nodes */
	ck_assert_int_eq(legion_prof_open(&prof, scratch_path(&scratch, "bad"), &options), -EINVAL);
	options.node_id = 0;
	options.version = 1006;
	ck_assert_int_eq(legion_prof_open(&prof, scratch_path(&scratch, "bad"), &options), -EINVAL);
	scratch_free(&scratch);
}
END_TEST

START_TEST(test_small_profile_is_valid)
{
	struct scratch scratch = { 0 };
	struct profile *checked;
	struct blob file;

	small_profile_file(scratch_path(&scratch, "prof_0"), &plain_strings, true,
			   LEGION_PROF_VERSION, &file);
	checked = read_profile(&file, LEGION_PROF_VERSION, true);
	ck_assert_msg(!checked->error[0], "invalid profile: %s", checked->error);
	ck_assert_uint_eq(checked->counts[PROC_DESC], 6);
	ck_assert_uint_eq(checked->counts[TASK_INFO], 4 * 3 + 1);
	ck_assert_uint_eq(checked->counts[GPU_TASK_INFO], 4);
	ck_assert_uint_eq(checked->counts[TASK_WAIT_INFO], 4);
	ck_assert_uint_eq(checked->counts[OPERATION_INSTANCE], 1 + 4 * 4);
	ck_assert_uint_eq(checked->counts[APPLICATION_CALL_INFO], 5);
	ck_assert_uint_eq(checked->counts[META_INFO], 1);
	/* one Provenance per distinct text: the JSON, the title, the helper's title */
	ck_assert_uint_eq(checked->counts[PROVENANCE], 3);
	profile_free(checked);
	blob_free(&file);
	scratch_free(&scratch);
}
END_TEST

static char *repeat(const char *unit, size_t total)
{
	size_t n = strlen(unit), i;
	char *text = malloc(total + 1);

	ck_assert_ptr_nonnull(text);
	for (i = 0; i + n <= total; i += n)
		memcpy(text + i, unit, n);
	text[i] = '\0';
	return text;
}

START_TEST(test_hostile_strings)
{
	/* invalid UTF-8 of every kind, and what breaks titles, TSV and JSON */
	static const char bad_utf8[] =
		"ok\xff\xfe|\xc0\x80|\xed\xa0\x80|\xf4\x90\x80\x80|"
		"\xe2\x82|\xf0\x9f\x98|\x80|é€😀|$|\"{},\n\t\r\x01\x7f\xc2\x85";
	char *huge_dollars = repeat("$|\"{},\n", 100 * 1024);
	char *huge_utf8 = repeat("é$\xff😀\\", 100 * 1024);
	char *huge_plain = repeat("x", 100 * 1024);
	struct profile_strings hostile = {
		.hostname = huge_utf8,
		.task_name = bad_utf8,
		.variant_name = huge_dollars,
		.op_name = huge_dollars,
		.mode = bad_utf8,
		.call_site = huge_utf8,
		.title = huge_dollars,
		.helper_title = bad_utf8,
		.meta_name = huge_plain,
		.op_kind_name = "$",
	};
	struct scratch scratch = { 0 };
	struct blob file;

	small_profile_file(scratch_path(&scratch, "hostile"), &hostile, true, LEGION_PROF_VERSION,
			   &file);
	ck_assert_valid(&file, LEGION_PROF_VERSION, true);
	blob_free(&file);

	/* every string as the provenance's text too */
	hostile.title = bad_utf8;
	hostile.op_name = huge_utf8;
	hostile.hostname = NULL;
	small_profile_file(scratch_path(&scratch, "hostile2"), &hostile, false, LEGION_PROF_VERSION,
			   &file);
	ck_assert_valid(&file, LEGION_PROF_VERSION, true);
	blob_free(&file);
	free(huge_dollars);
	free(huge_utf8);
	free(huge_plain);
	scratch_free(&scratch);
}
END_TEST

START_TEST(test_sanitize)
{
	char out[LEGION_PROF_STRING_MAX + 1], small[10];
	char *huge = repeat("ab", 100 * 1024);
	size_t n;

	ck_assert_uint_eq(legion_prof_sanitize(out, sizeof(out), "a$b"), 5);
	ck_assert_str_eq(out, "a\xef\xbc\x84"
			      "b"); /* U+FF04 */
	legion_prof_sanitize(out, sizeof(out), "x\ny\tz\x7f\xc2\x85|");
	ck_assert_str_eq(out, "x y z  |");
	legion_prof_sanitize(out, sizeof(out), "\xff\xc0\x80\xed\xa0\x80\xf4\x90\x80\x80\xe2\x82");
	ck_assert_uint_eq(strlen(out), 12 * 3); /* each bad byte is one U+FFFD */
	ck_assert(utf8_valid((unsigned char *)out, strlen(out)));
	legion_prof_sanitize(out, sizeof(out), "é€😀 ok");
	ck_assert_str_eq(out, "é€😀 ok");
	legion_prof_sanitize(out, sizeof(out), NULL);
	ck_assert_str_eq(out, "");
	/* cut at a character boundary, marked with "…" */
	legion_prof_sanitize(small, sizeof(small), "abcdefghijkl");
	ck_assert_str_eq(small, "abcdef\xe2\x80\xa6");
	legion_prof_sanitize(small, 8, "ééééé");
	ck_assert_str_eq(small, "éé\xe2\x80\xa6");
	legion_prof_sanitize(small, 3, "abc");
	ck_assert_str_eq(small, "ab");
	n = legion_prof_sanitize(out, sizeof(out), huge);
	ck_assert_uint_le(n, LEGION_PROF_STRING_MAX);
	ck_assert_uint_ge(n, LEGION_PROF_STRING_MAX - 3);
	ck_assert_str_eq(out + n - 3, "\xe2\x80\xa6");
	free(huge);
}
END_TEST

START_TEST(test_json_escape_and_provenance)
{
	char out[LEGION_PROF_STRING_MAX + 1], small[4];
	struct legion_prof_kv pairs[] = { { "op", "add" }, { "mode", "deferred" } };
	struct legion_prof_kv hostile[8];
	char *huge = repeat("\"\\$\xff{},|\n", 100 * 1024);
	int n;

	legion_prof_json_escape(out, sizeof(out), "a\"b\\c\n\x01\xff/");
	ck_assert_str_eq(out, "a\\\"b\\\\c\\n\\u0001\xef\xbf\xbd/");
	/* never half an escape */
	ck_assert_uint_eq(legion_prof_json_escape(small, sizeof(small), "\"\""), 2);
	ck_assert_str_eq(small, "\\\"");
	ck_assert_uint_eq(legion_prof_json_escape(small, sizeof(small), "a€"), 1);

	n = legion_prof_provenance_json(out, sizeof(out), "add (main.c:12)", pairs, 2);
	ck_assert_str_eq(out, "[\"add (main.c:12)\", {\"op\": \"add\", \"mode\": \"deferred\"}]");
	ck_assert_int_eq(n, (int)strlen(out));
	ck_assert_int_eq(provenance_members(out), 2);
	/* '$' never reaches a provenance: the legacy viewer would split on it */
	legion_prof_provenance_json(out, sizeof(out), "a$b",
				    (struct legion_prof_kv[]){ { "$", "$" } }, 1);
	ck_assert_ptr_null(strchr(out, '$'));
	ck_assert_int_eq(provenance_members(out), 1);

	for (int i = 0; i < 8; i++)
		hostile[i] = (struct legion_prof_kv){ huge, huge };
	n = legion_prof_provenance_json(out, sizeof(out), huge, hostile, 8);
	ck_assert_int_le(n, LEGION_PROF_STRING_MAX);
	ck_assert_int_ge(provenance_members(out), 1);
	ck_assert(utf8_valid((unsigned char *)out, strlen(out)));
	n = legion_prof_provenance_json(out, 64, huge, hostile, 8);
	ck_assert_int_le(n, 63);
	ck_assert_int_ge(provenance_members(out), 0);
	ck_assert_int_eq(legion_prof_provenance_json(out, 63, "a", NULL, 0), -ENOSPC);
	ck_assert_int_eq(legion_prof_provenance_json(out, 64, NULL, NULL, 0), 8);
	ck_assert_str_eq(out, "[\"\", {}]");
	free(huge);
}
END_TEST

/* The TaskInfo of op in a profile file, by this test's reader. */
static bool find_task_record(const struct blob *file, uint64_t op, struct record *found)
{
	struct profile *p = calloc(1, sizeof(*p));
	size_t offset = 0;
	bool ok = false;
	struct record r;

	ck_assert_ptr_nonnull(p);
	p->expect_version = LEGION_PROF_VERSION;
	ck_assert(parse_preamble(p, file, &offset));
	while (!ok && offset < file->length) {
		ck_assert(read_record(p, file, &offset, &r));
		ok = (r.kind == TASK_INFO || r.kind == GPU_TASK_INFO) && r.v[0] == op;
	}
	*found = r;
	profile_free(p);
	return ok;
}

START_TEST(test_invariants_are_kept)
{
	struct scratch scratch = { 0 };
	const char *path = scratch_path(&scratch, "invariants");
	uint64_t cpu, gpu, op, op2, op3, event, provenance;
	struct legion_prof_task task, copy;
	struct legion_prof_span *span;
	struct legion_prof *prof;
	struct record r;
	struct blob file;
	int err;

	ck_assert_int_eq(legion_prof_open(&prof, path, &fixed_options), 0);
	ck_assert_int_eq(legion_prof_proc_desc(prof, LEGION_PROF_PROC_CPU, NULL, &cpu), 0);
	ck_assert_int_eq(legion_prof_proc_desc(prof, LEGION_PROF_PROC_GPU, NULL, &gpu), 0);
	ck_assert_int_eq(legion_prof_proc_desc(prof, 9, NULL, &event), -EINVAL);
	ck_assert_int_eq(legion_prof_new_op(prof, &op), 0);
	ck_assert_int_eq(legion_prof_new_op(prof, &op2), 0);
	ck_assert_int_eq(legion_prof_new_op(prof, &op3), 0);

	/* times out of order: start kept, stop raised, ready and create lowered */
	task = (struct legion_prof_task){ .op_id = op,
					  .task_id = 77,
					  .variant_id = 9,
					  .proc_id = cpu,
					  .create = 900,
					  .ready = 800,
					  .start = 500,
					  .stop = 100 };
	copy = task;
	ck_assert_int_eq(legion_prof_task_info(prof, &task, NULL, 0), 0);
	/* one run per op, one owner per fevent */
	copy.fevent = 0;
	ck_assert_int_eq(legion_prof_task_info(prof, &copy, NULL, 0), -EEXIST);
	copy.op_id = op2;
	copy.fevent = task.fevent;
	ck_assert_int_eq(legion_prof_task_info(prof, &copy, NULL, 0), -EEXIST);
	/* ids this writer did not hand out */
	copy.fevent = legion_prof_event_id(0, 999, 1);
	ck_assert_int_eq(legion_prof_task_info(prof, &copy, NULL, 0), -EINVAL);
	copy.fevent = 0;
	copy.op_id = UINT64_MAX;
	ck_assert_int_eq(legion_prof_task_info(prof, &copy, NULL, 0), -EINVAL);
	copy.op_id = 1000;
	ck_assert_int_eq(legion_prof_task_info(prof, &copy, NULL, 0), -EINVAL);
	copy.op_id = op2;
	copy.proc_id = legion_prof_proc_id(0, 7); /* no ProcDesc */
	ck_assert_int_eq(legion_prof_task_info(prof, &copy, NULL, 0), -EINVAL);
	copy.proc_id = legion_prof_proc_id(1, 0); /* another node's */
	ck_assert_int_eq(legion_prof_task_info(prof, &copy, NULL, 0), -EINVAL);
	copy.proc_id = cpu;
	copy.creator = 0x8000000000000123ULL;
	ck_assert_int_eq(legion_prof_task_info(prof, &copy, NULL, 0), -EINVAL);
	copy.creator = 0;
	ck_assert_int_eq(legion_prof_gpu_task_info(prof, &copy, NULL, 0), -EINVAL); /* not a GPU */
	/* a GPU kernel that ends before it starts, and times beyond INT64_MAX */
	copy.proc_id = gpu;
	copy.gpu_start = 700;
	copy.gpu_stop = 0;
	copy.stop = UINT64_MAX;
	ck_assert_int_eq(legion_prof_gpu_task_info(prof, &copy, NULL, 0), 0);

	/* one OperationInstance per op; provenance and parent ids must exist */
	ck_assert_int_eq(legion_prof_operation_instance(prof, op, LEGION_PROF_NO_PARENT, 30, 0), 0);
	ck_assert_int_eq(legion_prof_operation_instance(prof, op, LEGION_PROF_NO_PARENT, 30, 0),
			 -EEXIST);
	ck_assert_int_eq(legion_prof_operation_instance(prof, op2, 999, 30, 0), -EINVAL);
	ck_assert_int_eq(legion_prof_operation_instance(prof, op2, op, 30, 5), -EINVAL);
	ck_assert_int_eq(legion_prof_operation_instance(prof, UINT64_MAX, op, 30, 0), -EINVAL);
	ck_assert_int_eq(legion_prof_operation_instance(prof, op2, op, 55, 0),
			 0); /* OpDesc 55 added */

	/* the same text twice is one Provenance */
	ck_assert_int_eq(legion_prof_provenance(prof, "same", &provenance), 0);
	ck_assert_int_eq(legion_prof_provenance(prof, "same", &event), 0);
	ck_assert_uint_eq(provenance, event);

	/* ranges: bad times, unbalanced ends, too deep, a span never ended */
	task = (struct legion_prof_task){
		.op_id = op3, .task_id = 1, .variant_id = 1, .proc_id = cpu, .start = 10000
	};
	ck_assert_int_eq(legion_prof_span_begin(prof, &task, &span), 0);
	ck_assert_int_eq(legion_prof_range_end(span, "nothing open", 1), -EINVAL);
	ck_assert_int_eq(legion_prof_range_begin(span, 5), 0); /* before the span: moved in */
	ck_assert_int_eq(legion_prof_range_end(span, "early", 20000), 0);
	ck_assert_int_eq(legion_prof_range_begin(span, 15000), 0); /* overlaps "early": moved */
	ck_assert_int_eq(legion_prof_range_begin(span, 30000), 0);
	ck_assert_int_eq(legion_prof_range_end(span, "child", 25000), 0);  /* ends before start */
	ck_assert_int_eq(legion_prof_range_end(span, "parent", 26000), 0); /* before its child */
	for (int i = 0; i < 300; i++) {
		err = legion_prof_range_begin(span, 40000 + (uint64_t)i);
		ck_assert_int_eq(err, i < 256 ? 0 : -ERANGE);
	}
	for (int i = 299; i >= 100; i--) {
		err = legion_prof_range_end(span, "deep", 50000 - (uint64_t)i);
		ck_assert_int_eq(err, i < 256 ? 0 : -ERANGE);
	}
	ck_assert_int_eq(legion_prof_close(prof), 0); /* 100 ranges and the span still open */

	ck_assert_int_eq(slurp(path, false, &file), 0);
	ck_assert_valid(&file, LEGION_PROF_VERSION, true);
	ck_assert(find_task_record(&file, op, &r));
	ck_assert_uint_eq(r.v[4], 500); /* create */
	ck_assert_uint_eq(r.v[5], 500); /* ready */
	ck_assert_uint_eq(r.v[6], 500); /* start */
	ck_assert_uint_eq(r.v[7], 500); /* stop */
	ck_assert(find_task_record(&file, op2, &r));
	ck_assert_uint_eq(r.kind, GPU_TASK_INFO);
	ck_assert_uint_eq(r.v[7], INT64_MAX);
	ck_assert_uint_eq(r.v[8], 700);
	ck_assert_uint_eq(r.v[9], 700);
	ck_assert_ptr_nonnull(memmem(file.data, file.length, "task 77", 8)); /* placeholder names */
	ck_assert_ptr_nonnull(memmem(file.data, file.length, "variant 9", 10));
	ck_assert_ptr_nonnull(memmem(file.data, file.length, "(unfinished)", 13));
	blob_free(&file);
	scratch_free(&scratch);
}
END_TEST

START_TEST(test_empty_profile_is_valid)
{
	struct scratch scratch = { 0 };
	const char *path = scratch_path(&scratch, "empty");
	struct legion_prof *prof;
	struct blob file;

	/* only OpDesc "Task": a second colourable descriptor is added at close */
	ck_assert_int_eq(legion_prof_open(&prof, path, NULL), 0);
	ck_assert_int_eq(legion_prof_close(prof), 0);
	ck_assert_int_eq(slurp(path, true, &file), 0);
	ck_assert_valid(&file, LEGION_PROF_VERSION, true);
	blob_free(&file);
	scratch_free(&scratch);
}
END_TEST

/* Inflates the whole file as gzip: one member, nothing after it. */
static void check_single_gzip_member(const char *path)
{
	unsigned char out[1 << 16];
	struct blob compressed;
	z_stream stream = { 0 };
	int ret;

	ck_assert_int_eq(slurp(path, false, &compressed), 0);
	ck_assert_int_eq(inflateInit2(&stream, 15 + 16), Z_OK);
	stream.next_in = compressed.data;
	stream.avail_in = (unsigned int)compressed.length;
	do {
		stream.next_out = out;
		stream.avail_out = sizeof(out);
		ret = inflate(&stream, Z_NO_FLUSH);
	} while (ret == Z_OK);
	ck_assert_int_eq(ret, Z_STREAM_END);
	ck_assert_uint_eq(stream.avail_in, 0);
	inflateEnd(&stream);
	blob_free(&compressed);
}

START_TEST(test_gzip_equals_raw)
{
	struct scratch scratch = { 0 };
	struct blob raw, unzipped;
	char gz_path[4096];

	small_profile_file(scratch_path(&scratch, "raw"), &plain_strings, true, LEGION_PROF_VERSION,
			   &raw);
	snprintf(gz_path, sizeof(gz_path), "%s", scratch_path(&scratch, "prof_0.gz"));
	small_profile_file(gz_path, &plain_strings, false, LEGION_PROF_VERSION, &unzipped);
	ck_assert_uint_eq(unzipped.length, raw.length);
	ck_assert_mem_eq(unzipped.data, raw.data, raw.length);
	check_single_gzip_member(gz_path);
	blob_free(&raw);
	blob_free(&unzipped);
	scratch_free(&scratch);
}
END_TEST

/* Writes until the disk-full error shows; every later call says the same. */
static void fill_until_error(struct legion_prof *prof)
{
	uint64_t cpu, op;
	struct legion_prof_task task;
	int err = 0;

	ck_assert_int_eq(legion_prof_proc_desc(prof, LEGION_PROF_PROC_CPU, NULL, &cpu), 0);
	for (int i = 0; i < 2000000 && !err; i++) {
		err = legion_prof_new_op(prof, &op);
		if (err)
			break;
		task = (struct legion_prof_task){ .op_id = op,
						  .proc_id = cpu,
						  .start = (uint64_t)i,
						  .stop = (uint64_t)i * 7919 };
		err = legion_prof_task_info(prof, &task, NULL, 0);
		if (!err && i % 4096 == 0)
			err = legion_prof_flush(prof);
	}
	ck_assert_int_eq(err, -ENOSPC);
	ck_assert_int_eq(legion_prof_new_op(prof, &op), -ENOSPC);
	ck_assert_int_eq(legion_prof_task_kind(prof, 1, "x"), -ENOSPC);
	ck_assert_int_eq(legion_prof_flush(prof), -ENOSPC);
	ck_assert_int_eq(legion_prof_close(prof), -ENOSPC);
}

START_TEST(test_disk_full)
{
	struct legion_prof_options options = fixed_options;
	struct legion_prof *prof;
	int fd;

	if (access("/dev/full", W_OK))
		SKIP_TEST("no /dev/full");
	/* raw: the header is written at open, so open says it */
	ck_assert_int_eq(legion_prof_open(&prof, "/dev/full", &options), -ENOSPC);
	fd = open("/dev/full", O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(legion_prof_fdopen(&prof, fd, &options), -ENOSPC);
	ck_assert_int_ne(fcntl(fd, F_GETFD), -1); /* failure leaves the fd open */
	close(fd);
	/* gzip: zlib buffers, the error shows later, and sticks */
	options.raw = false;
	ck_assert_int_eq(legion_prof_open(&prof, "/dev/full", &options), 0);
	fill_until_error(prof);
}
END_TEST

START_TEST(test_sample_decodes)
{
	const char *sample = shared_legion_file("sample_v1008_node0.gz");
	struct profile *checked;
	struct blob file;

	if (access(sample, R_OK))
		SKIP_TEST("%s is absent", sample);
	ck_assert_int_eq(slurp(sample, true, &file), 0);
	checked = read_profile(&file, LEGION_PROF_VERSION, false);
	ck_assert_msg(!checked->error[0], "the sample fails the test's reader: %s", checked->error);
	ck_assert_uint_gt(checked->counts[TASK_INFO], 0);
	ck_assert_uint_gt(checked->counts[GPU_TASK_INFO], 0);
	ck_assert_uint_gt(checked->counts[APPLICATION_CALL_INFO], 0);
	profile_free(checked);
	blob_free(&file);
}
END_TEST

/* A small deterministic generator (xorshift64*), so failures replay. */
static uint64_t next_random(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545f4914f6cdd1dULL;
}

static uint64_t random_time(uint64_t *state)
{
	switch (next_random(state) % 4) {
	case 0:
		return next_random(state);
	case 1:
		return UINT64_MAX - next_random(state) % 4;
	default:
		return next_random(state) % 100000;
	}
}

/* Any bytes but NUL, sometimes long. */
static const char *random_text(uint64_t *state, char *buffer, size_t size)
{
	size_t length = next_random(state) % (next_random(state) % 8 ? 64 : size - 1);

	for (size_t i = 0; i < length; i++)
		buffer[i] = (char)(next_random(state) % 255 + 1);
	buffer[length] = '\0';
	return buffer;
}

static uint64_t pick(uint64_t *state, const uint64_t *ids, size_t count)
{
	uint64_t r = next_random(state);

	if (!count || r % 10 == 0)
		return r % 3 ? next_random(state) : 0; /* sometimes not an id of this file */
	return ids[r / 10 % count];
}

static void random_task(uint64_t *state, const uint64_t ids[][256], const size_t *counts,
			struct legion_prof_task *task)
{
	*task = (struct legion_prof_task){
		.op_id = pick(state, ids[0], counts[0]),
		.task_id = (uint32_t)(next_random(state) % 6),
		.variant_id = (uint32_t)(next_random(state) % 6),
		.proc_id = pick(state, ids[2], counts[2]),
		.create = random_time(state),
		.ready = random_time(state),
		.start = random_time(state),
		.stop = random_time(state),
		.gpu_start = random_time(state),
		.gpu_stop = random_time(state),
		.creator = next_random(state) % 2 ? 0 : pick(state, ids[1], counts[1]),
		.fevent = next_random(state) % 2 ? 0 : pick(state, ids[1], counts[1]),
	};
}

/* Random calls with random ids, times and bytes: the file stays valid. */
START_TEST(test_random_calls_stay_valid)
{
	enum { OPS, EVENTS, PROCS, PROVENANCES_, ID_KINDS };
	static uint64_t ids[ID_KINDS][256];
	struct legion_prof_span *spans[4] = { 0 };
	struct legion_prof_options options = fixed_options;
	struct scratch scratch = { 0 };
	const char *path = scratch_path(&scratch, "random");
	uint64_t state = 0x9e3779b97f4a7c15ULL + (uint64_t)_i, id;
	size_t counts[ID_KINDS] = { 0 };
	struct legion_prof_wait waits[3];
	struct legion_prof_meta_task meta;
	struct legion_prof_task task;
	struct legion_prof *prof;
	static char text[9000];
	struct blob file;
	int err = 0, s;

	options.raw = _i % 2;
	options.node_id = (uint32_t)_i % 3;
	options.num_nodes = 3;
	ck_assert_int_eq(legion_prof_open(&prof, path, &options), 0);
	for (int step = 0; step < 4000; step++) {
		uint64_t r = next_random(&state);

		s = (int)(next_random(&state) % 4);
		switch (r % 16) {
		case 0:
			err = legion_prof_new_op(prof, &id);
			if (!err && counts[OPS] < 256)
				ids[OPS][counts[OPS]++] = id;
			break;
		case 1:
			err = legion_prof_new_event(prof, &id);
			if (!err && counts[EVENTS] < 256)
				ids[EVENTS][counts[EVENTS]++] = id;
			break;
		case 2:
			err = legion_prof_proc_desc(prof, (enum legion_prof_proc_kind)(r / 16 % 10),
						    NULL, &id);
			if (!err && counts[PROCS] < 256)
				ids[PROCS][counts[PROCS]++] = id;
			break;
		case 3:
			err = legion_prof_provenance(prof, random_text(&state, text, sizeof(text)),
						     &id);
			if (!err && counts[PROVENANCES_] < 256)
				ids[PROVENANCES_][counts[PROVENANCES_]++] = id;
			break;
		case 4:
			err = legion_prof_operation_instance(
				prof, pick(&state, ids[OPS], counts[OPS]),
				r / 16 % 3 ? LEGION_PROF_NO_PARENT
					   : pick(&state, ids[OPS], counts[OPS]),
				(uint32_t)(r / 64 % 50),
				pick(&state, ids[PROVENANCES_], counts[PROVENANCES_]));
			break;
		case 5:
		case 6:
			random_task(&state, ids, counts, &task);
			for (int w = 0; w < 3; w++)
				waits[w] = (struct legion_prof_wait){
					random_time(&state), random_time(&state),
					random_time(&state),
					r % 3 ? 0 : pick(&state, ids[EVENTS], counts[EVENTS])
				};
			if (r % 16 == 5)
				err = legion_prof_task_info(prof, &task, waits, r / 16 % 4);
			else
				err = legion_prof_gpu_task_info(prof, &task, waits, r / 16 % 4);
			break;
		case 7:
			random_task(&state, ids, counts, &task);
			meta = (struct legion_prof_meta_task){
				task.op_id, task.task_id, task.proc_id, task.create, task.ready,
				task.start, task.stop,	  task.creator, task.fevent,
			};
			err = legion_prof_meta_info(prof, &meta);
			break;
		case 8:
			if (spans[s])
				break;
			random_task(&state, ids, counts, &task);
			err = legion_prof_span_begin(prof, &task, &spans[s]);
			if (err)
				spans[s] = NULL;
			break;
		case 9:
		case 10:
			if (spans[s])
				err = legion_prof_range_begin(spans[s], random_time(&state));
			break;
		case 11:
		case 12:
			if (spans[s])
				err = legion_prof_range_end(spans[s],
							    random_text(&state, text, sizeof(text)),
							    random_time(&state));
			break;
		case 13:
			if (spans[s])
				err = legion_prof_span_end(spans[s], random_time(&state));
			spans[s] = NULL;
			break;
		case 14:
			err = legion_prof_task_kind(prof, (uint32_t)(r / 16 % 6),
						    random_text(&state, text, sizeof(text)));
			if (!err)
				err = legion_prof_task_variant(
					prof, (uint32_t)(r / 16 % 6), (uint32_t)(r / 128 % 6),
					random_text(&state, text, sizeof(text)));
			break;
		default:
			err = r / 16 % 2
				      ? legion_prof_op_desc(prof, (uint32_t)(r / 32 % 50),
							    random_text(&state, text, sizeof(text)))
				      : legion_prof_meta_desc(
						prof, (uint32_t)(r / 32 % 50),
						random_text(&state, text, sizeof(text)));
			break;
		}
		/* refusals are fine, I/O errors are not */
		ck_assert_msg(err == 0 || err == -EINVAL || err == -EEXIST || err == -ERANGE,
			      "step %d: %d", step, err);
	}
	ck_assert_int_eq(legion_prof_close(prof), 0); /* ends the spans still open */
	ck_assert_int_eq(slurp(path, !options.raw, &file), 0);
	ck_assert_valid(&file, LEGION_PROF_VERSION, true);
	blob_free(&file);
	scratch_free(&scratch);
}
END_TEST

/* The reader must catch what §3.4 lists, or its passing means little. */
START_TEST(test_reader_catches_defects)
{
	struct scratch scratch = { 0 };
	struct profile *checked;
	struct blob file;
	size_t at;

	small_profile_file(scratch_path(&scratch, "defects"), &plain_strings, true,
			   LEGION_PROF_VERSION, &file);
	/* a truncated last record */
	file.length--;
	checked = read_profile(&file, LEGION_PROF_VERSION, true);
	ck_assert_ptr_nonnull(strstr(checked->error, "truncated"));
	profile_free(checked);
	file.length++;
	/* the wrong version */
	checked = read_profile(&file, LEGION_PROF_VERSION_1007, true);
	ck_assert_ptr_nonnull(strstr(checked->error, "version"));
	profile_free(checked);
	/* invalid UTF-8 in a string */
	at = (size_t)((unsigned char *)memmem(file.data, file.length, "python main", 11) -
		      file.data);
	file.data[at] = 0xff;
	checked = read_profile(&file, LEGION_PROF_VERSION, true);
	ck_assert_ptr_nonnull(strstr(checked->error, "UTF-8"));
	profile_free(checked);
	file.data[at] = '$';
	checked = read_profile(&file, LEGION_PROF_VERSION, true);
	ck_assert_ptr_nonnull(strstr(checked->error, "forbidden"));
	profile_free(checked);
	blob_free(&file);
	scratch_free(&scratch);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("legion_prof");
	TCase *tc = tcase_create("writer");
	SRunner *runner;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_preamble_1008_is_legions);
	tcase_add_test(tc, test_records_byte_for_byte);
	tcase_add_test(tc, test_version_1007);
	tcase_add_test(tc, test_ids_carry_the_node);
	tcase_add_test(tc, test_small_profile_is_valid);
	tcase_add_test(tc, test_hostile_strings);
	tcase_add_test(tc, test_sanitize);
	tcase_add_test(tc, test_json_escape_and_provenance);
	tcase_add_test(tc, test_invariants_are_kept);
	tcase_add_test(tc, test_empty_profile_is_valid);
	tcase_add_test(tc, test_gzip_equals_raw);
	tcase_add_test(tc, test_disk_full);
	tcase_add_test(tc, test_sample_decodes);
	tcase_add_test(tc, test_reader_catches_defects);
	tcase_add_loop_test(tc, test_random_calls_stay_valid, 0, 8);
	suite_add_tcase(suite, tc);

	runner = srunner_create(suite);
	srunner_run_all(runner, CK_NORMAL);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? 1 : 0;
}
