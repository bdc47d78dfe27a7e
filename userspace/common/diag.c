// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdarg.h>
#include <stdio.h>

#include "common/diag.h"

static int verbosity;

void diag_set_verbosity(int level)
{
	verbosity = level;
}

int diag_verbosity(void)
{
	return verbosity;
}

void diag(const char *format, ...)
{
	va_list args;

	/* One write per line, so that lines of two processes do not interleave. */
	char line[1024];
	int length = snprintf(line, sizeof(line), "optrace: ");

	va_start(args, format);
	vsnprintf(line + length, sizeof(line) - (size_t)length, format, args);
	va_end(args);
	fprintf(stderr, "%s\n", line);
}
