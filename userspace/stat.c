// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace stat: per-operation and per-task aggregates of live runtimes,
 * counted in the kernel (bpf/stat.bpf.c) and printed at exit or every
 * interval.
 */
#define _GNU_SOURCE
#include <argp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "commands.h"
#include "stat.skel.h"
#include "stat_maps.h"
#include "stat_model.h"
#include "targets.h"

#define MAX_PIDS 64
#define MAX_LIBRARIES 64
#define TICK_MS 100

static struct {
	pid_t pids[MAX_PIDS];
	int pid_count;
	bool all;
	char **command;
	int interval_s; /* 0: print once, at the end */
	int count;	/* intervals to print; 0: until stopped */
	int duration_s;
	const char *library;
	struct stat_print_options print;
	bool top;	 /* optrace top: a live screen */
	bool cumulative; /* top: totals since start, not per interval */
	enum attach_mode attach_mode;
} env;

static volatile sig_atomic_t exiting;

static const char doc[] =
	"Count the operations of live runtimes in the kernel and print per-operation\n"
	"and per-task aggregates: counts, eager/deferred/fallback split with reasons,\n"
	"total and self time, p50/p99, task runs per variant, waits.\n"
	"\n"
	"USAGE: optrace stat [-p PID]... [-a] [--json] [--show-helpers] [-d SECONDS]\n"
	"                    [INTERVAL [COUNT]] [-- COMMAND [ARGS...]]\n"
	"\n"
	"EXAMPLES:\n"
	"    optrace stat -p 1234               # until Ctrl-C, then print\n"
	"    optrace stat -p 1234 -p 1240 -d 30 # two processes for 30 s\n"
	"    optrace stat -p 1234 5 3           # every 5 s, three times\n"
	"    optrace stat -a                    # every process mapping liboptrace\n"
	"    optrace stat --json -- ./app -n 10 # run a command, trace it and its children\n"
	"    optrace stat --show-helpers -p 1234  # helper operations under their callers\n";

static const char top_doc[] =
	"A live screen of the operations of running runtimes, slowest first,\n"
	"refreshed every interval (default 1 s). Counted in the kernel as by stat.\n"
	"\n"
	"USAGE: optrace top [-p PID]... [-a] [-C] [--show-helpers] [INTERVAL]\n"
	"\n"
	"EXAMPLES:\n"
	"    optrace top -p 1234        # one process, per-second view\n"
	"    optrace top -a -C 2        # every runtime, totals since start, every 2 s\n";

enum {
	OPT_JSON = 0x100,
	OPT_SHOW_HELPERS,
	OPT_LIB,
	OPT_ATTACH,
};

static const struct argp_option options[] = {
	{ "pid", 'p', "PID", 0, "Trace this process (repeatable)", 0 },
	{ "all", 'a', NULL, 0, "Trace every process that maps liboptrace, also later ones", 0 },
	{ "duration", 'd', "SECONDS", 0, "Stop after this many seconds", 0 },
	{ "json", OPT_JSON, NULL, 0, "Print JSON for machines", 0 },
	{ "show-helpers", OPT_SHOW_HELPERS, NULL, 0, "List nested operations under their callers",
	  0 },
	{ "lib", OPT_LIB, "PATH", 0,
	  "liboptrace to attach to with -- and -a (default: the one installed with optrace)", 0 },
	{ "attach", OPT_ATTACH, "MODE", 0,
	  "How to attach: auto (default), uprobe-multi (kernel 6.10+) or perf-event", 0 },
	{ "verbose", 'v', NULL, 0, "Show libbpf's messages (twice: its debug log)", 0 },
	{},
};

static const struct argp_option top_options[] = {
	{ "pid", 'p', "PID", 0, "Watch this process (repeatable)", 0 },
	{ "all", 'a', NULL, 0, "Watch every process that maps liboptrace, also later ones", 0 },
	{ "cumulative", 'C', NULL, 0, "Totals since start instead of per interval", 0 },
	{ "show-helpers", OPT_SHOW_HELPERS, NULL, 0, "List nested operations under their callers",
	  0 },
	{ "attach", OPT_ATTACH, "MODE", 0,
	  "How to attach: auto (default), uprobe-multi (kernel 6.10+) or perf-event", 0 },
	{ "verbose", 'v', NULL, 0, "Show libbpf's messages (twice: its debug log)", 0 },
	{},
};

