// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The probes liboptrace.so carries, read from its ELF notes with libelf. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"
#include "trace/elf_symbols.h"
#include "trace/targets.h"
#include "trace/usdt_args.h"
#include "trace/usdt_notes.h"

#define LIBOPTRACE OPTRACE_BUILD_DIR "/lib/liboptrace.so.1"

struct abi_probe {
	const char *name;
	int argc;
};

static const struct abi_probe op_probes[] = {
	{ "rt_init", 3 },
	{ "op_begin", 5 },
	{ "op_end", 2 },
	{ "op_mode", 3 },
	{ "op_fallback", 3 },
	{ "task_launch", 5 },
	{ "task_begin", 4 },
	{ "task_end", 3 },
	{ "wait_begin", 2 },
	{ "wait_end", 2 },
	{ "batch", 6 }, /* ABI 2: the fast path; ABI 4 lists its strings */
	{},
};

/* GPU records (include/optrace/gpu.h), fired by liboptrace-cupti through liboptrace. */
static const struct abi_probe gpu_probes[] = {
	{ "kernel", 1 },      { "memcpy", 1 },	{ "memset", 1 }, { "api", 1 }, { "sync", 1 },
	{ "kernel_name", 2 }, { "dropped", 2 }, { "launch", 3 }, {},
};

static const struct {
	const char *provider;
	const struct abi_probe *probes;
} providers[] = { { "optrace", op_probes }, { "optrace_gpu", gpu_probes } };

START_TEST(test_every_probe_has_a_semaphore)
{
	const char *provider = providers[_i].provider;
	const struct abi_probe *probes = providers[_i].probes;
	struct usdt_notes notes;
	int err = usdt_notes_read(LIBOPTRACE, provider, &notes);
	size_t count = 0;

	ck_assert_msg(err == 0, "reading %s: %s", LIBOPTRACE, strerror(-err));
	for (; probes[count].name; count++) {
		const struct usdt_note *note = usdt_notes_find(&notes, probes[count].name);
		struct usdt_arg args[USDT_MAX_ARGS];

		ck_assert_msg(note, "probe %s:%s missing", provider, probes[count].name);
		ck_assert_str_eq(note->provider, provider);
		ck_assert_msg(note->semaphore && note->semaphore_offset,
			      "probe %s has no semaphore", note->name);
		ck_assert_int_eq(usdt_args_parse(note->args, args, USDT_MAX_ARGS),
				 probes[count].argc);
		ck_assert(note->pc_offset > 0);
	}
	ck_assert_uint_eq(notes.count, count);
	/*
	 * The optrace provider's semaphores sit side by side in the order of
	 * probes/optrace.d, which liboptrace's one-test "any armed" relies on.
	 */
	if (!strcmp(provider, "optrace")) {
		uint64_t first = usdt_notes_find(&notes, probes[0].name)->semaphore;

		for (size_t i = 0; i < count; i++)
			ck_assert_uint_eq(usdt_notes_find(&notes, probes[i].name)->semaphore,
					  first + 2 * i);
		ck_assert_uint_eq(first % 8, 0);
	}
	/* Semaphores are distinct 2-byte counters. */
	for (size_t i = 0; i < notes.count; i++)
		for (size_t j = i + 1; j < notes.count; j++)
			ck_assert_uint_ne(notes.notes[i].semaphore, notes.notes[j].semaphore);
	usdt_notes_free(&notes);
}
END_TEST

START_TEST(test_provider_filter_and_foreign_probes)
{
	struct usdt_notes notes;

	/* The C library has probes of its own provider ("libc"), none of ours. */
	ck_assert_int_eq(usdt_notes_read("/lib/x86_64-linux-gnu/libc.so.6", "optrace", &notes), 0);
	ck_assert_uint_eq(notes.count, 0);
	usdt_notes_free(&notes);
}
END_TEST

START_TEST(test_bad_files)
{
	struct usdt_notes notes;
	char path[] = "/tmp/optrace-notes-XXXXXX";
	int fd = mkstemp(path);

	ck_assert_int_eq(usdt_notes_read("/nonexistent/liboptrace.so", NULL, &notes), -ENOENT);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "\177ELF garbage", 12), 12);
	close(fd);
	ck_assert_int_eq(usdt_notes_read(path, NULL, &notes), -ENOEXEC);
	ck_assert_ptr_null(notes.notes);
	unlink(path);
}
END_TEST

