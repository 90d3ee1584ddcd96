/*
 * output — writers that turn an analysis report (analysis.h) into text.
 *
 * Each format is one file holding one struct out_format (a name and its
 * callbacks) and one line in the out_formats[] table of output.c; adding
 * a format (pprof, callgrind, folded, chrome, html) is one new file plus
 * that line.  A writer reads the report's session summary, its typed
 * columns and rows (already sorted); the views of SPEC sections 6 and 7
 * (call tree, callers/callees, diff) have a callback each, which a format
 * may leave NULL (the command then says the format does not show it).
 *
 * Contract for writers: print only to the FILE given; show at most
 * o->top rows (0 = all); never change the report; return 0 or -errno (a
 * failed write, e.g. EPIPE, is the caller's to report).  CSV and JSON use
 * the column names of SPEC section 5 and full, unshortened names; the table
 * fits o->width columns and then may shorten names (o->width 0: no limit,
 * names whole).
 *
 * Not thread-safe (stdio).  Nothing is allocated that outlives a call.
 */
#ifndef SC_OUTPUT_H
#define SC_OUTPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/analysis.h"

struct out_options {
	size_t top;               /* rows to show; 0 = all */
	/*
	 * table: the line width (--width, or a terminal's); 0: no limit (the
	 * output is not a terminal): names are never cut, and the summary's
	 * prose wraps at 80 columns (wrapping loses nothing)
	 */
	unsigned width;
	/* table, flat report: the summary block before the full table, or NULL */
	const struct an_highlights *highlights;
};

struct out_format {
	const char *name;         /* --format NAME */
	int (*write)(FILE *f, const struct an_report *r, const struct out_options *o);
	/* o->top: roots shown (trees), rows per list (callers), rows (diff) */
	int (*write_tree)(FILE *f, const struct an_tree *t, const struct out_options *o);
	int (*write_callers)(FILE *f, const struct an_callers *c, const struct out_options *o);
	int (*write_diff)(FILE *f, const struct an_diff *d, const struct out_options *o);
};

extern const struct out_format out_table, out_csv, out_json;

/* The format called name, or NULL. */
const struct out_format *out_format_find(const char *name);
/* "table|csv|json", for usage and error messages. */
const char *out_format_list(void);

/* ---- helpers shared by the writers (output.c) --------------------------- */

/*
 * The table width for output on fd: a terminal's columns (TIOCGWINSZ, else
 * $COLUMNS; at least 80, at most 1000), or 0 (no limit) when fd is not a
 * terminal.
 */
unsigned out_terminal_width(int fd);

/* Rows a writer shows: min(nrows, top) or all. */
size_t out_rows_shown(const struct an_report *r, const struct out_options *o);

/* Human-scaled time, at most 6 characters: "999ns", "1.23us", "45.6ms", "123s". */
void out_fmt_time(char *buf, size_t len, uint64_t ns);

/* Write s as a JSON string literal (quotes, escapes, invalid UTF-8 as U+FFFD). */
void out_json_string(FILE *f, const char *s);
/* The file name of a path (after its last '/', unless that ends it), the
 * path itself without one, or fallback for NULL. */
const char *out_base_name(const char *path, const char *fallback);

/* A diff value as an integer (counts, times; delta may be negative). */
int64_t out_diff_int(const struct an_diff_row *row, enum an_col c, enum an_diff_part part);
/* "vanished", "new" or "both": which reports hold a diff row. */
const char *out_diff_status(const struct an_diff_row *row);

/*
 * The members "session": {...} and "rows": [...] of a report's JSON (all
 * rows), without the enclosing braces: the HTML export embeds them.
 */
void out_json_report_fields(FILE *f, const struct an_report *r);

/* Return 0, or -errno if f had a write error. */
int out_finish(FILE *f);

#endif
