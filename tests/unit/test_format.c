/*
 * Unit tests of the data file (src/format): round trip of every record
 * type, many chunks, truncation at every offset, single-bit flips, refused
 * headers, unknown record types, record validation, crash survival, and
 * `stackclock dump` on good and bad files when $STACKCLOCK is set.
 */
#include "format/execcheck.h"
#include "format/scdata.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/sc-test-format-XXXXXX";

static char *tmp_path(const char *name)
{
	static char buf[4][256];
	static int i;
	char *p = buf[i++ % 4];

	snprintf(p, sizeof(buf[0]), "%s/%s", tmpdir, name);
	return p;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st)) {
		perror(path);
		exit(1);
	}
	buf = malloc(st.st_size + 1);
	if (read(fd, buf, st.st_size) != st.st_size) {
		perror(path);
		exit(1);
	}
	close(fd);
	*len = st.st_size;
	return buf;
}

static void spill(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || write(fd, buf, len) != (ssize_t)len) {
		perror(path);
		exit(1);
	}
	close(fd);
}

/* ---- a set of expected records ------------------------------------- */

struct rec {
	unsigned type;
	size_t size;
	uint8_t *bytes;
};

struct recset {
	struct rec *v;
	size_t n, alloc;
};

static void recset_add(struct recset *s, unsigned type, const void *fixed, size_t fsize,
		       const void *tail, size_t tsize)
{
	struct rec *r;

	if (s->n == s->alloc) {
		s->alloc = s->alloc ? 2 * s->alloc : 64;
		s->v = realloc(s->v, s->alloc * sizeof(*s->v));
	}
	r = &s->v[s->n++];
	r->type = type;
	r->size = fsize + tsize;
	r->bytes = malloc(r->size + 1);
	memcpy(r->bytes, fixed, fsize);
	if (tsize)
		memcpy(r->bytes + fsize, tail, tsize);
}

static void recset_free(struct recset *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].bytes);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* Write a record both to the file and to the expected set. */
static int put(struct sc_writer *w, struct recset *s, unsigned type,
	       const void *fixed, size_t fsize, const void *tail, size_t tsize)
{
	int ret = sc_writer_add2(w, type, fixed, fsize, tail, tsize);

	if (!ret)
		recset_add(s, type, fixed, fsize, tail, tsize);
	return ret;
}

/* One record of every type, with every field set to a distinct value. */
static int put_all_types(struct sc_writer *w, struct recset *s, uint32_t salt)
{
	static const char argv[] = "./prog\0--flag\0a b c";
	struct sc_rec_session sess = {
		.method = SC_METHOD_INSTRUMENT, .frequency_hz = 0, .os_requested = SC_OS_ALL,
		.flags = SC_SESS_KERNEL, .start_realtime_ns = 1700000000123456789ull + salt,
		.argc = 3, .target_pid = 4242 + salt,
	};
	struct sc_rec_session_end end = {
		.duration_ns = 987654321 + salt, .exit_status = 256, .os_observed = 5,
		.lost_events = 7, .lost_samples = 11,
	};
	struct sc_rec_process proc = {
		.proc_id = 1, .pid = 4242, .ppid = 1, .parent_proc_id = UINT32_MAX,
		.start_ns = 100 + salt, .end_ns = 900,
	};
	struct sc_rec_thread thr = { .proc_id = 1, .tid = 4243 + salt, .start_ns = 110, .end_ns = 890 };
	struct sc_rec_patched patched = {
		.proc_id = 1, .build_id_len = 20, .patched = 100 + salt,
		.unpatched = { [10] = 2, [6] = 3500 }, .base = 0x555555554000ull,
	};
	struct sc_rec_module mod = {
		.proc_id = 1, .build_id_len = 20, .start = 0x555555554000ull, .end = 0x555555558000ull,
		.pgoff = 0x1000, .flags = SC_MOD_EXEC,
	};
	struct sc_rec_cct_node node = {
		.proc_id = 1, .tid = 4243, .id = 5 + salt, .parent = 0, .func = 0x555555555149ull,
		.calls = 10, .elapsed_excl = 1000, .app_excl = 900, .app_excl_exact = 950,
		.completed = 9, .incl_min = 1, .incl_max = 500, .incl_sum = 2000,
		.excl_min = 1, .excl_max = 300, .excl_sum = 1000,
	};
	struct sc_rec_callsite cs = {
		.proc_id = 1, .tid = 4243, .site = 0x5555555551a0ull, .callee = 0x555555555149ull,
		.calls = 10, .elapsed_incl = 2000, .elapsed_excl = 1000, .app_incl = 1800, .app_excl = 900,
	};
	struct sc_rec_thread_stats ts = {
		.proc_id = 1, .tid = 4243, .events = 20 + salt, .lost_events = 0, .repairs = 2,
		.open_frames = 1, .os_count = { 3, 4, 5 }, .first_ns = 111, .last_ns = 889,
	};
	uint64_t ips[5] = { 0x401000, 0x401234, 0x7f0000001000ull, 0x7f0000002000ull, salt };
	struct sc_rec_stack st = { .id = 3 + salt, .nframes = 5, .flags = SC_STACK_ROOT };
	struct sc_rec_samples sm = { .proc_id = 1, .tid = 4243, .stack_id = 3, .count = 77 + salt };
	struct sc_rec_lost lost = { .kind = SC_LOST_SAMPLES, .proc_id = UINT32_MAX, .count = 12 };
	struct sc_rec_probe_cost pc = { .samples = 41, .cost_ps = { 15000, 19000 + salt, 13000, 16000 } };
	struct sc_rec_cct_removed rm = { .proc_id = 1, .tid = 4243, .id = 0, .elapsed_excl = 30 + salt,
					 .app_excl = 20, .app_excl_exact = 25, .incl_sum = 40, .excl_sum = 30 };
	struct sc_rec_cct_samples csm = { .proc_id = 1, .tid = 4243, .id = 5 + salt, .samples = 17 };
	struct sc_rec_thread_more tm = { .proc_id = 1, .tid = 4243, .samples = 20 + salt,
					 .probe_samples = 3, .repairs = { 1, 0, 0, 1, 1, 0 } };
	struct sc_rec_libcall lc = { .proc_id = 1, .addr = 0x7f0000001040ull + salt };
	struct sc_rec_timeline tl = { .proc_id = 1, .tid = 4243, .base_ns = 1000 + salt, .nitems = 1,
				      .dropped = 2, .filtered = 3 };
	static const uint8_t tl_items[] = { 0x28, 0x05, 0x04 };   /* a call: +10 ns, 5 ns, node 1 */
	struct sc_rec_unrecorded un = { .proc_id = 1, .pid = 4300 + salt, .reason = 1 };
	int ret = 0;

	for (int i = 0; i < 20; i++)
		mod.build_id[i] = 0xa0 + i;
	ret |= put(w, s, SC_REC_SESSION, &sess, sizeof(sess), argv, sizeof(argv));
	ret |= put(w, s, SC_REC_PROCESS, &proc, sizeof(proc), "/usr/bin/prog", 14);
	ret |= put(w, s, SC_REC_THREAD, &thr, sizeof(thr), "prog", 5);
	ret |= put(w, s, SC_REC_MODULE, &mod, sizeof(mod), "/usr/lib/libfoo.so.1", 21);
	ret |= put(w, s, SC_REC_PROBE_COST, &pc, sizeof(pc), NULL, 0);
	ret |= put(w, s, SC_REC_CCT_NODE, &node, sizeof(node), NULL, 0);
	ret |= put(w, s, SC_REC_CCT_REMOVED, &rm, sizeof(rm), NULL, 0);
	ret |= put(w, s, SC_REC_CCT_SAMPLES, &csm, sizeof(csm), NULL, 0);
	ret |= put(w, s, SC_REC_CALLSITE, &cs, sizeof(cs), NULL, 0);
	ret |= put(w, s, SC_REC_THREAD_STATS, &ts, sizeof(ts), NULL, 0);
	ret |= put(w, s, SC_REC_THREAD_MORE, &tm, sizeof(tm), NULL, 0);
	ret |= put(w, s, SC_REC_LIBCALL, &lc, sizeof(lc), "memcpy", 7);
	ret |= put(w, s, SC_REC_TIMELINE, &tl, sizeof(tl), tl_items, sizeof(tl_items));
	ret |= put(w, s, SC_REC_UNRECORDED, &un, sizeof(un), "/bin/static", 12);
	ret |= put(w, s, SC_REC_STACK, &st, sizeof(st), ips, sizeof(ips));
	ret |= put(w, s, SC_REC_SAMPLES, &sm, sizeof(sm), NULL, 0);
	ret |= put(w, s, SC_REC_LOST, &lost, sizeof(lost), NULL, 0);
	ret |= put(w, s, SC_REC_PATCHED, &patched, sizeof(patched), NULL, 0);
	ret |= put(w, s, SC_REC_SESSION_END, &end, sizeof(end), NULL, 0);
	return ret;
}

