// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace list: the optrace probes of a live process (found through the
 * liboptrace it maps) or of a file, with their semaphores.
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/diag.h"
#include "cli/commands.h"
#include "cli/tracer_flags.h"
#include "trace/early_checks.h"
#include "trace/setup.h"
#include "trace/targets.h"
#include "trace/tracer.h"
#include "trace/usdt_notes.h"
#include "output/text_table.h"

#define MAX_PIDS 64

static struct {
	pid_t pids[MAX_PIDS];
	int pid_count;
	const char *path;
	bool wide;
} env;

enum { OPT_WIDE = 0x100 };

static const char doc[] =
	"List the optrace probes of processes or of a file, with their semaphores.\n"
	"\n"
	"USAGE: optrace list -p PID... | optrace list FILE\n"
	"\n"
	"EXAMPLES:\n"
	"    optrace list -p 1234                    # probes in process 1234\n"
	"    optrace list -p 1234 -p 1240            # in two processes\n"
	"    optrace list -p 1234 --wide | grep maps # the library's path on one line\n"
	"    optrace list /usr/lib/liboptrace.so.1   # probes in a file\n";

static const struct argp_option options[] = {
	{ "pid", 'p', "PID", 0, "A process to inspect (repeatable)", 0 },
	{ "wide", OPT_WIDE, NULL, 0,
	  "Lines as long as they are (else the terminal's width, COLUMNS or 80)", 0 },
	{},
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'p':
		tracer_parse_pids(arg, state, env.pids, &env.pid_count, MAX_PIDS);
		return 0;
	case OPT_WIDE:
		env.wide = true;
		return 0;
	case ARGP_KEY_ARG:
		if (env.path)
			argp_error(state, "give one file");
		env.path = arg;
		return 0;
	case ARGP_KEY_END:
		if (!env.pid_count == !env.path)
			argp_error(state, "give either -p PID... or a FILE");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static int read_semaphore(int mem_fd, unsigned long address, unsigned short *value)
{
	return pread(mem_fd, value, sizeof(*value), (off_t)address) == sizeof(*value) ? 0 : -EIO;
}

/* The optrace and optrace_gpu providers' probes; a file may have others. */
static void keep_optrace_providers(struct usdt_notes *notes)
{
	size_t kept = 0;

	for (size_t i = 0; i < notes->count; i++) {
		const char *provider = notes->notes[i].provider;

		if (!strcmp(provider, "optrace") || !strcmp(provider, "optrace_gpu"))
			notes->notes[kept++] = notes->notes[i];
	}
	notes->count = kept;
}

/*
 * For a CUDA process: whether liboptrace-cupti is in it, since without it
 * the optrace_gpu probes never fire however armed.
 */
static void print_gpu_collector(pid_t pid)
{
	char maps_path[64], line[4096], collector[4096] = "";
	bool cuda = false;
	FILE *maps;

	snprintf(maps_path, sizeof(maps_path), "/proc/%d/maps", pid);
	maps = fopen(maps_path, "re");
	if (!maps)
		return;
	while (fgets(line, sizeof(line), maps)) {
		char *file = strchr(line, '/');

		if (!file)
			continue;
		file[strcspn(file, "\n")] = '\0';
		if (strstr(file, "/libcuda.so") || strstr(file, "/libcudart"))
			cuda = true;
		if (strstr(file, "/liboptrace-cupti.so") && !collector[0])
			snprintf(collector, sizeof(collector), "%s", file);
	}
	fclose(maps);
	if (collector[0])
		printf("GPU collector: %s (CUPTI is on while an optrace_gpu probe is armed)\n",
		       collector);
	else if (cuda)
		printf("GPU collector: not loaded, so no GPU activity: optrace record --cuda -p %d "
		       "loads it now, or start the process with "
		       "CUDA_INJECTION64_PATH=PATH/liboptrace-cupti.so\n",
		       pid);
}

/* The probe table of the file at path; base and mem_fd (or -1): a process's, for ARMED. */
static int print_probes(const char *path, unsigned long base, int mem_fd)
{
	static const struct text_column columns[] = {
		{ "PROBE", 0, true, false, false },	{ "OFFSET", 0, true, false, false },
		{ "SEMAPHORE", 0, true, false, false }, { "ARMED", 0, true, false, false },
		{ "ARGUMENTS", 0, true, false, true },
	};
	struct usdt_notes notes = { 0 };
	struct text_table table;
	int err;

	err = usdt_notes_read(path, NULL, &notes);
	if (err) {
		diag("cannot read probes from %s: %s", path,
		     err == -ENOEXEC	   ? "not an ELF file"
		     : err == -ENOTREGULAR ? "not a regular file (a pipe?): give the library's path"
					   : strerror(-err));
		return 1;
	}
	keep_optrace_providers(&notes);
	if (!notes.count) {
		char library[PATH_MAX], resolved[PATH_MAX];
		const char *suggested = default_liboptrace(library, sizeof(library));

		/* A program that uses liboptrace has its probes there, not in itself. */
		diag("%s has no optrace probes: a runtime's probes are in liboptrace (try: optrace "
		     "list %s, or optrace list -p PID of the running program)",
		     path, realpath(suggested, resolved) ? resolved : suggested);
		usdt_notes_free(&notes);
		return 1;
	}
	text_table_init(&table, columns, 5);
	for (size_t i = 0; i < notes.count; i++) {
		const struct usdt_note *note = &notes.notes[i];
		char probe[USDT_NAME_MAX * 2 + 2], armed[16] = "-", offset[24], semaphore[24];
		const char *cells[5] = { probe, offset, semaphore, armed, note->args };
		unsigned short value;

		snprintf(probe, sizeof(probe), "%s:%s", note->provider, note->name);
		if (mem_fd >= 0 && note->semaphore &&
		    !read_semaphore(mem_fd, base + note->semaphore, &value))
			snprintf(armed, sizeof(armed), value ? "yes(%u)" : "no", value);
		snprintf(offset, sizeof(offset), "0x%llx", (unsigned long long)note->pc_offset);
		snprintf(semaphore, sizeof(semaphore), "0x%llx",
			 (unsigned long long)note->semaphore_offset);
		text_table_add(&table, cells);
	}
	text_table_print(stdout, &table, text_output_width(stdout, env.wide), NULL);
	text_table_free(&table);
	usdt_notes_free(&notes);
	return 0;
}

/* What process pid maps, and its probes with their semaphores as they are now. */
static int list_process(pid_t pid)
{
	struct library library;
	char mem_path[64];
	int err, mem_fd;

	err = find_liboptrace(pid, &library);
	if (err == -ESRCH) {
		diag("no process %d", pid);
		return 1;
	}
	if (err == -ENOENT) {
		diag("process %d does not map liboptrace: it is not an instrumented runtime, or "
		     "has not loaded it yet",
		     pid);
		return 1;
	}
	if (err == -ENOTREGULAR) {
		say_not_regular(pid);
		return 1;
	}
	if (err) {
		diag("cannot read the mappings of process %d: %s (%s)", pid, strerror(-err),
		     mappings_refused_hint());
		return 1;
	}
	snprintf(mem_path, sizeof(mem_path), "/proc/%d/mem", pid);
	mem_fd = open(mem_path, O_RDONLY | O_CLOEXEC);
	/* A path that fits a line goes below, whole; a longer one is cut after a '/'. */
	text_printf(stdout, text_output_width(stdout, env.wide), "process %d maps %s", pid,
		    library.mapped_path);
	print_gpu_collector(pid);
	err = print_probes(library.path, library.base, mem_fd);
	if (mem_fd >= 0)
		close(mem_fd);
	return err;
}

int cmd_list(int argc, char **argv)
{
	static const struct argp argp = { .options = options, .parser = parse_arg, .doc = doc };
	int status = 0;

	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return EXIT_USAGE;
	if (env.path)
		return print_probes(env.path, 0, -1);
	/* Every process, even after one that fails; 1 if any did. */
	for (int i = 0; i < env.pid_count; i++) {
		if (i)
			putchar('\n');
		if (list_process(env.pids[i]))
			status = 1;
	}
	return status;
}
