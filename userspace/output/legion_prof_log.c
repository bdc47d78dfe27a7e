// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A Legion Prof log opened and closed: the writer's core on the file
 * (legion_prof_core.c), the start every log has (legion_preamble.c) and
 * the descriptors it needs to be read (legion_records.c). The pieces below
 * know nothing of this file. Section numbers refer to
 * docs/legion-format.md.
 */
#include <fcntl.h>
#include <errno.h>
#include <unistd.h>

#include "output/legion_preamble.h"
#include "output/legion_prof.h"
#include "output/legion_prof_core.h"
#include "output/legion_records.h"

int legion_prof_fdopen(struct legion_prof **out, int fd, const struct legion_prof_options *options)
{
	static const struct legion_prof_options defaults;
	struct legion_prof *prof;
	int err;

	err = legion_prof_core_open(&prof, fd, options ? options : &defaults);
	if (err)
		return err;
	/* the preamble, MachineDesc, ZeroTime, then OpDesc(30, "Task") (§2.14) */
	err = legion_prof_write_header(prof, options ? options : &defaults);
	err = err ?: legion_prof_op_desc(prof, LEGION_PROF_OP_KIND_TASK, "Task");
	err = err ?: legion_prof_drain(prof);
	if (err) {
		legion_prof_core_discard(prof);
		return err;
	}
	*out = prof;
	return 0;
}

int legion_prof_open(struct legion_prof **prof, const char *path,
		     const struct legion_prof_options *options)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int err;

	if (fd < 0)
		return -errno;
	err = legion_prof_fdopen(prof, fd, options);
	if (err)
		close(fd);
	return err;
}

int legion_prof_close(struct legion_prof *prof)
{
	if (!prof)
		return 0;
	while (prof->spans)
		legion_prof_span_end(prof->spans, 0);
	legion_prof_complete_descriptors(prof);
	return legion_prof_core_close(prof);
}
