/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Dynamic symbols of an ELF file, read with libelf: where liboptrace's
 * exported data lies (runtime_info.c, batch_read.c) and where a process's
 * loader has dlopen (inject_target.c). Only defined functions and objects
 * count (an IFUNC's resolver is not the function).
 */
#ifndef OPTRACE_TRACE_ELF_SYMBOLS_H
#define OPTRACE_TRACE_ELF_SYMBOLS_H

#include <stdint.h>

/* The symbol's value (its address in the file). 0, -ENOENT, -ENOEXEC or -errno. */
int elf_symbol_value(const char *path, const char *name, uint64_t *value);

/*
 * Where the symbol lies from the start of the file's first loaded page (its
 * first mapping, of offset 0, in a process). 0, -ENOENT, -ENOEXEC or -errno.
 */
int elf_symbol_offset(const char *path, const char *name, uint64_t *offset);

#endif /* OPTRACE_TRACE_ELF_SYMBOLS_H */
