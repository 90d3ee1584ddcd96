/*
 * --format chrome: the recording's timeline (analysis/timeline.h, SPEC
 * section 12) in the Trace Event Format, the JSON that Perfetto,
 * chrome://tracing and speedscope read.
 *
 *	{"otherData": {...},
 *	 "traceEvents": [
 *	  {"ph":"M","ts":0,"pid":P,"tid":T,"name":"process_name","args":{"name":EXE}},
 *	  {"ph":"M","ts":0,"pid":P,"tid":T,"name":"thread_name","args":{"name":COMM}},
 *	  {"ph":"X","ts":US,"dur":US,"pid":P,"tid":T,"name":FUNC,"cat":"call","args":{"module":M}},
 *	  {"ph":"X",...,"name":"syscall read","cat":"os","args":{"sysno":0}},
 *	  {"ph":"i","ts":US,"pid":P,"tid":T,"s":"t","name":LEAF,"cat":"sample","sf":N},
 *	  ...],
 *	 "stackFrames": {"N": {"name":FUNC,"category":MODULE,"parent":N}, ...},
 *	 "samples": [{"pid":P,"tid":T,"ts":US,"sf":N,"weight":1,"name":"cpu-clock"}, ...]}
 *
 * One track per recorded thread (the recording's pid and tid); each call a
 * complete event ("X", cat "call", or "libcall" for a call into another
 * module), each OS event one too (cat "os"): times are microseconds with
 * the nanoseconds as three decimals, so nothing is rounded.  Slices of one
 * track must nest (the viewers refuse or misdraw overlaps): calls do, and an
 * OS event lies within the call it interrupted, but one that does not (a
 * clock's skew at a call's end) goes to a second track of its thread, tid
 * + 100000000 * k (thread ids stay below 2^22), named "COMM (track k+1)".
 *
 * Samples: every sample is an instant event on its thread's track (what
 * Perfetto shows of them) whose "sf" names its stack in the "stackFrames"
 * dictionary; a sampling recording also has the top-level "samples" list,
 * which speedscope and chrome://tracing read as a sampled profile per
 * thread.  An instrumentation recording gets no "samples" list: speedscope
 * would then read the samples alone and drop the calls.
 *
 * Keys are in the order Perfetto's tokenizer wants: "ph", "ts" and "dur"
 * before any string that may hold escapes, no arrays inside an event.
 * Strings go through out_json_string (escapes, invalid UTF-8 as U+FFFD),
 * once per function: the names are cached, the events formatted by hand
 * into a buffer, so 10 M events cost one pass and no per-event printf.
 */
#include "output/export.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/timeline.h"
#include "output/output.h"
#include "util/util.h"

/* ---- output buffer ------------------------------------------------------ */

struct obuf {
	FILE *f;
	size_t n;
	char b[1 << 16];
};

static void ob_flush(struct obuf *o)
{
	if (o->n)
		fwrite(o->b, 1, o->n, o->f);
	o->n = 0;
}

static void ob_put(struct obuf *o, const char *s, size_t len)
{
	if (o->n + len > sizeof(o->b)) {
		ob_flush(o);
		if (len > sizeof(o->b)) {
			fwrite(s, 1, len, o->f);
			return;
		}
	}
	memcpy(o->b + o->n, s, len);
	o->n += len;
}

/* A string literal (the "" makes anything else a compile error). */
#define OB_LIT(o, lit) ob_put((o), "" lit, sizeof(lit) - 1)

