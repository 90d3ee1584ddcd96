/*
 * Unit tests of the HTML report writer (src/output/html.c):
 *  - the template compiled in from src/output/html/ is whole (doctype,
 *    styles and script inlined, no placeholder left, no closing script tag
 *    but the viewer's own);
 *  - JSON embedding: no '<', '>' or '&' between the data element's tags
 *    whatever the names ("</script>", "spin<script>"), and undoing the
 *    \u escapes gives the document back byte for byte;
 *  - gzip embedding: base64 in lines of 76, decoded and inflated here it is
 *    the document again (empty and multi-megabyte documents too);
 *  - HTML_EMBED_AUTO switches at HTML_PLAIN_MAX; a failed write is -errno.
 *
 * With arguments it is the small page writer the end-to-end tests use:
 *   test_html --write json|gzip|auto IN.json OUT.html
 *   test_html --write-tl known|sampled|big:N IN.json OUT.html
 * the second with a synthetic timeline (synth_timeline()) added to the
 * document IN.json, whose functions it names by name.
 */
#include "output/html.h"
#include "analysis/analysis.h"
#include "output/export.h"
#include "format/varint.h"
#include "tap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

struct page {
	char *text;
	size_t len;
	const char *data;       /* between the data element's tags */
	size_t data_len;
	char encoding[16];
};

/* The data element of the page in p->text: 0, or -1 if it has none. */
static int page_parse(struct page *p)
{
	const char *open = strstr(p->text, "<script id=\"sc-data\"");
	const char *gt = open ? strchr(open, '>') : NULL;
	const char *close = gt ? strstr(gt, "</script>") : NULL;
	if (!close)
		return -1;
	const char *enc = strstr(open, "data-encoding=\"");
	if (enc && enc < gt)
		sscanf(enc, "data-encoding=\"%15[^\"]", p->encoding);
	p->data = gt + 1;
	p->data_len = (size_t)(close - p->data);
	return 0;
}

static int render(struct page *p, const char *json, size_t len, enum html_embed how)
{
	memset(p, 0, sizeof(*p));
	FILE *f = open_memstream(&p->text, &p->len);
	int rc = html_write(f, json, len, how);
	fclose(f);
	return page_parse(p) ? -1000 : rc;
}

/* Undo the writer's three escapes. */
static char *unescape(const char *s, size_t n, size_t *out_len)
{
	char *out = malloc(n + 1), *o = out;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 5 < n && s[i + 1] == 'u' && s[i + 2] == '0' && s[i + 3] == '0') {
			if (!strncmp(s + i + 4, "3c", 2)) { *o++ = '<'; i += 5; continue; }
			if (!strncmp(s + i + 4, "3e", 2)) { *o++ = '>'; i += 5; continue; }
			if (!strncmp(s + i + 4, "26", 2)) { *o++ = '&'; i += 5; continue; }
		}
		*o++ = s[i];
	}
	*o = '\0';                 /* strstr() on it stops here */
	*out_len = (size_t)(o - out);
	return out;
}

