/*
 * html.c — the page of the HTML report around one JSON document (html.h).
 *
 * The template is compiled in (embed.sh); this file only decides how the
 * data goes between its two halves.  Both encodings stream: nothing of the
 * size of the profile is allocated (a million-node tree is hundreds of MB
 * of JSON).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include "output/html.h"

#include <inttypes.h>
#include <stdlib.h>

#include <sys/mman.h>
#include <sys/types.h>

#include "analysis/cct.h"
#include "output/export.h"
#include "output/output.h"
#include "util/util.h"

/* The JSON text with '<', '>' and '&' escaped; the runs between them go
 * out unchanged in one fwrite each. */
static void write_escaped(FILE *out, const char *json, size_t len)
{
	size_t start = 0;
	for (size_t i = 0; i < len; i++) {
		const char *esc;
		switch (json[i]) {
		case '<': esc = "\\u003c"; break;
		case '>': esc = "\\u003e"; break;
		case '&': esc = "\\u0026"; break;
		default: continue;
		}
		fwrite(json + start, 1, i - start, out);
		fputs(esc, out);
		start = i + 1;
	}
	fwrite(json + start, 1, len - start, out);
}

/* Base64 (RFC 4648) of a byte stream fed in pieces, in lines of 76. */
struct b64 {
	FILE *out;
	unsigned char carry[3];
	unsigned ncarry, col;
};

