// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Tables and prose that fit a terminal (text_table.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "output/text_table.h"

/* A name is cut to this before any column is dropped, and to the second at most. */
#define NAME_SOFT_MIN 24
#define NAME_HARD_MIN 10
/* Where free text goes when it does not fit its row: a line of its own, indented. */
#define TRAILING_INDENT "    \u21b3 "
#define NARROWEST 40

static bool continuation_byte(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

int text_width(const char *s)
{
	int width = 0;

	for (; *s; s++)
		width += !continuation_byte((unsigned char)*s);
	return width;
}

size_t text_prefix_bytes(const char *s, int width)
{
	size_t i = 0;

	for (; s[i]; i++) {
		if (!continuation_byte((unsigned char)s[i]) && width-- == 0)
			break;
	}
	return i;
}

void text_table_init(struct text_table *table, const struct text_column *columns, size_t count)
{
	memset(table, 0, sizeof(*table));
	table->columns = columns;
	table->column_count = count;
}

void text_table_add(struct text_table *table, const char *const cells[])
{
	size_t n = table->column_count;

	if (table->error)
		return;
	if (table->row_count == table->row_capacity) {
		size_t capacity = table->row_capacity ? table->row_capacity * 2 : 32;
		char **grown = realloc(table->cells, capacity * n * sizeof(*grown));

		if (!grown) {
			table->error = -ENOMEM;
			return;
		}
		table->cells = grown;
		table->row_capacity = capacity;
	}
	for (size_t c = 0; c < n; c++) {
		char *copy = strdup(cells[c] ? cells[c] : "");

		if (!copy) {
			for (size_t k = 0; k < c; k++)
				free(table->cells[table->row_count * n + k]);
			table->error = -ENOMEM;
			return;
		}
		table->cells[table->row_count * n + c] = copy;
	}
	table->row_count++;
}

void text_table_free(struct text_table *table)
{
	for (size_t i = 0; i < table->row_count * table->column_count; i++)
		free(table->cells[i]);
	free(table->cells);
	memset(table, 0, sizeof(*table));
}

static const char *cell(const struct text_table *table, size_t row, size_t column)
{
	return table->cells[row * table->column_count + column];
}

/* What a table's columns come to at a width. */
struct layout {
	int width[64];
	bool kept[64];
	int name; /* the column that shrinks, or -1 */
	size_t columns;
	size_t trailing; /* its index, or columns when none */
};

static int fixed_width(const struct layout *l)
{
	int total = 0, kept = 0;

	for (size_t c = 0; c < l->columns; c++) {
		if (!l->kept[c] || c == l->trailing)
			continue;
		total += l->width[c];
		kept++;
	}
	return total + (kept ? kept - 1 : 0);
}

/* The name as wide as it may be, down to floor, for the rest to fit in width. */
static void fit_name(struct layout *l, const int *natural, int width, int floor)
{
	int over;

	if (l->name < 0)
		return;
	l->width[l->name] = natural[l->name];
	over = fixed_width(l) - width;
	if (over <= 0)
		return;
	floor = floor < natural[l->name] ? floor : natural[l->name];
	l->width[l->name] = natural[l->name] - over > floor ? natural[l->name] - over : floor;
}

/* Whether a row's free text would leave its line. */
static bool trailing_overflows(const struct text_table *table, const struct layout *l, int width)
{
	int used = fixed_width(l);

	for (size_t r = 0; r < table->row_count; r++) {
		if (used + 2 + text_width(cell(table, r, l->trailing)) > width)
			return true;
	}
	return false;
}

/* Leaves out the kept column of the largest drop, least at least (the rightmost of equals). */
static bool drop_one(const struct text_table *table, struct layout *l, unsigned char least)
{
	size_t drop = l->columns;

	for (size_t c = 0; c < l->columns; c++) {
		if (l->kept[c] && c != l->trailing && table->columns[c].drop >= least &&
		    (drop == l->columns || table->columns[c].drop >= table->columns[drop].drop))
			drop = c;
	}
	if (drop == l->columns)
		return false;
	l->kept[drop] = false;
	return true;
}

static void plan(const struct text_table *table, int width, struct layout *l)
{
	int natural[64];

	memset(l, 0, sizeof(*l));
	l->columns = table->column_count < 64 ? table->column_count : 64;
	l->name = -1;
	l->trailing = l->columns;
	for (size_t c = 0; c < l->columns; c++) {
		const struct text_column *column = &table->columns[c];

		natural[c] = text_width(column->header);
		for (size_t r = 0; r < table->row_count; r++) {
			int w = text_width(cell(table, r, c));

			natural[c] = w > natural[c] ? w : natural[c];
		}
		l->width[c] = natural[c];
		l->kept[c] = true;
		if (column->shrinks)
			l->name = (int)c;
		if (column->trailing && c + 1 == l->columns)
			l->trailing = c;
	}
	if (width == TEXT_WIDTH_UNLIMITED)
		return;
	fit_name(l, natural, width, NAME_SOFT_MIN);
	while (fixed_width(l) > width && drop_one(table, l, 1))
		fit_name(l, natural, width, NAME_SOFT_MIN);
	if (fixed_width(l) > width)
		fit_name(l, natural, width, NAME_HARD_MIN);
	while (l->trailing < l->columns && trailing_overflows(table, l, width) &&
	       drop_one(table, l, TEXT_DROP_FOR_TRAILING))
		;
}

/* text cut to width characters in the middle, its indent kept: "demo.lo…name". */
static void cut_middle(const char *text, int width, char *out, size_t size)
{
	size_t indent = strspn(text, " ");
	int room = width - (int)indent, head, tail, length = text_width(text + indent);
	size_t head_bytes, tail_at;

	if (room < 3) {
		snprintf(out, size, "%s", text);
		return;
	}
	head = (room - 1) / 2 + (room - 1) % 2;
	tail = room - 1 - head;
	head_bytes = text_prefix_bytes(text + indent, head);
	tail_at = text_prefix_bytes(text + indent, length - tail);
	snprintf(out, size, "%.*s%.*s\u2026%s", (int)indent, text, (int)head_bytes, text + indent,
		 text + indent + tail_at);
}

static void put_padded(FILE *out, const char *text, int width, bool left, bool last)
{
	int pad = width - text_width(text);

	if (!left)
		fprintf(out, "%*s", pad > 0 ? pad : 0, "");
	fputs(text, out);
	if (left && !last)
		fprintf(out, "%*s", pad > 0 ? pad : 0, "");
}

/* The last column kept before the trailing one: not padded. */
static size_t last_fixed(const struct layout *l)
{
	size_t last = l->columns;

	for (size_t c = 0; c < l->columns; c++) {
		if (l->kept[c] && c != l->trailing)
			last = c;
	}
	return last;
}

/* One line: the fixed columns, then the trailing text where it fits, else below. */
static void put_row(FILE *out, const struct text_table *table, const struct layout *l,
		    const char *const *cells, int width, bool header)
{
	size_t last = last_fixed(l);
	bool has_trailing = l->trailing < l->columns && cells[l->trailing][0];
	bool inline_trailing =
		has_trailing && (width == TEXT_WIDTH_UNLIMITED ||
				 fixed_width(l) + 2 + text_width(cells[l->trailing]) <= width);
	bool first = true;

	for (size_t c = 0; c < l->columns; c++) {
		char cut[1024];
		const char *text = cells[c];

		if (!l->kept[c] || c == l->trailing)
			continue;
		if ((int)c == l->name && text_width(text) > l->width[c]) {
			cut_middle(text, l->width[c], cut, sizeof(cut));
			text = cut;
		}
		if (!first)
			fputc(' ', out);
		first = false;
		put_padded(out, text, l->width[c],
			   table->columns[c].left || (header && table->columns[c].shrinks),
			   c == last && !inline_trailing);
	}
	if (inline_trailing)
		fprintf(out, "  %s", cells[l->trailing]);
	fputc('\n', out);
	/* a header that does not fit is left out: its rows say what they are */
	if (has_trailing && !inline_trailing && !header) {
		/* under the name, indented as it is (a helper's under the helper) */
		char indent[64], continuation[64];
		size_t spaces = l->name >= 0 ? strspn(cells[l->name], " ") : 0;

		if (spaces > 32)
			spaces = 32;
		snprintf(indent, sizeof(indent), "%*s" TRAILING_INDENT, (int)spaces, "");
		/* the arrow once per entry: a wrapped entry's lines under its text */
		snprintf(continuation, sizeof(continuation), "%*s", text_width(indent), "");
		text_wrap(out, indent, continuation, cells[l->trailing], width);
	}
}

/* "# SHORT is NAME", once per cut name. */
static void put_cut_names(FILE *out, const struct text_table *table, const struct layout *l)
{
	char **seen = NULL;
	size_t seen_count = 0;

	if (l->name < 0)
		return;
	for (size_t r = 0; r < table->row_count; r++) {
		const char *name = cell(table, r, (size_t)l->name), *shown;
		char cut[1024], **grown;
		bool known = false;

		if (text_width(name) <= l->width[l->name])
			continue;
		cut_middle(name, l->width[l->name], cut, sizeof(cut));
		shown = cut + strspn(cut, " ");
		for (size_t k = 0; k < seen_count && !known; k++)
			known = !strcmp(seen[k], shown);
		if (known)
			continue;
		fprintf(out, "# %s is %s\n", shown, name + strspn(name, " "));
		grown = realloc(seen, (seen_count + 1) * sizeof(*seen));
		if (!grown || !(grown[seen_count] = strdup(shown))) {
			seen = grown ? grown : seen;
			break; /* out of memory: a name may be said twice */
		}
		seen = grown;
		seen_count++;
	}
	for (size_t k = 0; k < seen_count; k++)
		free(seen[k]);
	free(seen);
}

void text_table_print(FILE *out, const struct text_table *table, int width, const char *legend)
{
	const char *headers[64];
	struct layout l;
	char note[512];
	size_t used = 0;

	if (width != TEXT_WIDTH_UNLIMITED && width < NARROWEST)
		width = NARROWEST;
	plan(table, width, &l);
	for (size_t c = 0; c < l.columns; c++)
		headers[c] = table->columns[c].header;
	put_row(out, table, &l, headers, width, true);
	if (legend)
		text_wrap(out, "# ", "# ", legend, width);
	for (size_t r = 0; r < table->row_count; r++)
		put_row(out, table, &l, (const char *const *)&table->cells[r * table->column_count],
			width, false);
	for (size_t c = 0; c < l.columns; c++) {
		if (!l.kept[c] && used < sizeof(note))
			used += (size_t)snprintf(note + used, sizeof(note) - used, "%s%s",
						 used ? ", " : "", table->columns[c].header);
	}
	if (used) {
		char line[640];

		snprintf(line, sizeof(line),
			 "not shown at %d columns: %s (--wide, or COLUMNS=N, shows them)", width,
			 note);
		text_wrap(out, "# ", "# ", line, width);
	}
	put_cut_names(out, table, &l);
}

/* The next line of text_wrap(): its continuation written, the column it leaves. */
static int new_line(FILE *out, const char *continuation)
{
	fprintf(out, "\n%s", continuation);
	return text_width(continuation);
}

void text_wrap(FILE *out, const char *prefix, const char *continuation, const char *text, int width)
{
	int column = text_width(prefix);
	bool line_empty = true;

	fputs(prefix, out);
	while (*text) {
		size_t length;
		int word = 0, gap;

		if (*text == ' ') {
			text++;
			continue;
		}
		if (*text == '\n') { /* a line of its own */
			column = new_line(out, continuation);
			line_empty = true;
			text++;
			continue;
		}
		length = strcspn(text, " \n");
		for (size_t i = 0; i < length; i++)
			word += !continuation_byte((unsigned char)text[i]);
		gap = line_empty ? 0 : 1;
		/*
		 * A word longer than a line (a path) and than what is left of
		 * this one: as much as fits, the rest below, cut after a '/'
		 * where one is in the second half of what fits.
		 */
		if (width != TEXT_WIDTH_UNLIMITED &&
		    word > width - text_width(continuation) - gap && word > width - column - gap &&
		    width - column - gap > 0) {
			size_t fits = text_prefix_bytes(text, width - column - gap);
			size_t half = text_prefix_bytes(text, (width - column - gap) / 2);

			if (gap)
				fputc(' ', out);
			length = fits;
			while (length > half && text[length - 1] != '/')
				length--;
			if (length <= half)
				length = fits;
			fwrite(text, 1, length, out);
			text += length;
			column = new_line(out, continuation);
			line_empty = true;
			continue;
		}
		if (gap && width != TEXT_WIDTH_UNLIMITED && column + 1 + word > width) {
			column = new_line(out, continuation);
			gap = 0;
		}
		if (gap) {
			fputc(' ', out);
			column++;
		}
		fwrite(text, 1, length, out);
		column += word;
		line_empty = false;
		text += length;
	}
	fputc('\n', out);
}

void text_printf(FILE *out, int width, const char *format, ...)
{
	char text[4096];
	va_list args;

	va_start(args, format);
	vsnprintf(text, sizeof(text), format, args);
	va_end(args);
	text_wrap(out, "", "  ", text, width);
}

int text_output_width(FILE *out, bool wide)
{
	const char *columns = getenv("COLUMNS");
	struct winsize size;
	char *end;
	long value;

	if (wide)
		return TEXT_WIDTH_UNLIMITED;
	if (columns && *columns) {
		value = strtol(columns, &end, 10);
		if (!*end && value > 0)
			return value < NARROWEST ? NARROWEST : value > 100000 ? 100000 : (int)value;
	}
	if (isatty(fileno(out)) && !ioctl(fileno(out), TIOCGWINSZ, &size) && size.ws_col > 0)
		return size.ws_col < NARROWEST ? NARROWEST : size.ws_col;
	return 80;
}
