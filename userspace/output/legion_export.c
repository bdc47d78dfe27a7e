// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Two passes over each capture: the first finds the traced processes and
 * the ranks they announced (a file's node is its rank when the ranks are
 * distinct, else its number), the second feeds the profile model, whose
 * consumer writes the records. Root operations become ranges in the order
 * they began on their thread, once each is complete; helpers wait inside
 * their root's entry, so memory stays bounded by what is in flight.
 *
 * GPU activity arrives at its launch, while the task run that launched it
 * is still open: that run's op id and fevent are handed out then, so the
 * kernel's record can name them before the run's own record is written. A
 * GPU file alone has no first pass: its processes are those of its activity.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <optrace/gpu.h>

#include "output/legion_export.h"
#include "output/legion_prof.h"
#include "common/outfile.h"
#include "model/replay.h"
#include "output/op_title.h"

#define MAIN_TASK_ID 1
#define MAX_PROCESSES 4096

struct helper {
	uint64_t begin_ns;
	uint64_t end_ns;
	uint32_t depth;
	char *title;
};

/* A root operation, from its begin until it is written. */
struct root_entry {
	uint64_t op;
	bool done;
	uint64_t begin_ns;
	uint64_t end_ns;
	char *title;
	struct helper *helpers;
	size_t helper_count;
};

struct issuer {
	uint64_t proc;
	uint64_t op;	 /* the top-level task's op id */
	uint64_t fevent; /* and its fevent: the creator of what the thread launches */
	struct legion_prof_span *span;
	struct root_entry **queue; /* in begin order */
	size_t head;
	size_t count;
	size_t capacity;
};

struct worker {
	uint64_t proc;
	int variant;
	/* The run that launched GPU activity: its op id and fevent, given out early. */
	uint64_t run_task;
	uint32_t run_point;
	uint64_t run_begin_ns;
	uint64_t run_op; /* 0: none */
	uint64_t run_fevent;
};

/*
 * Task points of one kind of operation share one provenance: remembered by
 * what it says, so that it is built and written once, not once per point.
 */
#define PROVENANCE_CACHE 256

struct provenance_key {
	uint64_t op_name;
	uint64_t root_name;
	uint64_t callsite;
	int mode;
	int reason;
	int fallback;
	int variant;
};

struct provenance_cache_entry {
	struct provenance_key key;
	uint64_t id; /* 0: empty */
};

struct process {
	struct provenance_cache_entry provenances[PROVENANCE_CACHE];
	uint32_t tgid;
	int rank;
	uint32_t node;
	struct legion_prof *prof;
	struct out_file out; /* prof_<node>.gz, written under a temporary name */
	bool out_open;
	struct idmap issuers;	/* tid -> struct issuer */
	struct idmap workers;	/* tid -> struct worker */
	struct idmap tasks;	/* task name address -> task id */
	struct idmap roots;	/* root op id -> struct root_entry */
	struct idmap gpus;	/* CUDA device id -> its GPU processor id */
	struct idmap gpu_tasks; /* (activity kind, name id or copy kind) -> task id */
	uint32_t next_task_id;
	uint8_t variants_declared[MAX_PROCESSES / 8];
};

struct exporter {
	const struct legion_export_options *options;
	const struct capture_header *header;
	struct process *processes;
	size_t process_count;
	struct idmap by_tgid; /* tgid -> process index + 1 */
	struct idmap ranks;   /* tgid -> the rank it announced + 1 */
	uint64_t gpu_untimed; /* GPU activities CUPTI gave no times for: not drawn */
	bool made_directory;  /* removed again if the export fails */
	int error;
};

static uint64_t since_zero(const struct exporter *exporter, uint64_t ns)
{
	return ns > exporter->header->monotonic_ns ? ns - exporter->header->monotonic_ns : 0;
}

static void note_error(struct exporter *exporter, int err)
{
	if (err && !exporter->error)
		exporter->error = err;
}

/* ---- pass 1: the processes, their ranks, their nodes ---- */

static struct process *process_of(struct exporter *exporter, uint32_t tgid, bool add)
{
	uintptr_t index = (uintptr_t)idmap_get(&exporter->by_tgid, tgid, 0);
	struct process *grown;

