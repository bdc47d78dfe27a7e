// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Outputs that never destroy what was there and never follow what someone
 * else planted: see outfile.h. Everything happens relative to the output's
 * folder, opened once; the new contents are written beside the output, so
 * that the rename stays on one file system and is atomic: a reader sees
 * the old file or the new one, never a cut one, and a failed or killed
 * command leaves the old one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/diag.h"
#include "common/outfile.h"

/* Temporary files at once: one per Legion Prof log (4096 processes at most), or one. */
#define TEMPS_MAX 4100

static const struct out_policy default_policy;

/* diag(), "-o: " in front where an option named the output: what the user should change. */
static void __attribute__((format(printf, 2, 3)))
out_diag(const struct out_policy *policy, const char *format, ...)
{
	char message[900];
	va_list args;

	va_start(args, format);
	vsnprintf(message, sizeof(message), format, args);
	va_end(args);
	if (policy->named_by)
		diag("%s: %s", policy->named_by, message);
	else
		diag("%s", message);
}

/* The temporary files not renamed or removed yet, for a signal to remove. */
static struct {
	int dir;
	char *name;
} volatile temps[TEMPS_MAX];

static void track(int dir, char *name)
{
	for (int i = 0; i < TEMPS_MAX; i++) {
		if (!temps[i].name) {
			temps[i].dir = dir;
			temps[i].name = name;
			return;
		}
	}
}

static void untrack(const char *name)
{
	for (int i = 0; i < TEMPS_MAX; i++) {
		if (temps[i].name == name)
			temps[i].name = NULL;
	}
}

