// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The recorder's reordering window (userspace/trace/batch_decode.c): events
 * pushed per thread, in each thread's order but for a few late ones, come
 * out by time, ties in their order of arrival, up to the watermark; each
 * kind of the fast path's events decodes to the per-event record it stands
 * for, and names the strings include/optrace/abi.h's table says.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "trace/batch_decode.h"

static struct record_event out[4096];
static size_t out_count;

static int collect(void *ctx, const struct record_event *event)
{
	(void)ctx;
	ck_assert_uint_lt(out_count, sizeof(out) / sizeof(out[0]));
	out[out_count++] = *event;
	return 0;
}

static int discard(void *ctx, const struct record_event *event)
{
	(void)ctx, (void)event;
	return 0;
}

/* An event of thread tid at ts; its first argument tells events apart. */
static void push(struct batch_decoder *decoder, uint32_t tid, uint64_t ts, uint64_t tag)
{
	struct record_event event = {
		.timestamp = ts,
		.tgid = 1,
		.tid = tid,
		.type = RECORD_OP_BEGIN,
		.args = { tag },
	};

	ck_assert_int_eq(batch_decoder_push(decoder, &event), 0);
}

START_TEST(test_order_ties_and_late)
{
	static const uint64_t want[] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct batch_decoder decoder;

	batch_decoder_init(&decoder, 0);
	out_count = 0;
	push(&decoder, 10, 10, 2);
	push(&decoder, 10, 20, 5);
	push(&decoder, 11, 15, 4);
	push(&decoder, 12, 5, 1);
	push(&decoder, 10, 30, 8);
	push(&decoder, 10, 12, 3); /* earlier than its thread's last: late */
	push(&decoder, 11, 25, 6);
	push(&decoder, 10, 25, 7); /* a tie with thread 11's: after it, as it came after */
	ck_assert_int_eq(batch_decoder_drain(&decoder, 20, collect, NULL), 0);
	ck_assert_uint_eq(out_count, 5);
	ck_assert_int_eq(batch_decoder_drain(&decoder, UINT64_MAX, collect, NULL), 0);
	ck_assert_uint_eq(out_count, 8);
	for (size_t i = 0; i < out_count; i++)
		ck_assert_uint_eq(out[i].args[0], want[i]);
	ck_assert_uint_eq(decoder.stats.late, 0);
	/* Behind what was written already: written, and counted late. */
	push(&decoder, 11, 1, 9);
	ck_assert_int_eq(batch_decoder_drain(&decoder, UINT64_MAX, collect, NULL), 0);
	ck_assert_uint_eq(out[out_count - 1].args[0], 9);
	ck_assert_uint_eq(decoder.stats.late, 1);
	batch_decoder_free(&decoder);
}
END_TEST

/* Many threads, many events, drained as they come: always in time order, none lost. */
START_TEST(test_many_threads_in_order)
{
	static bool seen[200 * 20];
	struct batch_decoder decoder;
	uint64_t clock[7] = { 0 }, pushed = 0, last = 0, drained = 0;
	unsigned int seed = 7;

	batch_decoder_init(&decoder, 0);
	for (int round = 0; round <= 200; round++) {
		for (int i = 0; round < 200 && i < 20; i++) {
			uint32_t tid = (uint32_t)(rand_r(&seed) % 7);

			clock[tid] += 1 + (uint64_t)(rand_r(&seed) % 50);
			push(&decoder, 100 + tid, round * 1000 + clock[tid] % 1000, pushed++);
		}
		out_count = 0;
		/* the last round drains what is left */
		ck_assert_int_eq(
			batch_decoder_drain(&decoder,
					    round < 200 ? (uint64_t)round * 1000 : UINT64_MAX,
					    collect, NULL),
			0);
		for (size_t i = 0; i < out_count; i++) {
			uint64_t sequence = out[i].args[0];

			ck_assert_uint_ge(out[i].timestamp, last);
			last = out[i].timestamp;
			ck_assert_uint_lt(sequence, pushed);
			ck_assert_msg(!seen[sequence], "event %llu came out twice",
				      (unsigned long long)sequence);
			seen[sequence] = true;
		}
		drained += out_count;
	}
	/* none lost, none made up, and the decoder counts none late or missing */
	ck_assert_uint_eq(drained, pushed);
	ck_assert_uint_eq(decoder.stats.late, 0);
	ck_assert_uint_eq(decoder.stats.missing, 0);
	batch_decoder_free(&decoder);
}
END_TEST

