/*
 * The table of output formats, and helpers the writers share.
 */
#include "output/output.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* Every --format; a new format is one file and one line here. */
static const struct out_format *const out_formats[] = {
	&out_table,
	&out_csv,
	&out_json,
};

const struct out_format *out_format_find(const char *name)
{
	for (size_t i = 0; i < sizeof(out_formats) / sizeof(out_formats[0]); i++)
		if (!strcmp(out_formats[i]->name, name))
			return out_formats[i];
	return NULL;
}

const char *out_format_list(void)
{
	static char list[128];

	if (!list[0])
		for (size_t i = 0; i < sizeof(out_formats) / sizeof(out_formats[0]); i++) {
			if (i)
				strncat(list, "|", sizeof(list) - strlen(list) - 1);
			strncat(list, out_formats[i]->name, sizeof(list) - strlen(list) - 1);
		}
	return list;
}

unsigned out_terminal_width(int fd)
{
	struct winsize ws;
	unsigned long cols = 0;
	const char *env;

	if (!isatty(fd))
		return 0;
	if (!ioctl(fd, TIOCGWINSZ, &ws) && ws.ws_col)
		cols = ws.ws_col;
	else if ((env = getenv("COLUMNS")) && *env)
		cols = strtoul(env, NULL, 10);
	/* narrower than 80 cannot hold the value columns and a name */
	return cols < 80 ? 80 : cols > 1000 ? 1000 : (unsigned)cols;
}

size_t out_rows_shown(const struct an_report *r, const struct out_options *o)
{
	return o->top && o->top < r->nrows ? o->top : r->nrows;
}

void out_fmt_time(char *buf, size_t len, uint64_t ns)
{
	static const struct {
		double div;
		const char *unit;
	} units[] = { { 1e3, "us" }, { 1e6, "ms" }, { 1e9, "s" } };
	size_t u = 0;
	double v;

	if (ns < 1000) {
		snprintf(buf, len, "%" PRIu64 "ns", ns);
		return;
	}
	while (u + 1 < sizeof(units) / sizeof(units[0]) && ns >= units[u + 1].div)
		u++;
	v = (double)ns / units[u].div;
	/* 999.7us would print as "1000us": say 1.00ms instead */
	if (v >= 999.5 && u + 1 < sizeof(units) / sizeof(units[0])) {
		u++;
		v = (double)ns / units[u].div;
	}
	if (v < 9.995)
		snprintf(buf, len, "%.2f%s", v, units[u].unit);
	else if (v < 99.95)
		snprintf(buf, len, "%.1f%s", v, units[u].unit);
	else
		snprintf(buf, len, "%.0f%s", v, units[u].unit);
}

/* Length of the valid UTF-8 sequence at s, or 0 if it is not one. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

void out_json_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (*p) {
		size_t n;

		switch (*p) {
		case '"':  fputs("\\\"", f); p++; continue;
		case '\\': fputs("\\\\", f); p++; continue;
		case '\n': fputs("\\n", f); p++; continue;
		case '\r': fputs("\\r", f); p++; continue;
		case '\t': fputs("\\t", f); p++; continue;
		case '\b': fputs("\\b", f); p++; continue;
		case '\f': fputs("\\f", f); p++; continue;
		default:
			break;
		}
		if (*p < 0x20) {
			fprintf(f, "\\u%04x", *p);
			p++;
			continue;
		}
		n = utf8_len(p);
		if (!n) {
			fputs("\\ufffd", f);
			p++;
			continue;
		}
		fwrite(p, 1, n, f);
		p += n;
	}
	fputc('"', f);
}

int64_t out_diff_int(const struct an_diff_row *row, enum an_col c, enum an_diff_part part)
{
	uint64_t b = row->in_base && row->base.v[c].present ? row->base.v[c].u : 0;
	uint64_t n = row->in_new && row->new.v[c].present ? row->new.v[c].u : 0;

	return part == AN_DIFF_BASE ? (int64_t)b : part == AN_DIFF_NEW ? (int64_t)n :
		(int64_t)(n - b);
}

const char *out_diff_status(const struct an_diff_row *row)
{
	return !row->in_new ? "vanished" : !row->in_base ? "new" : "both";
}

int out_finish(FILE *f)
{
	if (fflush(f) || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}

const char *out_base_name(const char *path, const char *fallback)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s && s[1] ? s + 1 : path ? path : fallback;
}
