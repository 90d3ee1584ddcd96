/*
 * Unit tests of the attribution engine (src/runtime/engine.h) and of its
 * record emitter (src/record/cct_emit.c), on synthetic event streams:
 *
 *  - every .vec file of tests/vectors (or $SC_VECTORS): events in,
 *    records out through a real data file, per-function values derived from
 *    the CCT records exactly as SPEC section 2 says, compared exactly;
 *  - random streams (recursion, missing and stray exits, OS-bound intervals
 *    with measured OS time) against a brute-force implementation of SPEC
 *    section 2 written here independently: it keeps the plain stack and
 *    charges every interval to every distinct function on it;
 *  - deep stacks, many call sites, a full arena (lost events, never a
 *    crash), a damaged arena refused by the emitter.
 */
#include "format/scdata.h"
#include "record/cct_emit.h"
#include "runtime/engine.h"
#include "tap.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAXF 64

/* Per-function values, however computed. */
struct fvals {
	uint64_t calls, ei, ee, ai, ae, aex;
	uint64_t completed, isum, imin, imax, esum, emin, emax;
};

struct cvals {                  /* per (site, callee) */
	uint64_t site, callee, calls, ei, ee, ai, ae;
};

struct result {
	struct fvals f[MAXF];
	struct cvals cs[16384];
	int ncs;
	uint64_t sess_ei, sess_ai, repairs, lost, open_frames, events;
	uint64_t removed;         /* probe cost taken out (cct_removed records) */
	uint64_t raw_ee[MAXF];    /* EE with it added back, per function */
};

static char tmpfile_path[] = "/tmp/sc-test-engine-XXXXXX";

static struct cvals *cs_get(struct result *r, uint64_t site, uint64_t callee)
{
	int i;

	for (i = 0; i < r->ncs; i++)
		if (r->cs[i].site == site && r->cs[i].callee == callee)
			return &r->cs[i];
	if (r->ncs == (int)(sizeof(r->cs) / sizeof(r->cs[0]))) {
		fprintf(stderr, "too many call sites\n");
		exit(1);
	}
	r->cs[r->ncs].site = site;
	r->cs[r->ncs].callee = callee;
	return &r->cs[r->ncs++];
}

static void fvals_init(struct result *r)
{
	int i;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < MAXF; i++)
		r->f[i].imin = r->f[i].emin = UINT64_MAX;
}

/* ---- reading the emitted records back -------------------------------- */

/* Functions are numbered 1..MAXF-1; func address = number * 16. */
#define FUNC(i)  ((uint64_t)(i) * 16)
#define FIDX(a)  ((int)((a) / 16))

static void add_thread_nodes(struct result *r, struct sc_rec_cct_node *n, int nn)
{
	uint64_t *sub_ee = calloc(nn, 8), *sub_ae = calloc(nn, 8);
	int i;

	for (i = nn - 1; i >= 0; i--) {
		sub_ee[i] += n[i].elapsed_excl;
		sub_ae[i] += n[i].app_excl;
		if (i > 0) {
			sub_ee[n[i].parent] += sub_ee[i];
			sub_ae[n[i].parent] += sub_ae[i];
		}
	}
	for (i = 1; i < nn; i++) {
		struct fvals *f = &r->f[FIDX(n[i].func)];
		uint32_t a;
		int outer = 1;

		for (a = n[i].parent; a != UINT32_MAX && a != 0; a = n[a].parent)
			if (n[a].func == n[i].func)
				outer = 0;
		f->calls += n[i].calls;
		f->ee += n[i].elapsed_excl;
		f->ae += n[i].app_excl;
		f->aex += n[i].app_excl_exact;
		if (outer) {
			f->ei += sub_ee[i];
			f->ai += sub_ae[i];
		}
		f->completed += n[i].completed;
		if (n[i].completed) {
			f->isum += n[i].incl_sum;
			f->esum += n[i].excl_sum;
			if (n[i].incl_min < f->imin) f->imin = n[i].incl_min;
			if (n[i].excl_min < f->emin) f->emin = n[i].excl_min;
			if (n[i].incl_max > f->imax) f->imax = n[i].incl_max;
			if (n[i].excl_max > f->emax) f->emax = n[i].excl_max;
		}
		r->sess_ei += n[i].elapsed_excl;
		r->sess_ai += n[i].app_excl;
	}
	free(sub_ee);
	free(sub_ae);
}

/* Emit every thread of the arenas to a data file and derive the values. */
static int emit_and_read(void **arenas, uint64_t len, int narenas, struct result *r)
{
	struct sc_writer *w;
	struct sc_reader *rd;
	struct sc_record rec;
	struct sc_rec_cct_node *nodes = NULL;
	int nn = 0, alloc = 0, i, ret, problems = 0;
	uint32_t cur_tid = UINT32_MAX, cur_proc = UINT32_MAX;
	char err[256];

	fvals_init(r);
	if (sc_writer_open(tmpfile_path, SC_FEAT_INSTRUMENT, &w))
		return -1;
	for (i = 0; i < narenas; i++) {
		uint64_t offs[256];
		int n = sc_cct_threads(arenas[i], len, offs, 256), j;

		if (n < 0)
			problems++;
		for (j = 0; j < n && j < 256; j++) {
			struct sc_cct_totals tot;

			if (sc_cct_emit_thread(w, arenas[i], len, offs[j], i + 1,
					       &SC_TICK_CONV_IDENTITY, &tot))
				problems++;
		}
	}
	if (sc_writer_close(w))
		return -1;
	if (sc_reader_open(tmpfile_path, &rd, err, sizeof(err))) {
		printf("# %s\n", err);
		return -1;
	}
	while ((ret = sc_reader_next(rd, &rec)) == SC_READ_OK) {
		if (rec.type == SC_REC_CCT_NODE) {
			const struct sc_rec_cct_node *n = rec.data;
			if (n->tid != cur_tid || n->proc_id != cur_proc || n->id == 0) {
				if (nn)
					add_thread_nodes(r, nodes, nn);
				nn = 0;
				cur_tid = n->tid;
				cur_proc = n->proc_id;
			}
			if (n->id != (uint32_t)nn)
				problems++;
			if (nn == alloc) {
				alloc = alloc ? alloc * 2 : 256;
				nodes = realloc(nodes, alloc * sizeof(*nodes));
			}
			nodes[nn++] = *n;
		} else if (rec.type == SC_REC_CALLSITE) {
			const struct sc_rec_callsite *c = rec.data;
			struct cvals *v = cs_get(r, c->site, c->callee);
			v->calls += c->calls;
			v->ei += c->elapsed_incl;
			v->ee += c->elapsed_excl;
			v->ai += c->app_incl;
			v->ae += c->app_excl;
		} else if (rec.type == SC_REC_CCT_REMOVED) {
			const struct sc_rec_cct_removed *x = rec.data;
			r->removed += x->elapsed_excl;
			/* the thread's nodes were read just before */
			if (x->id < (uint32_t)nn)
				r->raw_ee[nodes[x->id].func / 16 < MAXF ? nodes[x->id].func / 16 : 0] +=
					x->elapsed_excl;
		} else if (rec.type == SC_REC_THREAD_STATS) {
			const struct sc_rec_thread_stats *s = rec.data;
			r->repairs += s->repairs;
			r->lost += s->lost_events;
			r->open_frames += s->open_frames;
			r->events += s->events;
		}
	}
	if (nn)
		add_thread_nodes(r, nodes, nn);
	free(nodes);
	sc_reader_close(rd);
	if (ret != SC_READ_EOF)
		problems++;
	return problems;
}

/* ---- event streams ----------------------------------------------------- */

enum { EV_ENTER, EV_EXIT, EV_OS };

struct event {
	int kind;
	int thread;           /* index into the stream's threads */
	int func;             /* function number; for EV_OS the category */
	uint64_t site;
	uint64_t t;
	uint64_t os_len;      /* EV_OS: measured OS time (exact mode) */
};

struct stream {
	struct event *ev;
	int nev, alloc;
	int nthreads;
	uint32_t pid[64], tid[64];
};

static void push_ev(struct stream *s, struct event e)
{
	if (s->nev == s->alloc) {
		s->alloc = s->alloc ? s->alloc * 2 : 1024;
		s->ev = realloc(s->ev, s->alloc * sizeof(*s->ev));
	}
	s->ev[s->nev++] = e;
}

