/*
 * --format pprof: a gzip-compressed perftools.profiles.Profile
 * (src/output/proto/profile.proto, encoded by protobuf-c), for go tool
 * pprof and the continuous-profiling servers that read it.
 *
 * Sample types: sampling "samples/count" and "cpu/nanoseconds" (samples
 * times the sampling period); instrumentation "calls/count",
 * "elapsed/nanoseconds" and "application/nanoseconds", and "samples/count"
 * when the recording sampled its threads (SPEC section 14: a node's
 * samples; those with no call open have no stack and are left out).  One Sample per
 * node of the calling-context tree split by thread, holding the node's own
 * (exclusive) values and the labels pid and tid; its locations run from
 * the leaf to the thread's root.  pprof's flat is then the exclusive value
 * and its cum the inclusive one, a function counted once per stack as in
 * the report.  An inline frame shares its location with the function its
 * code sits in (several lines, innermost first).  Locations are
 * deduplicated by their sequence of functions.  Functions carry the name,
 * the mangled name and the source file; mappings the module's path and
 * build-id.  The profile holds symbolized frames, not addresses.
 */
#include "output/export.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "analysis/cct.h"
#include "output/proto/profile.pb-c.h"   /* generated, build/gen/ */
#include "util/util.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Label Label;

/* ---- string table: content-keyed, entry 0 is "" ------------------------- */

struct strtab {
	char **v;
	size_t n, alloc;
	uint32_t *slots;          /* open addressing: index + 1, 0 = empty */
	size_t cap;
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static void str_rehash(struct strtab *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024;

	free(t->slots);
	t->slots = xcalloc(cap, sizeof(*t->slots));
	t->cap = cap;
	for (size_t i = 0; i < t->n; i++) {
		size_t j = str_hash(t->v[i]) & (cap - 1);

		while (t->slots[j])
			j = (j + 1) & (cap - 1);
		t->slots[j] = (uint32_t)i + 1;
	}
}

static int64_t str_id(struct strtab *t, const char *s)
{
	size_t j;

	if (!s)
		s = "";
	if (2 * (t->n + 1) > t->cap)
		str_rehash(t);
	for (j = str_hash(s) & (t->cap - 1); t->slots[j]; j = (j + 1) & (t->cap - 1))
		if (!strcmp(t->v[t->slots[j] - 1], s))
			return t->slots[j] - 1;
	ALLOC_GROW(t->v, t->n + 1, t->alloc);
	t->v[t->n] = (char *)s;       /* owned by the profile, or a literal */
	t->slots[j] = (uint32_t)++t->n;
	return (int64_t)t->n - 1;
}

/* ---- locations: a run of functions (inline frames, then their host) ----- */

struct locset {
	Location **v;
	size_t n, alloc;
	uint32_t *slots;          /* index + 1 */
	size_t cap;
	uint64_t *hash;           /* per location */
};

static uint64_t run_hash(const uint32_t *funcs, size_t n)
{
	uint64_t h = 14695981039346656037ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ funcs[i]) * 1099511628211ull;
	return h ^ n;
}

