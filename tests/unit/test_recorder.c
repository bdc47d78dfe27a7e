// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The recorder without BPF (userspace/session/recorder_core.c and
 * record_meta.c): records as the ring buffer brings them and buffers as idle
 * threads hold them, fed into a real capture file and read back with the
 * capture reader. What the file must hold: the events in time order across
 * the reorder window, the names and ranks of what is met first (from the
 * process facts given), nothing after the stop, and the losses counted in
 * the end marker. No root: the facts are a table here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"
#include "common/clock.h"
#include "capture/capture.h"
#include "session/record_meta.h"
#include "session/recorder_core.h"

/* The processes the fake facts know: RANKED announced rank 3 of 8, GONE has exited. */
#define RANKED 100
#define GONE 200
#define UNREADABLE_ADDRESS 0xbad
#define LONG_ADDRESS 0x1006

static bool fake_comm(void *ctx, uint32_t tgid, uint32_t tid, char name[RECORD_NAME_LEN])
{
	(void)ctx;
	if (tgid == GONE)
		return false;
	memset(name, 0, RECORD_NAME_LEN);
	snprintf(name, RECORD_NAME_LEN, tid ? "thread-%u" : "proc-%u", tid ? tid : tgid);
	return true;
}

static int fake_runtime_info(void *ctx, pid_t tgid, struct optrace_runtime_info *info)
{
	(void)ctx;
	if (tgid != RANKED)
		return -ENOENT;
	*info = (struct optrace_runtime_info){
		.abi_version = 2, .rank = 3, .rank_count = 8, .initialized = 1
	};
	return 0;
}

static int fake_string(void *ctx, pid_t pid, uint64_t address, char *text, size_t size,
		       bool *truncated)
{
	(void)ctx;
	if (address == UNREADABLE_ADDRESS)
		return -EFAULT;
	snprintf(text, size, "s%d.%llx", pid, (unsigned long long)address);
	*truncated = address == LONG_ADDRESS;
	return 0;
}

static const struct record_facts facts = {
	.comm = fake_comm,
	.runtime_info = fake_runtime_info,
	.string = fake_string,
};

/* A capture's records, read back whole. */
struct record_copy {
	uint16_t type;
	uint32_t size;
	union {
		struct record_event event;
		struct record_name name;
		struct record_string string;
		struct record_clock clock;
		struct record_gpu gpu;
	} u;
};

static struct record_copy got[1024];
static size_t got_count;
static struct capture_counter got_counters[CAPTURE_COUNTER__COUNT];
static char got_target[256];

static char *capture_path;
static struct recorder_core core;

static void setup(void)
{
	struct capture_writer *writer;
	struct capture_writer_opts opts = { .optrace_version = "9.9.9-test",
					    .hostname = "testhost",
					    .target = "the targets" };

	test_dir_setup();
	capture_path = test_path("run.capture");
	ck_assert_int_eq(capture_writer_open(&writer, capture_path, &opts), 0);
	recorder_core_init(&core, writer, &facts);
	got_count = 0;
}

static void teardown(void)
{
	recorder_core_free(&core);
	free(capture_path);
	test_dir_teardown();
}

/* Closes the capture with losses and reads it back into got; the reader's status. */
static enum capture_end close_and_read(const uint64_t losses[RECORD_LOSS__COUNT])
{
	const struct capture_status *status;
	struct capture_record record;
	struct capture_reader *reader;
	uint64_t file_bytes = 0;
	char why[256];
	enum capture_end end;
	int err;

