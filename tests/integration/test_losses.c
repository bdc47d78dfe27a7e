// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Never hide a loss: optrace report on captures and OPTRACE_GPU_FILEs
 * written by hand, then cut, damaged, appended to or flipped byte by byte.
 * Whatever the end marker counts as lost, whatever the reader found wrong,
 * the report's own output (text and JSON) says it; a file with nothing
 * readable fails; names are shown as whole as the capture keeps them.
 * Needs no BPF: the captures are written with the capture writer.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/types.h>
#include <optrace/abi.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "json_read.h"
#include "testlib.h"
#include "bpf/events.h"
#include "../../probes/cupti/gpufile.h"
#include "capture/capture.h"

#define PID 4242
#define GPU_TID 4243
#define NAME 0x1000 /* the address of the operations' name */

extern char **environ;

/* ---- writing captures ------------------------------------------------------------- */

struct hand_capture {
	struct capture_writer *writer;
	uint64_t now;
	uint32_t tgid;
	int error; /* the first capture_write() error */
};

static void hand_open(struct hand_capture *c, const char *path, uint32_t chunk_size)
{
	struct capture_writer_opts opts = { .target = "test_losses", .chunk_size = chunk_size };
	struct timespec ts;

	memset(c, 0, sizeof(*c));
	c->tgid = PID;
	ck_assert_int_eq(capture_writer_open(&c->writer, path, &opts), 0);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	c->now = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec + 1000000;
}

static void put(struct hand_capture *c, const void *record, uint32_t size)
{
	int err =
		capture_write(c->writer, *(const __u16 *)((const char *)record + 16), record, size);

	if (err && !c->error)
		c->error = err;
}

static void put_event(struct hand_capture *c, uint32_t tid, int type, uint64_t a0, uint64_t a1,
		      uint64_t a2, uint64_t a3)
{
	struct record_event e = {
		.timestamp = c->now += 1000,
		.tgid = c->tgid,
		.tid = tid,
		.type = (__u16)type,
		.args = { a0, a1, a2, a3, 0 },
	};

	put(c, &e, sizeof(e));
}

static void put_string(struct hand_capture *c, uint64_t address, const char *text, bool truncated)
{
	struct record_string s = {
		.timestamp = c->now += 1000,
		.tgid = c->tgid,
		.tid = c->tgid,
		.type = RECORD_STRING,
		.truncated = truncated,
		.address = address,
	};

	memcpy(s.text, text, strnlen(text, sizeof(s.text) - 1));
	put(c, &s, sizeof(s));
}

/* count operations of one name on the main thread, each begun and ended */
static void put_ops(struct hand_capture *c, int count)
{
	put_event(c, PID, RECORD_RT_INIT, OPTRACE_ABI_VERSION, 0, 1, 0);
	put_string(c, NAME, "demo.add", false);
	for (int i = 0; i < count; i++) {
		put_event(c, PID, RECORD_OP_BEGIN, (uint64_t)i + 1, 0, 0, NAME);
		put_event(c, PID, RECORD_OP_END, (uint64_t)i + 1, OPTRACE_STATUS_OK, 0, 0);
	}
}

/* A clean capture of count operations, in chunks of chunk_size bytes. */
static void write_capture(const char *path, int count, uint32_t chunk_size,
			  const struct capture_counter *counters, size_t counter_count)
{
	struct hand_capture c;

	hand_open(&c, path, chunk_size);
	put_ops(&c, count);
	ck_assert_int_eq(c.error, 0);
	ck_assert_int_eq(capture_close(c.writer, counters, counter_count), 0);
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The offset of chunk n of a capture (the end marker counts), found by walking them. */
static off_t chunk_offset(const char *path, int n)
{
	uint8_t header[32];
	off_t offset;
	int fd = open(path, O_RDONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, header, 16, 0), 16);
	offset = get_le32(header + 12);
	for (int i = 0; i < n; i++) {
		ck_assert_int_eq(pread(fd, header, 32, offset), 32);
		ck_assert_int_eq(memcmp(header, "OTCK", 4), 0);
		offset += 32 + (off_t)get_le32(header + 16);
	}
	close(fd);
	return offset;
}

