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
 *
 * This file holds the passes, the processes' nodes and log files, and the
 * end of each log; the records come from legion_export_ops.c (operations),
 * legion_export_tasks.c (task runs) and legion_export_gpu.c (GPU activity),
 * which, like this file, find their process and its processors in
 * legion_export_process.c.
 */
#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/diag.h"
#include "output/export_format.h"
#include "output/legion_export.h"
#include "output/legion_prof.h"
#include "common/outfile.h"
#include "model/replay.h"
#include "output/legion_export_internal.h"

/* ---- pass 1: the processes, their ranks, their nodes ---- */

static int scan_record(void *ctx, unsigned int type, const void *record, size_t size)
{
	struct exporter *exporter = ctx;
	const struct record_event *event = record;
	int rank;

	if (size < sizeof(*event) || record_is_metadata(type))
		return 0;
	if (type == RECORD_OP_BEGIN || type == RECORD_TASK_LAUNCH)
		exporter->drawn_estimate++;
	if (type != RECORD_RT_INIT) {
		legion_export_process_of(exporter, event->tgid, true);
		return 0;
	}
	rank = (int)event->rt_init.rank;
	if (rank < 0)
		idmap_remove(&exporter->ranks, event->tgid, 0);
	else if (idmap_put(&exporter->ranks, event->tgid, 0, (void *)((uintptr_t)rank + 1)))
		return -ENOMEM;
	return 0;
}

/* Every process and the rank it announced, before any log is written. */
static int scan(struct exporter *exporter, struct replay *replay)
{
	int err = replay_scan(replay, scan_record, exporter);

	for (size_t i = 0; i < exporter->process_count; i++) {
		struct process *process = &exporter->processes[i];
		uintptr_t rank = (uintptr_t)idmap_get(&exporter->ranks, process->tgid, 0);

		process->rank = rank ? (int)(rank - 1) : -1;
	}
	return err;
}