	ck_assert_int_eq(recorder_core_close(&core, losses, &file_bytes), 0);
	ck_assert_ptr_null(core.writer);
	ck_assert_uint_gt(file_bytes, 0);
	ck_assert_int_eq(capture_reader_open(&reader, capture_path, why, sizeof(why)), 0);
	snprintf(got_target, sizeof(got_target), "%s", capture_reader_header(reader)->target);
	while ((err = capture_next(reader, &record)) == 1) {
		ck_assert_uint_lt(got_count, sizeof(got) / sizeof(got[0]));
		ck_assert_uint_le(record.size, sizeof(got[0].u));
		got[got_count].type = record.type;
		got[got_count].size = record.size;
		memcpy(&got[got_count].u, record.data, record.size);
		got_count++;
	}
	ck_assert_int_eq(err, 0);
	status = capture_reader_status(reader);
	end = status->end;
	ck_assert_uint_eq(status->trailer.counter_count, CAPTURE_COUNTER__COUNT);
	for (size_t i = 0; i < CAPTURE_COUNTER__COUNT; i++) {
		ck_assert_str_eq(status->trailer.counters[i].name, capture_counter_name(i));
		got_counters[i] = (struct capture_counter){ capture_counter_name(i),
							    status->trailer.counters[i].value };
	}
	capture_reader_close(reader);
	return end;
}

static uint64_t counter(enum capture_counter_id id)
{
	return got_counters[id].value;
}

static void feed(const void *record, size_t size)
{
	ck_assert_int_eq(recorder_core_record(&core, record, size), 0);
}

static void feed_event(uint16_t type, uint64_t ts, uint32_t tgid, uint32_t tid, uint64_t tag)
{
	struct record_event event = {
		.timestamp = ts, .tgid = tgid, .tid = tid, .type = type, .args = { tag }
	};

	feed(&event, sizeof(event));
}

static void expect_name(size_t i, uint32_t tgid, uint32_t tid, const char *name)
{
	ck_assert_msg(got[i].type == RECORD_NAME, "record %zu is of type %u, not a name", i,
		      got[i].type);
	ck_assert_uint_eq(got[i].u.name.tgid, tgid);
	ck_assert_uint_eq(got[i].u.name.tid, tid);
	ck_assert_str_eq(got[i].u.name.name, name);
}

static void expect_event(size_t i, uint16_t type, uint64_t ts, uint32_t tid, uint64_t tag)
{
	ck_assert_msg(got[i].type == type, "record %zu is of type %u, not %u", i, got[i].type,
		      type);
	ck_assert_uint_eq(got[i].u.event.timestamp, ts);
	ck_assert_uint_eq(got[i].u.event.tid, tid);
	ck_assert_uint_eq(got[i].u.event.args[0], tag);
}