static void remove_temps(int signo)
{
	for (int i = 0; i < TEMPS_MAX; i++) {
		if (temps[i].name)
			unlinkat(temps[i].dir, temps[i].name, 0);
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

static bool same_as_input(const struct stat *st, const char *const *inputs, int input_count)
{
	struct stat input;

	for (int i = 0; i < input_count; i++) {
		if (inputs[i] && !stat(inputs[i], &input) && st->st_dev == input.st_dev &&
		    st->st_ino == input.st_ino)
			return true;
	}
	return false;
}

static bool is_input_fd(int fd, const char *const *inputs, int input_count)
{
	struct stat st;

	return !fstat(fd, &st) && same_as_input(&st, inputs, input_count);
}

bool out_file_is_input(const char *path, const char *const *inputs, int input_count)
{
	struct stat st;

	return !stat(path, &st) && same_as_input(&st, inputs, input_count);
}

/* /dev/stdout and the like name a descriptor: there is no file to rename over. */
static bool names_descriptor(const char *path)
{
	return !strcmp(path, "/dev/stdout") || !strcmp(path, "/dev/stderr") ||
	       !strncmp(path, "/dev/fd/", 8) || !strncmp(path, "/proc/self/fd/", 14);
}

static bool ours(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/*
 * A folder someone other than root and us can change entries of: another
 * user owns it (the owner of a sticky folder may still rename every entry
 * in it), or may write it without the sticky bit that keeps each user to
 * the entries they own.
 */
static bool shared(const struct stat *st)
{
	if (!ours(st->st_uid))
		return true;
	if (st->st_mode & S_ISVTX)
		return false;
	return st->st_mode & S_IWOTH ||
	       (st->st_mode & S_IWGRP && st->st_gid != 0 && st->st_gid != getegid());
}

/*
 * The walk to an output's folder, one component at a time, each relative to
 * the descriptor of the folder before it: a folder checked is the folder
 * the next step starts from, so nothing swapped in by name after a check is
 * ever used. A symbolic link is followed only if root or we own it (root's
 * /var/run), as the folder holding it is one only root and we can change;
 * the kernel's own resolution is never asked to follow one.
 */
struct walk {
	const struct out_policy *policy;
	int dir;	      /* the folder reached; -1 before the first */
	char shown[PATH_MAX]; /* its path as walked, for messages */
	int links;	      /* links followed, at most as many as the kernel's */
};

#define WALK_LINKS_MAX 40

/*
 * openat2(2) with RESOLVE_NO_SYMLINKS where the kernel has it (5.6+; asked
 * once: ENOSYS says no), else openat(2) with O_NOFOLLOW: a link, magic ones
 * such as /proc/self/fd/N included, is refused rather than followed.
 */
static int open_step(int dir, const char *name)
{
	static bool no_openat2;
	int flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, fd;

	if (!no_openat2) {
		struct open_how how = {
			.flags = (uint64_t)flags,
			.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
		};

		fd = (int)syscall(SYS_openat2, dir, name, &how, sizeof(how));
		if (fd >= 0 || errno != ENOSYS)
			return fd;
		no_openat2 = true;
	}
	return openat(dir, name, flags);
}

/* What goes between the walk's path and a name after it, in messages. */
static const char *separator(const struct walk *w)
{
	size_t length = strlen(w->shown);

	return length && w->shown[length - 1] == '/' ? "" : "/";
}

/* The walk's path grown by name (its length, as snprintf's: cut past the buffer). */
static int shown_append(struct walk *w, const char *name)
{
	size_t length = strlen(w->shown);

	return snprintf(w->shown + length, sizeof(w->shown) - length, "%s%s", separator(w), name);
}

/* The walk moved to the folder fd (taken, or a negative errno), checked on that descriptor. */
static int walk_to(struct walk *w, int fd)
{
	struct stat st;

	if (fd < 0) {
		out_diag(w->policy, "cannot open the folder %s: %s", w->shown, strerror(-fd));
		return fd;
	}
	if (w->dir >= 0)
		close(w->dir);
	w->dir = fd;
	if (fstat(fd, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode)) {
		out_diag(w->policy, "%s is not a directory: give the folder to write in", w->shown);
		return -ENOTDIR;
	}
	if (shared(&st)) {
		out_diag(w->policy,
			 "%s can be changed by another user (uid %u owns it, mode %04o): a file "
			 "optrace writes there could be swapped or read; write into a folder only "
			 "root and you can change, or give --force",
			 w->shown, (unsigned int)st.st_uid, (unsigned int)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

static int walk_components(struct walk *w, const char *path);

/* The link name in the folder reached: followed if root's or ours, else refused. */
static int walk_link(struct walk *w, const char *name, const struct stat *link, const char *rest)
{
	char target[PATH_MAX], *next;
	ssize_t length;
	int err;

	if (!ours(link->st_uid)) {
		out_diag(w->policy,
			 "%s%s%s is a symbolic link of another user (uid %u): optrace follows no "
			 "link someone else could have planted on the way to an output; give the "
			 "path it points to, or --force",
			 w->shown, separator(w), name, (unsigned int)link->st_uid);
		return -ELOOP;
	}
	if (++w->links > WALK_LINKS_MAX) {
		out_diag(w->policy, "%s%s%s: too many symbolic links on the way", w->shown,
			 separator(w), name);
		return -ELOOP;
	}
	length = readlinkat(w->dir, name, target, sizeof(target) - 1);
	if (length < 0) {
		err = -errno;
		out_diag(w->policy, "cannot read the link %s%s%s: %s", w->shown, separator(w), name,
			 strerror(-err));
		return err;
	}
	target[length] = '\0';
	if (asprintf(&next, "%s/%s", target, rest) < 0)
		return -ENOMEM;
	err = walk_components(w, next);
	free(next);
	return err;
}

/* Every component of path from the folder reached (from / if path is absolute). */
static int walk_components(struct walk *w, const char *path)
{
	char *copy = strdup(path), *cursor, *name;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	if (path[0] == '/') {
		snprintf(w->shown, sizeof(w->shown), "/");
		err = walk_to(w, open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
	}
	for (cursor = copy; !err && (name = strsep(&cursor, "/"));) {
		struct stat st;
		int fd;

		if (!*name || !strcmp(name, "."))
			continue;
		if (fstatat(w->dir, name, &st, AT_SYMLINK_NOFOLLOW)) {
			err = -errno;
			out_diag(w->policy, "cannot open the folder %s%s%s: %s", w->shown,
				 separator(w), name, strerror(-err));
			break;
		}
		if (S_ISLNK(st.st_mode)) {
			err = walk_link(w, name, &st, cursor ? cursor : "");
			break; /* the rest was walked after the link's target */
		}
		fd = open_step(w->dir, name);
		if (fd < 0)
			fd = -errno;
		shown_append(w, name);
		if (fd == -ENOTDIR || fd == -ELOOP) {
			/* never a folder, or a link since the look above: not written into */
			out_diag(w->policy,
				 "%s is not a directory (or was just replaced by a link): give the "
				 "folder to write in",
				 w->shown);
			err = fd;
			break;
		}
		err = walk_to(w, fd);
	}
	free(copy);
	return err;
}

/*
 * The folder at path walked as above; a descriptor that can also be read
 * (export --legion lists its folder), or a negative errno, said.
 */
static int walk_folder(const struct out_policy *policy, const char *path)
{
	struct walk w = { .policy = policy, .dir = -1 };
	int err, fd;

	/* A relative path from here: the working folder is checked, not the way to it. */
	if (path[0] != '/') {
		snprintf(w.shown, sizeof(w.shown), ".");
		fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		err = walk_to(&w, fd < 0 ? -errno : fd);
		if (err)
			goto fail;
	}
	err = walk_components(&w, path);
	if (err)
		goto fail;
	/* Reopened readable through "." of the folder held: no name is looked up again. */
	fd = openat(w.dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 && errno == EACCES)
		return w.dir; /* a folder we may only pass through: written into all the same */
	if (fd < 0) {
		err = -errno;
		out_diag(policy, "cannot open the folder %s: %s", path, strerror(-err));
		goto fail;
	}
	close(w.dir);
	return fd;
fail:
	if (w.dir >= 0)
		close(w.dir);
	return err;
}

/* The folder path: walked and checked, or (--force) opened as the kernel resolves it. */
static int open_folder(const struct out_policy *policy, const char *path)
{
	struct stat st;
	int dir, err;

	if (!policy->force)
		return walk_folder(policy, path);
	dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0 || fstat(dir, &st)) {
		err = -errno;
		if (err == -ENOTDIR)
			out_diag(policy, "%s is not a directory: give the folder to write in",
				 path);
		else
			out_diag(policy, "cannot open the folder %s: %s", path, strerror(-err));
		if (dir >= 0)
			close(dir);
		return err;
	}
	return dir;
}

int out_dir_open(const struct out_policy *policy, const char *path, bool *made)
{
	char *copy = strdup(path), *base_copy = strdup(path);
	int parent = -1, err;

	*made = false;
	if (!copy || !base_copy) {
		err = -ENOMEM;
		goto done;
	}
	/* Made in its parent, reached as any output's folder is, then walked to itself. */
	if (!policy)
		policy = &default_policy;
	parent = open_folder(policy, dirname(copy));
	if (parent < 0) {
		err = parent;
		goto done;
	}
	*made = !mkdirat(parent, basename(base_copy), 0755);
	if (!*made && errno != EEXIST) {
		err = -errno;
		out_diag(policy, "cannot create %s: %s", path, strerror(-err));
		goto done;
	}
	err = open_folder(policy, path);
done:
	if (parent >= 0)
		close(parent);
	free(copy);
	free(base_copy);
	return err;
}

/*
 * Best effort: a file of ours that is rewritten keeps its group and its
 * permissions, never a setuid, setgid or sticky bit (new contents, which a
 * traced process may have chosen, would run with them). Another user's
 * (replaced only with --force) hands nothing over: the new file is ours.
 */
static void take_over(int fd, const struct stat *old)
{
	int err;

	if (!ours(old->st_uid))
		return;
	err = fchown(fd, old->st_uid, old->st_gid);
	err = fchmod(fd, old->st_mode & 0777) ?: err;
	(void)err; /* the contents are what matters */
}

static char *joined(const struct out_file *out, const char *dir_path, const char *name)
{
	char *path;

	if (!strcmp(dir_path, ".") && !strchr(out->path, '/'))
		return strdup(name);
	return asprintf(&path, "%s/%s", dir_path, name) < 0 ? NULL : path;
}

static int create_temp(struct out_file *out, const char *dir_path, unsigned int flags)
{
	unsigned char random[8];
	int fd, length;

	if (flags & OUT_FILE_PARTIAL) {
		length = asprintf(&out->temp_name, "%s.partial", out->name);
	} else {
		if (getrandom(random, sizeof(random), 0) != sizeof(random))
			return -errno;
		length = asprintf(&out->temp_name, "%s.tmp.%02x%02x%02x%02x%02x%02x%02x%02x",
				  out->name, random[0], random[1], random[2], random[3], random[4],
				  random[5], random[6], random[7]);
	}
	if (length < 0)
		return -ENOMEM;
	out->temp = joined(out, dir_path, out->temp_name);
	if (!out->temp)
		return -ENOMEM;
	fd = openat(out->dir, out->temp_name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0644);
	if (fd >= 0) {
		/* A recorder's stays: it holds what was recorded. */
		if (!(flags & OUT_FILE_PARTIAL))
			track(out->dir, out->temp_name);
		return fd;
	}
	fd = -errno;
	if (fd == -EEXIST && flags & OUT_FILE_PARTIAL)
		out_diag(&out->policy,
			 "%s exists: left by a recorder that is still running or was killed "
			 "(optrace report reads it); move or remove it, or give another -o",
			 out->temp);
	else
		out_diag(&out->policy, "cannot create %s: %s", out->temp, strerror(-fd));
	return fd;
}

/* What stands at the output's name already: refused, written in place (1), or replaced (0). */
static int check_existing(struct out_file *out, const struct stat *st, const char *const *inputs,
			  int input_count)
{
	struct stat target;

	if (S_ISDIR(st->st_mode)) {
		out_diag(&out->policy, "%s is a directory: give the file to write", out->path);
		return -EISDIR;
	}
	/* A link is replaced, not written through; one to an input is a mistake all the same. */
	if (same_as_input(st, inputs, input_count) ||
	    (S_ISLNK(st->st_mode) && !fstatat(out->dir, out->name, &target, 0) &&
	     same_as_input(&target, inputs, input_count))) {
		out_diag(&out->policy,
			 "%s is also an input of this command, which would destroy it: give "
			 "another output",
			 out->path);
		return -EINVAL;
	}
	if (!ours(st->st_uid) && !out->policy.force) {
		out_diag(&out->policy,
			 "%s belongs to another user (uid %u): optrace neither writes into nor "
			 "replaces it; give another output",
			 out->path, (unsigned int)st->st_uid);
		return -EPERM;
	}
	if (S_ISCHR(st->st_mode) || S_ISFIFO(st->st_mode))
		return 1;
	if (!S_ISREG(st->st_mode) && !S_ISLNK(st->st_mode)) {
		out_diag(&out->policy, "%s is not a file: give the file to write", out->path);
		return -EINVAL;
	}
	return 0;
}

static void out_file_free(struct out_file *out)
{
	if (out->temp_name)
		untrack(out->temp_name);
	if (out->dir >= 0 && !out->dir_shared)
		close(out->dir);
	free(out->path);
	free(out->temp);
	free(out->name);
	free(out->temp_name);
	memset(out, 0, sizeof(*out));
	out->dir = -1;
}

static int open_in(struct out_file *out, const char *dir_path, unsigned int flags,
		   const char *const *inputs, int input_count)
{
	struct stat st;
	bool exists = !fstatat(out->dir, out->name, &st, AT_SYMLINK_NOFOLLOW);
	int fd, in_place = 0;

	if (exists) {
		in_place = check_existing(out, &st, inputs, input_count);
		if (in_place < 0)
			return in_place;
	}
	if (in_place) {
		/* A device or a pipe of ours: written in place, as there is nothing to rename over.
		 */
		fd = openat(out->dir, out->name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			fd = -errno;
			out_diag(&out->policy, "cannot open %s: %s", out->path, strerror(-fd));
		}
		return fd;
	}
	fd = create_temp(out, dir_path, flags);
	if (fd < 0)
		return fd;
	/* Not a link, not a second name of another file: one we may stand in for. */
	if (exists && S_ISREG(st.st_mode) && st.st_nlink == 1)
		take_over(fd, &st);
	if (flags & OUT_FILE_NOW && renameat(out->dir, out->temp_name, out->dir, out->name)) {
		int err = -errno;

		out_diag(&out->policy, "cannot create %s: %s", out->path, strerror(-err));
		unlinkat(out->dir, out->temp_name, 0);
		close(fd);
		return err;
	}
	if (flags & OUT_FILE_NOW) {
		untrack(out->temp_name);
		free(out->temp);
		free(out->temp_name);
		out->temp = out->temp_name = NULL;
	}
	return fd;
}

int out_file_openat(struct out_file *out, const struct out_policy *policy, int dir,
		    const char *dir_path, const char *name, unsigned int flags,
		    const char *const *inputs, int input_count)
{
	int fd;

	memset(out, 0, sizeof(*out));
	out->policy = policy ? *policy : default_policy;
	out->dir_shared = flags & OUT_FILE_SHARED_DIR;
	out->dir = out->dir_shared ? dir : fcntl(dir, F_DUPFD_CLOEXEC, 0);
	out->name = strdup(name);
	if (asprintf(&out->path, "%s/%s", dir_path, name) < 0)
		out->path = NULL;
	fd = out->dir < 0 || !out->name || !out->path
		     ? -ENOMEM
		     : open_in(out, dir_path, flags, inputs, input_count);
	if (fd < 0)
		out_file_free(out);
	return fd;
}

int out_file_open(struct out_file *out, const struct out_policy *policy, const char *path,
		  unsigned int flags, const char *const *inputs, int input_count)
{
	char *copy = strdup(path), *base_copy = strdup(path), *dir_path, *name;
	int fd;

	memset(out, 0, sizeof(*out));
	out->policy = policy ? *policy : default_policy;
	out->dir = -1;
	out->path = strdup(path);
	if (!copy || !base_copy || !out->path) {
		fd = -ENOMEM;
		goto done;
	}
	if (names_descriptor(path)) {
		/* A descriptor of ours: written in place, as there is no other way. */
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0) {
			fd = -errno;
			out_diag(&out->policy, "cannot open %s: %s", path, strerror(-fd));
			goto done;
		}
		/* By what it is, not its name: the input itself, given as one of our descriptors.
		 */
		if (is_input_fd(fd, inputs, input_count)) {
			out_diag(
				&out->policy,
				"%s is also an input of this command, which would destroy it: give "
				"another output",
				path);
			close(fd);
			fd = -EINVAL;
		}
		goto done;
	}
	dir_path = dirname(copy);
	name = basename(base_copy);
	if (!*name || !strcmp(name, ".") || !strcmp(name, "..") || path[strlen(path) - 1] == '/') {
		out_diag(&out->policy, "%s is a directory: give the file to write", path);
		fd = -EISDIR;
		goto done;
	}
	out->name = strdup(name);
	out->dir = open_folder(&out->policy, dir_path);
	if (!out->name || out->dir < 0) {
		fd = out->dir < 0 ? out->dir : -ENOMEM;
		goto done;
	}
	fd = open_in(out, dir_path, flags, inputs, input_count);
done:
	free(copy);
	free(base_copy);
	if (fd < 0)
		out_file_free(out);
	return fd;
}

int out_file_commit(struct out_file *out)
{
	int err = 0;

	if (out->temp_name && renameat(out->dir, out->temp_name, out->dir, out->name)) {
		err = -errno;
		out_diag(&out->policy, "cannot rename %s to %s: %s; the output is in %s", out->temp,
			 out->path, strerror(-err), out->temp);
	}
	out_file_free(out);
	return err;
}

void out_file_discard(struct out_file *out)
{
	if (out->temp_name)
		unlinkat(out->dir, out->temp_name, 0);
	out_file_free(out);
}

const char *out_file_name(const struct out_file *out)
{
	return out->temp ? out->temp : out->path;
}
