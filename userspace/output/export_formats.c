// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The formats, one row each: choosing one is a lookup here. Each row is
 * defined beside its hooks, in the format's own file.
 */
#include <string.h>

#include "output/export_format.h"

extern const struct export_format report_format;   /* output/report.c */
extern const struct export_format chrome_format;   /* output/chrome.c */
extern const struct export_format perfetto_format; /* output/perfetto.c */
extern const struct export_format legion_format;   /* output/legion_export.c */

const struct export_format *const export_formats[] = {
	&report_format, &chrome_format, &perfetto_format, &legion_format, NULL,
};

const struct export_format *export_format_find(const char *name)
{
	for (size_t i = 0; export_formats[i]; i++)
		if (!strcmp(export_formats[i]->name, name))
			return export_formats[i];
	return NULL;
}
