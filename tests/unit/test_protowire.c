// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The protobuf wire writer (userspace/output/protowire.h) against the bytes
 * that protobuf.dev's "Encoding" page gives for its examples, and its own
 * promises: the shortest length for a nested message, a fixed-width
 * redundant one for a large body, strings made valid UTF-8.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "testlib.h"
#include "output/protowire.h"

static struct pw_buf buf;

static void setup(void)
{
	buf = (struct pw_buf){ 0 };
}

static void teardown(void)
{
	pw_free(&buf);
}

/* The buffer holds exactly these bytes. */
static void expect(const uint8_t *bytes, size_t length)
{
	char got[256] = "", want[256] = "";

	for (size_t i = 0; i < buf.used && i < 60; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%02x ", buf.data[i]);
	for (size_t i = 0; i < length && i < 60; i++)
		snprintf(want + strlen(want), sizeof(want) - strlen(want), "%02x ", bytes[i]);
	ck_assert_int_eq(buf.error, 0);
	ck_assert_msg(buf.used == length && !memcmp(buf.data, bytes, length),
		      "wrote %zu bytes: %s\nwanted %zu: %s", buf.used, got, length, want);
	buf.used = 0;
}

#define EXPECT(...)                                              \
	do {                                                     \
		static const uint8_t bytes_[] = { __VA_ARGS__ }; \
		expect(bytes_, sizeof(bytes_));                  \
	} while (0)

START_TEST(test_varints)
{
	pw_varint(&buf, 0);
	EXPECT(0x00);
	pw_varint(&buf, 1);
	EXPECT(0x01);
	pw_varint(&buf, 127);
	EXPECT(0x7f);
	pw_varint(&buf, 128);
	EXPECT(0x80, 0x01);
	/* The page's examples: 150 and 300. */
	pw_varint(&buf, 150);
	EXPECT(0x96, 0x01);
	pw_varint(&buf, 300);
	EXPECT(0xac, 0x02);
	pw_varint(&buf, UINT64_MAX);
	EXPECT(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01);

	ck_assert_uint_eq(pw_varint_size(0), 1);
	ck_assert_uint_eq(pw_varint_size(127), 1);
	ck_assert_uint_eq(pw_varint_size(128), 2);
	ck_assert_uint_eq(pw_varint_size(16383), 2);
	ck_assert_uint_eq(pw_varint_size(16384), 3);
	ck_assert_uint_eq(pw_varint_size(UINT32_MAX), 5);
	ck_assert_uint_eq(pw_varint_size(UINT64_MAX), 10);
	for (uint64_t v = 1; v; v <<= 1) {
		pw_varint(&buf, v);
		ck_assert_uint_eq(buf.used, pw_varint_size(v));
		buf.used = 0;
	}
}
END_TEST

START_TEST(test_fields)
{
	/* "a = 150" in field 1: 08 96 01. */
	pw_uint(&buf, 1, 150);
	EXPECT(0x08, 0x96, 0x01);
	/* Field 47 needs a two-byte tag: (47 << 3 | 1) = 377. */
	pw_fixed64(&buf, 47, 0x0102030405060708ull);
	EXPECT(0xf9, 0x02, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01);
	/* "b = testing" in field 2. */
	pw_string(&buf, 2, "testing");
	EXPECT(0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g');
	pw_bytes(&buf, 3, "\0\1", 2);
	EXPECT(0x1a, 0x02, 0x00, 0x01);
	pw_string(&buf, 60, "");
	EXPECT(0xe2, 0x03, 0x00);
}
END_TEST

START_TEST(test_strings_become_utf8)
{
	/* Valid UTF-8 stays as it is. */
	pw_string(&buf, 1, "\xc3\x97");
	EXPECT(0x0a, 0x02, 0xc3, 0x97);
	/* Each byte that starts no sequence becomes U+FFFD, as in the JSON. */
	pw_string(&buf, 1,
		  "a\xff"
		  "b");
	EXPECT(0x0a, 0x05, 'a', 0xef, 0xbf, 0xbd, 'b');
	/* A sequence cut short: its first byte goes, the next is read anew. */
	pw_string(&buf, 1, "\xe2\x82");
	EXPECT(0x0a, 0x06, 0xef, 0xbf, 0xbd, 0xef, 0xbf, 0xbd);
	/* A surrogate (ED A0 80) is no UTF-8 either. */
	pw_string(&buf, 1, "\xed\xa0\x80");
	EXPECT(0x0a, 0x09, 0xef, 0xbf, 0xbd, 0xef, 0xbf, 0xbd, 0xef, 0xbf, 0xbd);
}
END_TEST

START_TEST(test_nested_messages_get_the_shortest_length)
{
	/* "c = {a = 150}" in field 3: 1a 03 08 96 01, as the page gives it. */
	size_t outer = pw_open(&buf, 3);

	pw_uint(&buf, 1, 150);
	pw_close(&buf, outer);
	EXPECT(0x1a, 0x03, 0x08, 0x96, 0x01);

	/* Nested twice, and empty. */
	outer = pw_open(&buf, 1);
	pw_close(&buf, pw_open(&buf, 2));
	pw_uint(&buf, 3, 1);
	pw_close(&buf, outer);
	EXPECT(0x0a, 0x04, 0x12, 0x00, 0x18, 0x01);
}
END_TEST

START_TEST(test_large_body_keeps_a_fixed_width_length)
{
	char text[5001];
	size_t start;

	memset(text, 'x', sizeof(text) - 1);
	text[sizeof(text) - 1] = '\0';
	start = pw_open(&buf, 1);
	pw_string(&buf, 2, text);
	pw_close(&buf, start);
	ck_assert_int_eq(buf.error, 0);
	/* Body: tag, 2-byte length 5000, the text: 5003 = 0x138b. */
	ck_assert_uint_eq(buf.used, 1 + PW_LENGTH_RESERVED + 5003);
	/* 5003 in four bytes, the continuation bit set on the first three: 8b a7 80 00. */
	ck_assert_uint_eq(buf.data[0], 0x0a);
	ck_assert_uint_eq(buf.data[1], (5003 & 0x7f) | 0x80);
	ck_assert_uint_eq(buf.data[2], ((5003 >> 7) & 0x7f) | 0x80);
	ck_assert_uint_eq(buf.data[3], 0x80);
	ck_assert_uint_eq(buf.data[4], 0x00);
	ck_assert_uint_eq(buf.data[5], 0x12);
	ck_assert_uint_eq(buf.data[6], (5000 & 0x7f) | 0x80);
	ck_assert_uint_eq(buf.data[7], 5000 >> 7);
	ck_assert_int_eq(buf.data[8], 'x');
	ck_assert_int_eq(buf.data[buf.used - 1], 'x');
}
END_TEST

START_TEST(test_buffer_grows)
{
	/* A hundred thousand fields: the buffer grows and keeps them all. */
	for (uint32_t i = 0; i < 100000; i++)
		pw_uint(&buf, 1, i);
	ck_assert_int_eq(buf.error, 0);
	ck_assert_uint_ge(buf.size, buf.used);
	for (size_t at = 0, i = 0; at < buf.used; i++) {
		uint64_t value = 0;
		int shift = 0;

		ck_assert_uint_eq(buf.data[at++], 0x08);
		do {
			value |= (uint64_t)(buf.data[at] & 0x7f) << shift;
			shift += 7;
		} while (buf.data[at++] & 0x80);
		ck_assert_uint_eq(value, i);
	}
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("protowire");
	TCase *tc = tcase_create("encoding");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_varints);
	tcase_add_test(tc, test_fields);
	tcase_add_test(tc, test_strings_become_utf8);
	tcase_add_test(tc, test_nested_messages_get_the_shortest_length);
	tcase_add_test(tc, test_large_body_keeps_a_fixed_width_length);
	tcase_add_test(tc, test_buffer_grows);
	suite_add_tcase(suite, tc);

	return run_suite(suite);
}