/*
 * A FIFO where a traced process names its library (covered in its own
 * mount namespace): each reader refuses it at once, where a blocking open()
 * would wait for a writer for ever (the test's timeout would fail it).
 */
START_TEST(test_fifo_refused)
{
	struct usdt_notes notes;
	char *dir = make_temp_dir(), *fifo;
	uint64_t value = 0;

	ck_assert_int_ge(asprintf(&fifo, "%s/liboptrace.so.1", dir), 0);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(target_file_open(fifo), -ENOTREGULAR);
	ck_assert_int_eq(usdt_notes_read(fifo, NULL, &notes), -ENOTREGULAR);
	ck_assert_int_eq(elf_symbol_value(fifo, "optrace_rt_info", &value), -ENOTREGULAR);
	ck_assert_int_eq(elf_symbol_offset(fifo, "optrace_rt_info", &value), -ENOTREGULAR);
	ck_assert_int_eq(target_file_open("/dev/null"), -ENOTREGULAR);
	ck_assert_int_eq(target_file_open(dir), -ENOTREGULAR);
	ck_assert_int_eq(target_file_open("/nonexistent/liboptrace.so.1"), -ENOENT);
	ck_assert_str_eq(target_strerror(-ENOTREGULAR),
			 "not a regular file (a FIFO or device put at the path it names)");
	/* a regular file opens, close-on-exec (O_NONBLOCK changes nothing for it) */
	{
		int fd = target_file_open(LIBOPTRACE);

		ck_assert_int_ge(fd, 0);
		ck_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC);
		close(fd);
	}
	unlink(fifo);
	free(fifo);
	rm_rf(dir);
	free(dir);
}
END_TEST

START_TEST(test_argument_specifications)
{
	struct usdt_arg args[USDT_MAX_ARGS];

	ck_assert_int_eq(usdt_args_parse("8@%rdi -4@%esi 8@-16(%rbp) 4@$42 -1@%r8b", args, 12), 5);
	ck_assert_int_eq(args[0].kind, USDT_ARG_REG);
	ck_assert_int_eq(args[0].reg, USDT_REG_RDI);
	ck_assert_int_eq(args[0].size, 8);
	ck_assert(!args[0].is_signed);
	ck_assert(args[1].is_signed);
	ck_assert_int_eq(args[1].reg, USDT_REG_RSI);
	ck_assert_int_eq(args[2].kind, USDT_ARG_REG_DEREF);
	ck_assert_int_eq(args[2].reg, USDT_REG_RBP);
	ck_assert_int_eq(args[2].value, -16);
	ck_assert_int_eq(args[3].kind, USDT_ARG_CONST);
	ck_assert_int_eq(args[3].value, 42);
	ck_assert_int_eq(args[4].reg, USDT_REG_R8);
	ck_assert_int_eq(args[4].size, 1);
	ck_assert_int_eq(usdt_args_parse("8@(%rax)", args, 12), 1);
	ck_assert_int_eq(args[0].value, 0);
	ck_assert_int_eq(usdt_args_parse("", args, 12), 0);
	ck_assert_int_eq(usdt_reg_pt_regs_offset(USDT_REG_RDI), 112);

	ck_assert_int_eq(usdt_args_parse("3@%rdi", args, 12), -EINVAL);
	ck_assert_int_eq(usdt_args_parse("8@%xmm0", args, 12), -EINVAL);
	ck_assert_int_eq(usdt_args_parse("8@-16(%rbp", args, 12), -EINVAL);
	ck_assert_int_eq(usdt_args_parse("8@", args, 12), -EINVAL);
	ck_assert_int_eq(usdt_args_parse("%rdi", args, 12), -EINVAL);
	ck_assert_int_eq(usdt_args_parse("8@%rdi 8@%rsi", args, 1), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("usdt_notes");
	TCase *tc = tcase_create("elf");

	tcase_add_loop_test(tc, test_every_probe_has_a_semaphore, 0, 2);
	tcase_add_test(tc, test_provider_filter_and_foreign_probes);
	tcase_add_test(tc, test_bad_files);
	tcase_add_test(tc, test_fifo_refused);
	tcase_add_test(tc, test_argument_specifications);
	suite_add_tcase(suite, tc);

	return run_suite(suite);
}
