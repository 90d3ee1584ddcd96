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
#include "analysis/timeline.h"
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
		/* Level 1: on 10 M synthetic calls, 36.9 MB in 1.7 s where
		 * level 6 gave 34.7 MB in 5.5 s. */
		struct html_piece cols[HTML_TL_NCOLS];

		fputs("<script id=\"sc-timeline\" type=\"application/octet-stream\" "
		      "data-encoding=\"gzip-base64\">\n", out);
		err = write_gzip_base64(out, cols, html_tl_columns(tl, cols, HTML_TL_NCOLS), Z_BEST_SPEED);
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

/*
 * A node as an array, [row, thread, values..., [children...]]: the order of
 * the values is the document's "node_values", thread is the root's index
 * in "threads" (-1 below the roots).  An object per node with its keys
 * spelled out was 137 bytes a node: g++ compiling a C++ file (5.3 M nodes)
 * made 730 MB of JSON, more than a browser's longest string (512 MB), and
 * the page could not load.
 */
static void node_json(FILE *f, const struct an_cct *c, const struct an_cct_node *nd, size_t row,
		      bool shares)
{
	bool root = an_cct_node(c, nd->parent)->parent == AN_CCT_NONE;

	fprintf(f, "[%zu,%" PRId64, row, root ? (int64_t)nd->group : -1);
	if (an_cct_method(c) == SC_METHOD_SAMPLE)
		fprintf(f, ",%" PRIu64, nd->excl);
	else
		fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, nd->calls, nd->excl, nd->app_excl);
	if (shares)      /* SPEC section 14: the node's samples */
		fprintf(f, ",%" PRIu64, nd->smp_excl);
	fputs(",[", f);
}