/*
 * Run a stream through the engine: one arena per process, one engine
 * thread per (pid, tid) created at its first enter/exit.  OS events are
 * applied before the next event of their thread, as the runtime does.
 */
static int retire_ended;          /* run_engine: retire a thread after its last event */
static uint32_t eng_cost[5];      /* run_engine: probe cost per interval kind, EXW */
static uint64_t last_bump[2];     /* run_engine: arena bytes taken, given back */

/*
 * An arena as the runtime has one: fresh zero pages of their own mapping,
 * here between two inaccessible pages, so that an access past either end
 * faults.  (calloc and free of 16 MB made the sanitizer build write 2 MB
 * of shadow each, and page it in: run_random's 600 arenas were most of
 * that build's run.)
 */
static void *arena_map(uint64_t len)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t span = (len + pg - 1) / pg * pg;
	char *m = mmap(NULL, span + 2 * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED || mprotect(m + pg, span, PROT_READ | PROT_WRITE)) {
		perror("test_engine: arena mmap");
		exit(1);
	}
	return m + pg;
}

static void arena_unmap(void *p, uint64_t len)
{
	long pg = sysconf(_SC_PAGESIZE);

	munmap((char *)p - pg, (len + pg - 1) / pg * pg + 2 * pg);
}

static int run_engine(const struct stream *s, uint64_t arena_len, struct result *r)
{
	int last_ev[64];
	void *arenas[64];
	struct sc_eng_arena a[64];
	struct sc_eng_thread *th[64] = { 0 };
	uint64_t pending_os[64] = { 0 };
	int pending[64] = { 0 };
	uint32_t procs[64];
	int nprocs = 0, i, p, ret;

	for (i = 0; i < s->nthreads; i++) {
		for (p = 0; p < nprocs && procs[p] != s->pid[i]; p++)
			;
		if (p == nprocs) {
			procs[nprocs] = s->pid[i];
			arenas[nprocs] = arena_map(arena_len);
			sc_eng_arena_init(&a[nprocs], arenas[nprocs], arena_len);
			nprocs++;
		}
	}
	for (i = 0; i < 64; i++)
		last_ev[i] = -1;
	for (i = 0; i < s->nev; i++)
		if (s->ev[i].kind != EV_OS)
			last_ev[s->ev[i].thread] = i;
	for (i = 0; i < s->nev; i++) {
		const struct event *e = &s->ev[i];
		int k = e->thread;

		if (e->kind == EV_OS) {
			if (th[k]) {
				pending[k] = 1;
				pending_os[k] += e->os_len;
			}
			continue;
		}
		if (!th[k]) {
			for (p = 0; procs[p] != s->pid[k]; p++)
				;
			th[k] = sc_eng_thread_new(&a[p], s->tid[k], e->t);
			if (!th[k])
				continue;
			sc_eng_set_cost(th[k], eng_cost[0], eng_cost[1], eng_cost[2], eng_cost[3], eng_cost[4]);
		}
		if (pending[k]) {
			sc_eng_os_exact(th[k], e->t, pending_os[k]);
			pending[k] = 0;
			pending_os[k] = 0;
		}
		if (e->kind == EV_ENTER)
			sc_eng_enter(th[k], FUNC(e->func), e->site, e->t);
		else
			sc_eng_exit(th[k], FUNC(e->func), e->t);
		if (retire_ended && i == last_ev[k])
			sc_eng_thread_retire(th[k]);
	}
	last_bump[0] = a[0].hdr->bump;
	last_bump[1] = a[0].hdr->freed;
	ret = emit_and_read(arenas, arena_len, nprocs, r);
	for (p = 0; p < nprocs; p++)
		arena_unmap(arenas[p], arena_len);
	return ret;
}

/* ---- the brute-force reference (SPEC section 2, stated directly) ------ */

struct bf_frame {
	int func;
	uint64_t site, entry, child_incl, osb_at_entry;
	int outer;
};

static void bf_close(struct result *r, struct bf_frame *st, int *depth, uint64_t now,
		     uint64_t osb_total)
{
	struct bf_frame *f = &st[*depth - 1];
	struct fvals *v = &r->f[f->func];
	uint64_t incl = now - f->entry, excl = incl - f->child_incl;

	v->completed++;
	v->isum += incl;
	v->esum += excl;
	if (incl < v->imin) v->imin = incl;
	if (incl > v->imax) v->imax = incl;
	if (excl < v->emin) v->emin = excl;
	if (excl > v->emax) v->emax = excl;
	if (*depth > 1)
		st[*depth - 2].child_incl += incl;
	if (f->outer) {
		struct cvals *c = cs_get(r, f->site, FUNC(f->func));
		c->ei += incl;
		c->ai += incl - (osb_total - f->osb_at_entry);
	}
	(*depth)--;
}

static void brute_force(const struct stream *s, struct result *r)
{
	int k;

	fvals_init(r);
	for (k = 0; k < s->nthreads; k++) {
		static struct bf_frame st[100000];
		int depth = 0, started = 0, bound = 0, i, j, m;
		uint64_t last = 0, os_len = 0, osb_total = 0;

		for (i = 0; i < s->nev; i++) {
			const struct event *e = &s->ev[i];
			uint64_t d;

			if (e->thread != k)
				continue;
			if (e->kind == EV_OS) {
				if (started) {
					bound = 1;
					os_len += e->os_len;
				}
				continue;
			}
			if (!started) {
				started = 1;
				last = e->t;
			}
			d = e->t - last;
			if (depth > 0) {
				int seen[MAXF] = { 0 };
				struct bf_frame *top = &st[depth - 1];
				struct cvals *c = cs_get(r, top->site, FUNC(top->func));

				r->sess_ei += d;
				r->f[top->func].ee += d;
				c->ee += d;
				r->f[top->func].aex += d - (os_len < d ? os_len : d);
				if (!bound) {
					r->sess_ai += d;
					r->f[top->func].ae += d;
					c->ae += d;
				} else {
					osb_total += d;
				}
				for (j = 0; j < depth; j++) {
					if (seen[st[j].func])
						continue;
					seen[st[j].func] = 1;
					r->f[st[j].func].ei += d;
					if (!bound)
						r->f[st[j].func].ai += d;
				}
			}
			bound = 0;
			os_len = 0;
			last = e->t;
			if (e->kind == EV_ENTER) {
				struct bf_frame *f = &st[depth];
				f->func = e->func;
				f->site = e->site;
				f->entry = e->t;
				f->child_incl = 0;
				f->osb_at_entry = osb_total;
				f->outer = 1;   /* for its call site: no (site, callee) below */
				for (j = 0; j < depth; j++)
					if (st[j].func == e->func && st[j].site == e->site)
						f->outer = 0;
				depth++;
				r->f[e->func].calls++;
				cs_get(r, e->site, FUNC(e->func))->calls++;
				continue;
			}
			for (m = depth - 1; m >= 0 && st[m].func != e->func; m--)
				;
			if (m < 0) {
				r->repairs++;
				continue;
			}
			while (depth - 1 > m) {
				bf_close(r, st, &depth, e->t, osb_total);
				r->repairs++;
			}
			bf_close(r, st, &depth, e->t, osb_total);
		}
		r->open_frames += depth;
		/* open frames end at the thread's last event: their outermost
		 * calls' time counts for the call sites as for the functions */
		for (j = 0; j < depth; j++) {
			if (st[j].outer) {
				struct cvals *c = cs_get(r, st[j].site, FUNC(st[j].func));
				c->ei += last - st[j].entry;
				c->ai += last - st[j].entry - (osb_total - st[j].osb_at_entry);
			}
		}
	}
}

/* ---- comparing ------------------------------------------------------- */

