// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The legacy viewer's data files (see legion_legacy.h). Each processor is
 * a lane (a GPU two: its "Device" row of kernels and its "Host" row of
 * tasks); each lane's entries are stacked into levels in time order, the
 * lowest free level first; its rows are written top level first, a task
 * that waited cut into running, "(waiting)" and "(ready)" pieces.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "legion_colour.h"
#include "legion_legacy.h"

enum lane_device { LANE_CPU, LANE_DEVICE, LANE_HOST };

struct entry {
	const struct legion_task *task;
	const struct legion_summary *file;
	bool kernel; /* a GPU task's kernel, on the Device row */
	uint64_t start, stop, ready;
	unsigned int level;
	uint64_t prof_uid;
};

struct lane {
	uint64_t proc_id;
	int kind;
	enum lane_device device;
	struct entry *entries; /* in record order */
	size_t count;
	unsigned int max_levels;
	/* utilization: the times the lane turns busy (up) or idle */
	struct util_point *busy;
	size_t busy_count;
};

struct util_point {
	uint64_t time;
	bool first;
	uint64_t secondary;
	size_t order;
};

struct legacy {
	const char *dir;
	const struct legion_summary *files;
	size_t file_count;
	struct legion_colours colours;
	struct lane *lanes;
	size_t lane_count;
	uint64_t last_time;
	char *why;
	size_t why_size;
};

static int fail(struct legacy *l, const char *format, ...)
{
	va_list args;

	va_start(args, format);
	vsnprintf(l->why, l->why_size, format, args);
	va_end(args);
	return -1;
}

static const char *kind_name(int kind)
{
	static const char *const names[] = {
		[1] = "GPU",	   [2] = "CPU",	    [3] = "Utility", [4] = "IO",
		[5] = "ProcGroup", [6] = "ProcSet", [7] = "OpenMP",  [8] = "Python"
	};

	return kind > 0 && kind <= 8 ? names[kind] : "Unknown";
}

static const char *device_suffix(enum lane_device device)
{
	return device == LANE_DEVICE ? " Device" : device == LANE_HOST ? " Host" : "";
}

static uint32_t node_of(uint64_t proc_id)
{
	return (uint32_t)((proc_id >> 40) & 0xffff);
}

/* ---- TSV, as the csv crate writes it (quotes only where needed) ------------------------ */

static void put_field(FILE *f, const char *text, bool last)
{
	if (strpbrk(text, "\t\"\r\n")) {
		fputc('"', f);
		for (const char *c = text; *c; c++) {
			if (*c == '"')
				fputc('"', f);
			fputc(*c, f);
		}
		fputc('"', f);
	} else {
		fputs(text, f);
	}
	fputc(last ? '\n' : '\t', f);
}

/* Legion Prof's Timestamp display: microseconds with three decimals. */
static void format_time(char *out, size_t size, uint64_t ns)
{
	snprintf(out, size, "%llu.%03llu", (unsigned long long)(ns / 1000),
		 (unsigned long long)(ns % 1000));
}

static FILE *create_file(struct legacy *l, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", l->dir, name);
	f = fopen(path, "wx");
	if (!f)
		fail(l, "cannot create %s: %s", path, strerror(errno));
	return f;
}

static int close_file(struct legacy *l, FILE *f, const char *name)
{
	if (ferror(f) | fclose(f))
		return fail(l, "cannot write %s/%s", l->dir, name);
	return 0;
}

/* ---- names and colours ------------------------------------------------------------------------
 */

/* state.rs ProcEntry::name for a task and a GPU kernel. */
static void entry_title(const struct entry *e, char *out, size_t size)
{
	const struct legion_task *t = e->task;
	const char *task = t->task_name, *variant = t->variant_name ? t->variant_name : "";
	const char *prefix = e->kernel ? "GPU Kernel(s) for " : "";

	if (!task)
		snprintf(out, size, "%s%s", prefix, variant);
	else if (strcmp(task, variant))
		snprintf(out, size, "%s%s [%s] <%llu>", prefix, task, variant,
			 (unsigned long long)t->op_id);
	else
		snprintf(out, size, "%s%s <%llu>", prefix, task, (unsigned long long)t->op_id);
}

