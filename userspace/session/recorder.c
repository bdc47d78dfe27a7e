// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace record's engine, the BPF side; see recorder.h.
 *
 * The BPF side never wakes optrace (a wakeup costs more than the event);
 * optrace drains the ring buffer every few milliseconds instead, and writes
 * a whole chunk to the file every second, so that a recorder killed even
 * with SIGKILL leaves everything but the last second readable.
 */
#define _GNU_SOURCE
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/diag.h"
#include "common/outfile.h"
#include "bpf/events.h"
#include "record.skel.h"
#include "trace/setup.h"
#include "trace/tracer.h"
#include "session/cuda.h"
#include "session/recorder_core.h"
#include "session/recorder.h"

#define POLL_MS 10
#define FLUSH_MS 1000
/*
 * The fast path: idle threads' buffers are read every IDLE_READ_MS, and an
 * event waits REORDER_MS for the events of other threads that came before it
 * (the flush bound, the idle reads and the polls, with room to spare).
 */
#define IDLE_READ_MS 50
#define REORDER_MS 250
/*
 * Overload (events come faster than they are written): one read of the ring
 * buffer lasts at most CONSUME_MS, so that -d, Ctrl-C and SIGTERM are acted
 * on at once, and the stop's reads at most STOP_CONSUME_MS; the reorder
 * window holds at most HELD_MAX events (session/recorder_core.h).
 */
#define CONSUME_MS 50
#define STOP_CONSUME_MS 1000

/* The run's parts, as perf's struct record holds them. */
struct recorder {
	struct recorder_options options;
	struct recorder_core core;
	struct record_bpf *skel;
	struct ring_buffer *ring;
	struct tracer tracer;
	struct out_file output;
	char *target;	/* the capture header's */
	bool recording; /* attached: what the file holds is this run's */
	uint64_t losses[RECORD_LOSS__COUNT];
	uint64_t start_ns;	   /* when tracing began: the duration counts from here */
	bool live;		   /* the status line, redrawn on a terminal */
	uint64_t written_bytes;	   /* the capture's size once closed */
	uint64_t consume_until_ns; /* when the ring buffer's read in progress must end */
	uint32_t consumed;	   /* records of that read, to look at the clock now and then */
	bool consume_cut;	   /* the last read ended by the clock, the ring not empty */
};

/* A record of the ring buffer; the read stops once its time is up (-EAGAIN). */
static int on_record(void *ctx, void *data, size_t size)
{
	struct recorder *r = ctx;
	int err = recorder_core_record(&r->core, data, size);

	if (err)
		return err;
	/* The clock now and then: a record takes well under a microsecond. */
	if ((++r->consumed & 255) == 0 && clock_ns(CLOCK_MONOTONIC) >= r->consume_until_ns) {
		r->consume_cut = true;
		return -EAGAIN;
	}
	return 0;
}

/*
 * Reads the ring buffer for at most ms: under overload the producers refill
 * it as fast as it is read, and ring_buffer__consume() alone would never
 * return. True if the ring was emptied.
 */
static bool consume_for(struct recorder *r, long ms)
{
	r->consume_until_ns = clock_ns(CLOCK_MONOTONIC) + (uint64_t)ms * 1000000;
	r->consumed = 0;
	r->consume_cut = false;
	ring_buffer__consume(r->ring);
	return !r->consume_cut;
}

static void drain_for(struct recorder *r, long ms)
{
	struct timespec tick = { 0, POLL_MS * 1000 * 1000 };

	for (long waited = 0; waited < ms; waited += POLL_MS) {
		nanosleep(&tick, NULL);
		consume_for(r, POLL_MS);
	}
}

static void read_losses(struct record_bpf *skel, uint64_t losses[RECORD_LOSS__COUNT])
{
	int cpus = libbpf_num_possible_cpus();
	uint64_t *values = calloc((size_t)(cpus > 0 ? cpus : 1), sizeof(*values));

	memset(losses, 0, RECORD_LOSS__COUNT * sizeof(*losses));
	for (__u32 loss = 0; values && loss < RECORD_LOSS__COUNT; loss++) {
		if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.losses), &loss, values))
			continue;
		for (int cpu = 0; cpu < cpus; cpu++)
			losses[loss] += values[cpu];
	}
	free(values);
}

static void print_status(const struct recorder *r, const uint64_t *losses, double seconds,
			 bool final)
{
	struct capture_writer_stats written;
	char rate[48] = "";

	/* A rate over less than a second says more about the start than the run. */
	if (seconds >= 1)
		snprintf(rate, sizeof(rate), ", %.0f events/s", r->core.events / seconds);
	else if (final)
		snprintf(rate, sizeof(rate), " in %.2f s", seconds);
	written.file_bytes = r->written_bytes;
	if (r->core.writer)
		capture_writer_stats(r->core.writer, &written);
	/* not diag(): a status line, redrawn in place until the last */
	fprintf(stderr, "%s%llu events (%.1f MiB written), %llu lost in the kernel%s%s",
		final ? "" : "\r", (unsigned long long)r->core.events,
		written.file_bytes / (1024.0 * 1024.0),
		(unsigned long long)(losses[RECORD_LOSS_RINGBUF_FULL] +
				     losses[RECORD_LOSS_STRING_DROPPED] +
				     losses[RECORD_LOSS_GPU_RINGBUF_FULL]),
		rate, final ? "\n" : "   ");
}