/* ---- reading back ---------------------------------------------------- */

struct readout {
	int status;              /* last sc_reader_next() result */
	size_t matched;          /* records equal to the expected ones, in order */
	size_t nread;
	int mismatch;            /* a record that differs from the expected one */
	int check_failed;        /* sc_record_check() refused a known record */
	int misaligned;          /* a payload not 8-byte aligned */
	int eof_after;           /* EOF after DAMAGED/EOF */
	char damage[256];
};

static struct readout read_back(struct sc_reader *r, const struct recset *want)
{
	struct readout o = { .mismatch = 0 };
	struct sc_record rec;

	while ((o.status = sc_reader_next(r, &rec)) == SC_READ_OK) {
		const struct rec *w = o.nread < want->n ? &want->v[o.nread] : NULL;

		o.nread++;
		if ((uintptr_t)rec.data % 8)
			o.misaligned++;
		if (sc_record_check(&rec))
			o.check_failed++;
		if (w && w->type == rec.type && w->size == rec.size &&
		    !memcmp(w->bytes, rec.data, rec.size) && !o.mismatch)
			o.matched++;
		else
			o.mismatch++;
	}
	if (o.status == SC_READ_DAMAGED && sc_reader_damage(r))
		snprintf(o.damage, sizeof(o.damage), "%s", sc_reader_damage(r));
	o.eof_after = sc_reader_next(r, &rec) == SC_READ_EOF;
	return o;
}

static struct readout read_mem(const void *buf, size_t len, const struct recset *want,
			       int *open_ret, char *err, size_t errlen)
{
	struct sc_reader *r;
	struct readout o = { .status = -1 };

	*open_ret = sc_reader_open_mem(buf, len, &r, err, errlen);
	if (*open_ret)
		return o;
	o = read_back(r, want);
	sc_reader_close(r);
	return o;
}

/* File offsets where chunks start, plus the file size at the end. */
static size_t chunk_bounds(const void *buf, size_t len, uint64_t *bounds, size_t max)
{
	struct sc_reader *r;
	struct sc_record rec;
	size_t n = 0;
	uint64_t last = UINT64_MAX;
	char err[256];

	if (sc_reader_open_mem(buf, len, &r, err, sizeof(err)))
		return 0;
	while (sc_reader_next(r, &rec) == SC_READ_OK) {
		const struct sc_chunk_info *ci = sc_reader_chunk(r);

		if (ci->index != last && n < max) {
			bounds[n++] = ci->offset;
			last = ci->index;
		}
	}
	sc_reader_close(r);
	if (n < max)
		bounds[n++] = len;
	return n;
}

/* ---- tests ------------------------------------------------------------ */

