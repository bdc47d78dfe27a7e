// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#define _GNU_SOURCE
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/diag.h"
#include "trace/early_checks.h"
#include "trace/setup.h"
#include "trace/targets.h"
#include "trace/tracer.h"
#include "trace/usdt_notes.h"

/*
 * The one thing a signal handler may set: file-static, read through
 * tracer_interrupted(). Signals are process-wide, so this is too.
 */
static volatile sig_atomic_t exiting;

static void on_signal(int signo)
{
	(void)signo;
	exiting = 1;
}

bool tracer_interrupted(void)
{
	return exiting;
}

void tracer_catch_signals(void)
{
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* A dropped ssh session: end as on SIGTERM, the capture closed, the counts printed. */
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, SIG_IGN);
}

uint64_t tracer_now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

pid_t tracer_process_of(pid_t id)
{
	pid_t tgid;

	if (process_of_id(id, &tgid) || tgid == id)
		return id; /* attaching says what is wrong */
	diag("%d is a thread of process %d: tracing process %d", id, tgid, tgid);
	return tgid;
}

/* True if the liboptrace at path has the fast path's batch probe (ABI 2). */
static bool has_batch_probe(const char *path)
{
	struct usdt_notes notes = { 0 };
	bool found;

	if (usdt_notes_read(path, "optrace", &notes))
		return false;
	found = usdt_notes_find(&notes, "batch") != NULL;
	usdt_notes_free(&notes);
	return found;
}

/*
 * The fast path unless --per-event, or the runtime's liboptrace predates it
 * (ABI 1). Never both: the library fires both kinds while both are armed.
 */
static void choose_path(struct tracer *tracer)
{
	const char *path = tracer->options.library;
	struct library library;
	struct bpf_program *prog;

	if (tracer->options.pid_count && !find_liboptrace(tracer->options.pids[0], &library))
		path = library.path;
	tracer->fast_path = !tracer->options.per_event && path && has_batch_probe(path);
	if (!tracer->options.per_event && path && !tracer->fast_path)
		diag("%s has no fast path (a liboptrace of ABI 1): "
		     "tracing one probe hit per event",
		     path);
	bpf_object__for_each_program (prog, tracer->obj) {
		const char *name = bpf_program__name(prog);

		/* stat's inject_batch: only the fast path needs it (and bpf_loop, 5.17+). */
		if (!strcmp(bpf_program__section_name(prog), "syscall"))
			bpf_program__set_autoload(prog, tracer->fast_path);
		/* The fast path has GPU launches in its batches. */
		if (!strcmp(name, "gpu_launch"))
			bpf_program__set_autoload(prog, !tracer->fast_path &&
								bpf_program__autoload(prog));
		if (strcmp(bpf_program__section_name(prog), "usdt") || !strcmp(name, "rt_init") ||
		    !strncmp(name, "gpu_", 4))
			continue;
		if (!strcmp(name, "batch"))
			bpf_program__set_autoload(prog, tracer->fast_path);
		else
			bpf_program__set_autoload(prog, !tracer->fast_path);
	}
}

/*
 * First of all, what can fail at once: the command cannot be run, a -p is no
 * process. tracer_check_pids() says before the load whether each maps
 * liboptrace, once --cuda has said what it refuses of them.
 */
static int check_targets(struct tracer *tracer)
{
	int err;

	if (tracer->options.command) {
		err = command_runnable(tracer->options.command[0]);
		if (err) {
			diag("cannot run %s: %s", tracer->options.command[0], strerror(err));
			tracer->exec_error = err;
		}
		return -err;
	}
	for (int i = 0; i < tracer->options.pid_count; i++) {
		err = check_pid_alive(tracer->options.pids[i]);
		if (err)
			return err;
	}
	return 0;
}

int tracer_check_pids(const struct tracer *tracer)
{
	struct library library;
	int err;

	for (int i = 0; i < tracer->options.pid_count; i++) {
		err = check_target_pid(tracer->options.pids[i], &library);
		if (err)
			return err;
	}
	return 0;
}