/* The capture file, as OUTPUT.partial, with what says where it comes from. */
static int open_capture(struct recorder *r)
{
	const struct recorder_options *o = &r->options;
	struct capture_writer_opts writer_opts = { 0 };
	struct capture_writer *writer;
	char boot_id[RECORD_NAME_LEN];
	struct capture_meta meta[1];
	int fd, err;

	/* The command, or how the targets were chosen. */
	r->target = record_meta_target(&record_facts_proc, o->targets->command, o->targets->all,
				       o->targets->pids, o->targets->pid_count);
	writer_opts.optrace_version = OPTRACE_VERSION;
	writer_opts.format_major = o->capture_format;
	writer_opts.target = r->target;
	/* Which boot of which host: captures of one job merge by host and clock. */
	if (record_meta_first_line("/proc/sys/kernel/random/boot_id", boot_id)) {
		meta[0] = (struct capture_meta){ CAPTURE_KEY_BOOT_ID, boot_id };
		writer_opts.meta = meta;
		writer_opts.meta_count = 1;
	}
	/*
	 * Written as OUTPUT.partial, renamed to OUTPUT at the end: a recorder
	 * that fails leaves an earlier OUTPUT as it was, one killed leaves
	 * what it recorded under the .partial name.
	 */
	fd = out_file_open(&r->output, &(struct out_policy){ .force = o->force, .named_by = "-o" },
			   o->output, OUT_FILE_PARTIAL, NULL, 0);
	if (fd < 0)
		return fd;
	err = capture_writer_fdopen(&writer, fd, &writer_opts);
	if (err) {
		diag("cannot write %s: %s", out_file_name(&r->output), strerror(-err));
		close(fd);
		out_file_discard(&r->output);
		return err;
	}
	r->core.writer = writer;
	return 0;
}

int recorder_open(struct recorder **recorder, const struct recorder_options *options)
{
	struct recorder *r = calloc(1, sizeof(*r));
	int err;

	*recorder = NULL;
	if (!r) {
		diag("cannot record: out of memory");
		return -ENOMEM;
	}
	r->options = *options;
	r->start_ns = clock_ns(CLOCK_MONOTONIC);
	r->live = !options->quiet && isatty(STDERR_FILENO);
	recorder_core_init(&r->core, NULL, &record_facts_proc);

	libbpf_set_print(libbpf_print);
	r->skel = record_bpf__open();
	if (!r->skel) {
		diag("cannot open the BPF object: %s", strerror(errno));
		free(r);
		return -ENOENT;
	}
	*recorder = r;
	r->skel->rodata->filter_targets = options->targets->command != NULL;
	if (options->no_gpu)
		cuda_skip_programs(r->skel->obj);
	err = bpf_map__set_max_entries(r->skel->maps.events, (__u32)(options->ringbuf_mb << 20));
	err = err ?: tracer_prepare(&r->tracer, r->skel->obj, options->targets);
	if (!err && options->cuda)
		err = cuda_prepare(&r->tracer, options->quiet, false);
	if (err)
		return err;
	/*
	 * The capture before the load, so that an -o that cannot be written
	 * fails at once; signals from here on end the run through
	 * recorder_close(), which removes a capture that recorded nothing.
	 */
	tracer_catch_signals();
	err = open_capture(r);
	err = err ?: tracer_check_pids(&r->tracer);
	if (err)
		return err;
	err = tracer_loaded(&r->tracer, record_bpf__load(r->skel));
	if (err || tracer_interrupted())
		return err;
	r->ring = ring_buffer__new(bpf_map__fd(r->skel->maps.events), on_record, r, NULL);
	if (!r->ring) {
		err = -errno;
		diag("cannot read the ring buffer: %s", strerror(errno));
		return err;
	}

	recorder_core_clock(&r->core);
	recorder_core_start(&r->core, r->tracer.fast_path, tracer_now_ns());
	err = tracer_attach(&r->tracer);
	if (err)
		return err;
	r->recording = true;
	return 0;
}

