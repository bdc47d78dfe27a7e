// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The ground truth table. Issuing threads and processors count into one
 * small hash table under a mutex: the keys are few (op names by depth, task
 * names by variant, ...) and a lock costs far less than the work an
 * operation or a task point does.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <optrace/optrace.h>

#include "demo.h"
#include "truth.h"

#define TRUTH_SLOTS 1024 /* a power of two */
#define TRUTH_MAX_USED (TRUTH_SLOTS * 3 / 4)
#define TRUTH_LINE_MAX 256

struct truth_entry {
	const char *name; /* NULL: a free slot */
	/* gpu records: the root operation's and the task's names; else NULL */
	const char *root;
	const char *task;
	enum truth_kind kind;
	int a;
	int b;
	uint64_t count;
	uint64_t points;
};

static struct truth_entry truth_table[TRUTH_SLOTS];
static unsigned int truth_used;
static bool truth_overflowed;
static pthread_mutex_t truth_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const truth_header = "# optrace-demo ground truth, format 1\n";
static const char *const truth_overflow_note =
	"# truncated: more distinct records than the table holds";

/* FNV-1a over the names, then the small fields. */
static uint32_t hash_name(uint32_t hash, const char *name)
{
	const unsigned char *p;

	for (p = (const unsigned char *)(name ? name : ""); *p; p++)
		hash = (hash ^ *p) * 16777619u;
	return hash;
}

static uint32_t truth_hash(enum truth_kind kind, const char *name, const char *root,
			   const char *task, int a, int b)
{
	uint32_t hash = 2166136261u;

	hash = hash_name(hash, name);
	hash = hash_name(hash, root);
	hash = hash_name(hash, task);
	hash = (hash ^ (uint32_t)kind) * 16777619u;
	hash = (hash ^ (uint32_t)a) * 16777619u;
	hash = (hash ^ (uint32_t)b) * 16777619u;
	return hash;
}

static bool same_name(const char *left, const char *right)
{
	if (left == right)
		return true;
	return left && right && strcmp(left, right) == 0;
}

static bool truth_matches(const struct truth_entry *e, enum truth_kind kind, const char *name,
			  const char *root, const char *task, int a, int b)
{
	return e->kind == kind && e->a == a && e->b == b && same_name(e->name, name) &&
	       same_name(e->root, root) && same_name(e->task, task);
}

static void truth_add(enum truth_kind kind, const char *name, const char *root, const char *task,
		      int a, int b, uint64_t count, uint64_t points)
{
	uint32_t slot;
	struct truth_entry *e;

	if (!name)
		name = "?";
	slot = truth_hash(kind, name, root, task, a, b) & (TRUTH_SLOTS - 1);

	pthread_mutex_lock(&truth_lock);
	for (;;) {
		e = &truth_table[slot];
		if (!e->name || truth_matches(e, kind, name, root, task, a, b))
			break;
		slot = (slot + 1) & (TRUTH_SLOTS - 1);
	}
	if (!e->name) {
		if (truth_used >= TRUTH_MAX_USED) {
			truth_overflowed = true;
			goto unlock;
		}
		*e = (struct truth_entry){
			.name = name, .root = root, .task = task, .kind = kind, .a = a, .b = b
		};
		truth_used++;
	}
	e->count += count;
	e->points += points;
unlock:
	pthread_mutex_unlock(&truth_lock);
}

void truth_count(enum truth_kind kind, const char *name, int a, int b, uint64_t points)
{
	truth_add(kind, name, NULL, NULL, a, b, 1, points);
}

void truth_count_gpu(const char *op_name, const char *root_name, const char *task_name,
		     enum truth_gpu_what what, uint64_t count)
{
	/* Zero counts are left out of the file: no entry for them. */
	if (count)
		truth_add(TRUTH_GPU, op_name, root_name ? root_name : "?",
			  task_name ? task_name : "?", what, 0, count, 0);
}

void demo_truth_reset(void)
{
	pthread_mutex_lock(&truth_lock);
	memset(truth_table, 0, sizeof(truth_table));
	truth_used = 0;
	truth_overflowed = false;
	pthread_mutex_unlock(&truth_lock);
}