static int cmp_fvals(const char *what, const struct result *got, const struct result *want,
		     int with_stats)
{
	int i, bad = 0;

	for (i = 1; i < MAXF; i++) {
		const struct fvals *g = &got->f[i], *w = &want->f[i];
		int same = g->calls == w->calls && g->ei == w->ei && g->ee == w->ee &&
			   g->ai == w->ai && g->ae == w->ae;

		if (with_stats)
			same = same && g->aex == w->aex && g->completed == w->completed &&
			       g->isum == w->isum && g->esum == w->esum &&
			       (!w->completed || (g->imin == w->imin && g->imax == w->imax &&
						  g->emin == w->emin && g->emax == w->emax));
		if (!same) {
			if (!bad)
				printf("# %s: function f%d differs\n"
				       "#   got  calls=%lu ei=%lu ee=%lu ai=%lu ae=%lu aex=%lu done=%lu incl=%lu/%lu/%lu excl=%lu/%lu/%lu\n"
				       "#   want calls=%lu ei=%lu ee=%lu ai=%lu ae=%lu aex=%lu done=%lu incl=%lu/%lu/%lu excl=%lu/%lu/%lu\n",
				       what, i,
				       g->calls, g->ei, g->ee, g->ai, g->ae, g->aex, g->completed, g->imin, g->imax, g->isum, g->emin, g->emax, g->esum,
				       w->calls, w->ei, w->ee, w->ai, w->ae, w->aex, w->completed, w->imin, w->imax, w->isum, w->emin, w->emax, w->esum);
			bad++;
		}
	}
	return bad;
}

static int cmp_callsites(const char *what, const struct result *got, const struct result *want)
{
	int i, j, bad = 0;

	for (i = 0; i < want->ncs; i++) {
		const struct cvals *w = &want->cs[i], *g = NULL;
		for (j = 0; j < got->ncs; j++)
			if (got->cs[j].site == w->site && got->cs[j].callee == w->callee)
				g = &got->cs[j];
		if (!w->calls && !g)
			continue;
		if (!g || g->calls != w->calls || g->ei != w->ei || g->ee != w->ee ||
		    g->ai != w->ai || g->ae != w->ae) {
			if (!bad)
				printf("# %s: call site %lx -> f%lu differs: got calls=%lu ei=%lu ee=%lu ai=%lu ae=%lu, "
				       "want calls=%lu ei=%lu ee=%lu ai=%lu ae=%lu\n", what,
				       w->site, w->callee / 16, g ? g->calls : 0, g ? g->ei : 0, g ? g->ee : 0,
				       g ? g->ai : 0, g ? g->ae : 0, w->calls, w->ei, w->ee, w->ai, w->ae);
			bad++;
		}
	}
	for (j = 0; j < got->ncs; j++) {
		int found = 0;
		for (i = 0; i < want->ncs; i++)
			if (got->cs[j].site == want->cs[i].site && got->cs[j].callee == want->cs[i].callee)
				found = 1;
		if (!found) {
			printf("# %s: unexpected call site %lx\n", what, got->cs[j].site);
			bad++;
		}
	}
	return bad;
}

/* ---- vectors --------------------------------------------------------- */

struct vec_expect {
	char name[64];
	uint64_t calls, ei, ee, ai, ae;
};

static int func_id(char names[MAXF][64], int *n, const char *name)
{
	int i;

	for (i = 1; i <= *n; i++)
		if (!strcmp(names[i], name))
			return i;
	if (*n + 1 >= MAXF) {
		fprintf(stderr, "too many functions\n");
		exit(1);
	}
	snprintf(names[++*n], 64, "%s", name);
	return *n;
}

static uint64_t field(const char *line, const char *key)
{
	const char *p = strstr(line, key);
	return p ? strtoull(p + strlen(key), NULL, 10) : UINT64_MAX;
}

static void run_vector(const char *path, const char *base)
{
	static char names[MAXF][64];
	struct vec_expect ex[MAXF];
	struct stream s = { 0 };
	static struct result got;
	uint64_t sess_ei = 0, sess_ai = 0, repairs = 0;
	int nnames = 0, nex = 0, cur = -1, i, have_session = 0;
	char line[512];
	FILE *f = fopen(path, "r");

	if (!ok(f != NULL, "%s: opened", base))
		return;
	while (fgets(line, sizeof(line), f)) {
		char a[64], b[64];
		unsigned long long t1, t2;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "thread %llu %llu", &t1, &t2) == 2) {
			for (cur = 0; cur < s.nthreads; cur++)
				if (s.pid[cur] == t1 && s.tid[cur] == t2)
					break;
			if (cur == s.nthreads) {
				s.pid[cur] = t1;
				s.tid[cur] = t2;
				s.nthreads++;
			}
		} else if (sscanf(line, "enter %llu %63s", &t1, a) == 2) {
			int fn = func_id(names, &nnames, a);
			push_ev(&s, (struct event){ EV_ENTER, cur, fn, 0x1000 + fn, t1, 0 });
		} else if (sscanf(line, "exit %llu %63s", &t1, a) == 2) {
			push_ev(&s, (struct event){ EV_EXIT, cur, func_id(names, &nnames, a), 0, t1, 0 });
		} else if (sscanf(line, "os %llu %63s", &t1, a) == 2) {
			push_ev(&s, (struct event){ EV_OS, cur, 0, 0, t1, 0 });
		} else if (sscanf(line, "expect session %63s", a) == 1) {
			sess_ei = field(line, "ei=");
			sess_ai = field(line, "ai=");
			repairs = field(line, "repairs=");
			have_session = 1;
		} else if (sscanf(line, "expect %63s %63s", a, b) == 2) {
			snprintf(ex[nex].name, sizeof(ex[nex].name), "%s", a);
			ex[nex].calls = field(line, "calls=");
			ex[nex].ei = field(line, " ei=");
			ex[nex].ee = field(line, " ee=");
			ex[nex].ai = field(line, " ai=");
			ex[nex].ae = field(line, " ae=");
			nex++;
		} else {
			ok(0, "%s: understood line '%s'", base, line);
		}
	}
	fclose(f);
	ok(have_session && nex > 0, "%s: has expectations", base);
	if (!ok(run_engine(&s, 16 << 20, &got) == 0, "%s: emitted and read back", base))
		return;
	is_u64(got.sess_ei, sess_ei, "%s: session ei", base);
	is_u64(got.sess_ai, sess_ai, "%s: session ai", base);
	is_u64(got.repairs, repairs, "%s: repairs", base);
	for (i = 0; i < nex; i++) {
		const struct fvals *v = &got.f[func_id(names, &nnames, ex[i].name)];
		int same = v->calls == ex[i].calls && v->ei == ex[i].ei && v->ee == ex[i].ee &&
			   v->ai == ex[i].ai && v->ae == ex[i].ae;
		if (!ok(same, "%s: %s calls ei ee ai ae", base, ex[i].name))
			printf("#   got calls=%lu ei=%lu ee=%lu ai=%lu ae=%lu, want calls=%lu ei=%lu ee=%lu ai=%lu ae=%lu\n",
			       v->calls, v->ei, v->ee, v->ai, v->ae,
			       ex[i].calls, ex[i].ei, ex[i].ee, ex[i].ai, ex[i].ae);
	}
	/* the reference agrees with the vector too (it checks the checker) */
	{
		static struct result bf;
		brute_force(&s, &bf);
		ok(cmp_fvals(base, &got, &bf, 1) == 0 && bf.repairs == repairs &&
		   bf.sess_ei == sess_ei && bf.sess_ai == sess_ai,
		   "%s: brute force agrees (with per-call stats)", base);
	}
	free(s.ev);
}

static void run_vectors(void)
{
	const char *dir = getenv("SC_VECTORS");
	struct dirent **list;
	int n, i, ran = 0;

	if (!dir)
		dir = "tests/vectors";
	n = scandir(dir, &list, NULL, alphasort);
	if (!ok(n >= 0, "vectors directory %s (run from the top of the tree, or set SC_VECTORS)", dir))
		return;
	for (i = 0; i < n; i++) {
		size_t l = strlen(list[i]->d_name);
		if (l > 4 && !strcmp(list[i]->d_name + l - 4, ".vec")) {
			char path[1024];
			snprintf(path, sizeof(path), "%s/%s", dir, list[i]->d_name);
			run_vector(path, list[i]->d_name);
			ran++;
		}
		free(list[i]);
	}
	free(list);
	ok(ran >= 10, "ran %d vector files", ran);
}

/* ---- random streams ---------------------------------------------------- */

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng % n;
}

/*
 * A random stream: nthreads threads in nprocs processes, interleaved;
 * mostly balanced calls with recursion, some exits of deeper frames
 * (longjmp), stray exits, OS events with measured lengths, equal times.
 */
