// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The recorder's reordering window (userspace/trace/batch_decode.c): events
 * pushed per thread, in each thread's order but for a few late ones, come
 * out by time, ties in their order of arrival, up to the watermark.
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

int main(void)
{
	Suite *suite = suite_create("batch_decode");
	TCase *tc = tcase_create("order");

	tcase_add_test(tc, test_order_ties_and_late);
	tcase_add_test(tc, test_many_threads_in_order);
	suite_add_tcase(suite, tc);
	return run_suite(suite);
}