/* Base64 decode (whitespace skipped), then gunzip; NULL on any error. */
static char *gunzip_base64(const char *s, size_t n, size_t *out_len, size_t *longest_line)
{
	unsigned char *bin = malloc(n / 4 * 3 + 3);
	size_t nb = 0, line = 0;
	unsigned v = 0, bits = 0;
	*longest_line = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		const char *abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
		if (c == '\n') { line = 0; continue; }
		if (++line > *longest_line)
			*longest_line = line;
		if (c == '=')
			continue;
		const char *at = strchr(abc, c);
		if (!at || !c) { free(bin); return NULL; }
		v = v << 6 | (unsigned)(at - abc);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			bin[nb++] = (unsigned char)(v >> bits);
		}
	}
	size_t cap = 1 << 16, len = 0;
	char *out = malloc(cap);
	z_stream z = { 0 };
	inflateInit2(&z, 15 + 16);
	z.next_in = bin;
	z.avail_in = (uInt)nb;
	int zr;
	do {
		if (cap - len < 4096)
			out = realloc(out, cap *= 2);
		z.next_out = (unsigned char *)out + len;
		z.avail_out = (uInt)(cap - len);
		zr = inflate(&z, Z_NO_FLUSH);
		len = cap - z.avail_out;
	} while (zr == Z_OK);
	inflateEnd(&z);
	free(bin);
	if (zr != Z_STREAM_END) { free(out); return NULL; }
	out = realloc(out, len + 1);
	out[len] = '\0';              /* strstr() on it stops here */
	*out_len = len;
	return out;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static void test_template(void)
{
	ok(!strncmp(html_page_head, "<!DOCTYPE html>", 15), "template starts with the doctype");
	ok(strstr(html_page_head, "<style>") && strstr(html_page_head, ".tn-line"), "styles are inlined");
	ok(strstr(html_page_tail, "window.stackclock"), "the viewer's script is inlined");
	size_t tl = strlen(html_page_tail);
	ok(tl > 8 && !strcmp(html_page_tail + tl - 8, "</html>\n"), "template ends with </html>");
	ok(!strstr(html_page_head, "@DATA@") && !strstr(html_page_head, "@REPORT_"), "no placeholder left in the head");
	ok(!strstr(html_page_tail, "@DATA@") && !strstr(html_page_tail, "@REPORT_"), "no placeholder left in the tail");
	is_u64(count(html_page_head, "</script"), 0, "no script element closes in the head");
	is_u64(count(html_page_tail, "</script"), 1, "only the viewer's script element closes in the tail");
	ok(!strstr(html_page_head, "http://") && !strstr(html_page_head, "https://") &&
	   !strstr(html_page_tail, "src=") && !strstr(html_page_head, "src="),
	   "nothing is loaded from elsewhere");
}

static const char hostile[] =
	"{\"session\":{\"method\":\"sampling\",\"samples\":3},\"tree\":[{\"function\":"
	"\"spin<script>alert(1)</script>\",\"module\":\"/a&b/<m>\",\"exclusive_samples\":3,"
	"\"children\":[{\"function\":\"</script><b>x</b>\",\"module\":\"m\","
	"\"exclusive_samples\":0,\"children\":[]}]}]}";

static void test_json_embedding(void)
{
	struct page p;
	is_u64(render(&p, hostile, strlen(hostile), HTML_EMBED_JSON), 0, "json: written");
	is_str(p.encoding, "json", "json: data-encoding says json");
	ok(!strncmp(p.text, html_page_head, strlen(html_page_head)), "json: the page opens with the template head");
	size_t tl = strlen(html_page_tail);
	ok(p.len > tl && !strcmp(p.text + p.len - tl, html_page_tail), "json: the page ends with the template tail");
	ok(!memchr(p.data, '<', p.data_len) && !memchr(p.data, '>', p.data_len) &&
	   !memchr(p.data, '&', p.data_len), "json: no <, > or & inside the data element");
	size_t ul;
	char *u = unescape(p.data, p.data_len, &ul);
	ok(ul == strlen(hostile) && !memcmp(u, hostile, ul), "json: unescaped, the document comes back");
	is_u64(count(p.text, "</script>"), 2, "json: two script elements close, data and viewer");
	free(u);
	free(p.text);
}

static void gzip_roundtrip(const char *what, const char *json, size_t len, enum html_embed how)
{
	struct page p;
	is_u64(render(&p, json, len, how), 0, "gzip %s: written", what);
	is_str(p.encoding, "gzip-base64", "gzip %s: data-encoding says gzip-base64", what);
	size_t ol = 0, longest = 0;
	char *o = gunzip_base64(p.data, p.data_len, &ol, &longest);
	ok(o && ol == len && !memcmp(o, json, len), "gzip %s: decoded and inflated, the document comes back", what);
	ok(longest <= 76, "gzip %s: base64 lines of at most 76 characters (%zu)", what, longest);
	free(o);
	free(p.text);
}

