// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdbool.h>
#include <string.h>

#include "output/op_title.h"

const char *variant_title(int variant)
{
	static const char *const titles[OPTRACE_VARIANT__COUNT] = {
		[OPTRACE_VARIANT_CPU] = "CPU",	     [OPTRACE_VARIANT_OPENMP] = "OMP",
		[OPTRACE_VARIANT_GPU] = "GPU",	     [OPTRACE_VARIANT_HOST_REFERENCE] = "host",
		[OPTRACE_VARIANT_OPENCL] = "OpenCL",
	};

	return variant >= 0 && variant < OPTRACE_VARIANT__COUNT ? titles[variant] : "?";
}

/*
 * Appends text, never past size (cut, still NUL-terminated). Exports build
 * a title per operation, millions of them: no printf here.
 */
static void append(char *buffer, size_t size, size_t *used, const char *text)
{
	size_t length = strlen(text);

	if (*used + 1 >= size)
		return;
	if (length > size - *used - 1)
		length = size - *used - 1;
	memcpy(buffer + *used, text, length);
	*used += length;
	buffer[*used] = '\0';
}

static void append_count(char *buffer, size_t size, size_t *used, unsigned int n)
{
	char digits[12], *p = digits + sizeof(digits);

	*--p = '\0';
	do {
		*--p = (char)('0' + n % 10);
		n /= 10;
	} while (n);
	append(buffer, size, used, p);
}

void op_title(const struct profile *profile, const struct profile_op *op, char *buffer, size_t size)
{
	const char *separator = "";
	bool bracket =
		op->mode != PROFILE_MODE_UNSET || op->fallback_reason != OPTRACE_FALLBACK_NONE;
	size_t used = 0;

	if (!size)
		return;
	buffer[0] = '\0';
	append(buffer, size, &used, profile_string(profile, op->tgid, op->name));
	for (int v = 0; !bracket && v < OPTRACE_VARIANT__COUNT; v++)
		bracket = op->tree_points[v] != 0;
	/* "[]" says nothing: left out. */
	if (bracket)
		append(buffer, size, &used, " [");
	/* "fallback: unsupported_dtype" says the mode too: each thing once. */
	if (op->mode != PROFILE_MODE_UNSET &&
	    !(op->mode == OPTRACE_MODE_FALLBACK && op->fallback_reason != OPTRACE_FALLBACK_NONE)) {
		append(buffer, size, &used, optrace_mode_name(op->mode));
		separator = "; ";
	}
	if (op->fallback_reason != OPTRACE_FALLBACK_NONE) {
		append(buffer, size, &used, separator);
		append(buffer, size, &used, "fallback: ");
		append(buffer, size, &used, optrace_fallback_reason_name(op->fallback_reason));
		separator = "; ";
	}
	for (int v = 0; v < OPTRACE_VARIANT__COUNT; v++) {
		if (!op->tree_points[v])
			continue;
		append(buffer, size, &used, separator);
		append(buffer, size, &used, variant_title(v));
		append(buffer, size, &used, "×");
		append_count(buffer, size, &used, op->tree_points[v]);
		separator = " ";
	}
	if (bracket)
		append(buffer, size, &used, "]");
	if (op->cut)
		append(buffer, size, &used, " (cut)");
	if (op->callsite) {
		append(buffer, size, &used, " ");
		append(buffer, size, &used, profile_string(profile, op->tgid, op->callsite));
	}
}