/* The names of node_json's values, in their order. */
static void node_values_json(FILE *f, const struct an_cct *c, bool shares)
{
	if (an_cct_method(c) == SC_METHOD_SAMPLE)
		fputs(",\n  \"node_values\": [\"exclusive_samples\"", f);
	else
		fputs(",\n  \"node_values\": [\"calls\", \"elapsed_exclusive_ns\", \"application_exclusive_ns\"", f);
	if (shares)
		fputs(", \"sampled_exclusive_samples\"", f);
	fputs("]", f);
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

/* ---- the timeline ---------------------------------------------------------
 *
 * What the page gets of the recording's timeline (html_timeline.c packs
 * it): every lane, and of each kind of item at most o->timeline_max, the
 * longest calls and OS events (a call is never shorter than what it holds,
 * so the calls kept still nest, every kept call's callers kept too) and the
 * first samples.  A sampling recording has no calls: its lanes get spans of
 * consecutive samples whose stacks hold the same frame at the same depth,
 * as a flame chart in time order draws them, and each sample as a tick.
 */

/* The k-th largest of v[0..n), 1 <= k <= n; v is reordered. */
static uint64_t kth_largest(uint64_t *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1, want = k - 1;

	while (lo < hi) {
		uint64_t pivot = v[lo + (hi - lo) / 2];
		size_t i = lo, j = hi;

		while (i <= j) {
			while (v[i] > pivot)
				i++;
			while (v[j] < pivot)
				j--;
			if (i <= j) {
				uint64_t x = v[i];

				v[i] = v[j];
				v[j] = x;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (want <= j)
			hi = j;
		else if (want >= i)
			lo = i;
		else
			break;
	}
	return v[want];
}

/* Keep the items longer than min, and the first ties of length min. */
struct tl_keep {
	uint64_t min, ties;
};

static bool tl_kept(struct tl_keep *k, uint64_t dur)
{
	if (dur > k->min)
		return true;
	if (dur == k->min && k->ties) {
		k->ties--;
		return true;
	}
	return false;
}

/* The rule keeping the limit longest of durs[0..n) (reordered). */
static struct tl_keep tl_longest(uint64_t *durs, size_t n, uint64_t limit)
{
	struct tl_keep k = { 0, UINT64_MAX };
	uint64_t longer = 0;

	if (n <= limit)
		return k;
	k.min = kth_largest(durs, n, (size_t)limit);
	for (size_t i = 0; i < n; i++)
		longer += durs[i] > k.min;
	k.ties = limit - longer;
	return k;
}

/* The durations of the items of one kind, all threads. */
static uint64_t *tl_durations(const struct an_timeline *tl, enum an_tl_kind kind, size_t *n)
{
	size_t m = 0;
	uint64_t *d;

	for (size_t t = 0; t < tl->nthreads; t++)
		for (size_t i = 0; i < tl->threads[t].nitems; i++)
			m += tl->threads[t].items[i].kind == kind;
	d = xmalloc((m ? m : 1) * sizeof(*d));
	m = 0;
	for (size_t t = 0; t < tl->nthreads; t++)
		for (size_t i = 0; i < tl->threads[t].nitems; i++)
			if (tl->threads[t].items[i].kind == kind)
				d[m++] = tl->threads[t].items[i].dur_ns;
	*n = m;
	return d;
}

struct tl_span {
	uint64_t start, dur;
	uint32_t func, depth;
};

static int cmp_span(const void *a, const void *b)
{
	const struct tl_span *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

/* A sampled thread's spans, sorted by start (an enclosing span first);
 * the last samples' spans end one mean sample interval after them. */
static struct tl_span *tl_sample_spans(const struct an_timeline *tl, const struct an_tl_thread *th,
				       size_t *nspans)
{
	struct tl_span *out = NULL, *open = NULL;
	size_t nout = 0, aout = 0, nopen = 0, aopen = 0, nsamples = 0;
	uint64_t first = 0, last = 0;

	for (size_t i = 0; i < th->nitems; i++) {
		const struct an_tl_item *it = &th->items[i];
		const uint32_t *fr = tl->frames + it->stack;     /* innermost first */
		size_t k = 0;

		if (it->kind != AN_TL_SAMPLE)
			continue;
		if (!nsamples++)
			first = it->start_ns;
		last = it->start_ns;
		while (k < nopen && k < it->nstack && open[k].func == fr[it->nstack - 1 - k])
			k++;
		while (nopen > k) {
			nopen--;
			open[nopen].dur = it->start_ns - open[nopen].start;
			ALLOC_GROW(out, nout + 1, aout);
			out[nout++] = open[nopen];
		}
		ALLOC_GROW(open, it->nstack + 1, aopen);
		for (; nopen < it->nstack; nopen++)
			open[nopen] = (struct tl_span){ it->start_ns, 0, fr[it->nstack - 1 - nopen],
							(uint32_t)nopen };
	}
	uint64_t tail = nsamples > 1 ? (last - first) / (nsamples - 1) : 1000000;
	while (nopen > 0) {
		nopen--;
		open[nopen].dur = last + tail - open[nopen].start;
		ALLOC_GROW(out, nout + 1, aout);
		out[nout++] = open[nopen];
	}
	free(open);
	if (nout)
		qsort(out, nout, sizeof(*out), cmp_span);
	*nspans = nout;
	return out;
}

static void tl_names(void *ctx, uint32_t func, const char **name, const char **module)
{
	*name = an_tl_name(ctx, func);
	*module = an_tl_module(ctx, func);
}

/*
 * The page's timeline: its member written to doc, its columns in *out (to
 * free with html_tl_free).  0 with *out NULL when the recording has none.
 */
static int timeline_member(FILE *doc, struct an_profile *p, uint64_t limit, struct html_tl **out,
			   char *err, size_t errlen)
{
	struct an_tl_filter all = AN_TL_FILTER_ALL;
	struct an_timeline *tl;
	struct html_tl_info info = { .limit = limit, .syscall_name = an_tl_syscall_name };
	struct tl_keep calls, os;
	struct tl_span **spans = NULL;
	size_t *nspans = NULL, n;
	uint64_t *d;
	int ret;

	*out = NULL;
	ret = an_timeline_build(p, &all, &tl, err, errlen);
	if (ret == -ENOENT) {
		*err = '\0';
		return 0;
	}
	if (ret < 0)
		return ret;
	info.sampling = tl->method == SC_METHOD_SAMPLE;
	info.end_ns = tl->end_ns;
	info.dropped = tl->dropped;
	info.filtered = tl->filtered;
	info.damaged = tl->damaged_items;
	d = tl_durations(tl, AN_TL_OS, &n);
	info.os_total = n;
	os = tl_longest(d, n, limit);
	free(d);
	for (size_t t = 0; t < tl->nthreads; t++)
		for (size_t i = 0; i < tl->threads[t].nitems; i++)
			info.samples_total += tl->threads[t].items[i].kind == AN_TL_SAMPLE;
	if (info.sampling) {
		/* spans of samples stand for calls */
		size_t m = 0;

		spans = xcalloc(tl->nthreads ? tl->nthreads : 1, sizeof(*spans));
		nspans = xcalloc(tl->nthreads ? tl->nthreads : 1, sizeof(*nspans));
		for (size_t t = 0; t < tl->nthreads; t++) {
			spans[t] = tl_sample_spans(tl, &tl->threads[t], &nspans[t]);
			m += nspans[t];
		}
		d = xmalloc((m ? m : 1) * sizeof(*d));
		n = 0;
		for (size_t t = 0; t < tl->nthreads; t++)
			for (size_t i = 0; i < nspans[t]; i++)
				d[n++] = spans[t][i].dur;
		info.sampled_calls = m > 0;
	} else {
		d = tl_durations(tl, AN_TL_CALL, &n);
	}
	info.calls_total = n;
	calls = tl_longest(d, n, limit);
	info.calls_min_ns = calls.min;
	free(d);

	struct html_tl *h = html_tl_new();
	uint64_t samples = 0;

	for (size_t t = 0; t < tl->nthreads; t++) {
		const struct an_tl_thread *th = &tl->threads[t];

		html_tl_lane(h, th->pid, th->tid, th->name);
		if (spans)
			for (size_t i = 0; i < nspans[t]; i++) {
				const struct tl_span *sp = &spans[t][i];

				if (tl_kept(&calls, sp->dur))
					html_tl_call(h, sp->start, sp->dur, sp->func, sp->depth, HTML_TL_SAMPLED);
			}
		for (size_t i = 0; i < th->nitems; i++) {
			const struct an_tl_item *it = &th->items[i];

			switch (it->kind) {
			case AN_TL_CALL:
				if (tl_kept(&calls, it->dur_ns))
					html_tl_call(h, it->start_ns, it->dur_ns, it->func, it->depth,
						     (it->flags & AN_TL_OPEN ? HTML_TL_OPEN : 0) |
						     (it->flags & AN_TL_REPAIRED ? HTML_TL_REPAIRED : 0) |
						     (it->flags & AN_TL_LIBCALL ? HTML_TL_LIBCALL : 0));
				break;
			case AN_TL_OS:
				if (tl_kept(&os, it->dur_ns))
					html_tl_os(h, it->start_ns, it->dur_ns, it->os_cat, it->sysno, it->depth);
				break;
			case AN_TL_SAMPLE:
				if (samples++ < limit)
					html_tl_sample(h, it->start_ns, it->nstack ? tl->frames[it->stack] : it->func,
						       it->nstack);
				break;
			}
		}
	}
	html_tl_finish(h, doc, &info, tl_names, tl);
	if (spans)
		for (size_t t = 0; t < tl->nthreads; t++)
			free(spans[t]);
	free(spans);
	free(nspans);
	an_timeline_free(tl);
	*out = h;
	return 0;
}

static int write_html_export(FILE *f, struct an_profile *p, const struct exp_options *o,
			     char *err, size_t errlen)
{
	struct html_tl *tl = NULL;
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
	node_values_json(m, c, flat->session.have_shares);
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
				fputs("]]", m);
		}
	}
	fputs("]", m);
	ret = timeline_member(m, p, o->timeline_max ? o->timeline_max : EXP_TIMELINE_MAX, &tl, err, errlen);
	if (ret < 0)
		goto out;
	fputs("\n}\n", m);
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
	ret = html_write_tl(f, doc, len, HTML_EMBED_AUTO, tl);
	if (ret < 0)
		snprintf(err, errlen, "%s", strerror(-ret));
out:
	if (doc)
		munmap(doc, len);
	if (m)
		fclose(m);
	free(keys);
	html_tl_free(tl);
	an_report_free(flat);
	return ret;
}

const struct exp_format exp_html = {
	.name = "html",
	.default_out = "stackclock.html",
	.write = write_html_export,
};
