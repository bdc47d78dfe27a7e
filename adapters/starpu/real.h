/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef OPTRACE_STARPU_REAL_H
#define OPTRACE_STARPU_REAL_H

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>

/*
 * Built with -D_GNU_SOURCE (RTLD_NEXT). In a function interposed on StarPU's name: found_NAME,
 * StarPU's own definition (the next after this library's), looked up once; the function returns
 * -ENOSYS where there is none.
 */
#define REAL(type, name)                                                                 \
	static _Atomic(type) real_##name;                                                \
	type found_##name = atomic_load_explicit(&real_##name, memory_order_acquire);    \
	if (!found_##name) {                                                             \
		found_##name = (type)dlsym(RTLD_NEXT, #name);                            \
		atomic_store_explicit(&real_##name, found_##name, memory_order_release); \
	}                                                                                \
	if (!found_##name)                                                               \
		return -ENOSYS;

/* A StarPU function this library defines in its place: seen by the program. */
#define INTERPOSED __attribute__((visibility("default")))

#endif /* OPTRACE_STARPU_REAL_H */
