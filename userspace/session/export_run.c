// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The replay pipeline and the output's lifecycle, written once for every
 * format. The captures are read (opened, their headers checked, the first
 * pass run) before the output is touched, and the output is written beside
 * its final name and renamed over it only once whole: a missing or damaged
 * input, a full disk or a kill leaves an earlier file as it was.
 */
#include <errno.h>
#include <stdio_ext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/diag.h"
#include "common/outfile.h"
#include "model/profile.h"
#include "model/replay.h"
#include "session/export_run.h"

int export_output_open(struct export_output *output, const char *path, enum export_target target,
		       bool force, const char *const *inputs, int input_count)
{
	const struct out_policy policy = { .force = force, .named_by = "-o" };
	int err, fd;

	memset(output, 0, sizeof(*output));
	output->path = path;
	output->announce = target == EXPORT_FILE;
	if (!path) {
		output->out = stdout;
		return 0;
	}
	fd = out_file_open(&output->file, &policy, path, 0, inputs, input_count);
	if (fd < 0)
		return fd;
	output->out = fdopen(fd, "w");
	if (!output->out) {
		err = -errno;
		diag("cannot write %s: %s", path, strerror(-err));
		close(fd);
		out_file_discard(&output->file);
		return err;
	}
	/* One thread writes: no stdio locks, and large writes. */
	__fsetlocking(output->out, FSETLOCKING_BYCALLER);
	setvbuf(output->out, NULL, _IOFBF, 1 << 20);
	return 0;
}

int export_output_close(struct export_output *output, int err)
{
	bool closed = true;

	if (!output->path) /* stdout: flushed at exit */
		return err;
	if (fclose(output->out) && !err) {
		err = -errno;
		closed = false;
	}
	if (err) {
		/* A print says only its own write errors: the rest were said where they arose. */
		if (err != -EBADMSG && (output->announce || !closed))
			diag("cannot write %s: %s", output->path, strerror(-err));
		out_file_discard(&output->file);
		return err;
	}
	err = out_file_commit(&output->file);
	if (!err && output->announce)
		diag("wrote %s", output->path);
	return err;
}

int export_run(const struct export_format *format, const struct export_options *options)
{
	struct profile_consumer consumer = { 0 };
	struct export_output output;
	struct replay replay = { 0 };
	struct profile profile;
	struct export_job job = { .options = options, .replay = &replay, .profile = &profile };
	bool started = false, opened = false;
	void *state;
	int err;

	/* Ctrl-C leaves no half-written file behind (nor touches an earlier one). */
	out_file_remove_on_signals();
	state = calloc(1, format->state_size);
	if (!state) {
		diag("out of memory");
		return -ENOMEM;
	}
	profile_init(&profile, NULL);
	err = replay_open_many(&replay, options->paths, options->path_count);
	if (!err && format->first_pass) {
		started = true;
		err = format->first_pass(state, &job);
	}
	if (!err && options->gpu_file)
		err = replay_add_gpu_file(&replay, options->gpu_file);
	if (!err && format->target != EXPORT_FOLDER) {
		err = export_output_open(&output, options->output, format->target, options->force,
					 options->inputs, options->input_count);
		opened = !err;
		job.out = output.out;
	}
	if (!err) {
		started = true;
		err = format->begin(state, &job, &consumer);
	}
	if (!err) {
		profile.consumer = consumer;
		/* Every command that reads captures fails the same way on one it cannot read. */
		err = replay_run(&replay, &profile) ?: replay_check_readable(&replay);
	}
	if (started)
		err = format->end(state, &job, err);
	if (opened)
		err = export_output_close(&output, err);
	free(state);
	profile_free(&profile);
	replay_close(&replay);
	return err;
}