static void test_round_trip(void)
{
	const char *path = tmp_path("all.data");
	struct recset want = { 0 };
	struct sc_writer *w;
	struct sc_reader *r;
	struct readout o;
	char err[256];
	uint8_t *buf;
	size_t len;
	int ret;

	ret = sc_writer_open(path, SC_FEAT_INSTRUMENT | SC_FEAT_SAMPLE, &w);
	is_u64(ret, 0, "writer opens %s", path);
	if (ret)
		return;
	ok(!put_all_types(w, &want, 0), "every record type is accepted by the writer");
	is_u64(sc_writer_close(w), 0, "writer closes");

	ret = sc_reader_open(path, &r, err, sizeof(err));
	is_u64(ret, 0, "reader opens the file");
	if (ret)
		return;
	is_u64(sc_reader_version(r), SC_FILE_VERSION, "file version");
	is_u64(sc_reader_header(r)->min_version, SC_FILE_MIN_VERSION, "file min_version");
	ok((sc_reader_features(r) & (SC_FEAT_INSTRUMENT | SC_FEAT_SAMPLE)) ==
	   (SC_FEAT_INSTRUMENT | SC_FEAT_SAMPLE), "feature bits kept");
	ok(sc_reader_chunk(r) == NULL, "no chunk before the first record");
	o = read_back(r, &want);
	sc_reader_close(r);
	is_u64(o.status, SC_READ_EOF, "file read to a clean EOF");
	is_u64(o.nread, want.n, "as many records as written");
	is_u64(o.matched, want.n, "every record type reads back byte for byte");
	is_u64(o.check_failed, 0, "sc_record_check accepts every written record");
	is_u64(o.misaligned, 0, "payloads are 8-byte aligned");

	/* the same bytes from memory, also at an odd address */
	buf = slurp(path, &len);
	uint8_t *odd = malloc(len + 1);
	memcpy(odd + 1, buf, len);
	o = read_mem(odd + 1, len, &want, &ret, err, sizeof(err));
	is_u64(o.matched, want.n, "the same from an unaligned memory buffer");
	is_u64(o.misaligned, 0, "payloads realigned from an unaligned buffer");
	free(odd);
	free(buf);

	for (unsigned t = 1; t < SC_REC_MAX; t++)
		ok(sc_rec_type_name(t) != NULL, "type %u has a name (%s)", t, sc_rec_type_name(t));
	is_str(sc_rec_type_name(SC_REC_CCT_NODE), "cct_node", "name of cct_node");
	ok(sc_rec_type_name(0) == NULL && sc_rec_type_name(SC_REC_MAX) == NULL &&
	   sc_rec_type_name(999) == NULL, "no name for unknown types");
	recset_free(&want);
}

static void test_many_chunks(void)
{
	const char *path = tmp_path("many.data");
	enum { N = 200000 };
	struct sc_writer *w;
	struct sc_reader *r;
	struct sc_record rec;
	uint64_t last_chunk = UINT64_MAX, nchunks = 0, nzstd = 0, raw_total = 0, bad = 0, n = 0;
	char err[256];
	int ret;
	struct stat st;

	ret = sc_writer_open(path, SC_FEAT_INSTRUMENT, &w);
	if (!ok(!ret, "writer opens for many records"))
		return;
	/* a calling-context tree as the recorder would write it: ids rising,
	 * counters varying, functions from a small set */
	for (uint32_t i = 0; i < N && !ret; i++) {
		struct sc_rec_cct_node node = {
			.proc_id = 1, .tid = 100 + i % 4, .id = i, .parent = i / 3,
			.func = 0x401000 + (i * 2654435761u % 512) * 64, .calls = i % 97 + 1,
			.elapsed_excl = (uint64_t)i * 1237 % 100000, .app_excl = i % 5000,
			.app_excl_exact = i % 6000, .completed = i % 97,
			.incl_min = 40, .incl_max = 4000 + i % 77, .incl_sum = (uint64_t)i * 91,
			.excl_min = 20, .excl_max = 2000, .excl_sum = (uint64_t)i * 45,
		};
		ret = sc_writer_add(w, SC_REC_CCT_NODE, &node, sizeof(node));
	}
	is_u64(ret, 0, "%d cct_node records written", N);
	is_u64(sc_writer_close(w), 0, "writer closes");

	ret = sc_reader_open(path, &r, err, sizeof(err));
	if (!ok(!ret, "reader opens the big file"))
		return;
	ok(sc_reader_features(r) & SC_FEAT_ZSTD, "zstd feature bit set after compressing");
	while ((ret = sc_reader_next(r, &rec)) == SC_READ_OK) {
		const struct sc_chunk_info *ci = sc_reader_chunk(r);
		const struct sc_rec_cct_node *node = rec.data;

		if (ci->index != last_chunk) {
			last_chunk = ci->index;
			nchunks++;
			nzstd += !!(ci->flags & SC_CHUNK_ZSTD);
			raw_total += ci->raw_size;
		}
		if (rec.type != SC_REC_CCT_NODE || sc_record_check(&rec) || node->id != n ||
		    node->incl_sum != (uint64_t)n * 91)
			bad++;
		n++;
	}
	sc_reader_close(r);
	is_u64(ret, SC_READ_EOF, "read to a clean EOF");
	is_u64(n, N, "every record read back");
	is_u64(bad, 0, "in order, with their values");
	ok(nchunks >= 10, "spread over several chunks (%" PRIu64 ")", nchunks);
	is_u64(nzstd, nchunks, "every chunk compressed");
	stat(path, &st);
	tap_diag("%d cct_node records: %.1f bytes per record on disk (%zu raw), "
		 "compression ratio %.1f, %" PRIu64 " chunks",
		 N, (double)st.st_size / N, sizeof(struct sc_rec_header) + sizeof(struct sc_rec_cct_node),
		 (double)raw_total / st.st_size, nchunks);
}

static void test_big_records(void)
{
	const char *path = tmp_path("big.data");
	struct recset want = { 0 };
	struct sc_writer *w;
	struct readout o;
	struct sc_rec_stack st = { .id = 1, .nframes = UINT16_MAX };
	uint64_t *ips = malloc(UINT16_MAX * sizeof(*ips));
	char *huge = calloc(1, SC_CHUNK_MAX_RAW);
	char err[256];
	uint8_t *buf;
	size_t len;
	int ret;

	for (size_t i = 0; i < UINT16_MAX; i++)
		ips[i] = 0x400000 + i * 7919 % 100000;
	if (!ok(!sc_writer_open(path, SC_FEAT_SAMPLE, &w), "writer opens for big records"))
		return;
	is_u64(put(w, &want, SC_REC_STACK, &st, sizeof(st), ips, UINT16_MAX * sizeof(*ips)), 0,
	       "a stack of 65535 frames is accepted");
	is_u64(sc_writer_add(w, SC_REC_THREAD, huge, SC_CHUNK_MAX_RAW), -E2BIG,
	       "a record above the chunk limit is refused with -E2BIG");
	is_u64(sc_writer_add(w, 0, &st, sizeof(st)), -EINVAL, "record type 0 is refused");
	is_u64(put(w, &want, SC_REC_LOST, &(struct sc_rec_lost){ .kind = 1, .count = 3 },
		   sizeof(struct sc_rec_lost), NULL, 0), 0, "the writer goes on after a refusal");
	is_u64(sc_writer_close(w), 0, "writer closes");
	buf = slurp(path, &len);
	o = read_mem(buf, len, &want, &ret, err, sizeof(err));
	is_u64(o.matched, want.n, "the big stack and the next record read back");
	is_u64(o.status, SC_READ_EOF, "clean EOF");
	free(buf);
	free(ips);
	free(huge);
	recset_free(&want);
}

