/*
 * html — the self-contained HTML report (`export --format html`).
 *
 * The page (src/output/html/report.html, .css, .js) is assembled into
 * html_page_head[] and html_page_tail[] at build time (embed.sh, see the
 * Makefile); html_write() writes head, the profile as one JSON document
 * in a <script type="application/json"> element, and tail.  The JSON is the
 * viewer's data contract, docs/html-report.md:
 *   {"session": {...}, "rows": [...], "threads": [...], "processes": [...],
 *    "thread_stats": [...], "tree": [...]}
 * (SPEC sections 5 and 6; the tree is each thread's, for the page's thread
 * and process selector).  The viewer needs no network.
 *
 * Embedding: HTML_EMBED_JSON writes the text with every '<', '>' and '&' as
 * \u003c, \u003e, \u0026 (valid JSON wherever those bytes can occur, i.e.
 * inside strings), so no name ("</script>", "spin<script>") can end the
 * element; HTML_EMBED_GZIP writes the text gzip-compressed and base64-
 * encoded (the viewer inflates it with DecompressionStream), which keeps a
 * 100,000-node profile under 10 MB; HTML_EMBED_AUTO picks JSON up to
 * HTML_PLAIN_MAX bytes of input and gzip above.
 *
 * The caller owns json and out; nothing is kept after the call.  The JSON
 * is not validated: a document the viewer cannot read shows as an error in
 * the page.  Not thread-safe (stdio).
 */
#ifndef SC_OUTPUT_HTML_H
#define SC_OUTPUT_HTML_H

#include <stddef.h>
#include <stdio.h>

enum html_embed {
	HTML_EMBED_AUTO,
	HTML_EMBED_JSON,
	HTML_EMBED_GZIP,
};

#define HTML_PLAIN_MAX ((size_t)1 << 20)

/* Generated from src/output/html/ (build/gen/html_page.c). */
extern const char html_page_head[];
extern const char html_page_tail[];

/* Write the page holding json[0..len) to out.  Return 0, -EINVAL (json is
 * NULL with len > 0), -ENOMEM, or -errno of a failed write. */
int html_write(FILE *out, const char *json, size_t len, enum html_embed how);

#endif
