// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace record: every probe hit of the targets, one record each, streamed
 * through a BPF ring buffer (bpf/record.bpf.c) into a capture file that
 * `optrace report` and `optrace export` read.
 *
 * The BPF side never wakes optrace (a wakeup costs more than the event);
 * optrace drains the ring buffer every few milliseconds instead, and writes
 * a whole chunk to the file every second, so that a recorder killed even
 * with SIGKILL leaves everything but the last second readable.
 */
#define _GNU_SOURCE
#include <argp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/diag.h"
#include "trace/batch_decode.h"
#include "trace/batch_read.h"
#include "capture/capture.h"
#include "cli/commands.h"
#include "cli/common_flags.h"
#include "cli/tracer_flags.h"
#include "trace/setup.h"
#include "common/outfile.h"
#include "bpf/events.h"
#include "record.skel.h"
#include "trace/tracer.h"
#include "trace/runtime_info.h"
#include "session/cuda.h"

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
 * window holds at most HELD_MAX events (64 bytes each), then writes them
 * early (counted as late if an earlier one comes after).
 */
#define CONSUME_MS 50
#define STOP_CONSUME_MS 1000
#define HELD_MAX (2u << 20)

static struct {
	const char *output;
	char output_buffer[PATH_MAX]; /* -o's name, %h expanded */
	long ringbuf_mb;
	bool no_gpu;
	uint16_t capture_format; /* 0: the newest */
} env = {
	.output = "optrace.capture",
	/* A fast loop's burst (3.8 M events/s, 28 MiB of batches in 0.16 s) fits. */
	.ringbuf_mb = 64,
};

struct recorder {
	struct capture_writer *writer;
	bool fast_path;
	struct batch_decoder decoder;
	struct idmap strings; /* (process, address) of strings in the capture */
	struct idmap named;   /* (process, thread or 0) whose names are in the capture */
	struct idmap ranked;  /* (process, 0) whose rt_init is in the capture */
	uint64_t events;
	uint64_t gpu_records;  /* tells report and export whether to read GPU records ahead */
	uint64_t gpu_launches; /* ... or to attribute them as they come */
	bool gpu_only;	       /* after the stop, while the collector's last flush comes */
	int error;
	/* the run's parts, as perf's struct record holds them */
	struct record_bpf *skel;
	struct ring_buffer *ring;
	struct tracer *tracer;
	struct out_file output;
	uint64_t losses[RECORD_LOSS__COUNT];
	uint64_t start_ns;	   /* when tracing began: -d counts from here */
	bool live;		   /* the status line, redrawn on a terminal */
	uint64_t written_bytes;	   /* the capture's size once closed */
	uint64_t decoded_written;  /* the decoder's events written */
	uint64_t pushed;	   /* events handed to the decoder one by one (rt_init) */
	uint64_t consume_until_ns; /* when the ring buffer's read in progress must end */
	uint32_t consumed;	   /* records of that read, to look at the clock now and then */
	bool consume_cut;	   /* the last read ended by the clock, the ring not empty */
	bool window_shrunk;	   /* HELD_MAX reached: said once */
};

static const char doc[] =
	"Record every operation, task and wait of live runtimes into a capture file,\n"
	"for `optrace report` and `optrace export`.\n"
	"\n"
	"USAGE: optrace record [-p PID]... [-a] [-o FILE] [-d TIME]\n"
	"                      [-- COMMAND [ARGS...]]\n"
	"\n"
	"EXAMPLES:\n"
	"    optrace record -o run.capture -- ./app     # a command and its children\n"
	"    optrace record -p 1234 -d 10               # 10 s of a live process\n"
	"    optrace record --cuda -o gpu.capture -- ./app  # with its GPU kernels\n"
	"    optrace record --cuda -p 1234 -d 10        # loads the GPU collector too\n"
	"    optrace report run.capture                 # then: the profile as text\n"
	"    optrace export --legion -o prof run.capture  # and for Legion Prof\n";