static int chunk_count(const char *path)
{
	struct stat st;
	int n = 0;

	ck_assert_int_eq(stat(path, &st), 0);
	while (chunk_offset(path, n) < st.st_size)
		n++;
	return n; /* the end marker included */
}

static void xor_byte(const char *path, off_t offset, uint8_t mask)
{
	int fd = open(path, O_RDWR);
	uint8_t byte;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, &byte, 1, offset), 1);
	byte ^= mask;
	ck_assert_int_eq(pwrite(fd, &byte, 1, offset), 1);
	close(fd);
}

static void append(const char *path, const void *bytes, size_t size)
{
	int fd = open(path, O_WRONLY | O_APPEND);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, bytes, size), (ssize_t)size);
	close(fd);
}

static void copy_file(const char *from, const char *to)
{
	char *argv[] = { "cp", (char *)from, (char *)to, NULL };

	ck_assert_int_eq(run_command(argv, NULL, NULL, 10), 0);
}

/* ---- running optrace report ---------------------------------------------------------- */

struct run {
	int code; /* the exit status, or -1 when it did not exit */
	char *out;
	char *err;
	struct jv *json; /* with --json: stdout parsed, or NULL */
};

/* optrace COMMAND ARGS... (NULL-terminated), waited for (Check's timeout bounds it). */
static void optrace_run(struct run *run, const char *command, const char *const args[])
{
	char *out_path = test_path("report.out"), *err_path = test_path("report.err");
	posix_spawn_file_actions_t actions;
	char *argv[16];
	int argc = 0, status;
	bool json = false;
	pid_t pid;

	argv[argc++] = OPTRACE;
	argv[argc++] = (char *)command;
	for (int i = 0; args[i]; i++) {
		json = json || !strcmp(args[i], "--json");
		argv[argc++] = (char *)args[i];
	}
	argv[argc] = NULL;
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path,
					 O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path,
					 O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_eq(posix_spawn(&pid, OPTRACE, &actions, NULL, argv, environ), 0);
	posix_spawn_file_actions_destroy(&actions);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	run->code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	run->out = read_file(out_path);
	run->err = read_file(err_path);
	ck_assert_ptr_nonnull(run->out);
	ck_assert_ptr_nonnull(run->err);
	run->json = json ? jv_parse(run->out) : NULL;
	free(out_path);
	free(err_path);
}

/* optrace report --wide ARGS...: its lines whole, whatever the width. */
static void report(struct run *run, const char *const args[])
{
	const char *wide[16] = { "--wide" };
	int n = 1;

	for (int i = 0; args[i] && n < 15; i++)
		wide[n++] = args[i];
	wide[n] = NULL;
	optrace_run(run, "report", wide);
}

static void run_free(struct run *run)
{
	free(run->out);
	free(run->err);
	jv_free(run->json);
	memset(run, 0, sizeof(*run));
}

/* The text report's last line: "lost: ..." */
static const char *lost_line(const struct run *run)
{
	const char *line = strstr(run->out, "\nlost:");

	ck_assert_msg(line, "no lost line in:\n%s", run->out);
	return line + 1;
}

static double lost_number(const struct run *run, const char *key)
{
	const struct jv *lost = jv_get(run->json, "lost");
	const struct jv *value = jv_get(lost, key);

	ck_assert_msg(value && value->type == JV_NUMBER, "no \"lost\":{\"%s\":N} in:\n%s", key,
		      run->out);
	return value->number;
}

static const struct jv *capture_member(const struct run *run)
{
	const struct jv *capture = jv_get(run->json, "capture");

	ck_assert_msg(run->json, "not JSON:\n%s", run->out);
	ck_assert_msg(capture && capture->type == JV_OBJECT, "no \"capture\" member in:\n%s",
		      run->out);
	return capture;
}

static size_t note_count(const struct run *run)
{
	const struct jv *notes = jv_get(capture_member(run), "notes");

	ck_assert_msg(notes && notes->type == JV_ARRAY, "no capture.notes in:\n%s", run->out);
	return notes->count;
}

/* ---- 8: the end marker's counters ---------------------------------------------------- */

