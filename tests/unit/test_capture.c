// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The capture file: round trips, the clock pair, what the writer refuses,
 * format versions, inputs that are no file, and capture_dump. Every way a
 * file can end badly is test_capture_damage.c's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <zlib.h>

#include "bpf/events.h"
#include "capture_sample.h"
#include "testlib.h"
#include "capture/capture.h"

START_TEST(test_round_trip)
{
	struct layout layout;
	const struct capture_header *h;
	const struct capture_status *s;
	struct capture_reader *r;
	char why[256];

	write_capture(5000, 1024, 333, &layout);
	ck_assert_uint_gt(layout.chunks, 100);

	ck_assert_int_eq(capture_reader_open(&r, sample_path, why, sizeof(why)), 0);
	h = capture_reader_header(r);
	ck_assert_uint_eq(h->version_major, CAPTURE_VERSION_MAJOR);
	ck_assert_uint_eq(h->version_minor, CAPTURE_VERSION_MINOR);
	ck_assert_uint_eq(h->chunk_size, 1024);
	ck_assert_uint_eq(h->header_size, layout.header_size);
	ck_assert_str_eq(h->optrace_version, "9.9.9-test");
	ck_assert_str_eq(h->hostname, "testhost");
	ck_assert_str_eq(h->target, "demo --workload all");
	ck_assert_str_eq(capture_header_get(h, "rank.1234"), "0 of 4");
	ck_assert_str_eq(capture_header_get(h, "untrusted"), "a\"b\n\xff$|");
	ck_assert_ptr_nonnull(capture_header_get(h, CAPTURE_KEY_KERNEL));
	ck_assert_ptr_null(capture_header_get(h, "no.such.key"));

	ck_assert_int_eq(read_records(r), 5000);
	s = capture_reader_status(r);
	ck_assert_int_eq(s->end, CAPTURE_END_CLEAN);
	ck_assert(s->has_trailer && s->totals_match);
	ck_assert_uint_eq(s->records, 5000);
	ck_assert_uint_eq(s->chunks, layout.chunks);
	ck_assert_uint_eq(s->trailer.records, 5000);
	ck_assert_uint_eq(s->trailer.chunks, layout.chunks);
	ck_assert_uint_eq(s->trailer.record_bytes, s->record_bytes);
	ck_assert_uint_eq(s->trailer.records_lost, 0);
	ck_assert_int_eq(s->trailer.write_error, 0);
	ck_assert_uint_ge(s->trailer.monotonic_ns, h->monotonic_ns);
	ck_assert_uint_eq(s->trailer.counter_count, 2);
	ck_assert_str_eq(s->trailer.counters[1].name, "lost.kernel");
	ck_assert_uint_eq(s->trailer.counters[1].value, 7);
	ck_assert_uint_eq(s->trailing_bytes, 0);
	snprintf(why, sizeof(why), "clean end: 5000 records in %zu chunks", layout.chunks);
	ck_assert_str_eq(s->message, why);
	/* reading past the end stays at the end */
	ck_assert_int_eq(capture_next(r, &(struct capture_record){ 0 }), 0);
	capture_reader_close(r);
}
END_TEST

/* xorshift64*: the same records every run. */
static uint64_t next_random(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 2685821657736338717ull;
}

/* A value as records hold them: small, near the last, or anything at all. */
static uint64_t field_value(uint64_t *state, uint64_t near)
{
	switch (next_random(state) % 5) {
	case 0:
		return 0;
	case 1:
		return near + next_random(state) % 3;
	case 2:
		return near - next_random(state) % 1000;
	case 3:
		return UINT64_MAX - next_random(state) % 2;
	default:
		return next_random(state);
	}
}

/* Every kind of RECORD_KINDS that a capture holds, and the args[] each uses. */
#define KIND_VALUE_(name, value, layout, class, args) \
	RECORD_CLASS_##class == RECORD_CLASS_TRANSPORT ? 0 : value,
#define KIND_ARGS_(name, value, layout, class, args) [value] = args,
static const uint16_t kinds[] = { RECORD_KINDS(KIND_VALUE_) };
static const unsigned int kind_args[RECORD__COUNT] = { RECORD_KINDS(KIND_ARGS_) };