enum {
	OPT_RINGBUF = 0x100,
	OPT_NO_GPU,
	OPT_CAPTURE_FORMAT,
};

/* The rest of record's flags: cli/common_flags.c. */
static const struct argp_option options[] = {
	{ "output", 'o', "FILE", 0, "The capture file (default: optrace.capture)", 0 },
	{ "ringbuf", OPT_RINGBUF, "MiB", 0,
	  "Ring buffer size, a power of two (default 64): raise it if events are lost", 0 },
	{ "no-gpu", OPT_NO_GPU, NULL, 0,
	  "Leave the optrace_gpu probes alone: liboptrace-cupti stays dormant", 0 },
	{ "capture-format", OPT_CAPTURE_FORMAT, "N", 0,
	  "Write capture format N: 2 (default, compact) or 1 (what optrace before 2 reads)", 0 },
	{},
};

/*
 * -o's name with %h as this host's short name and %% as %: one command line
 * for every node of a job (srun ... optrace record -o run.%h.capture) gives
 * one file per node. 0, or -EINVAL for another % sequence or a name too long.
 */
static int expand_output(const char *pattern, char *out, size_t size)
{
	char host[256] = "", *dot;
	size_t used = 0;

	if (gethostname(host, sizeof(host) - 1))
		snprintf(host, sizeof(host), "localhost");
	dot = strchr(host, '.');
	if (dot)
		*dot = '\0';
	for (const char *p = pattern; *p; p++) {
		const char *piece = p;
		size_t length = 1;

		if (*p == '%') {
			p++;
			if (*p == 'h') {
				piece = host;
				length = strlen(host);
			} else if (*p != '%') {
				return -EINVAL;
			}
		}
		if (used + length >= size)
			return -EINVAL;
		memcpy(out + used, piece, length);
		used += length;
	}
	out[used] = '\0';
	return 0;
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	long value;

	switch (key) {
	case 'o':
		if (expand_output(arg, env.output_buffer, sizeof(env.output_buffer)))
			argp_error(state, "-o takes %%h (this host's short name) and %%%% (a %%) "
					  "in its name, nothing else after a %%");
		env.output = env.output_buffer;
		return 0;
	case OPT_RINGBUF:
		value = tracer_parse_positive(arg, state, "ring buffer size");
		if (value & (value - 1) || value > 1024)
			argp_error(state, "--ringbuf takes a power of two, at most 1024 (MiB)");
		env.ringbuf_mb = value;
		return 0;
	case OPT_NO_GPU:
		env.no_gpu = true;
		return 0;
	case OPT_CAPTURE_FORMAT:
		if (strcmp(arg, "1") && strcmp(arg, "2"))
			argp_error(state, "--capture-format takes 1 or 2");
		env.capture_format = (uint16_t)atoi(arg);
		return 0;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s' (a command goes after --)", arg);
		return 0;
	case ARGP_KEY_END:
		if (common_flags.cuda && env.no_gpu)
			argp_error(state, "--cuda records GPU activity, --no-gpu leaves it out: "
					  "give one of them");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static void note_error(struct recorder *recorder, int err)
{
	keep_first_error(&recorder->error, err);
}

/* The first line of a /proc file (a comm, the boot id), zero-padded; false if none. */
static bool read_first_line(const char *path, char line[RECORD_NAME_LEN])
{
	FILE *file = fopen(path, "re");
	bool found;

	if (!file)
		return false;
	memset(line, 0, RECORD_NAME_LEN);
	found = fgets(line, RECORD_NAME_LEN, file) != NULL;
	fclose(file);
	line[strcspn(line, "\n")] = '\0';
	return found && line[0];
}

/*
 * The rank a process announced before the recording began, read from
 * liboptrace's memory the first time the process is met (as stat -p does):
 * a capture of a live job keeps its ranks. Ordered with the events, as the
 * probe's rt_init is.
 */
static void write_announced_rank(struct recorder *recorder, uint64_t timestamp, uint32_t tgid,
				 uint32_t tid)
{
	struct record_event event = {
		.timestamp = timestamp, .tgid = tgid, .tid = tid, .type = RECORD_RT_INIT
	};
	struct optrace_runtime_info info;

	if (recorder->gpu_only || idmap_get(&recorder->ranked, tgid, 0))
		return;
	note_error(recorder, idmap_put(&recorder->ranked, tgid, 0, (void *)1));
	if (runtime_info_read((pid_t)tgid, &info) || !info.initialized)
		return; /* not announced yet: its probe will say it */
	event.rt_init.abi_version = info.abi_version;
	event.rt_init.rank = info.rank;
	event.rt_init.rank_count = info.rank_count;
	if (recorder->fast_path) {
		note_error(recorder, batch_decoder_push(&recorder->decoder, &event));
		recorder->pushed++;
		return;
	}
	note_error(recorder, capture_write(recorder->writer, event.type, &event, sizeof(event)));
	recorder->events++;
}

/*
 * Names thread tid and its process in the capture, the first time either is
 * met: from the kernel's comms when given (a batch brings them), else from
 * /proc. Written as events arrive, before they wait to be put in order: a
 * short run has exited by then.
 */
static void write_names(struct recorder *recorder, uint64_t timestamp, uint32_t tgid, uint32_t tid,
			const char *process_comm, const char *thread_comm)
{
	const char *given[2] = { process_comm, thread_comm };
	uint32_t ids[2] = { 0, tid };

	for (int i = 0; i < 2; i++) {
		struct record_name record = {
			.timestamp = timestamp, .tgid = tgid, .tid = ids[i], .type = RECORD_NAME
		};
		char path[64];

		if (idmap_get(&recorder->named, tgid, ids[i]))
			continue;
		/* Asked once: a process that has exited keeps its pid as its name. */
		note_error(recorder, idmap_put(&recorder->named, tgid, ids[i], (void *)1));
		if (ids[i])
			snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", tgid, ids[i]);
		else
			snprintf(path, sizeof(path), "/proc/%u/comm", tgid);
		if (given[i] && given[i][0])
			memcpy(record.name, given[i], strnlen(given[i], 16));
		if (record.name[0] || read_first_line(path, record.name))
			note_error(recorder, capture_write(recorder->writer, RECORD_NAME, &record,
							   sizeof(record)));
	}
	write_announced_rank(recorder, timestamp, tgid, tid);
}

/* A clock anchor: realtime read between two monotonic reads, at their middle. */
static void write_clock(struct recorder *recorder)
{
	struct record_clock record = { .type = RECORD_CLOCK };
	struct timespec before, realtime, after;
	uint64_t before_ns, after_ns;

	clock_gettime(CLOCK_MONOTONIC, &before);
	clock_gettime(CLOCK_REALTIME, &realtime);
	clock_gettime(CLOCK_MONOTONIC, &after);
	before_ns = timespec_ns(&before);
	after_ns = timespec_ns(&after);
	record.timestamp = before_ns + (after_ns - before_ns) / 2;
	record.realtime_ns = timespec_ns(&realtime);
	record.uncertainty_ns = after_ns - before_ns;
	note_error(recorder,
		   capture_write(recorder->writer, RECORD_CLOCK, &record, sizeof(record)));
}

static int write_event(void *ctx, const struct record_event *event)
{
	struct recorder *recorder = ctx;

	note_error(recorder, capture_write(recorder->writer, event->type, event, sizeof(*event)));
	recorder->events++;
	recorder->decoded_written++;
	if (event->type == RECORD_GPU_LAUNCH)
		recorder->gpu_launches++;
	return 0;
}

static int on_batch(struct recorder *recorder, const struct record_batch *batch, size_t size)
{
	struct batch_origin origin = {
		.tgid = batch->tgid,
		.tid = batch->tid,
		.buffer = batch->buffer,
		.cpu = batch->cpu,
		.ns_tid = batch->ns_tid,
	};

	if (size < RECORD_BATCH_SIZE(0) || batch->count > OPTRACE_BATCH_EVENTS ||
	    size < RECORD_BATCH_SIZE(batch->count))
		return 0; /* cannot be: the kernel wrote it */
	write_names(recorder, batch->timestamp, batch->tgid, batch->tid, batch->process_comm,
		    batch->thread_comm);
	note_error(recorder, batch_decoder_add(&recorder->decoder, &origin, batch->sequence,
					       batch->count, batch->events));
	return 0;
}

/* A string an idle thread's event names, which no batch brought: read here. */
static void write_string(struct recorder *recorder, pid_t pid, uint64_t address)
{
	struct record_string record = {
		.timestamp = recorder->decoder.written_ns,
		.tgid = (__u32)pid,
		.type = RECORD_STRING,
		.address = address,
	};
	bool truncated = false;

	if (!address || idmap_get(&recorder->strings, (uint32_t)pid, address))
		return;
	if (process_read_string(pid, address, record.text, sizeof(record.text), &truncated))
		record.unreadable = 1;
	record.truncated = truncated;
	note_error(recorder,
		   capture_write(recorder->writer, RECORD_STRING, &record, sizeof(record)));
	note_error(recorder, idmap_put(&recorder->strings, (uint32_t)pid, address, (void *)1));
}

static int on_idle_buffer(void *ctx, pid_t pid, uint32_t tid, uint64_t address, uint64_t sequence,
			  uint32_t count, const struct optrace_event *events)
{
	struct recorder *recorder = ctx;
	struct batch_origin origin = {
		.tgid = (uint32_t)pid, .tid = tid, .buffer = address, .idle = true
	};

	write_names(recorder, recorder->decoder.written_ns, (uint32_t)pid, tid, NULL, NULL);
	for (uint32_t i = 0; i < count; i++) {
		uint64_t strings[OPTRACE_EVENT_MAX_STRINGS];
		unsigned int string_count = optrace_event_strings(&events[i], false, strings);

		for (unsigned int k = 0; k < string_count; k++)
			write_string(recorder, pid, strings[k]);
	}
	note_error(recorder,
		   batch_decoder_add(&recorder->decoder, &origin, sequence, count, events));
	return 0;
}

/* Events older than the reorder window go to the capture, in time order. */
static void write_ordered(struct recorder *recorder, uint64_t watermark_ns)
{
	batch_decoder_drain(&recorder->decoder, watermark_ns, write_event, recorder);
}

static int handle_record(struct recorder *recorder, void *data, size_t size)
{
	const struct record_event *event = data;

	if (size < sizeof(*event))
		return 0;
	if (event->type == RECORD_BATCH)
		return on_batch(recorder, data, size);
	if (event->type == RECORD_STRING && size >= sizeof(struct record_string))
		note_error(recorder,
			   idmap_put(&recorder->strings, event->tgid,
				     ((const struct record_string *)data)->address, (void *)1));
	/* The stop is one instant on the per-event path too: nothing after it. */
	if (record_is_probe_event(event->type) && event->timestamp > recorder->decoder.stop_ns)
		return 0;
	if (event->type == RECORD_RT_INIT)
		note_error(recorder, idmap_put(&recorder->ranked, event->tgid, 0, (void *)1));
	/* rt_init waits its turn with the batches' events. */
	if (recorder->fast_path && event->type == RECORD_RT_INIT) {
		note_error(recorder, batch_decoder_push(&recorder->decoder, event));
		recorder->pushed++;
		return 0;
	}
	if (recorder->gpu_only && !record_is_gpu(event->type))
		return 0;
	if (record_is_probe_event(event->type))
		write_names(recorder, event->timestamp, event->tgid, event->tid, NULL, NULL);
	note_error(recorder, capture_write(recorder->writer, event->type, data, (uint32_t)size));
	recorder->events++;
	if (record_is_gpu(event->type))
		recorder->gpu_records++;
	if (event->type == RECORD_GPU_LAUNCH)
		recorder->gpu_launches++;
	return 0;
}

/* A record of the ring buffer; the read stops once its time is up (-EAGAIN). */
static int on_record(void *ctx, void *data, size_t size)
{
	struct recorder *recorder = ctx;
	int err = handle_record(recorder, data, size);

	if (err)
		return err;
	/* The clock now and then: a record takes well under a microsecond. */
	if ((++recorder->consumed & 255) == 0 &&
	    clock_ns(CLOCK_MONOTONIC) >= recorder->consume_until_ns) {
		recorder->consume_cut = true;
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

static void print_status(const struct recorder *recorder, const uint64_t *losses, double seconds,
			 bool final)
{
	struct capture_writer_stats written;
	char rate[48] = "";

	/* A rate over less than a second says more about the start than the run. */
	if (seconds >= 1)
		snprintf(rate, sizeof(rate), ", %.0f events/s", recorder->events / seconds);
	else if (final)
		snprintf(rate, sizeof(rate), " in %.2f s", seconds);
	written.file_bytes = recorder->written_bytes;
	if (recorder->writer)
		capture_writer_stats(recorder->writer, &written);
	fprintf(stderr, "%s%llu events (%.1f MiB written), %llu lost in the kernel%s%s",
		final ? "" : "\r", (unsigned long long)recorder->events,
		written.file_bytes / (1024.0 * 1024.0),
		(unsigned long long)(losses[RECORD_LOSS_RINGBUF_FULL] +
				     losses[RECORD_LOSS_STRING_DROPPED] +
				     losses[RECORD_LOSS_GPU_RINGBUF_FULL]),
		rate, final ? "\n" : "   ");
}

static char *describe_targets(int argc, char **argv)
{
	size_t size = 1;
	char *text;

	for (int i = 0; i < argc; i++)
		size += strlen(argv[i]) + 1;
	text = calloc(1, size);
	for (int i = 0; text && i < argc; i++) {
		strcat(text, argv[i]);
		if (i + 1 < argc)
			strcat(text, " ");
	}
	return text;
}

/* -p and -a: the processes, each by pid and command name, as ps shows it. */
static char *describe_running_targets(const struct tracer_options *targets)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out;

	if (targets->all)
		return strdup("every process that maps liboptrace (-a)");
	out = open_memstream(&text, &size);
	if (!out)
		return NULL;
	for (int i = 0; i < targets->pid_count; i++) {
		pid_t pid = targets->pids[i];
		char path[64], comm[64] = "";
		FILE *file;

		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		file = fopen(path, "re");
		if (file) {
			if (fgets(comm, sizeof(comm), file))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(file);
		}
		fprintf(out, "%sprocess %d%s%s%s", i ? ", " : "", pid, comm[0] ? " (" : "", comm,
			comm[0] ? ")" : "");
	}
	fclose(out);
	return text;
}

/* The capture file, as OUTPUT.partial, with what says where it comes from. */
static int open_capture(struct recorder *r, char **target)
{
	struct capture_writer_opts writer_opts = { 0 };
	char boot_id[RECORD_NAME_LEN];
	struct capture_meta meta[1];
	int fd, err;

	/* The command, or how the targets were chosen. */
	if (r->tracer->options.command) {
		int count = 0;

		while (r->tracer->options.command[count])
			count++;
		*target = describe_targets(count, r->tracer->options.command);
	} else {
		*target = describe_running_targets(&r->tracer->options);
	}
	writer_opts.optrace_version = OPTRACE_VERSION;
	writer_opts.format_major = env.capture_format;
	writer_opts.target = *target;
	/* Which boot of which host: captures of one job merge by host and clock. */
	if (read_first_line("/proc/sys/kernel/random/boot_id", boot_id)) {
		meta[0] = (struct capture_meta){ CAPTURE_KEY_BOOT_ID, boot_id };
		writer_opts.meta = meta;
		writer_opts.meta_count = 1;
	}
	/*
	 * Written as OUTPUT.partial, renamed to OUTPUT at the end: a recorder
	 * that fails leaves an earlier OUTPUT as it was, one killed leaves
	 * what it recorded under the .partial name.
	 */
	out_file_named_by("-o");
	fd = out_file_open(&r->output, env.output, OUT_FILE_PARTIAL, NULL, 0);
	if (fd < 0)
		return fd;
	err = capture_writer_fdopen(&r->writer, fd, &writer_opts);
	if (err) {
		diag("cannot write %s: %s", out_file_name(&r->output), strerror(-err));
		close(fd);
		out_file_discard(&r->output);
	}
	return err;
}

/* Until Ctrl-C, -d, the targets' end or a write error: the ring drained, in order. */
static void record_loop(struct recorder *r)
{
	long elapsed_ms = 0;

	while (!tracer_interrupted()) {
		struct timespec tick = { 0, POLL_MS * 1000 * 1000 };

		nanosleep(&tick, NULL);
		elapsed_ms += POLL_MS;
		consume_for(r, CONSUME_MS);
		if (r->fast_path) {
			uint64_t watermark = tracer_now_ns() - REORDER_MS * 1000000ull;

			if (elapsed_ms % IDLE_READ_MS == 0)
				tracer_read_buffers(r->tracer, on_idle_buffer, r);
			/* Memory stays bounded when events come faster than they are written. */
			/* Held: what the decoder took, from batches or one by one, not yet written.
			 */
			if (r->decoder.stats.decoded + r->pushed - r->decoded_written > HELD_MAX) {
				watermark = UINT64_MAX;
				if (!r->window_shrunk)
					diag("events come faster than they are written: the "
					     "reorder window is cut short to keep memory bounded "
					     "(events.late counts what came out of order)");
				r->window_shrunk = true;
			}
			write_ordered(r, watermark);
		}
		if (r->error)
			break;
		if (tracer_rescan_due(r->tracer, elapsed_ms))
			tracer_rescan(r->tracer);
		if (elapsed_ms % FLUSH_MS == 0) {
			write_clock(r);
			capture_flush(r->writer);
			batch_decoder_trim(&r->decoder);
			read_losses(r->skel, r->losses);
			if (r->live)
				print_status(r, r->losses, seconds_since(r->start_ns), false);
		}
		/* By the clock: draining a busy ring buffer makes ticks longer. */
		if (common_flags.duration_ms &&
		    clock_ns(CLOCK_MONOTONIC) - r->start_ns >=
			    (uint64_t)common_flags.duration_ms * 1000000)
			break;
		if (elapsed_ms % 100 == 0 && !tracer_alive(r->tracer))
			break;
	}
}

/*
 * The stop is one instant: what the targets did up to here, handed over or
 * still in their threads' buffers, and nothing after.
 */
static void stop_instant(struct recorder *r)
{
	bool emptied;

	r->decoder.stop_ns = tracer_now_ns();
	emptied = consume_for(r, STOP_CONSUME_MS);
	tracer_read_buffers(r->tracer, on_idle_buffer, r);
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
	if (!r->error && tracer_alive(r->tracer) &&
	    (r->gpu_records || cuda_collector_running(r->tracer))) {
		r->gpu_only = true; /* the capture ends here for everything else */
		drain_for(r, CUDA_GRACE_MS);
	}
	if (r->error)
		fprintf(stderr, "\noptrace: cannot write %s: %s; it holds what came before\n",
			env.output, strerror(-r->error));
}

/* The events still waiting for their turn, written; what the decoder met, said. */
static void finish_decoding(struct recorder *r)
{
	batch_decoder_finish(&r->decoder);
	write_ordered(r, UINT64_MAX);
	if (r->decoder.stats.missing || r->decoder.stats.late || r->decoder.stats.malformed)
		diag("fast path: %llu events missing from their threads' sequences (lost in the "
		     "kernel, or never handed over), %llu written out of order, %llu malformed",
		     (unsigned long long)r->decoder.stats.missing,
		     (unsigned long long)r->decoder.stats.late,
		     (unsigned long long)r->decoder.stats.malformed);
}

/* The end marker with its counters, the file in place, the last status: err, or the first. */
static int close_capture(struct recorder *r, int err)
{
	struct capture_counter counters[CAPTURE_COUNTER__COUNT];
	uint64_t values[CAPTURE_COUNTER__COUNT], *losses = r->losses;
	struct capture_writer_stats written;
	int close_err;

	read_losses(r->skel, losses);
	values[CAPTURE_LOST_RINGBUF_FULL] = losses[RECORD_LOSS_RINGBUF_FULL];
	values[CAPTURE_LOST_STRINGS] = losses[RECORD_LOSS_STRING_DROPPED];
	values[CAPTURE_STRINGS_UNREADABLE] = losses[RECORD_LOSS_STRING_UNREADABLE];
	values[CAPTURE_STRINGS_TRUNCATED] = losses[RECORD_LOSS_STRING_TRUNCATED];
	values[CAPTURE_LOST_GPU_UNREADABLE] = losses[RECORD_LOSS_GPU_UNREADABLE];
	values[CAPTURE_GPU_RECORDS] = r->gpu_records;
	values[CAPTURE_LOST_BATCH_MALFORMED] =
		losses[RECORD_LOSS_BATCH_BAD] + r->decoder.stats.malformed;
	values[CAPTURE_LOST_BATCH_MISSING] = r->decoder.stats.missing;
	values[CAPTURE_EVENTS_LATE] = r->decoder.stats.late;
	values[CAPTURE_EVENTS_DUPLICATE] = r->decoder.stats.duplicates;
	values[CAPTURE_LOST_GPU_RINGBUF_FULL] = losses[RECORD_LOSS_GPU_RINGBUF_FULL];
	values[CAPTURE_GPU_LAUNCHES] = r->gpu_launches;
	for (int i = 0; i < CAPTURE_COUNTER__COUNT; i++)
		counters[i] = (struct capture_counter){ capture_counter_name(i), values[i] };
	capture_flush(r->writer); /* an error is the writer's, said by capture_close() */
	capture_writer_stats(r->writer, &written);
	r->written_bytes = written.file_bytes;
	close_err = capture_close(r->writer, counters, CAPTURE_COUNTER__COUNT);
	r->writer = NULL;
	if (close_err && !err && !r->error)
		diag("cannot finish %s: %s", out_file_name(&r->output), strerror(-close_err));
	err = err ?: r->error ?: close_err;
	if (!common_flags.quiet) {
		if (r->live)
			fputc('\r', stderr);
		print_status(r, losses, seconds_since(r->start_ns), true);
	}
	if (losses[RECORD_LOSS_RINGBUF_FULL] || losses[RECORD_LOSS_GPU_RINGBUF_FULL])
		diag("the ring buffer (%ld MiB) was full: the targets made events faster than "
		     "optrace read them; record again with a larger --ringbuf (up to 1024), or "
		     "fewer targets",
		     env.ringbuf_mb);
	/* This run's capture, even cut short by a full disk: it says what it lost. */
	close_err = out_file_commit(&r->output);
	err = err ?: close_err;
	if (!close_err && !common_flags.quiet)
		diag("wrote %s", env.output);
	/* An empty capture is not a success to keep quiet about. */
	if (!close_err && !r->events)
		diag("no events were recorded: the targets made no traced call (optrace list -p "
		     "PID "
		     "shows whether a process's probes are armed)");
	return err;
}

int cmd_record(int argc, char **argv)
{
	struct tracer_options targets = { 0 };
	const struct argp_child children[] = {
		{ common_flags_argp(COMMON_QUIET | COMMON_VERBOSE | COMMON_DURATION | COMMON_CUDA |
				    COMMON_FORCE),
		  0, NULL, 0 },
		{ tracer_flags_argp(&targets, 0), 0, "Targets:", 1 },
		{},
	};
	const struct argp argp = {
		.options = options, .parser = parse_arg, .doc = doc, .children = children
	};
	struct recorder recorder = { 0 };
	struct tracer tracer = { 0 };
	bool recording = false; /* attached: what the file holds is this run's */
	char *target = NULL;
	int err, parse_argc, status = 0;

	recorder.tracer = &tracer;
	recorder.start_ns = clock_ns(CLOCK_MONOTONIC);
	parse_argc = tracer_flags_split_command(argc, argv, &targets);
	if (parse_argc < 0 || argp_parse(&argp, parse_argc, argv, 0, NULL, NULL))
		return 2;
	recorder.live = !common_flags.quiet && isatty(STDERR_FILENO);

	libbpf_set_print(libbpf_print);
	recorder.skel = record_bpf__open();
	if (!recorder.skel) {
		diag("cannot open the BPF object: %s", strerror(errno));
		return 1;
	}
	recorder.skel->rodata->filter_targets = targets.command != NULL;
	if (env.no_gpu)
		cuda_skip_programs(recorder.skel->obj);
	err = bpf_map__set_max_entries(recorder.skel->maps.events, (__u32)(env.ringbuf_mb << 20));
	err = err ?: tracer_prepare(&tracer, recorder.skel->obj, &targets);
	if (!err && common_flags.cuda)
		err = cuda_prepare(&tracer, common_flags.quiet, false);
	if (err)
		goto cleanup;
	/*
	 * The capture before the load, so that an -o that cannot be written
	 * fails at once; signals from here on end the run through cleanup,
	 * which removes a capture that recorded nothing.
	 */
	tracer_catch_signals();
	err = open_capture(&recorder, &target);
	err = err ?: tracer_check_pids(&tracer);
	if (err)
		goto cleanup;
	err = tracer_loaded(&tracer, record_bpf__load(recorder.skel));
	if (err || tracer_interrupted())
		goto cleanup;
	recorder.ring = ring_buffer__new(bpf_map__fd(recorder.skel->maps.events), on_record,
					 &recorder, NULL);
	if (!recorder.ring) {
		err = -errno;
		diag("cannot read the ring buffer: %s", strerror(errno));
		goto cleanup;
	}

	write_clock(&recorder);
	recorder.fast_path = tracer.fast_path;
	batch_decoder_init(&recorder.decoder, tracer_now_ns());
	err = tracer_attach(&tracer);
	if (err)
		goto cleanup;
	recording = true;
	if (!targets.command && !common_flags.quiet)
		fprintf(stderr, "Recording to %s... Hit Ctrl-C to end.\n", env.output);
	recorder.start_ns = clock_ns(CLOCK_MONOTONIC);
	record_loop(&recorder);
	stop_instant(&recorder);

cleanup:
	tracer.quiet = common_flags.quiet;
	status = tracer_finish(&tracer, tracer_interrupted());
	/* Detached: what is left in the ring is all there will be. */
	if (recorder.ring)
		consume_for(&recorder, STOP_CONSUME_MS);
	if (recorder.writer && !recording) {
		/* Nothing was traced: an earlier capture stays as it was. */
		capture_close(recorder.writer, NULL, 0);
		recorder.writer = NULL;
		out_file_discard(&recorder.output);
	}
	if (recorder.writer) {
		finish_decoding(&recorder);
		err = close_capture(&recorder, err);
	}
	ring_buffer__free(recorder.ring);
	record_bpf__destroy(recorder.skel);
	batch_decoder_free(&recorder.decoder);
	idmap_free(&recorder.strings);
	idmap_free(&recorder.named);
	idmap_free(&recorder.ranked);
	free(target);
	/* The command's status first, as time(1) and perf stat give it. */
	return status ? status : err ? 1 : 0;
}
