/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Tables and prose that fit a terminal: columns as wide as what they hold,
 * dropped by priority when the width is short (a note says which), the name
 * column cut in the middle (the full names listed once below), free text at
 * the end of a row on a line of its own when it does not fit, legends
 * wrapped. Cells must be printable already (output/json.h's
 * printable_text): widths count characters.
 */
#ifndef OPTRACE_OUTPUT_TEXT_TABLE_H
#define OPTRACE_OUTPUT_TEXT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* No limit: --wide. */
#define TEXT_WIDTH_UNLIMITED 0

/*
 * Columns dropped at this level or above go before a row's free text leaves
 * its line: what they hold, the free text says too.
 */
#define TEXT_DROP_FOR_TRAILING 8

struct text_column {
	const char *header;
	/* 0: always kept; else dropped when too wide, the largest first */
	unsigned char drop;
	bool left;     /* text, aligned left; else a number, aligned right */
	bool shrinks;  /* the name: cut in the middle to fit */
	bool trailing; /* free text ending the row (last column) */
};

struct text_table {
	const struct text_column *columns;
	size_t column_count;
	char **cells; /* row after row, column_count each; owned */
	size_t row_count;
	size_t row_capacity;
	int error; /* -ENOMEM once a row could not be added */
};

void text_table_init(struct text_table *table, const struct text_column *columns, size_t count);

/* A row: column_count cells, copied (NULL: empty). */
void text_table_add(struct text_table *table, const char *const cells[]);

/*
 * Header, legend (wrapped, "# " before each line; NULL: none), rows, then
 * what did not fit: the columns left out, the names cut. width 0: no limit.
 */
void text_table_print(FILE *out, const struct text_table *table, int width, const char *legend);

void text_table_free(struct text_table *table);

/* Characters in s (UTF-8): what a terminal shows of it, one column each. */
int text_width(const char *s);

/* How many bytes of s its first width characters take. */
size_t text_prefix_bytes(const char *s, int width);

/*
 * text wrapped at width between words, prefix before the first line and
 * continuation (as wide) before every other; a word longer than a line
 * stays whole. width 0: one line.
 */
void text_wrap(FILE *out, const char *prefix, const char *continuation, const char *text,
	       int width);

/* printf, wrapped at width as text_wrap(), two spaces before every line after the first. */
void text_printf(FILE *out, int width, const char *format, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * The width of the output: COLUMNS, else the terminal's if out is one, else
 * 80; wide: no limit.
 */
int text_output_width(FILE *out, bool wide);

#endif /* OPTRACE_OUTPUT_TEXT_TABLE_H */