/* state.rs compute_color: the HSV hue at full saturation and value. */
static void hue_colour(double h, char *out, size_t size)
{
	double i = floor(h * 6.0), f = h * 6.0 - i, q = 1.0 - f;
	double rgb[6][3] = { { 1, f, 0 }, { q, 1, 0 }, { 0, 1, f },
			     { 0, q, 1 }, { f, 0, 1 }, { 1, 0, q } };
	const double *c = rgb[(unsigned int)i % 6];

	snprintf(out, size, "#%02x%02x%02x", (unsigned int)floor(c[0] * 255.0),
		 (unsigned int)floor(c[1] * 255.0), (unsigned int)floor(c[2] * 255.0));
}

/* ---- lanes and levels -------------------------------------------------------------------------
 */

static int compare_points(const void *a, const void *b)
{
	const struct util_point *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	if (x->first != y->first)
		return x->first ? -1 : 1;
	if (x->secondary != y->secondary)
		return x->secondary < y->secondary ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int compare_lanes(const void *a, const void *b)
{
	const struct lane *x = a, *y = b;

	if (x->proc_id != y->proc_id)
		return x->proc_id < y->proc_id ? -1 : 1;
	return (int)x->device - (int)y->device;
}

static int add_entry(struct legacy *l, struct lane *lane, struct entry e)
{
	struct entry *grown = realloc(lane->entries, (lane->count + 1) * sizeof(*grown));

	if (!grown)
		return fail(l, "out of memory");
	lane->entries = grown;
	grown[lane->count++] = e;
	if (e.stop > l->last_time)
		l->last_time = e.stop;
	return 0;
}

static int add_lane(struct legacy *l, uint64_t proc_id, int kind, enum lane_device device)
{
	struct lane *grown = realloc(l->lanes, (l->lane_count + 1) * sizeof(*grown));

	if (!grown)
		return fail(l, "out of memory");
	l->lanes = grown;
	grown[l->lane_count++] =
		(struct lane){ .proc_id = proc_id, .kind = kind, .device = device };
	return 0;
}

static int fill_lanes(struct legacy *l)
{
	uint64_t prof_uid = 0;

	for (size_t f = 0; f < l->file_count; f++) {
		const struct legion_summary *s = &l->files[f];

		for (size_t p = 0; p < s->proc_count; p++) {
			bool gpu = s->procs[p].kind == 1;
			size_t first = l->lane_count;

			if (add_lane(l, s->procs[p].id, s->procs[p].kind,
				     gpu ? LANE_DEVICE : LANE_CPU) ||
			    (gpu && add_lane(l, s->procs[p].id, 1, LANE_HOST)))
				return -1;
			for (size_t t = 0; t < s->task_count; t++) {
				const struct legion_task *task = &s->tasks[t];
				struct entry e = { task,       s,	    false, task->start,
						   task->stop, task->ready, 0,	   ++prof_uid };

				if (task->proc_id != s->procs[p].id)
					continue;
				if (add_entry(l, &l->lanes[first + gpu], e))
					return -1;
				if (task->gpu) {
					/* GPUTaskInfo: a start after the stop becomes stop - 1 */
					e.kernel = true;
					e.start = task->gpu_start > task->gpu_stop
							  ? task->gpu_stop - 1
							  : task->gpu_start;
					e.stop = task->gpu_stop;
					e.ready = e.start; /* a call's range has no ready time */
					e.prof_uid = ++prof_uid;
					if (add_entry(l, &l->lanes[first], e))
						return -1;
				}
			}
		}
	}
	qsort(l->lanes, l->lane_count, sizeof(*l->lanes), compare_lanes);
	return 0;
}

/* The waits of a task's op in its file (TaskWaitInfo names the op). */
static size_t task_waits(const struct entry *e, const struct legion_wait **out, size_t max)
{
	size_t n = 0;

	if (e->kernel)
		return 0;
	for (size_t i = 0; i < e->file->wait_count && n < max; i++)
		if (e->file->waits[i].op_id == e->task->op_id)
			out[n++] = &e->file->waits[i];
	return n;
}

#define MAX_WAITS 256

/* state.rs sort_time_range: each entry takes the lowest free level when it starts. */
static int stack_lane(struct legacy *l, struct lane *lane)
{
	size_t n = lane->count * 2, busy = 0, levels_size = lane->count + 1;
	struct util_point *points = calloc(n + 1, sizeof(*points));
	struct util_point *util = NULL;
	bool *taken = calloc(levels_size, sizeof(*taken));
	size_t util_count = 0, depth = 0;
	int err = -1;

	if (!points || !taken)
		goto cleanup;
	for (size_t i = 0; i < lane->count; i++) {
		points[2 * i] = (struct util_point){ lane->entries[i].start, true,
						     UINT64_MAX - lane->entries[i].stop, i };
		points[2 * i + 1] = (struct util_point){ lane->entries[i].stop, false, 0, i };
	}
	qsort(points, n, sizeof(*points), compare_points);
	for (size_t i = 0; i < n; i++) {
		struct entry *e = &lane->entries[points[i].order];
		unsigned int level = 0;

		if (!points[i].first) {
			taken[e->level] = false;
			continue;
		}
		while (level < lane->max_levels && taken[level])
			level++;
		if (level == lane->max_levels)
			lane->max_levels++;
		taken[level] = true;
		e->level = level;
	}

	/* utilization: runs minus waits, then the times the lane turns busy or idle */
	util = calloc(n + lane->count * 2 * MAX_WAITS + 1, sizeof(*util));
	if (!util)
		goto cleanup;
	memcpy(util, points, n * sizeof(*points));
	util_count = n;
	for (size_t i = 0; i < lane->count; i++) {
		const struct legion_wait *waits[MAX_WAITS];
		size_t count = task_waits(&lane->entries[i], waits, MAX_WAITS);

		for (size_t w = 0; w < count; w++) {
			util[util_count++] = (struct util_point){ waits[w]->start, false,
								  UINT64_MAX - waits[w]->end, i };
			util[util_count++] = (struct util_point){ waits[w]->end, true, 0, i };
		}
	}
	qsort(util, util_count, sizeof(*util), compare_points);
	for (size_t i = 0; i < util_count; i++) {
		if (util[i].first ? ++depth == 1 : --depth == 0)
			util[busy++] = util[i];
	}
	lane->busy = util;
	lane->busy_count = busy;
	util = NULL;
	err = 0;
cleanup:
	if (err)
		fail(l, "out of memory");
	free(points);
	free(util);
	free(taken);
	return err;
}

/* ---- the processor files ----------------------------------------------------------------------
 */

static int compare_entry_start(const void *a, const void *b)
{
	const struct entry *x = *(const struct entry *const *)a,
			   *y = *(const struct entry *const *)b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->stop != y->stop)
		return x->stop > y->stop ? -1 : 1;
	return x->prof_uid < y->prof_uid ? -1 : x->prof_uid > y->prof_uid;
}