/* Every lost.* counter of record.c, and others that are not losses. */
static const struct capture_counter recorder_counters[] = {
	{ "lost.ringbuf_full", 3699 }, { "lost.strings", 2 },	     { "strings.unreadable", 0 },
	{ "strings.truncated", 0 },    { "lost.gpu_unreadable", 5 }, { "records.gpu", 0 },
	{ "lost.batch_malformed", 7 }, { "lost.batch_missing", 11 }, { "events.late", 4 },
	{ "lost.future_kind", 13 },
};

START_TEST(test_end_marker_counters)
{
	static const struct {
		const char *key;
		double value;
	} expected[] = {
		{ "ringbuf_full", 3699 }, { "strings", 2 },	   { "gpu_unreadable", 5 },
		{ "batch_malformed", 7 }, { "batch_missing", 11 }, { "future_kind", 13 },
	};
	char *capture = test_path("counters.capture");
	const char *text_args[] = { capture, NULL }, *json_args[] = { "--json", capture, NULL };
	struct run text, json;
	char pair[64];

	write_capture(capture, 10, 0, recorder_counters,
		      sizeof(recorder_counters) / sizeof(recorder_counters[0]));
	report(&text, text_args);
	report(&json, json_args);
	ck_assert_msg(text.code == 0 && json.code == 0, "%s%s", text.err, json.err);
	ck_assert_msg(!strstr(lost_line(&text), "nothing"), "%s", text.out);
	for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
		snprintf(pair, sizeof(pair), " %s=%.0f", expected[i].key, expected[i].value);
		ck_assert_msg(strstr(lost_line(&text), pair), "no%s in: %s", pair,
			      lost_line(&text));
		ck_assert_msg(lost_number(&json, expected[i].key) == expected[i].value,
			      "lost.%s: %.0f, not %.0f", expected[i].key,
			      lost_number(&json, expected[i].key), expected[i].value);
	}
	/* The stat keys are all there still; the counters whole in "capture". */
	ck_assert(lost_number(&json, "map_full") == 0);
	ck_assert(lost_number(&json, "unwritten") == 0);
	ck_assert(jv_number(jv_get(capture_member(&json), "counters"), "events.late") == 4);
	ck_assert_str_eq(jv_string(capture_member(&json), "end"), "clean");
	ck_assert_uint_eq(note_count(&json), 0);
	run_free(&text);
	run_free(&json);
	free(capture);
}
END_TEST

#define CHUNK 1024
#define UNWRITTEN_OPS 300

/*
 * A recorder whose file hit its size limit after two chunks: it cuts the
 * file back to them, counts every later record as lost and still writes
 * the end marker (capture.h).
 */
static void write_capture_over_limit(const char *path)
{
	struct capture_writer_stats stats;
	struct hand_capture c;
	struct rlimit limit;
	int status;
	pid_t pid;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		signal(SIGXFSZ, SIG_IGN);
		hand_open(&c, path, CHUNK);
		capture_writer_stats(c.writer, &stats);
		/* the header, two chunks and room for the end marker, not for a third */
		limit.rlim_cur = limit.rlim_max = stats.file_bytes + 2 * (32 + CHUNK) + CHUNK / 2;
		if (setrlimit(RLIMIT_FSIZE, &limit))
			_exit(2);
		put_ops(&c, UNWRITTEN_OPS);
		capture_writer_stats(c.writer, &stats);
		if (c.error != -EFBIG || !stats.records_lost)
			_exit(3);
		_exit(capture_close(c.writer, recorder_counters, 1) == -EFBIG ? 0 : 4);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer: status %d", status);
}

