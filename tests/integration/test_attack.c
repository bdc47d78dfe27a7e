// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace runs as root in folders other users can write: this suite plays
 * the user without privileges (uid NOBODY) who plants symbolic and hard
 * links, FIFOs, folders and dangling links at every output path and at the
 * temporary names that can be predicted, links an output folder to a
 * folder only root can read, and leaves a world-writable folder, and then
 * runs every command that writes (record, stat, report, export --chrome,
 * --perfetto, --legion) as root. Nothing outside the intended path may
 * change, each command either writes a regular file of root's at the
 * intended path or refuses with a sentence, and none hangs.
 *
 * OPTRACE_UNDER_TEST names another optrace to attack (an older build).
 */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <optrace/abi.h>

#include "testlib.h"
#include "bpf/events.h"
#include "capture/capture.h"

#define NOBODY 65534
#define VICTIM_TEXT "the victim's contents\n"

/* The attacker's files are chowned to another user: only root can. */
#define NEED_ROOT()                                                               \
	do {                                                                      \
		if (geteuid())                                                    \
			SKIP_TEST("needs root: it plants files of another user"); \
	} while (0)

static const char *optrace(void)
{
	const char *other = getenv("OPTRACE_UNDER_TEST");

	return other && *other ? other : OPTRACE;
}

/* A small capture of one process calling demo.add ten times. */
static void write_capture(const char *path)
{
	struct capture_writer_opts opts = { .target = "attack" };
	struct record_string name = {
		.tgid = 4242,
		.tid = 4242,
		.type = RECORD_STRING,
		.address = 0x1000,
		.text = "demo.add",
	};
	struct capture_writer *w;
	struct timespec ts;
	uint64_t now;
	int err;

	ck_assert_int_eq(capture_writer_open(&w, path, &opts), 0);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	name.timestamp = now;
	err = capture_write(w, name.type, &name, sizeof(name));
	for (uint64_t i = 1; i <= 10 && !err; i++) {
		struct record_event e = { .tgid = 4242, .tid = 4242 };

		e.timestamp = now += 1000;
		e.type = RECORD_OP_BEGIN;
		e.args[0] = i;
		e.args[3] = 0x1000;
		err = capture_write(w, e.type, &e, sizeof(e));
		e.timestamp = now += 1000;
		e.type = RECORD_OP_END;
		e.args[3] = 0;
		err = err ?: capture_write(w, e.type, &e, sizeof(e));
	}
	ck_assert_int_eq(err, 0);
	ck_assert_int_eq(capture_close(w, NULL, 0), 0);
}

struct snapshot {
	struct stat st;
	char *text;
};

static void snap(const char *path, struct snapshot *s)
{
	ck_assert_int_eq(lstat(path, &s->st), 0);
	s->text = read_file(path);
	ck_assert_ptr_nonnull(s->text);
}

/* Bytes, mode, owner and mtime as they were. */
static void assert_untouched(const char *path, struct snapshot *s, const char *what)
{
	struct stat now;
	char *text = read_file(path);

	ck_assert_int_eq(lstat(path, &now), 0);
	ck_assert_msg(text && !strcmp(text, s->text), "%s: %s was written", what, path);
	ck_assert_msg(
		now.st_mode == s->st.st_mode && now.st_uid == s->st.st_uid &&
			now.st_gid == s->st.st_gid && now.st_mtim.tv_sec == s->st.st_mtim.tv_sec &&
			now.st_mtim.tv_nsec == s->st.st_mtim.tv_nsec,
		"%s: %s changed (mode %o, owner %u, mtime)", what, path, now.st_mode, now.st_uid);
	free(text);
}

/* Entries in a folder: nothing may appear in a folder the attack points at. */
static int entries(const char *path)
{
	DIR *dir = opendir(path);
	struct dirent *entry;
	int count = 0;

	ck_assert_ptr_nonnull(dir);
	while ((entry = readdir(dir)))
		count += strcmp(entry->d_name, ".") && strcmp(entry->d_name, "..");
	closedir(dir);
	return count;
}