static void random_stream(struct stream *s, int nthreads, int nprocs, int nevents, int nfuncs,
			  int nsites, int maxdepth)
{
	int stk[64][4096], depth[64] = { 0 }, i;
	uint64_t now[64] = { 0 };

	memset(s, 0, sizeof(*s));
	s->nthreads = nthreads;
	for (i = 0; i < nthreads; i++) {
		s->pid[i] = 100 + i % nprocs;
		s->tid[i] = 1000 + i;
		now[i] = rnd(100);
	}
	for (i = 0; i < nevents; i++) {
		int k = rnd(nthreads), r = rnd(100);
		struct event e = { 0 };

		e.thread = k;
		now[k] += rnd(4) == 0 ? 0 : rnd(50);
		e.t = now[k];
		if (r < 8) {
			e.kind = EV_OS;
			e.func = rnd(3);
			e.os_len = rnd(30);
		} else if ((r < 55 && depth[k] < maxdepth) || depth[k] == 0) {
			e.kind = EV_ENTER;
			e.func = 1 + rnd(nfuncs);
			/* a site belongs to a caller: same caller, few sites */
			e.site = 0x400000 + (depth[k] ? stk[k][depth[k] - 1] : 0) * 0x100 + rnd(nsites) * 8;
			stk[k][depth[k]++] = e.func;
			if (rnd(50) == 0) {     /* stray exit before this enter */
				struct event x = { EV_EXIT, k, 1 + rnd(nfuncs), 0, e.t, 0 };
				push_ev(s, x);
			}
		} else {
			int back = rnd(20) == 0 && depth[k] > 1 ? 1 + rnd(depth[k] - 1) : 0;
			e.kind = EV_EXIT;
			depth[k] -= back;
			e.func = stk[k][--depth[k]];
		}
		push_ev(s, e);
	}
}

static void run_random(void)
{
	int round, bad_f = 0, bad_c = 0, bad_s = 0, rounds = 300;

	for (round = 0; round < rounds; round++) {
		struct stream s;
		static struct result got, want;
		char what[64];
		int nthreads = 1 + rnd(4), nprocs = 1 + rnd(2);

		snprintf(what, sizeof(what), "random round %d", round);
		random_stream(&s, nthreads, nprocs < nthreads ? nprocs : nthreads,
			      50 + rnd(3000), 1 + rnd(6), 1 + rnd(3), round % 10 == 0 ? 1000 : 40);
		if (run_engine(&s, 16 << 20, &got)) {
			bad_s++;
			free(s.ev);
			continue;
		}
		brute_force(&s, &want);
		bad_f += cmp_fvals(what, &got, &want, 1) != 0;
		bad_c += cmp_callsites(what, &got, &want) != 0;
		if (got.sess_ei != want.sess_ei || got.sess_ai != want.sess_ai ||
		    got.repairs != want.repairs || got.open_frames != want.open_frames || got.lost) {
			if (!bad_s)
				printf("# %s: session ei %lu/%lu ai %lu/%lu repairs %lu/%lu open %lu/%lu lost %lu\n",
				       what, got.sess_ei, want.sess_ei, got.sess_ai, want.sess_ai,
				       got.repairs, want.repairs, got.open_frames, want.open_frames, got.lost);
			bad_s++;
		}
		free(s.ev);
	}
	is_u64(bad_f, 0, "random streams: per-function values and per-call stats match brute force (%d rounds)", rounds);
	is_u64(bad_c, 0, "random streams: call-site values match brute force");
	is_u64(bad_s, 0, "random streams: session totals, repairs, open frames match");
}

/* nthreads random threads one after another in one process; every 20th deep. */
static void sequential_threads(struct stream *s, int nthreads, int with_deep)
{
	struct stream one;
	uint64_t base_t = 1;
	int i, j;

	memset(s, 0, sizeof(*s));
	s->nthreads = nthreads;
	for (i = 0; i < nthreads; i++) {
		int deep = with_deep && i % 20 == 3;

		random_stream(&one, 1, 1, deep ? 3000 : 6 + rnd(20), 1 + rnd(4), 1 + rnd(2), deep ? 600 : 20);
		s->pid[i] = 1;
		s->tid[i] = 100 + i;
		for (j = 0; j < one.nev; j++) {
			struct event e = one.ev[j];

			e.thread = i;
			e.t += base_t;
			push_ev(s, e);
		}
		if (s->nev)
			base_t = s->ev[s->nev - 1].t + 1;
		free(one.ev);
	}
}

/*
 * Threads that end give their spare memory back (sc_eng_thread_retire):
 * 60 threads one after another (some end with frames open, some grow their
 * stack and call-site table) give the same values as brute force; and 60
 * short ones take less than half the arena they take without retirement.
 */
static void run_retire(void)
{
	static struct result got, want;
	struct stream s;
	uint64_t bump_kept = 0, bump_retired = 0, freed = 0;
	int bad = 0;

	sequential_threads(&s, 60, 1);
	brute_force(&s, &want);
	retire_ended = 1;
	bad += run_engine(&s, 16 << 20, &got) != 0;
	retire_ended = 0;
	is_u64(bad, 0, "retired threads: emitted and read back");
	is_u64(cmp_fvals("retire", &got, &want, 1), 0, "retired threads: per-function values match brute force");
	is_u64(cmp_callsites("retire", &got, &want), 0, "retired threads: call-site values match brute force");
	is_u64(got.open_frames, want.open_frames, "retired threads: open frames still counted");
	is_u64(got.repairs, want.repairs, "retired threads: repairs still counted");
	free(s.ev);

	/* the pattern of a thread pool's short tasks: worker() calls work() 3
	 * times, then the thread ends; 8 threads alive at a time */
	for (int retire = 0; retire < 2; retire++) {
		size_t len = 16 << 20;
		void *buf = calloc(1, len);
		struct sc_eng_arena a;
		struct sc_eng_thread *th[8];
		uint64_t now = 1, at100 = 0;

		sc_eng_arena_init(&a, buf, len);
		for (int n = 0; n < 400; n += 8) {
			if (n == 200)
				at100 = a.hdr->bump;
			for (int j = 0; j < 8; j++) {
				th[j] = sc_eng_thread_new(&a, n + j, now);
				if (!th[j])
					break;
				sc_eng_enter(th[j], 0x1000, 0x7000, now++);
				for (int k = 0; k < 3; k++) {
					sc_eng_enter(th[j], 0x2000, 0x1010, now++);
					sc_eng_exit(th[j], 0x2000, now++);
				}
				sc_eng_exit(th[j], 0x1000, now++);
			}
			for (int j = 0; j < 8 && retire; j++)
				if (th[j])
					sc_eng_thread_retire(th[j]);
		}
		if (retire)
			bump_retired = (a.hdr->bump - at100) / 200;
		else
			bump_kept = (a.hdr->bump - at100) / 200;
		freed = a.hdr->freed;
		free(buf);
	}
	/* what an ended thread keeps: itself (512), its counters (128: the
	 * recorder reads them), its drop node, its 3 nodes and their chunk
	 * header, its 2 call sites (128 together) */
	ok(bump_retired <= 512 + 128 + 128 + 4 * 128 + 128,
	   "short threads: %lu bytes of arena each, %lu without retirement (%lu bytes given back)",
	   bump_retired, bump_kept, freed);
}

/*
 * Probe cost (SPEC section 10): the stream as a probe with a known cost
 * per event would measure it, every interval that is not OS-bound longer
 * by cost[kind before][kind after]; *added: the total.
 */
static void add_probe_cost(const struct stream *in, struct stream *out, const uint32_t cost[4],
			   uint64_t *added)
{
	uint64_t shift[64] = { 0 };
	int prev[64], started[64] = { 0 }, os[64] = { 0 }, i;

	memset(out, 0, sizeof(*out));
	out->nthreads = in->nthreads;
	memcpy(out->pid, in->pid, sizeof(in->pid));
	memcpy(out->tid, in->tid, sizeof(in->tid));
	*added = 0;
	for (i = 0; i < in->nev; i++) {
		struct event e = in->ev[i];
		int k = e.thread, kind = e.kind == EV_EXIT;

		if (e.kind == EV_OS) {
			os[k] = 1;
		} else {
			if (started[k] && !os[k]) {
				shift[k] += cost[prev[k] * 2 + kind];
				*added += cost[prev[k] * 2 + kind];
			}
			started[k] = 1;
			prev[k] = kind;
			os[k] = 0;
		}
		e.t += shift[k];
		push_ev(out, e);
	}
}

