/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * optrace dump's output: what each thread of each process is doing now
 * (trace/view_read.h), as text for a terminal or as JSON. Strings are the
 * traced process's and untrusted: made printable, or escaped.
 */
#ifndef OPTRACE_OUTPUT_DUMP_PRINT_H
#define OPTRACE_OUTPUT_DUMP_PRINT_H

#include <stdbool.h>
#include <stdio.h>

#include "trace/view_read.h"

struct dump_options {
	int width;	   /* text_output_width() */
	bool idle_threads; /* list threads with nothing open, not only count them */
};

void dump_print_text(FILE *out, const struct process_view *view,
		     const struct dump_options *options);

/* One process as a JSON object, for an array the caller opens and closes. */
void dump_print_json(FILE *out, const struct process_view *view);

/* "12.4 s", "850 ms", "3 min 20 s": an age that reads at a glance. */
const char *dump_age_text(uint64_t ns, char *buffer, size_t size);

#endif /* OPTRACE_OUTPUT_DUMP_PRINT_H */
