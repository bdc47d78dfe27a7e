// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/attach.h"
#include "trace/targets.h"
#include "trace/uprobe_multi.h"
#include "trace/usdt_args.h"
#include "trace/usdt_notes.h"

/*
 * libbpf's usdt.bpf.h reads arguments through the map __bpf_usdt_specs,
 * indexed by the BPF cookie. libbpf 1.1 fills it only for its own attach:
 * for uprobe_multi links optrace fills it, in the same layout.
 */
enum bpf_usdt_arg_type {
	BPF_USDT_ARG_CONST,
	BPF_USDT_ARG_REG,
	BPF_USDT_ARG_REG_DEREF,
};

struct bpf_usdt_arg_spec {
	uint64_t val_off;
	uint32_t arg_type;
	short reg_off;
	bool arg_signed;
	char arg_bitshift;
};

#define BPF_USDT_MAX_ARG_CNT 12

struct bpf_usdt_spec {
	struct bpf_usdt_arg_spec args[BPF_USDT_MAX_ARG_CNT];
	uint64_t usdt_cookie;
	short arg_cnt;
};

_Static_assert(sizeof(struct bpf_usdt_arg_spec) == 16, "usdt.bpf.h layout");
_Static_assert(sizeof(struct bpf_usdt_spec) == 208, "usdt.bpf.h layout");

int attach_mode_parse(const char *text)
{
	if (!strcmp(text, "auto"))
		return ATTACH_AUTO;
	if (!strcmp(text, "uprobe-multi"))
		return ATTACH_UPROBE_MULTI;
	if (!strcmp(text, "perf-event"))
		return ATTACH_PERF_EVENT;
	return -1;
}

/* The object's USDT programs, less those the command chose not to load. */
static bool is_usdt_program(const struct bpf_program *prog)
{
	return !strcmp(bpf_program__section_name(prog), "usdt") && bpf_program__autoload(prog);
}

/*
 * A program attaches to the probe its name says: "op_begin" is the optrace
 * provider's op_begin, "gpu_kernel" the optrace_gpu provider's kernel.
 */
struct probe_name {
	const char *provider;
	const char *name;
	bool optional; /* a library from before the provider existed lacks it */
};

static struct probe_name probe_of(const struct bpf_program *prog)
{
	const char *name = bpf_program__name(prog);

	if (!strncmp(name, "gpu_", 4))
		return (struct probe_name){ "optrace_gpu", name + 4, true };
	return (struct probe_name){ "optrace", name, false };
}

static int is_end_probe(const struct bpf_program *prog)
{
	const char *name = bpf_program__name(prog);
	size_t length = strlen(name);

	return length > 4 && !strcmp(name + length - 4, "_end");
}

int attacher_prepare(struct attacher *attacher, struct bpf_object *obj, enum attach_mode mode)
{
	struct bpf_program *prog;

	memset(attacher, 0, sizeof(*attacher));
	attacher->obj = obj;
	if (mode == ATTACH_PERF_EVENT)
		return 0;
	attacher->uprobe_multi = uprobe_multi_supported();
	if (!attacher->uprobe_multi)
		return mode == ATTACH_UPROBE_MULTI ? -EOPNOTSUPP : 0;
	bpf_object__for_each_program (prog, obj) {
		if (is_usdt_program(prog))
			bpf_program__set_expected_attach_type(
				prog, (enum bpf_attach_type)OPTRACE_BPF_TRACE_UPROBE_MULTI);
	}
	return 0;
}

static int grow(void **array, size_t *capacity, size_t count, size_t size)
{
	size_t wanted = *capacity ? *capacity * 2 : 16;
	void *grown;

	if (count < *capacity)
		return 0;
	grown = realloc(*array, wanted * size);
	if (!grown)
		return -ENOMEM;
	*array = grown;
	*capacity = wanted;
	return 0;
}

static int spec_from_note(const struct usdt_note *note, struct bpf_usdt_spec *spec)
{
	struct usdt_arg args[USDT_MAX_ARGS];
	int count = usdt_args_parse(note->args, args, USDT_MAX_ARGS);

	if (count < 0 || count > BPF_USDT_MAX_ARG_CNT)
		return -EINVAL;
	memset(spec, 0, sizeof(*spec));
	spec->arg_cnt = (short)count;
	for (int i = 0; i < count; i++) {
		struct bpf_usdt_arg_spec *arg = &spec->args[i];

		arg->val_off = (uint64_t)args[i].value;
		arg->arg_signed = args[i].is_signed;
		arg->arg_bitshift = (char)(64 - 8 * args[i].size);
		switch (args[i].kind) {
		case USDT_ARG_CONST:
			arg->arg_type = BPF_USDT_ARG_CONST;
			break;
		case USDT_ARG_REG:
			arg->arg_type = BPF_USDT_ARG_REG;
			break;
		case USDT_ARG_REG_DEREF:
			arg->arg_type = BPF_USDT_ARG_REG_DEREF;
			break;
		}
		if (args[i].kind != USDT_ARG_CONST) {
			int offset = usdt_reg_pt_regs_offset(args[i].reg);

			if (offset < 0)
				return -EINVAL;
			arg->reg_off = (short)offset;
		}
	}
	return 0;
}

