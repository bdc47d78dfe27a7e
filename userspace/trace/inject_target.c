// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What is read of a process before a library is loaded into it
 * (inject_target.h): its mappings, the dynamic symbols of the files it maps
 * (where its loader's dlopen is), and whether it may be stopped at all.
 * Nothing here touches the process, nor knows what is loaded into it.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/process_read.h"
#include "trace/elf_symbols.h"
#include "trace/inject_target.h"
#include "trace/targets.h"

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

struct symbol_search {
	pid_t pid;
	const char *library; /* a path, or a base name */
	const char *name;
	int err;
	uint64_t address;
};

static int find_symbol_in(const struct mapping *mapping, void *ctx)
{
	struct symbol_search *search = ctx;
	char path[PATH_MAX + 64];
	uint64_t offset = 0;

	if (mapping->offset ||
	    (strchr(search->library, '/') ? strcmp(mapping->path, search->library)
					  : strcmp(base_name(mapping->path), search->library)))
		return 0;
	mapping_openable_path(search->pid, mapping, path, sizeof(path));
	search->err = elf_symbol_offset(path, search->name, &offset);
	search->address = mapping->start + offset;
	return 1;
}

int inject_symbol_address(pid_t pid, const char *library, const char *name, uint64_t *address)
{
	struct symbol_search search = {
		.pid = pid, .library = library, .name = name, .err = -ENOENT
	};
	int found = for_each_mapping(pid, find_symbol_in, &search);

	if (found < 0)
		return found;
	if (!found)
		return -ENOENT; /* not mapped */
	if (!search.err)
		*address = search.address;
	return search.err;
}

struct maps_search {
	const char *const *names;
	char *path;
	size_t size;
};

static int match_name(const struct mapping *mapping, void *ctx)
{
	struct maps_search *search = ctx;
	const char *base = base_name(mapping->path);

	for (const char *const *name = search->names; *name; name++) {
		if (!strncmp(base, *name, strlen(*name))) {
			if (search->path)
				snprintf(search->path, search->size, "%s", mapping->path);
			return 1;
		}
	}
	return 0;
}

bool inject_maps(pid_t pid, const char *const *names, char *path, size_t size)
{
	struct maps_search search = { .names = names, .path = path, .size = size };

	return for_each_mapping(pid, match_name, &search) == 1;
}

int inject_find_loader(pid_t pid, struct inject_loader *loader)
{
	/* glibc 2.34+ and musl: dlopen in the C library; before: libdl's, else libc's own. */
	static const struct {
		const char *library, *dlopen, *dlerror, *dlclose;
	} places[] = {
		{ "libc.so", "dlopen", "dlerror", "dlclose" },
		{ "libdl.so", "dlopen", "dlerror", "dlclose" },
		{ "ld-musl-", "dlopen", "dlerror", "dlclose" },
		{ "libc.musl-", "dlopen", "dlerror", "dlclose" },
		{ "libc.so", "__libc_dlopen_mode", NULL, "__libc_dlclose" },
	};
	int err = -ENOENT;

	memset(loader, 0, sizeof(*loader));
	for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
		const char *const names[] = { places[i].library, NULL };
		char path[PATH_MAX];

		if (!inject_maps(pid, names, path, sizeof(path)))
			continue;
		err = inject_symbol_address(pid, path, places[i].dlopen, &loader->dlopen);
		if (err == -ESRCH)
			return err;
		if (err)
			continue;
		if (places[i].dlerror)
			inject_symbol_address(pid, path, places[i].dlerror, &loader->dlerror);
		inject_symbol_address(pid, path, places[i].dlclose, &loader->dlclose);
		snprintf(loader->found_in, sizeof(loader->found_in), "%s in %s", places[i].dlopen,
			 path);
		return 0;
	}
	return err == -ESRCH ? err : -ENOENT;
}

/* The fields of /proc/PID/status that say whether it may be stopped. */
struct process_status {
	char name[64];
	char state;
	int seccomp;
	pid_t tracer;
	uid_t uid;
};

