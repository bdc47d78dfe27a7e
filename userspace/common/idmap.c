// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>

#include "common/idmap.h"

static size_t slot_of(const struct idmap *map, uint32_t tgid, uint64_t id)
{
	/* splitmix64's finaliser: ids are sequential, so mix them well. */
	uint64_t h = id ^ ((uint64_t)tgid << 32) ^ tgid;

	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return (size_t)h & (map->capacity - 1);
}

void *idmap_get(const struct idmap *map, uint32_t tgid, uint64_t id)
{
	if (!map->count)
		return NULL;
	for (size_t i = slot_of(map, tgid, id);; i = (i + 1) & (map->capacity - 1)) {
		const struct idmap_slot *slot = &map->slots[i];

		if (!slot->value)
			return NULL;
		if (slot->id == id && slot->tgid == tgid)
			return slot->value;
	}
}

static int grow(struct idmap *map)
{
	struct idmap old = *map;

	map->capacity = old.capacity ? old.capacity * 2 : 64;
	map->slots = calloc(map->capacity, sizeof(*map->slots));
	if (!map->slots) {
		*map = old;
		return -ENOMEM;
	}
	map->count = 0;
	for (size_t i = 0; i < old.capacity; i++) {
		if (old.slots[i].value)
			idmap_put(map, old.slots[i].tgid, old.slots[i].id, old.slots[i].value);
	}
	free(old.slots);
	return 0;
}

int idmap_put(struct idmap *map, uint32_t tgid, uint64_t id, void *value)
{
	/* At most 3/4 full: probes stay short. */
	if ((map->count + 1) * 4 > map->capacity * 3 && grow(map))
		return -ENOMEM;
	for (size_t i = slot_of(map, tgid, id);; i = (i + 1) & (map->capacity - 1)) {
		struct idmap_slot *slot = &map->slots[i];

		if (!slot->value) {
			slot->tgid = tgid;
			slot->id = id;
			slot->value = value;
			map->count++;
			return 0;
		}
		if (slot->id == id && slot->tgid == tgid) {
			slot->value = value;
			return 0;
		}
	}
}

void *idmap_remove(struct idmap *map, uint32_t tgid, uint64_t id)
{
	size_t mask = map->capacity - 1, hole, i;
	void *value;

	if (!map->count)
		return NULL;
	for (i = slot_of(map, tgid, id);; i = (i + 1) & mask) {
		if (!map->slots[i].value)
			return NULL;
		if (map->slots[i].id == id && map->slots[i].tgid == tgid)
			break;
	}
	value = map->slots[i].value;
	map->slots[i].value = NULL;
	map->count--;
	/* Shift later members of the run back into the hole. */
	hole = i;
	for (i = (i + 1) & mask; map->slots[i].value; i = (i + 1) & mask) {
		size_t home = slot_of(map, map->slots[i].tgid, map->slots[i].id);

		/* Movable if its home is not in (hole, i], cyclically. */
		if ((i > hole && (home <= hole || home > i)) ||
		    (i < hole && home <= hole && home > i)) {
			map->slots[hole] = map->slots[i];
			map->slots[i].value = NULL;
			hole = i;
		}
	}
	return value;
}

void idmap_free(struct idmap *map)
{
	free(map->slots);
	map->slots = NULL;
	map->capacity = 0;
	map->count = 0;
}