static const char *truth_gpu_what_name(int what)
{
	static const char *const names[TRUTH_GPU__COUNT] = {
		[TRUTH_GPU_POINTS] = "points",
		[TRUTH_GPU_KERNELS] = "kernels",
		[TRUTH_GPU_COPIES] = "copies",
		[TRUTH_GPU_MEMSETS] = "memsets",
	};

	return what >= 0 && what < TRUTH_GPU__COUNT ? names[what] : "unknown";
}

static int truth_format(const struct truth_entry *e, char *line, size_t size)
{
	switch (e->kind) {
	case TRUTH_OP:
		return snprintf(line, size, "op %s %d %" PRIu64, e->name, e->a, e->count);
	case TRUTH_MODE:
		return snprintf(line, size, "mode %s %s %s %" PRIu64, e->name,
				optrace_mode_name(e->a), optrace_mode_reason_name(e->b), e->count);
	case TRUTH_FALLBACK:
		return snprintf(line, size, "fallback %s %s %" PRIu64, e->name,
				optrace_fallback_reason_name(e->a), e->count);
	case TRUTH_STATUS:
		return snprintf(line, size, "status %s %s %" PRIu64, e->name,
				optrace_status_name(e->a), e->count);
	case TRUTH_LAUNCH:
		return snprintf(line, size, "launch %s %" PRIu64 " %" PRIu64, e->name, e->count,
				e->points);
	case TRUTH_TASK:
		return snprintf(line, size, "task %s %s %" PRIu64, e->name,
				optrace_variant_name(e->a), e->count);
	case TRUTH_GPU:
		return snprintf(line, size, "gpu %s %s %s %s %" PRIu64, e->name, e->root, e->task,
				truth_gpu_what_name(e->a), e->count);
	case TRUTH_WAIT:
		return snprintf(line, size, "wait %s %" PRIu64, optrace_wait_kind_name(e->a),
				e->count);
	default:
		return snprintf(line, size, "# unknown record");
	}
}

struct truth_line {
	enum truth_kind kind;
	char text[TRUTH_LINE_MAX];
};

/* By kind in the documented order, then in byte order (LC_ALL=C sort). */
static int truth_line_compare(const void *left, const void *right)
{
	const struct truth_line *l = left, *r = right;

	if (l->kind != r->kind)
		return l->kind < r->kind ? -1 : 1;
	return strcmp(l->text, r->text);
}

static int write_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(fd, buf, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int demo_truth_write_header(int fd)
{
	return write_all(fd, truth_header, strlen(truth_header));
}

int demo_truth_write(int fd)
{
	struct truth_line *lines = NULL;
	unsigned int count = 0, i;
	char *buf = NULL;
	size_t size, len = 0;
	bool overflowed;
	long pid = (long)getpid();
	int err;

	pthread_mutex_lock(&truth_lock);
	lines = calloc(truth_used ? truth_used : 1, sizeof(*lines));
	if (lines) {
		for (i = 0; i < TRUTH_SLOTS; i++) {
			if (!truth_table[i].name)
				continue;
			lines[count].kind = truth_table[i].kind;
			truth_format(&truth_table[i], lines[count].text, TRUTH_LINE_MAX);
			count++;
		}
	}
	overflowed = truth_overflowed;
	pthread_mutex_unlock(&truth_lock);
	if (!lines)
		return -ENOMEM;

	qsort(lines, count, sizeof(*lines), truth_line_compare);

	size = (size_t)(count + 3) * (TRUTH_LINE_MAX + 1);
	buf = malloc(size);
	if (!buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	len += (size_t)snprintf(buf + len, size - len, "begin %ld\n", pid);
	if (overflowed)
		len += (size_t)snprintf(buf + len, size - len, "%s\n", truth_overflow_note);
	for (i = 0; i < count; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s\n", lines[i].text);
	len += (size_t)snprintf(buf + len, size - len, "end %ld\n", pid);

	/* One write(2): blocks of several processes appending do not mix. */
	err = write_all(fd, buf, len);
cleanup:
	free(buf);
	free(lines);
	return err;
}