/*
 * Record i of the every-kind capture, into data (zeroed, its kind's size):
 * each kind of RECORD_KINDS but the ring buffer's batch (a kind added there
 * is written here as a struct record_event if it is not one of the structs
 * below), from a few threads of a few processes, and every few records one that breaks its kind's
 * shape (an unused arg set, a reserved byte, a size of its own), which
 * format 2 keeps raw. Returns its type and size.
 */
static uint16_t kind_record(uint64_t i, uint64_t *state, uint8_t *data, uint32_t *size)
{
	const size_t kind_count = sizeof(kinds) / sizeof(kinds[0]);
	struct record_event *head = (struct record_event *)data;
	bool odd = i % 11 == 10;
	uint16_t type = 0;

	while (!type)
		type = kinds[next_random(state) % kind_count];
	head->timestamp = i % 13 == 0 ? field_value(state, i) : 1000000000 + i * 977;
	head->tgid = (__u32)(field_value(state, 0) % 3 ? 4000 + next_random(state) % 3 : -1u);
	head->tid = head->tgid + (__u32)(next_random(state) % 4);
	head->type = type;
	switch (type) {
	case RECORD_STRING: {
		struct record_string *string = (void *)data;
		size_t length = next_random(state) % (RECORD_STRING_LEN + 1);

		string->truncated = length == RECORD_STRING_LEN;
		string->unreadable = next_random(state) % 7 == 0;
		string->address = field_value(state, 0x400000 + i);
		for (size_t k = 0; k < length; k++)
			string->text[k] = (char)(1 + next_random(state) % 255);
		string->reserved = odd;
		*size = sizeof(*string);
		return type;
	}
	case RECORD_GPU: {
		struct record_gpu *gpu = (void *)data;

		gpu->size = (__u16)(next_random(state) % (RECORD_GPU_MAX + 1));
		for (size_t k = 0; k < gpu->size; k++)
			gpu->data[k] = (uint8_t)next_random(state);
		gpu->reserved = odd;
		*size = sizeof(*gpu);
		return type;
	}
	case RECORD_GPU_NAME: {
		struct record_gpu_name *name = (void *)data;
		size_t length = next_random(state) % (RECORD_GPU_NAME_LEN + 1);

		name->truncated = length == RECORD_GPU_NAME_LEN;
		name->unreadable = odd ? 2 : 0;
		name->name_id = (__u32)field_value(state, i);
		memset(name->text, 'k', length);
		*size = sizeof(*name);
		return type;
	}
	case RECORD_NAME: {
		struct record_name *name = (void *)data;

		snprintf(name->name, sizeof(name->name), "worker-%llu", (unsigned long long)i);
		name->reserved = odd;
		*size = sizeof(*name);
		return type;
	}
	case RECORD_CLOCK: {
		struct record_clock *clock = (void *)data;

		clock->realtime_ns = head->timestamp + 1764950000000000000ull + i % 17;
		clock->uncertainty_ns = field_value(state, 40);
		clock->reserved2[2] = odd;
		*size = sizeof(*clock);
		return type;
	}
	default: {
		unsigned int args = kind_args[type];

		head->cpu = (__u16)field_value(state, 1);
		head->ns_tid = (__u32)field_value(state, head->tid);
		for (unsigned int a = 0; a < args; a++)
			head->args[a] = field_value(state, i * 3 + a);
		if (odd)
			head->args[RECORD_EVENT_ARGS - 1] = 1 + i;
		*size = i % 29 == 28 ? 40 : sizeof(*head); /* a record cut short: raw */
		return type;
	}
	}
}

/*
 * Every record kind comes back as it went in, byte for byte, through chunks
 * small and large (each chunk starts its deltas afresh), and format 2 holds
 * them in far fewer bytes than format 1.
 */
