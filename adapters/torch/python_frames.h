/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef OPTRACE_TORCH_PYTHON_FRAMES_H
#define OPTRACE_TORCH_PYTHON_FRAMES_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Writes "file:line" of the calling thread's innermost Python frame whose
 * file in_library() refuses into site; returns its length, or -1 when there
 * is none (a thread without Python, a Python this cannot read). Needs no GIL.
 */
int python_user_site(char *site, size_t size, bool (*in_library)(const char *file, size_t len));

#ifdef __cplusplus
}
#endif

#endif /* OPTRACE_TORCH_PYTHON_FRAMES_H */