/* One thread's events, written out: entries from a call site per function. */
static void fixed_stream(struct stream *s, const int *kind, const int *fn, const uint64_t *tm, int n)
{
	memset(s, 0, sizeof(*s));
	s->nthreads = 1;
	s->pid[0] = s->tid[0] = 1;
	for (int i = 0; i < n; i++)
		push_ev(s, (struct event){ kind[i], 0, fn[i], kind[i] == EV_ENTER ? 0x100u + (unsigned)fn[i] : 0,
					   tm[i], 0 });
}

/*
 * Compensation on synthetic streams: the engine given the cost per event
 * recovers the cost-free stream's values exactly (per function, per call
 * site, per-call statistics), and what it took out is the cost added; and
 * intervals shorter than the cost come out as zero, never negative.
 */
static void run_compensation(void)
{
	static const uint32_t cost[4] = { 7, 11, 5, 9 };
	static struct result got, want, raw;
	int round, bad_f = 0, bad_c = 0, bad_s = 0, bad_r = 0, rounds = 100;

	for (round = 0; round < rounds; round++) {
		struct stream s, m;
		uint64_t added;
		char what[64];

		snprintf(what, sizeof(what), "compensation round %d", round);
		random_stream(&s, 1 + rnd(3), 1, 50 + rnd(2000), 1 + rnd(6), 1 + rnd(3), 40);
		add_probe_cost(&s, &m, cost, &added);
		brute_force(&s, &want);
		brute_force(&m, &raw);
		memcpy(eng_cost, cost, 4 * sizeof(*eng_cost)), eng_cost[4] = cost[1];
		bad_s += run_engine(&m, 8 << 20, &got) != 0;
		memset(eng_cost, 0, sizeof(eng_cost));
		bad_f += cmp_fvals(what, &got, &want, 1) != 0;
		bad_c += cmp_callsites(what, &got, &want) != 0;
		if (got.sess_ei != want.sess_ei || got.sess_ai != want.sess_ai || got.removed != added)
			bad_s++;
		for (int f = 1; f < MAXF; f++)
			if (got.f[f].ee + got.raw_ee[f] != raw.f[f].ee) {
				if (!bad_r)
					printf("# %s: f%d raw EE %lu + %lu != %lu\n", what, f, got.f[f].ee,
					       got.raw_ee[f], raw.f[f].ee);
				bad_r++;
			}
		free(s.ev);
		free(m.ev);
	}
	is_u64(bad_f, 0, "compensation: per-function values and per-call stats equal the cost-free stream's (%d rounds)", rounds);
	is_u64(bad_c, 0, "compensation: call-site values equal the cost-free stream's");
	is_u64(bad_s, 0, "compensation: session totals equal, cost taken out = cost added");
	is_u64(bad_r, 0, "compensation: EE + what was taken out = the measured stream's EE");

	/*
	 * A clock read early or late moves time between two neighbouring
	 * intervals: one comes out shorter than its cost, the next longer by
	 * as much.  The cost the short one could not give is taken back from
	 * its call's time so far, or from the next interval, so all the cost
	 * added is taken out but what is still owed at the end, and the
	 * session's EI stays what it was (single thread, no OS events).
	 */
	{
		int bad = 0, moved = 0;

		for (round = 0; round < 50; round++) {
			struct stream s, m;
			uint64_t added;
			int j = 0;

			random_stream(&s, 1, 1, 200 + rnd(1000), 1 + rnd(6), 1 + rnd(3), 40);
			for (int i = 0; i < s.nev; i++)
				if (s.ev[i].kind != EV_OS)
					s.ev[j++] = s.ev[i];
			s.nev = j;
			add_probe_cost(&s, &m, cost, &added);
			brute_force(&s, &want);
			/* events 2.. (never the last) read the clock up to 4 ticks
			 * early, as far back as the previous event; both intervals
			 * inside a function (time outside every function is no
			 * function's, so moving it would change the session's EI);
			 * never two neighbours, so the next interval is the one
			 * that grew */
			for (int i = 1, depth = 1, last = 0; i + 1 < m.nev; i++) {
				int after = depth + (m.ev[i].kind == EV_EXIT ? -1 : 1);
				uint64_t back = rnd(5), room = m.ev[i].t - m.ev[i - 1].t;

				if (back > room || depth < 1 || after < 1 || last == i - 1)
					back = 0;
				m.ev[i].t -= back;
				if (back) {
					moved++;
					last = i;
				}
				depth = after;
			}
			memcpy(eng_cost, cost, 4 * sizeof(*eng_cost)), eng_cost[4] = cost[1];
			bad += run_engine(&m, 8 << 20, &got) != 0;
			memset(eng_cost, 0, sizeof(eng_cost));
			/* (the depth followed above ignores the stream's repairs:
			 * the session's EI may move by a few ticks) */
			if (got.sess_ei + want.sess_ei / 100 < want.sess_ei ||
			    got.sess_ei > want.sess_ei + want.sess_ei / 100 || got.removed > added ||
			    added - got.removed > 64 * 4 * 11) {
				if (!bad)
					printf("# jitter round %d: session EI %lu want %lu, taken out %lu, added %lu\n",
					       round, got.sess_ei, want.sess_ei, got.removed, added);
				bad++;
			}
			free(s.ev);
			free(m.ev);
		}
		ok(!bad && moved > 1000,
		   "compensation: clock readings moved up to 4 ticks early (%d events): all the cost taken out or still owed at the end, session EI within 1%%",
		   moved);
	}

	/* a cost larger than every interval: all times zero, calls exact */
	{
		static const uint32_t huge[4] = { 1000, 1000, 1000, 1000 };
		struct stream s;
		uint64_t calls = 0, sum = 0;

		random_stream(&s, 1, 1, 500, 4, 2, 30);
		int j = 0;

		for (int i = 0; i < s.nev; i++)
			if (s.ev[i].kind != EV_OS)     /* OS-bound intervals keep their time */
				s.ev[j++] = s.ev[i];
		s.nev = j;
		memcpy(eng_cost, huge, 4 * sizeof(*eng_cost)), eng_cost[4] = huge[1];
		bad_s = run_engine(&s, 8 << 20, &got) != 0;
		memset(eng_cost, 0, sizeof(eng_cost));
		brute_force(&s, &want);
		for (int f = 1; f < MAXF; f++) {
			calls += got.f[f].calls != want.f[f].calls;
			sum += got.f[f].ei + got.f[f].ee + got.f[f].ai + got.f[f].ae;
		}
		ok(!bad_s && calls == 0 && sum == 0 && got.sess_ei == 0,
		   "compensation: a cost above every interval leaves zero times (never negative), exact calls");
		free(s.ev);
	}

	/*
	 * A caller's intervals come short and run long by the same jitter:
	 * P (own work 5 per interval, cost 10) calls the leaf L (100 of work)
	 * three times; the second call's entry is read 8 ticks early, the
	 * third's 8 late.  The short interval (7 for a cost of 10) takes its
	 * 3 back from P's own time so far, so P keeps exactly its 20 and the
	 * leaves their 300 (taken from the next interval, L's, it was 23 and
	 * 297).  M around it: 100 less one enter-enter cost.
	 */
	{
		static const uint32_t c10[5] = { 10, 10, 10, 10, 10 };
		static const uint64_t tm[] = { 900, 1000, 1015, 1125, 1132, 1250, 1273, 1375, 1390, 1400 };
		static const int kind[] = { EV_ENTER, EV_ENTER, EV_ENTER, EV_EXIT, EV_ENTER, EV_EXIT, EV_ENTER,
					    EV_EXIT, EV_EXIT, EV_EXIT };
		static const int fn[] = { 1, 2, 3, 3, 3, 3, 3, 3, 2, 1 };
		struct stream s;

		fixed_stream(&s, kind, fn, tm, 10);
		memcpy(eng_cost, c10, sizeof(c10));
		ok(run_engine(&s, 8 << 20, &got) == 0, "compensation, jitter in a caller: emitted");
		memset(eng_cost, 0, sizeof(eng_cost));
		ok(got.f[2].ee == 20 && got.f[3].ee == 300 && got.f[3].calls == 3 && got.f[1].ee == 90,
		   "compensation, jitter in a caller: P's own 20 (got %lu), the leaf's 300 (got %lu), M's 100 (got %lu)",
		   (unsigned long)got.f[2].ee, (unsigned long)got.f[3].ee, (unsigned long)got.f[1].ee);
		free(s.ev);
	}

	/*
	 * What a call cannot give (its own time short of its cost) is given by
	 * the next call of the same caller to close, else by the caller: never
	 * by a call in another call's subtree.
	 *  1. C calls the empty E three times, cost 10 an interval: E's raw
	 *     intervals 5, 15, 10 (jitter around the cost) net out among the
	 *     siblings: E 0 (the first call's 5 short is given by the second),
	 *     C 0, M 130 - 20.
	 *  2. M calls P twice, P calls the leaf L (100 ticks) once; P's own
	 *     intervals (5 and 5) are short of its 20: the second P gives the
	 *     first's 10, and M the rest; both leaves keep their 90 (a rule
	 *     that hands the shortfall to whatever closes next charged it to
	 *     the second P's leaf).
	 */
	{
		static const uint32_t c10[5] = { 10, 10, 10, 10, 10 };
		static const uint64_t t1[] = { 0, 100, 110, 115, 125, 140, 150, 160, 170, 200 };
		static const int k1[] = { EV_ENTER, EV_ENTER, EV_ENTER, EV_EXIT, EV_ENTER, EV_EXIT, EV_ENTER,
					  EV_EXIT, EV_EXIT, EV_EXIT };
		static const int f1[] = { 1, 2, 3, 3, 3, 3, 3, 3, 2, 1 };
		static const uint64_t t2[] = { 0, 100, 105, 205, 210, 300, 305, 405, 410, 500 };
		static const int k2[] = { EV_ENTER, EV_ENTER, EV_ENTER, EV_EXIT, EV_EXIT, EV_ENTER, EV_ENTER,
					  EV_EXIT, EV_EXIT, EV_EXIT };
		static const int f2[] = { 1, 2, 3, 3, 2, 2, 3, 3, 2, 1 };
		struct stream s, s2;

		fixed_stream(&s, k1, f1, t1, 10);
		fixed_stream(&s2, k2, f2, t2, 10);
		memcpy(eng_cost, c10, sizeof(c10));
		ok(run_engine(&s, 8 << 20, &got) == 0, "compensation, siblings: emitted");
		ok(got.f[3].ee == 0 && got.f[3].calls == 3 && got.f[2].ee == 0 && got.f[1].ee == 110 &&
		   got.f[1].ei == 110,
		   "compensation, siblings: E's short call given by the next E: E 0 (got %lu), C 0 (got %lu), M 110 (got %lu)",
		   (unsigned long)got.f[3].ee, (unsigned long)got.f[2].ee, (unsigned long)got.f[1].ee);
		ok(run_engine(&s2, 8 << 20, &got) == 0, "compensation, a short caller: emitted");
		ok(got.f[3].ee == 180 && got.f[3].calls == 2 && got.f[2].ee == 0 && got.f[2].ei == 180 &&
		   got.f[1].ee == 230 && got.f[1].ei == 410,
		   "compensation, a short caller: its leaves keep 180 (got %lu), P 0 (got %lu), M 230 (got %lu)",
		   (unsigned long)got.f[3].ee, (unsigned long)got.f[2].ee, (unsigned long)got.f[1].ee);
		memset(eng_cost, 0, sizeof(eng_cost));
		free(s.ev);
		free(s2.ev);
	}
}