static void b64_group(struct b64 *b, const unsigned char *p, unsigned n)
{
	static const char abc[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	unsigned long v = (unsigned long)p[0] << 16 |
			  (unsigned long)(n > 1 ? p[1] : 0) << 8 | (n > 2 ? p[2] : 0);
	char q[4] = { abc[v >> 18 & 63], abc[v >> 12 & 63],
		      n > 1 ? abc[v >> 6 & 63] : '=', n > 2 ? abc[v & 63] : '=' };
	fwrite(q, 1, 4, b->out);
	b->col += 4;
	if (b->col >= 76) {
		fputc('\n', b->out);
		b->col = 0;
	}
}

static void b64_feed(struct b64 *b, const unsigned char *p, size_t n)
{
	while (n && b->ncarry) {
		b->carry[b->ncarry++] = *p++;
		n--;
		if (b->ncarry == 3) {
			b64_group(b, b->carry, 3);
			b->ncarry = 0;
		}
	}
	for (; n >= 3; p += 3, n -= 3)
		b64_group(b, p, 3);
	memcpy(b->carry + b->ncarry, p, n);
	b->ncarry += (unsigned)n;
}

static void b64_end(struct b64 *b)
{
	if (b->ncarry)
		b64_group(b, b->carry, b->ncarry);
	b->ncarry = 0;
}

/* The pieces gzip-compressed (level) and base64-encoded, in lines of 76. */
static int write_gzip_base64(FILE *out, const struct html_piece *pieces, size_t npieces, int level)
{
	z_stream z = { 0 };
	unsigned char buf[1 << 16];
	struct b64 b = { .out = out };
	const unsigned char *next = NULL;
	size_t len = 0, k = 0;
	/* windowBits 15 + 16: a gzip wrapper, what DecompressionStream('gzip') reads. */
	if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	int flush, zr = Z_OK;
	do {
		while (!len && k < npieces) {
			next = pieces[k].p;
			len = pieces[k++].len;
		}
		/* avail_in is 32 bits: feed big documents in slices. */
		if (z.avail_in == 0 && len) {
			size_t take = len > (1u << 30) ? (1u << 30) : len;
			z.next_in = (unsigned char *)(uintptr_t)next;
			z.avail_in = (uInt)take;
			next += take;
			len -= take;
		}
		while (!len && k < npieces && !pieces[k].len)
			k++;
		flush = len || k < npieces ? Z_NO_FLUSH : Z_FINISH;
		do {
			z.next_out = buf;
			z.avail_out = sizeof(buf);
			zr = deflate(&z, flush);
			if (zr == Z_STREAM_ERROR)
				break;
			b64_feed(&b, buf, sizeof(buf) - z.avail_out);
		} while (z.avail_out == 0);
	} while (zr != Z_STREAM_END && zr != Z_STREAM_ERROR);
	deflateEnd(&z);
	b64_end(&b);
	return zr == Z_STREAM_END ? 0 : -EIO;
}

int html_write(FILE *out, const char *json, size_t len, enum html_embed how)
{
	return html_write_tl(out, json, len, how, NULL);
}

int html_write_tl(FILE *out, const char *json, size_t len, enum html_embed how,
		  const struct html_tl *tl)
{
	if (!json && len)
		return -EINVAL;
	if (how == HTML_EMBED_AUTO)
		how = len <= HTML_PLAIN_MAX ? HTML_EMBED_JSON : HTML_EMBED_GZIP;
	fputs(html_page_head, out);
	int err = 0;
	if (how == HTML_EMBED_GZIP) {
		fputs("<script id=\"sc-data\" type=\"application/json\" data-encoding=\"gzip-base64\">\n", out);
		struct html_piece doc = { json, len };

		err = write_gzip_base64(out, &doc, 1, Z_BEST_SPEED);
	} else {
		fputs("<script id=\"sc-data\" type=\"application/json\" data-encoding=\"json\">", out);
		write_escaped(out, json, len);
	}
	fputs("</script>\n", out);
	if (tl && !err) {
		/* Level 6: a tenth smaller than level 1 on the columns, whose
		 * deltas repeat, for twice the time. */
		struct html_piece cols[HTML_TL_NCOLS];

		fputs("<script id=\"sc-timeline\" type=\"application/octet-stream\" "
		      "data-encoding=\"gzip-base64\">\n", out);
		err = write_gzip_base64(out, cols, html_tl_columns(tl, cols, HTML_TL_NCOLS), 6);
		fputs("</script>\n", out);
	}
	fputs(html_page_tail, out);
	int werr = out_finish(out);
	return err ? err : werr;
}

/* ---- export --format html ----------------------------------------------- */

/*
 * The viewer's document (docs/html-report.md): the flat function report
 * ("session", "rows"), the threads and processes, and the calling-context
 * trees of the threads in the compact form, each node {"row": INDEX, own
 * values, "children": [...]}, where INDEX is its function's row, the roots
 * of thread T carrying "thread": T.  The viewer merges the threads it is
 * asked for (all of them, a process's, one) and adds up inclusive values
 * and percentages itself; for instrumentation "thread_stats" gives the
 * per-call statistics of each function in each thread, which a tree node
 * does not carry.  Written into memory, then embedded by html_write().
 */
struct row_key {
	const char *function, *module;
	size_t row;
};

static int cmp_row_key(const void *a, const void *b)
{
	const struct row_key *x = a, *y = b;

	if (x->function != y->function)
		return x->function < y->function ? -1 : 1;
	if (x->module != y->module)
		return x->module < y->module ? -1 : 1;
	return 0;
}

/* The row of function func, or 0 (every function of the tree has one). */
static size_t func_row(const struct an_cct *c, uint32_t func, const struct row_key *keys, size_t nkeys)
{
	struct row_key want = { an_cct_func_name(c, func), an_cct_func_module(c, func), 0 };
	const struct row_key *k = bsearch(&want, keys, nkeys, sizeof(*keys), cmp_row_key);

	return k ? k->row : 0;
}

static void node_json(FILE *f, const struct an_cct *c, const struct an_cct_node *nd, size_t row,
		      bool shares)
{
	fprintf(f, "{\"row\": %zu", row);
	if (an_cct_node(c, nd->parent)->parent == AN_CCT_NONE)
		fprintf(f, ", \"thread\": %" PRIu32, nd->group);
	if (an_cct_method(c) == SC_METHOD_SAMPLE)
		fprintf(f, ", \"exclusive_samples\": %" PRIu64, nd->excl);
	else
		fprintf(f, ", \"calls\": %" PRIu64 ", \"elapsed_exclusive_ns\": %" PRIu64
			", \"application_exclusive_ns\": %" PRIu64, nd->calls, nd->excl, nd->app_excl);
	if (shares)      /* SPEC section 14: the node's samples */
		fprintf(f, ", \"sampled_exclusive_samples\": %" PRIu64, nd->smp_excl);
	fputs(", \"children\": [", f);
}

static void json_string_or_null(FILE *f, const char *s)
{
	if (s)
		out_json_string(f, s);
	else
		fputs("null", f);
}

/*
 * "threads": one per top of the by-thread tree, in its order (the index
 * the roots' "thread" names), each with the index of its process in
 * "processes" (one per process image, in the order first met).
 */
static void threads_json(FILE *f, const struct an_cct *c, size_t ntops)
{
	uint32_t *procs = xcalloc(ntops ? ntops : 1, sizeof(*procs));
	size_t nprocs = 0;

	fputs(",\n  \"threads\": [", f);
	for (uint32_t g = 0; g < ntops; g++) {
		uint32_t proc_id, tid, k;

		an_cct_group(c, g, &proc_id, &tid);
		for (k = 0; k < nprocs; k++) {
			uint32_t pid0, tid0;

			an_cct_group(c, procs[k], &pid0, &tid0);
			if (pid0 == proc_id)
				break;
		}
		if (k == nprocs)
			procs[nprocs++] = g;
		fprintf(f, "%s\n    {\"pid\": %" PRIu32 ", \"tid\": %" PRIu32 ", \"name\": ",
			g ? "," : "", an_cct_group_pid(c, g), tid);
		json_string_or_null(f, an_cct_group_thread_name(c, g));
		fprintf(f, ", \"process\": %" PRIu32 "}", k);
	}
	fputs(ntops ? "\n  ],\n  \"processes\": [" : "],\n  \"processes\": [", f);
	for (size_t k = 0; k < nprocs; k++) {
		fprintf(f, "%s\n    {\"pid\": %" PRIu32 ", \"executable\": ", k ? "," : "",
			an_cct_group_pid(c, procs[k]));
		json_string_or_null(f, an_cct_group_exe(c, procs[k]));
		fputc('}', f);
	}
	fputs(nprocs ? "\n  ]" : "]", f);
	free(procs);
}

/*
 * "thread_stats": [[thread, row, completed, incl_min, incl_max, incl_sum,
 * excl_min, excl_max, excl_sum], ...] for every function with a call that
 * returned in that thread: the per-call statistics over its nodes there,
 * as the flat report folds them (instrumentation only).
 */
static void thread_stats_json(FILE *f, const struct an_cct *c, const uint32_t *tops, size_t ntops,
			      const struct row_key *keys, size_t nkeys)
{
	size_t nfuncs = an_cct_nfuncs(c), ntouched, nout = 0;
	struct an_fold *acc = xcalloc(nfuncs ? nfuncs : 1, sizeof(*acc));
	uint32_t *touched = xcalloc(nfuncs ? nfuncs : 1, sizeof(*touched));

	fputs(",\n  \"thread_stats\": [", f);
	for (size_t t = 0; t < ntops; t++) {
		uint32_t left;

		ntouched = 0;
		for (uint32_t id = an_cct_node(c, tops[t])->first_child; id != AN_CCT_NONE;
		     id = an_cct_next(c, id, &left)) {
			const struct an_cct_node *nd = an_cct_node(c, id);
			struct an_fold *a = &acc[nd->func];

			if (!nd->call.completed)
				continue;
			if (!a->completed)
				touched[ntouched++] = nd->func;
			an_fold_call_stats(a, nd);
		}
		for (size_t k = 0; k < ntouched; k++) {
			struct an_fold *a = &acc[touched[k]];

			fprintf(f, "%s\n    [%zu, %zu, %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64
				", %" PRIu64 ", %" PRIu64 ", %" PRIu64 "]", nout++ ? "," : "", t,
				func_row(c, touched[k], keys, nkeys), a->completed, a->incl_min,
				a->incl_max, a->incl_sum, a->excl_min, a->excl_max, a->excl_sum);
			memset(a, 0, sizeof(*a));
		}
	}
	fputs(nout ? "\n  ]" : "]", f);
	free(acc);
	free(touched);
}

static int write_html_export(FILE *f, struct an_profile *p, const struct exp_options *o,
			     char *err, size_t errlen)
{
	const struct an_cct *c = an_profile_cct(p, AN_CCT_BY_THREAD, o->app_time);
	struct an_report_options ro = { .by = AN_BY_FUNCTION, .app_time = o->app_time };
	struct an_report *flat;
	struct row_key *keys;
	const uint32_t *tops;
	size_t ntops = an_cct_tops(c, &tops), len = 0;
	char *doc = NULL;
	FILE *m = NULL;
	off_t off;
	int ret;

	if (an_report_build(p, &ro, &flat, err, errlen) < 0)
		return -EINVAL;
	keys = xcalloc(flat->nrows ? flat->nrows : 1, sizeof(*keys));
	for (size_t i = 0; i < flat->nrows; i++) {
		keys[i].function = flat->rows[i].v[AN_COL_FUNCTION].s;
		keys[i].module = flat->rows[i].v[AN_COL_MODULE].s;
		keys[i].row = i;
	}
	qsort(keys, flat->nrows, sizeof(*keys), cmp_row_key);
	/* An unlinked temporary file, mapped when complete: a memory stream
	 * would copy and clear its buffer at every growth (a quarter of the
	 * time of a million-node export). */
	m = tmpfile();
	if (!m) {
		snprintf(err, errlen, "no temporary file for the page's data: %s (set TMPDIR)",
			 strerror(errno));
		ret = -errno;
		goto out;
	}
	fputs("{\n", m);
	out_json_report_fields(m, flat);
	threads_json(m, c, ntops);
	if (an_cct_method(c) != SC_METHOD_SAMPLE)
		thread_stats_json(m, c, tops, ntops, keys, flat->nrows);
	fputs(",\n  \"tree\": [", m);
	/* depth first, iteratively: a million levels of recursion is fine */
	for (size_t t = 0, first = 1; t < ntops; t++) {
		uint32_t left;

		for (uint32_t id = an_cct_node(c, tops[t])->first_child; id != AN_CCT_NONE;) {
			const struct an_cct_node *nd = an_cct_node(c, id);

			if (!first)
				fputc(',', m);
			node_json(m, c, nd, func_row(c, nd->func, keys, flat->nrows),
				  flat->session.have_shares);
			id = an_cct_next(c, id, &left);
			first = !left;         /* going down: no comma before a first child */
			while (left--)
				fputs("]}", m);
		}
	}
	fputs("]\n}\n", m);
	if (fflush(m) != 0 || ferror(m) || (off = ftello(m)) <= 0) {
		snprintf(err, errlen, "the page's data could not be written: %s (set TMPDIR)",
			 strerror(errno));
		ret = -EIO;
		goto out;
	}
	len = (size_t)off;
	doc = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fileno(m), 0);
	if (doc == MAP_FAILED) {
		doc = NULL;
		snprintf(err, errlen, "cannot map the page's data: %s", strerror(errno));
		ret = -ENOMEM;
		goto out;
	}
	ret = html_write(f, doc, len, HTML_EMBED_AUTO);
	if (ret < 0)
		snprintf(err, errlen, "%s", strerror(-ret));
out:
	if (doc)
		munmap(doc, len);
	if (m)
		fclose(m);
	free(keys);
	an_report_free(flat);
	return ret;
}

const struct exp_format exp_html = {
	.name = "html",
	.default_out = "stackclock.html",
	.write = write_html_export,
};
