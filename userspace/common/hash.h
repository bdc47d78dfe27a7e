/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * FNV-1a, 64-bit: the hash of the model's and outputs' tables (fast, good
 * enough for keys that no one chooses to collide; open addressing copes).
 */
#ifndef OPTRACE_COMMON_HASH_H
#define OPTRACE_COMMON_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HASH_SEED 0xcbf29ce484222325ULL

/* hash with size bytes more. */
static inline uint64_t hash_bytes(uint64_t hash, const void *bytes, size_t size)
{
	const unsigned char *p = bytes;

	for (size_t i = 0; i < size; i++)
		hash = (hash ^ p[i]) * 0x100000001b3ULL;
	return hash;
}

/* hash with text's bytes more (not its terminator). */
static inline uint64_t hash_text(uint64_t hash, const char *text)
{
	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		hash = (hash ^ *p) * 0x100000001b3ULL;
	return hash;
}

#endif /* OPTRACE_COMMON_HASH_H */
