// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* serve's engine: metrics from the kernel's aggregates, retention (serve_metrics.h). */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/diag.h"
#include "output/prometheus.h"
#include "session/serve_metrics.h"
#include "session/stat_live.h"
#include "stat.skel.h"
#include "trace/tracer.h"
#include "trace/view_read.h"

void serve_metrics_init(struct serve_metrics *metrics, struct stat_bpf *skel, long retention_s)
{
	memset(metrics, 0, sizeof(*metrics));
	metrics->skel = skel;
	metrics->retention_ns = (uint64_t)retention_s * 1000000000ULL;
}

static bool exited(void *ctx, __u32 tgid)
{
	struct serve_metrics *metrics = ctx;

	return idmap_get(&metrics->departed, tgid, 0) != NULL;
}

/* Read from the process's thread views, not the maps: what is open now. */
static bool oldest_open(void *ctx, __u32 tgid, uint64_t *op_ns, uint64_t *point_ns)
{
	struct process_view view;
	struct view_oldest oldest;

	(void)ctx;
	if (view_read_process((pid_t)tgid, &view, VIEW_READ_AGES))
		return false;
	process_view_oldest(&view, &oldest);
	*op_ns = oldest.op_ns;
	*point_ns = oldest.point_ns;
	process_view_free(&view);
	return true;
}

int serve_metrics_write(struct serve_metrics *metrics, char **text, size_t *length)
{
	const struct prometheus_options options = { .exited = exited,
						    .oldest_open = oldest_open,
						    .ctx = metrics };
	struct stat_snapshot snapshot;
	FILE *out;
	int err;

	*text = NULL;
	*length = 0;
	out = open_memstream(text, length);
	if (!out)
		return -ENOMEM;
	err = stat_snapshot_take(metrics->skel, &snapshot, false);
	if (!err) {
		err = prometheus_write(out, &snapshot, &options);
		stat_snapshot_free(&snapshot);
	}
	if (fclose(out) && !err)
		err = -ENOMEM;
	if (err) {
		free(*text);
		*text = NULL;
		diag("cannot read the kernel's aggregates: %s", strerror(-err));
	}
	return err;
}

static bool process_alive(__u32 tgid)
{
	return kill((pid_t)tgid, 0) == 0 || errno == EPERM;
}

void serve_metrics_sweep(struct serve_metrics *metrics)
{
	struct idmap *departed = &metrics->departed;
	int fd = bpf_map__fd(metrics->skel->maps.processes);
	__u64 now = tracer_now_ns();
	__u32 key, *previous = NULL, *expired;
	size_t expired_count = 0;

	while (bpf_map_get_next_key(fd, previous, &key) == 0) {
		__u64 *since;

		previous = &key;
		if (process_alive(key)) {
			free(idmap_remove(departed, key, 0));
			continue;
		}
		if (idmap_get(departed, key, 0))
			continue;
		since = malloc(sizeof(*since));
		if (!since)
			continue;
		*since = now;
		if (idmap_put(departed, key, 0, since))
			free(since);
	}
	expired = calloc(departed->count ? departed->count : 1, sizeof(*expired));
	if (!expired)
		return;
	for (size_t i = 0; i < departed->capacity; i++) {
		const struct idmap_slot *slot = &departed->slots[i];

		if (slot->value && now - *(const __u64 *)slot->value >= metrics->retention_ns)
			expired[expired_count++] = slot->tgid;
	}
	stat_forget_processes(metrics->skel, expired, expired_count);
	for (size_t i = 0; i < expired_count; i++)
		free(idmap_remove(departed, expired[i], 0));
	if (diag_verbosity() && expired_count)
		diag("%zu exited processes forgotten", expired_count);
	free(expired);
}

void serve_metrics_free(struct serve_metrics *metrics)
{
	for (size_t i = 0; i < metrics->departed.capacity; i++)
		free(metrics->departed.slots[i].value);
	idmap_free(&metrics->departed);
}
