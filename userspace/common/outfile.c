// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Outputs that never destroy what was there: see outfile.h. The new
 * contents are written beside the output, so that the rename stays on one
 * file system and is atomic: a reader sees the old file or the new one,
 * never a cut one, and a failed or killed command leaves the old one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/diag.h"
#include "common/outfile.h"

#define TEMP_TRIES 100
/* Temporary files at once: one per Legion Prof log (4096 processes at most), or one. */
#define TEMPS_MAX 4100

/* The temporary files not renamed or removed yet, for a signal to remove. */
static char *volatile temps[TEMPS_MAX];

static void track(char *temp)
{
	for (int i = 0; i < TEMPS_MAX; i++) {
		if (!temps[i]) {
			temps[i] = temp;
			return;
		}
	}
}

static void untrack(const char *temp)
{
	for (int i = 0; i < TEMPS_MAX; i++) {
		if (temps[i] == temp)
			temps[i] = NULL;
	}
}

static void remove_temps(int signo)
{
	for (int i = 0; i < TEMPS_MAX; i++) {
		if (temps[i])
			unlink(temps[i]);
	}
	signal(signo, SIG_DFL);
	raise(signo);
}

void out_file_remove_on_signals(void)
{
	struct sigaction action = { .sa_handler = remove_temps };

	sigaction(SIGINT, &action, NULL);
	sigaction(SIGTERM, &action, NULL);
	sigaction(SIGHUP, &action, NULL);
}

bool out_file_is_input(const char *path, const char *const *inputs, int input_count)
{
	struct stat st, input;

	if (stat(path, &st))
		return false;
	for (int i = 0; i < input_count; i++) {
		if (inputs[i] && !stat(inputs[i], &input) && st.st_dev == input.st_dev &&
		    st.st_ino == input.st_ino)
			return true;
	}
	return false;
}

/* /dev/stdout and the like name a descriptor: there is no file to rename over. */
static bool names_descriptor(const char *path)
{
	return !strcmp(path, "/dev/stdout") || !strcmp(path, "/dev/stderr") ||
	       !strncmp(path, "/dev/fd/", 8) || !strncmp(path, "/proc/self/fd/", 14);
}

/* A symlink to a file stands for that file: write through it, not over it. */
static char *resolve(const char *path)
{
	struct stat st;
	char *real;

	if (!lstat(path, &st) && S_ISLNK(st.st_mode)) {
		real = realpath(path, NULL);
		if (real)
			return real;
	}
	return strdup(path);
}

/* Best effort: a file root rewrites for a user stays the user's, with its mode. */
static void take_over(int fd, const struct stat *old)
{
	int err = fchown(fd, old->st_uid, old->st_gid);

	err = fchmod(fd, old->st_mode & 07777) ?: err;
	(void)err; /* the contents are what matters */
}

static int create_temp(struct out_file *out, unsigned int flags)
{
	int fd = -EEXIST;

	for (int i = 0; i < TEMP_TRIES && fd == -EEXIST; i++) {
		char *temp;
		int length;

		if (flags & OUT_FILE_PARTIAL)
			length = asprintf(&temp, "%s.partial", out->path);
		else if (!i)
			length = asprintf(&temp, "%s.tmp.%d", out->path, (int)getpid());
		else
			length = asprintf(&temp, "%s.tmp.%d.%d", out->path, (int)getpid(), i);
		if (length < 0)
			return -ENOMEM;
		fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd >= 0) {
			out->temp = temp;
			/* A recorder's stays: it holds what was recorded. */
			if (!(flags & OUT_FILE_PARTIAL))
				track(temp);
			return fd;
		}
		fd = -errno;
		if (fd == -EEXIST && flags & OUT_FILE_PARTIAL) {
			diag("%s exists: left by a recorder that is still running or "
			     "was killed (optrace report reads it); move or remove it, or give "
			     "another -o",
			     temp);
		} else if (fd != -EEXIST || i == TEMP_TRIES - 1) {
			diag("cannot create %s: %s", temp, strerror(-fd));
		}
		free(temp);
		if (flags & OUT_FILE_PARTIAL)
			break;
	}
	return fd;
}

int out_file_open(struct out_file *out, const char *path, unsigned int flags,
		  const char *const *inputs, int input_count)
{
	struct stat st;
	bool exists;
	int fd;

	memset(out, 0, sizeof(*out));
	out->path = resolve(path);
	if (!out->path)
		return -ENOMEM;
	exists = !stat(out->path, &st);
	if (exists && S_ISDIR(st.st_mode)) {
		diag("%s is a directory: give the file to write", path);
		fd = -EISDIR;
		goto fail;
	}
	if (exists && out_file_is_input(out->path, inputs, input_count)) {
		diag("%s is also an input of this command, which would destroy it: "
		     "give another output",
		     path);
		fd = -EINVAL;
		goto fail;
	}
	if ((exists && !S_ISREG(st.st_mode)) || names_descriptor(path)) {
		/* A device, a pipe, a descriptor: written in place, as there is no other way. */
		fd = open(out->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			fd = -errno;
			diag("cannot open %s: %s", path, strerror(-fd));
			goto fail;
		}
		return fd;
	}
	fd = create_temp(out, flags);
	if (fd < 0)
		goto fail;
	if (exists)
		take_over(fd, &st);
	return fd;
fail:
	free(out->path);
	out->path = NULL;
	return fd;
}

static void out_file_free(struct out_file *out)
{
	if (out->temp)
		untrack(out->temp);
	free(out->path);
	free(out->temp);
	out->path = NULL;
	out->temp = NULL;
}

int out_file_commit(struct out_file *out)
{
	int err = 0;

	if (out->temp && rename(out->temp, out->path)) {
		err = -errno;
		diag("cannot rename %s to %s: %s; the output is in %s", out->temp, out->path,
		     strerror(-err), out->temp);
	}
	out_file_free(out);
	return err;
}

void out_file_discard(struct out_file *out)
{
	if (out->temp)
		unlink(out->temp);
	out_file_free(out);
}

const char *out_file_name(const struct out_file *out)
{
	return out->temp ? out->temp : out->path;
}
