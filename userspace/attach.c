// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Through libbpf's USDT support: one perf-event uprobe per probe site, with
 * the semaphore's file offset as the uprobe's reference counter, so the
 * kernel arms the semaphore in each process it instruments.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attach.h"

static int keep_link(struct attachment *attachment, struct bpf_link *link)
{
	if (attachment->count == attachment->capacity) {
		size_t capacity = attachment->capacity ? attachment->capacity * 2 : 16;
		struct bpf_link **links = realloc(attachment->links, capacity * sizeof(*links));

		if (!links)
			return -ENOMEM;
		attachment->links = links;
		attachment->capacity = capacity;
	}
	attachment->links[attachment->count++] = link;
	return 0;
}

int attach_library(struct bpf_object *obj, const char *path, pid_t pid, struct attachment *out)
{
	struct bpf_program *prog;
	int err;

	bpf_object__for_each_program (prog, obj) {
		struct bpf_link *link;

		if (strcmp(bpf_program__section_name(prog), "usdt"))
			continue;
		link = bpf_program__attach_usdt(prog, pid, path, "optrace", bpf_program__name(prog),
						NULL);
		err = libbpf_get_error(link);
		if (err)
			return err;
		err = keep_link(out, link);
		if (err) {
			bpf_link__destroy(link);
			return err;
		}
	}
	return 0;
}

void attachment_destroy(struct attachment *attachment)
{
	for (size_t i = 0; i < attachment->count; i++)
		bpf_link__destroy(attachment->links[i]);
	free(attachment->links);
	memset(attachment, 0, sizeof(*attachment));
}
