/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The per-thread message behind demo_last_error(). */
#ifndef DEMO_ERROR_H
#define DEMO_ERROR_H

void error_set(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* DEMO_ERROR_H */
