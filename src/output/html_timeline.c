/*
 * html_timeline.c — the HTML report's timeline, packed for the page
 * (html.h, docs/html-report.md "Timeline").
 *
 * A timeline of ten million calls must fit in a page a browser opens, so
 * the page does not get it as JSON (30-60 bytes a call) but as eleven
 * columns of unsigned LEB128 varints (scdata.h's coding), one value per
 * item per column: a call's start as the delta from the previous call's
 * start in its lane, its duration, its function, its depth and flags.
 * Columns of like values compress well; html_write_tl() deflates them
 * together and embeds them base64-encoded.  What the columns mean (their
 * order, the lanes, the function table) is the "timeline" member of the
 * page's JSON document, written by html_tl_finish().
 *
 * Knows nothing of the recording: the caller (html.c's export, or a test)
 * adds lanes and items in order; which items to keep is its choice.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "format/varint.h"
#include "output/html.h"
#include "output/output.h"
#include "util/util.h"

/* The columns, in the order the page reads them (html.h). */
enum {
	COL_CALL_START, COL_CALL_DUR, COL_CALL_FUNC, COL_CALL_DEPTH,
	COL_OS_START, COL_OS_DUR, COL_OS_WHAT, COL_OS_DEPTH,
	COL_SAMPLE_TIME, COL_SAMPLE_FUNC, COL_SAMPLE_DEPTH,
	NCOLS
};

struct column {
	uint8_t *p;
	size_t len, cap;
};

struct lane {
	uint32_t pid, tid;
	char *name;
	uint64_t calls, os, samples;
};

struct html_tl {
	struct column col[NCOLS];
	struct lane *lanes;
	size_t nlanes, cap_lanes;
	/* per lane: the previous start of each kind (deltas) */
	uint64_t prev_call, prev_os, prev_sample;
	/* caller's function id -> index in the page's table + 1 (0: not yet) */
	uint32_t *func_ix;
	size_t nfunc_ix;
	uint32_t *funcs;          /* the table: caller's ids, in order first met */
	size_t nfuncs, cap_funcs;
	uint8_t sys_used[HTML_TL_MAX_SYSNO / 8];   /* system calls seen, by number */
};

static void put(struct column *c, uint64_t v)
{
	if (c->cap - c->len < SC_VARINT_MAX) {
		c->cap = c->cap ? c->cap * 2 : 1 << 16;
		c->p = xrealloc(c->p, c->cap);
	}
	c->len = (size_t)(sc_varint_put(c->p + c->len, v) - c->p);
}

static uint32_t func_index(struct html_tl *t, uint32_t func)
{
	if (func >= t->nfunc_ix) {
		size_t n = t->nfunc_ix ? t->nfunc_ix : 1024;

		while (n <= func)
			n *= 2;
		t->func_ix = xrealloc(t->func_ix, n * sizeof(*t->func_ix));
		memset(t->func_ix + t->nfunc_ix, 0, (n - t->nfunc_ix) * sizeof(*t->func_ix));
		t->nfunc_ix = n;
	}
	if (!t->func_ix[func]) {
		if (t->nfuncs == t->cap_funcs) {
			t->cap_funcs = t->cap_funcs ? t->cap_funcs * 2 : 256;
			t->funcs = xrealloc(t->funcs, t->cap_funcs * sizeof(*t->funcs));
		}
		t->funcs[t->nfuncs++] = func;
		t->func_ix[func] = (uint32_t)t->nfuncs;
	}
	return t->func_ix[func] - 1;
}

struct html_tl *html_tl_new(void)
{
	return xcalloc(1, sizeof(struct html_tl));
}

void html_tl_free(struct html_tl *t)
{
	if (!t)
		return;
	for (int i = 0; i < NCOLS; i++)
		free(t->col[i].p);
	for (size_t i = 0; i < t->nlanes; i++)
		free(t->lanes[i].name);
	free(t->lanes);
	free(t->func_ix);
	free(t->funcs);
	free(t);
}

void html_tl_lane(struct html_tl *t, uint32_t pid, uint32_t tid, const char *name)
{
	if (t->nlanes == t->cap_lanes) {
		t->cap_lanes = t->cap_lanes ? t->cap_lanes * 2 : 16;
		t->lanes = xrealloc(t->lanes, t->cap_lanes * sizeof(*t->lanes));
	}
	t->lanes[t->nlanes++] = (struct lane){ pid, tid, name ? xstrdup(name) : NULL, 0, 0, 0 };
	t->prev_call = t->prev_os = t->prev_sample = 0;
}

/* Items before the first lane, or out of order, are a caller's bug: the
 * page would draw them elsewhere.  Clamped to the previous start. */
static uint64_t delta(uint64_t *prev, uint64_t start)
{
	uint64_t d = start >= *prev ? start - *prev : 0;

	*prev += d;
	return d;
}

void html_tl_call(struct html_tl *t, uint64_t start_ns, uint64_t dur_ns, uint32_t func,
		  uint32_t depth, uint32_t flags)
{
	if (!t->nlanes)
		return;
	put(&t->col[COL_CALL_START], delta(&t->prev_call, start_ns));
	put(&t->col[COL_CALL_DUR], dur_ns);
	put(&t->col[COL_CALL_FUNC], func_index(t, func));
	put(&t->col[COL_CALL_DEPTH], (uint64_t)depth << HTML_TL_FLAG_BITS | (flags & HTML_TL_FLAGS));
	t->lanes[t->nlanes - 1].calls++;
}

