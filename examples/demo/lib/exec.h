/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Running an operation's work: decide the mode, then compute it eagerly,
 * launch it as a task, or run the host reference instead.
 */
#ifndef DEMO_EXEC_H
#define DEMO_EXEC_H

#include "op.h"
#include "work.h"

/*
 * The supported path: float16 falls back; otherwise eager or deferred, as
 * mode_decide() says. Returns 0, or -1 when the operation has failed.
 */
int exec_run(struct op *op, struct work *w);

/* The reference path, for reason (enum optrace_fallback_reason). */
int exec_fallback(struct op *op, struct work *w, int reason, const char *detail);

/* The reference path because w involves float16. */
int exec_fallback_dtype(struct op *op, struct work *w);

#endif /* DEMO_EXEC_H */
