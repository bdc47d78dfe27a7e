// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Issue 41: mutated captures through every consumer. A capture is the
 * traced process's words on disk, so a hostile process (or a damaged disk)
 * can hand `report` and `export` anything. The CRCs stop a random change
 * at the chunk, so these mutants are made to pass them: bytes changed
 * inside a record chunk (or a chunk's record count, or the header's
 * metadata), the CRCs computed again, so that the hostile values reach the
 * record decoder, the profile and each exporter.
 *
 * Each mutant goes through `report --json`, `report --show-helpers` and one
 * of the exports (Chrome, Perfetto, Legion Prof, in turn). Every run must
 * end with status 0, or 1 and an `optrace: ` sentence; never a signal, a
 * sanitizer's report or a hang. `make sanitize` runs this under ASan and
 * UBSan; OPTRACE_MUTANTS=N (default 80 a source) asks for more.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "testlib.h"

#define GEN_CAPTURE OPTRACE_BUILD_DIR "/bench/gen_capture"
#define FIXTURES OPTRACE_SOURCE_DIR "/tests/fixtures/captures/"
#define FILE_HEADER_MIN 48
#define CHUNK_HEADER 32
#define CHUNKS_MAX 4096
#define RUN_TIMEOUT_S 120

struct capture_bytes {
	uint8_t *data;
	size_t size;
	uint32_t header_size;
	size_t chunk_count;
	size_t chunks[CHUNKS_MAX]; /* offsets of the record chunks */
};

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* The file read and its record chunks found (docs/capture.md's layout). */
static void load(struct capture_bytes *capture, const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t offset;

	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(fstat(fd, &st), 0);
	memset(capture, 0, sizeof(*capture));
	capture->size = (size_t)st.st_size;
	capture->data = malloc(capture->size);
	ck_assert_ptr_nonnull(capture->data);
	ck_assert_int_eq(read(fd, capture->data, capture->size), (ssize_t)capture->size);
	close(fd);
	ck_assert_uint_ge(capture->size, FILE_HEADER_MIN);
	capture->header_size = le32(capture->data + 12);
	for (offset = capture->header_size; offset + CHUNK_HEADER <= capture->size;) {
		uint32_t payload = le32(capture->data + offset + 16);

		if (capture->data[offset + 4] == 1 && capture->chunk_count < CHUNKS_MAX)
			capture->chunks[capture->chunk_count++] = offset;
		offset += CHUNK_HEADER + payload;
	}
	ck_assert_msg(capture->chunk_count > 0, "%s: no record chunk", path);
}

/* The CRCs of the chunk at offset (its payload's, its header's) made right again. */
static void seal_chunk(uint8_t *data, size_t offset)
{
	uint32_t payload = le32(data + offset + 16);

	put32(data + offset + 24, (uint32_t)crc32(0, data + offset + CHUNK_HEADER, payload));
	put32(data + offset + 28, (uint32_t)crc32(0, data + offset, 28));
}

static void seal_header(uint8_t *data, uint32_t header_size)
{
	uLong sum = crc32(0, data, 16);

	put32(data + 16, (uint32_t)crc32(sum, data + 20, header_size - 20));
}

/* A value a decoder might not expect: the edges of each width, or noise. */
static uint8_t hostile_byte(unsigned int *seed)
{
	static const uint8_t edges[] = { 0x00, 0xff, 0x7f, 0x80, 0x01, 0xfe };

	if (rand_r(seed) % 2)
		return edges[(unsigned int)rand_r(seed) % sizeof(edges)];
	return (uint8_t)rand_r(seed);
}

/* One mutant of capture into copy: its size. */
static size_t mutate(const struct capture_bytes *capture, uint8_t *copy, unsigned int *seed)
{
	size_t chunk = capture->chunks[(unsigned int)rand_r(seed) % capture->chunk_count];
	uint32_t payload = le32(capture->data + chunk + 16);
	int how = rand_r(seed) % 10, changes = 1 + rand_r(seed) % 8;

	memcpy(copy, capture->data, capture->size);
	if (how == 0) {
		/* the record count: more or fewer records than the payload holds */
		put32(copy + chunk + 20,
		      le32(copy + chunk + 20) + (uint32_t)(rand_r(seed) % 5) - 2);
	} else if (how == 1 && capture->header_size > FILE_HEADER_MIN) {
		/* the metadata: lengths, keys and values */
		for (int i = 0; i < changes; i++)
			copy[FILE_HEADER_MIN + (unsigned int)rand_r(seed) %
						       (capture->header_size - FILE_HEADER_MIN)] =
				hostile_byte(seed);
		seal_header(copy, capture->header_size);
		return capture->size;
	} else if (how == 2 && payload >= 16) {
		/* a run of 8 bytes all ones or zeros: the widest values */
		size_t at = chunk + CHUNK_HEADER + (unsigned int)rand_r(seed) % (payload - 8);

		memset(copy + at, rand_r(seed) % 2 ? 0xff : 0x00, 8);
	} else if (payload) {
		for (int i = 0; i < changes; i++)
			copy[chunk + CHUNK_HEADER + (unsigned int)rand_r(seed) % payload] =
				hostile_byte(seed);
	}
	seal_chunk(copy, chunk);
	return capture->size;
}

/* Whether the run ended as optrace may end: 0, or 1 with its sentence; said if not. */
static bool ended_well(int status, const char *err_path, const char *what, char *why,
		       size_t why_size)
{
	char *said = read_file(err_path);
	bool ok;

	ok = status >= 0 && WIFEXITED(status) &&
	     (WEXITSTATUS(status) == 0 ||
	      (WEXITSTATUS(status) == 1 && said && !strncmp(said, "optrace: ", 9))) &&
	     !(said && (strstr(said, "runtime error") || strstr(said, "Sanitizer")));
	if (!ok)
		snprintf(why, why_size, "%s: status %d (%s), said: %.1500s", what, status,
			 status >= 0 && WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "exit",
			 said ? said : "");
	free(said);
	return ok;
}

static int mutant_count(void)
{
	const char *asked = getenv("OPTRACE_MUTANTS");

	return asked && atoi(asked) > 0 ? atoi(asked) : 80;
}

/* count mutants of path, each through report and one export. */
static void run_mutants(const char *path, unsigned int seed)
{
	char *mutant = test_path("mutant.capture"), *err = test_path("err.txt");
	char *out = test_path("out"), *keep = test_path("failed.capture");
	char *report_json[] = { OPTRACE, "report", "--json", mutant, NULL };
	char *report_tree[] = { OPTRACE, "report", "--show-helpers", "--wide", mutant, NULL };
	char *chrome[] = { OPTRACE, "export", "--chrome", "-o", out, mutant, NULL };
	char *perfetto[] = { OPTRACE, "export", "--perfetto", "-o", out, mutant, NULL };
	char *legion[] = { OPTRACE, "export", "--legion", "-o", out, mutant, NULL };
	char *const *exports[] = { chrome, perfetto, legion };
	struct capture_bytes capture;
	char why[2048] = "";
	uint8_t *copy;
	int count = mutant_count();

	load(&capture, path);
	copy = malloc(capture.size);
	ck_assert_ptr_nonnull(copy);
	for (int i = 0; i < count && !why[0]; i++) {
		size_t size = mutate(&capture, copy, &seed);
		char *const *runs[] = { report_json, report_tree, exports[i % 3] };
		FILE *file = fopen(mutant, "w");

		ck_assert_ptr_nonnull(file);
		ck_assert_uint_eq(fwrite(copy, 1, size, file), size);
		ck_assert_int_eq(fclose(file), 0);
		for (size_t r = 0; r < 3 && !why[0]; r++) {
			char what[256];
			int status;

			if (i % 3 == 2 && r == 2) {
				/* a folder of the Legion export, a file for the others */
				char *rm[] = { "rm", "-rf", out, NULL };

				run_command(rm, NULL, NULL, 30);
			}
			status = run_command(runs[r], "/dev/null", err, RUN_TIMEOUT_S);
			snprintf(what, sizeof(what), "mutant %d of %s, optrace %s %s", i, path,
				 runs[r][1], runs[r][2]);
			if (!ended_well(status, err, what, why, sizeof(why)))
				rename(mutant, keep);
		}
	}
	ck_assert_msg(!why[0], "%s (the mutant: %s)", why, keep);
	free(copy);
	free(capture.data);
	free(mutant);
	free(err);
	free(out);
	free(keep);
}

START_TEST(test_mutated_v1_demo)
{
	run_mutants(FIXTURES "v1-demo.capture", 41);
}
END_TEST

START_TEST(test_mutated_v1_gpu)
{
	run_mutants(FIXTURES "v1-cuda-app.capture", 4141);
}
END_TEST

/* Format 2 (deltas, varints, thread slots), with GPU activity: gen_capture's. */
START_TEST(test_mutated_v2_gpu)
{
	char *path = test_path("v2.capture");
	char *argv[] = { GEN_CAPTURE, path, "3000", "--gpu", NULL };

	ck_assert_int_eq(run_command(argv, NULL, NULL, 60), 0);
	run_mutants(path, 414141);
	free(path);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("mutated_captures");
	TCase *tc = tcase_create("mutants");

	tcase_add_checked_fixture(tc, test_dir_setup, test_dir_teardown);
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_mutated_v1_demo);
	tcase_add_test(tc, test_mutated_v1_gpu);
	tcase_add_test(tc, test_mutated_v2_gpu);
	suite_add_tcase(suite, tc);
	return run_suite(suite);
}