static void put_row(FILE *f, unsigned int level, uint64_t ready, uint64_t start, uint64_t end,
		    const char *colour, const char *opacity, const char *title,
		    const struct entry *e)
{
	char number[3][32], op[32], initiation[32], uid[32];
	const struct legion_task *t = e->task;

	format_time(number[0], sizeof(number[0]), ready);
	format_time(number[1], sizeof(number[1]), start);
	format_time(number[2], sizeof(number[2]), end);
	snprintf(op, sizeof(op), "%llu", (unsigned long long)t->op_id);
	snprintf(uid, sizeof(uid), "%llu", (unsigned long long)e->prof_uid);
	/* a task's initiation is its op's parent; a kernel has none */
	if (!e->kernel && t->parent_op != UINT64_MAX)
		snprintf(initiation, sizeof(initiation), "%llu", (unsigned long long)t->parent_op);
	else
		initiation[0] = '\0';
	fprintf(f, "%u\t%u\t", level, level);
	put_field(f, number[0], false);
	put_field(f, number[1], false);
	put_field(f, number[2], false);
	put_field(f, colour, false);
	put_field(f, opacity, false);
	put_field(f, title, false);
	put_field(f, initiation, false);
	fputs("\t\t\t\t", f); /* in, out, children, parents */
	put_field(f, uid, false);
	put_field(f, op, false);
	put_field(f, "[]", true);
}

