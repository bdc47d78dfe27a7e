/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A hash map from (process, 64-bit id) to a pointer: op ids, task ids and
 * string addresses are unique only within a process. Open addressing with
 * linear probing and backward-shift deletion, so that a long capture that
 * adds and removes millions of entries keeps no tombstones.
 */
#ifndef OPTRACE_COMMON_IDMAP_H
#define OPTRACE_COMMON_IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct idmap_slot {
	uint32_t tgid;
	uint64_t id;
	void *value; /* NULL: empty slot */
};

struct idmap {
	struct idmap_slot *slots;
	size_t capacity; /* a power of two */
	size_t count;
};

/* The value for (tgid, id), or NULL. */
void *idmap_get(const struct idmap *map, uint32_t tgid, uint64_t id);
/* Sets (tgid, id) to value (not NULL); 0 or -ENOMEM. */
int idmap_put(struct idmap *map, uint32_t tgid, uint64_t id, void *value);
/* Removes (tgid, id); returns its value, or NULL. */
void *idmap_remove(struct idmap *map, uint32_t tgid, uint64_t id);
void idmap_free(struct idmap *map);

/* Iteration: for (size_t i = 0; i < map->capacity; i++) if (map->slots[i].value) ... */

#endif /* OPTRACE_COMMON_IDMAP_H */
