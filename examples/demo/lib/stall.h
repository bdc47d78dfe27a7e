/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A task point that spins on purpose: a stuck worker, and through it a
 * caller blocked waiting for its result, for optrace dump to show.
 */
#ifndef DEMO_STALL_H
#define DEMO_STALL_H

/* In run_point(): spins if point is the one armed (demo_stall_task()). */
void stall_point(const char *task_name, uint32_t point);

#endif /* DEMO_STALL_H */
