// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A process's mappings (/proc/PID/maps) name the liboptrace it loaded; the
 * file is opened through /proc/PID/root so that a process in a container,
 * with its own mount namespace, is found as well as any other.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/targets.h"

int is_liboptrace_name(const char *path)
{
	const char *base = strrchr(path, '/');
	const char *rest;

	base = base ? base + 1 : path;
	if (strncmp(base, "liboptrace.so", 13))
		return 0;
	for (rest = base + 13; *rest; rest++) {
		if (*rest != '.' && !isdigit((unsigned char)*rest))
			return 0;
	}
	return 1;
}

int target_file_open(const char *path)
{
	struct stat st;
	int fd, err;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return -ENOTREGULAR;
	}
	return fd;
}

const char *target_strerror(int err)
{
	if (err == -ENOTREGULAR || err == ENOTREGULAR)
		return "not a regular file (a FIFO or device put at the path it names)";
	return strerror(err < 0 ? -err : err);
}

/* Calls fn for each file mapping of process pid until it returns non-zero (returned). */
int for_each_mapping(pid_t pid, mapping_fn fn, void *ctx)
{
	static const char deleted[] = " (deleted)";
	char maps_path[64], *line = NULL;
	size_t line_size = 0;
	FILE *maps;
	int result = 0;

	snprintf(maps_path, sizeof(maps_path), "/proc/%d/maps", pid);
	maps = fopen(maps_path, "re");
	if (!maps)
		return errno == ENOENT ? -ESRCH : -errno;
	while (!result && getline(&line, &line_size, maps) > 0) {
		struct mapping mapping = { 0 };
		char *path = strchr(line, '/');
		unsigned long start, end, offset;
		size_t length;

		if (!path ||
		    sscanf(line, "%lx-%lx %4s %lx", &start, &end, mapping.perms, &offset) != 4)
			continue;
		path[strcspn(path, "\n")] = '\0';
		length = strlen(path);
		if (length >= sizeof(deleted) &&
		    !strcmp(path + length - (sizeof(deleted) - 1), deleted)) {
			path[length - (sizeof(deleted) - 1)] = '\0';
			mapping.deleted = true;
		}
		mapping.start = start;
		mapping.end = end;
		mapping.offset = offset;
		snprintf(mapping.path, sizeof(mapping.path), "%s", path);
		result = fn(&mapping, ctx);
	}
	free(line);
	fclose(maps);
	return result;
}

/* A mapped file as this process can open it: through the process's root, or map_files. */
void mapping_openable_path(pid_t pid, const struct mapping *mapping, char *out, size_t size)
{
	if (mapping->deleted)
		snprintf(out, size, "/proc/%d/map_files/%lx-%lx", pid,
			 (unsigned long)mapping->start, (unsigned long)mapping->end);
	else
		snprintf(out, size, "/proc/%d/root%s", pid, mapping->path);
}

int process_of_id(pid_t id, pid_t *tgid)
{
	char path[64], line[256];
	int err = -EPROTO;
	FILE *status;

	snprintf(path, sizeof(path), "/proc/%d/status", id);
	status = fopen(path, "re");
	if (!status)
		return errno == ENOENT ? -ESRCH : -errno;
	while (fgets(line, sizeof(line), status)) {
		int value;

		if (sscanf(line, "Tgid: %d", &value) == 1) {
			*tgid = value;
			err = 0;
			break;
		}
	}
	fclose(status);
	return err;
}

const char *mappings_refused_hint(void)
{
	return geteuid() ? "are you root?"
			 : "the kernel refuses even root: a process of another user namespace, "
			   "or /proc mounted with hidepid";
}

struct liboptrace_search {
	pid_t pid;
	struct library *library;
	int err;
};