static void test_gzip_embedding(void)
{
	gzip_roundtrip("hostile names", hostile, strlen(hostile), HTML_EMBED_GZIP);
	gzip_roundtrip("empty document", "", 0, HTML_EMBED_GZIP);
	for (size_t n = 1; n <= 5; n++)
		gzip_roundtrip("tail bytes", "{\"a\":1}", n, HTML_EMBED_GZIP);

	/* Several MB, above the automatic threshold: compressed by AUTO. */
	size_t big = HTML_PLAIN_MAX * 3 + 7, at = 0;
	char *json = malloc(big + 64);
	unsigned seed = 1;
	at += (size_t)sprintf(json, "[");
	while (at < big) {
		seed = seed * 1103515245u + 12345u;
		at += (size_t)sprintf(json + at, "%u,", seed >> 8);
	}
	json[at - 1] = ']';
	gzip_roundtrip("3 MB auto", json, at, HTML_EMBED_AUTO);
	free(json);

	struct page p;
	render(&p, hostile, strlen(hostile), HTML_EMBED_AUTO);
	is_str(p.encoding, "json", "auto: a small document is embedded as JSON");
	free(p.text);
}

static void test_errors(void)
{
	FILE *full = fopen("/dev/full", "w");
	if (full) {
		int rc = html_write(full, hostile, strlen(hostile), HTML_EMBED_JSON);
		is_u64((uint64_t)-rc, ENOSPC, "a full device gives -ENOSPC");
		fclose(full);
	}
	FILE *f = fopen("/dev/null", "w");
	is_u64((uint64_t)-html_write(f, NULL, 5, HTML_EMBED_JSON), EINVAL, "no document gives -EINVAL");
	fclose(f);
}

/* ---- export --format html: the document ------------------------------- */

/* Two functions of /bin/app: main at 0x1000, work at 0x2000. */
static int two_funcs(void *ctx, uint32_t proc_id, uint64_t addr, bool is_return,
		     struct sym_frame *out, int max)
{
	uint64_t a = is_return ? addr - 1 : addr;

	(void)ctx;
	(void)proc_id;
	if (max < 1 || a < 0x1000 || a >= 0x3000)
		return 0;
	out[0] = (struct sym_frame){ .function = a < 0x2000 ? "main" : "work", .module = "/bin/app",
				     .module_offset = a };
	return 1;
}

static void add_rec(struct an_profile *p, enum sc_rec_type type, const void *d, size_t size)
{
	struct sc_record rec = { type, (uint32_t)size, d };

	an_profile_add(p, &rec);
}

static void add_proc(struct an_profile *p, uint32_t proc_id, uint32_t pid, const char *exe)
{
	struct {
		struct sc_rec_process r;
		char exe[16];
	} r = { { .proc_id = proc_id, .pid = pid, .parent_proc_id = UINT32_MAX }, "" };

	snprintf(r.exe, sizeof(r.exe), "%s", exe);
	add_rec(p, SC_REC_PROCESS, &r, sizeof(r));
}

static void add_thread(struct an_profile *p, uint32_t proc_id, uint32_t tid, const char *name)
{
	struct {
		struct sc_rec_thread t;
		char name[16];
	} t = { { .proc_id = proc_id, .tid = tid }, "" };

	snprintf(t.name, sizeof(t.name), "%s", name);
	add_rec(p, SC_REC_THREAD, &t, sizeof(t));
}

/* Node id under parent in thread (proc_id, tid): calls, EE (= AE), and the
 * per-call statistics of its completed calls, inclusive = exclusive. */
static void add_node(struct an_profile *p, uint32_t proc_id, uint32_t tid, uint32_t id, uint32_t parent,
		     uint64_t func, uint64_t calls, uint64_t ee, uint64_t completed, uint64_t min,
		     uint64_t max, uint64_t sum)
{
	struct sc_rec_cct_node n = {
		.proc_id = proc_id, .tid = tid, .id = id, .parent = parent, .func = func,
		.calls = calls, .elapsed_excl = ee, .app_excl = ee, .app_excl_exact = ee,
		.completed = completed, .incl_min = min, .incl_max = max, .incl_sum = sum,
		.excl_min = min, .excl_max = max, .excl_sum = sum,
	};

	add_rec(p, SC_REC_CCT_NODE, &n, sizeof(n));
}