	if (index)
		return &exporter->processes[index - 1];
	if (!add || exporter->process_count == MAX_PROCESSES)
		return NULL;
	grown = realloc(exporter->processes, (exporter->process_count + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	exporter->processes = grown;
	memset(&grown[exporter->process_count], 0, sizeof(*grown));
	grown[exporter->process_count].tgid = tgid;
	grown[exporter->process_count].rank = -1;
	exporter->process_count++;
	if (idmap_put(&exporter->by_tgid, tgid, 0, (void *)(uintptr_t)exporter->process_count))
		return NULL;
	return &exporter->processes[exporter->process_count - 1];
}

static int scan(struct exporter *exporter, const char *path)
{
	struct capture_reader *reader;
	struct capture_record record;
	char why[256];
	int err;

	err = capture_reader_open(&reader, path, why, sizeof(why));
	if (err) {
		fprintf(stderr, "optrace: %s\n", why);
		return err;
	}
	while ((err = capture_next(reader, &record)) > 0) {
		const struct record_event *event = record.data;
		int rank;

		if (record.size < sizeof(*event) || event->type == RECORD_STRING)
			continue;
		if (event->type != RECORD_RT_INIT) {
			process_of(exporter, event->tgid, true);
			continue;
		}
		/* A process announces its rank before its first operation. */
		rank = (int)(int64_t)event->args[1];
		if (rank < 0)
			idmap_remove(&exporter->ranks, event->tgid, 0);
		else if (idmap_put(&exporter->ranks, event->tgid, 0, (void *)((uintptr_t)rank + 1)))
			break; /* err is 1: -ENOMEM below */
	}
	capture_reader_close(reader);
	for (size_t i = 0; i < exporter->process_count; i++) {
		struct process *process = &exporter->processes[i];
		uintptr_t rank = (uintptr_t)idmap_get(&exporter->ranks, process->tgid, 0);

		process->rank = rank ? (int)(rank - 1) : -1;
	}
	return err > 0 ? -ENOMEM : err;
}

/* GPU activity added from a GPU file: the processes it ran for. */
static void scan_gpu(struct exporter *exporter, const struct gpu_index *gpu)
{
	for (size_t i = 0; i < gpu->activity_count; i++)
		process_of(exporter, gpu->activities[i].tgid, true);
}

/* Node = rank when the ranks are distinct and fit, else order of appearance. */
static void assign_nodes(struct exporter *exporter)
{
	size_t count = exporter->process_count;
	bool by_rank = true;

	for (size_t i = 0; i < count && by_rank; i++) {
		int rank = exporter->processes[i].rank;

		by_rank = rank >= 0 && (size_t)rank < count;
		for (size_t j = 0; j < i && by_rank; j++)
			by_rank = exporter->processes[j].rank != rank;
	}
	for (size_t i = 0; i < count; i++)
		exporter->processes[i].node =
			by_rank ? (uint32_t)exporter->processes[i].rank : (uint32_t)i;
}

static void log_name(char *name, size_t size, uint32_t node)
{
	snprintf(name, size, "prof_%u.gz", node);
}

static int open_files(struct exporter *exporter)
{
	const struct legion_export_options *options = exporter->options;
	struct stat st;

	if (!mkdir(options->directory, 0755)) {
		exporter->made_directory = true;
	} else if (errno != EEXIST) {
		fprintf(stderr, "optrace: cannot create %s: %s\n", options->directory,
			strerror(errno));
		return -errno;
	} else if (stat(options->directory, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr,
			"optrace: %s is not a directory: --legion writes one, give its name "
			"with -o\n",
			options->directory);
		return -ENOTDIR;
	}
	for (size_t i = 0; i < exporter->process_count; i++) {
		struct process *process = &exporter->processes[i];
		struct legion_prof_options prof_options = {
			.version = options->version,
			.node_id = process->node,
			.num_nodes = (uint32_t)exporter->process_count,
			.hostname = exporter->header->hostname,
			.process_id = process->tgid,
			.zero_time_ns = (int64_t)exporter->header->realtime_ns,
		};
		char path[4096], name[32];
		int err, fd;

		log_name(name, sizeof(name), process->node);
		snprintf(path, sizeof(path), "%s/%s", options->directory, name);
		fd = out_file_open(&process->out, path, 0, options->inputs, options->input_count);
		if (fd < 0)
			return fd;
		process->out_open = true;
		err = legion_prof_fdopen(&process->prof, fd, &prof_options);
		if (err) {
			close(fd);
			fprintf(stderr, "optrace: cannot write %s: %s\n", path, strerror(-err));
			return err;
		}
		legion_prof_task_kind(process->prof, MAIN_TASK_ID, "main thread");
		legion_prof_task_variant(process->prof, MAIN_TASK_ID, 1,
					 options->python ? "python" : "cpu");
		process->next_task_id = MAIN_TASK_ID + 1;
	}
	return 0;
}

/* prof_<digits>.gz: the name of a log of optrace's (and of Legion's own). */
static bool is_log_name(const char *name)
{
	size_t digits;

	if (strncmp(name, "prof_", 5))
		return false;
	digits = strspn(name + 5, "0123456789");
	return digits && !strcmp(name + 5 + digits, ".gz");
}

static bool written(const struct exporter *exporter, const char *name)
{
	char mine[32];

	for (size_t i = 0; i < exporter->process_count; i++) {
		log_name(mine, sizeof(mine), exporter->processes[i].node);
		if (!strcmp(name, mine))
			return true;
	}
	return false;
}

/*
 * The logs an earlier export left in the directory and this one did not
 * write (it had more processes): legion_prof DIR/prof_*.gz would mix them
 * with this run's. Only files named as optrace names its logs go, never an
 * input of this export.
 */
static int remove_stale_logs(const struct exporter *exporter)
{
	const char *directory = exporter->options->directory;
	char path[4096], example[300] = "";
	struct dirent *entry;
	int removed = 0, err = 0;
	DIR *dir;

	dir = opendir(directory);
	if (!dir) {
		err = -errno;
		fprintf(stderr, "optrace: cannot read %s: %s\n", directory, strerror(errno));
		return err;
	}
	while ((entry = readdir(dir))) {
		struct stat st;

		if (!is_log_name(entry->d_name) || written(exporter, entry->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", directory, entry->d_name);
		if (lstat(path, &st) || !S_ISREG(st.st_mode) ||
		    out_file_is_input(path, exporter->options->inputs,
				      exporter->options->input_count))
			continue;
		if (unlink(path)) {
			err = err ?: -errno;
			fprintf(stderr,
				"optrace: cannot remove %s, an earlier export's: %s; legion_prof "
				"%s/prof_*.gz would read it with this export's logs\n",
				path, strerror(errno), directory);
			continue;
		}
		if (!removed++)
			snprintf(example, sizeof(example), "%s", entry->d_name);
	}
	closedir(dir);
	if (removed)
		fprintf(stderr,
			"optrace: removed %d log%s an earlier export left in %s (%s%s), which "
			"this export has no process for\n",
			removed, removed == 1 ? "" : "s", directory, example,
			removed > 1 ? ", ..." : "");
	return err;
}

/* After the logs are closed: all renamed into place, or none and the directory as it was. */
static int settle_files(struct exporter *exporter, int err)
{
	for (size_t i = 0; i < exporter->process_count; i++) {
		struct process *process = &exporter->processes[i];

		if (!process->out_open)
			continue;
		if (err)
			out_file_discard(&process->out);
		else
			err = out_file_commit(&process->out);
		process->out_open = false;
	}
	if (err) {
		if (exporter->made_directory)
			rmdir(exporter->options->directory);
		return err;
	}
	return remove_stale_logs(exporter);
}

/* ---- pass 2: the records ---- */

static struct issuer *issuer_of(struct exporter *exporter, struct process *process, uint32_t tid)
{
	struct issuer *issuer = idmap_get(&process->issuers, tid, 0);
	struct legion_prof_task task = { .task_id = MAIN_TASK_ID, .variant_id = 1 };
	char text[64];
	uint64_t provenance = 0;
	int err;

	if (issuer)
		return issuer;
	issuer = calloc(1, sizeof(*issuer));
	if (!issuer || idmap_put(&process->issuers, tid, 0, issuer)) {
		free(issuer);
		note_error(exporter, -ENOMEM);
		return NULL;
	}
	err = legion_prof_proc_desc(process->prof,
				    exporter->options->python ? LEGION_PROF_PROC_PYTHON
							      : LEGION_PROF_PROC_CPU,
				    NULL, &issuer->proc);
	err = err ?: legion_prof_new_op(process->prof, &issuer->op);
	snprintf(text, sizeof(text), "thread %u of process %u", tid, process->tgid);
	err = err ?: legion_prof_provenance(process->prof, text, &provenance);
	err = err
		      ?: legion_prof_operation_instance(process->prof, issuer->op,
							LEGION_PROF_NO_PARENT,
							LEGION_PROF_OP_KIND_TASK, provenance);
	task.op_id = issuer->op;
	task.proc_id = issuer->proc;
	/* It spans the recording: from time zero to the end. */
	err = err ?: legion_prof_span_begin(process->prof, &task, &issuer->span);
	issuer->fevent = task.fevent;
	note_error(exporter, err);
	return issuer;
}

static void on_op_begin(void *ctx, const struct profile *profile, const struct profile_op *op)
{
	struct exporter *exporter = ctx;
	struct process *process = process_of(exporter, op->tgid, false);
	struct issuer *issuer;
	struct root_entry *entry;

	(void)profile;
	if (!process || op->depth != 0)
		return;
	issuer = issuer_of(exporter, process, op->tid);
	entry = calloc(1, sizeof(*entry));
	if (!issuer || !entry) {
		free(entry);
		note_error(exporter, -ENOMEM);
		return;
	}
	if (issuer->count == issuer->capacity) {
		size_t capacity = issuer->capacity ? issuer->capacity * 2 : 16;
		struct root_entry **queue = realloc(issuer->queue, capacity * sizeof(*queue));

		if (!queue) {
			free(entry);
			note_error(exporter, -ENOMEM);
			return;
		}
		issuer->queue = queue;
		issuer->capacity = capacity;
	}
	entry->op = op->id;
	entry->begin_ns = op->begin_ns;
	issuer->queue[issuer->count++] = entry;
	idmap_put(&process->roots, 0, op->id, entry);
}

static int compare_helpers(const void *a, const void *b)
{
	const struct helper *x = a, *y = b;

	if (x->begin_ns != y->begin_ns)
		return x->begin_ns < y->begin_ns ? -1 : 1;
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

/* The root's range, its helpers' nested inside, in the order they began. */
static void write_root(struct exporter *exporter, struct issuer *issuer, struct root_entry *entry)
{
	struct helper *stack[64];
	int depth = 0;

	legion_prof_range_begin(issuer->span, since_zero(exporter, entry->begin_ns));
	if (entry->helper_count) /* helpers is NULL without any: qsort() must not get NULL */
		qsort(entry->helpers, entry->helper_count, sizeof(*entry->helpers),
		      compare_helpers);
	for (size_t i = 0; i < entry->helper_count; i++) {
		struct helper *helper = &entry->helpers[i];

		while (depth && stack[depth - 1]->end_ns <= helper->begin_ns) {
			depth--;
			legion_prof_range_end(issuer->span, stack[depth]->title,
					      since_zero(exporter, stack[depth]->end_ns));
		}
		if (depth == 64)
			continue;
		legion_prof_range_begin(issuer->span, since_zero(exporter, helper->begin_ns));
		stack[depth++] = helper;
	}
	while (depth--)
		legion_prof_range_end(issuer->span, stack[depth]->title,
				      since_zero(exporter, stack[depth]->end_ns));
	note_error(exporter, legion_prof_range_end(issuer->span, entry->title,
						   since_zero(exporter, entry->end_ns)));
}

static void free_entry(struct root_entry *entry)
{
	for (size_t i = 0; i < entry->helper_count; i++)
		free(entry->helpers[i].title);
	free(entry->helpers);
	free(entry->title);
	free(entry);
}

static void flush_issuer(struct exporter *exporter, struct process *process, struct issuer *issuer)
{
	while (issuer->head < issuer->count && issuer->queue[issuer->head]->done) {
		struct root_entry *entry = issuer->queue[issuer->head++];

		write_root(exporter, issuer, entry);
		idmap_remove(&process->roots, 0, entry->op);
		free_entry(entry);
	}
	if (issuer->head == issuer->count)
		issuer->head = issuer->count = 0;
}

static const struct profile_op *root_of(const struct profile_op *op)
{
	while (op && op->depth > 0)
		op = op->parent;
	return op;
}

static void on_op_done(void *ctx, const struct profile *profile, const struct profile_op *op)
{
	struct exporter *exporter = ctx;
	struct process *process = process_of(exporter, op->tgid, false);
	const struct profile_op *root = root_of(op);
	struct root_entry *entry;
	char title[1024];

	if (!process || !root || (op->depth > 0 && !exporter->options->show_helpers))
		return;
	entry = idmap_get(&process->roots, 0, root->id);
	if (!entry)
		return;
	op_title(profile, op, title, sizeof(title));
	if (op->depth == 0) {
		entry->done = true;
		entry->end_ns = op->end_ns;
		entry->title = strdup(title);
		flush_issuer(exporter, process, idmap_get(&process->issuers, op->tid, 0));
		return;
	}
	if (exporter->options->show_helpers) {
		struct helper *helpers =
			realloc(entry->helpers, (entry->helper_count + 1) * sizeof(*helpers));

		if (!helpers) {
			note_error(exporter, -ENOMEM);
			return;
		}
		entry->helpers = helpers;
		helpers[entry->helper_count++] = (struct helper){
			.begin_ns = op->begin_ns,
			.end_ns = op->end_ns,
			.depth = op->depth,
			.title = strdup(title),
		};
	}
}

static enum legion_prof_proc_kind proc_kind(int variant)
{
	switch (variant) {
	case OPTRACE_VARIANT_OPENMP:
		return LEGION_PROF_PROC_OPENMP;
	case OPTRACE_VARIANT_GPU:
		return LEGION_PROF_PROC_GPU;
	default:
		return LEGION_PROF_PROC_CPU;
	}
}

static uint32_t task_id_of(struct process *process, uint64_t name, const char *text)
{
	uintptr_t id = (uintptr_t)idmap_get(&process->tasks, 0, name);

	if (id)
		return (uint32_t)id;
	id = process->next_task_id++;
	idmap_put(&process->tasks, 0, name, (void *)id);
	legion_prof_task_kind(process->prof, (uint32_t)id, text);
	return (uint32_t)id;
}

/* TaskVariant once per (task, variant), before its first run. */
static void declare_variant(struct process *process, uint32_t task_id, int variant)
{
	size_t bit = (size_t)task_id * OPTRACE_VARIANT__COUNT + (size_t)variant;
	bool tracked = bit < sizeof(process->variants_declared) * 8;

	if (tracked && process->variants_declared[bit / 8] & (1u << bit % 8))
		return;
	if (!legion_prof_task_variant(process->prof, task_id, (uint32_t)variant + 1,
				      optrace_variant_name(variant)) &&
	    tracked)
		process->variants_declared[bit / 8] |= (uint8_t)(1u << bit % 8);
}

static uint64_t hash_provenance(const struct provenance_key *key)
{
	uint64_t h = key->op_name * 31 + key->root_name;

	h = h * 31 + key->callsite;
	h = h * 31 + (uint64_t)(key->mode * 64 + key->reason * 8 + key->fallback);
	h = h * 31 + (uint64_t)key->variant;
	return (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ULL;
}

/*
 * The provenance of a point, or of GPU activity an operation launched
 * (variant -1): which operation launched it, how it ran.
 */
static int provenance_of(struct process *process, const struct profile *profile,
			 const struct profile_op *op, uint64_t op_name, uint64_t root_name,
			 int variant, uint64_t *provenance)
{
	struct provenance_key key = {
		.op_name = op_name,
		.root_name = root_name,
		.callsite = op ? op->callsite : 0,
		.mode = op ? op->mode : PROFILE_MODE_UNSET,
		.reason = op ? op->mode_reason : 0,
		.fallback = op ? op->fallback_reason : 0,
		.variant = variant,
	};
	struct provenance_cache_entry *slot =
		&process->provenances[hash_provenance(&key) % PROVENANCE_CACHE];
	const char *mode = key.mode == PROFILE_MODE_UNSET ? "unknown" : optrace_mode_name(key.mode);
	struct legion_prof_kv pairs[] = {
		{ "op", profile_string(profile, process->tgid, op_name) },
		{ "called", profile_string(profile, process->tgid, root_name) },
		{ "mode", op ? mode : "unknown" },
		{ "reason", op ? optrace_mode_reason_name(key.reason) : "unknown" },
		{ "fallback", optrace_fallback_reason_name(key.fallback) },
		{ "site", profile_string(profile, process->tgid, key.callsite) },
		{ "variant", variant >= 0 ? optrace_variant_name(variant) : NULL },
	};
	size_t count = sizeof(pairs) / sizeof(pairs[0]) - (variant < 0);
	char text[2048];
	int err;

	if (slot->id && !memcmp(&slot->key, &key, sizeof(key))) {
		*provenance = slot->id;
		return 0;
	}
	legion_prof_provenance_json(text, sizeof(text),
				    profile_string(profile, process->tgid, op_name), pairs, count);
	err = legion_prof_provenance(process->prof, text, provenance);
	if (!err) {
		slot->key = key;
		slot->id = *provenance;
	}
	return err;
}

static struct worker *worker_of(struct exporter *exporter, struct process *process, uint32_t tid,
				int variant)
{
	struct worker *worker = idmap_get(&process->workers, tid, 0);

	if (worker)
		return worker;
	worker = calloc(1, sizeof(*worker));
	if (!worker || idmap_put(&process->workers, tid, 0, worker)) {
		free(worker);
		note_error(exporter, -ENOMEM);
		return NULL;
	}
	worker->variant = variant;
	note_error(exporter,
		   legion_prof_proc_desc(process->prof, proc_kind(variant), NULL, &worker->proc));
	return worker;
}

static int run_variant(const struct profile_run *run)
{
	return run->variant >= 0 && run->variant < OPTRACE_VARIANT__COUNT ? run->variant : 0;
}

static bool claimed(const struct worker *worker, const struct profile_run *run)
{
	return worker->run_op && worker->run_task == run->task && worker->run_point == run->point &&
	       worker->run_begin_ns == run->begin_ns;
}

/* The run's own record is not written yet: its op id and fevent, given out now. */
static int claim_run(struct process *process, struct worker *worker, const struct profile_run *run)
{
	int err;

	if (claimed(worker, run))
		return 0;
	err = legion_prof_new_op(process->prof, &worker->run_op);
	err = err ?: legion_prof_new_event(process->prof, &worker->run_fevent);
	if (err) {
		worker->run_op = 0;
		return err;
	}
	worker->run_task = run->task;
	worker->run_point = run->point;
	worker->run_begin_ns = run->begin_ns;
	return 0;
}

static void on_task_run(void *ctx, const struct profile *profile, const struct profile_run *run)
{
	struct exporter *exporter = ctx;
	struct process *process = process_of(exporter, run->tgid, false);
	struct worker *worker;
	struct issuer *issuer = NULL;
	struct legion_prof_task task = { 0 };
	const struct profile_op *op = run->op;
	uint64_t provenance = 0;
	int variant = run_variant(run);
	int err = 0;

	if (!process)
		return;
	worker = worker_of(exporter, process, run->tid, variant);
	if (!worker)
		return;
	task.task_id = task_id_of(process, run->task_name,
				  profile_string(profile, run->tgid, run->task_name));
	task.variant_id = (uint32_t)variant + 1;
	declare_variant(process, task.task_id, variant);
	if (op)
		issuer = idmap_get(&process->issuers, op->tid, 0);

	/* GPU activity it launched already names its op and fevent. */
	if (claimed(worker, run)) {
		task.op_id = worker->run_op;
		task.fevent = worker->run_fevent;
	} else {
		err = legion_prof_new_op(process->prof, &task.op_id);
	}
	worker->run_op = 0;
	err = err
		      ?: provenance_of(process, profile, op, run->op_name, run->root_name, variant,
				       &provenance);
	err = err
		      ?: legion_prof_operation_instance(process->prof, task.op_id,
							issuer ? issuer->op : LEGION_PROF_NO_PARENT,
							LEGION_PROF_OP_KIND_TASK, provenance);
	task.proc_id = worker->proc;
	task.create = since_zero(exporter, run->launch_ns);
	task.ready = task.create;
	task.start = since_zero(exporter, run->begin_ns);
	task.stop = since_zero(exporter, run->end_ns);
	task.creator = 0;
	err = err ?: legion_prof_task_info(process->prof, &task, NULL, 0);
	note_error(exporter, err);
}

/* ---- GPU activity ---- */

/* One GPU processor per CUDA device of a process. */
static int gpu_proc_of(struct process *process, uint32_t device_id, uint64_t *proc)
{
	uintptr_t found = (uintptr_t)idmap_get(&process->gpus, 0, device_id);
	int err;

	if (found) {
		*proc = found;
		return 0;
	}
	err = legion_prof_proc_desc(process->prof, LEGION_PROF_PROC_GPU, NULL, proc);
	if (err)
		return err;
	return idmap_put(&process->gpus, 0, device_id, (void *)(uintptr_t)*proc);
}

/* A task kind per kernel name, copy kind and memset, with its "gpu" variant. */
static uint32_t gpu_task_id_of(struct process *process, const struct profile_gpu *gpu)
{
	const struct gpu_activity *activity = gpu->activity;
	uint64_t key = activity->kind == OPTRACE_GPU_REC_KERNEL	  ? activity->name_id
		       : activity->kind == OPTRACE_GPU_REC_MEMCPY ? activity->copy_kind
								  : 0;
	uintptr_t id = (uintptr_t)idmap_get(&process->gpu_tasks, activity->kind, key);

	if (id)
		return (uint32_t)id;
	id = process->next_task_id++;
	idmap_put(&process->gpu_tasks, activity->kind, key, (void *)id);
	legion_prof_task_kind(process->prof, (uint32_t)id, gpu->name);
	declare_variant(process, (uint32_t)id, OPTRACE_VARIANT_GPU);
	return (uint32_t)id;
}

/* Where the activity came from, when no operation was open at its launch. */
static int outside_provenance(struct process *process, const struct profile_gpu *gpu,
			      uint64_t *provenance)
{
	char tid[32], text[512];
	struct legion_prof_kv pairs[] = {
		{ "op", "none" },
		{ "launched", "outside any operation" },
		{ "thread", tid },
	};

	if (gpu->launch)
		snprintf(tid, sizeof(tid), "%u", gpu->tid);
	else
		snprintf(tid, sizeof(tid), "unknown (launch not captured)");
	legion_prof_provenance_json(text, sizeof(text), "launched outside any operation", pairs,
				    sizeof(pairs) / sizeof(pairs[0]));
	return legion_prof_provenance(process->prof, text, provenance);
}

/*
 * Who launched it: the task run open at its launch (its op is the parent, its
 * fevent the creator, its provenance says which operation), else the
 * operation open on the issuing thread (parent and creator: that thread's
 * top-level task), else nothing but the thread.
 */
static int launcher_of(struct exporter *exporter, struct process *process,
		       const struct profile *profile, const struct profile_gpu *gpu,
		       uint64_t *parent, uint64_t *creator, uint64_t *provenance)
{
	const struct profile_run *run = gpu->run;
	struct issuer *issuer = NULL;
	struct worker *worker;
	int err;

	*parent = LEGION_PROF_NO_PARENT;
	*creator = 0;
	if (run) {
		worker = worker_of(exporter, process, run->tid, run_variant(run));
		if (!worker)
			return -ENOMEM;
		err = claim_run(process, worker, run);
		if (err)
			return err;
		*parent = worker->run_op;
		*creator = worker->run_fevent;
		return provenance_of(process, profile, run->op, run->op_name, run->root_name,
				     run_variant(run), provenance);
	}
	if (gpu->op)
		issuer = idmap_get(&process->issuers, gpu->op->tid, 0);
	else if (gpu->launch)
		issuer = idmap_get(&process->issuers, gpu->tid, 0);
	if (issuer && issuer->span) {
		*parent = issuer->op;
		*creator = issuer->fevent;
	}
	if (gpu->op)
		return provenance_of(process, profile, gpu->op, gpu->op_name, gpu->root_name, -1,
				     provenance);
	return outside_provenance(process, gpu, provenance);
}

/*
 * A kernel, copy or memset: a GPUTaskInfo on its device's processor, the
 * host interval its launch (the API call), the device interval its run. Its
 * own op id (a task record owns one), whose parent is its launcher's.
 */
static void on_gpu(void *ctx, const struct profile *profile, const struct profile_gpu *gpu)
{
	struct exporter *exporter = ctx;
	struct process *process = process_of(exporter, gpu->tgid, false);
	const struct gpu_activity *activity = gpu->activity;
	const struct gpu_launch *launch = gpu->launch;
	struct legion_prof_task task = { 0 };
	uint64_t parent, provenance;
	int err;

	if (!process)
		return;
	if (activity->time_invalid) {
		exporter->gpu_untimed++;
		return;
	}
	err = gpu_proc_of(process, activity->device_id, &task.proc_id);
	err = err
		      ?: launcher_of(exporter, process, profile, gpu, &parent, &task.creator,
				     &provenance);
	err = err ?: legion_prof_new_op(process->prof, &task.op_id);
	err = err
		      ?: legion_prof_operation_instance(process->prof, task.op_id, parent,
							LEGION_PROF_OP_KIND_TASK, provenance);
	if (err) {
		note_error(exporter, err);
		return;
	}
	task.task_id = gpu_task_id_of(process, gpu);
	task.variant_id = OPTRACE_VARIANT_GPU + 1;
	task.gpu_start = since_zero(exporter, activity->start_ns);
	task.gpu_stop = since_zero(exporter, activity->end_ns);
	if (launch && launch->start_ns) {
		task.start = since_zero(exporter, launch->start_ns);
		task.stop = since_zero(exporter, launch->end_ns);
	} else {
		task.start = task.gpu_start;
		task.stop = task.gpu_stop;
	}
	task.create = task.start;
	task.ready = task.start;
	note_error(exporter, legion_prof_gpu_task_info(process->prof, &task, NULL, 0));
}

static void finish(struct exporter *exporter, uint64_t end_ns)
{
	for (size_t i = 0; i < exporter->process_count; i++) {
		struct process *process = &exporter->processes[i];

		for (size_t s = 0; s < process->issuers.capacity; s++) {
			struct issuer *issuer = process->issuers.slots[s].value;

			if (!issuer)
				continue;
			/* Every root op is done once the profile finished. */
			flush_issuer(exporter, process, issuer);
			for (size_t q = issuer->head; q < issuer->count; q++)
				free_entry(issuer->queue[q]);
			if (issuer->span)
				legion_prof_span_end(issuer->span, since_zero(exporter, end_ns));
			free(issuer->queue);
			free(issuer);
		}
		for (size_t s = 0; s < process->workers.capacity; s++)
			free(process->workers.slots[s].value);
		if (process->prof)
			note_error(exporter, legion_prof_close(process->prof));
		idmap_free(&process->issuers);
		idmap_free(&process->workers);
		idmap_free(&process->tasks);
		idmap_free(&process->roots);
		idmap_free(&process->gpus);
		idmap_free(&process->gpu_tasks);
	}
}

static int export_one(const char *path, const struct legion_export_options *options)
{
	struct exporter exporter = { .options = options };
	struct profile_consumer consumer = {
		.ctx = &exporter,
		.op_begin = on_op_begin,
		.op_done = on_op_done,
		.task_run = on_task_run,
		.gpu = on_gpu,
	};
	struct replay replay = { 0 };
	struct profile profile;
	int err;

	profile_init(&profile, &consumer);
	err = replay_open(&replay, path);
	/* A GPU file alone has no events to scan: its activity names the processes. */
	if (!err && replay.reader)
		err = scan(&exporter, path);
	if (!err && options->gpu_file)
		err = replay_add_gpu_file(&replay, options->gpu_file);
	if (err)
		goto cleanup;
	scan_gpu(&exporter, &replay.gpu);
	exporter.header = replay.header;
	if (!exporter.process_count) {
		fprintf(stderr, "optrace: %s holds no operations, tasks or GPU activity\n", path);
		err = -ENODATA;
		goto cleanup;
	}
	assign_nodes(&exporter);
	err = open_files(&exporter);
	err = err ?: replay_run(&replay, &profile);
	finish(&exporter, profile.stats.last_ns);
	err = err ?: exporter.error;
	if (err)
		fprintf(stderr, "optrace: cannot write the Legion Prof logs: %s\n", strerror(-err));
	err = settle_files(&exporter, err);
	if (!err)
		fprintf(stderr,
			"optrace: wrote %zu Legion Prof log%s in %s (open with: "
			"legion_prof %s/prof_*.gz)\n",
			exporter.process_count, exporter.process_count == 1 ? "" : "s",
			options->directory, options->directory);
	if (!err && exporter.gpu_untimed)
		fprintf(stderr,
			"optrace: %" PRIu64 " GPU activit%s without device times not drawn\n",
			exporter.gpu_untimed, exporter.gpu_untimed == 1 ? "y" : "ies");

cleanup:
	profile_free(&profile);
	replay_close(&replay);
	free(exporter.processes);
	idmap_free(&exporter.by_tgid);
	idmap_free(&exporter.ranks);
	return err;
}

int legion_export(char *const *paths, int path_count, const struct legion_export_options *options)
{
	if (path_count != 1) {
		fprintf(stderr, "optrace: --legion exports one capture at a time (its processes "
				"each get a file)\n");
		return -EINVAL;
	}
	return export_one(paths[0], options);
}