int tracer_prepare(struct tracer *tracer, struct bpf_object *obj,
		   const struct tracer_options *options)
{
	const char *why = tracing_unavailable();
	int err;

	tracer->options = *options;
	tracer->obj = obj;
	tracer->child = -1;
	if (why) {
		diag("%s", why);
		return -EPERM;
	}
	err = check_targets(tracer);
	if (err)
		return err;
	if ((tracer->options.all || tracer->options.command) && !tracer->options.library)
		tracer->options.library =
			default_liboptrace(tracer->library_buffer, sizeof(tracer->library_buffer));
	if (tracer->options.command && !tracer->options.library) {
		diag("cannot find liboptrace.so.1 to attach to: give it with "
		     "--lib PATH");
		return -ENOENT;
	}
	choose_path(tracer);
	err = attacher_prepare(&tracer->attacher, obj, tracer->options.attach_mode);
	if (err) {
		diag("this kernel has no uprobe_multi links with a process-wide "
		     "pid filter (6.10+): use --attach perf-event");
		return err;
	}
	if (diag_verbosity())
		diag("attaching through %s, %s",
		     tracer->attacher.uprobe_multi ? "uprobe_multi links"
						   : "perf-event uprobes (libbpf)",
		     tracer->fast_path ? "fast path (batches)" : "one probe hit per event");
	tracer->prepared_ns = tracer_now_ns();
	return 0;
}

int tracer_loaded(const struct tracer *tracer, int err)
{
	if (err)
		diag("cannot load the BPF programs: %s (-v shows the "
		     "verifier's log)",
		     strerror(-err));
	else if (diag_verbosity())
		diag("BPF programs loaded in %llu ms",
		     (unsigned long long)((tracer_now_ns() - tracer->prepared_ns) / 1000000));
	return err;
}

static int attach_pid(struct tracer *tracer, pid_t pid)
{
	struct library library;
	int err = check_target_pid(pid, &library);

	if (err)
		return err;
	err = attacher_attach(&tracer->attacher, library.path, pid);
	if (err)
		diag("cannot attach to process %d (%s): %s", pid, library.mapped_path,
		     strerror(-err));
	return err;
}

/* For every process, on one library file, once per file. */
static int attach_everywhere(struct tracer *tracer, const char *path)
{
	struct stat st;
	int err;

	if (stat(path, &st)) {
		err = -errno;
		diag("cannot use %s: %s", path, strerror(errno));
		return err;
	}
	for (int i = 0; i < tracer->library_count; i++) {
		if (tracer->libraries[i].dev == st.st_dev && tracer->libraries[i].ino == st.st_ino)
			return 0;
	}
	if (tracer->library_count == TRACER_MAX_LIBRARIES)
		return -ENOSPC;
	err = attacher_attach(&tracer->attacher, path, -1);
	if (err) {
		diag("cannot attach to %s: %s", path, strerror(-err));
		return err;
	}
	tracer->libraries[tracer->library_count].dev = st.st_dev;
	tracer->libraries[tracer->library_count].ino = st.st_ino;
	tracer->library_count++;
	if (diag_verbosity())
		diag("attached to %s", path);
	return 0;
}

static int attach_found(pid_t pid, const struct library *library, void *ctx)
{
	struct tracer *tracer = ctx;

	if (tracer->scan_count < TRACER_MAX_FOUND)
		tracer->found[tracer->scan_count++] = pid;
	attach_everywhere(ctx, library->path);
	return 0;
}

static int targets_fd(struct tracer *tracer);

/*
 * Forgets targets that exited: the map stays small, and a pid the kernel
 * hands to an unrelated process later is not taken for a target.
 */
