/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef OPTRACE_TORCH_PYTHON_FRAMES_H
#define OPTRACE_TORCH_PYTHON_FRAMES_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The calling thread's innermost Python frame, as what identifies its line:
 * its code object (with what tells a new one at the same address apart) and
 * its instruction. Valid while the thread stays in C code.
 */
struct python_frame {
	const void *code;
	const void *filename;
	int first_line;
	int offset; /* in code units */
};

/*
 * The calling thread's innermost Python frame whose file in_library()
 * refuses; false when there is none (a thread without Python, a Python this
 * cannot read). Needs no GIL.
 */
bool python_user_frame(struct python_frame *found,
		       bool (*in_library)(const char *file, size_t len));

/* Writes "file:line" of that frame into site; its length, or -1. Needs no GIL. */
int python_frame_site(const struct python_frame *frame, char *site, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* OPTRACE_TORCH_PYTHON_FRAMES_H */
