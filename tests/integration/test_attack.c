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
 * It also plays the traced process that covers the liboptrace it maps with a
 * FIFO, in a mount namespace of its own: every command that reads that
 * library ends with a sentence, none hangs, and serve still answers and
 * stops on SIGTERM.
 *
 * OPTRACE_UNDER_TEST names another optrace to attack (an older build).
 */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <optrace/abi.h>

#include "http_get.h"
#include "json_read.h"
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

/* A file of root's, mode 0600, with text: what a write through a planted link would replace. */
static void write_root_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	ck_assert_int_eq(chmod(path, 0600), 0);
}

/*
 * A link of another user's in a parent of the output, not its last folder:
 * attacked/X -> the secret folder, then outputs at X/dir/out.json,
 * X/./out.json and X/dir as Legion's folder. Before, the check of the last
 * folder alone let root write (and remove a stale log) through X.
 */
START_TEST(test_link_in_parent)
{
	char *link = in_attacked("X"), *dir, *inner, *stale, *through_dot, *through_dir,
	     *legion_dir;
	const char *chrome[] = { "export", "--chrome", "-o", NULL, fx.capture, NULL };
	const char *legion[] = { "export", "--legion", "-o", NULL, fx.capture, NULL };
	struct snapshot inner_before, stale_before;

	NEED_ROOT();
	ck_assert_int_ge(asprintf(&dir, "%s/dir", fx.secret), 0);
	ck_assert_int_ge(asprintf(&inner, "%s/out.json", dir), 0);
	ck_assert_int_ge(asprintf(&stale, "%s/prof_7.gz", dir), 0);
	ck_assert_int_ge(asprintf(&through_dir, "%s/dir/out.json", link), 0);
	ck_assert_int_ge(asprintf(&through_dot, "%s/./out.json", link), 0);
	ck_assert_int_ge(asprintf(&legion_dir, "%s/dir", link), 0);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	write_root_file(inner, "root's own\n");
	write_root_file(stale, "an earlier export's log\n");
	snap(inner, &inner_before);
	snap(stale, &stale_before);
	ck_assert_int_eq(symlink(fx.secret, link), 0);
	ck_assert_int_eq(lchown(link, NOBODY, NOBODY), 0);

	chrome[3] = through_dir;
	ck_assert_int_ne(run_optrace(chrome), 0);
	chrome[3] = through_dot;
	ck_assert_int_ne(run_optrace(chrome), 0);
	legion[3] = legion_dir;
	ck_assert_int_ne(run_optrace(legion), 0);
	assert_untouched(inner, &inner_before, "export through another user's link in a parent");
	assert_untouched(stale, &stale_before, "export --legion through another user's link");
	ck_assert_int_eq(entries(fx.secret), 1);
	ck_assert_int_eq(entries(dir), 2);
	{
		char *said = read_file(test_path("stderr.txt"));

		ck_assert_ptr_nonnull(said);
		ck_assert_msg(strstr(said, "symbolic link of another user"), "said: %s", said);
		free(said);
	}

	/* root's own link (as /var/run is) in a folder only root can change: followed */
	free(link);
	link = test_path("rootlink");
	ck_assert_int_eq(symlink(fx.secret, link), 0);
	free(through_dir);
	ck_assert_int_ge(asprintf(&through_dir, "%s/dir/new.json", link), 0);
	chrome[3] = through_dir;
	ck_assert_int_eq(run_optrace(chrome), 0);
	ck_assert_int_eq(entries(dir), 3);
	free(inner_before.text);
	free(stale_before.text);
	free(dir);
	free(inner);
	free(stale);
	free(through_dot);
	free(through_dir);
	free(legion_dir);
	free(link);
}
END_TEST

/*
 * A folder of another user's in a sticky folder, flipped between a folder
 * and a link to the secret folder while root writes below it: refused
 * whichever it is at the moment (the walk holds each folder it checked).
 */