static void prune_targets(struct tracer *tracer)
{
	int fd = targets_fd(tracer);
	__u32 key, *previous = NULL;

	while (bpf_map_get_next_key(fd, previous, &key) == 0) {
		if (key != (__u32)tracer->child && kill((pid_t)key, 0) && errno == ESRCH &&
		    !bpf_map_delete_elem(fd, &key)) {
			previous = NULL; /* start over: the deleted key has no successor */
			continue;
		}
		previous = &key;
	}
}

static bool library_known(const struct tracer *tracer, const struct library *library)
{
	for (int i = 0; i < tracer->library_count; i++) {
		if (tracer->libraries[i].dev == library->dev &&
		    tracer->libraries[i].ino == library->ino)
			return true;
	}
	return false;
}

/*
 * A command (or one of its children) that maps another liboptrace than the
 * one optrace attached to at its start would be traced by nobody: attach
 * to that one too, and say so, since its events until now are lost.
 */
static void attach_targets_libraries(struct tracer *tracer)
{
	__u32 key, *previous = NULL;
	struct library library;
	int fd = targets_fd(tracer);

	while (bpf_map_get_next_key(fd, previous, &key) == 0) {
		previous = &key;
		if (find_liboptrace((pid_t)key, &library) || library_known(tracer, &library))
			continue;
		diag("process %u maps %s, not %s: tracing it from now on (give "
		     "--lib %s to trace it from its start)",
		     key, library.mapped_path, tracer->options.library, library.mapped_path);
		attach_everywhere(tracer, library.path);
		if (!library_known(tracer, &library) &&
		    tracer->library_count < TRACER_MAX_LIBRARIES) {
			/* Could not attach (said): not again every second. */
			tracer->libraries[tracer->library_count].dev = library.dev;
			tracer->libraries[tracer->library_count].ino = library.ino;
			tracer->library_count++;
		}
	}
}

/* With -a: attaches to new liboptrace files, and notes who maps one. */
static void scan_all(struct tracer *tracer)
{
	tracer->scan_count = 0;
	for_each_liboptrace_process(attach_found, tracer);
	tracer->found_count = tracer->scan_count;
}

bool tracer_rescan_due(const struct tracer *tracer, long elapsed_ms)
{
	/* A command maps its libraries as it starts: look often then, to miss little. */
	if (tracer->options.command && elapsed_ms <= 2000)
		return elapsed_ms % 100 == 0;
	return elapsed_ms % 1000 == 0;
}

void tracer_rescan(struct tracer *tracer)
{
	if (tracer->options.all)
		scan_all(tracer);
	if (tracer->options.command) {
		prune_targets(tracer);
		attach_targets_libraries(tracer);
	}
}

static int targets_fd(struct tracer *tracer)
{
	return bpf_map__fd(bpf_object__find_map_by_name(tracer->obj, "targets"));
}

/*
 * The command, forked and waiting on a pipe; *release_fd lets it exec, and
 * *exec_fd then says whether it could: it reads end-of-file when the exec
 * closed it, or the errno of a failed exec.
 */
static int start_command(struct tracer *tracer, int *release_fd, int *exec_fd)
{
	int pipe_fds[2], exec_fds[2];
	__u8 yes = 1;
	pid_t child;

	if (pipe2(pipe_fds, O_CLOEXEC))
		return -errno;
	if (pipe2(exec_fds, O_CLOEXEC)) {
		close(pipe_fds[0]);
		close(pipe_fds[1]);
		return -errno;
	}
	child = fork();
	if (child < 0)
		return -errno;
	if (child == 0) {
		char go;
		int error;

		close(pipe_fds[1]);
		close(exec_fds[0]);
		/* optrace ignores SIGPIPE and SIGXFSZ; an ignored signal stays so past exec. */
		signal(SIGPIPE, SIG_DFL);
		signal(SIGXFSZ, SIG_DFL);
		if (read(pipe_fds[0], &go, 1) != 1)
			_exit(127); /* optrace gave up */
		execvp(tracer->options.command[0], tracer->options.command);
		error = errno;
		if (write(exec_fds[1], &error, sizeof(error)) != sizeof(error))
			_exit(127);
		_exit(127);
	}
	close(pipe_fds[0]);
	close(exec_fds[1]);
	tracer->child = child;
	*release_fd = pipe_fds[1];
	*exec_fd = exec_fds[0];
	return bpf_map_update_elem(targets_fd(tracer), &child, &yes, BPF_ANY);
}

