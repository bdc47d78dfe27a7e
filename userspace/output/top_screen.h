/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * optrace top's screen: the last snapshot drawn to the terminal's size,
 * scrolled with the arrow keys, PgUp/PgDn, space and b, Home/End (g/G), sorted
 * with s, one process or all with p, helpers with h, q to quit. In batch
 * mode (-b, or when stdout is no terminal) each snapshot is plain text, one
 * after another, as top -b prints. Above the report, what has been open
 * longer than stuck_ms in each process (its thread views, as optrace dump
 * reads them) is marked STUCK.
 */
#ifndef OPTRACE_OUTPUT_TOP_SCREEN_H
#define OPTRACE_OUTPUT_TOP_SCREEN_H

#include <stdbool.h>
#include <termios.h>

#include "model/aggregates.h"
#include "output/stat_print.h"

struct top_screen {
	struct stat_print_options print; /* as the command line asked */
	long interval_ms;
	bool cumulative;
	bool batch;
	long stuck_ms;	/* operations and points open longer are marked; 0: none */
	bool stuck_set; /* --stuck given */
	/* the screen's state */
	struct stat_snapshot snapshot; /* the last one, drawn again on a key */
	bool has_snapshot;
	char taken[16]; /* when, HH:MM:SS */
	long scroll;	/* the first line of the report shown */
	size_t process; /* 0: all; else the process at this place, from 1 */
	struct termios terminal;
	bool started; /* top_screen_start() ran: stop has a screen to restore */
	bool raw_terminal;
	unsigned long frames;
	/* every process seen traced: one stuck shows no rows in its interval */
	__u32 seen[1024];
	size_t seen_count;
};

/* Batch when asked or when stdout is no terminal; else the terminal in raw mode. */
void top_screen_start(struct top_screen *screen);

/* Process tgid is looked at for --stuck marks, whether or not it has rows. */
void top_screen_watch(struct top_screen *screen, __u32 tgid);

/* Draws snapshot, which the screen owns from here. */
void top_screen_show(struct top_screen *screen, struct stat_snapshot *snapshot);

/* The keys typed since the last look, acted on; false when one was q. */
bool top_screen_keys(struct top_screen *screen);

/* The terminal as it was; the last snapshot freed. */
void top_screen_stop(struct top_screen *screen);

#endif /* OPTRACE_OUTPUT_TOP_SCREEN_H */