/* visualize.rs Proc::emit_tsv_point: a task that waited is cut at its waits. */
static void put_entry(FILE *f, const struct lane *lane, const struct legacy *l,
		      const struct entry *e)
{
	const struct legion_wait *waits[MAX_WAITS];
	size_t count = task_waits(e, waits, MAX_WAITS);
	unsigned int level = lane->max_levels - e->level;
	char title[1024], piece[1100], colour[16];
	uint64_t start = e->start;

	entry_title(e, title, sizeof(title));
	hue_colour(legion_colour_hue(&l->colours, e->task->task_id, e->task->variant_id), colour,
		   sizeof(colour));
	if (!count) {
		put_row(f, level, e->ready ? e->ready : start, start, e->stop, colour, "1.0", title,
			e);
		return;
	}
	for (size_t w = 0; w < count; w++) {
		put_row(f, level, start, start, waits[w]->start, colour, "1.0", title, e);
		snprintf(piece, sizeof(piece), "%s (waiting)", title);
		put_row(f, level, waits[w]->start, waits[w]->start, waits[w]->ready, colour, "0.15",
			piece, e);
		snprintf(piece, sizeof(piece), "%s (ready)", title);
		put_row(f, level, waits[w]->ready, waits[w]->ready, waits[w]->end, colour, "0.45",
			piece, e);
		if (waits[w]->end > start)
			start = waits[w]->end;
	}
	if (start < e->stop)
		put_row(f, level, start, start, e->stop, colour, "1.0", title, e);
}

static void lane_file_name(const struct lane *lane, char *out, size_t size)
{
	snprintf(out, size, "tsv/Proc_0x%llx%s.tsv", (unsigned long long)lane->proc_id,
		 lane->device == LANE_DEVICE ? "_Device"
		 : lane->device == LANE_HOST ? "_Host"
					     : "");
}

static int write_lane(struct legacy *l, const struct lane *lane)
{
	const struct entry **order = calloc(lane->count + 1, sizeof(*order));
	char name[128];
	FILE *f;

	if (!order)
		return fail(l, "out of memory");
	for (size_t i = 0; i < lane->count; i++)
		order[i] = &lane->entries[i];
	qsort(order, lane->count, sizeof(*order), compare_entry_start);
	lane_file_name(lane, name, sizeof(name));
	f = create_file(l, name);
	if (!f) {
		free(order);
		return -1;
	}
	fputs("level\tlevel_ready\tready\tstart\tend\tcolor\topacity\ttitle\tinitiation\tin\tout\t"
	      "children\tparents\tprof_uid\top_id\tinstances\n",
	      f);
	for (size_t i = 0; i < lane->count; i++)
		put_entry(f, lane, l, order[i]);
	free(order);
	return close_file(l, f, name);
}

/* A processor with no entries is not shown; a GPU's two rows go together. */
static bool lane_shown(const struct legacy *l, size_t i)
{
	const struct lane *lane = &l->lanes[i];

	if (lane->device == LANE_DEVICE)
		return lane->count || (i + 1 < l->lane_count && l->lanes[i + 1].count);
	if (lane->device == LANE_HOST)
		return lane->count || l->lanes[i - 1].count;
	return lane->count;
}