/* A small file with several chunks, some compressed, some not. */
static void write_small_file(const char *path, struct recset *want, uint64_t *bounds,
			     size_t *nbounds, uint8_t **buf, size_t *len)
{
	struct sc_writer *w;
	uint8_t noise[200];

	if (sc_writer_open(path, SC_FEAT_INSTRUMENT, &w)) {
		ok(0, "writer opens %s", path);
		exit(1);
	}
	put_all_types(w, want, 0);
	sc_writer_flush(w);
	/* random bytes do not compress: a stored chunk */
	for (size_t i = 0; i < sizeof(noise); i++)
		noise[i] = (uint8_t)(i * 2654435761u >> 13);
	put(w, want, 200, noise, sizeof(noise), NULL, 0);
	put(w, want, SC_REC_THREAD, &(struct sc_rec_thread){ .tid = 9 }, sizeof(struct sc_rec_thread),
	    "x", 2);
	sc_writer_flush(w);
	put_all_types(w, want, 1);
	sc_writer_flush(w);
	put(w, want, SC_REC_SAMPLES, &(struct sc_rec_samples){ .tid = 3, .count = 5 },
	    sizeof(struct sc_rec_samples), NULL, 0);
	sc_writer_close(w);
	*buf = slurp(path, len);
	*nbounds = chunk_bounds(*buf, *len, bounds, 16);
}

/* How many of want's records lie in the chunks that end at or before off. */
static size_t records_before(const uint64_t *bounds, size_t nb, const size_t *per_chunk,
			     uint64_t off)
{
	size_t n = 0;

	for (size_t c = 0; c + 1 < nb; c++)
		if (bounds[c + 1] <= off)
			n += per_chunk[c];
	return n;
}

static void count_per_chunk(const void *buf, size_t len, size_t *per_chunk, int keep_unknown)
{
	struct sc_reader *r;
	struct sc_record rec;
	char err[256];

	if (sc_reader_open_mem(buf, len, &r, err, sizeof(err)))
		return;
	sc_reader_keep_unknown(r, keep_unknown);
	while (sc_reader_next(r, &rec) == SC_READ_OK)
		per_chunk[sc_reader_chunk(r)->index]++;
	sc_reader_close(r);
}

/* want without records of unknown types (what a default reader returns) */
static void known_only(const struct recset *all, struct recset *out)
{
	for (size_t i = 0; i < all->n; i++)
		if (sc_rec_type_name(all->v[i].type))
			recset_add(out, all->v[i].type, all->v[i].bytes, all->v[i].size, NULL, 0);
}

static void test_truncation(void)
{
	const char *path = tmp_path("small.data"), *cut = tmp_path("cut.data");
	struct recset all = { 0 }, want = { 0 };
	uint64_t bounds[16];
	size_t nb, len, per_chunk[16] = { 0 };
	size_t bad_mem = 0, bad_file = 0, refused = 0, damaged_n = 0, clean = 0;
	uint8_t *buf;
	char err[256];

	write_small_file(path, &all, bounds, &nb, &buf, &len);
	known_only(&all, &want);
	count_per_chunk(buf, len, per_chunk, 0);
	ok(nb == 5, "small file has 4 chunks (%zu bounds, %zu bytes)", nb, len);

	for (size_t cutlen = 0; cutlen < len; cutlen++) {
		size_t expect = records_before(bounds, nb, per_chunk, cutlen);
		int at_bound = 0;
		struct readout o;
		int ret;

		for (size_t c = 0; c < nb; c++)
			at_bound |= bounds[c] == cutlen;
		o = read_mem(buf, cutlen, &want, &ret, err, sizeof(err));
		if (cutlen < sizeof(struct sc_file_header)) {
			if (ret == -EINVAL && (strstr(err, "truncated") || strstr(err, "empty")))
				refused++;
			else
				bad_mem++;
		} else if (ret || o.nread != expect || o.matched != expect || !o.eof_after ||
			   o.status != (at_bound ? SC_READ_EOF : SC_READ_DAMAGED) ||
			   (!at_bound && !strstr(o.damage, "at byte"))) {
			if (bad_mem++ < 3)
				tap_diag("cut at %zu: ret %d status %d read %zu matched %zu want %zu '%s'",
					 cutlen, ret, o.status, o.nread, o.matched, expect, o.damage);
		} else {
			damaged_n += !at_bound;
			clean += at_bound;
		}

		/* the same through a real file */
		spill(cut, buf, cutlen);
		struct sc_reader *r;
		ret = sc_reader_open(cut, &r, err, sizeof(err));
		if (cutlen < sizeof(struct sc_file_header)) {
			bad_file += !(ret == -EINVAL && (strstr(err, "truncated") || strstr(err, "empty")));
			continue;
		}
		if (ret) {
			bad_file++;
			continue;
		}
		o = read_back(r, &want);
		sc_reader_close(r);
		bad_file += o.matched != expect || o.nread != expect ||
			    o.status != (at_bound ? SC_READ_EOF : SC_READ_DAMAGED);
	}
	is_u64(bad_mem, 0, "memory: every cut of a %zu-byte file gives the intact records "
	       "of complete chunks, then DAMAGED (or EOF at a chunk boundary)", len);
	is_u64(bad_file, 0, "file: the same through read()");
	is_u64(refused, sizeof(struct sc_file_header), "cuts inside the file header are refused");
	is_u64(clean, nb - 1, "cuts at chunk boundaries read cleanly");
	is_u64(damaged_n, len - sizeof(struct sc_file_header) - (nb - 1),
	       "all other cuts report damage");

	free(buf);
	recset_free(&all);
	recset_free(&want);
}