/* One link for every site of the program's probe in the library. */
static int attach_multi(struct attacher *attacher, struct bpf_program *prog,
			const struct usdt_notes *notes, const char *path, pid_t pid)
{
	struct probe_name probe = probe_of(prog);
	struct bpf_map *specs = bpf_object__find_map_by_name(attacher->obj, "__bpf_usdt_specs");
	uint64_t *offsets, *ref_ctr_offsets, *cookies;
	uint32_t count = 0;
	int err = 0, fd;

	if (!specs || bpf_map__value_size(specs) != sizeof(struct bpf_usdt_spec))
		return -EINVAL;
	offsets = calloc(notes->count, sizeof(*offsets));
	ref_ctr_offsets = calloc(notes->count, sizeof(*ref_ctr_offsets));
	cookies = calloc(notes->count, sizeof(*cookies));
	if (!offsets || !ref_ctr_offsets || !cookies) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < notes->count; i++) {
		const struct usdt_note *note = &notes->notes[i];
		struct bpf_usdt_spec spec;
		int id;

		if (strcmp(note->provider, probe.provider) || strcmp(note->name, probe.name))
			continue;
		if ((uint32_t)attacher->next_spec_id >= bpf_map__max_entries(specs)) {
			err = -E2BIG;
			goto cleanup;
		}
		err = spec_from_note(note, &spec);
		if (err)
			goto cleanup;
		id = attacher->next_spec_id++;
		err = bpf_map_update_elem(bpf_map__fd(specs), &id, &spec, BPF_ANY);
		if (err)
			goto cleanup;
		offsets[count] = note->pc_offset;
		ref_ctr_offsets[count] = note->semaphore_offset;
		cookies[count] = (uint64_t)id;
		count++;
	}
	if (!count) {
		err = -ENOENT;
		goto cleanup;
	}
	err = grow((void **)&attacher->fds, &attacher->fd_capacity, attacher->fd_count,
		   sizeof(*attacher->fds));
	if (err)
		goto cleanup;
	fd = uprobe_multi_link(bpf_program__fd(prog), path, offsets, ref_ctr_offsets, cookies,
			       count, pid < 0 ? 0 : pid);
	if (fd < 0) {
		err = fd;
		goto cleanup;
	}
	attacher->fds[attacher->fd_count++] = fd;

cleanup:
	free(offsets);
	free(ref_ctr_offsets);
	free(cookies);
	return err;
}

static int attach_perf_event(struct attacher *attacher, struct bpf_program *prog, const char *path,
			     pid_t pid)
{
	struct probe_name probe = probe_of(prog);
	struct bpf_link *link;
	int err;

	link = bpf_program__attach_usdt(prog, pid, path, probe.provider, probe.name, NULL);
	err = libbpf_get_error(link);
	if (err)
		return err;
	err = grow((void **)&attacher->links, &attacher->link_capacity, attacher->link_count,
		   sizeof(*attacher->links));
	if (err) {
		bpf_link__destroy(link);
		return err;
	}
	attacher->links[attacher->link_count++] = link;
	return 0;
}

int attacher_attach(struct attacher *attacher, const char *path, pid_t pid)
{
	struct usdt_notes notes = { 0 };
	struct bpf_program *prog;
	char held[64];
	int err = 0, fd = -1;

	if (attacher->uprobe_multi) {
		err = usdt_notes_read(path, NULL, &notes);
		if (err)
			return err;
	} else {
		/*
		 * libbpf opens the path it is given without O_NONBLOCK: it gets
		 * the file opened here instead, which a FIFO swapped in at the
		 * path later cannot replace.
		 */
		fd = target_file_open(path);
		if (fd < 0)
			return fd;
		snprintf(held, sizeof(held), "/proc/self/fd/%d", fd);
		path = held;
	}
	/*
	 * The ends first: an operation that begins while optrace attaches
	 * then always has its end seen, never a begin without an end.
	 */
	for (int ends = 1; ends >= 0 && !err; ends--) {
		bpf_object__for_each_program (prog, attacher->obj) {
			if (!is_usdt_program(prog) || is_end_probe(prog) != ends)
				continue;
			if (attacher->uprobe_multi)
				err = attach_multi(attacher, prog, &notes, path, pid);
			else
				err = attach_perf_event(attacher, prog, path, pid);
			if (err == -ENOENT && probe_of(prog).optional)
				err = 0;
			if (err)
				break;
		}
	}
	usdt_notes_free(&notes);
	if (fd >= 0)
		close(fd);
	return err;
}

/* Links destroyed by one detaching thread: every DETACH_THREADS-th from first. */
struct detach_slice {
	struct attacher *attacher;
	size_t first;
};

#define DETACH_THREADS 8

static void *detach_slice(void *arg)
{
	struct detach_slice *slice = arg;

	for (size_t i = slice->first; i < slice->attacher->link_count; i += DETACH_THREADS)
		bpf_link__destroy(slice->attacher->links[i]);
	for (size_t i = slice->first; i < slice->attacher->fd_count; i += DETACH_THREADS)
		close(slice->attacher->fds[i]);
	return NULL;
}

void attacher_destroy(struct attacher *attacher)
{
	struct detach_slice slices[DETACH_THREADS];
	pthread_t threads[DETACH_THREADS];
	bool started[DETACH_THREADS] = { false };

	/*
	 * Each uprobe's detach waits for the kernel's grace period (tens of
	 * milliseconds, more on a busy machine): side by side, they wait for
	 * the same ones.
	 */
	for (size_t t = 0;
	     t < DETACH_THREADS && (t < attacher->link_count || t < attacher->fd_count); t++) {
		slices[t] = (struct detach_slice){ .attacher = attacher, .first = t };
		started[t] = !pthread_create(&threads[t], NULL, detach_slice, &slices[t]);
		if (!started[t])
			detach_slice(&slices[t]); /* no thread: here, in turn */
	}
	for (size_t t = 0; t < DETACH_THREADS; t++) {
		if (started[t])
			pthread_join(threads[t], NULL);
	}
	free(attacher->links);
	free(attacher->fds);
	memset(attacher, 0, sizeof(*attacher));
}
