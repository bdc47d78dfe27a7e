/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The USDT probes of an ELF file, from its .note.stapsdt notes. */
#ifndef OPTRACE_TRACE_USDT_NOTES_H
#define OPTRACE_TRACE_USDT_NOTES_H

#include <stddef.h>
#include <stdint.h>

#define USDT_NAME_MAX 64
#define USDT_ARGS_MAX 256

struct usdt_note {
	char provider[USDT_NAME_MAX];
	char name[USDT_NAME_MAX];
	char args[USDT_ARGS_MAX];  /* e.g. "8@%rdi -4@%esi" */
	uint64_t pc;		   /* link-time address of the probe site */
	uint64_t pc_offset;	   /* its offset in the file: what uprobes take */
	uint64_t semaphore;	   /* link-time address of the semaphore, or 0 */
	uint64_t semaphore_offset; /* its file offset: a uprobe's ref_ctr_offset */
};

struct usdt_notes {
	struct usdt_note *notes;
	size_t count;
};

/*
 * Reads every probe of provider (NULL: all providers) in the ELF file at
 * path. Returns 0, or a negative errno: -ENOENT for no such file, -EINVAL
 * for no regular file (a pipe, a device), -ENOEXEC for a file that is not
 * a readable ELF file. A file without probes gives 0
 * and an empty list. Free with usdt_notes_free().
 */
int usdt_notes_read(const char *path, const char *provider, struct usdt_notes *out);
void usdt_notes_free(struct usdt_notes *notes);

/* The probe named name, or NULL. */
const struct usdt_note *usdt_notes_find(const struct usdt_notes *notes, const char *name);

#endif /* OPTRACE_TRACE_USDT_NOTES_H */
