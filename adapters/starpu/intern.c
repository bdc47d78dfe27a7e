// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Task names, kept: a small open-addressing table of copies, found again by
 * their text. A program names its tasks after its codelets, a few dozen;
 * past NAMES_MAX a name is counted as "(too many names)".
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "intern.h"

#define NAMES_MAX 4096 /* a power of two */

static const char *names[NAMES_MAX];
static unsigned int name_count;
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;

static uint32_t hash_text(const char *text)
{
	uint32_t hash = 2166136261u;

	for (; *text; text++)
		hash = (hash ^ (unsigned char)*text) * 16777619u;
	return hash;
}

const char *optrace_starpu_intern(const char *name)
{
	uint32_t slot = hash_text(name) & (NAMES_MAX - 1);
	const char *kept = "(too many names)";

	pthread_mutex_lock(&names_lock);
	for (unsigned int probe = 0; probe < NAMES_MAX; probe++) {
		const char *here = names[(slot + probe) & (NAMES_MAX - 1)];

		if (here && !strcmp(here, name)) {
			kept = here;
			break;
		}
		if (!here) {
			char *copy = name_count < NAMES_MAX / 2 ? strdup(name) : NULL;

			if (copy) {
				names[(slot + probe) & (NAMES_MAX - 1)] = copy;
				name_count++;
				kept = copy;
			}
			break;
		}
	}
	pthread_mutex_unlock(&names_lock);
	return kept;
}
