/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Helpers shared by the Check suites. */
#ifndef OPTRACE_TESTLIB_H
#define OPTRACE_TESTLIB_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifndef OPTRACE_BUILD_DIR
#define OPTRACE_BUILD_DIR ".output"
#endif

/*
 * Skip the current test, saying why. Under CI=true a skip is a failure:
 * CI must run everything.
 */
#define SKIP_TEST(...)                            \
	do {                                      \
		test_skip(__func__, __VA_ARGS__); \
		return;                           \
	} while (0)

void test_skip(const char *test, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* Whether a program of that name is on PATH. */
bool have_program(const char *name);

/* NULL when the test can run as root with BPF and bpftrace, else why not. */
const char *bpf_unavailable_reason(void);

/* Skip the current test, saying why, unless root, BPF and bpftrace are here. */
#define NEED_BPF()                                           \
	do {                                                 \
		const char *why_ = bpf_unavailable_reason(); \
		if (why_)                                    \
			SKIP_TEST("%s", why_);               \
	} while (0)

#define OPTRACE OPTRACE_BUILD_DIR "/bin/optrace"
#define DEMO OPTRACE_BUILD_DIR "/bin/optrace-demo"

/*
 * A private directory per test: test_dir_setup and test_dir_teardown as a
 * Check fixture, test_path() for a file in it (free the result).
 */
extern char *test_dir;
void test_dir_setup(void);
void test_dir_teardown(void);
char *test_path(const char *name);

/* Runs suite (CK_NORMAL output); returns main()'s exit status. */
int run_suite(Suite *suite);

/*
 * Runs argv with stdout to out_path (NULL: /dev/null) and stderr to
 * err_path (NULL: inherited); kills it after timeout_s. Returns the exit
 * status as waitpid() gives it, or -1.
 */
int run_command(char *const argv[], const char *out_path, const char *err_path, int timeout_s);

/*
 * Sends signo (0: none) to pid and reaps it within grace_s seconds, else
 * kills it with SIGKILL: no test waits on a stuck process for ever.
 * Returns its status as waitpid() gives it, or -1 if it had to be killed.
 */
int reap_within(pid_t pid, int signo, int grace_s);

/* Reads a whole file into a NUL-terminated string; NULL on error. */
char *read_file(const char *path);

/*
 * Starts argv with stdout to out_path (NULL: /dev/null) and stderr to
 * err_path (NULL: inherited); returns its pid, to reap with reap_within().
 */
pid_t spawn_command(char *const argv[], const char *out_path, const char *err_path);

/*
 * Waits until the file at path holds text: true; false once child pid (0:
 * none) has ended without it, or after timeout_s. Tests wait for what a
 * command says ("Tracing..."), never for a time it is assumed to take.
 */
bool wait_for_text(const char *path, const char *text, pid_t pid, int timeout_s);

/*
 * spawn_command() of a tracer, which must then say says on stderr (err_path)
 * within 120 s: "Tracing...", "Recording to". Fails the test, with what it
 * said, if it does not. Returns its pid.
 */
pid_t start_tracer(char *const argv[], const char *out_path, const char *err_path,
		   const char *says);

/*
 * Waits until child pid's runtime has started (its liboptrace says it ran
 * optrace_rt_init): a tracer can attach and read it. Fails the test if it
 * never does.
 */
void wait_started(pid_t pid);

/* A process that maps no liboptrace (sleep 600), once it runs: its pid, to end with reap_within().
 */
pid_t start_foreign_process(void);

/* optrace-demo --forever --workload workload, started (wait_started()): its pid. */
pid_t start_demo_forever(const char *workload);

/*
 * A table's text with every run of spaces inside a line made one (the
 * indent kept): what a row says, whatever its columns' widths. In place;
 * returns text.
 */
char *squeeze_spaces(char *text);

/* Creates a private temporary directory for one test; remove with rm_rf(). */
char *make_temp_dir(void);
void rm_rf(const char *path);

/*
 * A multiset of "key -> count": the demo's ground truth and a tracer's
 * counts turn into the same keys (e.g. "op demo.add 0") and are compared.
 */
struct counts {
	struct count_entry {
		char *key;
		long count;
	} * entries;
	size_t length;
};

void counts_add(struct counts *counts, const char *key, long count);
long counts_get(const struct counts *counts, const char *key);
void counts_free(struct counts *counts);
/* Appends to message what differs; returns the number of differences. */
int counts_diff(const struct counts *expected, const struct counts *actual, char *message,
		size_t size);

/*
 * Parses the demo's ground truth (docs/demo.md): every record "KIND F1 ...
 * COUNT" between begin and end becomes key "KIND F1 ..." with COUNT; records
 * of several blocks (one per process) add up. Returns the number of blocks,
 * or -1 if the file is unreadable or malformed.
 */
int truth_parse(const char *path, struct counts *counts);

/*
 * The counts in optrace's JSON (stat --json, report --json), keyed as the
 * demo's truth is, summed over processes (only_pid 0) or of one process;
 * *processes says how many were counted.
 */
void stat_json_counts(const char *json_path, pid_t only_pid, struct counts *counts, int *processes);

#endif /* OPTRACE_TESTLIB_H */