START_TEST(test_records_not_written)
{
	char *capture = test_path("limit.capture");
	const char *text_args[] = { capture, NULL }, *json_args[] = { "--json", capture, NULL };
	const struct capture_status *status;
	struct capture_reader *reader;
	struct capture_record record;
	struct run text, json;
	uint64_t unwritten;
	char pair[64];

	write_capture_over_limit(capture);
	ck_assert_int_eq(capture_reader_open(&reader, capture, NULL, 0), 0);
	while (capture_next(reader, &record) > 0)
		;
	status = capture_reader_status(reader);
	ck_assert_int_eq(status->end, CAPTURE_END_CLEAN);
	unwritten = status->trailer.records_lost;
	ck_assert_uint_gt(unwritten, 0);
	ck_assert_int_eq(status->trailer.write_error, EFBIG);
	capture_reader_close(reader);

	report(&text, text_args);
	report(&json, json_args);
	ck_assert_msg(text.code == 0 && json.code == 0, "%s%s", text.err, json.err);
	/* the end marker's sentence, on stdout */
	snprintf(pair, sizeof(pair), "could not write %llu records", (unsigned long long)unwritten);
	ck_assert_msg(strstr(text.out, pair), "no \"%s\" in:\n%s", pair, text.out);
	snprintf(pair, sizeof(pair), " unwritten=%llu", (unsigned long long)unwritten);
	ck_assert_msg(strstr(lost_line(&text), pair), "no%s in: %s", pair, lost_line(&text));
	ck_assert(lost_number(&json, "unwritten") == (double)unwritten);
	ck_assert(lost_number(&json, "ringbuf_full") == 3699);
	ck_assert_str_eq(jv_string(capture_member(&json), "write_error"), strerror(EFBIG));
	ck_assert_uint_eq(note_count(&json), 1);
	run_free(&text);
	run_free(&json);
	free(capture);
}
END_TEST

/* ---- 8: captures cut or damaged: said on stdout, not only on stderr ---------------------- */

enum damage { CUT, FLIPPED, NO_MARKER, ZEROS, DAMAGE__COUNT };

static void damage(const char *path, enum damage how, int chunk)
{
	static const uint8_t zeros[64];
	off_t at = chunk_offset(path, chunk);

	switch (how) {
	case CUT:
		ck_assert_int_eq(truncate(path, at + 100), 0);
		break;
	case FLIPPED:
		xor_byte(path, at + 40, 0x01);
		break;
	case NO_MARKER:
		ck_assert_int_eq(truncate(path, chunk_offset(path, chunk_count(path) - 1)), 0);
		break;
	case ZEROS:
		ck_assert_int_eq(truncate(path, at), 0);
		append(path, zeros, sizeof(zeros));
		break;
	default:
		break;
	}
}

/* For each kind of damage: the end's name and words of its sentence. */
static const char *const end_names[] = { "truncated", "corrupt", "no end marker", "garbage" };
static const char *const end_words[] = { "bytes into chunk 3", "chunk 3 at offset", "no end marker",
					 "zero bytes where chunk 3" };

START_TEST(test_damage_is_reported)
{
	char *capture = test_path("damaged.capture");
	const char *text_args[] = { capture, NULL }, *json_args[] = { "--json", capture, NULL };
	struct run text, json;
	const char *note;

	write_capture(capture, 600, CHUNK, NULL, 0);
	ck_assert_int_gt(chunk_count(capture), 6);
	damage(capture, (enum damage)_i, 3);
	report(&text, text_args);
	report(&json, json_args);
	/* Records were read: a report, exit 0, and what is lost on stdout. */
	ck_assert_msg(text.code == 0 && json.code == 0, "%s", text.err);
	ck_assert_msg(strstr(text.out, end_words[_i]), "no \"%s\" in:\n%s", end_words[_i],
		      text.out);
	ck_assert_msg(!strstr(lost_line(&text), "nothing"), "%s", text.out);
	ck_assert_msg(strstr(lost_line(&text), end_words[_i]), "%s", lost_line(&text));
	ck_assert_str_eq(jv_string(capture_member(&json), "end"), end_names[_i]);
	ck_assert_uint_eq(note_count(&json), 1);
	note = jv_get(capture_member(&json), "notes")->items[0]->string;
	ck_assert_msg(note && strstr(note, end_words[_i]), "note: %s", note ? note : "(none)");
	run_free(&text);
	run_free(&json);
	free(capture);
}
END_TEST

