// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A running process read from outside (process_read.h): below the readers
 * of liboptrace's buffers, views and runtime info, which all go through it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

#include "trace/process_read.h"

int process_read(pid_t pid, uint64_t address, void *buffer, size_t size)
{
	struct iovec local = { .iov_base = buffer, .iov_len = size };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)address, .iov_len = size };
	ssize_t done = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (done < 0)
		return -errno;
	return (size_t)done == size ? 0 : -EFAULT;
}

int process_read_string(pid_t pid, uint64_t address, char *text, size_t size, bool *truncated)
{
	struct iovec local = { .iov_base = text, .iov_len = size };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)address, .iov_len = size };
	ssize_t done = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	*truncated = false;
	if (done < 0 || !size)
		return done < 0 ? -errno : -EINVAL;
	/* A string near the end of its mapping reads short: enough if it ends. */
	if (memchr(text, '\0', (size_t)done))
		return 0;
	if ((size_t)done < size) {
		text[0] = '\0';
		return -EFAULT;
	}
	text[size - 1] = '\0';
	*truncated = true;
	return 0;
}

int process_thread_count(pid_t pid, int limit)
{
	char path[64];
	struct dirent *entry;
	int count = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return limit;
	while ((entry = readdir(dir)) && count < limit)
		count += entry->d_name[0] != '.';
	closedir(dir);
	return count;
}