static int read_status(pid_t pid, struct process_status *status)
{
	char path[64], line[256];
	FILE *file;

	memset(status, 0, sizeof(*status));
	status->seccomp = -1;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	file = fopen(path, "re");
	if (!file)
		return errno == ENOENT ? -ESRCH : -errno;
	while (fgets(line, sizeof(line), file)) {
		unsigned int uid;

		if (!strncmp(line, "Name:", 5))
			sscanf(line + 5, " %63[^\n]", status->name);
		else if (!strncmp(line, "State:", 6))
			sscanf(line + 6, " %c", &status->state);
		else if (!strncmp(line, "Seccomp:", 8))
			sscanf(line + 8, "%d", &status->seccomp);
		else if (!strncmp(line, "TracerPid:", 10))
			sscanf(line + 10, "%d", &status->tracer);
		else if (sscanf(line, "Uid: %u", &uid) == 1)
			status->uid = uid;
	}
	fclose(file);
	return 0;
}

/* 64 if the process's executable is a 64-bit ELF file, 32, or 0 when unknown. */
static int exe_class(pid_t pid)
{
	unsigned char ident[EI_NIDENT];
	char path[64];
	int fd, bits = 0;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (read(fd, ident, sizeof(ident)) == (ssize_t)sizeof(ident) &&
	    !memcmp(ident, ELFMAG, SELFMAG))
		bits = ident[EI_CLASS] == ELFCLASS64 ? 64 : ident[EI_CLASS] == ELFCLASS32 ? 32 : 0;
	close(fd);
	return bits;
}

static int yama_scope(void)
{
	FILE *file = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int scope = 0;

	if (!file)
		return 0;
	if (fscanf(file, "%d", &scope) != 1)
		scope = 0;
	fclose(file);
	return scope;
}

int inject_check(pid_t pid, char *why, size_t size)
{
	static const char *const loaders[] = { "ld-linux", "ld-musl", "ld.so", NULL };
	struct process_status status;
	char tracer[64];
	int err;

#if !defined(__x86_64__)
	snprintf(why, size,
		 "loading a library into a running process is done on x86-64 only; process %d "
		 "is left untouched",
		 pid);
	return -ENOTSUP;
#endif
	err = read_status(pid, &status);
	if (err) {
		snprintf(why, size, "no process %d", pid);
		return err;
	}
	if (status.seccomp > 0) {
		snprintf(
			why, size,
			"process %d (%s) runs in seccomp %s mode (Seccomp: %d in /proc/%d/status): "
			"a system call that loading a library makes could kill it, so it is left "
			"untouched",
			pid, status.name, status.seccomp == 1 ? "strict" : "filter", status.seccomp,
			pid);
		return -EPERM;
	}
	if (status.state == 'T' || status.state == 't') {
		snprintf(why, size,
			 "process %d (%s) is stopped (SIGSTOP, Ctrl-Z, or a debugger): let it run "
			 "first; it is left untouched",
			 pid, status.name);
		return -EAGAIN;
	}
	if (status.tracer > 0) {
		process_name(status.tracer, tracer, sizeof(tracer));
		snprintf(why, size,
			 "process %d (%s) is traced by process %d (%s), a debugger or strace: only "
			 "one tracer may stop it; it is left untouched",
			 pid, status.name, status.tracer, tracer);
		return -EBUSY;
	}
	if (!inject_maps(pid, loaders, NULL, 0)) {
		snprintf(why, size,
			 "process %d (%s) is statically linked: it has no dynamic loader to load a "
			 "library with; it is left untouched",
			 pid, status.name);
		return -ENOEXEC;
	}
	if (exe_class(pid) == 32) {
		snprintf(
			why, size,
			"process %d (%s) is a 32-bit process: only 64-bit ones are loaded into; it "
			"is left untouched",
			pid, status.name);
		return -ENOTSUP;
	}
	if (yama_scope() >= 3) {
		snprintf(why, size,
			 "cannot stop process %d (%s): kernel.yama.ptrace_scope is 3, no process "
			 "may use ptrace on this host; it is left untouched",
			 pid, status.name);
		return -EPERM;
	}
	if (geteuid() && geteuid() != status.uid) {
		snprintf(
			why, size,
			"cannot stop process %d (%s): it belongs to another user (run as root); it "
			"is left untouched",
			pid, status.name);
		return -EPERM;
	}
	return 0;
}