START_TEST(test_folder_flipped_into_link)
{
	char *flipped = in_attacked("F"), *aside = in_attacked("F.real"), *out, *target;
	const char *chrome[] = { "export", "--chrome", "-o", NULL, fx.capture, NULL };
	int refused = 0, runs = 30;
	pid_t flipper;

	NEED_ROOT();
	ck_assert_int_ge(asprintf(&target, "%s/dir", fx.secret), 0);
	ck_assert_int_eq(mkdir(target, 0700), 0);
	ck_assert_int_ge(asprintf(&out, "%s/dir/out.json", flipped), 0);
	flipper = fork();
	ck_assert_int_ge(flipper, 0);
	if (flipper == 0) {
		char *dir;

		if (setgid(NOBODY) || setuid(NOBODY) || mkdir(flipped, 0777) ||
		    asprintf(&dir, "%s/dir", flipped) < 0 || mkdir(dir, 0777))
			_exit(1);
		for (;;) {
			rename(flipped, aside);
			symlink(fx.secret, flipped);
			unlink(flipped);
			rename(aside, flipped);
		}
	}
	chrome[3] = out;
	for (int i = 0; i < runs; i++)
		refused += run_optrace(chrome) != 0;
	reap_within(flipper, SIGKILL, 5);
	ck_assert_int_eq(refused, runs);
	ck_assert_int_eq(entries(fx.secret), 1);
	ck_assert_int_eq(entries(target), 0);
	free(target);
	free(out);
	free(aside);
	free(flipped);
}
END_TEST

/*
 * Replacing a file hands it nothing that would run its new contents with
 * privileges: root's setuid file rewritten keeps its permissions without
 * the setuid and setgid bits; another user's, replaced with --force,
 * becomes root's (it was handed back to its owner, setuid bit and all).
 */
START_TEST(test_replaced_file_keeps_no_privilege)
{
	char *own = test_path("own.txt"), *theirs = test_path("theirs.txt");
	const char *report[] = { "report", "-o", NULL, fx.capture, NULL };
	const char *forced[] = { "report", "--force", "-o", NULL, fx.capture, NULL };
	struct stat st;

	NEED_ROOT();
	write_root_file(own, "root's own\n");
	ck_assert_int_eq(chown(own, 0, 100), 0);
	ck_assert_int_eq(chmod(own, 06750), 0);
	report[2] = own;
	ck_assert_int_eq(run_optrace(report), 0);
	ck_assert_int_eq(lstat(own, &st), 0);
	ck_assert_msg(st.st_uid == 0 && st.st_gid == 100 && (st.st_mode & 07777) == 0750,
		      "root's setuid file rewritten: owner %u:%u, mode %04o", st.st_uid, st.st_gid,
		      st.st_mode & 07777);

	write_root_file(theirs, "another user's\n");
	ck_assert_int_eq(chown(theirs, NOBODY, NOBODY), 0);
	ck_assert_int_eq(chmod(theirs, 06777), 0);
	report[2] = forced[3] = theirs;
	ck_assert_int_ne(run_optrace(report), 0);
	ck_assert_int_eq(run_optrace(forced), 0);
	ck_assert_int_eq(lstat(theirs, &st), 0);
	ck_assert_msg(st.st_uid == 0 && st.st_gid == 0 && !(st.st_mode & 07000) &&
			      !(st.st_mode & S_IWOTH),
		      "another user's setuid file replaced with --force: owner %u:%u, mode %04o",
		      st.st_uid, st.st_gid, st.st_mode & 07777);
	free(own);
	free(theirs);
}
END_TEST

/* A whole file's bytes (a capture holds NULs), into *size. */
static char *read_bytes(const char *path, size_t *size)
{
	FILE *f = fopen(path, "re");
	char *bytes = NULL;
	long length;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	length = ftell(f);
	ck_assert_int_ge(length, 0);
	rewind(f);
	bytes = malloc((size_t)length + 1);
	ck_assert_ptr_nonnull(bytes);
	*size = fread(bytes, 1, (size_t)length, f);
	ck_assert_int_eq(*size, (size_t)length);
	fclose(f);
	return bytes;
}

