/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Writing an output without destroying what is there: the new contents go
 * to a file of their own in the same directory, renamed over the output
 * once whole (out_file_commit), removed when the command fails
 * (out_file_discard). An existing output that is one of the command's
 * inputs is refused; one that is a device or a pipe (/dev/null,
 * /dev/stdout) is written in place, as there is nothing to rename over.
 */
#ifndef OPTRACE_OUTFILE_H
#define OPTRACE_OUTFILE_H

#include <stdbool.h>

struct out_file {
	char *path; /* the output, a symlink to a file resolved to that file */
	char *temp; /* where the contents go until committed; NULL: path itself */
};

/*
 * The temporary file is PATH.partial, created only if there is none (a
 * recorder's, which a user reads after a SIGKILL); else PATH.tmp.PID.
 */
#define OUT_FILE_PARTIAL 1u

/*
 * Creates the file where path's new contents go (with the mode and owner
 * of the file it will replace, else 0644 less the umask) and returns its
 * descriptor (close-on-exec, the caller's to close), or a negative errno
 * with a message printed: path is a directory or the same file as one of
 * the input_count inputs, or it cannot be created.
 */
int out_file_open(struct out_file *out, const char *path, unsigned int flags,
		  const char *const *inputs, int input_count);

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

#endif /* OPTRACE_OUTFILE_H */