START_TEST(test_nothing_readable_fails)
{
	static const enum damage hows[] = { CUT, FLIPPED, ZEROS };
	char *capture = test_path("empty.capture");
	const char *text_args[] = { capture, NULL }, *json_args[] = { "--json", capture, NULL };
	struct run text, json;

	/*
	 * A damaged chunk is skipped and reading goes on at the next: for
	 * nothing to be readable, the records fit in the one damaged chunk.
	 */
	write_capture(capture, hows[_i % 3] == FLIPPED ? 20 : 200, CHUNK, NULL, 0);
	if (_i < 3)
		damage(capture, hows[_i], 0);
	else /* the header alone */
		ck_assert_int_eq(truncate(capture, chunk_offset(capture, 0)), 0);
	report(&text, text_args);
	report(&json, json_args);
	ck_assert_msg(text.code == 1 && json.code == 1, "exit %d and %d:\n%s%s", text.code,
		      json.code, text.out, text.err);
	ck_assert_msg(strstr(text.err, "nothing"), "%s", text.err);
	/* what there is still goes out, saying why it is empty */
	ck_assert_msg(!strstr(lost_line(&text), "nothing"), "%s", text.out);
	ck_assert_uint_eq(note_count(&json), 1);
	run_free(&text);
	run_free(&json);
	/* Every export fails the same way, names the file and leaves nothing behind. */
	for (int i = 0; i < 3; i++) {
		static const char *const formats[] = { "--chrome", "--perfetto", "--legion" };
		char *output = test_path("exported");
		const char *args[] = { formats[i], "-o", output, capture, NULL };
		struct stat st;
		struct run run;

		optrace_run(&run, "export", args);
		ck_assert_msg(run.code == 1, "export %s: exit %d:\n%s%s", formats[i], run.code,
			      run.out, run.err);
		ck_assert_msg(strstr(run.err, "nothing in") && strstr(run.err, capture),
			      "export %s:\n%s", formats[i], run.err);
		ck_assert_msg(stat(output, &st) && errno == ENOENT, "export %s left %s", formats[i],
			      output);
		run_free(&run);
		free(output);
	}
	free(capture);
}
END_TEST

/* A clean capture that holds no record is not a failure. */
START_TEST(test_empty_clean_capture)
{
	char *capture = test_path("none.capture");
	const char *args[] = { capture, NULL };
	struct hand_capture c;
	struct run run;

	hand_open(&c, capture, 0);
	ck_assert_int_eq(capture_close(c.writer, NULL, 0), 0);
	report(&run, args);
	ck_assert_msg(run.code == 0, "%s", run.err);
	ck_assert_msg(strstr(lost_line(&run), "lost: nothing"), "%s", run.out);
	run_free(&run);
	free(capture);
}
END_TEST

START_TEST(test_trailing_bytes_noted)
{
	char *capture = test_path("trailing.capture");
	const char *text_args[] = { capture, NULL }, *json_args[] = { "--json", capture, NULL };
	struct run text, json;

	write_capture(capture, 10, 0, NULL, 0);
	append(capture, "garbage!", 8);
	report(&text, text_args);
	report(&json, json_args);
	ck_assert_msg(text.code == 0 && json.code == 0, "%s", text.err);
	ck_assert_msg(strstr(text.out, "8 bytes after the end marker ignored"), "%s", text.out);
	ck_assert(jv_number(capture_member(&json), "trailing_bytes") == 8);
	ck_assert_str_eq(jv_string(capture_member(&json), "end"), "clean");
	ck_assert_uint_eq(note_count(&json), 1);
	run_free(&text);
	run_free(&json);
	free(capture);
}
END_TEST

/* ---- 9: the OPTRACE_GPU_FILE: every flipped byte is found --------------------------------- */

#define KERNELS 3