/* GPU activity added from a GPU file: the processes it ran for. */
static void scan_gpu(struct exporter *exporter, const struct gpu_index *gpu)
{
	for (size_t i = 0; i < gpu->activity_count; i++)
		legion_export_process_of(exporter, gpu->activities[i].tgid, true);
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

/* ---- the logs' descriptors: at most fd_budget held at once ---- */

/* Descriptors in use now, counted up to limit. */
static size_t fds_in_use(rlim_t limit)
{
	size_t used = 0;

	for (rlim_t fd = 0; fd < limit && fd < 65536; fd++)
		used += fcntl((int)fd, F_GETFD) != -1;
	return used;
}

/*
 * How many logs may be held open: what RLIMIT_NOFILE leaves beside the
 * descriptors in use and a few for the reading of the captures and the
 * folder; no bound when there is no limit. A log is written only when
 * zlib's buffer fills, so releasing and reopening the oldest costs little.
 */
static int plan_fds(struct exporter *exporter)
{
	struct rlimit limit;
	/* a few, and a reader of each capture the replay opens again */
	size_t used, spare = 8 + (size_t)exporter->options->input_count;

	if (getrlimit(RLIMIT_NOFILE, &limit) || limit.rlim_cur == RLIM_INFINITY ||
	    limit.rlim_cur > SIZE_MAX / 2) {
		exporter->fd_budget = SIZE_MAX;
		return 0;
	}
	used = fds_in_use(limit.rlim_cur);
	if ((size_t)limit.rlim_cur <= used + spare) {
		diag("%zu file descriptors are open of the %zu allowed: too few are left to write "
		     "the Legion Prof logs; raise the limit (ulimit -n)",
		     used, (size_t)limit.rlim_cur);
		return -EMFILE;
	}
	exporter->fd_budget = (size_t)limit.rlim_cur - used - spare;
	return 0;
}

/* Closes the descriptor of the log that was opened first, to open another. */
static void make_room(struct exporter *exporter)
{
	struct process *oldest = NULL;
	int fd;

	if (exporter->fds_held < exporter->fd_budget)
		return;
	for (size_t i = 0; i < exporter->process_count; i++) {
		struct process *process = &exporter->processes[i];

		if (process->fd_opened && process->out.temp_name &&
		    (!oldest || process->fd_opened < oldest->fd_opened))
			oldest = process;
	}
	if (!oldest)
		return; /* logs written in place: never released */
	fd = legion_prof_release_fd(oldest->prof);
	if (fd >= 0)
		close(fd);
	oldest->fd_opened = 0;
	exporter->fds_held--;
}

static void held(struct process *process)
{
	process->fd_opened = ++process->exporter->fd_tick;
	process->exporter->fds_held++;
}

/* The writer's reopen callback: its temporary file again, to append to. */
static int reopen_log(void *ctx)
{
	struct process *process = ctx;
	int fd;

	make_room(process->exporter);
	fd = openat(process->out.dir, process->out.temp_name,
		    O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		fd = -errno;
		diag("cannot open %s again: %s%s", out_file_name(&process->out), strerror(-fd),
		     fd == -EMFILE ? "; raise the limit of open files (ulimit -n)" : "");
		return fd;
	}
	held(process);
	return fd;
}

/* Closes a log's writer, and counts its descriptor out. */
static int close_log(struct process *process)
{
	int err = legion_prof_close(process->prof);

	process->prof = NULL;
	if (process->fd_opened) {
		process->fd_opened = 0;
		process->exporter->fds_held--;
	}
	return err;
}

static int open_files(struct exporter *exporter)
{
	const struct legion_export_options *options = exporter->options;
	int err = plan_fds(exporter);

	if (err)
		return err;
	exporter->directory = out_dir_open(&(struct out_policy){ .force = options->force },
					   options->directory, &exporter->made_directory);
	if (exporter->directory < 0)
		return exporter->directory;
	for (size_t i = 0; i < exporter->process_count; i++) {
		struct process *process = &exporter->processes[i];
		struct legion_prof_options prof_options = {
			.version = options->version,
			.node_id = process->node,
			.num_nodes = (uint32_t)exporter->process_count,
			.hostname = exporter->header->hostname,
			.process_id = process->tgid,
			.zero_time_ns = (int64_t)exporter->header->realtime_ns,
			.reopen = reopen_log,
			.reopen_ctx = process,
		};
		char name[32];
		int fd;

		log_name(name, sizeof(name), process->node);
		process->exporter = exporter;
		make_room(exporter);
		/* the folder's descriptor serves every log: one descriptor a log at most */
		fd = out_file_openat(&process->out, &(struct out_policy){ .force = options->force },
				     exporter->directory, options->directory, name,
				     OUT_FILE_SHARED_DIR, options->inputs, options->input_count);
		if (fd < 0)
			return fd;
		process->out_open = true;
		if (!process->out.temp_name)
			prof_options.reopen = NULL; /* written in place: kept open */
		err = legion_prof_fdopen(&process->prof, fd, &prof_options);
		if (err) {
			close(fd);
			diag("cannot write %s: %s", process->out.path, strerror(-err));
			return err;
		}
		held(process);
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
 * with this run's. Only regular files of ours named as optrace names its
 * logs go (never a link, never another user's, never an input of this
 * export), looked at and removed through the directory's descriptor.
 */
static int remove_stale_logs(const struct exporter *exporter)
{
	const char *directory = exporter->options->directory;
	char example[300] = "";
	struct dirent *entry;
	int removed = 0, err = 0, fd;
	DIR *dir;

	fd = fcntl(exporter->directory, F_DUPFD_CLOEXEC, 0);
	dir = fd < 0 ? NULL : fdopendir(fd);
	if (!dir) {
		err = -errno;
		diag("cannot read %s: %s", directory, strerror(errno));
		if (fd >= 0)
			close(fd);
		return err;
	}
	while ((entry = readdir(dir))) {
		struct stat st;
		char path[4096];

		if (!is_log_name(entry->d_name) || written(exporter, entry->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", directory, entry->d_name);
		if (fstatat(exporter->directory, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
		    out_file_is_input(path, exporter->options->inputs,
				      exporter->options->input_count))
			continue;
		if (unlinkat(exporter->directory, entry->d_name, 0)) {
			err = err ?: -errno;
			diag("cannot remove %s, an earlier export's: %s; legion_prof "
			     "view "
			     "%s/prof_*.gz would read it with this export's logs",
			     path, strerror(errno), directory);
			continue;
		}
		if (!removed++)
			snprintf(example, sizeof(example), "%s", entry->d_name);
	}
	closedir(dir);
	if (removed)
		diag("removed %d log%s an earlier export left in %s (%s%s), which "
		     "this export has no process for",
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
	return exporter->directory < 0 ? 0 : remove_stale_logs(exporter);
}

/*
 * The reader's colour generator is as wide as planned (legion_kinds.h)
 * once the files hold enough colourable descriptors: empty provenances in
 * the first file make up the difference.
 */
static void pad_colours(struct exporter *exporter)
{
	uint64_t provenances = 0, padding;

	for (size_t i = 0; i < exporter->process_count; i++)
		if (exporter->processes[i].prof)
			provenances += legion_prof_provenance_count(exporter->processes[i].prof);
	/* Every file declares one op kind, "Task" (OpDesc 30). */
	padding = legion_kinds_padding(&exporter->kinds, provenances, 1);
	if (padding && exporter->processes[0].prof)
		legion_export_note_error(
			exporter, legion_prof_colour_padding(exporter->processes[0].prof, padding));
}

static void finish(struct exporter *exporter)
{
	if (!exporter->error && exporter->process_count)
		pad_colours(exporter);
	for (size_t i = 0; i < exporter->process_count; i++) {
		struct process *process = &exporter->processes[i];

		/* Every operation is done once the profile finished: none is left. */
		for (size_t s = 0; s < process->ops.capacity; s++)
			free(process->ops.slots[s].value);
		for (size_t s = 0; s < process->issuers.capacity; s++)
			free(process->issuers.slots[s].value);
		for (size_t s = 0; s < process->workers.capacity; s++)
			free(process->workers.slots[s].value);
		if (process->prof)
			legion_export_note_error(exporter, close_log(process));
		idmap_free(&process->issuers);
		idmap_free(&process->workers);
		idmap_free(&process->tasks);
		idmap_free(&process->ops);
		idmap_free(&process->gpus);
		idmap_free(&process->gpu_tasks);
	}
}

/* The format's state: the exporter and the options it reads. */
struct legion_export_state {
	struct exporter exporter;
	struct legion_export_options options;
	struct gpu_summary gpu_losses;
	bool writing; /* the logs were opened: end says what became of them */
};

/* Pass 1, before the GPU file joins: every process and the rank it announced. */
static int export_first_pass(void *state, struct export_job *job)
{
	struct legion_export_state *legion = state;
	const struct export_options *options = job->options;

	legion->options = (struct legion_export_options){
		.directory = options->output,
		.version = options->legion_version,
		.show_helpers = options->show_helpers,
		.internal = options->internal,
		.python = options->python,
		.gpu_file = options->gpu_file,
		.inputs = options->inputs,
		.input_count = options->input_count,
		.force = options->force,
	};
	legion->exporter.options = &legion->options;
	legion->exporter.directory = -1;
	/* A GPU file alone has no events to scan: its activity names the processes. */
	return job->replay->reader ? scan(&legion->exporter, job->replay) : 0;
}

/* Captures with nothing to draw: said, once what ended them is known. */
static int say_nothing_to_draw(struct export_job *job)
{
	const struct export_options *options = job->options;
	struct profile bare;
	int err;

	/*
	 * The scan read with a reader of its own: what ended the capture,
	 * and why nothing could be read, is known once it is read through.
	 */
	profile_init(&bare, NULL);
	err = replay_run(job->replay, &bare);
	profile_free(&bare);
	err = err ?: replay_check_readable(job->replay);
	if (err)
		return err;
	diag("%s hold%s no operations, tasks or GPU activity",
	     options->path_count == 1 ? options->paths[0] : "the captures",
	     options->path_count == 1 ? "s" : "");
	return -ENODATA;
}

/* Pass 2's start: the nodes, the job's task kinds, a log per process. */
static int export_begin(void *state, struct export_job *job, struct profile_consumer *consumer)
{
	struct legion_export_state *legion = state;
	struct exporter *exporter = &legion->exporter;

	scan_gpu(exporter, &job->replay->gpu);
	exporter->header = job->replay->header;
	if (!exporter->process_count)
		return say_nothing_to_draw(job);
	assign_nodes(exporter);
	/* About a provenance per operation drawn, a few per kind of task point. */
	legion_kinds_init(&exporter->kinds, 2 * exporter->drawn_estimate + 1024, 1);
	*consumer = (struct profile_consumer){
		.ctx = exporter,
		.op_begin = legion_export_on_op_begin,
		.op_done = legion_export_on_op_done,
		.task_run = legion_export_on_task_run,
		.gpu = legion_export_on_gpu,
	};
	legion->writing = true;
	return open_files(exporter);
}

/* The logs closed and put in place (or none, and the directory as it was); said. */
static int end_logs(struct legion_export_state *legion, struct export_job *job, int err)
{
	struct exporter *exporter = &legion->exporter;
	const char *directory = legion->options.directory;

	if (!err)
		export_gpu_losses(job, &legion->gpu_losses);
	finish(exporter);
	err = err ?: exporter->error;
	if (err && err != -EBADMSG) /* -EBADMSG: said what could not be read */
		diag("cannot write the Legion Prof logs: %s", strerror(-err));
	err = settle_files(exporter, err);
	if (!err) {
		size_t length = strlen(directory);

		/* "prof/" as "prof": no "prof//prof_*.gz" */
		while (length > 1 && directory[length - 1] == '/')
			length--;
		diag("wrote %zu Legion Prof log%s in %.*s", exporter->process_count,
		     exporter->process_count == 1 ? "" : "s", (int)length, directory);
		diag("open with: legion_prof view %.*s/prof_*.gz", (int)length, directory);
	}
	if (!err && exporter->gpu_untimed)
		diag("%" PRIu64 " GPU activit%s without device times not drawn",
		     exporter->gpu_untimed, exporter->gpu_untimed == 1 ? "y" : "ies");
	return err;
}

static int export_end(void *state, struct export_job *job, int err)
{
	struct legion_export_state *legion = state;
	struct exporter *exporter = &legion->exporter;

	if (legion->writing)
		err = end_logs(legion, job, err);
	free(exporter->processes);
	idmap_free(&exporter->by_tgid);
	idmap_free(&exporter->ranks);
	legion_kinds_free(&exporter->kinds);
	if (exporter->directory >= 0)
		close(exporter->directory);
	return err;
}

const struct export_format legion_format = {
	.name = "legion",
	.help = "Legion Prof logs, one prof_<node>.gz per process",
	.target = EXPORT_FOLDER,
	.state_size = sizeof(struct legion_export_state),
	.first_pass = export_first_pass,
	.begin = export_begin,
	.end = export_end,
};