/* The document of a page's data element, decoded as its encoding says. */
static char *page_doc(const struct page *p, size_t *len)
{
	size_t longest;

	if (!strcmp(p->encoding, "gzip-base64"))
		return gunzip_base64(p->data, p->data_len, len, &longest);
	return unescape(p->data, p->data_len, len);
}

/* A profile of one session (instrumentation of "./app"), for the exports. */
static struct an_profile *export_profile(void)
{
	static const struct an_resolver res = { two_funcs, NULL, NULL };
	struct an_profile *p = an_profile_new(&res);
	struct {
		struct sc_rec_session s;
		char argv[8];
	} s = { { .method = SC_METHOD_INSTRUMENT, .os_requested = SC_OS_ALL, .argc = 1 }, "./app" };

	add_rec(p, SC_REC_SESSION, &s, sizeof(s));
	return p;
}

/* The session of p ended and exported as a page into pg (p freed): 0, or
 * -1 if the page has no data element. */
static int export_page(struct an_profile *p, struct page *pg, const char *what)
{
	struct sc_rec_session_end e = { .duration_ns = 1000000 };
	struct exp_options o = { .app_time = AN_APP_INTERVAL };
	char err[256] = "";
	FILE *f;

	add_rec(p, SC_REC_SESSION_END, &e, sizeof(e));
	memset(pg, 0, sizeof(*pg));
	f = open_memstream(&pg->text, &pg->len);
	is_u64((uint64_t)exp_html.write(f, p, &o, err, sizeof(err)), 0, "export --format html of %s", what);
	fclose(f);
	if (err[0])
		tap_diag("%s", err);
	an_profile_free(p);
	return page_parse(pg);
}

/*
 * Three threads in two processes: (pid 100: tid 100 "main" runs main ->
 * work, tid 101 "worker" runs work; pid 200 tid 200 "child" runs main,
 * whose call never returned).  The document carries each thread's tree
 * apart (its roots name the thread), the threads and processes, and each
 * thread's per-call statistics by function.
 */
static void test_export_document(void)
{
	struct an_profile *p = export_profile();
	struct page pg;
	char *doc;
	size_t dlen;

	add_proc(p, 1, 100, "/bin/app");
	add_proc(p, 2, 200, "/bin/other");
	add_thread(p, 1, 100, "main");
	add_thread(p, 1, 101, "worker");
	add_thread(p, 2, 200, "child");
	add_node(p, 1, 100, 0, UINT32_MAX, 0, 0, 0, 0, 0, 0, 0);
	add_node(p, 1, 100, 1, 0, 0x1000, 1, 1000, 1, 3000, 3000, 3000);
	add_node(p, 1, 100, 2, 1, 0x2000, 4, 2000, 4, 100, 900, 2000);
	add_node(p, 1, 101, 0, UINT32_MAX, 0, 0, 0, 0, 0, 0, 0);
	add_node(p, 1, 101, 1, 0, 0x2000, 2, 600, 2, 200, 400, 600);
	add_node(p, 2, 200, 0, UINT32_MAX, 0, 0, 0, 0, 0, 0, 0);
	add_node(p, 2, 200, 1, 0, 0x1000, 1, 50, 0, 0, 0, 0);
	/* the data element, JSON-embedded (small) */
	ok(export_page(p, &pg, "three threads") == 0 && !strcmp(pg.encoding, "json"),
	   "the page has its data element, JSON");
	if (!pg.data) {
		free(pg.text);
		return;
	}
	doc = page_doc(&pg, &dlen);
	ok(strstr(doc, "\"threads\": [\n"
		       "    {\"pid\": 100, \"tid\": 100, \"name\": \"main\", \"process\": 0},\n"
		       "    {\"pid\": 100, \"tid\": 101, \"name\": \"worker\", \"process\": 0},\n"
		       "    {\"pid\": 200, \"tid\": 200, \"name\": \"child\", \"process\": 1}\n  ]") != NULL,
	   "threads: pid, tid, name and process of each, in the trees' order");
	ok(strstr(doc, "\"processes\": [\n    {\"pid\": 100, \"executable\": \"/bin/app\"},\n"
		       "    {\"pid\": 200, \"executable\": \"/bin/other\"}\n  ]") != NULL,
	   "processes: pid and executable");
	/* rows by EI: main (4050) before work (2600) */
	const char *rmain = strstr(doc, "{\"function\": \"main\""), *rwork = strstr(doc, "{\"function\": \"work\"");
	ok(rmain && rwork && rmain < rwork, "rows: main is row 0, work row 1");
	ok(strstr(doc, "\"thread_stats\": [\n"
		       "    [0, 0, 1, 3000, 3000, 3000, 3000, 3000, 3000],\n"
		       "    [0, 1, 4, 100, 900, 2000, 100, 900, 2000],\n"
		       "    [1, 1, 2, 200, 400, 600, 200, 400, 600]\n  ]") != NULL,
	   "thread_stats: per thread and function, completed, min/max/sum (none for a call that never returned)");
	ok(strstr(doc, "\"node_values\": [\"calls\", \"elapsed_exclusive_ns\", \"application_exclusive_ns\"],\n"
		       "  \"tree\": [[0,0,1,1000,1000,[[1,-1,4,2000,2000,[]]]],"
		       "[1,1,2,600,600,[]],"
		       "[0,2,1,50,50,[]]]") != NULL,
	   "tree: each thread's tree apart, its roots naming the thread, the others not (-1), "
	   "nodes as arrays of node_values");
	if (!strstr(doc, "\"tree\": [[0,0,"))
		tap_diag("document: %s", doc);
	free(doc);
	free(pg.text);
}