void recorder_run(struct recorder *r)
{
	long elapsed_ms = 0;

	if (!r->recording)
		return;
	/* not diag(): what it does now, not an error */
	if (!r->options.targets->command && !r->options.quiet)
		fprintf(stderr, "Recording to %s... Hit Ctrl-C to end.\n", r->options.output);
	r->start_ns = clock_ns(CLOCK_MONOTONIC);
	while (!tracer_interrupted()) {
		struct timespec tick = { 0, POLL_MS * 1000 * 1000 };

		nanosleep(&tick, NULL);
		elapsed_ms += POLL_MS;
		consume_for(r, CONSUME_MS);
		if (r->core.fast_path) {
			uint64_t watermark = tracer_now_ns() - REORDER_MS * 1000000ull;

			if (elapsed_ms % IDLE_READ_MS == 0)
				tracer_read_buffers(&r->tracer, recorder_core_idle_buffer,
						    &r->core);
			/* Memory stays bounded when events come faster than they are written. */
			recorder_core_write_ordered(&r->core, watermark);
		}
		if (r->core.error)
			break;
		if (tracer_rescan_due(&r->tracer, elapsed_ms))
			tracer_rescan(&r->tracer);
		if (elapsed_ms % FLUSH_MS == 0) {
			recorder_core_tick(&r->core);
			read_losses(r->skel, r->losses);
			if (r->live)
				print_status(r, r->losses, seconds_since(r->start_ns), false);
		}
		/* By the clock: draining a busy ring buffer makes ticks longer. */
		if (r->options.duration_ms && clock_ns(CLOCK_MONOTONIC) - r->start_ns >=
						      (uint64_t)r->options.duration_ms * 1000000)
			break;
		if (elapsed_ms % 100 == 0 && !tracer_alive(&r->tracer))
			break;
	}
}

void recorder_stop(struct recorder *r)
{
	bool emptied;

	if (!r->recording)
		return;
	recorder_core_stop_at(&r->core, tracer_now_ns());
	emptied = consume_for(r, STOP_CONSUME_MS);
	tracer_read_buffers(&r->tracer, recorder_core_idle_buffer, &r->core);
	/* A batch handed over while the buffers were read is in the ring now. */
	emptied = consume_for(r, emptied ? STOP_CONSUME_MS : POLL_MS) && emptied;
	if (!emptied)
		diag("the ring buffer was still full of events %d s after the stop: the targets "
		     "make them faster than optrace reads them; those not read by then are not "
		     "in the capture",
		     STOP_CONSUME_MS / 1000);
	/*
	 * CUPTI still holds up to a second of GPU records, which the collector
	 * flushes every second: wait for that flush while still attached, or
	 * the work of the last second is lost (detached, its probes fire to no
	 * one). Only GPU records are kept meanwhile: the rest ends at the stop.
	 */
	if (!r->core.error && tracer_alive(&r->tracer) &&
	    (r->core.gpu_records || cuda_collector_running(&r->tracer))) {
		r->core.gpu_only = true; /* the capture ends here for everything else */
		drain_for(r, CUDA_GRACE_MS);
	}
	if (r->core.error) {
		fputc('\n', stderr); /* the status line ended first */
		diag("cannot write %s: %s; it holds what came before", r->options.output,
		     strerror(-r->core.error));
	}
}

/* The end marker with its counters, the file in place, the last status: err, or the first. */
static int close_capture(struct recorder *r, int err)
{
	uint64_t *losses = r->losses;
	int close_err;

	read_losses(r->skel, losses);
	close_err = recorder_core_close(&r->core, losses, &r->written_bytes);
	if (close_err && !err && !r->core.error)
		diag("cannot finish %s: %s", out_file_name(&r->output), strerror(-close_err));
	err = err ?: r->core.error ?: close_err;
	if (!r->options.quiet) {
		if (r->live)
			fputc('\r', stderr);
		print_status(r, losses, seconds_since(r->start_ns), true);
	}
	if (losses[RECORD_LOSS_RINGBUF_FULL] || losses[RECORD_LOSS_GPU_RINGBUF_FULL])
		diag("the ring buffer (%ld MiB) was full: the targets made events faster than "
		     "optrace read them; record again with a larger --ringbuf (up to 1024), or "
		     "fewer targets",
		     r->options.ringbuf_mb);
	/* This run's capture, even cut short by a full disk: it says what it lost. */
	close_err = out_file_commit(&r->output);
	err = err ?: close_err;
	if (!close_err && !r->options.quiet)
		diag("wrote %s", r->options.output);
	/* An empty capture is not a success to keep quiet about. */
	if (!close_err && !r->core.events)
		diag("no events were recorded: the targets made no traced call (optrace list -p "
		     "PID "
		     "shows whether a process's probes are armed)");
	return err;
}

int recorder_close(struct recorder *r, int err, int *command_status)
{
	r->tracer.quiet = r->options.quiet;
	*command_status = tracer_finish(&r->tracer, tracer_interrupted());
	/* Detached: what is left in the ring is all there will be. */
	if (r->ring)
		consume_for(r, STOP_CONSUME_MS);
	if (r->core.writer && !r->recording) {
		/* Nothing was traced: an earlier capture stays as it was. */
		capture_close(r->core.writer, NULL, 0);
		r->core.writer = NULL;
		out_file_discard(&r->output);
	}
	if (r->core.writer) {
		recorder_core_finish(&r->core);
		err = close_capture(r, err);
	}
	ring_buffer__free(r->ring);
	record_bpf__destroy(r->skel);
	recorder_core_free(&r->core);
	free(r->target);
	free(r);
	return err;
}