static bool run_equal(const Location *l, const uint32_t *funcs, size_t n)
{
	if (l->n_line != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (l->line[i]->function_id != (uint64_t)funcs[i] + 1)
			return false;
	return true;
}

static void loc_rehash(struct locset *s)
{
	size_t cap = s->cap ? s->cap * 2 : 1024;

	free(s->slots);
	s->slots = xcalloc(cap, sizeof(*s->slots));
	s->cap = cap;
	for (size_t i = 0; i < s->n; i++) {
		size_t j = s->hash[i] & (cap - 1);

		while (s->slots[j])
			j = (j + 1) & (cap - 1);
		s->slots[j] = (uint32_t)i + 1;
	}
}

/* The location id of funcs[0..n) (innermost first) in mapping, made once. */
static uint64_t loc_id(struct locset *s, const uint32_t *funcs, size_t n, uint64_t mapping)
{
	uint64_t h = run_hash(funcs, n);
	size_t j;
	Location *l;

	if (2 * (s->n + 1) > s->cap)
		loc_rehash(s);
	for (j = h & (s->cap - 1); s->slots[j]; j = (j + 1) & (s->cap - 1)) {
		size_t i = s->slots[j] - 1;

		if (s->hash[i] == h && run_equal(s->v[i], funcs, n))
			return s->v[i]->id;
	}
	ALLOC_GROW(s->v, s->n + 1, s->alloc);
	s->hash = xrealloc(s->hash, s->alloc * sizeof(*s->hash));
	l = xmalloc(sizeof(*l));
	perftools__profiles__location__init(l);
	l->id = s->n + 1;
	l->mapping_id = mapping;
	l->n_line = n;
	l->line = xcalloc(n, sizeof(*l->line));
	for (size_t i = 0; i < n; i++) {
		l->line[i] = xmalloc(sizeof(**l->line));
		perftools__profiles__line__init(l->line[i]);
		l->line[i]->function_id = (uint64_t)funcs[i] + 1;
	}
	s->v[s->n] = l;
	s->hash[s->n] = h;
	s->slots[j] = (uint32_t)++s->n;
	return l->id;
}

static void loc_free(struct locset *s)
{
	for (size_t i = 0; i < s->n; i++) {
		for (size_t k = 0; k < s->v[i]->n_line; k++)
			free(s->v[i]->line[k]);
		free(s->v[i]->line);
		free(s->v[i]);
	}
	free(s->v);
	free(s->slots);
	free(s->hash);
}

/* ---- the profile -------------------------------------------------------- */

static ValueType *value_type(struct strtab *st, const char *type, const char *unit)
{
	ValueType *v = xmalloc(sizeof(*v));

	perftools__profiles__value_type__init(v);
	v->type = str_id(st, type);
	v->unit = str_id(st, unit);
	return v;
}

static char *hex(const uint8_t *id, size_t len)
{
	char *s = xmalloc(2 * len + 1);

	for (size_t i = 0; i < len; i++)
		snprintf(s + 2 * i, 3, "%02x", id[i]);
	s[2 * len] = '\0';
	return s;
}

/*
 * The gzip stream the profile is written through, piece by piece: a big
 * recording's samples are packed one at a time (g++ compiling 700 lines of
 * C++, 5.3 M samples 45 frames deep: 2 GB of location ids and a 700 MB
 * packed copy when the whole Profile was built first, 4.6 GB of memory).
 * Protocol buffers merge concatenated messages, so writing the fields of
 * one Profile in several packed parts, in field order, gives the bytes one
 * pack would.
 */
struct gzout {
	z_stream z;
	FILE *f;
	int zr;                    /* Z_OK, or the failure */
	uint8_t out[1 << 16];
};

static int gz_start(struct gzout *g, FILE *f)
{
	memset(&g->z, 0, sizeof(g->z));
	g->f = f;
	g->zr = deflateInit2(&g->z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
	return g->zr == Z_OK ? 0 : -1;
}

/* Compress buf[0..len) (flush: Z_NO_FLUSH, or Z_FINISH for the end). */
static void gz_put(struct gzout *g, const uint8_t *buf, size_t len, int flush)
{
	if (g->zr != Z_OK)
		return;
	g->z.next_in = (Bytef *)buf;
	g->z.avail_in = (uInt)len;         /* pieces of a few MB at most */
	for (;;) {
		int zr;

		g->z.next_out = g->out;
		g->z.avail_out = sizeof(g->out);
		zr = deflate(&g->z, flush);
		fwrite(g->out, 1, sizeof(g->out) - g->z.avail_out, g->f);
		if (flush == Z_FINISH ? zr == Z_STREAM_END : g->z.avail_in == 0 && g->z.avail_out != 0)
			break;
		if (zr != Z_OK && !(zr == Z_BUF_ERROR && g->z.avail_out == 0)) {
			g->zr = zr;
			return;
		}
	}
}

static int gz_end(struct gzout *g, char *err, size_t errlen)
{
	gz_put(g, NULL, 0, Z_FINISH);
	deflateEnd(&g->z);
	if (g->zr != Z_OK) {
		snprintf(err, errlen, "gzip compression failed (%d)", g->zr);
		return -EIO;
	}
	return 0;
}

/* Pack a Profile holding some of the fields into scratch, then the stream. */
static void gz_profile(struct gzout *g, const Profile *part, uint8_t **scratch, size_t *ascratch)
{
	size_t len = perftools__profiles__profile__get_packed_size(part);

	ALLOC_GROW(*scratch, len + 1, *ascratch);
	perftools__profiles__profile__pack(part, *scratch);
	gz_put(g, *scratch, len, Z_NO_FLUSH);
}

/* One Sample as field 2 of a Profile: tag, length, the packed message. */
static void gz_sample(struct gzout *g, const Sample *sm, uint8_t **scratch, size_t *ascratch)
{
	size_t len = perftools__profiles__sample__get_packed_size(sm), n = 0;
	uint64_t v = len;

	ALLOC_GROW(*scratch, len + 11, *ascratch);
	(*scratch)[n++] = 2 << 3 | 2;      /* field 2, length-delimited */
	do {
		(*scratch)[n++] = (uint8_t)(v & 0x7f) | (v > 0x7f ? 0x80 : 0);
		v >>= 7;
	} while (v);
	perftools__profiles__sample__pack(sm, *scratch + n);
	gz_put(g, *scratch, n + len, Z_NO_FLUSH);
}

static int write_pprof(FILE *f, struct an_profile *p, const struct exp_options *o,
		       char *err, size_t errlen)
{
	const struct an_cct *c = an_profile_cct(p, AN_CCT_BY_THREAD, o->app_time);
	bool sample = an_cct_method(c) == SC_METHOD_SAMPLE;
	size_t nnodes = an_cct_size(c), nfuncs = an_cct_nfuncs(c), nmods = 0, nvals = sample ? 2 : 3;
	struct an_session sess;
	struct strtab st = { 0 };
	struct locset ls = { 0 };
	Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	uint32_t *mapid = NULL;         /* per module: its mapping id */
	uint64_t *node_loc = NULL;      /* per node: its run's location id */
	uint32_t *node_next = NULL;     /* per node: the node above its run */
	uint32_t *run = NULL;
	size_t arun = 0;
	uint64_t *stack = NULL;         /* one sample's locations */
	size_t astack = 0, ntops;
	const uint32_t *tops;
	Label *labels = NULL, **label_ptrs = NULL;
	uint64_t period = 0;
	uint8_t *buf = NULL;            /* one packed part */
	size_t abuf = 0;
	char **owned = NULL;            /* strings of the table we made */
	size_t nowned = 0, aowned = 0;
	struct gzout *gz = xmalloc(sizeof(*gz));
	Profile head = PERFTOOLS__PROFILES__PROFILE__INIT;
	int ret = 0;

	an_profile_session(p, &sess);
	str_id(&st, "");
	if (sample) {
		period = sess.frequency_hz ? 1000000000ull / sess.frequency_hz : 0;
		prof.sample_type = xcalloc(2, sizeof(*prof.sample_type));
		prof.sample_type[0] = value_type(&st, "samples", "count");
		prof.sample_type[1] = value_type(&st, "cpu", "nanoseconds");
		prof.period_type = value_type(&st, "cpu", "nanoseconds");
		prof.period = (int64_t)period;
	} else {
		/* the sampled shares' counts (SPEC section 14), when recorded */
		if (sess.have_shares)
			nvals = 4;
		prof.sample_type = xcalloc(nvals, sizeof(*prof.sample_type));
		prof.sample_type[0] = value_type(&st, "calls", "count");
		prof.sample_type[1] = value_type(&st, "elapsed", "nanoseconds");
		prof.sample_type[2] = value_type(&st, "application", "nanoseconds");
		if (nvals > 3)
			prof.sample_type[3] = value_type(&st, "samples", "count");
		prof.default_sample_type = str_id(&st, "elapsed");
	}
	prof.n_sample_type = nvals;
	prof.duration_nanos = (int64_t)sess.duration_ns;

	/* functions, and a mapping per module */
	prof.function = xcalloc(nfuncs ? nfuncs : 1, sizeof(*prof.function));
	for (uint32_t fn = 0; fn < nfuncs; fn++) {
		Function *fu = xmalloc(sizeof(*fu));
		const char *sys = an_cct_func_system_name(c, fn);

		perftools__profiles__function__init(fu);
		fu->id = fn + 1;
		fu->name = str_id(&st, an_cct_func_name(c, fn));
		fu->system_name = str_id(&st, sys ? sys : an_cct_func_name(c, fn));
		fu->filename = str_id(&st, an_cct_func_file(c, fn));
		prof.function[fn] = fu;
		if (an_cct_func_mod(c, fn) + 1 > nmods)
			nmods = an_cct_func_mod(c, fn) + 1;
	}
	prof.n_function = nfuncs;
	/*
	 * pprof names the profile after its first mapping: the module of the
	 * first thread's busiest outermost function (the program's _start, not
	 * the dynamic loader's) gets id 1, the others follow in order.
	 */
	mapid = xcalloc(nmods ? nmods : 1, sizeof(*mapid));
	{
		uint32_t next = 1;

		uint32_t best = AN_CCT_NONE;

		/* the first thread's busiest outermost function: its _start */
		if (an_cct_tops(c, &tops))
			for (uint32_t k = an_cct_node(c, tops[0])->first_child; k != AN_CCT_NONE;
			     k = an_cct_node(c, k)->next_sibling)
				if (best == AN_CCT_NONE || an_cct_node(c, k)->incl > an_cct_node(c, best)->incl)
					best = k;
		if (best != AN_CCT_NONE)
			mapid[an_cct_func_mod(c, an_cct_node(c, best)->func)] = next++;
		for (size_t m = 0; m < nmods; m++)
			if (!mapid[m])
				mapid[m] = next++;
	}
	prof.mapping = xcalloc(nmods ? nmods : 1, sizeof(*prof.mapping));
	for (uint32_t fn = 0; fn < nfuncs; fn++) {
		uint32_t m = mapid[an_cct_func_mod(c, fn)] - 1;
		const uint8_t *id;
		size_t idlen;
		Mapping *mp;

		if (prof.mapping[m])
			continue;
		mp = prof.mapping[m] = xmalloc(sizeof(*mp));
		perftools__profiles__mapping__init(mp);
		mp->id = m + 1;       /* mapid[] of the module */
		mp->filename = str_id(&st, an_cct_func_module(c, fn));
		idlen = an_cct_func_build_id(c, fn, &id);
		if (idlen) {
			char *h = hex(id, idlen);

			mp->build_id = str_id(&st, h);
			if (st.v[mp->build_id] == h) {    /* the table holds it */
				ALLOC_GROW(owned, nowned + 1, aowned);
				owned[nowned++] = h;
			} else {
				free(h);
			}
		}
		mp->has_functions = true;
		mp->has_filenames = true;
		mp->has_inline_frames = sample;
	}
	/* a module no function of which is left would leave a hole */
	for (size_t m = 0; m < nmods; m++)
		if (!prof.mapping[m]) {
			prof.mapping[m] = xmalloc(sizeof(*prof.mapping[m]));
			perftools__profiles__mapping__init(prof.mapping[m]);
			prof.mapping[m]->id = m + 1;
		}
	prof.n_mapping = nmods;

	/*
	 * Samples: one per node with own values, packed and compressed as they
	 * come (gzout above): the sample types first (field 1), the samples
	 * (2), then the rest, whose locations and strings the samples made.
	 * The samples of one thread share their two labels.
	 */
	node_loc = xcalloc(nnodes ? nnodes : 1, sizeof(*node_loc));
	node_next = xmalloc((nnodes ? nnodes : 1) * sizeof(*node_next));
	ntops = an_cct_tops(c, &tops);
	labels = xcalloc(2 * (ntops ? ntops : 1), sizeof(*labels));
	label_ptrs = xcalloc(2 * (ntops ? ntops : 1), sizeof(*label_ptrs));
	for (uint32_t g = 0; g < ntops; g++) {
		uint32_t g_proc, g_tid;

		an_cct_group(c, g, &g_proc, &g_tid);
		for (int k = 0; k < 2; k++) {
			Label *l = &labels[2 * g + k];

			perftools__profiles__label__init(l);
			l->key = str_id(&st, k ? "tid" : "pid");
			l->num = k ? g_tid : an_cct_group_pid(c, g);
			label_ptrs[2 * g + k] = l;
		}
	}
	if (gz_start(gz, f)) {
		snprintf(err, errlen, "cannot start gzip compression");
		ret = -ENOMEM;
		goto out;
	}
	head.n_sample_type = prof.n_sample_type;
	head.sample_type = prof.sample_type;
	gz_profile(gz, &head, &buf, &abuf);
	for (uint32_t id = 0; id < nnodes; id++) {
		const struct an_cct_node *nd = an_cct_node(c, id);
		int64_t vals[4];
		Sample sm;
		size_t depth = 0;

		if (nd->func == AN_CCT_NONE)
			continue;
		if (sample) {
			vals[0] = (int64_t)nd->excl;
			vals[1] = (int64_t)(nd->excl * period);
		} else {
			vals[0] = (int64_t)nd->calls;
			vals[1] = (int64_t)nd->excl;
			vals[2] = (int64_t)nd->app_excl;
			if (nvals > 3)
				vals[3] = (int64_t)nd->smp_excl;
		}
		if (!vals[0] && !vals[1] && (sample || !vals[2]) && (nvals < 4 || !vals[3]))
			continue;
		for (uint32_t x = id; an_cct_node(c, x)->func != AN_CCT_NONE;) {
			if (!node_loc[x]) {
				/* the run from x up to the function holding it */
				size_t n = 0;
				uint32_t y = x;

				for (;;) {
					const struct an_cct_node *ny = an_cct_node(c, y);

					ALLOC_GROW(run, n + 1, arun);
					run[n++] = ny->func;
					if (!ny->inlined || an_cct_node(c, ny->parent)->func == AN_CCT_NONE)
						break;
					y = ny->parent;
				}
				node_loc[x] = loc_id(&ls, run, n,
						     mapid[an_cct_func_mod(c, an_cct_node(c, y)->func)]);
				node_next[x] = an_cct_node(c, y)->parent;
			}
			ALLOC_GROW(stack, depth + 1, astack);
			stack[depth++] = node_loc[x];
			x = node_next[x];
		}
		perftools__profiles__sample__init(&sm);
		sm.n_location_id = depth;
		sm.location_id = stack;
		sm.n_value = nvals;
		sm.value = vals;
		sm.n_label = 2;
		sm.label = &label_ptrs[2 * nd->group];
		gz_sample(gz, &sm, &buf, &abuf);
	}
	prof.n_sample_type = 0;          /* written first */
	prof.location = ls.v;
	prof.n_location = ls.n;
	prof.string_table = st.v;
	prof.n_string_table = st.n;
	gz_profile(gz, &prof, &buf, &abuf);
	ret = gz_end(gz, err, errlen);
out:
	free(gz);
	free(buf);
	free(labels);
	free(label_ptrs);
	for (size_t i = 0; i < prof.n_function; i++)
		free(prof.function[i]);
	free(prof.function);
	for (size_t i = 0; i < prof.n_mapping; i++)
		free(prof.mapping[i]);
	free(prof.mapping);
	for (size_t i = 0; i < nvals; i++)
		free(prof.sample_type[i]);
	free(prof.sample_type);
	free(prof.period_type);
	loc_free(&ls);
	free(st.v);
	free(st.slots);
	for (size_t i = 0; i < nowned; i++)
		free(owned[i]);
	free(owned);
	free(mapid);
	free(node_loc);
	free(node_next);
	free(run);
	free(stack);
	return ret;
}

const struct exp_format exp_pprof = {
	.name = "pprof",
	.default_out = "stackclock.pb.gz",
	.binary = true,
	.write = write_pprof,
};
