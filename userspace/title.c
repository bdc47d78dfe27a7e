// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <string.h>

#include "title.h"

const char *variant_title(int variant)
{
	static const char *const titles[OPTRACE_VARIANT__COUNT] = {
		[OPTRACE_VARIANT_CPU] = "CPU",
		[OPTRACE_VARIANT_OPENMP] = "OMP",
		[OPTRACE_VARIANT_GPU] = "GPU",
		[OPTRACE_VARIANT_HOST_REFERENCE] = "fallback",
	};

	return variant >= 0 && variant < OPTRACE_VARIANT__COUNT ? titles[variant] : "?";
}

/* Appends like snprintf, never past size. */
static void append(char *buffer, size_t size, size_t *used, const char *format, const char *a,
		   unsigned int n)
{
	int wrote;

	if (*used >= size)
		return;
	wrote = snprintf(buffer + *used, size - *used, format, a, n);
	if (wrote > 0)
		*used += (size_t)wrote < size - *used ? (size_t)wrote : size - *used - 1;
}

void op_title(const struct profile *profile, const struct profile_op *op, char *buffer, size_t size)
{
	const char *separator = "";
	size_t used = 0;

	if (!size)
		return;
	buffer[0] = '\0';
	append(buffer, size, &used, "%s [", profile_string(profile, op->tgid, op->name), 0);
	if (op->mode != PROFILE_MODE_UNSET) {
		append(buffer, size, &used, "%s", optrace_mode_name(op->mode), 0);
		separator = "; ";
	}
	if (op->fallback_reason != OPTRACE_FALLBACK_NONE) {
		append(buffer, size, &used, "%s", separator, 0);
		append(buffer, size, &used, "fallback: %s",
		       optrace_fallback_reason_name(op->fallback_reason), 0);
		separator = "; ";
	}
	for (int v = 0; v < OPTRACE_VARIANT__COUNT; v++) {
		if (!op->tree_points[v])
			continue;
		append(buffer, size, &used, "%s", separator, 0);
		append(buffer, size, &used, "%s×%u", variant_title(v), op->tree_points[v]);
		separator = " ";
	}
	append(buffer, size, &used, "]%s", op->cut ? " (cut)" : "", 0);
	if (op->callsite)
		append(buffer, size, &used, " %s", profile_string(profile, op->tgid, op->callsite),
		       0);
	/* "[]" says nothing: drop it. */
	if (op->mode == PROFILE_MODE_UNSET && op->fallback_reason == OPTRACE_FALLBACK_NONE) {
		char *empty = strstr(buffer, " []");

		if (empty)
			memmove(empty, empty + 3, strlen(empty + 3) + 1);
	}
}
