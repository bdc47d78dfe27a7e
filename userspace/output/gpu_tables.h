/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The GPU tables of `optrace report` (model/gpu_aggregates.h), as text or as JSON. */
#ifndef OPTRACE_OUTPUT_GPU_TABLES_H
#define OPTRACE_OUTPUT_GPU_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "model/gpu_aggregates.h"

/* The tables as text, or as the value of a JSON "gpu" member; both sort them. */
/* As text, to width (output/text_table.h; 0: no limit). */
void gpu_report_print(FILE *out, struct gpu_report *report, int width);
void gpu_report_print_json(FILE *out, struct gpu_report *report);

/* "LOST: GPU records: N dropped by CUPTI ...; ..." for each source that lost; false if none. */
bool gpu_drops_text(const struct gpu_summary *summary, char *text, size_t size);

/*
 * For the exports, after the replay: the GPU records lost by source into
 * *summary, said on stderr when any were. False when there was no GPU
 * activity (nothing to say, *summary zero).
 */
bool gpu_losses_note(const struct profile *profile, uint64_t ring_buffer_lost,
		     struct gpu_summary *summary);

#endif /* OPTRACE_OUTPUT_GPU_TABLES_H */