static int write_processors(struct legacy *l, unsigned int *base_level)
{
	FILE *f = create_file(l, "legion_prof_processor.tsv");

	if (!f)
		return -1;
	fputs("full_text\ttext\ttsv\tlevels\n", f);
	*base_level = 0;
	for (size_t i = 0; i < l->lane_count; i++) {
		const struct lane *lane = &l->lanes[i];
		unsigned int levels = lane->max_levels > 1 ? lane->max_levels : 1;
		char full[128], text[128], tsv[128];

		if (!lane_shown(l, i))
			continue;
		snprintf(full, sizeof(full), "%s%s Processor 0x%llx", kind_name(lane->kind),
			 device_suffix(lane->device), (unsigned long long)lane->proc_id);
		snprintf(text, sizeof(text), "%s%s Proc %llu", kind_name(lane->kind),
			 device_suffix(lane->device), (unsigned long long)(lane->proc_id & 0xfff));
		lane_file_name(lane, tsv, sizeof(tsv));
		put_field(f, full, false);
		put_field(f, text, false);
		put_field(f, tsv, false);
		fprintf(f, "%u\n", levels);
		*base_level += levels + 1;
		if (write_lane(l, lane)) {
			fclose(f);
			return -1;
		}
	}
	return close_file(l, f, "legion_prof_processor.tsv");
}

/* ---- operations -------------------------------------------------------------------------------
 */

struct op_row {
	const struct legion_op *op;
	const struct legion_summary *file;
};

static int compare_op_rows(const void *a, const void *b)
{
	const struct op_row *x = a, *y = b;

	return x->op->op_id < y->op->op_id ? -1 : x->op->op_id > y->op->op_id;
}

static const struct entry *op_task(const struct legacy *l, uint64_t op_id,
				   const struct lane **lane_out)
{
	for (size_t i = 0; i < l->lane_count; i++)
		for (size_t k = 0; k < l->lanes[i].count; k++)
			if (!l->lanes[i].entries[k].kernel &&
			    l->lanes[i].entries[k].task->op_id == op_id) {
				*lane_out = &l->lanes[i];
				return &l->lanes[i].entries[k];
			}
	return NULL;
}

/* visualize.rs: legion_prof_ops.tsv, one row per operation in op id order. */
static int write_ops(struct legacy *l)
{
	size_t total = 0, n = 0;
	struct op_row *rows;
	FILE *f;

	for (size_t i = 0; i < l->file_count; i++)
		total += l->files[i].op_count;
	rows = calloc(total + 1, sizeof(*rows));
	if (!rows)
		return fail(l, "out of memory");
	for (size_t i = 0; i < l->file_count; i++)
		for (size_t k = 0; k < l->files[i].op_count; k++)
			rows[n++] = (struct op_row){ &l->files[i].ops[k], &l->files[i] };
	qsort(rows, n, sizeof(*rows), compare_op_rows);
	f = create_file(l, "legion_prof_ops.tsv");
	if (!f) {
		free(rows);
		return -1;
	}
	fputs("op_id\tparent_id\tdesc\tproc\tlevel\tprovenance\n", f);
	for (size_t i = 0; i < n; i++) {
		const struct legion_op *op = rows[i].op;
		const struct lane *lane = NULL;
		const struct entry *task = op_task(l, op->op_id, &lane);
		char id[32], parent[32], desc[1100], proc[128], level[16];

		snprintf(id, sizeof(id), "%llu", (unsigned long long)op->op_id);
		parent[0] = proc[0] = level[0] = '\0';
		if (op->parent_id != UINT64_MAX)
			snprintf(parent, sizeof(parent), "%llu", (unsigned long long)op->parent_id);
		if (task) {
			entry_title(task, desc, sizeof(desc));
			snprintf(proc, sizeof(proc), "%s Processor 0x%llx", kind_name(lane->kind),
				 (unsigned long long)lane->proc_id);
			snprintf(level, sizeof(level), "%u", task->level + 2);
		} else {
			snprintf(desc, sizeof(desc), "Operation <%llu>",
				 (unsigned long long)op->op_id);
		}
		put_field(f, id, false);
		put_field(f, parent, false);
		put_field(f, desc, false);
		put_field(f, proc, false);
		put_field(f, level, false);
		put_field(f, op->provenance ? op->provenance : "", true);
	}
	free(rows);
	return close_file(l, f, "legion_prof_ops.tsv");
}

