/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Every file optrace creates goes through here. optrace runs as root in
 * folders other users can write, so a file is never opened through a path
 * someone else could have planted something at:
 *  - the path to the folder is walked one component at a time, each step
 *    relative to the folder before it and checked on its descriptor: a
 *    folder that another user owns, or can write without the sticky bit,
 *    is refused, and so is a symbolic link anywhere on the way unless root
 *    or we own it, unless the policy says force (--force);
 *  - the contents go to a temporary file of an unguessable name made in
 *    it with O_CREAT | O_EXCL | O_NOFOLLOW, renamed over the output once
 *    whole (out_file_commit: renameat replaces a link or a planted file,
 *    never writes through it), removed when the command fails
 *    (out_file_discard): the output stays as it was;
 *  - an output that is a character device or a FIFO (/dev/null, a pipe
 *    the user made) is written in place, only if it belongs to root or to
 *    us; /dev/stdout, /dev/fd/N and /proc/self/fd/N name a descriptor and
 *    are written in place too; an output that is one of the command's
 *    inputs (by device and inode, whatever its name) is refused.
 */
#ifndef OPTRACE_COMMON_OUTFILE_H
#define OPTRACE_COMMON_OUTFILE_H

#include <stdbool.h>

/*
 * What the command asked of its outputs, passed with each (NULL: the
 * defaults): force (--force) uses folders other users can write, and their
 * symbolic links to folders, anyway; named_by, the option that named the
 * output ("-o"), starts every message, as what the user should change.
 */
struct out_policy {
	bool force;
	const char *named_by;
};

struct out_file {
	char *path;	 /* the output as given, for messages */
	char *temp;	 /* where the contents go until committed, for messages; NULL: in place */
	int dir;	 /* the output's folder, opened once; -1: none (in place) */
	char *name;	 /* the output's name in dir */
	char *temp_name; /* the temporary file's name in dir */
	struct out_policy policy; /* as opened with */
	bool dir_shared;	  /* dir is the caller's (OUT_FILE_SHARED_DIR): not closed here */
};

/*
 * The temporary file is PATH.partial, created only if there is none (a
 * recorder's, which a user reads after a SIGKILL); else PATH.tmp.RANDOM.
 */
#define OUT_FILE_PARTIAL 1u
/*
 * The output is put in place at once, empty, and filled as the command goes
 * (stat -o with an interval): commit then only closes the folder.
 */
#define OUT_FILE_NOW 2u

/*
 * out_file_openat() uses the folder's descriptor as it is, without a
 * duplicate of its own: the caller keeps it open until the file is
 * committed or discarded. For a command writing many files in one folder
 * (export --legion), so that each costs no descriptor for its folder.
 */
#define OUT_FILE_SHARED_DIR 4u

/*
 * Creates the file where path's new contents go (with the group and the
 * permissions, never a setuid, setgid or sticky bit, of the file it will
 * replace if that is ours, else ours with 0644 less the umask) and returns its
 * descriptor (close-on-exec, the caller's to close), or a negative errno
 * with a message printed: path is a directory, the same file as one of the
 * input_count inputs, in a folder refused above, or cannot be created.
 */
int out_file_open(struct out_file *out, const struct out_policy *policy, const char *path,
		  unsigned int flags, const char *const *inputs, int input_count);
/* The same for name in the folder dir (from out_dir_open(); dir_path for messages). */
int out_file_openat(struct out_file *out, const struct out_policy *policy, int dir,
		    const char *dir_path, const char *name, unsigned int flags,
		    const char *const *inputs, int input_count);

/*
 * Opens the folder path for outputs, making it (0755) if there is none
 * (*made then true): a descriptor, or a negative errno with a message. A
 * symbolic link, something else than a folder, or a folder refused above
 * is refused.
 */
int out_dir_open(const struct out_policy *policy, const char *path, bool *made);

/* Renames the contents over the output (close the descriptor first). 0 or -errno, said. */
int out_file_commit(struct out_file *out);

/* Removes the contents: the output stays as it was. */
void out_file_discard(struct out_file *out);

/*
 * From now on SIGINT, SIGTERM and SIGHUP remove the temporary files not yet
 * committed or discarded, then end the process as they would have.
 */
void out_file_remove_on_signals(void);

/* The name being written: the temporary file, or the output itself. */
const char *out_file_name(const struct out_file *out);

/* True if path is one of the input_count inputs (the same file, by device and inode). */
bool out_file_is_input(const char *path, const char *const *inputs, int input_count);

#endif /* OPTRACE_COMMON_OUTFILE_H */