/* The per-event path: names and the announced rank before a process's first event. */
START_TEST(test_per_event_records_routed)
{
	static const uint64_t losses[RECORD_LOSS__COUNT] = {
		[RECORD_LOSS_RINGBUF_FULL] = 5,	     [RECORD_LOSS_STRING_DROPPED] = 2,
		[RECORD_LOSS_STRING_UNREADABLE] = 1, [RECORD_LOSS_STRING_TRUNCATED] = 4,
		[RECORD_LOSS_GPU_UNREADABLE] = 6,    [RECORD_LOSS_BATCH_BAD] = 7,
		[RECORD_LOSS_GPU_RINGBUF_FULL] = 9,
	};
	/* The kernel's losses go in the end marker as they are; the core's are added. */
	static const uint64_t want_counters[CAPTURE_COUNTER__COUNT] = {
		[CAPTURE_LOST_RINGBUF_FULL] = 5,    [CAPTURE_LOST_STRINGS] = 2,
		[CAPTURE_STRINGS_UNREADABLE] = 1,   [CAPTURE_STRINGS_TRUNCATED] = 4,
		[CAPTURE_LOST_GPU_UNREADABLE] = 6,  [CAPTURE_GPU_RECORDS] = 1,
		[CAPTURE_LOST_BATCH_MALFORMED] = 7, [CAPTURE_LOST_GPU_RINGBUF_FULL] = 9,
		[CAPTURE_GPU_LAUNCHES] = 1,
	};
	struct record_string string = { .timestamp = 900,
					.tgid = RANKED,
					.type = RECORD_STRING,
					.address = 0x10,
					.text = "from the kernel" };
	struct record_gpu gpu = {
		.timestamp = 1700, .tgid = RANKED, .type = RECORD_GPU, .size = 8
	};

	recorder_core_start(&core, false, 0);
	feed(&string, sizeof(string));
	feed_event(RECORD_OP_BEGIN, 1000, RANKED, 101, 1);
	feed_event(RECORD_OP_END, 1100, RANKED, 101, 1);
	feed_event(RECORD_OP_BEGIN, 1150, RANKED, 102, 2); /* a new thread: its name only */
	feed_event(RECORD_OP_BEGIN, 1200, GONE, 201, 3);   /* exited: no name, no rank */
	feed_event(RECORD_RT_INIT, 1300, 300, 300, 2);	   /* its own rank: none synthesized */
	feed_event(RECORD_GPU_LAUNCH, 1350, 300, 300, 77);
	feed(&string, sizeof(struct record_event) - 1); /* too short: ignored */

	recorder_core_stop_at(&core, 1500);
	feed_event(RECORD_OP_END, 1600, RANKED, 101, 4); /* after the stop */
	core.gpu_only = true;				 /* the collector's last flush */
	feed_event(RECORD_OP_END, 1400, RANKED, 101, 5);
	feed(&gpu, sizeof(gpu));
	recorder_core_finish(&core);

	ck_assert_int_eq(close_and_read(losses), CAPTURE_END_CLEAN);
	ck_assert_str_eq(got_target, "the targets");
	ck_assert_uint_eq(got_count, 14);
	ck_assert_uint_eq(got[0].type, RECORD_STRING);
	ck_assert_str_eq(got[0].u.string.text, "from the kernel");
	expect_name(1, RANKED, 0, "proc-100");
	expect_name(2, RANKED, 101, "thread-101");
	expect_event(3, RECORD_RT_INIT, 1000, 101, 2);
	ck_assert_int_eq(got[3].u.event.rt_init.rank, 3);
	ck_assert_int_eq(got[3].u.event.rt_init.rank_count, 8);
	expect_event(4, RECORD_OP_BEGIN, 1000, 101, 1);
	expect_event(5, RECORD_OP_END, 1100, 101, 1);
	expect_name(6, RANKED, 102, "thread-102");
	expect_event(7, RECORD_OP_BEGIN, 1150, 102, 2);
	expect_event(8, RECORD_OP_BEGIN, 1200, 201, 3);
	expect_name(9, 300, 0, "proc-300");
	expect_name(10, 300, 300, "thread-300");
	expect_event(11, RECORD_RT_INIT, 1300, 300, 2);
	expect_event(12, RECORD_GPU_LAUNCH, 1350, 300, 77);
	ck_assert_uint_eq(got[13].type, RECORD_GPU);
	ck_assert_uint_eq(got[13].u.gpu.timestamp, 1700);
	ck_assert_uint_eq(core.events, 9); /* all but the names */

	for (int i = 0; i < CAPTURE_COUNTER__COUNT; i++)
		ck_assert_msg(counter(i) == want_counters[i], "%s is %llu, not %llu",
			      capture_counter_name(i), (unsigned long long)counter(i),
			      (unsigned long long)want_counters[i]);
}
END_TEST

/* A batch as the kernel hands it over: op_begin events at times, tagged first + i. */
static void feed_batch(uint32_t tgid, uint32_t tid, const char *process_comm,
		       const char *thread_comm, uint64_t sequence, const uint64_t *times,
		       uint32_t count, uint64_t first)
{
	size_t size = RECORD_BATCH_SIZE(count);
	struct record_batch *batch = calloc(1, sizeof(*batch));

	ck_assert_ptr_nonnull(batch);
	*batch = (struct record_batch){ .timestamp = times[count - 1] + 1,
					.tgid = tgid,
					.tid = tid,
					.type = RECORD_BATCH,
					.sequence = sequence,
					.buffer = 0xb000 + tid,
					.count = count };
	snprintf(batch->process_comm, sizeof(batch->process_comm), "%s", process_comm);
	snprintf(batch->thread_comm, sizeof(batch->thread_comm), "%s", thread_comm);
	for (uint32_t i = 0; i < count; i++) {
		batch->events[i].op_begin.time_ns = times[i];
		batch->events[i].op_begin.kind = OPTRACE_EVENT_OP_BEGIN;
		batch->events[i].op_begin.op = first + i;
	}
	feed(batch, size);
	free(batch);
}