void html_tl_os(struct html_tl *t, uint64_t start_ns, uint64_t dur_ns, uint32_t cat,
		int32_t sysno, uint32_t depth)
{
	if (!t->nlanes)
		return;
	put(&t->col[COL_OS_START], delta(&t->prev_os, start_ns));
	put(&t->col[COL_OS_DUR], dur_ns);
	put(&t->col[COL_OS_WHAT], (uint64_t)(cat & 3) | (uint64_t)(uint32_t)(sysno + 1) << 2);
	put(&t->col[COL_OS_DEPTH], depth);
	if (sysno >= 0 && sysno < HTML_TL_MAX_SYSNO)
		t->sys_used[sysno / 8] |= (uint8_t)(1u << (sysno % 8));
	t->lanes[t->nlanes - 1].os++;
}

void html_tl_sample(struct html_tl *t, uint64_t time_ns, uint32_t func, uint32_t depth)
{
	if (!t->nlanes)
		return;
	put(&t->col[COL_SAMPLE_TIME], delta(&t->prev_sample, time_ns));
	put(&t->col[COL_SAMPLE_FUNC], func_index(t, func));
	put(&t->col[COL_SAMPLE_DEPTH], depth);
	t->lanes[t->nlanes - 1].samples++;
}

static void json_str_or_null(FILE *f, const char *s)
{
	if (s)
		out_json_string(f, s);
	else
		fputs("null", f);
}

void html_tl_finish(struct html_tl *t, FILE *doc, const struct html_tl_info *info,
		    void (*names)(void *ctx, uint32_t func, const char **name, const char **module),
		    void *ctx)
{
	uint64_t calls = 0, os = 0, samples = 0;

	for (size_t i = 0; i < t->nlanes; i++) {
		calls += t->lanes[i].calls;
		os += t->lanes[i].os;
		samples += t->lanes[i].samples;
	}
	fprintf(doc, ",\n  \"timeline\": {\"encoding\": \"varint-columns-1\", \"method\": \"%s\", "
		"\"end_ns\": %" PRIu64 ",\n    \"calls\": %" PRIu64 ", \"calls_total\": %" PRIu64
		", \"calls_min_ns\": %" PRIu64 ", \"os\": %" PRIu64 ", \"os_total\": %" PRIu64
		", \"samples\": %" PRIu64 ", \"samples_total\": %" PRIu64 ", \"limit\": %" PRIu64
		", \"dropped\": %" PRIu64 ", \"filtered\": %" PRIu64 ", \"damaged\": %" PRIu64
		", \"sampled_calls\": %s,\n    \"columns\": [",
		info->sampling ? "sampling" : "instrumentation", info->end_ns, calls, info->calls_total,
		info->calls_min_ns, os, info->os_total, samples, info->samples_total, info->limit,
		info->dropped, info->filtered, info->damaged, info->sampled_calls ? "true" : "false");
	for (int i = 0; i < NCOLS; i++)
		fprintf(doc, "%s%zu", i ? ", " : "", t->col[i].len);
	fputs("],\n    \"lanes\": [", doc);
	for (size_t i = 0; i < t->nlanes; i++) {
		const struct lane *l = &t->lanes[i];

		fprintf(doc, "%s\n      {\"pid\": %" PRIu32 ", \"tid\": %" PRIu32 ", \"name\": ",
			i ? "," : "", l->pid, l->tid);
		json_str_or_null(doc, l->name);
		fprintf(doc, ", \"calls\": %" PRIu64 ", \"os\": %" PRIu64 ", \"samples\": %" PRIu64 "}",
			l->calls, l->os, l->samples);
	}
	fputs(t->nlanes ? "\n    ],\n    \"funcs\": [" : "],\n    \"funcs\": [", doc);
	for (size_t i = 0; i < t->nfuncs; i++) {
		const char *name = NULL, *module = NULL;

		names(ctx, t->funcs[i], &name, &module);
		fputs(i ? ",\n      [" : "\n      [", doc);
		json_str_or_null(doc, name ? name : "?");
		fputs(", ", doc);
		json_str_or_null(doc, module ? module : "");
		fputc(']', doc);
	}
	fputs(t->nfuncs ? "\n    ],\n    \"syscalls\": {" : "],\n    \"syscalls\": {", doc);
	for (int n = 0, k = 0; n < HTML_TL_MAX_SYSNO; n++) {
		const char *name = info->syscall_name ? info->syscall_name(n) : NULL;

		if (!(t->sys_used[n / 8] & (1u << (n % 8))) || !name)
			continue;
		fprintf(doc, "%s\"%d\": ", k++ ? ", " : "", n);
		out_json_string(doc, name);
	}
	fputs("}}", doc);
}

size_t html_tl_columns(const struct html_tl *t, struct html_piece *pieces, size_t max)
{
	size_t n = 0;

	for (int i = 0; i < NCOLS && n < max; i++)
		pieces[n++] = (struct html_piece){ t->col[i].p, t->col[i].len };
	return n;
}