static void write_gpu_file(const char *path, uint64_t base_ns)
{
	struct gpu_file_writer writer = { 0 };
	struct optrace_gpu_api api = {
		.head = { OPTRACE_GPU_REC_API, 1, sizeof(api), 0 },
		.tid = GPU_TID,
	};
	struct optrace_gpu_kernel kernel = {
		.head = { OPTRACE_GPU_REC_KERNEL, 1, sizeof(kernel), 0 },
		.grid_x = 4,
		.block_x = 128,
		.name_id = 1,
	};

	ck_assert_int_eq(gpu_file_create(&writer, path), 0);
	ck_assert_int_eq(gpu_file_write_name(&writer, 1, "axpy<float>"), 0);
	for (int i = 0; i < KERNELS; i++) {
		api.correlation_id = kernel.correlation_id = (uint32_t)i + 1;
		api.start_ns = base_ns + 2000 * (uint64_t)i + 100;
		api.end_ns = api.start_ns + 50;
		kernel.start_ns = api.start_ns + 500;
		kernel.end_ns = kernel.start_ns + 1000;
		ck_assert_int_eq(gpu_file_write(&writer, &api), 0);
		ck_assert_int_eq(gpu_file_write(&writer, &kernel), 0);
		/* a block per launch: damage to one leaves the others */
		ck_assert_int_eq(gpu_file_flush(&writer), 0);
	}
	ck_assert_int_eq(gpu_file_write_dropped(&writer, 2), 0);
	ck_assert_int_eq(gpu_file_close(&writer), 0);
}

/* The offset of block n of a GPU file (format 2: docs/cupti.md), found by walking them. */
static off_t gpu_block_offset(const char *path, int n)
{
	uint8_t header[32];
	off_t offset;
	int fd = open(path, O_RDONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, header, 12, 0), 12);
	ck_assert_msg(header[8] == 2, "a GPU file of version %u, not 2", header[8]);
	offset = header[10] | header[11] << 8;
	for (int i = 0; i < n; i++) {
		ck_assert_int_eq(pread(fd, header, 32, offset), 32);
		ck_assert_int_eq(memcmp(header, "OGPB", 4), 0);
		offset += 32 + (off_t)get_le32(header + 16);
	}
	close(fd);
	return offset;
}

/* Did this run say that something is wrong? */
static bool run_says_damaged(const struct run *run)
{
	const struct jv *capture;

	if (run->code != 0)
		return run->err[0] != '\0'; /* refused, and said why */
	capture = capture_member(run);
	return strcmp(jv_string(capture, "end"), "clean") || note_count(run) > 0;
}

static double gpu_kernels(const struct run *run)
{
	const struct jv *gpu = jv_get(run->json, "gpu");

	return gpu && gpu->type == JV_OBJECT ? jv_number(gpu, "kernels") : 0;
}

START_TEST(test_gpu_file_flips)
{
	char *gpu = test_path("gpu.bin"), *flipped = test_path("flipped.bin");
	char *capture = test_path("with-gpu.capture");
	const char *alone[] = { "--json", flipped, NULL };
	const char *merged[] = { "--json", "--gpu", flipped, capture, NULL };
	struct hand_capture c;
	struct run run;
	struct stat st;
	int silent = 0;

	/* The capture: an operation on the launching thread around every launch. */
	hand_open(&c, capture, 0);
	c.tgid = (uint32_t)getpid(); /* the GPU file's process */
	put_event(&c, GPU_TID, RECORD_RT_INIT, OPTRACE_ABI_VERSION, 0, 1, 0);
	put_string(&c, NAME, "demo.gpu_op", false);
	put_event(&c, GPU_TID, RECORD_OP_BEGIN, 1, 0, 0, NAME);
	write_gpu_file(gpu, c.now + 1000);
	c.now += 10 * 1000 * 1000;
	put_event(&c, GPU_TID, RECORD_OP_END, 1, OPTRACE_STATUS_OK, 0, 0);
	ck_assert_int_eq(capture_close(c.writer, NULL, 0), 0);

	/* Undamaged: clean, nothing to say, every kernel. */
	copy_file(gpu, flipped);
	report(&run, alone);
	ck_assert_msg(run.code == 0 && !run_says_damaged(&run), "%s%s", run.out, run.err);
	ck_assert(gpu_kernels(&run) == KERNELS);
	run_free(&run);
	report(&run, merged);
	ck_assert_msg(run.code == 0 && !run_says_damaged(&run), "%s%s", run.out, run.err);
	ck_assert(gpu_kernels(&run) == KERNELS);
	run_free(&run);

	ck_assert_int_eq(stat(gpu, &st), 0);
	for (off_t at = 0; at < st.st_size; at++) {
		copy_file(gpu, flipped);
		xor_byte(flipped, at, 0xff);
		report(&run, alone);
		if (!run_says_damaged(&run)) {
			fprintf(stderr, "byte %lld flipped: not reported\n", (long long)at);
			silent++;
		}
		/* a damaged block's records are not used */
		ck_assert_msg(gpu_kernels(&run) <= KERNELS, "byte %lld: %.0f kernels",
			      (long long)at, gpu_kernels(&run));
		run_free(&run);
		if (at % 7)
			continue;
		report(&run, merged);
		if (!run_says_damaged(&run)) {
			fprintf(stderr, "byte %lld flipped, merged: not reported\n", (long long)at);
			silent++;
		}
		run_free(&run);
	}
	ck_assert_msg(silent == 0, "%d flipped bytes went unreported (of %lld)", silent,
		      (long long)st.st_size);
	free(gpu);
	free(flipped);
	free(capture);
}
END_TEST