/* The probe events of got, in file order: each must not be earlier than the one before but late
 * ones. */
static size_t probe_events(struct record_event *out, size_t max)
{
	size_t count = 0;

	for (size_t i = 0; i < got_count; i++)
		if (record_is_probe_event(got[i].type)) {
			ck_assert_uint_lt(count, max);
			out[count++] = got[i].u.event;
		}
	return count;
}

/*
 * The fast path: threads' batches come in any order and leave in time
 * order up to the watermark; what comes behind it is written and counted
 * late; sequences count what is missing and what came twice; an idle
 * thread's strings are read from its process.
 */
START_TEST(test_fast_path_in_time_order)
{
	static const uint64_t a_times[] = { 10, 30, 50 }, b_times[] = { 20, 40 },
			      a_later[] = { 70 }, c_times[] = { 25, 60 };
	/* The late one (25) as soon as it came: after what was written before it. */
	static const uint64_t want_tags[] = { 1, 11, 2, 12, 21, 3, 22, 4 };
	static const uint64_t want_times[] = { 10, 20, 30, 40, 25, 50, 60, 70 };
	static const uint64_t no_losses[RECORD_LOSS__COUNT];
	struct optrace_event idle[2] = { 0 };
	struct record_event events[16];
	size_t count, strings = 0;

	recorder_core_start(&core, true, 0);
	feed_batch(RANKED, 101, "app", "worker", 0, a_times, 3, 1);
	feed_batch(RANKED, 102, "app", "", 0, b_times, 2, 11);
	recorder_core_write_ordered(&core, 45); /* 10, 20, 30, 40 */
	ck_assert_uint_eq(core.decoded_written, 4);
	ck_assert_uint_eq(core.decoder.written_ns, 40);

	/* Thread 103, idle: its event at 25 is behind what was written. */
	for (int i = 0; i < 2; i++) {
		idle[i].op_begin.time_ns = c_times[i];
		idle[i].op_begin.kind = OPTRACE_EVENT_OP_BEGIN;
		idle[i].op_begin.op = 21 + (uint64_t)i;
	}
	idle[0].op_begin.name = 0x1000;
	idle[0].op_begin.callsite = UNREADABLE_ADDRESS;
	idle[1].op_begin.name = LONG_ADDRESS;
	idle[1].op_begin.callsite = 0x1000; /* read once */
	ck_assert_int_eq(recorder_core_idle_buffer(&core, RANKED, 103, 0xb067, 0, 2, idle), 0);
	/* Thread 102's buffer read again while idle: the same events, dropped. */
	for (int i = 0; i < 2; i++) {
		idle[i] = (struct optrace_event){ 0 };
		idle[i].op_begin.time_ns = b_times[i];
		idle[i].op_begin.kind = OPTRACE_EVENT_OP_BEGIN;
		idle[i].op_begin.op = 11 + (uint64_t)i;
	}
	ck_assert_int_eq(recorder_core_idle_buffer(&core, RANKED, 102, 0xb000 + 102, 0, 2, idle),
			 0);
	/* Thread 101's next batch skips sequences 3 and 4. */
	feed_batch(RANKED, 101, "app", "worker", 5, a_later, 1, 4);
	recorder_core_finish(&core);

	ck_assert_int_eq(close_and_read(no_losses), CAPTURE_END_CLEAN);
	/* Names as batches came, the kernel's comms first; facts for the rest. */
	expect_name(0, RANKED, 0, "app");
	expect_name(1, RANKED, 101, "worker");
	expect_name(2, RANKED, 102, "thread-102");
	count = probe_events(events, 16);
	/* The rank read from the process, ordered with the events at the first batch's time. */
	ck_assert_uint_eq(count, 9);
	ck_assert_uint_eq(events[5].type, RECORD_OP_BEGIN);
	ck_assert_uint_eq(events[6].type, RECORD_RT_INIT);
	ck_assert_uint_eq(events[6].timestamp, 51);
	ck_assert_int_eq(events[6].rt_init.rank, 3);
	for (size_t i = 0, k = 0; i < count; i++) {
		if (events[i].type == RECORD_RT_INIT)
			continue;
		ck_assert_uint_eq(events[i].args[0], want_tags[k]);
		ck_assert_uint_eq(events[i].timestamp, want_times[k]);
		k++;
	}
	for (size_t i = 0; i < got_count; i++) {
		if (got[i].type != RECORD_STRING)
			continue;
		strings++;
		ck_assert_uint_eq(got[i].u.string.timestamp, 40); /* the newest time written */
		if (got[i].u.string.address == UNREADABLE_ADDRESS) {
			ck_assert_uint_eq(got[i].u.string.unreadable, 1);
		} else if (got[i].u.string.address == LONG_ADDRESS) {
			ck_assert_uint_eq(got[i].u.string.truncated, 1);
			ck_assert_str_eq(got[i].u.string.text, "s100.1006");
		} else {
			ck_assert_uint_eq(got[i].u.string.address, 0x1000);
			ck_assert_str_eq(got[i].u.string.text, "s100.1000");
			ck_assert(!got[i].u.string.unreadable && !got[i].u.string.truncated);
		}
	}
	ck_assert_uint_eq(strings, 3);
	expect_name(7, RANKED, 103, "thread-103"); /* after the 4 events written before it came */
	ck_assert_uint_eq(counter(CAPTURE_EVENTS_LATE), 1);
	ck_assert_uint_eq(counter(CAPTURE_EVENTS_DUPLICATE), 2);
	ck_assert_uint_eq(counter(CAPTURE_LOST_BATCH_MISSING), 2);
	ck_assert_uint_eq(counter(CAPTURE_LOST_BATCH_MALFORMED), 0);
	ck_assert_uint_eq(core.events, 9);
}
END_TEST

