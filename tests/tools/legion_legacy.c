// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * legion-legacy DIR PROFILE...: the data files of Legion Prof's legacy HTML
 * viewer for the profiles, written into DIR (created; it must not exist),
 * for looking at the legacy viewer where legion_prof cannot be built
 * (tests/lib/legion_legacy.h). Copy Legion's tools/legion_prof_files/ beside
 * them to view them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "legion_legacy.h"
#include "legion_read.h"

#define LEGION_VERSION 1008

int main(int argc, char **argv)
{
	struct legion_summary *files;
	char why[512];
	int err = 1, read = 0;

	if (argc < 3) {
		fprintf(stderr,
			"usage: %s DIR PROFILE...\n"
			"writes Legion Prof's legacy viewer data for PROFILE... into DIR\n",
			argv[0]);
		return 2;
	}
	files = calloc((size_t)argc, sizeof(*files));
	if (!files)
		return 1;
	for (int i = 2; i < argc; i++, read++) {
		if (legion_summary_read(argv[i], LEGION_VERSION, &files[read], why, sizeof(why))) {
			fprintf(stderr, "%s: not a profile Legion Prof reads: %s\n", argv[i], why);
			read++;
			goto cleanup;
		}
	}
	if (mkdir(argv[1], 0755)) {
		fprintf(stderr, "cannot create %s: %s\n", argv[1], strerror(errno));
		goto cleanup;
	}
	if (legion_legacy_write(argv[1], files, (size_t)read, why, sizeof(why))) {
		fprintf(stderr, "%s\n", why);
		goto cleanup;
	}
	err = 0;
cleanup:
	for (int i = 0; i < read; i++)
		legion_summary_free(&files[i]);
	free(files);
	return err;
}