START_TEST(test_every_kind_round_trips)
{
	static const uint32_t chunk_sizes[] = { 1024, 65536 };
	uint64_t file_bytes[2][2];
	uint8_t data[1024] __attribute__((aligned(8)));

	for (uint16_t major = 1; major <= 2; major++) {
		for (size_t c = 0; c < 2; c++) {
			struct capture_writer_opts opts = { .chunk_size = chunk_sizes[c],
							    .format_major = major };
			struct capture_writer_stats stats;
			struct capture_writer *w;
			struct capture_reader *r;
			struct capture_record record;
			uint64_t state = 88172645463325252ull, i = 0;
			char why[256];
			int err;

			ck_assert_int_eq(capture_writer_open(&w, sample_path, &opts), 0);
			for (i = 0; i < 20000; i++) {
				uint32_t size;
				uint16_t type;

				memset(data, 0, sizeof(data));
				type = kind_record(i, &state, data, &size);
				ck_assert_int_eq(capture_write(w, type, data, size), 0);
			}
			capture_writer_stats(w, &stats);
			ck_assert_int_eq(capture_close(w, NULL, 0), 0);

			state = 88172645463325252ull;
			ck_assert_int_eq(capture_reader_open(&r, sample_path, why, sizeof(why)), 0);
			ck_assert_uint_eq(capture_reader_header(r)->version_major, major);
			for (i = 0; (err = capture_next(r, &record)) > 0; i++) {
				uint32_t size;
				uint16_t type;

				memset(data, 0, sizeof(data));
				type = kind_record(i, &state, data, &size);
				ck_assert_msg(record.type == type && record.size == size &&
						      !memcmp(record.data, data, size),
					      "format %u, record %llu (type %u) differs", major,
					      (unsigned long long)i, type);
			}
			ck_assert_int_eq(err, 0);
			ck_assert_uint_eq(i, 20000);
			ck_assert_int_eq(capture_reader_status(r)->end, CAPTURE_END_CLEAN);
			file_bytes[major - 1][c] = capture_reader_size(r);
			capture_reader_close(r);
		}
	}
	/* Random fields compress badly; still, format 2 is well under half. */
	for (size_t c = 0; c < 2; c++)
		ck_assert_uint_lt(file_bytes[1][c] * 2, file_bytes[0][c]);
}
END_TEST

