// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* optrace top's screen (top_screen.h). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "output/top_screen.h"
#include "output/dump_print.h"
#include "output/json.h"
#include "output/text_table.h"
#include "trace/view_read.h"

#define MAX_PROCESSES 1024
#define STUCK_LINES 8 /* marks shown; the rest are counted */
/* The header and the key line: the rest of the rows are the report's. */
#define FRAME_ROWS 2

/* The escapes an interactive screen writes; batch mode writes none. */
#define ALTERNATE_SCREEN "\033[?1049h\033[?25l"
#define NORMAL_SCREEN "\033[?25h\033[?1049l"
#define HOME "\033[H"
#define CLEAR_LINE "\033[K"
#define CLEAR_BELOW "\033[J"
#define REVERSE "\033[7m"
#define PLAIN "\033[0m"

void top_screen_start(struct top_screen *screen)
{
	struct termios raw;

	screen->started = true;
	if (!isatty(STDOUT_FILENO))
		screen->batch = true; /* top >file: text, as top -b */
	if (screen->batch || !isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &screen->terminal))
		return;
	raw = screen->terminal;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	screen->raw_terminal = !tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	fputs(ALTERNATE_SCREEN, stdout);
	fflush(stdout);
}

void top_screen_stop(struct top_screen *screen)
{
	if (!screen->started)
		return; /* it failed before the first frame: nothing to restore */
	screen->started = false;
	if (!screen->batch) {
		fputs(NORMAL_SCREEN, stdout);
		fflush(stdout);
	}
	if (screen->raw_terminal)
		tcsetattr(STDIN_FILENO, TCSANOW, &screen->terminal);
	screen->raw_terminal = false;
	if (screen->has_snapshot)
		stat_snapshot_free(&screen->snapshot);
	screen->has_snapshot = false;
}

/* "this interval, every 1 s" or "totals since start, every 0.5 s". */
static void describe(const struct top_screen *screen, char *buffer, size_t size)
{
	snprintf(buffer, size, "%s, every %g s",
		 screen->cumulative ? "totals since start" : "this interval",
		 screen->interval_ms / 1000.0);
}

void top_screen_watch(struct top_screen *screen, __u32 tgid)
{
	const size_t capacity = sizeof(screen->seen) / sizeof(screen->seen[0]);

	for (size_t i = 0; i < screen->seen_count; i++) {
		if (screen->seen[i] == tgid)
			return;
	}
	if (screen->seen_count < capacity)
		screen->seen[screen->seen_count++] = tgid;
}

/* The snapshot's processes join those seen; those gone leave. */
static void note_seen(struct top_screen *screen)
{
	__u32 tgids[MAX_PROCESSES];
	size_t count = stat_processes(&screen->snapshot, tgids, MAX_PROCESSES), kept = 0;

	for (size_t i = 0; i < screen->seen_count; i++) {
		if (!kill((pid_t)screen->seen[i], 0) || errno != ESRCH)
			screen->seen[kept++] = screen->seen[i];
	}
	screen->seen_count = kept;
	for (size_t i = 0; i < count; i++)
		top_screen_watch(screen, tgids[i]);
}

/* One mark: "STUCK 12.4 s  4242/4242  demo.sort @ workloads.c:443". */
static void mark(FILE *out, unsigned int *marks, uint64_t age_ns, pid_t pid, uint32_t tid,
		 const char *what, const char *where)
{
	char age[32], name[VIEW_TEXT_MAX], site[VIEW_TEXT_MAX];

	if ((*marks)++ >= STUCK_LINES)
		return;
	fprintf(out, "STUCK %8s  %d/%u  %s%s%s\n", dump_age_text(age_ns, age, sizeof(age)), pid,
		tid, printable_text(what, name, sizeof(name)), where[0] ? " @ " : "",
		printable_text(where, site, sizeof(site)));
}