struct fixture {
	char *root;	/* the test's folder */
	char *capture;	/* the input */
	char *victim;	/* root's file, outside the attacked folder */
	char *secret;	/* a folder only root reads */
	char *attacked; /* the folder the attacker writes: sticky and world-writable, as /tmp */
	struct snapshot victim_before;
};

static struct fixture fx;

static void setup(void)
{
	test_dir_setup();
	if (geteuid())
		return; /* each test says SKIP */
	fx.root = test_path("");
	fx.capture = test_path("in.capture");
	fx.victim = test_path("victim");
	fx.secret = test_path("secret");
	fx.attacked = test_path("tmp");
	write_capture(fx.capture);
	ck_assert_int_eq(mkdir(fx.secret, 0700), 0);
	ck_assert_int_eq(mkdir(fx.attacked, 0777), 0);
	ck_assert_int_eq(chmod(fx.attacked, 01777), 0);
	/* The attacker must reach the attacked folder (the test folder may be private). */
	ck_assert_int_eq(chmod(fx.root, 0755), 0);
	{
		FILE *f = fopen(fx.victim, "w");

		ck_assert_ptr_nonnull(f);
		fputs(VICTIM_TEXT, f);
		fclose(f);
	}
	ck_assert_int_eq(chmod(fx.victim, 0600), 0);
	snap(fx.victim, &fx.victim_before);
}

static void teardown(void)
{
	free(fx.victim_before.text);
	free(fx.root);
	free(fx.capture);
	free(fx.victim);
	free(fx.secret);
	free(fx.attacked);
	test_dir_teardown();
}

static char *in_attacked(const char *name)
{
	char *path;

	ck_assert_int_ge(asprintf(&path, "%s/%s", fx.attacked, name), 0);
	return path;
}

/* What the attacker plants at path: a thing of theirs, as they would make it. */
enum plant { SYMLINK, DANGLING, HARDLINK, FIFO, FOLDER, PLANTS };
static const char *const plant_names[] = { "a symbolic link to root's file",
					   "a dangling link out of the folder",
					   "a hard link to root's file", "a FIFO", "a folder" };

static void plant(enum plant what, const char *path)
{
	char *outside = test_path("secret/created-by-optrace");

	switch (what) {
	case SYMLINK:
		ck_assert_int_eq(symlink(fx.victim, path), 0);
		break;
	case DANGLING:
		ck_assert_int_eq(symlink(outside, path), 0);
		break;
	case HARDLINK: /* a user cannot chown it: it is root's file, by another name */
		ck_assert_int_eq(link(fx.victim, path), 0);
		break;
	case FIFO:
		ck_assert_int_eq(mkfifo(path, 0666), 0);
		break;
	case FOLDER:
		ck_assert_int_eq(mkdir(path, 0777), 0);
		break;
	default:
		break;
	}
	if (what != HARDLINK)
		ck_assert_int_eq(lchown(path, NOBODY, NOBODY), 0);
	free(outside);
}

