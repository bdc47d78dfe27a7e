// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Errors are reported like errno: a return value, and a message per thread. */
#include <stdarg.h>
#include <stdio.h>

#include "demo.h"
#include "error.h"

static _Thread_local char error_message[256];

void error_set(const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	vsnprintf(error_message, sizeof(error_message), fmt, args);
	va_end(args);
}

const char *demo_last_error(void)
{
	return error_message[0] ? error_message : "no error";
}
