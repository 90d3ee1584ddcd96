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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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

/*
 * The timeline (SPEC section 12; docs/html-report.md "Timeline").  Lanes
 * are added in order, then each lane's items in order of start (calls
 * nested: an enclosing call before what it encloses); html_tl_finish()
 * writes the document's "timeline" member (",\n  \"timeline\": {...}"),
 * whose "columns" gives the byte length of each of the eleven varint
 * columns html_tl_columns() hands to html_write_tl().  Function ids are the
 * caller's (any uint32_t, dense preferred: a table is indexed by them);
 * the page's function table is made of those used, named at finish by the
 * names callback.  The html_tl owns copies of lane names; columns stay
 * valid until html_tl_free() (which accepts NULL).
 */
#define HTML_TL_OPEN      1u      /* the call had not returned */
#define HTML_TL_REPAIRED  2u      /* closed by a repair */
#define HTML_TL_LIBCALL   4u      /* a call into another module */
#define HTML_TL_SAMPLED   8u      /* a span of consecutive samples, not a call */
#define HTML_TL_FLAGS     15u
#define HTML_TL_FLAG_BITS 4       /* depth column: depth << 4 | flags */

struct html_tl;

struct html_tl_info {
	bool sampling;            /* a sampling recording */
	bool sampled_calls;       /* its calls are spans of samples */
	uint64_t end_ns;          /* the axis: [0, end_ns] */
	uint64_t calls_total;     /* calls in the recording's timeline ... */
	uint64_t calls_min_ns;    /* ... shortest kept when more than limit */
	uint64_t os_total, samples_total;
	uint64_t limit;           /* most items of each kind embedded */
	uint64_t dropped, filtered, damaged;   /* the recording's own counts */
	/* names of the system calls used (below HTML_TL_MAX_SYSNO), or NULL */
	const char *(*syscall_name)(int32_t sysno);
};
#define HTML_TL_MAX_SYSNO 1024

struct html_piece {
	const void *p;
	size_t len;
};

struct html_tl *html_tl_new(void);
void html_tl_free(struct html_tl *t);
void html_tl_lane(struct html_tl *t, uint32_t pid, uint32_t tid, const char *name);
void html_tl_call(struct html_tl *t, uint64_t start_ns, uint64_t dur_ns, uint32_t func,
		  uint32_t depth, uint32_t flags);
void html_tl_os(struct html_tl *t, uint64_t start_ns, uint64_t dur_ns, uint32_t cat,
		int32_t sysno, uint32_t depth);
void html_tl_sample(struct html_tl *t, uint64_t time_ns, uint32_t func, uint32_t depth);
void html_tl_finish(struct html_tl *t, FILE *doc, const struct html_tl_info *info,
		    void (*names)(void *ctx, uint32_t func, const char **name, const char **module),
		    void *ctx);
/* The columns in order into pieces[0..max); how many. */
size_t html_tl_columns(const struct html_tl *t, struct html_piece *pieces, size_t max);
#define HTML_TL_NCOLS 11

/* html_write() with the timeline's columns (tl NULL: none) in an element
 * <script id="sc-timeline" type="application/octet-stream"
 * data-encoding="gzip-base64"> after the document's. */
int html_write_tl(FILE *out, const char *json, size_t len, enum html_embed how,
		  const struct html_tl *tl);

#endif