static void test_bit_flips(void)
{
	const char *path = tmp_path("flip.data");
	struct recset all = { 0 }, want = { 0 };
	uint64_t bounds[16];
	size_t nb, len, per_chunk[16] = { 0 };
	size_t undetected = 0, header_bad = 0, flips = 0;
	uint8_t *buf;
	char err[256];

	write_small_file(path, &all, bounds, &nb, &buf, &len);
	known_only(&all, &want);
	count_per_chunk(buf, len, per_chunk, 0);

	for (size_t byte = 0; byte < len; byte++) {
		for (int bit = 0; bit < 8; bit++) {
			struct readout o;
			size_t c = 0, expect;
			int ret;

			buf[byte] ^= 1u << bit;
			o = read_mem(buf, len, &want, &ret, err, sizeof(err));
			buf[byte] ^= 1u << bit;
			flips++;
			if (byte < sizeof(struct sc_file_header)) {
				/* refused, or harmless (version, features, reserved) */
				header_bad += !(ret ? ret == -EINVAL || ret == -EPROTONOSUPPORT
					       : o.status == SC_READ_EOF && o.matched == want.n);
				continue;
			}
			while (c + 1 < nb && bounds[c + 1] <= byte)
				c++;
			expect = records_before(bounds, nb, per_chunk, bounds[c]);
			if (ret || o.status != SC_READ_DAMAGED || o.matched != expect ||
			    o.nread != expect || !o.eof_after) {
				if (undetected++ < 3)
					tap_diag("flip byte %zu bit %d: status %d read %zu want %zu",
						 byte, bit, o.status, o.nread, expect);
			}
		}
	}
	is_u64(undetected, 0, "every single-bit flip in a chunk (%zu) is reported as damage "
	       "after the intact chunks before it", flips - 8 * sizeof(struct sc_file_header));
	is_u64(header_bad, 0, "flips in the file header are refused or harmless");
	free(buf);
	recset_free(&all);
	recset_free(&want);
}

static void test_refusals(void)
{
	const char *path = tmp_path("hdr.data");
	struct sc_file_header h = { .version = 1, .min_version = 1 };
	struct sc_reader *r = NULL;
	char err[256];
	int ret;

	memcpy(h.magic, "ELF\x7f....", 8);
	ret = sc_reader_open_mem(&h, sizeof(h), &r, err, sizeof(err));
	is_u64(ret, -EINVAL, "bad magic refused");
	is_str(err, "not a stackclock data file (bad magic)", "bad magic message");
	ok(r == NULL, "no reader on refusal");

	spill(path, &h, sizeof(h));
	ret = sc_reader_open(path, &r, err, sizeof(err));
	ok(ret == -EINVAL && !strcmp(err, "not a stackclock data file (bad magic)"),
	   "bad magic refused from a file: %s", err);

	memcpy(h.magic, SC_FILE_MAGIC, 8);
	h.version = 7;
	h.min_version = 7;
	ret = sc_reader_open_mem(&h, sizeof(h), &r, err, sizeof(err));
	is_u64(ret, -EPROTONOSUPPORT, "future min_version refused");
	is_str(err, "data file is version 7, this stackclock reads up to 1: upgrade stackclock",
	       "future version message");

	h.min_version = 1;
	ret = sc_reader_open_mem(&h, sizeof(h), &r, err, sizeof(err));
	is_u64(ret, 0, "a newer file that old readers may read (min_version 1) opens");
	is_u64(sc_reader_version(r), 7, "its version is reported");
	sc_reader_close(r);

	h.version = 1;
	h.min_version = 2;
	ret = sc_reader_open_mem(&h, sizeof(h), &r, err, sizeof(err));
	ok(ret == -EINVAL && strstr(err, "corrupt"), "min_version above version refused: %s", err);

	ret = sc_reader_open_mem(&h, 12, &r, err, sizeof(err));
	ok(ret == -EINVAL && strstr(err, "truncated"), "short header refused: %s", err);
	ret = sc_reader_open_mem(&h, 0, &r, err, sizeof(err));
	ok(ret == -EINVAL && strstr(err, "empty"), "empty file refused: %s", err);
	ret = sc_reader_open_mem(NULL, 0, &r, err, sizeof(err));
	ok(ret == -EINVAL && strstr(err, "empty") && !r, "no buffer at all refused: %s", err);

	ret = sc_reader_open(tmp_path("missing.data"), &r, err, sizeof(err));
	is_u64(ret, -ENOENT, "missing file: -ENOENT");
	is_str(err, "no such file (record one with 'stackclock record', or name it with -i FILE)",
	       "missing file message");
	ret = sc_reader_open(tmpdir, &r, err, sizeof(err));
	is_u64(ret, -EISDIR, "a directory is refused: -EISDIR");
	is_str(err, "is a directory, not a data file (name the file with -i FILE)",
	       "directory message");
	ret = sc_reader_open("/dev/null", &r, err, sizeof(err));
	ok(ret == -EINVAL && strstr(err, "empty"), "/dev/null is an empty file: %s", err);

	sc_reader_close(NULL);
	is_u64(sc_writer_close(NULL), 0, "closing NULL is fine");
}

static void test_unknown_types(void)
{
	const char *path = tmp_path("unknown.data");
	struct recset want = { 0 };
	struct sc_writer *w;
	struct sc_reader *r;
	struct sc_record rec;
	uint64_t future[4] = { 1, 2, 3, 4 };
	unsigned types[8], n = 0;
	char err[256];

	if (!ok(!sc_writer_open(path, 0, &w), "writer opens"))
		return;
	put(w, &want, SC_REC_LOST, &(struct sc_rec_lost){ .kind = 2, .count = 1 },
	    sizeof(struct sc_rec_lost), NULL, 0);
	put(w, &want, 4000, future, sizeof(future), NULL, 0);
	put(w, &want, SC_REC_MAX, future, 3, NULL, 0);
	put(w, &want, SC_REC_LOST, &(struct sc_rec_lost){ .kind = 3, .count = 2 },
	    sizeof(struct sc_rec_lost), NULL, 0);
	sc_writer_close(w);

	if (sc_reader_open(path, &r, err, sizeof(err)))
		return;
	while (sc_reader_next(r, &rec) == SC_READ_OK && n < 8)
		types[n++] = rec.type;
	sc_reader_close(r);
	ok(n == 2 && types[0] == SC_REC_LOST && types[1] == SC_REC_LOST,
	   "unknown record types are skipped (%u records returned)", n);

	if (sc_reader_open(path, &r, err, sizeof(err)))
		return;
	sc_reader_keep_unknown(r, 1);
	struct readout o = read_back(r, &want);
	sc_reader_close(r);
	is_u64(o.matched, 4, "with keep_unknown they are returned intact");
	is_u64(o.check_failed, 0, "sc_record_check passes unknown types");
	recset_free(&want);
}