static int write_page(const char *mode, const char *in, const char *out)
{
	enum html_embed how = !strcmp(mode, "json") ? HTML_EMBED_JSON :
			      !strcmp(mode, "gzip") ? HTML_EMBED_GZIP : HTML_EMBED_AUTO;
	FILE *fi = fopen(in, "r");
	if (!fi) {
		fprintf(stderr, "test_html: cannot read %s: %s\n", in, strerror(errno));
		return 1;
	}
	char *json = NULL;
	size_t len = 0, cap = 0, got;
	do {
		if (cap - len < 65536)
			json = realloc(json, cap = cap * 2 + 65536);
		got = fread(json + len, 1, cap - len, fi);
		len += got;
	} while (got);
	fclose(fi);
	FILE *fo = fopen(out, "w");
	if (!fo) {
		fprintf(stderr, "test_html: cannot write %s: %s\n", out, strerror(errno));
		free(json);
		return 1;
	}
	int rc = html_write(fo, json, len, how);
	if (fclose(fo) && !rc)
		rc = -errno;
	free(json);
	if (rc)
		fprintf(stderr, "test_html: writing %s: %s\n", out, strerror(-rc));
	return rc ? 1 : 0;
}

/*
 * Synthetic timelines for t521, the values it checks against:
 *  known: lanes 100/100 "main", 100/101 "worker", 200/200 "child";
 *    main: main [1,000, 9,001,000) ns; in it compute [2,000, 3,002,000)
 *    holding 1,000 calls of mix (1,000 ns each, every 3,000 ns from
 *    2,010), compute [4,000,000, 5,500,000), nap [6,000,000, 8,000,000)
 *    over a context switch [6,000,100, 7,999,000), and a system call (0)
 *    [8,500,000, 8,600,000); worker: worker [500,000, 7,500,000) holding
 *    compute [600,000, 7,000,000); child: main from 0, open at 2,000,000.
 *  sampled: one lane, 100/100 "main": samples every 1,000,000 ns from 0
 *    (50 of them) in work, as spans: main [0, 50 ms), work [0, 30 ms),
 *    idle [30 ms, 50 ms).
 *  big:N: N calls in 4 lanes (N/4 x 200 ns + 1 ms long): a root per lane;
 *    under it f0..f7, depth 1 and 2, most a few hundred ns long.
 */