/* A damaged block is skipped, the others are read, and the report says how many. */
START_TEST(test_gpu_file_damaged_block)
{
	char *gpu = test_path("gpu.bin");
	const char *alone[] = { "--json", gpu, NULL }, *text_args[] = { gpu, NULL };
	struct run run;

	write_gpu_file(gpu, 1000000);
	/* block 1: the second launch (block 0 holds the name and the first) */
	xor_byte(gpu, gpu_block_offset(gpu, 1) + 32 + 20, 0x10);
	report(&run, alone);
	ck_assert_msg(run.code == 0, "%s", run.err);
	ck_assert_str_eq(jv_string(capture_member(&run), "end"), "corrupt");
	ck_assert(gpu_kernels(&run) == KERNELS - 1);
	ck_assert_uint_eq(note_count(&run), 1);
	run_free(&run);
	report(&run, text_args);
	ck_assert_msg(strstr(run.out, "damaged") && !strstr(lost_line(&run), "nothing"), "%s",
		      run.out);
	run_free(&run);
	free(gpu);
}
END_TEST

/* ---- 11: names as long as the capture keeps them ------------------------------------------ */

START_TEST(test_long_names_kept)
{
	char *capture = test_path("names.capture");
	const char *json_args[] = { "--json", capture, NULL }, *text_args[] = { capture, NULL };
	char names[3][RECORD_STRING_LEN + 4];
	const struct jv *processes, *ops;
	struct hand_capture c;
	struct run json, text;
	bool seen[3] = { false };

	/* Two 100-byte names that differ at byte 80; one of 127 bytes the kernel cut. */
	for (int i = 0; i < 3; i++) {
		memset(names[i], 'a' + i % 2, sizeof(names[i]));
		memcpy(names[i], "demo.", 5);
		names[i][i < 2 ? 100 : RECORD_STRING_LEN - 1] = '\0';
	}
	memset(names[1], 'a', 80);
	memcpy(names[1], "demo.", 5);
	hand_open(&c, capture, 0);
	put_event(&c, PID, RECORD_RT_INIT, OPTRACE_ABI_VERSION, 0, 1, 0);
	for (int i = 0; i < 3; i++) {
		put_string(&c, NAME + (uint64_t)i, names[i], i == 2);
		put_event(&c, PID, RECORD_OP_BEGIN, (uint64_t)i + 1, 0, 0, NAME + (uint64_t)i);
		put_event(&c, PID, RECORD_OP_END, (uint64_t)i + 1, OPTRACE_STATUS_OK, 0, 0);
	}
	ck_assert_int_eq(capture_close(c.writer, NULL, 0), 0);
	strcat(names[2], "...");

	report(&json, json_args);
	ck_assert_msg(json.code == 0 && json.json, "%s%s", json.out, json.err);
	processes = jv_get(json.json, "processes");
	ck_assert_uint_eq(processes->count, 1);
	ops = jv_get(processes->items[0], "operations");
	ck_assert_uint_eq(ops->count, 3);
	for (size_t i = 0; i < ops->count; i++) {
		const char *name = jv_string(ops->items[i], "name");

		for (int j = 0; j < 3; j++)
			seen[j] = seen[j] || !strcmp(name, names[j]);
	}
	ck_assert_msg(seen[0] && seen[1] && seen[2], "names cut:\n%s", json.out);
	/* the one the kernel cut is counted */
	ck_assert(lost_number(&json, "string_truncated") == 1);
	report(&text, text_args);
	ck_assert_msg(strstr(text.out, names[0]) && strstr(text.out, names[1]), "%s", text.out);
	ck_assert_msg(strstr(lost_line(&text), "string_truncated=1"), "%s", lost_line(&text));
	run_free(&json);
	run_free(&text);
	free(capture);
}
END_TEST