static int check(unsigned type, const void *data, uint32_t size)
{
	struct sc_record rec = { .type = type, .size = size, .data = data };

	return sc_record_check(&rec);
}

static void test_record_check(void)
{
	union {
		uint64_t align;
		uint8_t b[256];
	} u;
	struct sc_rec_session *sess = (void *)u.b;
	struct sc_rec_stack *st = (void *)u.b;
	struct sc_rec_module *mod = (void *)u.b;
	char *tail;

	memset(&u, 0, sizeof(u));
	for (unsigned t = 1; t < SC_REC_MAX; t++)
		ok(check(t, u.b, 0) == -EINVAL, "empty %s refused", sc_rec_type_name(t));
	is_u64(check(SC_REC_CCT_NODE, u.b, sizeof(struct sc_rec_cct_node) - 1), -EINVAL,
	       "cct_node one byte short refused");
	is_u64(check(SC_REC_CCT_NODE, u.b, sizeof(struct sc_rec_cct_node) + 16), 0,
	       "cct_node with extra trailing fields accepted (records grow at their end)");

	tail = (char *)(sess + 1);
	sess->argc = 2;
	memcpy(tail, "ab\0cd\0", 6);
	is_u64(check(SC_REC_SESSION, u.b, sizeof(*sess) + 6), 0, "session with 2 argv strings");
	is_u64(check(SC_REC_SESSION, u.b, sizeof(*sess) + 5), -EINVAL,
	       "session whose last argv string is cut refused");
	sess->argc = 3;
	is_u64(check(SC_REC_SESSION, u.b, sizeof(*sess) + 6), -EINVAL,
	       "session with fewer strings than argc refused");
	sess->argc = UINT32_MAX;
	is_u64(check(SC_REC_SESSION, u.b, sizeof(*sess) + 6), -EINVAL, "session with argc 2^32-1 refused");

	memset(&u, 0, sizeof(u));
	tail = (char *)(mod + 1);
	memcpy(tail, "/lib", 4);
	is_u64(check(SC_REC_MODULE, u.b, sizeof(*mod) + 4), -EINVAL, "module path without NUL refused");
	is_u64(check(SC_REC_MODULE, u.b, sizeof(*mod) + 5), 0, "module path with NUL accepted");
	mod->build_id_len = 21;
	is_u64(check(SC_REC_MODULE, u.b, sizeof(*mod) + 5), -EINVAL, "build_id_len 21 refused");
	is_u64(check(SC_REC_THREAD, u.b, sizeof(struct sc_rec_thread)), -EINVAL,
	       "thread without its name refused");

	memset(&u, 0, sizeof(u));
	st->nframes = 3;
	is_u64(check(SC_REC_STACK, u.b, sizeof(*st) + 24), 0, "stack of 3 ips");
	is_u64(check(SC_REC_STACK, u.b, sizeof(*st) + 23), -EINVAL, "stack with 3 ips cut refused");
	st->nframes = UINT16_MAX;
	is_u64(check(SC_REC_STACK, u.b, 200), -EINVAL, "stack with nframes 65535 in 200 bytes refused");
}

static void test_names(void)
{
	is_str(sc_rec_type_name(SC_REC_CCT_NODE), "cct_node", "record type name");
	ok(sc_rec_type_name(0) == NULL && sc_rec_type_name(SC_REC_MAX) == NULL,
	   "no name for type 0 or past the last");
	is_str(sc_os_cat_name(SC_OS_SWITCH), "switch", "OS category 0");
	is_str(sc_os_cat_name(SC_OS_SYSCALL), "syscall", "OS category 1");
	is_str(sc_os_cat_name(SC_OS_FAULT), "fault", "OS category 2");
	ok(sc_os_cat_name(SC_OS_NCAT) == NULL, "no name past the last OS category");
}

/* An ELF header with n program headers of the given types, into b. */
static size_t fake_elf(uint8_t *b, size_t cap, unsigned char cls, uint16_t machine, const uint32_t *types, int n)
{
	Elf64_Ehdr *e = (Elf64_Ehdr *)b;

	memset(b, 0, cap);
	memcpy(e->e_ident, ELFMAG, SELFMAG);
	e->e_ident[EI_CLASS] = cls;
	e->e_machine = machine;
	e->e_phoff = sizeof(*e);
	e->e_phentsize = sizeof(Elf64_Phdr);
	e->e_phnum = (uint16_t)n;
	for (int i = 0; i < n; i++)
		((Elf64_Phdr *)(b + sizeof(*e)))[i].p_type = types[i];
	return sizeof(*e) + (size_t)n * sizeof(Elf64_Phdr);
}