/* What has been open longer than --stuck in the processes shown, read from their views. */
static void print_stuck(FILE *out, const struct top_screen *screen, __u32 only_tgid)
{
	uint64_t limit_ns = (uint64_t)screen->stuck_ms * 1000000u, age;
	unsigned int marks = 0;

	if (!screen->stuck_ms)
		return;
	for (size_t p = 0; p < screen->seen_count; p++) {
		struct process_view view;

		if ((only_tgid && screen->seen[p] != only_tgid) ||
		    view_read_process((pid_t)screen->seen[p], &view, 0))
			continue;
		for (size_t t = 0; t < view.thread_count; t++) {
			const struct view_thread *thread = &view.threads[t];

			for (size_t i = 0; i < thread->op_count; i++) {
				if (view_age(&view, thread->ops[i].begin_ns, &age) &&
				    age > limit_ns)
					mark(out, &marks, age, view.pid, thread->tid,
					     thread->ops[i].name, thread->ops[i].callsite);
			}
			for (size_t i = 0; i < thread->point_count; i++) {
				const struct view_point *point = &thread->points[i];
				char what[VIEW_TEXT_MAX + 32];

				snprintf(what, sizeof(what), "task %s point %u",
					 point->name[0] ? point->name : "?", point->point);
				if (view_age(&view, point->begin_ns, &age) && age > limit_ns)
					mark(out, &marks, age, view.pid, thread->tid, what, "");
			}
		}
		process_view_free(&view);
	}
	if (marks > STUCK_LINES)
		fprintf(out, "STUCK ... and %u more (optrace dump -p PID shows them all)\n",
			marks - STUCK_LINES);
	if (marks)
		fputc('\n', out);
}

static void print_batch(struct top_screen *screen)
{
	char what[64];

	describe(screen, what, sizeof(what));
	if (screen->frames)
		putchar('\n');
	printf("optrace top - %s - %s\n", screen->taken, what);
	screen->print.no_legends = true; /* a screen after another: the rows alone */
	print_stuck(stdout, screen, screen->print.only_tgid);
	stat_print(stdout, &screen->snapshot, &screen->print);
	fflush(stdout);
}

/* line, cut to width characters, then the rest of the row cleared. */
static void put_line(const char *line, size_t length, int width)
{
	char copy[4096];

	if (length >= sizeof(copy))
		length = sizeof(copy) - 1;
	memcpy(copy, line, length);
	copy[length] = '\0';
	copy[text_prefix_bytes(copy, width)] = '\0';
	printf("%s" CLEAR_LINE "\n", copy);
}

static void draw(struct top_screen *screen)
{
	struct winsize size = { .ws_row = 24, .ws_col = 80 };
	struct stat_print_options print = screen->print;
	__u32 tgids[MAX_PROCESSES];
	char *text = NULL, what[64], header[256], keys[256], process[32] = "all";
	size_t length = 0, count = 0, processes, *starts = NULL;
	long body, last;
	FILE *report;

	ioctl(STDOUT_FILENO, TIOCGWINSZ, &size);
	if (size.ws_row < FRAME_ROWS + 3)
		size.ws_row = FRAME_ROWS + 3;
	processes = stat_processes(&screen->snapshot, tgids, MAX_PROCESSES);
	if (screen->process > processes)
		screen->process = 0;
	if (screen->process) {
		print.only_tgid = tgids[screen->process - 1];
		snprintf(process, sizeof(process), "%u", print.only_tgid);
	}
	print.width = size.ws_col;
	print.no_legends = true;
	report = open_memstream(&text, &length);
	if (!report)
		return;
	print_stuck(report, screen, print.only_tgid);
	stat_print(report, &screen->snapshot, &print);
	fclose(report);
	/* Where each line starts. */
	for (size_t i = 0; i < length; i++) {
		if (i == 0 || text[i - 1] == '\n') {
			size_t *grown = realloc(starts, (count + 1) * sizeof(*starts));

			if (!grown)
				break;
			starts = grown;
			starts[count++] = i;
		}
	}
	body = size.ws_row - FRAME_ROWS;
	last = (long)count > body ? (long)count - body : 0;
	screen->scroll = screen->scroll < 0 ? 0 : screen->scroll > last ? last : screen->scroll;
	describe(screen, what, sizeof(what));
	snprintf(header, sizeof(header), "optrace top - %s - %s - sort: %s - process: %s",
		 screen->taken, what, stat_sort_name(print.sort), process);
	fputs(HOME, stdout);
	put_line(header, strlen(header), size.ws_col);
	for (long row = 0; row < body; row++) {
		size_t i = (size_t)(screen->scroll + row);

		if (i < count)
			put_line(text + starts[i], strcspn(text + starts[i], "\n"), size.ws_col);
		else
			printf(CLEAR_LINE "\n");
	}
	snprintf(keys, sizeof(keys),
		 " lines %ld-%ld of %zu  \u2191\u2193 PgUp PgDn scroll  s sort  p process"
		 "  h helpers  q quit",
		 count ? screen->scroll + 1 : 0,
		 screen->scroll + body < (long)count ? screen->scroll + body : (long)count, count);
	keys[text_prefix_bytes(keys, size.ws_col)] = '\0';
	printf(REVERSE "%s" CLEAR_LINE PLAIN CLEAR_BELOW, keys);
	fflush(stdout);
	free(starts);
	free(text);
}