/*
 * Overload: more than held_max events waiting are written at once, whatever
 * the watermark, and an earlier event coming after them counts as late.
 */
START_TEST(test_window_cut_short_when_full)
{
	static const uint64_t no_losses[RECORD_LOSS__COUNT];
	uint64_t times[10], early[] = { 50 };
	struct record_event events[16];
	size_t count;

	core.held_max = 4;
	recorder_core_start(&core, true, 0);
	for (int i = 0; i < 10; i++)
		times[i] = 100 + (uint64_t)i;
	feed_batch(GONE, 201, "", "", 0, times, 4, 1);
	recorder_core_write_ordered(&core, 0); /* 4 held: within the window */
	ck_assert_uint_eq(core.decoded_written, 0);
	ck_assert(!core.window_shrunk);
	feed_batch(GONE, 201, "", "", 4, times + 4, 6, 5);
	recorder_core_write_ordered(&core, 0); /* 10 held: all written */
	ck_assert_uint_eq(core.decoded_written, 10);
	ck_assert(core.window_shrunk);
	feed_batch(GONE, 202, "", "", 0, early, 1, 11);
	recorder_core_write_ordered(&core, 0);
	ck_assert_uint_eq(core.decoded_written, 10); /* one held: it waits */
	recorder_core_finish(&core);

	ck_assert_int_eq(close_and_read(no_losses), CAPTURE_END_CLEAN);
	count = probe_events(events, 16);
	ck_assert_uint_eq(count, 11);
	for (size_t i = 0; i < 10; i++)
		ck_assert_uint_eq(events[i].timestamp, 100 + i);
	ck_assert_uint_eq(events[10].timestamp, 50);
	ck_assert_uint_eq(counter(CAPTURE_EVENTS_LATE), 1);
	/* A process gone before it was met: no name records at all. */
	for (size_t i = 0; i < got_count; i++)
		ck_assert_uint_ne(got[i].type, RECORD_NAME);
}
END_TEST