/* format/execcheck.h: why a program cannot take the runtime. */
static void test_exec_check(void)
{
	uint8_t b[1024];
	const uint32_t dyn[] = { PT_PHDR, PT_INTERP, PT_LOAD, PT_DYNAMIC }, stat[] = { PT_LOAD, PT_NOTE };
	size_t n;

	n = fake_elf(b, sizeof(b), ELFCLASS64, EM_X86_64, dyn, 4);
	is_u64(sc_exec_check_elf(b, n), SC_EXEC_OK, "a dynamic x86-64 program: ok");
	is_u64(sc_exec_check_elf(b, n - 1), SC_EXEC_OK, "program headers cut short: not judged (ok)");
	n = fake_elf(b, sizeof(b), ELFCLASS64, EM_X86_64, stat, 2);
	is_u64(sc_exec_check_elf(b, n), SC_EXEC_STATIC, "no PT_INTERP: statically linked");
	n = fake_elf(b, sizeof(b), ELFCLASS32, EM_386, dyn, 0);
	is_u64(sc_exec_check_elf(b, EI_NIDENT), SC_EXEC_ELF32, "ELFCLASS32: a 32-bit program");
	n = fake_elf(b, sizeof(b), ELFCLASS64, EM_AARCH64, dyn, 4);
	is_u64(sc_exec_check_elf(b, n), SC_EXEC_NOLOAD, "another machine's: not loadable");
	memcpy(b, "#!/bin/sh\n", 10);
	is_u64(sc_exec_check_elf(b, 10), SC_EXEC_OK, "a script: ok (its interpreter is judged)");
	/* root runs a set-user-ID program of nobody's: AT_SECURE; its own: not */
	ok(sc_exec_secure(S_IFREG | S_ISUID | 0755, 65534, 0, 0, 0, 0, 0), "set-user-ID to another user: secure");
	ok(!sc_exec_secure(S_IFREG | S_ISUID | 0755, 0, 0, 0, 0, 0, 0), "set-user-ID to the same user: not");
	ok(sc_exec_secure(S_IFREG | S_ISGID | 0755, 0, 50, 0, 0, 0, 0), "set-group-ID to another group: secure");
	ok(!sc_exec_secure(S_IFREG | S_ISGID | 0745, 0, 50, 0, 0, 0, 0),
	   "set-group-ID without group execute (mandatory locking): not");
	ok(sc_exec_secure(S_IFREG | 0755, 0, 0, 1000, 0, 1000, 1000), "euid already not ruid: secure");
	is_str(sc_exec_why_text(SC_EXEC_STATIC), "statically linked", "reason text");
}

/*
 * A recorder that dies leaves the file it was replacing as it was, and the
 * chunks it flushed in its temporary file beside it (.NAME.XXXXXX); a
 * half-written chunk there is damage.
 */
static void test_crash(void)
{
	const char *path = tmp_path("crash.data");
	struct recset want = { 0 }, unflushed = { 0 }, old = { 0 };
	char pattern[4200];
	uint8_t *before, *after;
	size_t before_len, after_len;
	glob_t g;
	int status;
	pid_t pid;

	/* the child's records, computed the same way here */
	struct sc_writer *dummy;
	sc_writer_open(tmp_path("dummy.data"), 0, &dummy);
	put_all_types(dummy, &want, 0);
	put_all_types(dummy, &unflushed, 5);
	sc_writer_close(dummy);

	/* the file the dying writer replaces */
	sc_writer_open(path, 0, &dummy);
	put_all_types(dummy, &old, 9);
	ok(sc_writer_close(dummy) == 0, "a first file written");
	before = slurp(path, &before_len);

	pid = fork();
	if (pid == 0) {
		struct recset scratch = { 0 };
		struct sc_writer *w;

		if (sc_writer_open(path, 0, &w))
			_exit(1);
		put_all_types(w, &scratch, 0);
		sc_writer_flush(w);
		put_all_types(w, &scratch, 5);
		abort();
	}
	waitpid(pid, &status, 0);
	ok(WIFSIGNALED(status), "the writing child died");
	after = slurp(path, &after_len);
	ok(after_len == before_len && !memcmp(before, after, before_len),
	   "the file it was replacing is byte for byte as before (%zu bytes)", after_len);
	free(before);
	free(after);
	/* the temporary has no name until the rename (O_TMPFILE): a writer
	 * that dies leaves nothing beside the file it was replacing */
	snprintf(pattern, sizeof(pattern), "%s/.crash.data.*", tmpdir);
	ok(glob(pattern, 0, NULL, &g) == GLOB_NOMATCH, "the dead writer left no temporary file beside it");
	globfree(&g);
	recset_free(&want);
	recset_free(&unflushed);
	recset_free(&old);

	/* given up: no temporary left, the destination as it was */
	before = slurp(path, &before_len);
	if (ok(sc_writer_open(path, 0, &dummy) == 0, "writer opens again")) {
		put_all_types(dummy, &old, 3);
		sc_writer_discard(dummy);
		after = slurp(path, &after_len);
		ok(after_len == before_len && !memcmp(before, after, before_len),
		   "a discarded write leaves the file as it was");
		free(after);
		ok(glob(pattern, 0, NULL, &g) == GLOB_NOMATCH, "and no temporary file");
		recset_free(&old);
	}
	free(before);

	is_u64(sc_writer_open(tmp_path("no/such/dir.data"), 0, &dummy), -ENOENT,
	       "writer in a missing directory: -ENOENT");
	if (access("/dev/full", W_OK) == 0)
		is_u64(sc_writer_open("/dev/full", 0, &dummy), -ENOSPC,
		       "writer on a full disk: -ENOSPC");
}

/* ---- stackclock dump -------------------------------------------------- */