/* The library's first page (offset 0) is where it is loaded. */
static int match_liboptrace(const struct mapping *mapping, void *ctx)
{
	struct liboptrace_search *search = ctx;
	struct library *library = search->library;
	struct stat st;

	if (mapping->offset || !is_liboptrace_name(mapping->path))
		return 0;
	/* A library replaced on disk (an upgrade, make install) stays mapped: map_files. */
	mapping_openable_path(search->pid, mapping, library->path, sizeof(library->path));
	snprintf(library->mapped_path, sizeof(library->mapped_path), "%s", mapping->path);
	if (stat(library->path, &st)) {
		search->err = -errno;
		return 0;
	}
	/*
	 * A process in its own mount namespace can cover the path it maps with
	 * a FIFO: reading that would hang the tracer. Those who open it check
	 * again on the descriptor (target_file_open), for one swapped after this.
	 */
	if (!S_ISREG(st.st_mode)) {
		search->err = -ENOTREGULAR;
		return 0;
	}
	library->dev = st.st_dev;
	library->ino = st.st_ino;
	library->base = mapping->start;
	search->err = 0;
	return 1;
}

int find_liboptrace(pid_t pid, struct library *library)
{
	struct liboptrace_search search = { .pid = pid, .library = library, .err = -ENOENT };
	int err = for_each_mapping(pid, match_liboptrace, &search);

	return err < 0 ? err : search.err;
}

/* /proc/PID/stat from its third field (STATE), into line; NULL when the process is gone. */
static const char *stat_fields(pid_t pid, char *line, size_t size)
{
	char path[64], *after = NULL;
	FILE *file;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	file = fopen(path, "re");
	if (!file)
		return NULL;
	/* "PID (COMM) STATE PPID ...": the command may hold spaces and ')' */
	if (fgets(line, (int)size, file))
		after = strrchr(line, ')');
	fclose(file);
	return after ? after + 1 : NULL;
}

pid_t process_parent(pid_t pid)
{
	char line[512];
	const char *fields = stat_fields(pid, line, sizeof(line));
	int parent = 0;

	if (!fields || sscanf(fields, " %*c %d", &parent) != 1)
		return 0;
	return parent;
}

uint64_t process_start_time(pid_t pid)
{
	char line[512];
	const char *fields = stat_fields(pid, line, sizeof(line));
	unsigned long long start = 0;

	/* starttime is the 22nd field: STATE is the 3rd */
	if (!fields || sscanf(fields,
			      " %*c"
			      "%*s %*s %*s %*s %*s %*s %*s %*s %*s"
			      "%*s %*s %*s %*s %*s %*s %*s %*s %*s %llu",
			      &start) != 1)
		return 0;
	return start;
}

void process_name(pid_t pid, char *name, size_t size)
{
	char path[64];
	FILE *file;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	file = fopen(path, "re");
	if (!file || !fgets(name, (int)size, file))
		snprintf(name, size, "?");
	else
		name[strcspn(name, "\n")] = '\0';
	if (file)
		fclose(file);
}

/* Written by the scans, which run on one thread of a command (its main loop). */
#define PASSED_OVER_KEPT 16
static int passed_over;
static pid_t passed_over_pids[PASSED_OVER_KEPT];

int liboptrace_processes_passed_over(pid_t *pids, int max)
{
	for (int i = 0; i < max && i < passed_over && i < PASSED_OVER_KEPT; i++)
		pids[i] = passed_over_pids[i];
	return passed_over;
}

int for_each_liboptrace_process(int (*callback)(pid_t pid, const struct library *library,
						void *ctx),
				void *ctx)
{
	DIR *proc = opendir("/proc");
	struct dirent *entry;
	int err = 0;

	if (!proc)
		return -errno;
	passed_over = 0;
	while ((entry = readdir(proc))) {
		struct library library;
		char *end;
		long pid = strtol(entry->d_name, &end, 10);
		int found;

		if (*end || pid <= 0)
			continue;
		found = find_liboptrace((pid_t)pid, &library);
		if (found == -ENOTREGULAR && passed_over < PASSED_OVER_KEPT)
			passed_over_pids[passed_over] = (pid_t)pid;
		passed_over += found == -ENOTREGULAR;
		if (found)
			continue;
		err = callback((pid_t)pid, &library, ctx);
		if (err)
			break;
	}
	closedir(proc);
	return err;
}
