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

static int write_gzip_base64(FILE *out, const char *json, size_t len)
{
	z_stream z = { 0 };
	unsigned char buf[1 << 16];
	struct b64 b = { .out = out };
	/* windowBits 15 + 16: a gzip wrapper, what DecompressionStream('gzip') reads. */
	if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	int flush, zr = Z_OK;
	do {
		/* avail_in is 32 bits: feed big documents in slices. */
		if (z.avail_in == 0 && len) {
			size_t take = len > (1u << 30) ? (1u << 30) : len;
			z.next_in = (unsigned char *)(uintptr_t)json;
			z.avail_in = (uInt)take;
			json += take;
			len -= take;
		}
		flush = len ? Z_NO_FLUSH : Z_FINISH;
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
	if (!json && len)
		return -EINVAL;
	if (how == HTML_EMBED_AUTO)
		how = len <= HTML_PLAIN_MAX ? HTML_EMBED_JSON : HTML_EMBED_GZIP;
	fputs(html_page_head, out);
	int err = 0;
	if (how == HTML_EMBED_GZIP) {
		fputs("<script id=\"sc-data\" type=\"application/json\" data-encoding=\"gzip-base64\">\n", out);
		err = write_gzip_base64(out, json, len);
	} else {
		fputs("<script id=\"sc-data\" type=\"application/json\" data-encoding=\"json\">", out);
		write_escaped(out, json, len);
	}
	fputs("</script>\n", out);
	fputs(html_page_tail, out);
	int werr = out_finish(out);
	return err ? err : werr;
}

/* ---- export --format html ----------------------------------------------- */

/*
 * The viewer's document (docs/html-report.md): the flat function report
 * ("session", "rows") and the merged calling-context tree in the compact
 * form, each node {"row": INDEX, own values, "children": [...]}, where
 * INDEX is its function's row; the viewer adds up inclusive values and
 * percentages itself.  Written into memory, then embedded by html_write().
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

static void node_json(FILE *f, const struct an_cct *c, const struct an_cct_node *nd,
		      const struct row_key *keys, size_t nkeys)
{
	struct row_key want = { an_cct_func_name(c, nd->func), an_cct_func_module(c, nd->func), 0 };
	const struct row_key *k = bsearch(&want, keys, nkeys, sizeof(*keys), cmp_row_key);

	fprintf(f, "{\"row\": %zu", k ? k->row : 0);
	if (an_cct_method(c) == SC_METHOD_SAMPLE)
		fprintf(f, ", \"exclusive_samples\": %" PRIu64, nd->excl);
	else
		fprintf(f, ", \"calls\": %" PRIu64 ", \"elapsed_exclusive_ns\": %" PRIu64
			", \"application_exclusive_ns\": %" PRIu64, nd->calls, nd->excl, nd->app_excl);
	fputs(", \"children\": [", f);
}

static int write_html_export(FILE *f, struct an_profile *p, const struct exp_options *o,
			     char *err, size_t errlen)
{
	const struct an_cct *c = an_profile_cct(p, AN_CCT_MERGED, o->app_time);
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
	fputs(",\n  \"tree\": [", m);
	/* depth first, iteratively: a million levels of recursion is fine */
	for (size_t t = 0, first = 1; t < ntops; t++) {
		uint32_t left;

		for (uint32_t id = an_cct_node(c, tops[t])->first_child; id != AN_CCT_NONE;) {
			if (!first)
				fputc(',', m);
			node_json(m, c, an_cct_node(c, id), keys, flat->nrows);
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
