/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The ground truth: how often each probe fired, by what it carried. */
#ifndef DEMO_TRUTH_H
#define DEMO_TRUTH_H

#include <stdint.h>

/* In the order the truth file lists them. */
enum truth_kind {
	TRUTH_OP,	/* name, depth */
	TRUTH_MODE,	/* name, mode, reason */
	TRUTH_FALLBACK, /* name, reason */
	TRUTH_STATUS,	/* name, status */
	TRUTH_LAUNCH,	/* task name; points summed */
	TRUTH_TASK,	/* task name, variant */
	TRUTH_WAIT,	/* kind */
	TRUTH__COUNT
};

/* Count one probe call. name must live as long as the process. */
void truth_count(enum truth_kind kind, const char *name, int a, int b, uint64_t points);

#endif /* DEMO_TRUTH_H */