enum { F_MAIN, F_COMPUTE, F_MIX, F_NAP, F_WORKER, F_WORK, F_IDLE, F_BIG };
static const char *const synth_names[] = { "main", "compute", "mix", "nap", "worker", "work", "idle",
					   "f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "root" };

static void synth_name(void *ctx, uint32_t func, const char **name, const char **module)
{
	(void)ctx;
	*name = func < sizeof(synth_names) / sizeof(*synth_names) ? synth_names[func] : "?";
	*module = func >= F_BIG ? "/bin/big" : "/bin/app";
}

static struct html_tl *synth_timeline(const char *kind, struct html_tl_info *info)
{
	struct html_tl *t = html_tl_new();

	memset(info, 0, sizeof(*info));
	if (!strcmp(kind, "known")) {
		html_tl_lane(t, 100, 100, "main");
		html_tl_call(t, 1000, 9000000, F_MAIN, 0, 0);
		html_tl_call(t, 2000, 3000000, F_COMPUTE, 1, 0);
		for (int k = 0; k < 1000; k++)
			html_tl_call(t, 2010 + 3000 * (uint64_t)k, 1000, F_MIX, 2, 0);
		html_tl_call(t, 4000000, 1500000, F_COMPUTE, 1, 0);
		html_tl_call(t, 6000000, 2000000, F_NAP, 1, 0);
		html_tl_os(t, 6000100, 1998900, 0, -1, 2);
		html_tl_os(t, 8500000, 100000, 1, 0, 1);
		html_tl_lane(t, 100, 101, "worker");
		html_tl_call(t, 500000, 7000000, F_WORKER, 0, 0);
		html_tl_call(t, 600000, 6400000, F_COMPUTE, 1, HTML_TL_LIBCALL);
		html_tl_lane(t, 200, 200, "child");
		html_tl_call(t, 0, 2000000, F_MAIN, 0, HTML_TL_OPEN);
		info->end_ns = 9001000;
		info->calls_total = 1007;
		info->os_total = 2;
	} else if (!strcmp(kind, "sampled")) {
		html_tl_lane(t, 100, 100, "main");
		html_tl_call(t, 0, 50000000, F_MAIN, 0, HTML_TL_SAMPLED);
		html_tl_call(t, 0, 30000000, F_WORK, 1, HTML_TL_SAMPLED);
		html_tl_call(t, 30000000, 20000000, F_IDLE, 1, HTML_TL_SAMPLED);
		for (int k = 0; k < 50; k++)
			html_tl_sample(t, 1000000 * (uint64_t)k, k < 30 ? F_WORK : F_IDLE, 2);
		info->sampling = info->sampled_calls = true;
		info->end_ns = 50000000;
		info->calls_total = 3;
		info->samples_total = 50;
	} else if (!strncmp(kind, "big:", 4)) {
		uint64_t n = strtoull(kind + 4, NULL, 10), per = n / 4, seed = 42;

		for (uint32_t lane = 0; lane < 4; lane++) {
			uint64_t t0 = 0, made = 1, span = per * 200 + 1000000;
			html_tl_lane(t, 300, 300 + lane, "big");
			html_tl_call(t, 0, span, F_BIG + 8, 0, 0);
			/* depth-1 calls each holding up to 3 depth-2 calls */
			while (made < per) {
				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				uint64_t kids = (seed >> 33) % 4, gap = (seed >> 40) % 32, d2 = 60 + (seed >> 20) % 200;
				uint64_t dur = 40 + kids * (d2 + 10) + (seed >> 50) % 100;
				uint64_t start = t0 + gap;

				if (start + dur >= span)
					break;
				html_tl_call(t, start, dur, F_BIG + (uint32_t)((seed >> 36) % 8), 1, 0);
				made++;
				for (uint64_t k = 0; k < kids && made < per; k++, made++)
					html_tl_call(t, start + 20 + k * (d2 + 10), d2,
						     F_BIG + (uint32_t)((seed >> (k * 3 + 3)) % 8), 2, 0);
				t0 = start + dur;
			}
			info->calls_total += made;
		}
		info->end_ns = per * 200 + 1000000;
	}
	info->limit = UINT64_MAX;
	return t;
}

static int write_tl_page(const char *kind, const char *in, const char *out)
{
	FILE *fi = fopen(in, "r"), *fo;
	char *json = NULL, *doc = NULL;
	size_t len = 0, cap = 0, got, dlen = 0;
	struct html_tl_info info;
	struct html_tl *t;
	int rc;

	if (!fi) {
		fprintf(stderr, "test_html: cannot read %s: %s\n", in, strerror(errno));
		return 1;
	}
	do {
		if (cap - len < 65536)
			json = realloc(json, cap = cap * 2 + 65536);
		got = fread(json + len, 1, cap - len, fi);
		len += got;
	} while (got);
	fclose(fi);
	while (len && json[len - 1] != '}')
		len--;
	if (!len) {
		fprintf(stderr, "test_html: %s is no JSON object\n", in);
		return 1;
	}
	t = synth_timeline(kind, &info);
	fi = open_memstream(&doc, &dlen);
	fwrite(json, 1, len - 1, fi);
	html_tl_finish(t, fi, &info, synth_name, NULL);
	fputs("}\n", fi);
	fclose(fi);
	fo = fopen(out, "w");
	if (!fo) {
		fprintf(stderr, "test_html: cannot write %s: %s\n", out, strerror(errno));
		return 1;
	}
	rc = html_write_tl(fo, doc, dlen, HTML_EMBED_AUTO, t);
	if (fclose(fo) && !rc)
		rc = -errno;
	html_tl_free(t);
	free(json);
	free(doc);
	if (rc)
		fprintf(stderr, "test_html: writing %s: %s\n", out, strerror(-rc));
	return rc ? 1 : 0;
}

/*
 * The timeline's packing (html_timeline.c): the known synthetic timeline
 * through html_tl_finish() and html_write_tl(): the member's counts, lanes,
 * function table (in order first met) and system call names; the columns,
 * read back from the page (base64, gunzip), hold each item's values
 * (starts as deltas within a lane, depth << 4 | flags).
 */
static const char *sys_name(int32_t n)
{
	return n == 0 ? "read" : NULL;
}

/*
 * The tree's share of the page: 20,000 nodes (main and work alternating
 * down one thread, values of realistic size: a thousand calls of a tenth
 * of a second each).  A browser's longest string is 512 MB, so the bytes
 * a node takes in the page's JSON set the largest profile it can show:
 * 137 a node (objects, keys spelled out) stopped g++'s 5.3 M-node
 * recording; the arrays of node_values take 40 with these values.
 */
static void test_export_node_size(void)
{
	struct an_profile *p = export_profile();
	const uint32_t n = 20000;
	struct page pg;
	char *doc = NULL;
	size_t dlen = 0;

	add_proc(p, 1, 100, "/bin/app");
	add_thread(p, 1, 100, "main");
	add_node(p, 1, 100, 0, UINT32_MAX, 0, 0, 0, 0, 0, 0, 0);
	for (uint32_t id = 1; id <= n; id++)
		add_node(p, 1, 100, id, id - 1, id & 1 ? 0x1000 : 0x2000, 1000, 123456789012ull,
			 1000, 100000000, 200000000, 123456789012ull);
	if (export_page(p, &pg, "20,000 nodes") == 0)
		doc = page_doc(&pg, &dlen);
	const char *tree = doc ? strstr(doc, "\"tree\": [") : NULL;

	ok(tree != NULL, "the page's data has its tree");
	if (tree) {
		double per = (double)(dlen - (size_t)(tree - doc)) / n;
		ok(per < 48, "the tree takes %.1f bytes of JSON a node (under 48: 11 M nodes in 512 MB)", per);
	}
	free(doc);
	free(pg.text);
}

static void test_timeline_columns(void)
{
	struct html_tl_info info;
	struct html_tl *t = synth_timeline("known", &info);
	char *doc = NULL, *text = NULL;
	size_t dlen = 0, len = 0, raw_len = 0;
	FILE *f = open_memstream(&doc, &dlen);

	info.syscall_name = sys_name;
	html_tl_finish(t, f, &info, synth_name, NULL);
	fclose(f);
	ok(strstr(doc, "\"calls\": 1007, \"calls_total\": 1007, \"calls_min_ns\": 0, \"os\": 2, \"os_total\": 2, "
		       "\"samples\": 0, \"samples_total\": 0") != NULL, "timeline member: the counts");
	ok(strstr(doc, "{\"pid\": 100, \"tid\": 100, \"name\": \"main\", \"calls\": 1004, \"os\": 2, \"samples\": 0},\n"
		       "      {\"pid\": 100, \"tid\": 101, \"name\": \"worker\", \"calls\": 2, \"os\": 0, \"samples\": 0}") != NULL,
	   "timeline member: the lanes and their counts");
	ok(strstr(doc, "\"funcs\": [\n      [\"main\", \"/bin/app\"],\n      [\"compute\", \"/bin/app\"],\n"
		       "      [\"mix\", \"/bin/app\"],\n      [\"nap\", \"/bin/app\"],\n      [\"worker\", \"/bin/app\"]\n    ]") != NULL,
	   "timeline member: functions in the order first met");
	ok(strstr(doc, "\"syscalls\": {\"0\": \"read\"}}") != NULL, "timeline member: the names of the system calls used");

	f = open_memstream(&text, &len);
	is_u64((uint64_t)html_write_tl(f, "{}", 2, HTML_EMBED_JSON, t), 0, "html_write_tl");
	fclose(f);
	const char *open = strstr(text, "<script id=\"sc-timeline\" type=\"application/octet-stream\" "
					"data-encoding=\"gzip-base64\">\n");
	const char *close = open ? strstr(open, "</script>") : NULL;
	ok(close != NULL, "the page has the timeline element, after the document's");
	if (!close)
		goto out;
	open = strchr(open, '>') + 1;
	size_t longest;
	unsigned char *raw = (unsigned char *)gunzip_base64(open, (size_t)(close - open), &raw_len, &longest);
	struct html_piece cols[HTML_TL_NCOLS];
	size_t ncols = html_tl_columns(t, cols, HTML_TL_NCOLS), want = 0;

	for (size_t i = 0; i < ncols; i++)
		want += cols[i].len;
	ok(raw && raw_len == want, "the element inflates to the 11 columns (%zu bytes)", want);
	/* column by column: the values of the first lane's first items */
	const uint8_t *q = raw, *end;
	uint64_t v[8];
	bool good = raw != NULL;

	end = q + cols[0].len;
	for (int i = 0; i < 3 && good; i++)
		good = !sc_varint_get(&q, end, &v[i]);
	ok(good && v[0] == 1000 && v[1] == 1000 && v[2] == 10, "call starts are deltas in the lane (1000, +1000, +10)");
	q = raw + cols[0].len + cols[1].len + cols[2].len;
	end = q + cols[3].len;
	for (int i = 0; i < 3 && good; i++)
		good = !sc_varint_get(&q, end, &v[i]);
	ok(good && v[0] == 0 && v[1] == 1 << 4 && v[2] == 2 << 4, "depth << 4 | flags (0, 1, 2)");
	q = raw + cols[0].len + cols[1].len + cols[2].len + cols[3].len + cols[4].len + cols[5].len;
	end = q + cols[6].len;
	for (int i = 0; i < 2 && good; i++)
		good = !sc_varint_get(&q, end, &v[i]);
	ok(good && v[0] == 0 && v[1] == (1 | (0 + 1) << 2), "OS: category | (sysno + 1) << 2 (a switch, then read)");
	free(raw);
out:
	free(text);
	free(doc);
	html_tl_free(t);
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "--write"))
		return write_page(argv[2], argv[3], argv[4]);
	if (argc == 5 && !strcmp(argv[1], "--write-tl"))
		return write_tl_page(argv[2], argv[3], argv[4]);
	test_template();
	test_json_embedding();
	test_gzip_embedding();
	test_errors();
	test_export_document();
	test_export_node_size();
	test_timeline_columns();
	return tap_done();
}