static int run(const char *cmd, char *out, size_t outlen)
{
	FILE *f = popen(cmd, "r");
	size_t n = 0, got;
	char sink[4096];
	int status;

	if (!f)
		return -1;
	while ((got = fread(out + n, 1, outlen - 1 - n, f)) > 0)
		n += got;
	out[n] = '\0';
	while (fread(sink, 1, sizeof(sink), f) > 0)
		;
	status = pclose(f);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_dump(void)
{
	const char *tool = getenv("STACKCLOCK");
	const char *path = tmp_path("dump.data"), *cut = tmp_path("dumpcut.data");
	static char out[1 << 16];
	struct recset all = { 0 };
	uint64_t bounds[16];
	size_t nb, len;
	uint8_t *buf;
	char cmd[1024];
	int st;

	if (!tool || access(tool, X_OK)) {
		ok(1, "# SKIP stackclock dump: $STACKCLOCK not set");
		return;
	}
	write_small_file(path, &all, bounds, &nb, &buf, &len);

	snprintf(cmd, sizeof(cmd), "%s dump -i %s 2>&1", tool, path);
	st = run(cmd, out, sizeof(out));
	is_u64(st, 0, "dump of a good file exits 0");
	ok(strstr(out, "STKCLOCK") && strstr(out, "version 1"), "dump shows the file header");
	ok(strstr(out, "\nchunk 0 at byte 24: ") && strstr(out, " records, crc 0x") && strstr(out, " ok\n"),
	   "dump shows chunks");
	ok(strstr(out, "argv=[\"./prog\", \"--flag\", \"a b c\"]"), "dump shows the session's argv");
	ok(strstr(out, "ips=[0x401000 0x401234 0x7f0000001000"), "dump shows a stack's ips in hex");
	ok(strstr(out, "type 200, 200 bytes"), "dump shows unknown types by number and size");
	ok(strstr(out, "build_id=a0a1a2a3"), "dump shows build ids");
	ok(strstr(out, "path=\"/usr/lib/libfoo.so.1\""), "dump shows a module's path");
	ok(strstr(out, "samples=20 probe_samples=3 repairs_longjmp=1 repairs_exception=0 "
		   "repairs_signal=0 repairs_other=1 repairs_exit=1 repairs_kill=0"),
	   "dump shows a thread_more record's counts and causes by name");
	ok(strstr(out, "id=5 samples=17"), "dump shows a cct_samples record's node and samples");
	ok(strstr(out, "libcall proc_id=1 addr=0x7f0000001040 name=\"memcpy\""),
	   "dump shows a libcall record's address and name");
	ok(strstr(out, "timeline proc_id=1 tid=4243 base_ns=1000 nitems=1 dropped=2 filtered=3"),
	   "dump shows a timeline record's thread, items and counts");
	ok(strstr(out, "unrecorded proc_id=1 pid=4300 reason=1 (") && strstr(out, "path=\"/bin/static\""),
	   "dump shows an unrecorded record's pid, reason and path");
	for (unsigned t = 1; t < SC_REC_MAX; t++) {
		char name[32];
		snprintf(name, sizeof(name), "\n  %s ", sc_rec_type_name(t));
		ok(strstr(out, name), "dump shows a %s record", sc_rec_type_name(t));
	}

	spill(cut, buf, bounds[2] + 30);
	snprintf(cmd, sizeof(cmd), "%s dump -i %s 2>&1", tool, cut);
	st = run(cmd, out, sizeof(out));
	is_u64(st, 1, "dump of a truncated file exits 1");
	snprintf(cmd, sizeof(cmd), "warning: %s: truncated chunk at byte %" PRIu64, cut, bounds[2]);
	ok(strstr(out, cmd), "warning names the file, the offset and the problem");
	ok(strstr(out, "session_end"), "records before the damage are shown");

	/* --stacks warns alike (it printed nothing and exited 0) */
	snprintf(cmd, sizeof(cmd), "%s dump --stacks -i %s 2>&1", tool, cut);
	st = run(cmd, out, sizeof(out));
	is_u64(st, 1, "dump --stacks of a truncated file exits 1");
	snprintf(cmd, sizeof(cmd), "stackclock: warning: %s is damaged (truncated chunk at byte %" PRIu64
		 " (", cut, bounds[2]);
	ok(strstr(out, cmd) && strstr(out, "); the stacks read before the damage are shown above\n"),
	   "dump --stacks: the warning names the file, the offset and the problem: %s", out);
	snprintf(cmd, sizeof(cmd), "%s dump --stacks -i %s 2>&1", tool, path);
	st = run(cmd, out, sizeof(out));
	ok(st == 0 && !strstr(out, "damaged"), "dump --stacks of the whole file: status %d, no damage", st);

	snprintf(cmd, sizeof(cmd), "cd %s && %s dump 2>&1", tmpdir, tool);
	st = run(cmd, out, sizeof(out));
	is_u64(st, 1, "dump without a stackclock.data exits 1");
	is_str(out, "stackclock: stackclock.data: no such file (record one with "
	       "'stackclock record', or name it with -i FILE)\n", "missing file message");

	snprintf(cmd, sizeof(cmd), "%s dump --bogus 2>&1", tool);
	st = run(cmd, out, sizeof(out));
	is_u64(st, 2, "unknown option exits 2");
	ok(strchr(out, '\n') == out + strlen(out) - 1, "with one line: %s", out);

	/* named fields: OS categories as --os-events spells them, lost kinds */
	{
		struct sc_writer *w;
		struct sc_rec_session se = { .method = SC_METHOD_INSTRUMENT,
			.os_requested = SC_OS_BIT(SC_OS_SWITCH) | SC_OS_BIT(SC_OS_FAULT) };
		struct sc_rec_thread_stats ts = { .os_count = { 1, 2, 3 } };
		int bad = sc_writer_open(cut, SC_FEAT_INSTRUMENT, &w);

		bad |= sc_writer_add(w, SC_REC_SESSION, &se, sizeof(se));
		bad |= sc_writer_add(w, SC_REC_THREAD_STATS, &ts, sizeof(ts));
		for (uint32_t k = SC_LOST_SAMPLES; k <= SC_LOST_UNHOOKED + 1; k++)
			bad |= sc_writer_add(w, SC_REC_LOST, &(struct sc_rec_lost){ .kind = k, .count = k },
					     sizeof(struct sc_rec_lost));
		bad |= sc_writer_close(w);
		ok(!bad, "file with named fields written");
	}
	snprintf(cmd, sizeof(cmd), "%s dump -i %s 2>&1", tool, cut);
	st = run(cmd, out, sizeof(out));
	ok(st == 0 && strstr(out, " os_requested=switch,fault "), "OS categories named: %d", st);
	ok(strstr(out, " os_switch=1 os_syscall=2 os_fault=3 ") != NULL, "per-category counts named");
	ok(strstr(out, "kind=samples ") && strstr(out, "kind=events ") && strstr(out, "kind=unwind ") &&
	   strstr(out, "kind=os_records ") && strstr(out, "kind=unhooked ") && strstr(out, "kind=6 "),
	   "every lost kind named, unknown by number");

	spill(cut, "hello world, not a profile", 26);
	snprintf(cmd, sizeof(cmd), "%s dump -i %s 2>&1", tool, cut);
	st = run(cmd, out, sizeof(out));
	ok(st == 1 && strstr(out, "not a stackclock data file (bad magic)"),
	   "dump of another file: status %d, %s", st, out);
	free(buf);
	recset_free(&all);
}

int main(void)
{
	char cmd[300];

	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_round_trip();
	test_many_chunks();
	test_big_records();
	test_truncation();
	test_bit_flips();
	test_refusals();
	test_unknown_types();
	test_record_check();
	test_names();
	test_exec_check();
	test_crash();
	test_dump();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd))
		tap_diag("could not remove %s", tmpdir);
	return tap_done();
}
