/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The host reference: every kind of work computed plainly in double on the
 * host, for any dtype, as NumPy would. It is what a fallback runs, either
 * inline on the caller or as a one-point HostReference task.
 */
#ifndef DEMO_REFERENCE_H
#define DEMO_REFERENCE_H

#include "work.h"

void reference_run(const struct work *w);

#endif /* DEMO_REFERENCE_H */