/*
 * A busy thread's queue keeps its room when a drain empties it (new memory
 * is zeroed page by page: record spent most of its CPU there), and gives it
 * back once a whole trim period passed without an event, or once a period
 * needed a quarter of it; what comes out meanwhile is what went in, in order.
 */
START_TEST(test_room_kept_then_trimmed)
{
	struct batch_decoder decoder;
	uint64_t ts = 1;
	size_t room = 0;

	batch_decoder_init(&decoder, 0);
	for (int burst = 0; burst < 3; burst++) {
		/* more than the 4096 events whose room an emptied queue kept before */
		for (int i = 0; i < 6000; i++, ts++)
			push(&decoder, 10, ts, ts);
		for (int half = 0; half < 2; half++) {
			out_count = 0;
			ck_assert_int_eq(batch_decoder_drain(&decoder,
							     half ? UINT64_MAX : ts - 3001, collect,
							     NULL),
					 0);
			ck_assert_uint_eq(out_count, 3000);
			ck_assert_uint_eq(out[0].args[0], ts - 6000 + 3000 * (uint64_t)half);
			ck_assert_uint_eq(out[2999].args[0], ts - 3001 + 3000 * (uint64_t)half);
		}
		if (burst == 0)
			room = batch_decoder_room(&decoder);
		/* the same room every burst: kept, not given back and grown again */
		ck_assert_uint_ge(room, 6000);
		ck_assert_uint_eq(batch_decoder_room(&decoder), room);
		batch_decoder_trim(&decoder); /* used this period: kept */
		ck_assert_uint_eq(batch_decoder_room(&decoder), room);
	}
	batch_decoder_trim(&decoder); /* a whole period without events: given back */
	ck_assert_uint_eq(batch_decoder_room(&decoder), 0);
	for (int period = 0; period < 2; period++) {
		/* a burst, then a period of single events: the burst's room goes back */
		for (int i = 0; i < (period ? 1 : 6000); i++, ts++)
			push(&decoder, 10, ts, ts);
		ck_assert_int_eq(batch_decoder_drain(&decoder, UINT64_MAX, discard, NULL), 0);
		batch_decoder_trim(&decoder);
		/* kept after the burst's own period, given back after a quiet one */
		ck_assert_uint_eq(batch_decoder_room(&decoder) != 0, !period);
	}
	batch_decoder_free(&decoder);
}
END_TEST

