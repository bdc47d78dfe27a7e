/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Hand-built records for the profile model, as the ring buffer gives them. */
#ifndef OPTRACE_TEST_FEED_H
#define OPTRACE_TEST_FEED_H

#include <stdint.h>

#include "model/profile.h"

/* One struct record_event of process tgid; asserts the model took it. */
void feed_event(struct profile *profile, uint32_t tgid, uint64_t ts, uint32_t tid, int type,
		uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4);

/* The text at address in process tgid (a struct record_string). */
void feed_text(struct profile *profile, uint32_t tgid, uint64_t address, const char *text);

#endif /* OPTRACE_TEST_FEED_H */