/* At 80 columns a long name is cut in the middle, and said whole once below. */
START_TEST(test_long_names_cut_to_fit)
{
	char *capture = test_path("long.capture"), name[128], cut_line[256];
	const char *args[] = { capture, NULL };
	struct hand_capture c;
	struct run text;
	int mentions = 0;

	memset(name, 'x', 100);
	memcpy(name, "demo.start_", 11);
	memcpy(name + 100 - 9, "_the_end", 8);
	name[99] = 'Z';
	name[100] = '\0';
	hand_open(&c, capture, 0);
	put_event(&c, PID, RECORD_RT_INIT, OPTRACE_ABI_VERSION, 0, 1, 0);
	put_string(&c, NAME, name, false);
	for (uint64_t i = 1; i <= 2; i++) {
		put_event(&c, PID, RECORD_OP_BEGIN, i, 0, 0, NAME);
		put_event(&c, PID, RECORD_OP_END, i, OPTRACE_STATUS_OK, 0, 0);
	}
	ck_assert_int_eq(capture_close(c.writer, NULL, 0), 0);
	setenv("COLUMNS", "80", 1);
	optrace_run(&text, "report", args);
	unsetenv("COLUMNS");
	ck_assert_msg(text.code == 0, "%s", text.err);
	/* the row: its head and tail around an ellipsis */
	ck_assert_msg(strstr(text.out, "\ndemo.start_x\u2026") && strstr(text.out, "_the_endZ "),
		      "%s", text.out);
	for (const char *p = text.out; (p = strstr(p, name)); p++)
		mentions++;
	ck_assert_msg(mentions == 1, "the full name %d times:\n%s", mentions, text.out);
	snprintf(cut_line, sizeof(cut_line), " is %s\n", name);
	ck_assert_msg(strstr(text.out, cut_line), "%s", text.out);
	for (const char *line = text.out; *line;
	     line += strcspn(line, "\n") + !!line[strcspn(line, "\n")]) {
		int width = 0;

		for (const char *p = line; *p && *p != '\n'; p++)
			width += ((unsigned char)*p & 0xc0) != 0x80;
		/* the one line that says the name whole may be as long as it */
		ck_assert_msg(width <= 80 || !strncmp(line, "# ", 2), "%.*s",
			      (int)strcspn(line, "\n"), line);
	}
	run_free(&text);
	free(capture);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("losses");
	TCase *capture = tcase_create("capture"), *gpu = tcase_create("gpu-file"),
	      *names = tcase_create("names");

	tcase_set_timeout(capture, 60);
	tcase_add_checked_fixture(capture, test_dir_setup, test_dir_teardown);
	tcase_add_test(capture, test_end_marker_counters);
	tcase_add_test(capture, test_records_not_written);
	tcase_add_loop_test(capture, test_damage_is_reported, 0, DAMAGE__COUNT);
	tcase_add_loop_test(capture, test_nothing_readable_fails, 0, 4);
	tcase_add_test(capture, test_empty_clean_capture);
	tcase_add_test(capture, test_trailing_bytes_noted);
	suite_add_tcase(suite, capture);
	tcase_set_timeout(gpu, 300);
	tcase_add_checked_fixture(gpu, test_dir_setup, test_dir_teardown);
	tcase_add_test(gpu, test_gpu_file_flips);
	tcase_add_test(gpu, test_gpu_file_damaged_block);
	suite_add_tcase(suite, gpu);
	tcase_add_checked_fixture(names, test_dir_setup, test_dir_teardown);
	tcase_add_test(names, test_long_names_kept);
	tcase_add_test(names, test_long_names_cut_to_fit);
	suite_add_tcase(suite, names);
	return run_suite(suite);
}