START_TEST(test_clock_pair_maps_event_time_to_wall_time)
{
	struct capture_writer *w;
	struct capture_reader *r;
	const struct capture_header *h;
	struct timespec now;

	ck_assert_int_eq(capture_writer_open(&w, sample_path, NULL), 0);
	ck_assert_int_eq(capture_close(w, NULL, 0), 0);
	ck_assert_int_eq(capture_reader_open(&r, sample_path, NULL, 0), 0);
	h = capture_reader_header(r);
	clock_gettime(CLOCK_REALTIME, &now);
	ck_assert_uint_le(h->realtime_ns,
			  (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
	ck_assert_uint_gt(h->realtime_ns, ((uint64_t)now.tv_sec - 60) * 1000000000u);
	clock_gettime(CLOCK_MONOTONIC, &now);
	ck_assert_uint_le(h->monotonic_ns,
			  (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
	ck_assert_uint_eq(capture_wall_ns(h, h->monotonic_ns + 1500), h->realtime_ns + 1500);
	ck_assert_uint_eq(capture_wall_ns(h, h->monotonic_ns - 20), h->realtime_ns - 20);
	ck_assert_str_eq(h->target, "");
	ck_assert_int_eq(read_records(r), 0);
	ck_assert_int_eq(capture_reader_status(r)->end, CAPTURE_END_CLEAN);
	capture_reader_close(r);
}
END_TEST

START_TEST(test_writer_refuses_what_cannot_fit)
{
	struct capture_writer_opts opts = { .chunk_size = 512 };
	struct capture_writer_stats stats;
	struct capture_writer *w;
	struct capture_reader *r;
	static uint8_t data[1024];
	char missing[4200];

	opts.chunk_size = 100;
	ck_assert_int_eq(capture_writer_open(&w, sample_path, &opts), -EINVAL);
	opts.chunk_size = 1020;
	ck_assert_int_eq(capture_writer_open(&w, sample_path, &opts), -EINVAL);
	snprintf(missing, sizeof(missing), "%s/no/such/dir", test_dir);
	ck_assert_int_eq(capture_writer_open(&w, missing, NULL), -ENOENT);

	opts.chunk_size = 512;
	ck_assert_int_eq(capture_writer_open(&w, sample_path, &opts), 0);
	record_bytes(0, data, 504);
	ck_assert_int_eq(capture_write(w, record_type(0), data, 505), -EMSGSIZE);
	ck_assert_int_eq(capture_write(w, CAPTURE_TYPE_RESERVED, data, 8), -EINVAL);
	ck_assert_int_eq(capture_write(w, record_type(0), data, 504), 0); /* a chunk of its own */
	ck_assert_int_eq(capture_flush(w), 0);
	ck_assert_int_eq(capture_flush(w), 0); /* nothing pending: no empty chunk */
	capture_writer_stats(w, &stats);
	ck_assert_uint_eq(stats.chunks, 1);
	ck_assert_uint_eq(stats.records, 1);
	ck_assert_uint_eq(stats.records_lost, 2);
	ck_assert_int_eq(stats.error, 0);
	ck_assert_int_eq(capture_close(w, NULL, 0), 0);

	ck_assert_int_eq(capture_reader_open(&r, sample_path, NULL, 0), 0);
	{
		struct capture_record record;

		ck_assert_int_eq(capture_next(r, &record), 1);
		ck_assert_uint_eq(record.size, 504);
		ck_assert_int_eq(memcmp(record.data, data, 504), 0);
		ck_assert_int_eq(capture_next(r, &record), 0);
	}
	ck_assert_uint_eq(capture_reader_status(r)->trailer.records_lost, 2);
	capture_reader_close(r);
}
END_TEST

static uint32_t get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t value)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(value >> (8 * i));
}

static void set_header_crc(uint8_t *file)
{
	uint32_t header_size = get32(file + 12);

	put32(file + 16, (uint32_t)crc32(crc32(0, file, 16), file + 20, header_size - 20));
}

START_TEST(test_versions)
{
	char other[4200], why[256];
	struct capture_reader *r;
	struct layout layout;
	size_t size;
	uint8_t *file, *grown;

	write_capture(50, 512, 0, &layout);
	file = slurp(sample_path, &size);
	snprintf(other, sizeof(other), "%s/other.otc", test_dir);

	/* a newer major is refused, and says so */
	file[8] = CAPTURE_VERSION_MAJOR + 1;
	spill(other, file, size);
	ck_assert_int_eq(capture_reader_open(&r, other, why, sizeof(why)), -EPROTONOSUPPORT);
	ck_assert_msg(strstr(why, "capture format 3.0 is newer than this optrace reads (formats "
				  "1.x to 2.x)") &&
			      strstr(why, "newer optrace"),
		      "%s", why);
	file[8] = 0;
	spill(other, file, size);
	ck_assert_int_eq(capture_reader_open(&r, other, why, sizeof(why)), -EPROTONOSUPPORT);
	ck_assert_msg(strstr(why, "older"), "%s", why);
	file[8] = CAPTURE_VERSION_MAJOR;

	/*
	 * A newer minor with 8 more fixed header bytes, as a later 1.x may
	 * write: read as before, the new bytes skipped.
	 */
	grown = malloc(size + 8);
	ck_assert_ptr_nonnull(grown);
	memcpy(grown, file, 48);
	memset(grown + 48, 0xaa, 8);
	memcpy(grown + 56, file + 48, size - 48);
	grown[10] = 7;				 /* minor */
	put32(grown + 12, get32(file + 12) + 8); /* header size */
	put32(grown + 20, 56);			 /* fixed size */
	set_header_crc(grown);
	spill(other, grown, size + 8);
	ck_assert_int_eq(capture_reader_open(&r, other, why, sizeof(why)), 0);
	ck_assert_uint_eq(capture_reader_header(r)->version_minor, 7);
	ck_assert_str_eq(capture_reader_header(r)->target, "demo --workload all");
	ck_assert_int_eq(read_records(r), 50);
	ck_assert_int_eq(capture_reader_status(r)->end, CAPTURE_END_CLEAN);
	capture_reader_close(r);
	free(grown);
	free(file);
}
END_TEST

/* A pipe is refused at once: open() would wait for a writer, and it cannot be read twice. */
START_TEST(test_pipe_refused)
{
	struct capture_reader *r;
	char fifo[4200], why[256];
	uint64_t value;
	FILE *null;

	snprintf(fifo, sizeof(fifo), "%s/fifo", test_dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(capture_reader_open(&r, fifo, why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, "not a regular file (a pipe)"), "%s", why);
	ck_assert_int_eq(capture_peek_counter(fifo, "records.gpu", &value), -EINVAL);
	null = fopen("/dev/null", "we");
	ck_assert_ptr_nonnull(null);
	ck_assert_int_eq(capture_dump(null, fifo, false), -EINVAL);
	fclose(null);
}
END_TEST

/* The same, without opening the file: for the inputs other readers open. */
START_TEST(test_check_input)
{
	char fifo[4200], why[256];
	struct layout layout;

	snprintf(fifo, sizeof(fifo), "%s/fifo", test_dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(capture_check_input(fifo, why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, "not a regular file (a pipe)"), "%s", why);
	ck_assert_int_eq(capture_check_input("/dev/null", why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, "(a device)"), "%s", why);
	ck_assert_int_eq(capture_check_input(test_dir, why, sizeof(why)), -EISDIR);
	/* opening them says what is wrong */
	ck_assert_int_eq(capture_check_input("/nonexistent/capture", why, sizeof(why)), 0);
	write_capture(0, 512, 0, &layout);
	ck_assert_int_eq(capture_check_input(sample_path, why, sizeof(why)), 0);
}
END_TEST

static char *dump_text(const char *file, bool records, int *err)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	ck_assert_ptr_nonnull(out);
	*err = capture_dump(out, file, records);
	fclose(out);
	return text;
}

START_TEST(test_dump)
{
	struct layout layout;
	char *text;
	size_t size;
	uint8_t *file;
	int err;

	write_capture(30, 512, 0, &layout);
	text = dump_text(sample_path, true, &err);
	ck_assert_int_eq(err, 0);
	ck_assert_msg(strstr(text, ": format 2.0, header ") &&
			      strstr(text, "\"untrusted\" = \"a\\\"b\\x0a\\xff$|\"") &&
			      strstr(text, "  chunk 0 at offset ") && strstr(text, "crc ok") &&
			      strstr(text, "    record 0: type 1, 0 bytes:") &&
			      strstr(text, "    record 1: type 2, ") &&
			      strstr(text, ": end marker, ") &&
			      strstr(text, "    counter \"lost.kernel\" = 7\n") &&
			      strstr(text, "status: clean: clean end: 30 records"),
		      "%s", text);
	free(text);
	text = dump_text(sample_path, false, &err);
	ck_assert_ptr_null(strstr(text, "record 0:"));
	free(text);

	file = slurp(sample_path, &size);
	file[layout.chunk_end[1] + 40] ^= 1;
	spill(sample_path, file, size);
	text = dump_text(sample_path, false, &err);
	ck_assert_int_eq(err, 1);
	ck_assert_msg(strstr(text, "  chunk 1 at offset ") && strstr(text, "crc ok") &&
			      strstr(text, "records, crc BAD\n") &&
			      strstr(text, "status: corrupt: "),
		      "%s", text);
	free(text);

	spill(sample_path, "junk", 4);
	text = dump_text(sample_path, true, &err);
	ck_assert_int_eq(err, -EBADMSG);
	ck_assert_msg(strstr(text, "not an optrace capture"), "%s", text);
	free(text);
	free(file);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("capture");
	TCase *tc = tcase_create("capture");

	tcase_add_checked_fixture(tc, sample_setup, test_dir_teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_every_kind_round_trips);
	tcase_add_test(tc, test_clock_pair_maps_event_time_to_wall_time);
	tcase_add_test(tc, test_writer_refuses_what_cannot_fit);
	tcase_add_test(tc, test_versions);
	tcase_add_test(tc, test_pipe_refused);
	tcase_add_test(tc, test_check_input);
	tcase_add_test(tc, test_dump);
	suite_add_tcase(suite, tc);

	return run_suite(suite);
}