/* -o /proc/self/fd/N and /dev/fd/N for the input: refused by what they are, whatever the name. */
START_TEST(test_output_is_input_by_descriptor)
{
	const char *report[] = { "report", "-o", NULL, fx.capture, NULL };
	const char *names[] = { "/proc/self/fd/%d", "/dev/fd/%d" };
	size_t size, size_now;
	char output[64], *before;
	int fd;

	NEED_ROOT();
	before = read_bytes(fx.capture, &size);
	/* inherited by optrace: no O_CLOEXEC */
	fd = open(fx.capture, O_RDWR);
	ck_assert_int_ge(fd, 0);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *now;

		snprintf(output, sizeof(output), names[i], fd);
		report[2] = output;
		ck_assert_int_ne(run_optrace(report), 0);
		now = read_bytes(fx.capture, &size_now);
		ck_assert_msg(size_now == size && !memcmp(now, before, size),
			      "report -o %s wrote into its input", output);
		free(now);
	}
	close(fd);
	free(before);
}
END_TEST

/*
 * A small file system of its own, mounted on path (16 pages): full after a
 * few reports. In a mount namespace of this test's own, which optrace
 * inherits: the mount goes with the test even when it fails.
 */
static void mount_small(const char *path)
{
	ck_assert_int_eq(mkdir(path, 0755), 0);
	ck_assert_int_eq(unshare(CLONE_NEWNS), 0);
	ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	ck_assert_msg(!mount("tmpfs", path, "tmpfs", 0, "size=64k,mode=0755"),
		      "cannot mount a tmpfs on %s: %s", path, strerror(errno));
}

static void unmount_small(const char *path)
{
	ck_assert_int_eq(umount2(path, MNT_DETACH), 0);
	rmdir(path);
}

/* Fills the file system at folder until a write fails: no byte left. */
static void fill(const char *folder)
{
	char *path, block[4096];
	int fd;

	memset(block, 'x', sizeof(block));
	ck_assert_int_ge(asprintf(&path, "%s/filler", folder), 0);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	while (write(fd, block, sizeof(block)) > 0)
		;
	while (write(fd, block, 1) > 0)
		;
	close(fd);
	free(path);
}