/* ---- utilization ------------------------------------------------------------------------------
 */

struct group {
	bool all; /* the group of every node (node None) */
	uint32_t node;
	int kind;
	enum lane_device device;
};

/* ProcGroup's order: node (None first), kind (Realm's number), device (Device, Host). */
static int compare_groups(const struct group *x, const struct group *y)
{
	if (x->all != y->all)
		return x->all ? -1 : 1;
	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind - y->kind;
	return (int)x->device - (int)y->device;
}

static bool lane_in_group(const struct lane *lane, const struct group *g)
{
	return (g->all || node_of(lane->proc_id) == g->node) && lane->kind == g->kind &&
	       lane->device == g->device;
}

static void node_key(const struct group *g, char *out, size_t size)
{
	if (g->all)
		snprintf(out, size, "all");
	else
		snprintf(out, size, "%u", g->node);
}

static void group_name(const struct group *g, char *out, size_t size)
{
	char node[16];

	node_key(g, node, sizeof(node));
	snprintf(out, size, "%s (%s%s)", node, kind_name(g->kind), device_suffix(g->device));
}

/* common.rs calculate_proc_utilization_data: busy lanes over the group's processors. */
static int write_group_util(struct legacy *l, const struct group *g)
{
	size_t total = 0, n = 0, procs = 0;
	struct util_point *points;
	char name[160], file[200];
	long count = 0;
	FILE *f;

	for (size_t i = 0; i < l->lane_count; i++) {
		if (!lane_in_group(&l->lanes[i], g))
			continue;
		procs++;
		total += l->lanes[i].busy_count;
	}
	points = calloc(total + 1, sizeof(*points));
	if (!points)
		return fail(l, "out of memory");
	for (size_t i = 0; i < l->lane_count; i++)
		if (lane_in_group(&l->lanes[i], g))
			for (size_t k = 0; k < l->lanes[i].busy_count; k++) {
				points[n] = l->lanes[i].busy[k];
				points[n].order = n;
				n++;
			}
	qsort(points, n, sizeof(*points), compare_points);
	group_name(g, name, sizeof(name));
	snprintf(file, sizeof(file), "tsv/%s_util.tsv", name);
	f = create_file(l, file);
	if (!f) {
		free(points);
		return -1;
	}
	fputs("time\tcount\n0.000\t0.00\n", f);
	for (size_t i = 0; i < n; i++) {
		char time[32];

		count += points[i].first ? 1 : -1;
		if (i + 1 < n && points[i + 1].time == points[i].time)
			continue; /* the last change at one time wins */
		format_time(time, sizeof(time), points[i].time);
		fprintf(f, "%s\t%.2f\n", time, (double)count / (double)procs);
	}
	free(points);
	return close_file(l, f, file);
}

/* json/utils.json: each node's groups, by the node's name in string order ("0", "1", "all"). */
static int write_utils_json(struct legacy *l, const struct group *groups, size_t count,
			    bool multinode)
{
	char keys[64][16], key[16], name[160];
	size_t key_count = 0;
	FILE *f;

	for (size_t i = 0; i < count; i++) {
		size_t at = 0;

		if (groups[i].all && !multinode)
			continue;
		node_key(&groups[i], key, sizeof(key));
		while (at < key_count && strcmp(keys[at], key) < 0)
			at++;
		if (at < key_count && !strcmp(keys[at], key))
			continue;
		memmove(keys[at + 1], keys[at], (key_count - at) * sizeof(keys[0]));
		snprintf(keys[at], sizeof(keys[at]), "%s", key);
		key_count++;
	}
	f = create_file(l, "json/utils.json");
	if (!f)
		return -1;
	fputc('{', f);
	for (size_t k = 0; k < key_count; k++) {
		bool first = true;

		fprintf(f, "%s\"%s\":[", k ? "," : "", keys[k]);
		for (size_t i = 0; i < count; i++) {
			node_key(&groups[i], key, sizeof(key));
			if (strcmp(key, keys[k]))
				continue;
			group_name(&groups[i], name, sizeof(name));
			fprintf(f, "%s\"%s\"", first ? "" : ",", name);
			first = false;
		}
		fputc(']', f);
	}
	fputs("}\n", f);
	return close_file(l, f, "json/utils.json");
}