/* ---- limits ------------------------------------------------------------ */

/* 5000 nested calls (stack grows), 3000 call sites (table grows). */
static void run_deep_and_wide(void)
{
	struct stream s = { 0 };
	static struct result got, want;
	int i;

	s.nthreads = 1;
	s.pid[0] = s.tid[0] = 1;
	for (i = 0; i < 5000; i++)
		push_ev(&s, (struct event){ EV_ENTER, 0, 1 + i % 7, 0x5000 + i, i * 3, 0 });
	for (i = 4999; i >= 0; i--)
		push_ev(&s, (struct event){ EV_EXIT, 0, 1 + i % 7, 0, 20000 + (5000 - i) * 2, 0 });
	push_ev(&s, (struct event){ EV_ENTER, 0, 9, 0x9, 40000, 0 });
	for (i = 0; i < 3000; i++) {
		push_ev(&s, (struct event){ EV_ENTER, 0, 10 + i % 20, 0x100000 + i * 16, 40001 + i * 4, 0 });
		push_ev(&s, (struct event){ EV_EXIT, 0, 10 + i % 20, 0, 40003 + i * 4, 0 });
	}
	push_ev(&s, (struct event){ EV_EXIT, 0, 9, 0, 60000, 0 });
	ok(run_engine(&s, 64 << 20, &got) == 0, "deep and wide: emitted");
	brute_force(&s, &want);
	ok(cmp_fvals("deep", &got, &want, 1) == 0, "deep stack: values match brute force");
	ok(cmp_callsites("wide", &got, &want) == 0 && got.ncs == 5001 + 3000,
	   "3000 call sites: all kept after the table grew (%d)", got.ncs);
	is_u64(got.lost, 0, "deep and wide: nothing lost");
	free(s.ev);
}

/*
 * A tiny arena: new nodes fail, events are dropped and counted, the stack
 * keeps its shape (the time of the dropped part goes to the frame below)
 * and nothing crashes; the session totals still add up.
 */
static void run_full_arena(void)
{
	struct stream s = { 0 };
	static struct result got;
	uint64_t len = 128 * 1024;
	int i, n = 0;

	s.nthreads = 1;
	s.pid[0] = s.tid[0] = 1;
	push_ev(&s, (struct event){ EV_ENTER, 0, 1, 0x10, 0, 0 });
	/* many distinct paths: f2..f40 nested in every order -> many nodes */
	for (i = 0; i < 2000; i++) {
		int a = 2 + i % 39, b = 2 + (i / 39) % 39;
		push_ev(&s, (struct event){ EV_ENTER, 0, a, 0x20, 10 + i * 10, 0 });
		push_ev(&s, (struct event){ EV_ENTER, 0, b, 0x30, 11 + i * 10, 0 });
		push_ev(&s, (struct event){ EV_EXIT, 0, b, 0, 13 + i * 10, 0 });
		push_ev(&s, (struct event){ EV_EXIT, 0, a, 0, 16 + i * 10, 0 });
		n += 4;
	}
	push_ev(&s, (struct event){ EV_EXIT, 0, 1, 0, 100000, 0 });
	ok(run_engine(&s, len, &got) == 0, "full arena: emitted");
	ok(got.lost > 0, "full arena: events lost and counted (%lu)", got.lost);
	is_u64(got.sess_ei, 100000, "full arena: session time still complete");
	is_u64(got.f[1].ei, 100000, "full arena: outer function keeps its inclusive time");
	is_u64(got.f[1].calls, 1, "full arena: outer call counted once");
	is_u64(got.repairs, 0, "full arena: no repairs from dropped events");
	is_u64(got.events + got.lost, n + 2, "full arena: events + lost = all events");
	free(s.ev);
}

/*
 * Stack positions (SPEC section 2): entries carry their CFA (sp, with no
 * cfa_of callback) and the pc of their probe.  Checked on the engine's own
 * state: which frames are open, how many repairs, and each node's calls.
 */
static uint64_t depth_of(const struct sc_eng_thread *t) { return (uint64_t)(t->top - t->stack); }