static long parse_positive(const char *arg, struct argp_state *state, const char *what)
{
	char *end;
	long value;

	errno = 0;
	value = strtol(arg, &end, 10);
	if (errno || *end || value <= 0 || value > 1000000000)
		argp_error(state, "'%s' is not a valid %s", arg, what);
	return value;
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	static int positional;

	switch (key) {
	case 'p':
		if (env.pid_count == MAX_PIDS)
			argp_error(state, "at most %d processes", MAX_PIDS);
		env.pids[env.pid_count++] = (pid_t)parse_positive(arg, state, "process id");
		return 0;
	case 'a':
		env.all = true;
		return 0;
	case 'd':
		env.duration_s = (int)parse_positive(arg, state, "duration");
		return 0;
	case 'v':
		verbose++;
		return 0;
	case 'C':
		env.cumulative = true;
		return 0;
	case OPT_JSON:
		env.print.json = true;
		return 0;
	case OPT_SHOW_HELPERS:
		env.print.show_helpers = true;
		return 0;
	case OPT_LIB:
		env.library = arg;
		return 0;
	case OPT_ATTACH:
		if (attach_mode_parse(arg) < 0)
			argp_error(state, "--attach takes auto, uprobe-multi or perf-event");
		env.attach_mode = (enum attach_mode)attach_mode_parse(arg);
		return 0;
	case ARGP_KEY_ARG:
		if (positional == 0)
			env.interval_s = (int)parse_positive(arg, state, "interval");
		else if (positional == 1)
			env.count = (int)parse_positive(arg, state, "count");
		else
			argp_error(state, "unexpected argument '%s' (a command goes after --)",
				   arg);
		positional++;
		return 0;
	case ARGP_KEY_END:
		if (env.top && (env.command || env.count))
			argp_error(state, "top watches running processes: -p PID... or -a");
		if (!!env.pid_count + env.all + !!env.command != 1)
			argp_error(state, "give one kind of target: -p PID..., -a, or -- COMMAND");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static void on_signal(int signo)
{
	(void)signo;
	exiting = 1;
}

/* ---- targets ---- */

struct tracer {
	struct stat_bpf *skel;
	struct attacher attacher;
	struct bpf_link *fork_link;
	struct {
		dev_t dev;
		ino_t ino;
	} libraries[MAX_LIBRARIES]; /* attached system-wide (-a, --) */
	int library_count;
	pid_t child;
	int child_status;
	bool child_exited;
};

static bool process_alive(pid_t pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

static int attach_pid(struct tracer *tracer, pid_t pid)
{
	struct library library;
	int err = find_liboptrace(pid, &library);

	if (err == -ESRCH) {
		fprintf(stderr, "optrace: no process %d\n", pid);
		return err;
	}
	if (err == -ENOENT) {
		fprintf(stderr,
			"optrace: process %d does not map liboptrace: it is not an "
			"instrumented runtime (optrace list -p %d shows what it has)\n",
			pid, pid);
		return err;
	}
	if (err) {
		fprintf(stderr, "optrace: cannot read the mappings of process %d: %s\n", pid,
			strerror(-err));
		return err;
	}
	err = attacher_attach(&tracer->attacher, library.path, pid);
	if (err)
		fprintf(stderr, "optrace: cannot attach to process %d (%s): %s\n", pid,
			library.mapped_path, strerror(-err));
	return err;
}

/* System-wide on one library file, once per file. */
static int attach_everywhere(struct tracer *tracer, const char *path)
{
	struct stat st;
	int err;

	if (stat(path, &st)) {
		err = -errno;
		fprintf(stderr, "optrace: cannot use %s: %s\n", path, strerror(errno));
		return err;
	}
	for (int i = 0; i < tracer->library_count; i++) {
		if (tracer->libraries[i].dev == st.st_dev && tracer->libraries[i].ino == st.st_ino)
			return 0;
	}
	if (tracer->library_count == MAX_LIBRARIES)
		return -ENOSPC;
	err = attacher_attach(&tracer->attacher, path, -1);
	if (err) {
		fprintf(stderr, "optrace: cannot attach to %s: %s\n", path, strerror(-err));
		return err;
	}
	tracer->libraries[tracer->library_count].dev = st.st_dev;
	tracer->libraries[tracer->library_count].ino = st.st_ino;
	tracer->library_count++;
	if (verbose)
		fprintf(stderr, "optrace: attached to %s\n", path);
	return 0;
}

static int attach_found(pid_t pid, const struct library *library, void *ctx)
{
	(void)pid;
	attach_everywhere(ctx, library->path);
	return 0;
}

/*
 * Starts the command stopped before exec, makes it a target, and lets it go
 * once the probes are attached: not one of its operations is missed.
 */
static int start_command(struct tracer *tracer, int *release_fd)
{
	int pipe_fds[2];
	__u8 yes = 1;
	pid_t child;

	if (pipe2(pipe_fds, O_CLOEXEC))
		return -errno;
	child = fork();
	if (child < 0)
		return -errno;
	if (child == 0) {
		char go;

		close(pipe_fds[1]);
		if (read(pipe_fds[0], &go, 1) != 1)
			_exit(127); /* optrace gave up */
		execvp(env.command[0], env.command);
		fprintf(stderr, "optrace: cannot run %s: %s\n", env.command[0], strerror(errno));
		_exit(127);
	}
	close(pipe_fds[0]);
	tracer->child = child;
	*release_fd = pipe_fds[1];
	return bpf_map_update_elem(bpf_map__fd(tracer->skel->maps.targets), &child, &yes, BPF_ANY);
}

/* True while some target is alive. */
static bool targets_alive(struct tracer *tracer)
{
	__u32 key, *previous = NULL;
	int fd;

	if (env.all)
		return true;
	if (env.command) {
		if (!tracer->child_exited &&
		    waitpid(tracer->child, &tracer->child_status, WNOHANG) == tracer->child)
			tracer->child_exited = true;
		if (!tracer->child_exited)
			return true;
		/* Descendants the command left running are targets too. */
		fd = bpf_map__fd(tracer->skel->maps.targets);
		while (bpf_map_get_next_key(fd, previous, &key) == 0) {
			if (key != (__u32)tracer->child && process_alive((pid_t)key))
				return true;
			previous = &key;
		}
		return false;
	}
	for (int i = 0; i < env.pid_count; i++) {
		if (process_alive(env.pids[i]))
			return true;
	}
	return false;
}

/* The report, cut to the terminal: top's screen. */
static void print_screen(struct stat_snapshot *snapshot)
{
	struct winsize size = { .ws_row = 24, .ws_col = 80 };
	char *text = NULL, *line, *save;
	size_t length = 0;
	time_t now = time(NULL);
	char stamp[32];
	FILE *report;
	int rows = 1;

	ioctl(STDOUT_FILENO, TIOCGWINSZ, &size);
	report = open_memstream(&text, &length);
	if (!report)
		return;
	stat_print(report, snapshot, &env.print);
	fclose(report);
	strftime(stamp, sizeof(stamp), "%H:%M:%S", localtime(&now));
	/* Home, clear, then as many lines as fit, each cut to the width. */
	printf("\033[H\033[2Joptrace top - %s - %s, every %d s (Ctrl-C quits)\n", stamp,
	       env.cumulative ? "totals since start" : "this interval", env.interval_s);
	for (line = strtok_r(text, "\n", &save); line && rows < size.ws_row - 1;
	     line = strtok_r(NULL, "\n", &save), rows++)
		printf("%.*s\n", size.ws_col, line);
	free(text);
}

static int print_snapshot(struct tracer *tracer, bool clear)
{
	struct stat_snapshot snapshot;
	int err = stat_snapshot_read(tracer->skel, &snapshot, clear);

	if (err) {
		fprintf(stderr, "optrace: cannot read the kernel's aggregates: %s\n",
			strerror(-err));
		return err;
	}
	if (env.top) {
		print_screen(&snapshot);
		fflush(stdout);
		stat_snapshot_free(&snapshot);
		return 0;
	}
	if (env.interval_s && !env.print.json) {
		time_t now = time(NULL);
		char stamp[32];

		strftime(stamp, sizeof(stamp), "%H:%M:%S", localtime(&now));
		printf("%s\n", stamp);
	}
	stat_print(stdout, &snapshot, &env.print);
	fflush(stdout);
	stat_snapshot_free(&snapshot);
	return 0;
}

static int run(int argc, char **argv, const struct argp *argp);

int cmd_stat(int argc, char **argv)
{
	static const struct argp argp = { .options = options, .parser = parse_arg, .doc = doc };

	return run(argc, argv, &argp);
}

int cmd_top(int argc, char **argv)
{
	static const struct argp argp = { .options = top_options,
					  .parser = parse_arg,
					  .doc = top_doc };

	env.top = true;
	return run(argc, argv, &argp);
}

static int run(int argc, char **argv, const struct argp *argp)
{
	struct tracer tracer = { 0 };
	long elapsed_ms = 0, since_print_ms = 0;
	int err, printed = 0, release_fd = -1, command_at = argc;
	char library_buffer[4096];
	const char *why;

	/* Everything after "--" is the command, not ours to parse. */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			command_at = i;
			break;
		}
	}
	if (command_at < argc) {
		if (command_at + 1 == argc) {
			fprintf(stderr, "optrace: nothing to run after --\n");
			return 2;
		}
		env.command = &argv[command_at + 1];
	}
	err = argp_parse(argp, command_at, argv, 0, NULL, NULL);
	if (err)
		return 2;
	if (env.top && !env.interval_s)
		env.interval_s = 1;

	why = tracing_unavailable();
	if (why) {
		fprintf(stderr, "optrace: %s\n", why);
		return 1;
	}
	if ((env.all || env.command) && !env.library)
		env.library = default_liboptrace(library_buffer, sizeof(library_buffer));
	if (env.command && !env.library) {
		fprintf(stderr, "optrace: cannot find liboptrace.so.1 to attach to: give it with "
				"--lib PATH\n");
		return 1;
	}

	libbpf_set_print(libbpf_print);
	tracer.skel = stat_bpf__open();
	if (!tracer.skel) {
		fprintf(stderr, "optrace: cannot open the BPF object: %s\n", strerror(errno));
		return 1;
	}
	tracer.skel->rodata->filter_targets = env.command != NULL;
	err = attacher_prepare(&tracer.attacher, tracer.skel->obj, env.attach_mode);
	if (err) {
		fprintf(stderr,
			"optrace: this kernel has no uprobe_multi links with a process-wide "
			"pid filter (6.10+): use --attach perf-event\n");
		goto cleanup;
	}
	if (verbose)
		fprintf(stderr, "optrace: attaching through %s\n",
			tracer.attacher.uprobe_multi ? "uprobe_multi links"
						     : "perf-event uprobes (libbpf)");
	err = stat_bpf__load(tracer.skel);
	if (err) {
		fprintf(stderr,
			"optrace: cannot load the BPF programs: %s (-v shows the verifier's "
			"log)\n",
			strerror(-err));
		goto cleanup;
	}

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);

	if (env.command) {
		err = start_command(&tracer, &release_fd);
		if (!err) {
			tracer.fork_link = bpf_program__attach(tracer.skel->progs.follow_fork);
			err = libbpf_get_error(tracer.fork_link);
			if (err) {
				tracer.fork_link = NULL;
				fprintf(stderr,
					"optrace: cannot follow the command's children: %s\n",
					strerror(-err));
			}
		}
		err = err ?: attach_everywhere(&tracer, env.library);
		if (err)
			goto cleanup;
		if (write(release_fd, "g", 1) != 1) {
			err = -errno;
			goto cleanup;
		}
		close(release_fd);
		release_fd = -1;
	} else if (env.all) {
		if (env.library && !access(env.library, R_OK))
			attach_everywhere(&tracer, env.library);
		err = for_each_liboptrace_process(attach_found, &tracer);
		if (err)
			goto cleanup;
	} else {
		for (int i = 0; i < env.pid_count; i++) {
			err = attach_pid(&tracer, env.pids[i]);
			if (err)
				goto cleanup;
		}
	}
	if (!env.print.json && !env.command && !env.top)
		fprintf(stderr, "Tracing... %s\n",
			env.interval_s ? "" : "Hit Ctrl-C to end and print.");

	while (!exiting) {
		struct timespec tick = { 0, TICK_MS * 1000 * 1000 };

		nanosleep(&tick, NULL);
		elapsed_ms += TICK_MS;
		since_print_ms += TICK_MS;
		if (env.duration_s && elapsed_ms >= env.duration_s * 1000L)
			break;
		if (!targets_alive(&tracer))
			break;
		if (env.all && since_print_ms % 1000 == 0)
			for_each_liboptrace_process(attach_found, &tracer);
		if (env.interval_s && since_print_ms >= env.interval_s * 1000L) {
			since_print_ms = 0;
			err = print_snapshot(&tracer, !env.cumulative);
			if (err)
				goto cleanup;
			if (env.count && ++printed >= env.count)
				goto cleanup;
		}
	}
	/* top's screen is already up to date; stat prints what it counted. */
	if (!env.top)
		err = print_snapshot(&tracer, env.interval_s != 0);

cleanup:
	if (release_fd >= 0)
		close(release_fd);
	/* Detaching disarms the semaphores: the targets go on untraced. */
	attacher_destroy(&tracer.attacher);
	bpf_link__destroy(tracer.fork_link);
	stat_bpf__destroy(tracer.skel);
	if (env.command && tracer.child > 0) {
		if (!tracer.child_exited && exiting) {
			/* Like time(1): optrace stops, the command carries on with the signal. */
			kill(tracer.child, SIGTERM);
		}
		if (!tracer.child_exited && waitpid(tracer.child, &tracer.child_status, 0) > 0)
			tracer.child_exited = true;
		if (!err && WIFEXITED(tracer.child_status) && WEXITSTATUS(tracer.child_status))
			fprintf(stderr, "optrace: the command exited with status %d\n",
				WEXITSTATUS(tracer.child_status));
	}
	return err ? 1 : 0;
}
