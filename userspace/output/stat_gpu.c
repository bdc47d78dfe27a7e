// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stat --cuda: a process's GPU tables in stat's report, for the text
 * (stat_print.c) and the JSON (stat_json.c) alike.
 */
#include "output/gpu_tables.h"
#include "output/stat_gpu.h"

void stat_gpu_print(FILE *out, const struct stat_snapshot *snapshot, __u32 tgid,
		    const struct stat_print_options *options)
{
	struct gpu_report report;

	if (!snapshot->gpu_traced)
		return;
	gpu_report_init(&report);
	report.show_helpers = options->show_helpers;
	if (gpu_report_from_stat(&report, snapshot, tgid))
		report.present = false; /* out of memory: said as no GPU table */
	if (options->json)
		gpu_report_print_json(out, &report);
	else
		gpu_report_print(out, &report, options->width);
	gpu_report_free(&report);
}