static void run_cfa(void)
{
	uint64_t len = 1 << 20, i;
	uint8_t *buf = calloc(1, len);
	struct sc_eng_arena a;
	struct sc_eng_thread *t;
	const uint64_t MAIN = FUNC(1), STEP = FUNC(2), OP = FUNC(3), FAIL = FUNC(4), AFTER = FUNC(5);
	const uint64_t S_MAIN = 0x100, S_STEP = 0x200, S_OP = 0x300, S_FAIL = 0x400, S_AFTER = 0x500;

	sc_eng_arena_init(&a, buf, len);
	t = sc_eng_thread_new(&a, 9, 0);
	/* main at 0x10000; an interpreter loop: step -> op -> fail, longjmp */
	sc_eng_enter_sp(t, MAIN, S_MAIN, 1, 0x10000, 0xa0);
	for (i = 0; i < 1000; i++) {
		uint64_t now = 10 + 4 * i;
		sc_eng_enter_sp(t, STEP, S_STEP, now, 0xff00, 0xb0);
		sc_eng_enter_sp(t, OP, S_OP, now + 1, 0xfe00, 0xc0);
		sc_eng_enter_sp(t, FAIL, S_FAIL, now + 2, 0xfd00, 0xd0);
	}
	is_u64(depth_of(t), 4, "cfa: 1000 jumps leave main + one step/op/fail open (not 3001 frames)");
	is_u64(t->repair_closed, 999 * 3, "cfa: 3 repairs per jump so far");
	/* a callee below fail is a live call: nothing closed */
	sc_eng_enter_sp(t, AFTER, S_AFTER, 5000, 0xfc00, 0xe0);
	is_u64(depth_of(t), 5, "cfa: a deeper entry closes nothing");
	sc_eng_exit(t, AFTER, 5001);
	/* an entry back at main's level closes step, op and fail at that time */
	sc_eng_enter_sp(t, AFTER, S_AFTER, 6000, 0xff00, 0xe0);
	is_u64(t->repair_closed, 1000 * 3, "cfa: the last jump's 3 frames closed by the next entry above them");
	is_u64(depth_of(t), 2, "cfa: main and after_work open");
	ok(t->stack[1].entry == 1 && t->stack[1].node->func == MAIN, "cfa: main itself is never closed");
	sc_eng_exit(t, AFTER, 6100);
	/* a function inlined into main: same CFA, same site, another pc */
	sc_eng_enter_sp(t, STEP, S_MAIN, 6200, 0x10000, 0xa8);
	is_u64(depth_of(t), 2, "cfa: an inlined entry (equal CFA, same site, other pc) keeps main open");
	is_u64(t->top->cfa, 0x10000 - 1, "cfa: the inlined frame sits just below its container");
	/* and inlined into itself: again another pc */
	sc_eng_enter_sp(t, STEP, S_MAIN, 6300, 0x10000, 0xa9);
	is_u64(depth_of(t), 3, "cfa: inlined recursion keeps both frames");
	sc_eng_exit(t, STEP, 6400);
	sc_eng_exit(t, STEP, 6500);
	/* the same pc at the same CFA is a new activation: the old one is gone */
	sc_eng_enter_sp(t, STEP, S_STEP, 6600, 0xff00, 0xb0);
	sc_eng_enter_sp(t, STEP, S_STEP, 6700, 0xff00, 0xb0);
	is_u64(depth_of(t), 2, "cfa: re-entry at the same place and pc replaces the old frame");
	is_u64(t->repair_closed, 3001, "cfa: one repair for it");
	/* frames without a position are never closed by one */
	sc_eng_enter(t, OP, S_OP, 6800);
	sc_eng_enter_sp(t, FAIL, S_FAIL, 6900, 0xff80, 0xd0);
	is_u64(depth_of(t), 4, "cfa: a frame with no known CFA is not closed by position");
	ok(t->top->node->func == FAIL && t->top[-1].node->func == OP, "cfa: it stays below the new entry");
	free(buf);
}

/*
 * Threads of execution that switch (runtime/ctx.c: a coroutine's stack is
 * one): a suspended one's open frames leave its suspended time out, the
 * interval up to the switch is its top's; and an entry applied with its
 * position known but no stack pointer (probe.c: a signal handler's,
 * queued while a probe ran) is placed by that position and learns nothing.
 */
static void run_contexts(void)
{
	uint64_t len = 1 << 20;
	uint8_t *buf = calloc(1, len);
	struct sc_eng_arena a;
	struct sc_eng_thread *t, *co;
	struct sc_eng_node *n_main, *n_body, *n_step, *n_h;
	const uint64_t MAIN = FUNC(1), BODY = FUNC(2), STEP = FUNC(3), H = FUNC(4), HW = FUNC(5), LOOP = FUNC(6);

	sc_eng_arena_init(&a, buf, len);
	t = sc_eng_thread_new(&a, 7, 0);
	sc_eng_enter(t, MAIN, 0x100, 10);
	n_main = t->top->node;
	/* main switches to the coroutine at 100: made then, it runs body and
	 * step, and switches back at 150 */
	is_u64(sc_eng_suspend(t, 100), 100, "contexts: suspended at its reading");
	co = sc_eng_thread_new(&a, 7, 100);
	sc_eng_enter(co, BODY, 0x200, 110);
	n_body = co->top->node;
	sc_eng_enter(co, STEP, 0x300, 120);
	n_step = co->top->node;
	sc_eng_suspend(co, 150);
	/* main runs 150..400, then the coroutine 400..500: step returns */
	sc_eng_resume(t, 100, 150);
	sc_eng_suspend(t, 400);
	sc_eng_resume(co, 150, 400);
	sc_eng_exit(co, STEP, 430);
	is_u64(n_step->incl_sum, (150 - 120) + (430 - 400), "contexts: step's call is its two turns (30 + 30 ticks)");
	sc_eng_suspend(co, 500);
	sc_eng_resume(t, 400, 500);
	sc_eng_exit(t, MAIN, 600);
	is_u64(n_main->incl_sum, (100 - 10) + (400 - 150) + (600 - 500), "contexts: main's call leaves out the coroutine's turns");
	is_u64(n_main->excl_sum, n_main->incl_sum, "contexts: all of it main's own (the coroutine is no child of it)");
	is_u64(co->top - co->stack, 1, "contexts: body still open in the coroutine");
	is_u64(co->top->entry, 110 + (400 - 150), "contexts: its entry moved later by the time it was suspended");
	is_u64(n_body->calls, 1, "contexts: body's one call");
	is_u64(t->repair_closed + co->repair_closed + t->stray_exits + co->stray_exits, 0, "contexts: no repair");

	/* a handler's entry, queued: its position given, no stack pointer */
	sc_eng_enter_sp(t, LOOP, 0x600, 700, 0x10000, 0xa0);
	sc_eng_enter_at(t, H, 0x400, 710, 0, 0xf000, 0xb0);
	n_h = t->top->node;
	is_u64(t->top - t->stack, 2, "contexts: a queued entry below loop's position nests in it");
	ok(!(n_h->flags & SC_ENG_NODE_CFA), "contexts: nothing learned from a queued entry");
	sc_eng_enter_sp(t, HW, 0x500, 720, 0xef00, 0xc0);
	sc_eng_exit(t, HW, 730);
	sc_eng_exit(t, H, 740);
	is_u64(t->repair_closed, 0, "contexts: the handler's callee under it, nothing closed");
	/* the same entry at a stale position (above loop's): loop closed */
	sc_eng_enter_at(t, H, 0x400, 750, 0, 0x10100, 0xb0);
	is_u64(t->repair_closed, 1, "contexts: a position above loop's closes it (why a queued entry's is read while its stack lives)");
	free(buf);
}

/*
 * Sampled shares (SPEC section 14): a sample goes to the node on top (the
 * frame below a dropping one), one in probe code is only counted, the
 * table grows past its first size, the counts add up; repairs by cause.
 */