/* stat -q [--json] -o output ARGS -- the demo: its exit status; what it said into *said. */
static int stat_into(const char *output, bool json, const char *interval, char **said)
{
	char *err = test_path("stat-stderr.txt");
	char *argv[24];
	int argc = 0, status;

	argv[argc++] = (char *)optrace();
	argv[argc++] = "stat";
	argv[argc++] = "-q";
	if (json)
		argv[argc++] = "--json";
	argv[argc++] = "-o";
	argv[argc++] = (char *)output;
	if (interval) {
		argv[argc++] = "-d";
		argv[argc++] = "60";
		argv[argc++] = (char *)interval;
	}
	argv[argc++] = "--";
	argv[argc++] = DEMO;
	argv[argc++] = "-w";
	argv[argc++] = "stats";
	argv[argc++] = "-q";
	argv[argc++] = "--truth";
	argv[argc++] = "/dev/null";
	if (interval)
		argv[argc++] = "--forever";
	argv[argc] = NULL;
	status = run_command(argv, NULL, err, 90);
	ck_assert_msg(status != -1, "stat -o %s hung", output);
	*said = read_file(err);
	ck_assert_ptr_nonnull(*said);
	free(err);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*
 * stat -o and stat --json -o on a full disk: a non-zero status and a
 * sentence, never status 0 with an empty or cut file. One report: the
 * file that was there stays as it was, and no temporary is left.
 */
START_TEST(test_stat_full_disk)
{
	bool json = _i;
	char *small = test_path("small"), *old, *said;
	struct snapshot before;

	NEED_ROOT();
	NEED_BPF();
	ck_assert_int_ne(stat_into("/dev/full", json, NULL, &said), 0);
	ck_assert_msg(strstr(said, "cannot write /dev/full: No space left"), "said: %s", said);
	free(said);

	mount_small(small);
	ck_assert_int_ge(asprintf(&old, "%s/old.txt", small), 0);
	write_root_file(old, "the report of an earlier run\n");
	snap(old, &before);
	fill(small);
	ck_assert_int_ne(stat_into(old, json, NULL, &said), 0);
	ck_assert_msg(strstr(said, "No space left"), "said: %s", said);
	assert_untouched(old, &before, "stat -o on a full disk");
	ck_assert_int_eq(entries(small), 2); /* the filler and old.txt: no temporary left */
	free(said);
	free(before.text);
	free(old);
	unmount_small(small);
	free(small);
}
END_TEST

/*
 * With an interval the file fills as stat goes: when the disk is full it
 * is cut back to its last whole report, and stat says so and fails.
 */
START_TEST(test_stat_full_disk_interval)
{
	bool json = _i;
	char *small = test_path("small"), *out, *said, *text, *line, *cursor;
	int reports = 0;

	NEED_ROOT();
	NEED_BPF();
	mount_small(small);
	ck_assert_int_ge(asprintf(&out, "%s/%s", small, json ? "stat.json" : "stat.txt"), 0);
	ck_assert_int_ne(stat_into(out, json, "0.2", &said), 0);
	ck_assert_msg(strstr(said, "No space left") && strstr(said, "whole report"), "said: %s",
		      said);
	text = read_file(out);
	ck_assert_ptr_nonnull(text);
	ck_assert_msg(!*text || text[strlen(text) - 1] == '\n', "the file ends in a cut line");
	if (!json && *text) {
		const char *last = NULL;

		/* nothing after the last report's last line (lost: ...) */
		for (const char *at = text; (at = strstr(at, "lost: ")); at++)
			last = at;
		ck_assert_msg(last && !strchr(last, '\n')[1], "the last report is cut: %s",
			      last ? last : text);
	}
	for (cursor = text; (line = strsep(&cursor, "\n"));) {
		if (json && *line) {
			struct jv *report = jv_parse(line);

			ck_assert_msg(report, "a report is not whole JSON: %.80s", line);
			jv_free(report);
			reports++;
		} else if (!json && !strncmp(line, "lost: ", 6)) {
			reports++;
		} else if (!json && !cursor) {
			ck_assert_str_eq(line, ""); /* the last report ends with its lost: line */
		}
	}
	printf("stat%s -o on a full 64 KiB disk: %d whole reports kept; said: %s",
	       json ? " --json" : "", reports, said);
	free(text);
	free(said);
	free(out);
	unmount_small(small);
	free(small);
}
END_TEST

/* The file a process maps as liboptrace, as its /proc/PID/maps names it, into path. */
static void mapped_liboptrace(pid_t pid, char *path, size_t size)
{
	char maps[64], line[4096];
	FILE *file;

	path[0] = '\0';
	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	file = fopen(maps, "re");
	ck_assert_ptr_nonnull(file);
	while (!path[0] && fgets(line, sizeof(line), file)) {
		char *name = strchr(line, '/');

		if (name && strstr(name, "/liboptrace.so")) {
			name[strcspn(name, "\n")] = '\0';
			snprintf(path, size, "%s", name);
		}
	}
	fclose(file);
	ck_assert_msg(path[0], "process %d maps no liboptrace", pid);
}

/*
 * The demo runtime in a mount namespace of its own, its liboptrace covered
 * there by a FIFO once it runs: /proc/PID/maps still names the library's
 * path, and that path, opened through /proc/PID/root, is the FIFO. No
 * writer ever comes: whoever opens it to read without O_NONBLOCK waits for
 * ever. The host's mounts do not change.
 */
static pid_t start_covered_runtime(char *library, size_t size)
{
	char *fifo = test_path("cover.fifo"), ns[64], comm[64], seen[PATH_MAX + 64];
	struct stat st, ours;
	pid_t pid, helper;
	int status, ns_fd;

	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
			_exit(126);
		execl(DEMO, DEMO, "--forever", "-q", "--truth", "/dev/null", (char *)NULL);
		_exit(127);
	}
	/* Until its exec the child is this test, which maps liboptrace too. */
	snprintf(comm, sizeof(comm), "/proc/%d/comm", pid);
	ck_assert_msg(wait_for_text(comm, "optrace-demo", pid, 120), "the demo did not start");
	wait_started(pid);
	mapped_liboptrace(pid, library, size);
	/*
	 * Into its namespace, as it would do it itself, to cover the file; never
	 * into ours, where the FIFO would cover every user's liboptrace.
	 */
	snprintf(ns, sizeof(ns), "/proc/%d/ns/mnt", pid);
	ns_fd = open(ns, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(ns_fd, 0);
	ck_assert_int_eq(fstat(ns_fd, &st), 0);
	ck_assert_int_eq(stat("/proc/self/ns/mnt", &ours), 0);
	ck_assert_msg(st.st_ino != ours.st_ino, "process %d shares this test's mount namespace",
		      pid);
	helper = fork();
	ck_assert_int_ge(helper, 0);
	if (helper == 0) {
		if (setns(ns_fd, CLONE_NEWNS) || mount(fifo, library, NULL, MS_BIND, NULL))
			_exit(1);
		_exit(0);
	}
	close(ns_fd);
	ck_assert_int_eq(waitpid(helper, &status, 0), helper);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "cannot cover %s with a FIFO in process %d's namespace", library, pid);
	snprintf(seen, sizeof(seen), "/proc/%d/root%s", pid, library);
	ck_assert_int_eq(stat(seen, &st), 0);
	ck_assert_msg(S_ISFIFO(st.st_mode), "%s is no FIFO", seen);
	ck_assert_int_eq(stat(library, &st), 0);
	ck_assert_msg(S_ISREG(st.st_mode), "the host's %s was covered too", library);
	free(fifo);
	return pid;
}

