// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A process's mappings (/proc/PID/maps) name the liboptrace it loaded; the
 * file is opened through /proc/PID/root so that a process in a container,
 * with its own mount namespace, is found as well as any other.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
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

/* Takes " (deleted)" off a mapping's path; true if it was there. */
static bool strip_deleted(char *path)
{
	static const char suffix[] = " (deleted)";
	size_t length = strlen(path);

	if (length < sizeof(suffix) || strcmp(path + length - (sizeof(suffix) - 1), suffix))
		return false;
	path[length - (sizeof(suffix) - 1)] = '\0';
	return true;
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

int find_liboptrace(pid_t pid, struct library *library)
{
	char maps_path[64], *line = NULL;
	size_t size = 0;
	int err = -ENOENT;
	FILE *maps;

	snprintf(maps_path, sizeof(maps_path), "/proc/%d/maps", pid);
	maps = fopen(maps_path, "re");
	if (!maps)
		return errno == ENOENT ? -ESRCH : -errno;
	while (getline(&line, &size, maps) > 0) {
		unsigned long start, end, offset;
		char *path = strchr(line, '/');
		bool deleted;
		struct stat st;

		/* The library's first page (offset 0) is where it is loaded. */
		if (!path || sscanf(line, "%lx-%lx %*s %lx", &start, &end, &offset) != 3 || offset)
			continue;
		path[strcspn(path, "\n")] = '\0';
		deleted = strip_deleted(path);
		if (!is_liboptrace_name(path))
			continue;
		/*
		 * A library replaced on disk (an upgrade, make install) stays
		 * mapped: its file is still reachable through map_files.
		 */
		if (deleted)
			snprintf(library->path, sizeof(library->path), "/proc/%d/map_files/%lx-%lx",
				 pid, start, end);
		else
			snprintf(library->path, sizeof(library->path), "/proc/%d/root%s", pid,
				 path);
		snprintf(library->mapped_path, sizeof(library->mapped_path), "%s", path);
		if (stat(library->path, &st)) {
			err = -errno;
			continue;
		}
		library->dev = st.st_dev;
		library->ino = st.st_ino;
		library->base = start;
		err = 0;
		break;
	}
	free(line);
	fclose(maps);
	return err;
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

int for_each_liboptrace_process(int (*callback)(pid_t pid, const struct library *library,
						void *ctx),
				void *ctx)
{
	DIR *proc = opendir("/proc");
	struct dirent *entry;
	int err = 0;

	if (!proc)
		return -errno;
	while ((entry = readdir(proc))) {
		struct library library;
		char *end;
		long pid = strtol(entry->d_name, &end, 10);

		if (*end || pid <= 0)
			continue;
		if (find_liboptrace((pid_t)pid, &library))
			continue;
		err = callback((pid_t)pid, &library, ctx);
		if (err)
			break;
	}
	closedir(proc);
	return err;
}