/* After the release: 0 once the command runs, or why it could not start. */
static int command_started(struct tracer *tracer, int exec_fd)
{
	int error = 0;
	ssize_t got;

	do {
		got = read(exec_fd, &error, sizeof(error));
	} while (got < 0 && errno == EINTR);
	if (got != sizeof(error))
		return 0; /* closed by a successful exec */
	diag("cannot run %s: %s", tracer->options.command[0], strerror(error));
	waitpid(tracer->child, &tracer->child_status, 0);
	tracer->child_exited = true;
	tracer->exec_error = error;
	return -error;
}

static int attach_command(struct tracer *tracer)
{
	struct bpf_program *follow = bpf_object__find_program_by_name(tracer->obj, "follow_fork");
	int release_fd = -1, exec_fd = -1, err;

	err = start_command(tracer, &release_fd, &exec_fd);
	if (!err) {
		tracer->fork_link = bpf_program__attach(follow);
		err = libbpf_get_error(tracer->fork_link);
		if (err) {
			tracer->fork_link = NULL;
			diag("cannot follow the command's children: %s", strerror(-err));
		}
	}
	err = err ?: attach_everywhere(tracer, tracer->options.library);
	if (!err && write(release_fd, "g", 1) != 1)
		err = -errno;
	if (release_fd >= 0)
		close(release_fd); /* without "g", the command exits unrun */
	if (!err)
		err = command_started(tracer, exec_fd);
	if (exec_fd >= 0)
		close(exec_fd);
	return err;
}

int tracer_attach(struct tracer *tracer)
{
	int err;

	if (tracer->options.command)
		return attach_command(tracer);
	if (tracer->options.all) {
		if (tracer->options.library && !access(tracer->options.library, R_OK))
			attach_everywhere(tracer, tracer->options.library);
		scan_all(tracer);
		return 0;
	}
	for (int i = 0; i < tracer->options.pid_count; i++) {
		err = attach_pid(tracer, tracer->options.pids[i]);
		if (err)
			return err;
	}
	return 0;
}

static bool maps_file(pid_t pid, const char *name)
{
	char path[64], line[4096];
	bool found = false;
	FILE *maps;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	maps = fopen(path, "re");
	if (!maps)
		return false;
	while (!found && fgets(line, sizeof(line), maps))
		found = strstr(line, name) != NULL;
	fclose(maps);
	return found;
}

bool tracer_targets_map(struct tracer *tracer, const char *name)
{
	__u32 key, *previous = NULL;
	int fd;

	for (int i = 0; i < tracer->options.pid_count; i++) {
		if (maps_file(tracer->options.pids[i], name))
			return true;
	}
	if (!tracer->options.command)
		return false;
	fd = targets_fd(tracer);
	while (bpf_map_get_next_key(fd, previous, &key) == 0) {
		if (maps_file((pid_t)key, name))
			return true;
		previous = &key;
	}
	return false;
}

bool tracer_alive(struct tracer *tracer)
{
	__u32 key, *previous = NULL;
	int fd;

	if (tracer->options.all)
		return true;
	if (tracer->options.command) {
		if (tracer->child <= 0)
			return false;
		if (!tracer->child_exited &&
		    waitpid(tracer->child, &tracer->child_status, WNOHANG) == tracer->child)
			tracer->child_exited = true;
		if (!tracer->child_exited)
			return true;
		/* Descendants the command left running are targets too. */
		fd = targets_fd(tracer);
		while (bpf_map_get_next_key(fd, previous, &key) == 0) {
			if (key != (__u32)tracer->child && process_alive((pid_t)key))
				return true;
			previous = &key;
		}
		return false;
	}
	for (int i = 0; i < tracer->options.pid_count; i++) {
		if (process_alive(tracer->options.pids[i]))
			return true;
	}
	return false;
}