/* Milliseconds since an earlier time. */
static long ms_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - start->tv_sec) * 1000 + (now.tv_nsec - start->tv_nsec) / 1000000;
}

/* optrace with args ends within 20 s, non-zero, saying why; with its stderr in *said (to free). */
static void assert_refused_in_time(const char *const args[], char **said)
{
	char *argv[16], *err = test_path("stderr.txt");
	struct timespec start;
	int argc = 0, status;

	argv[argc++] = (char *)optrace();
	for (int i = 0; args[i]; i++)
		argv[argc++] = (char *)args[i];
	argv[argc] = NULL;
	clock_gettime(CLOCK_MONOTONIC, &start);
	status = run_command(argv, NULL, err, 20);
	ck_assert_msg(status != -1, "optrace %s %s hung on the FIFO (killed after 20 s)", args[0],
		      args[1]);
	*said = read_file(err);
	ck_assert_ptr_nonnull(*said);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) != 0,
		      "optrace %s %s succeeded on a FIFO: %s", args[0], args[1], *said);
	ck_assert_msg(strstr(*said, "no regular file"), "optrace %s %s said: %s", args[0], args[1],
		      *said);
	printf("optrace %s %s: refused in %ld ms\n", args[0], args[1], ms_since(&start));
	free(err);
}