void top_screen_show(struct top_screen *screen, struct stat_snapshot *snapshot)
{
	time_t now = time(NULL);

	if (screen->has_snapshot)
		stat_snapshot_free(&screen->snapshot);
	screen->snapshot = *snapshot;
	screen->has_snapshot = true;
	note_seen(screen);
	memset(snapshot, 0, sizeof(*snapshot));
	strftime(screen->taken, sizeof(screen->taken), "%H:%M:%S", localtime(&now));
	if (screen->batch)
		print_batch(screen);
	else
		draw(screen);
	screen->frames++;
}

/* The page: the rows between the header and the key line. */
static long page(void)
{
	struct winsize size = { .ws_row = 24 };

	ioctl(STDOUT_FILENO, TIOCGWINSZ, &size);
	return size.ws_row > FRAME_ROWS + 3 ? size.ws_row - FRAME_ROWS : 3;
}

/* The key an escape sequence stands for (ESC [ A: up, as k), or 0. */
static unsigned char sequence_key(const unsigned char *keys, size_t count, size_t *at)
{
	static const char codes[] = "AB56H1F4", letters[] = "kjb ggGG";
	const char *code;

	if (*at + 2 >= count || keys[*at + 1] != '[')
		return 0;
	code = strchr(codes, keys[*at + 2]);
	*at += 2;
	if (keys[*at] >= '0' && keys[*at] <= '9' && *at + 1 < count && keys[*at + 1] == '~')
		(*at)++;
	return code && *code ? (unsigned char)letters[code - codes] : 0;
}

/* One key (or escape sequence) at keys[*at]; false for q. */
static bool act(struct top_screen *screen, const unsigned char *keys, size_t count, size_t *at)
{
	unsigned char key = keys[*at];

	if (key == 033)
		key = sequence_key(keys, count, at);
	switch (key) {
	case 'q':
	case 'Q':
		return false;
	case 'k':
		screen->scroll--;
		break;
	case 'j':
		screen->scroll++;
		break;
	case 'b':
		screen->scroll -= page();
		break;
	case ' ':
		screen->scroll += page();
		break;
	case 'g':
		screen->scroll = 0;
		break;
	case 'G':
		screen->scroll = 1L << 40; /* drawn at the last page */
		break;
	case 's':
		screen->print.sort = (screen->print.sort + 1) % STAT_SORT__COUNT;
		screen->scroll = 0;
		break;
	case 'p':
		screen->process++; /* past the last: all again (draw) */
		screen->scroll = 0;
		break;
	case 'h':
		screen->print.show_helpers = !screen->print.show_helpers;
		break;
	default:
		break;
	}
	return true;
}

bool top_screen_keys(struct top_screen *screen)
{
	struct pollfd input = { .fd = STDIN_FILENO, .events = POLLIN };
	unsigned char keys[64];
	bool typed = false;
	ssize_t count;

	if (!screen->raw_terminal)
		return true;
	while (poll(&input, 1, 0) == 1 && (count = read(STDIN_FILENO, keys, sizeof(keys))) > 0) {
		for (size_t at = 0; at < (size_t)count; at++) {
			if (!act(screen, keys, (size_t)count, &at))
				return false;
		}
		typed = true;
	}
	if (typed && screen->has_snapshot)
		draw(screen);
	return true;
}