struct read_all {
	batch_read_fn fn;
	void *ctx;
	int buffers;
};

static int read_found(pid_t pid, const struct library *library, void *ctx)
{
	struct read_all *all = ctx;
	int read = batch_read_process(pid, all->fn, all->ctx);

	(void)library;
	if (read > 0)
		all->buffers += read;
	return 0;
}

int tracer_read_buffers(struct tracer *tracer, batch_read_fn fn, void *ctx)
{
	struct read_all all = { .fn = fn, .ctx = ctx };
	__u32 key, *previous = NULL;
	int fd;

	if (!tracer->fast_path)
		return 0;
	for (int i = 0; i < tracer->options.pid_count; i++)
		read_found(tracer->options.pids[i], NULL, &all);
	/* With -a, those found at the last scan: not all of /proc at every read. */
	for (int i = 0; tracer->options.all && i < tracer->found_count; i++)
		read_found(tracer->found[i], NULL, &all);
	if (tracer->options.command) {
		fd = targets_fd(tracer);
		while (bpf_map_get_next_key(fd, previous, &key) == 0) {
			read_found((pid_t)key, NULL, &all);
			previous = &key;
		}
	}
	return all.buffers;
}

/* Reaps the command if it ended within ms; true if it did. */
static bool reap_within(struct tracer *tracer, long ms)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };

	for (long waited = 0; !tracer->child_exited; waited += 10) {
		if (waitpid(tracer->child, &tracer->child_status, WNOHANG) == tracer->child)
			tracer->child_exited = true;
		else if (waited >= ms)
			break;
		else
			nanosleep(&tick, NULL);
	}
	return tracer->child_exited;
}

int tracer_finish(struct tracer *tracer, bool interrupted)
{
	attacher_destroy(&tracer->attacher);
	bpf_link__destroy(tracer->fork_link);
	tracer->fork_link = NULL;
	/* Found before the start, or by the exec (the child is reaped then): as the shells say. */
	if (tracer->exec_error)
		return tracer->exec_error == ENOENT ? 127 : 126;
	if (!tracer->options.command || tracer->child <= 0)
		return 0;
	/*
	 * Tracing stopped before the command ended (a signal, -d): like
	 * timeout(1), the command gets SIGTERM, and SIGKILL a second later, so
	 * that optrace ends within about a second whatever the command does.
	 */
	/* On Ctrl-C the command got the SIGINT too: let it end of that first. */
	if (!reap_within(tracer, interrupted ? 200 : 0)) {
		if (diag_verbosity() || (!interrupted && !tracer->quiet))
			diag("stopping the command (SIGTERM)");
		tracer->child_stopped = true;
		kill(tracer->child, SIGTERM);
		if (!reap_within(tracer, 1000)) {
			diag("the command did not end on SIGTERM: SIGKILL");
			kill(tracer->child, SIGKILL);
			reap_within(tracer, 1000);
		}
	}
	if (!tracer->child_exited || tracer->child_stopped)
		return 0;
	if (WIFEXITED(tracer->child_status) && WEXITSTATUS(tracer->child_status)) {
		if (!tracer->quiet)
			diag("the command exited with status %d",
			     WEXITSTATUS(tracer->child_status));
		return WEXITSTATUS(tracer->child_status);
	}
	if (WIFSIGNALED(tracer->child_status)) {
		if (!tracer->quiet)
			diag("the command was killed by signal %d (%s)",
			     WTERMSIG(tracer->child_status),
			     strsignal(WTERMSIG(tracer->child_status)));
		return 128 + WTERMSIG(tracer->child_status);
	}
	return 0;
}