START_TEST(test_fifo_covered_library)
{
	char library[PATH_MAX], pid_text[16], *said;
	const char *dump[] = { "dump", "-p", pid_text, NULL };
	const char *list[] = { "list", "-p", pid_text, NULL };
	const char *stat[] = { "stat", "-q", "-p", pid_text, "-d", "1", NULL };
	char *dump_all[] = { (char *)optrace(), "dump", "-a", NULL };
	char *err = test_path("dump-all.txt");
	pid_t runtime;
	int status;

	NEED_ROOT();
	runtime = start_covered_runtime(library, sizeof(library));
	snprintf(pid_text, sizeof(pid_text), "%d", runtime);
	assert_refused_in_time(dump, &said);
	free(said);
	assert_refused_in_time(list, &said);
	free(said);
	if (!bpf_unavailable_reason()) {
		assert_refused_in_time(stat, &said);
		free(said);
	}
	/* -a: the process is passed over, and named; the node's others are still shown */
	status = run_command(dump_all, NULL, err, 20);
	ck_assert_msg(status != -1, "optrace dump -a hung on the FIFO");
	said = read_file(err);
	ck_assert_msg(said && strstr(said, "passed over") && strstr(said, pid_text),
		      "dump -a said: %s", said);
	free(said);
	free(err);
	ck_assert_int_ne(reap_within(runtime, SIGTERM, 10), -1);
}
END_TEST

/* serve -a traces the covered process (its library's inode is the one attached), answers, stops. */
START_TEST(test_fifo_covered_library_serve)
{
	char library[PATH_MAX], listen[32], *err = test_path("serve.txt"), *body = NULL;
	char *argv[] = { (char *)optrace(), "serve", "-l", listen, NULL };
	struct timespec start;
	pid_t runtime, serve;
	int port = free_port(), status;
	long stop_ms;

	NEED_ROOT();
	NEED_BPF();
	runtime = start_covered_runtime(library, sizeof(library));
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	serve = start_tracer(argv, NULL, err, "Serving");
	/* past a rescan (each second) and the ranks looked up for the new process */
	for (int i = 0; i < 3; i++) {
		struct timespec pause = { 1, 0 };

		nanosleep(&pause, NULL);
		clock_gettime(CLOCK_MONOTONIC, &start);
		ck_assert_int_eq(http_get(port, "/metrics", &body), 200);
		ck_assert_msg(ms_since(&start) < 5000, "a scrape took %ld ms", ms_since(&start));
		free(body);
		body = NULL;
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	status = reap_within(serve, SIGTERM, 5);
	stop_ms = ms_since(&start);
	ck_assert_msg(status != -1, "serve did not stop on SIGTERM within 5 s");
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "serve: status %d", status);
	printf("serve stopped %ld ms after SIGTERM\n", stop_ms);
	ck_assert_msg(stop_ms < 2000, "serve took %ld ms to stop on SIGTERM", stop_ms);
	ck_assert_int_ne(reap_within(runtime, SIGTERM, 10), -1);
	free(err);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("attack");
	TCase *outputs = tcase_create("outputs");
	TCase *targets = tcase_create("targets");
	TCase *faults = tcase_create("faults");

	tcase_set_timeout(outputs, 300);
	tcase_add_checked_fixture(outputs, setup, teardown);
	tcase_add_loop_test(outputs, test_planted_outputs, 0,
			    (int)(sizeof(commands) / sizeof(commands[0])));
	tcase_add_test(outputs, test_symlinked_output_folder);
	tcase_add_test(outputs, test_shared_folder_refused);
	tcase_add_test(outputs, test_legion_among_planted_logs);
	tcase_add_test(outputs, test_link_in_parent);
	tcase_add_test(outputs, test_folder_flipped_into_link);
	tcase_add_test(outputs, test_output_is_input_by_descriptor);
	tcase_add_test(outputs, test_replaced_file_keeps_no_privilege);
	suite_add_tcase(suite, outputs);
	tcase_set_timeout(targets, 300);
	tcase_add_checked_fixture(targets, test_dir_setup, test_dir_teardown);
	tcase_add_test(targets, test_fifo_covered_library);
	tcase_add_test(targets, test_fifo_covered_library_serve);
	suite_add_tcase(suite, targets);
	tcase_set_timeout(faults, 300);
	tcase_add_checked_fixture(faults, test_dir_setup, test_dir_teardown);
	tcase_add_loop_test(faults, test_stat_full_disk, 0, 2);
	tcase_add_loop_test(faults, test_stat_full_disk_interval, 0, 2);
	suite_add_tcase(suite, faults);
	return run_suite(suite);
}