/* Runs optrace with args (NULL-terminated): its exit status; a hang fails. */
static int run_optrace(const char *const args[])
{
	char *argv[24], *err = test_path("stderr.txt");
	int argc = 0, status;

	argv[argc++] = (char *)optrace();
	for (int i = 0; args[i]; i++)
		argv[argc++] = (char *)args[i];
	argv[argc] = NULL;
	status = run_command(argv, NULL, err, 60);
	ck_assert_msg(status != -1, "optrace %s hung or died", args[0]);
	free(err);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* After an attack at path: nothing outside changed; path is root's regular file, or as planted. */
static void check_after(const char *what, const char *path, enum plant planted, int status)
{
	struct stat st;

	assert_untouched(fx.victim, &fx.victim_before, what);
	ck_assert_msg(entries(fx.secret) == 0, "%s: a file appeared in the secret folder", what);
	ck_assert_int_eq(lstat(path, &st), 0);
	if (status == 0 && planted != FOLDER) {
		/* written: a regular file of root's replaced what was planted */
		ck_assert_msg(S_ISREG(st.st_mode) && st.st_uid == 0 &&
				      (planted != HARDLINK || st.st_nlink == 1),
			      "%s: %s is not root's own file after a success", what, path);
	} else {
		ck_assert_msg(status != 0, "%s: a folder at the output and a success", what);
	}
}

/* Every output of every command, against each plant. */
struct command {
	const char *name;
	const char *args[12]; /* "@" stands for the output */
	bool needs_bpf;
	const char *temp_suffix; /* a predictable temporary name beside the output, or NULL */
};

static const struct command commands[] = {
	{ "report -o", { "report", "-o", "@", NULL }, false, NULL },
	{ "export --chrome", { "export", "--chrome", "-o", "@", NULL }, false, NULL },
	{ "export --perfetto", { "export", "--perfetto", "-o", "@", NULL }, false, NULL },
	{ "record -o", { "record", "-q", "-o", "@", "--", "/bin/true", NULL }, true, ".partial" },
	{ "stat -o", { "stat", "-q", "-o", "@", "--", "/bin/true", NULL }, true, NULL },
};

static int run_command_at(const struct command *c, const char *output)
{
	const char *args[16];
	int n = 0;

	for (int i = 0; c->args[i]; i++)
		args[n++] = strcmp(c->args[i], "@") ? c->args[i] : output;
	/* report and export read the capture */
	if (!c->needs_bpf)
		args[n++] = fx.capture;
	args[n] = NULL;
	return run_optrace(args);
}

START_TEST(test_planted_outputs)
{
	const struct command *c = &commands[_i];

	NEED_ROOT();
	if (c->needs_bpf)
		NEED_BPF();
	for (int p = 0; p < PLANTS; p++) {
		char name[64], *path, what[256];
		int status;

		snprintf(name, sizeof(name), "out-%d", p);
		path = in_attacked(name);
		plant((enum plant)p, path);
		snprintf(what, sizeof(what), "%s onto %s", c->name, plant_names[p]);
		status = run_command_at(c, path);
		check_after(what, path, (enum plant)p, status);
		free(path);

		/* the temporary a recorder's output has: planted beside a fresh output */
		if (c->temp_suffix && p != FOLDER) {
			char *temp;

			snprintf(name, sizeof(name), "fresh-%d", p);
			path = in_attacked(name);
			ck_assert_int_ge(asprintf(&temp, "%s%s", path, c->temp_suffix), 0);
			plant((enum plant)p, temp);
			snprintf(what, sizeof(what), "%s with %s at %s", c->name, plant_names[p],
				 temp);
			status = run_command_at(c, path);
			assert_untouched(fx.victim, &fx.victim_before, what);
			ck_assert_msg(entries(fx.secret) == 0, "%s: a file appeared outside", what);
			ck_assert_msg(status != 0 || access(path, F_OK) == 0, "%s", what);
			free(temp);
			free(path);
		}
	}
}
END_TEST

/* A link to a folder only root can read, given as the output folder, or as a file's folder. */
START_TEST(test_symlinked_output_folder)
{
	char *link = in_attacked("prof"), *file;
	const char *legion[] = { "export", "--legion", "-o", link, fx.capture, NULL };
	const char *chrome[] = { "export", "--chrome", "-o", NULL, fx.capture, NULL };
	char *stale;

	NEED_ROOT();
	/* an earlier export's stale log there, which the export would remove */
	ck_assert_int_ge(asprintf(&stale, "%s/prof_5.gz", fx.secret), 0);
	{
		FILE *f = fopen(stale, "w");

		ck_assert_ptr_nonnull(f);
		fclose(f);
	}
	ck_assert_int_eq(symlink(fx.secret, link), 0);
	ck_assert_int_eq(lchown(link, NOBODY, NOBODY), 0);
	ck_assert_int_ne(run_optrace(legion), 0);
	ck_assert_msg(entries(fx.secret) == 1 && access(stale, F_OK) == 0,
		      "export --legion wrote into or removed from the folder the link names");
	ck_assert_int_ge(asprintf(&file, "%s/trace.json", link), 0);
	chrome[3] = file;
	ck_assert_int_ne(run_optrace(chrome), 0);
	ck_assert_int_eq(entries(fx.secret), 1);
	free(file);
	free(stale);
	free(link);
}
END_TEST

/* A world-writable folder without the sticky bit: refused, written with --force. */
START_TEST(test_shared_folder_refused)
{
	char *folder = test_path("shared"), *out, *legion_out;
	const char *plain[] = { "report", "-o", NULL, fx.capture, NULL };
	const char *forced[] = { "report", "--force", "-o", NULL, fx.capture, NULL };
	const char *legion[] = { "export", "--legion", "-o", NULL, fx.capture, NULL };
	struct stat st;

	NEED_ROOT();
	ck_assert_int_eq(mkdir(folder, 0777), 0);
	ck_assert_int_eq(chmod(folder, 0777), 0);
	ck_assert_int_ge(asprintf(&out, "%s/report.txt", folder), 0);
	ck_assert_int_ge(asprintf(&legion_out, "%s/prof", folder), 0);
	plain[2] = forced[3] = out;
	legion[3] = folder;
	ck_assert_int_eq(run_optrace(plain), 1);
	ck_assert_int_ne(access(out, F_OK), 0);
	ck_assert_int_ne(run_optrace(legion), 0);
	ck_assert_int_eq(entries(folder), 0);
	ck_assert_int_eq(run_optrace(forced), 0);
	ck_assert_int_eq(lstat(out, &st), 0);
	ck_assert(S_ISREG(st.st_mode) && st.st_uid == 0);
	free(out);
	free(legion_out);
	free(folder);
}
END_TEST

/* In a sticky folder others write: their prof_N.gz and links are neither written nor removed. */
START_TEST(test_legion_among_planted_logs)
{
	char *folder = in_attacked("logs"), *link, *theirs, *stale;
	const char *legion[] = { "export", "--legion", "-o", folder, fx.capture, NULL };
	struct snapshot theirs_before, stale_before;
	FILE *f;

	NEED_ROOT();
	ck_assert_int_eq(mkdir(folder, 0777), 0);
	ck_assert_int_eq(chmod(folder, 01777), 0);
	ck_assert_int_ge(asprintf(&link, "%s/prof_0.gz", folder), 0);
	ck_assert_int_ge(asprintf(&theirs, "%s/prof_3.gz", folder), 0);
	ck_assert_int_ge(asprintf(&stale, "%s/prof_4.gz", folder), 0);
	plant(SYMLINK, link);
	f = fopen(theirs, "w");
	ck_assert_ptr_nonnull(f);
	fputs("theirs\n", f);
	fclose(f);
	ck_assert_int_eq(chown(theirs, NOBODY, NOBODY), 0);
	ck_assert_int_eq(symlink(fx.victim, stale), 0);
	ck_assert_int_eq(lchown(stale, NOBODY, NOBODY), 0);
	snap(theirs, &theirs_before);
	ck_assert_int_eq(lstat(stale, &stale_before.st), 0);
	stale_before.text = strdup("");

	run_optrace(legion);
	assert_untouched(fx.victim, &fx.victim_before, "export --legion among planted logs");
	assert_untouched(theirs, &theirs_before, "export --legion: another user's prof_3.gz");
	ck_assert_msg(access(stale, F_OK) == 0 || errno != ENOENT,
		      "export --legion removed a link another user planted");
	{
		struct stat st;

		ck_assert_int_eq(lstat(stale, &st), 0);
		ck_assert(S_ISLNK(st.st_mode));
	}
	free(theirs_before.text);
	free(stale_before.text);
	free(link);
	free(theirs);
	free(stale);
	free(folder);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("attack");
	TCase *outputs = tcase_create("outputs");

	tcase_set_timeout(outputs, 300);
	tcase_add_checked_fixture(outputs, setup, teardown);
	tcase_add_loop_test(outputs, test_planted_outputs, 0,
			    (int)(sizeof(commands) / sizeof(commands[0])));
	tcase_add_test(outputs, test_symlinked_output_folder);
	tcase_add_test(outputs, test_shared_folder_refused);
	tcase_add_test(outputs, test_legion_among_planted_logs);
	suite_add_tcase(suite, outputs);
	return run_suite(suite);
}
