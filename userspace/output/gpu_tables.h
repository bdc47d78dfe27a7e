/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The GPU tables of `optrace report` (model/gpu_aggregates.h), as text or as JSON. */
#ifndef OPTRACE_GPU_TABLES_H
#define OPTRACE_GPU_TABLES_H

#include <stdio.h>

#include "model/gpu_aggregates.h"

/* The tables as text, or as the value of a JSON "gpu" member; both sort them. */
void gpu_report_print(FILE *out, struct gpu_report *report);
void gpu_report_print_json(FILE *out, struct gpu_report *report);

#endif /* OPTRACE_GPU_TABLES_H */
