// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Perfetto export's interning tables: text to the id (iid) it was given
 * on the trace's packet sequence. Keyed by content, not by the address the
 * text came from: a process may send a new string at an old address. Most
 * text comes again from the same address (the profile's strings, the names
 * of enums, a title buffer holding the same title), so a small cache by
 * address, checked against the content, spares measuring and hashing it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/perfetto_internal.h"

struct perfetto_string {
	uint64_t hash;
	uint64_t iid; /* 0: an empty slot */
	size_t length;
	char *text; /* NUL-terminated */
};

static uint64_t hash_text(const char *text, size_t length)
{
	const uint64_t multiplier = 0x9e3779b97f4a7c15ull;
	uint64_t hash = length * multiplier;

	/* Eight bytes at a time, then the tail. */
	for (; length >= 8; text += 8, length -= 8) {
		uint64_t word;

		memcpy(&word, text, 8);
		hash = (hash ^ word) * multiplier;
		hash ^= hash >> 29;
	}
	if (length) {
		uint64_t word = 0;

		memcpy(&word, text, length);
		hash = (hash ^ word) * multiplier;
		hash ^= hash >> 29;
	}
	return hash ^ hash >> 32;
}

static const struct perfetto_string *find(const struct perfetto_strings *table, const char *text,
					  size_t length, uint64_t hash)
{
	size_t mask = table->capacity - 1;

	if (!table->capacity)
		return NULL;
	for (size_t i = hash & mask;; i = (i + 1) & mask) {
		const struct perfetto_string *slot = &table->slots[i];

		if (!slot->iid)
			return NULL;
		if (slot->hash == hash && slot->length == length &&
		    !memcmp(slot->text, text, length))
			return slot;
	}
}

static void insert(struct perfetto_string *slots, size_t capacity, struct perfetto_string entry)
{
	size_t mask = capacity - 1, i = entry.hash & mask;

	while (slots[i].iid)
		i = (i + 1) & mask;
	slots[i] = entry;
}

static int grow(struct perfetto_strings *table)
{
	size_t capacity = table->capacity ? table->capacity * 2 : 256;
	struct perfetto_string *slots = calloc(capacity, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < table->capacity; i++)
		if (table->slots[i].iid)
			insert(slots, capacity, table->slots[i]);
	free(table->slots);
	table->slots = slots;
	table->capacity = capacity;
	return 0;
}

/* A copy of text as the next iid; the copy, or NULL without memory. */
static const char *add(struct perfetto_strings *table, const char *text, size_t length,
		       uint64_t hash, uint64_t *iid)
{
	struct perfetto_string entry = { .hash = hash, .length = length };

	/* At most half full: probes stay short. */
	if ((table->count + 1) * 2 > table->capacity && grow(table))
		return NULL;
	entry.text = malloc(length + 1);
	if (!entry.text)
		return NULL;
	memcpy(entry.text, text, length + 1);
	entry.iid = *iid = ++table->count;
	table->bytes += length;
	insert(table->slots, table->capacity, entry);
	return entry.text;
}

uint64_t perfetto_strings_intern(struct perfetto_strings *table, const char *text, bool *added)
{
	struct perfetto_recent *recent = &table->recent[((uintptr_t)text >> 3) % PERFETTO_RECENT];
	size_t length;
	uint64_t hash, iid = 0;
	const struct perfetto_string *found;
	const char *stored;

	*added = false;
	if (recent->text == text && !strcmp(recent->stored, text))
		return recent->iid;
	length = strlen(text);
	hash = hash_text(text, length);
	found = find(table, text, length, hash);
	if (found) {
		iid = found->iid;
		stored = found->text;
	} else {
		stored = add(table, text, length, hash, &iid);
		if (!stored)
			return 0;
		*added = true;
	}
	*recent = (struct perfetto_recent){ .text = text, .stored = stored, .iid = iid };
	return iid;
}

void perfetto_strings_clear(struct perfetto_strings *table)
{
	for (size_t i = 0; i < table->capacity; i++) {
		free(table->slots[i].text);
		table->slots[i] = (struct perfetto_string){ 0 };
	}
	memset(table->recent, 0, sizeof(table->recent));
	table->count = 0;
	table->bytes = 0;
}

void perfetto_strings_free(struct perfetto_strings *table)
{
	perfetto_strings_clear(table);
	free(table->slots);
	table->slots = NULL;
	table->capacity = 0;
}