static void run_samples_causes(void)
{
	uint64_t len = 4 << 20, i, sum = 0, root = 0, leaf = 0;
	uint8_t *buf = calloc(1, len);
	struct sc_eng_arena a;
	struct sc_eng_thread *t;
	const struct sc_eng_samp *tab;
	struct sc_eng_more *m;

	sc_eng_arena_init(&a, buf, len);
	t = sc_eng_thread_new(&a, 3, 0);
	m = sc_eng_more_of(t);
	is_u64(m->repair_cause, SC_ENG_REPAIR_OTHER, "causes: a new thread's repairs are 'other'");
	sc_eng_sample(t, 0);                        /* nothing open: the root */
	sc_eng_enter(t, FUNC(1), 0x10, 1);
	sc_eng_sample(t, 0);
	sc_eng_sample(t, 0);
	sc_eng_sample(t, 1);                        /* in a probe */
	/* 600 distinct children: the table doubles past 256 slots */
	for (i = 0; i < 600; i++) {
		sc_eng_enter(t, FUNC(100 + i), 0x20, 10 + 2 * i);
		sc_eng_sample(t, 0);
		sc_eng_exit(t, FUNC(100 + i), 11 + 2 * i);
	}
	is_u64(m->samples, 604, "samples: all counted");
	is_u64(m->probe_samples, 1, "samples: one in probe code");
	ok(m->samp_mask + 1 >= 2 * m->samp_used, "samples: table at most half full (%u of %u)",
	   m->samp_used, m->samp_mask + 1);
	is_u64(m->samp_used, 602, "samples: one entry per node sampled (root, main, 600 children)");
	tab = (const struct sc_eng_samp *)(t->base + m->samp_off);
	for (i = 0; i <= m->samp_mask; i++) {
		sum += tab[i].count;
		if (tab[i].key == 1)
			root = tab[i].count;
		if (tab[i].key == t->stack[1].node->id + 1)
			leaf = tab[i].count;
	}
	is_u64(sum, m->samples - m->probe_samples, "samples: the nodes' counts add up to the program's");
	is_u64(root, 1, "samples: the root's sample (no call open)");
	is_u64(leaf, 2, "samples: the node on top when they came");
	/* causes: the runtime says why before the engine repairs */
	sc_eng_enter_sp(t, FUNC(2), 0x30, 2000, 0xf000, 0xa0);
	sc_eng_enter_sp(t, FUNC(3), 0x40, 2001, 0xe000, 0xb0);
	m->repair_cause = SC_ENG_REPAIR_LONGJMP;
	sc_eng_cfa_repair(t, 0, 0, 0xe800, 2002);   /* a jump up to above FUNC(3) */
	m->repair_cause = SC_ENG_REPAIR_OTHER;
	is_u64(m->repair_by[SC_ENG_REPAIR_LONGJMP], 1, "causes: the frame the jump left, counted as longjmp");
	sc_eng_exit(t, FUNC(77), 2003);             /* no such frame */
	is_u64(m->repair_by[SC_ENG_REPAIR_OTHER], 1, "causes: an exit without an entry is 'other'");
	m->repair_cause = SC_ENG_REPAIR_EXCEPTION;
	sc_eng_enter_sp(t, FUNC(4), 0x50, 2004, 0xd000, 0xc0);
	sc_eng_exit(t, FUNC(1), 2005);              /* main's exit closes FUNC(2) and FUNC(4) */
	is_u64(m->repair_by[SC_ENG_REPAIR_EXCEPTION], 2, "causes: frames a deeper exit closed, as the exception's");
	is_u64(m->repair_by[0] + m->repair_by[1] + m->repair_by[2] + m->repair_by[3],
	       t->repair_closed + t->stray_exits, "causes: they split the repairs exactly");
	free(buf);
}

/*
 * Child lookups (sc_eng_child_slow, the child cache): 3000 children of
 * main, each with four children of its own (functions shared between
 * parents, so pairs differ by parent only), entered twice, the second time
 * in another order.  The second pass finds every node (no new one: no
 * pair found twice), each node counts its two calls, and the sibling lists
 * stay complete (calib.c walks them).
 */
static void run_child_table(void)
{
	uint64_t len = 64 << 20, now = 1, first_pass = 0, twice = 0, found = 0, others = 0, listed = 0;
	uint8_t *buf = calloc(1, len);
	struct sc_eng_arena a;
	struct sc_eng_thread *t;
	struct sc_eng_chunk *c;
	struct sc_eng_node *main_node = 0;
	uint32_t idx;
	int pass, j, i, k;

	sc_eng_arena_init(&a, buf, len);
	t = sc_eng_thread_new(&a, 5, 0);
	sc_eng_enter(t, FUNC(1), 0x10, now++);
	for (pass = 0; pass < 2; pass++) {
		for (j = 0; j < 3000; j++) {
			i = pass ? (j * 1237) % 3000 : j;
			sc_eng_enter(t, 0x100000 + (uint64_t)i * 16, 0x20, now++);
			for (k = 0; k < 4; k++) {
				sc_eng_enter(t, FUNC(2 + (i + k) % 50), 0x30 + (uint64_t)k, now++);
				sc_eng_exit(t, FUNC(2 + (i + k) % 50), now++);
			}
			sc_eng_exit(t, 0x100000 + (uint64_t)i * 16, now++);
		}
		if (!pass)
			first_pass = t->nnodes;
	}
	is_u64(first_pass, 2 + 3000 + 3000 * 4, "child lookups: one node per path (root, main, 3000, 12000)");
	is_u64(t->nnodes, first_pass, "child lookups: the second pass made no node");
	ok(t->ccache != NULL, "child lookups: a cache made for a thread that walks siblings often");
	for (c = (struct sc_eng_chunk *)(t->base + t->chunk_head_off); c;
	     c = c->next_off ? (struct sc_eng_chunk *)(t->base + c->next_off) : 0) {
		struct sc_eng_node *n = (struct sc_eng_node *)(c + 1);

		for (j = 0; j < (int)c->used; j++) {
			if (n[j].func == FUNC(1))
				main_node = &n[j];
			else if (n[j].parent != UINT32_MAX && n[j].calls == 2)
				twice++;
			else if (n[j].parent != UINT32_MAX)
				others++;
			if (n[j].parent != UINT32_MAX && n[j].parent < j + c->first_id)
				found++;
		}
	}
	is_u64(twice, 15000, "child lookups: every node below main counts its two calls");
	is_u64(others, 0, "child lookups: no node with another count");
	is_u64(found, t->nnodes - 1, "child lookups: every node but the root made after its parent");
	ok(main_node && main_node->calls == 1, "child lookups: main entered once");
	for (idx = main_node ? main_node->first_child : 0; idx; idx = sc_eng_node_at(t, idx)->next_sibling)
		listed++;
	is_u64(listed, 3000, "child lookups: main's sibling list holds its 3000 children");
	sc_eng_exit(t, FUNC(1), now++);
	sc_eng_thread_retire(t);
	ok(!t->ccache, "child lookups: the cache given back when the thread retires");
	free(buf);
}

/* The emitter on garbage: refuses, never crashes. */
static void run_damaged(void)
{
	uint64_t len = 1 << 20, offs[4];
	uint8_t *buf = calloc(1, len), *copy;
	struct sc_eng_arena a;
	struct sc_eng_thread *t;
	struct sc_writer *w;
	int i, n, bad = 0;

	sc_eng_arena_init(&a, buf, len);
	t = sc_eng_thread_new(&a, 7, 0);
	for (i = 0; i < 100; i++)
		sc_eng_enter(t, FUNC(1 + i % 5), 0x10, i);
	ok(sc_writer_open(tmpfile_path, SC_FEAT_INSTRUMENT, &w) == 0, "damaged: writer");
	n = sc_cct_threads(buf, len, offs, 4);
	is_u64(n, 1, "damaged: one thread listed");
	is_u64(sc_cct_emit_thread(w, buf, len, offs[0], 1, &SC_TICK_CONV_IDENTITY, NULL), 0,
	       "intact arena emits");
	/* one buffer for the 2000 copies: a fresh megabyte each time cost
	 * the sanitizer build a map, 256 page faults and an unmap per copy
	 * (90 s of its run); each copy still starts from the intact arena */
	copy = malloc(len);
	for (i = 0; i < 2000; i++) {
		uint64_t at;
		memcpy(copy, buf, len);
		/* scribble over the thread struct or a node chunk */
		at = (i & 1 ? offs[0] : t->chunk_head_off) + rnd(4096);
		if (at + 8 <= len) {
			uint64_t v = rnd(4) ? rng : rnd(1 << 20);
			memcpy(copy + at, &v, 8);
		}
		n = sc_cct_threads(copy, len, offs + 1, 2);
		if (n > 0 && sc_cct_emit_thread(w, copy, len, offs[1], 1, &SC_TICK_CONV_IDENTITY, NULL) > 0)
			bad++;
	}
	free(copy);
	is_u64(bad, 0, "damaged arenas: refused or emitted, never crashed");
	n = sc_cct_threads(buf, 100, offs, 4);
	ok(n < 0, "truncated arena refused");
	sc_writer_close(w);
	free(buf);
}

int main(void)
{
	int fd = mkstemp(tmpfile_path);

	if (fd < 0)
		return 1;
	close(fd);
	run_vectors();
	run_random();
	run_retire();
	run_compensation();
	run_deep_and_wide();
	run_full_arena();
	run_cfa();
	run_contexts();
	run_samples_causes();
	run_child_table();
	run_damaged();
	unlink(tmpfile_path);
	return tap_done();
}