static void ob_u64(struct obuf *o, uint64_t v)
{
	char t[24];
	size_t i = sizeof(t);

	do {
		t[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	ob_put(o, t + i, sizeof(t) - i);
}

/* ns as microseconds, three decimals: 1234567 -> "1234.567" */
static void ob_us(struct obuf *o, uint64_t ns)
{
	char t[4] = { '.', (char)('0' + ns / 100 % 10), (char)('0' + ns / 10 % 10),
		      (char)('0' + ns % 10) };

	ob_u64(o, ns / 1000);
	ob_put(o, t, 4);
}

/* ---- escaped strings, made once ----------------------------------------- */

struct jstr {
	char *s;                  /* the JSON literal, quotes included */
	size_t len;
};

static struct jstr jstr_make(const char *s)
{
	struct jstr j = { NULL, 0 };
	FILE *m = open_memstream(&j.s, &j.len);

	if (!m) {
		pr_err("out of memory");
		exit(1);
	}
	out_json_string(m, s ? s : "(unknown)");
	if (fclose(m) != 0) {
		pr_err("out of memory");
		exit(1);
	}
	return j;
}

/* A function's name and module, escaped at first use (by function id + 1). */
struct fentry {
	struct jstr name, module;
};

struct fcache {
	struct fentry *v;
	size_t alloc;
};

static const struct fentry *fcache_get(struct fcache *c, const struct an_timeline *tl,
				       uint32_t func)
{
	size_t i = func == UINT32_MAX ? 0 : (size_t)func + 1;   /* 0: unknown */

	if (i >= c->alloc) {
		size_t old = c->alloc;

		ALLOC_GROW(c->v, i + 1, c->alloc);
		memset(c->v + old, 0, (c->alloc - old) * sizeof(*c->v));
	}
	if (!c->v[i].name.s) {
		c->v[i].name = jstr_make(i ? an_tl_name(tl, func) : NULL);
		c->v[i].module = jstr_make(out_base_name(i ? an_tl_module(tl, func) : NULL, ""));
	}
	return &c->v[i];
}

static void fcache_release(struct fcache *c)
{
	for (size_t i = 0; i < c->alloc; i++) {
		free(c->v[i].name.s);
		free(c->v[i].module.s);
	}
	free(c->v);
}

/* ---- stack frames: (parent frame, function) -> frame id ----------------- */

struct frame {
	uint32_t parent;          /* 0: none (ids start at 1: speedscope reads 0 as none) */
	uint32_t func;
};

struct frames {
	struct frame *v;          /* v[id - 1] */
	size_t n, alloc;
	uint64_t *keys;           /* open addressing: key, 0 = empty */
	uint32_t *ids;
	size_t cap;
};

static uint64_t frame_key(uint32_t parent, uint32_t func)
{
	return ((uint64_t)parent << 32 | func) + 1;     /* never 0 */
}

static void frames_grow(struct frames *fr)
{
	size_t cap = fr->cap ? fr->cap * 2 : 1024;
	uint64_t *keys = xcalloc(cap, sizeof(*keys));
	uint32_t *ids = xmalloc(cap * sizeof(*ids));

	for (size_t i = 0; i < fr->cap; i++) {
		size_t h;

		if (!fr->keys[i])
			continue;
		for (h = hash_u64(fr->keys[i]) & (cap - 1); keys[h]; h = (h + 1) & (cap - 1))
			;
		keys[h] = fr->keys[i];
		ids[h] = fr->ids[i];
	}
	free(fr->keys);
	free(fr->ids);
	fr->keys = keys;
	fr->ids = ids;
	fr->cap = cap;
}

static uint32_t frame_id(struct frames *fr, uint32_t parent, uint32_t func)
{
	uint64_t key = frame_key(parent, func);
	size_t h;

	if ((fr->n + 1) * 2 > fr->cap)
		frames_grow(fr);
	for (h = hash_u64(key) & (fr->cap - 1); fr->keys[h]; h = (h + 1) & (fr->cap - 1))
		if (fr->keys[h] == key)
			return fr->ids[h];
	ALLOC_GROW(fr->v, fr->n + 1, fr->alloc);
	fr->v[fr->n++] = (struct frame){ parent, func };
	fr->keys[h] = key;
	fr->ids[h] = (uint32_t)fr->n;
	return (uint32_t)fr->n;
}

/* A sample's frame: its stack from the outermost function in. */
static uint32_t sample_frame(struct frames *fr, const struct an_timeline *tl,
			     const struct an_tl_item *it)
{
	uint32_t id = 0;

	if (!it->nstack)
		return frame_id(fr, 0, UINT32_MAX);
	for (uint32_t k = it->nstack; k-- > 0;)
		id = frame_id(fr, id, tl->frames[it->stack + k]);
	return id;
}

static void frames_release(struct frames *fr)
{
	free(fr->v);
	free(fr->keys);
	free(fr->ids);
}

/* ---- tracks: slices of one track nest ------------------------------------ */

#define TRACKS_MAX 8
#define TRACK_TID_STEP 100000000u

struct track {
	uint64_t *ends;           /* the open slices' ends, outermost first */
	size_t n, alloc;
	bool named;
};

/*
 * The first track of the thread where [start, end) nests (after what ended
 * by start is closed), or -1.
 */
static int track_pick(struct track *tr, uint64_t start, uint64_t end)
{
	for (int k = 0; k < TRACKS_MAX; k++) {
		struct track *t = &tr[k];

		while (t->n && t->ends[t->n - 1] <= start)
			t->n--;
		if (!t->n || t->ends[t->n - 1] >= end)
			return k;
	}
	return -1;
}

static void track_push(struct track *t, uint64_t end)
{
	ALLOC_GROW(t->ends, t->n + 1, t->alloc);
	t->ends[t->n++] = end;
}

/* ---- events ------------------------------------------------------------- */

struct chrome {
	struct obuf *o;
	struct an_timeline *tl;
	struct fcache fc;
	struct frames fr;
	size_t nsamples;
	bool first;               /* no event written yet */
};

static void ev_begin(struct chrome *c, const char *ph_ts)
{
	if (!c->first)
		OB_LIT(c->o, ",\n");
	c->first = false;
	ob_put(c->o, ph_ts, strlen(ph_ts));
}

static void ev_pid_tid(struct obuf *o, uint32_t pid, uint64_t tid)
{
	OB_LIT(o, ",\"pid\":");
	ob_u64(o, pid);
	OB_LIT(o, ",\"tid\":");
	ob_u64(o, tid);
}

static void ev_meta(struct chrome *c, const char *what, uint32_t pid, uint64_t tid,
		    const char *name, const char *suffix)
{
	struct jstr j;
	char *s = xasprintf("%s%s", name, suffix);

	ev_begin(c, "{\"ph\":\"M\",\"ts\":0");
	ev_pid_tid(c->o, pid, tid);
	OB_LIT(c->o, ",\"name\":\"");
	ob_put(c->o, what, strlen(what));
	OB_LIT(c->o, "\",\"args\":{\"name\":");
	j = jstr_make(s);
	ob_put(c->o, j.s, j.len);
	OB_LIT(c->o, "}}");
	free(j.s);
	free(s);
}

static const char *thread_label(const struct an_tl_thread *th)
{
	if (th->name && *th->name)
		return th->name;
	return out_base_name(th->exe, "thread");
}

static void ev_call(struct chrome *c, const struct an_tl_item *it, uint32_t pid, uint64_t tid,
		    uint64_t dur, bool clipped)
{
	struct obuf *o = c->o;
	const struct fentry *f = fcache_get(&c->fc, c->tl, it->func);

	ev_begin(c, "{\"ph\":\"X\",\"ts\":");
	ob_us(o, it->start_ns);
	OB_LIT(o, ",\"dur\":");
	ob_us(o, dur);
	ev_pid_tid(o, pid, tid);
	OB_LIT(o, ",\"name\":");
	ob_put(o, f->name.s, f->name.len);
	if (it->flags & AN_TL_LIBCALL)
		OB_LIT(o, ",\"cat\":\"libcall\",\"args\":{\"module\":");
	else
		OB_LIT(o, ",\"cat\":\"call\",\"args\":{\"module\":");
	ob_put(o, f->module.s, f->module.len);
	if (it->flags & AN_TL_OPEN)
		OB_LIT(o, ",\"open\":true");
	if (it->flags & AN_TL_REPAIRED)
		OB_LIT(o, ",\"repaired\":true");
	if (clipped)
		OB_LIT(o, ",\"clipped\":true");
	OB_LIT(o, "}}");
}

static void ev_os(struct chrome *c, const struct an_tl_item *it, uint32_t pid, uint64_t tid,
		  uint64_t dur, bool clipped)
{
	struct obuf *o = c->o;
	const char *cat = sc_os_cat_name(it->os_cat);

	ev_begin(c, "{\"ph\":\"X\",\"ts\":");
	ob_us(o, it->start_ns);
	OB_LIT(o, ",\"dur\":");
	ob_us(o, dur);
	ev_pid_tid(o, pid, tid);
	OB_LIT(o, ",\"name\":\"");
	ob_put(o, cat ? cat : "os", strlen(cat ? cat : "os"));
	if (it->os_cat == SC_OS_SYSCALL) {
		const char *sys = an_tl_syscall_name(it->sysno);

		/* system call names are [a-z0-9_]: nothing to escape */
		if (sys) {
			OB_LIT(o, " ");
			ob_put(o, sys, strlen(sys));
		} else if (it->sysno >= 0) {
			OB_LIT(o, " ");
			ob_u64(o, (uint64_t)it->sysno);
		}
	}
	OB_LIT(o, "\",\"cat\":\"os\"");
	if (it->os_cat == SC_OS_SYSCALL && it->sysno >= 0) {
		OB_LIT(o, ",\"args\":{\"sysno\":");
		ob_u64(o, (uint64_t)it->sysno);
		if (clipped)
			OB_LIT(o, ",\"clipped\":true");
		OB_LIT(o, "}");
	} else if (clipped) {
		OB_LIT(o, ",\"args\":{\"clipped\":true}");
	}
	OB_LIT(o, "}");
}

static void ev_sample(struct chrome *c, const struct an_tl_item *it, uint32_t pid, uint64_t tid)
{
	struct obuf *o = c->o;
	uint32_t sf = sample_frame(&c->fr, c->tl, it);
	const struct fentry *f = fcache_get(&c->fc, c->tl, it->nstack ? it->func : UINT32_MAX);

	c->nsamples++;
	ev_begin(c, "{\"ph\":\"i\",\"ts\":");
	ob_us(o, it->start_ns);
	ev_pid_tid(o, pid, tid);
	OB_LIT(o, ",\"s\":\"t\",\"name\":");
	ob_put(o, f->name.s, f->name.len);
	OB_LIT(o, ",\"cat\":\"sample\",\"sf\":");
	ob_u64(o, sf);
	OB_LIT(o, "}");
}

/* One thread's items, each slice on the first of its tracks where it nests. */
static void write_thread(struct chrome *c, size_t ti, struct track *tr)
{
	const struct an_tl_thread *th = &c->tl->threads[ti];
	const char *label = thread_label(th);
	struct an_tl_item item;

	for (int k = 0; k < TRACKS_MAX; k++) {
		tr[k].n = 0;
		tr[k].named = false;
	}
	ev_meta(c, "thread_name", th->pid, th->tid, label, "");
	tr[0].named = true;
	an_tl_begin(c->tl, ti);
	while (an_tl_next(c->tl, &item)) {
		const struct an_tl_item *it = &item;
		uint64_t dur = it->dur_ns, tid;
		bool clipped = false;
		int k;

		if (it->kind == AN_TL_SAMPLE) {
			ev_sample(c, it, th->pid, th->tid);
			continue;
		}
		k = track_pick(tr, it->start_ns, it->start_ns + dur);
		if (k < 0) {
			/* crosses a slice on every track: cut at the main track's */
			k = 0;
			dur = tr[0].ends[tr[0].n - 1] - it->start_ns;
			clipped = true;
		}
		tid = th->tid + (uint64_t)k * TRACK_TID_STEP;
		if (!tr[k].named) {
			char suffix[32];

			snprintf(suffix, sizeof(suffix), " (track %d)", k + 1);
			ev_meta(c, "thread_name", th->pid, tid, label, suffix);
			tr[k].named = true;
		}
		track_push(&tr[k], it->start_ns + dur);
		if (it->kind == AN_TL_CALL)
			ev_call(c, it, th->pid, tid, dur, clipped);
		else
			ev_os(c, it, th->pid, tid, dur, clipped);
	}
}

static void write_other_data(struct obuf *o, const struct an_timeline *tl)
{
	OB_LIT(o, "{\"otherData\":{\"generator\":\"stackclock\",\"method\":\"");
	if (tl->method == SC_METHOD_SAMPLE)
		OB_LIT(o, "sampling");
	else
		OB_LIT(o, "instrumentation");
	OB_LIT(o, "\",\"items\":");
	ob_u64(o, tl->items);
	OB_LIT(o, ",\"dropped\":");
	ob_u64(o, tl->dropped);
	OB_LIT(o, ",\"filtered\":");
	ob_u64(o, tl->filtered);
	OB_LIT(o, ",\"damaged_items\":");
	ob_u64(o, tl->damaged_items);
	OB_LIT(o, "},\n");
}

static void write_stack_frames(struct chrome *c)
{
	struct obuf *o = c->o;

	OB_LIT(o, ",\n\"stackFrames\":{");
	for (size_t i = 0; i < c->fr.n; i++) {
		const struct frame *f = &c->fr.v[i];
		const struct fentry *fe = fcache_get(&c->fc, c->tl, f->func);

		if (i)
			OB_LIT(o, ",\n");
		OB_LIT(o, "\"");
		ob_u64(o, i + 1);
		OB_LIT(o, "\":{\"name\":");
		ob_put(o, fe->name.s, fe->name.len);
		OB_LIT(o, ",\"category\":");
		ob_put(o, fe->module.s, fe->module.len);
		if (f->parent) {
			OB_LIT(o, ",\"parent\":");
			ob_u64(o, f->parent);
		}
		OB_LIT(o, "}");
	}
	OB_LIT(o, "}");
}

/* The top-level samples, in the order (and with the frames) of the
 * events: the timeline read again, each stack's frame found again. */
static void write_samples(struct chrome *c)
{
	struct obuf *o = c->o;
	struct an_tl_item it;
	size_t s = 0;

	OB_LIT(o, ",\n\"samples\":[");
	for (size_t i = 0; i < c->tl->nthreads; i++) {
		const struct an_tl_thread *th = &c->tl->threads[i];

		an_tl_begin(c->tl, i);
		while (an_tl_next(c->tl, &it)) {
			if (it.kind != AN_TL_SAMPLE)
				continue;
			if (s++)
				OB_LIT(o, ",");
			OB_LIT(o, "\n{\"pid\":");
			ob_u64(o, th->pid);
			OB_LIT(o, ",\"tid\":");
			ob_u64(o, th->tid);
			OB_LIT(o, ",\"ts\":");
			ob_us(o, it.start_ns);
			OB_LIT(o, ",\"sf\":");
			ob_u64(o, sample_frame(&c->fr, c->tl, &it));
			OB_LIT(o, ",\"weight\":1,\"name\":\"cpu-clock\"}");
		}
	}
	OB_LIT(o, "]");
}

static int write_chrome(FILE *f, struct an_profile *p, const struct exp_options *opt,
			char *err, size_t errlen)
{
	struct an_tl_filter all = AN_TL_FILTER_ALL;
	struct an_timeline *tl;
	struct track tr[TRACKS_MAX];
	struct chrome c;
	uint32_t last_pid = 0;
	int ret;

	(void)opt;
	ret = an_timeline_stream(p, &all, 0, &tl, err, errlen);
	if (ret == -ENOENT) {
		snprintf(err, errlen, "no timeline in this recording: record it with "
			 "'stackclock record --timeline' to export --format chrome");
		return -ENODATA;
	}
	if (ret < 0)
		return ret;
	memset(&c, 0, sizeof(c));
	memset(tr, 0, sizeof(tr));
	c.o = xmalloc(sizeof(*c.o));
	c.o->f = f;
	c.o->n = 0;
	c.tl = tl;
	c.first = true;
	write_other_data(c.o, tl);
	OB_LIT(c.o, "\"traceEvents\":[\n");
	for (size_t i = 0; i < tl->nthreads; i++) {
		const struct an_tl_thread *th = &tl->threads[i];

		if (!i || th->pid != last_pid) {
			ev_meta(&c, "process_name", th->pid, th->pid, out_base_name(th->exe, "process"), "");
			last_pid = th->pid;
		}
		write_thread(&c, i, tr);
	}
	OB_LIT(c.o, "\n]");
	if (c.fr.n)
		write_stack_frames(&c);
	if (tl->method == SC_METHOD_SAMPLE && c.nsamples)
		write_samples(&c);
	OB_LIT(c.o, "}\n");
	ob_flush(c.o);
	for (int k = 0; k < TRACKS_MAX; k++)
		free(tr[k].ends);
	fcache_release(&c.fc);
	frames_release(&c.fr);
	free(c.o);
	an_timeline_free(tl);
	return out_finish(f);
}

const struct exp_format exp_chrome = {
	.name = "chrome",
	.default_out = "stackclock.trace.json",
	.write = write_chrome,
};