/* The header's target, the names, the clock anchors: from the facts given. */
START_TEST(test_metadata_synthesized)
{
	char *const command[] = { "./app", "--size", "8", NULL };
	static const pid_t pids[] = { RANKED, GONE };
	struct record_clock clock;
	struct record_name name;
	struct record_event rank;
	struct record_string string;
	struct timespec before, after;
	char comm[RECORD_NAME_LEN], self[RECORD_NAME_LEN];
	char *text;

	text = record_meta_target(&facts, command, false, NULL, 0);
	ck_assert_str_eq(text, "./app --size 8");
	free(text);
	text = record_meta_target(&facts, NULL, true, NULL, 0);
	ck_assert_str_eq(text, "every process that maps liboptrace (-a)");
	free(text);
	text = record_meta_target(&facts, NULL, false, pids, 2);
	ck_assert_str_eq(text, "process 100 (proc-100), process 200");
	free(text);

	/* A batch's comm wins over the facts, cut to a comm's 16 bytes. */
	ck_assert(record_meta_name(&facts, 5, RANKED, 7, "a-name-longer-than-sixteen", &name));
	ck_assert_str_eq(name.name, "a-name-longer-th");
	ck_assert_uint_eq(name.type, RECORD_NAME);
	ck_assert(record_meta_name(&facts, 5, RANKED, 7, "", &name));
	ck_assert_str_eq(name.name, "thread-7");
	ck_assert(!record_meta_name(&facts, 5, GONE, 0, NULL, &name));
	ck_assert(record_meta_rank(&facts, 9, RANKED, 7, &rank));
	ck_assert_uint_eq(rank.type, RECORD_RT_INIT);
	ck_assert_uint_eq(rank.timestamp, 9);
	ck_assert_int_eq(rank.rt_init.abi_version, 2);
	ck_assert(!record_meta_rank(&facts, 9, GONE, 7, &rank));
	record_meta_string(&facts, 3, RANKED, UNREADABLE_ADDRESS, &string);
	ck_assert_uint_eq(string.unreadable, 1);
	ck_assert_uint_eq(string.address, UNREADABLE_ADDRESS);

	clock_gettime(CLOCK_MONOTONIC, &before);
	record_meta_clock(&clock);
	clock_gettime(CLOCK_MONOTONIC, &after);
	ck_assert_uint_eq(clock.type, RECORD_CLOCK);
	ck_assert_uint_ge(clock.timestamp, timespec_ns(&before));
	ck_assert_uint_le(clock.timestamp, timespec_ns(&after));
	ck_assert_uint_le(clock.uncertainty_ns, timespec_ns(&after) - timespec_ns(&before));

	/* This machine's facts: this very process's name, as /proc says it. */
	ck_assert(record_facts_proc.comm(NULL, (uint32_t)getpid(), 0, comm));
	ck_assert(record_meta_first_line("/proc/self/comm", self));
	ck_assert_str_eq(comm, self);
	ck_assert(!record_facts_proc.comm(NULL, (uint32_t)getpid(), 1, comm));

	/* The anchors go in the capture; its target is the header's. */
	recorder_core_start(&core, false, 0);
	recorder_core_clock(&core);
	recorder_core_tick(&core);
	recorder_core_finish(&core);
	ck_assert_int_eq(close_and_read((const uint64_t[RECORD_LOSS__COUNT]){ 0 }),
			 CAPTURE_END_CLEAN);
	ck_assert_uint_eq(got_count, 2);
	ck_assert_uint_eq(got[0].type, RECORD_CLOCK);
	ck_assert_uint_eq(got[1].type, RECORD_CLOCK);
	ck_assert_uint_ge(got[1].u.clock.timestamp, got[0].u.clock.timestamp);
	ck_assert_uint_gt(got[0].u.clock.realtime_ns, 0);
	ck_assert_uint_eq(core.events, 0);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("recorder");
	TCase *tc = tcase_create("recorder");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_per_event_records_routed);
	tcase_add_test(tc, test_fast_path_in_time_order);
	tcase_add_test(tc, test_window_cut_short_when_full);
	tcase_add_test(tc, test_metadata_synthesized);
	suite_add_tcase(suite, tc);
	return run_suite(suite);
}