static int write_utilization(struct legacy *l)
{
	struct group groups[64];
	size_t group_count = 0;
	bool multinode = false;

	for (size_t i = 0; i < l->lane_count; i++) {
		if (!lane_shown(l, i))
			continue;
		if (node_of(l->lanes[i].proc_id) != node_of(l->lanes[0].proc_id))
			multinode = true;
		for (int all = 0; all < 2; all++) {
			struct group g = { all, all ? 0 : node_of(l->lanes[i].proc_id),
					   l->lanes[i].kind, l->lanes[i].device };
			size_t at = 0;

			while (at < group_count && compare_groups(&groups[at], &g) < 0)
				at++;
			if (at < group_count && !compare_groups(&groups[at], &g))
				continue;
			if (group_count == sizeof(groups) / sizeof(groups[0]))
				return fail(l, "more than %zu processor groups", group_count);
			memmove(&groups[at + 1], &groups[at], (group_count - at) * sizeof(*groups));
			groups[at] = g;
			group_count++;
		}
	}
	for (size_t i = 0; i < group_count; i++)
		if (write_group_util(l, &groups[i]))
			return -1;
	return write_utils_json(l, groups, group_count, multinode);
}

/* ---- the whole directory -------------------------------------------------------------------- */

static int write_scale(struct legacy *l, unsigned int base_level)
{
	FILE *f = create_file(l, "json/scale.json");

	if (!f)
		return -1;
	fprintf(f, "{\"start\":0.0,\"end\":%.1f,\"stats_levels\":4,\"max_level\":%u}\n",
		ceil((double)l->last_time / 100.0 * 1.01) / 10.0, base_level + 1);
	if (close_file(l, f, "json/scale.json"))
		return -1;
	f = create_file(l, "json/critical_path.json");
	if (!f)
		return -1;
	fputs("[]", f);
	return close_file(l, f, "json/critical_path.json");
}

int legion_legacy_write(const char *dir, const struct legion_summary *files, size_t count,
			char *why, size_t size)
{
	struct legacy l = {
		.dir = dir, .files = files, .file_count = count, .why = why, .why_size = size
	};
	char path[4096];
	unsigned int base_level = 0;
	int err = -1;

	if (legion_colours_of(files, count, &l.colours)) {
		fail(&l, "the profiles have too few or too many colourable descriptors");
		return -1;
	}
	for (const char *sub = "tsv"; sub; sub = strcmp(sub, "tsv") ? NULL : "json") {
		snprintf(path, sizeof(path), "%s/%s", dir, sub);
		if (mkdir(path, 0755)) {
			fail(&l, "cannot create %s: %s", path, strerror(errno));
			goto cleanup;
		}
	}
	if (fill_lanes(&l))
		goto cleanup;
	for (size_t i = 0; i < l.lane_count; i++)
		if (stack_lane(&l, &l.lanes[i]))
			goto cleanup;
	if (write_processors(&l, &base_level) || write_ops(&l) || write_utilization(&l) ||
	    write_scale(&l, base_level))
		goto cleanup;
	err = 0;
cleanup:
	for (size_t i = 0; i < l.lane_count; i++) {
		free(l.lanes[i].entries);
		free(l.lanes[i].busy);
	}
	free(l.lanes);
	legion_colours_free(&l.colours);
	return err;
}