/* One event of each kind, every field set: the record it gives, field by field. */
START_TEST(test_each_kind_decodes)
{
	struct optrace_event events[] = {
		{ .op_begin = { .kind = OPTRACE_EVENT_OP_BEGIN,
				.depth = 2,
				.op = 11,
				.parent = 10,
				.name = 0x1000,
				.callsite = 0x2000 } },
		{ .op_end = { .kind = OPTRACE_EVENT_OP_END, .status = 1, .op = 11 } },
		{ .op_mode = { .kind = OPTRACE_EVENT_OP_MODE, .mode = 3, .reason = 7, .op = 11 } },
		{ .op_fallback = { .kind = OPTRACE_EVENT_OP_FALLBACK,
				   .reason = 4,
				   .op = 11,
				   .detail = 0x3000 } },
		{ .task_launch = { .kind = OPTRACE_EVENT_TASK_LAUNCH,
				   .points = 9,
				   .task = 21,
				   .op = 11,
				   .name = 0x4000,
				   .root_op = 10 } },
		{ .task_begin = { .kind = OPTRACE_EVENT_TASK_BEGIN,
				  .variant = 2,
				  .point = 5,
				  .task = 21,
				  .processor = 0x1d00000000000003ull,
				  .name = 0x4000,
				  .root_name = 0x5000 } },
		{ .task_end = { .kind = OPTRACE_EVENT_TASK_END,
				.status = 1,
				.point = 5,
				.task = 21 } },
		{ .wait_begin = { .kind = OPTRACE_EVENT_WAIT_BEGIN, .wait_kind = 1, .op = 11 } },
		{ .wait_end = { .kind = OPTRACE_EVENT_WAIT_END, .wait_kind = 1, .op = 11 } },
		{ .gpu_launch = { .kind = OPTRACE_EVENT_GPU_LAUNCH,
				  .api_kind = 1,
				  .flags = 6,
				  .correlation_id = 77 } },
	};
	static const struct {
		unsigned int type, strings, copies;
		uint64_t args[5];
	} want[] = {
		{ RECORD_OP_BEGIN, 2, 2, { 11, 10, 2, 0x1000, 0x2000 } },
		{ RECORD_OP_END, 0, 0, { 11, 1 } },
		{ RECORD_OP_MODE, 0, 0, { 11, 3, 7 } },
		{ RECORD_OP_FALLBACK, 1, 1, { 11, 4, 0x3000 } },
		{ RECORD_TASK_LAUNCH, 1, 1, { 21, 11, 10, 0x4000, 9 } },
		{ RECORD_TASK_BEGIN, 0, 2, { 21, 5, 2, 0x1d00000000000003ull } },
		{ RECORD_TASK_END, 0, 0, { 21, 5, 1 } },
		{ RECORD_WAIT_BEGIN, 0, 0, { 11, 1 } },
		{ RECORD_WAIT_END, 0, 0, { 11, 1 } },
		{ RECORD_GPU_LAUNCH, 0, 0, { 77, 1, 6 } },
	};
	const size_t kinds = sizeof(events) / sizeof(events[0]);
	struct batch_origin origin = { .tgid = 1, .tid = 2, .buffer = 0x9000 };
	struct batch_decoder decoder;

	ck_assert_uint_eq(kinds, OPTRACE_EVENT__COUNT - 1);
	batch_decoder_init(&decoder, 0);
	out_count = 0;
	for (size_t i = 0; i < kinds; i++)
		events[i].time_ns = 100 + i;
	ck_assert_int_eq(batch_decoder_add(&decoder, &origin, 0, (uint32_t)kinds, events), 0);
	ck_assert_int_eq(batch_decoder_drain(&decoder, UINT64_MAX, collect, NULL), 0);
	ck_assert_uint_eq(out_count, kinds);
	ck_assert_uint_eq(decoder.stats.malformed, 0);
	for (size_t i = 0; i < kinds; i++) {
		uint64_t strings[OPTRACE_EVENT_MAX_STRINGS];

		ck_assert_uint_eq(out[i].type, want[i].type);
		ck_assert_uint_eq(out[i].timestamp, 100 + i);
		for (int k = 0; k < 5; k++)
			ck_assert_msg(out[i].args[k] == want[i].args[k],
				      "kind %u: argument %d is %#llx, not %#llx", events[i].kind, k,
				      (unsigned long long)out[i].args[k],
				      (unsigned long long)want[i].args[k]);
		ck_assert_uint_eq(optrace_event_strings(&events[i], false, strings),
				  want[i].strings);
		ck_assert_uint_eq(optrace_event_strings(&events[i], true, strings), want[i].copies);
	}
	/* a kind from a newer library: counted, not decoded */
	events[0].kind = OPTRACE_EVENT__COUNT;
	ck_assert_int_eq(batch_decoder_add(&decoder, &origin, kinds, 1, events), 0);
	ck_assert_uint_eq(decoder.stats.malformed, 1);
	ck_assert_uint_eq(optrace_event_strings(&events[0], true, (uint64_t[2]){ 0 }), 0);
	batch_decoder_free(&decoder);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("batch_decode");
	TCase *tc = tcase_create("order");

	tcase_add_test(tc, test_order_ties_and_late);
	tcase_add_test(tc, test_many_threads_in_order);
	tcase_add_test(tc, test_room_kept_then_trimmed);
	tcase_add_test(tc, test_each_kind_decodes);
	suite_add_tcase(suite, tc);
	return run_suite(suite);
}
