/*
 * unwind — address spaces and the frame-by-frame walk (see unwind.h).
 *
 * A step is: find the mapping holding the pc (binary search), turn the pc
 * into the object's virtual address, find its CFI row (binary search),
 * apply the row to (pc, sp, bp, rbx, r12-r15) reading saved values from the
 * copied stack.  For callers' frames the pc looked up is ip - 1: a call may be the
 * last instruction of its function (noreturn callees), and its return
 * address then belongs to the next function.
 */
#include "unwind/unwind.h"
#include "unwind/unwind_int.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

struct unw_map {
	uint64_t start, end, pgoff;
	struct unw_module *mod;
	int64_t delta;            /* object vaddr - runtime address */
	bool resolved;            /* delta computed (table looked up) */
	struct unw_table *table;
};

struct unw_space {
	struct unw_map *maps;     /* sorted by start, disjoint */
	size_t n, alloc;
};

struct unw_space *unw_space_new(void)
{
	return xcalloc(1, sizeof(struct unw_space));
}

struct unw_space *unw_space_clone(const struct unw_space *s)
{
	struct unw_space *c = unw_space_new();

	if (s->n) {
		ALLOC_GROW(c->maps, s->n, c->alloc);
		memcpy(c->maps, s->maps, s->n * sizeof(*s->maps));
		c->n = s->n;
	}
	return c;
}

void unw_space_free(struct unw_space *s)
{
	if (!s)
		return;
	free(s->maps);
	free(s);
}

size_t unw_space_count(const struct unw_space *s)
{
	return s->n;
}

void unw_space_get(const struct unw_space *s, size_t i, struct unw_mapping *out)
{
	const struct unw_map *m = &s->maps[i];

	out->start = m->start;
	out->end = m->end;
	out->pgoff = m->pgoff;
	out->mod = m->mod;
}

static void insert_at(struct unw_space *s, size_t i, const struct unw_map *m)
{
	ALLOC_GROW(s->maps, s->n + 1, s->alloc);
	memmove(&s->maps[i + 1], &s->maps[i], (s->n - i) * sizeof(*s->maps));
	s->maps[i] = *m;
	s->n++;
}

void unw_space_add(struct unw_space *s, uint64_t start, uint64_t end,
		   uint64_t pgoff, struct unw_module *m)
{
	struct unw_map nm = { .start = start, .end = end, .pgoff = pgoff, .mod = m };
	size_t i = 0;

	if (end <= start)
		return;
	/* Cut what the new mapping covers out of the old ones. */
	while (i < s->n) {
		struct unw_map *o = &s->maps[i];

		if (o->end <= start || o->start >= end) {
			i++;
			continue;
		}
		if (o->start < start && o->end > end) {          /* split */
			struct unw_map right = *o;
			right.pgoff += end - o->start;
			right.start = end;
			right.resolved = false;
			o->end = start;
			insert_at(s, i + 1, &right);
			i += 2;
		} else if (o->start < start) {                   /* keep left */
			o->end = start;
			i++;
		} else if (o->end > end) {                       /* keep right */
			o->pgoff += end - o->start;
			o->start = end;
			o->resolved = false;
			i++;
		} else {                                         /* covered */
			memmove(o, o + 1, (s->n - i - 1) * sizeof(*o));
			s->n--;
		}
	}
	for (i = 0; i < s->n && s->maps[i].start < start; i++)
		;
	insert_at(s, i, &nm);
}

static struct unw_map *find_map(struct unw_space *s, uint64_t addr)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= s->maps[lo - 1].end)
		return NULL;
	return &s->maps[lo - 1];
}

/* The map's table and vaddr delta, looked up on first use. */
static struct unw_table *map_table(struct unw_map *m)
{
	uint64_t vaddr;

	if (m->resolved)
		return m->table;
	m->resolved = true;
	m->table = m->mod ? unw_module_table(m->mod) : NULL;
	if (m->table && unw_table_off_to_vaddr(m->table, m->pgoff, &vaddr))
		m->delta = (int64_t)(vaddr - m->start);
	else
		m->table = NULL;
	return m->table;
}

/* ---- the walk -------------------------------------------------------- */

struct walk {
	const struct unw_stack *st;
	enum unw_stop fail;       /* why the last read failed */
	uint64_t *slots;          /* unw_unwind_slots(): where each return
				     address was read, else NULL */
};

static bool read_u64(struct walk *w, uint64_t addr, uint64_t *val)
{
	const struct unw_stack *st = w->st;

	if (addr < st->start) {
		w->fail = UNW_STOP_BAD_READ;
		return false;
	}
	if (addr - st->start > st->size || st->size - (addr - st->start) < 8) {
		w->fail = st->full ? UNW_STOP_TRUNCATED : UNW_STOP_SHORT_COPY;
		return false;
	}
	memcpy(val, st->data + (addr - st->start), 8);
	return true;
}

struct frame {
	uint64_t pc, sp, bp;
	uint64_t slot;            /* where pc was read from (0: a register) */
	bool exact;               /* pc is not a return address */
	unsigned known;           /* bit i: regs[i] is this frame's value */
	uint64_t regs[UNW_NREGS]; /* rbx, r12-r15 (enum unw_reg) */
};

/* Does row r need a register whose value frame f does not know? */
static bool row_needs_unknown(const struct unw_row *r, const struct frame *f)
{
	return (r->cfa == UNW_CFA_REG || r->cfa == UNW_CFA_REG_DEREF) &&
	       !(f->known & (1u << r->cfa_reg));
}

/*
 * The caller's callee-saved registers by the row's rules.  A slot below sp
 * counts as restored, as rbp's; a slot that cannot be read makes the value
 * unknown (it may never be needed: no reason to end the walk there).
 */
static void restore_regs(struct walk *w, const struct unw_row *r, const struct frame *f,
			 uint64_t cfa, struct frame *out)
{
	out->known = f->known;
	memcpy(out->regs, f->regs, sizeof(out->regs));
	/* Only the registers whose rule is not "same" (a non-zero field). */
	for (unsigned left = r->reg_loc; left;) {
		unsigned i = (unsigned)__builtin_ctz(left) / 3;
		unsigned kind = (left >> (3 * i)) & 7;
		int64_t off = (int64_t)r->reg_off8[i] * 8;
		uint64_t loc;

		left &= ~(7u << (3 * i));
		switch (kind) {
		case UNW_LOC_CFA: loc = cfa + off; break;
		case UNW_LOC_RSP: loc = f->sp + off; break;
		case UNW_LOC_RBP: loc = f->bp + off; break;
		default:
			out->known &= ~(1u << i);
			continue;
		}
		if (loc < f->sp)
			continue;
		if (read_u64(w, loc, &out->regs[i]))
			out->known |= 1u << i;
		else
			out->known &= ~(1u << i);
	}
}

/* Apply a CFI row: the caller's frame into *out.  false: w->fail says why. */
static bool step_cfi(struct walk *w, const struct unw_row *r,
		     const struct frame *f, struct frame *out)
{
	uint64_t cfa, loc;

	switch (r->cfa) {
	case UNW_CFA_RSP:
		cfa = f->sp + r->cfa_off;
		break;
	case UNW_CFA_RBP:
		cfa = f->bp + r->cfa_off;
		break;
	case UNW_CFA_RSP_DEREF:
		if (!read_u64(w, f->sp + r->cfa_off, &cfa))
			return false;
		break;
	case UNW_CFA_RBP_DEREF:
		if (!read_u64(w, f->bp + r->cfa_off, &cfa))
			return false;
		break;
	case UNW_CFA_PLT:
		cfa = f->sp + r->cfa_off + ((f->pc & 15) >= (unsigned)(r->aux >> 4) ? 8 : 0);
		break;
	case UNW_CFA_REG:           /* walk_from() checked it is known */
		cfa = f->regs[r->cfa_reg] + r->cfa_off;
		break;
	case UNW_CFA_REG_DEREF:
		if (!read_u64(w, f->regs[r->cfa_reg] + r->cfa_off, &cfa))
			return false;
		break;
	default:
		w->fail = UNW_STOP_BAD_RULE;
		return false;
	}

	switch (r->ra) {
	case UNW_LOC_CFA: loc = cfa + r->ra_off; break;
	case UNW_LOC_RSP: loc = f->sp + r->ra_off; break;
	default:
		w->fail = UNW_STOP_BAD_RULE;
		return false;
	}
	if (!read_u64(w, loc, &out->pc))
		return false;
	out->slot = loc;

	switch (r->rbp) {
	case UNW_LOC_CFA: loc = cfa + r->rbp_off; break;
	case UNW_LOC_RSP: loc = f->sp + r->rbp_off; break;
	case UNW_LOC_RBP: loc = f->bp + r->rbp_off; break;
	default: loc = 0; break;
	}
	if (r->rbp == UNW_LOC_UNDEF) {
		out->bp = 0;
	} else if (r->rbp == UNW_LOC_SAME || loc < f->sp) {
		/*
		 * A slot below sp was popped already: compilers do not mark
		 * restores in epilogues, the register holds the value again.
		 */
		out->bp = f->bp;
	} else if (!read_u64(w, loc, &out->bp)) {
		return false;
	}
	restore_regs(w, r, f, cfa, out);
	out->sp = cfa;
	out->exact = r->aux & UNW_ROW_SIGNAL;
	return true;
}

/*
 * The rbp chain, for code without CFI: only when rbp points into the copied
 * stack above sp (the walk then checks the return address like any other).
 */
static bool step_fp(struct walk *w, const struct frame *f,
		    struct frame *out)
{
	const struct unw_stack *st = w->st;

	if (f->bp < f->sp || (f->bp & 7) || f->bp < st->start ||
	    f->bp - st->start >= st->size) {
		w->fail = UNW_STOP_NO_CFI;
		return false;
	}
	if (!read_u64(w, f->bp + 8, &out->pc) || !read_u64(w, f->bp, &out->bp))
		return false;
	out->slot = f->bp + 8;
	out->sp = f->bp + 16;
	out->exact = false;
	out->known = 0;               /* whatever this code saved, we cannot say */
	return true;
}

/*
 * Walk on from frame *from, which is ips[*n - 1]; returns why it stopped.
 * The frame and its caller's take turns in two slots: a frame is ~90
 * bytes, and copying it each step (stores read back at once as wider
 * loads, which the store buffer cannot forward) cost more than the rest of
 * the step.
 */
static enum unw_stop walk_from(struct walk *w, struct unw_space *s, const struct frame *from,
			       uint64_t *ips, unsigned *n, unsigned max)
{
	struct frame two[2], *f = &two[0], *next = &two[1], *swap;

	*f = *from;
	for (;;) {
		uint64_t lookup = f->exact ? f->pc : f->pc - 1;
		struct unw_map *m = find_map(s, lookup);
		struct unw_table *t = m ? map_table(m) : NULL;
		const struct unw_row *r = NULL;
		uint64_t vaddr = 0;
		bool ok;

		if (!m)
			return UNW_STOP_NO_MAP;
		if (t) {
			vaddr = lookup + m->delta;
			r = unw_table_find(t, vaddr);
			/* A CFA from a register not known: as if no CFI. */
			if (r && r->ra != UNW_LOC_UNDEF && row_needs_unknown(r, f))
				r = NULL;
		}
		if (r && r->ra == UNW_LOC_UNDEF)
			return UNW_STOP_ROOT;
		if (!r && *n == 1 && !(t && unw_table_is_root(t, vaddr))) {
			/*
			 * A sampled leaf without CFI (crt code, hand-written
			 * asm) is usually frameless: its return address at
			 * [sp].  That guess stands only if the walk from it
			 * reaches the root.
			 */
			unsigned n2 = 2;

			if (max >= 2 && read_u64(w, f->sp, &next->pc) && next->pc &&
			    find_map(s, next->pc - 1)) {
				next->sp = f->sp + 8;
				next->bp = f->bp;
				next->exact = false;
				/* frameless: it saved nothing */
				next->known = f->known;
				memcpy(next->regs, f->regs, sizeof(next->regs));
				ips[1] = next->pc;
				if (w->slots)
					w->slots[1] = f->sp;
				if (walk_from(w, s, next, ips, &n2, max) == UNW_STOP_ROOT) {
					*n = n2;
					return UNW_STOP_ROOT;
				}
			}
		}
		ok = r ? step_cfi(w, r, f, next) : step_fp(w, f, next);
		if (!ok) {
			if (w->fail != UNW_STOP_TRUNCATED && t && unw_table_is_root(t, vaddr))
				return UNW_STOP_ROOT;
			return w->fail;
		}
		/*
		 * A zero return address ends the chain by convention, in a
		 * root function.  Anywhere else it was read from the wrong
		 * slot (a wrong row, a stale rbp: a zeroed local), like any
		 * other value in no mapping.
		 */
		if (!next->pc)
			return t && unw_table_is_root(t, vaddr) ? UNW_STOP_ROOT : UNW_STOP_NO_MAP;
		if (next->sp <= f->sp && !(r && (r->aux & UNW_ROW_SIGNAL)))
			return UNW_STOP_NO_PROGRESS;
		/*
		 * A caller's pc outside every executable mapping was read from
		 * the wrong slot (a wrong row, a stale rbp): the walk went
		 * astray, and that value is no frame.  It is not stored.  Above
		 * a root function it is what the thread started with (Go's
		 * rt0_go is jumped to): the walk is complete.
		 */
		if (!find_map(s, next->exact ? next->pc : next->pc - 1))
			return t && unw_table_is_root(t, vaddr) ? UNW_STOP_ROOT : UNW_STOP_NO_MAP;
		if (*n == max)
			return UNW_STOP_MAX_FRAMES;
		if (w->slots)
			w->slots[*n] = next->slot;
		ips[(*n)++] = next->pc;
		swap = f;
		f = next;
		next = swap;
	}
}

void unw_unwind(struct unw_space *s, const struct unw_regs *regs,
		const struct unw_stack *stack, uint64_t *ips, unsigned max,
		struct unw_result *res)
{
	unw_unwind_slots(s, regs, stack, ips, NULL, max, res);
}

void unw_unwind_slots(struct unw_space *s, const struct unw_regs *regs,
		      const struct unw_stack *stack, uint64_t *ips, uint64_t *slots,
		      unsigned max, struct unw_result *res)
{
	struct walk w = { .st = stack, .slots = slots };
	struct frame f = { .pc = regs->ip, .sp = regs->sp, .bp = regs->bp, .exact = true,
			   .known = regs->regs_known & ((1u << UNW_NREGS) - 1) };

	memcpy(f.regs, regs->regs, sizeof(f.regs));

	res->flags = 0;
	res->nframes = 0;
	if (!max) {
		res->stop = UNW_STOP_MAX_FRAMES;
		res->flags = UNW_TRUNCATED;
		return;
	}
	ips[0] = f.pc;
	if (slots)
		slots[0] = 0;
	res->nframes = 1;
	res->stop = walk_from(&w, s, &f, ips, &res->nframes, max);
	if (res->stop == UNW_STOP_ROOT)
		res->flags |= UNW_ROOT;
	else if (res->stop == UNW_STOP_TRUNCATED || res->stop == UNW_STOP_MAX_FRAMES)
		res->flags |= UNW_TRUNCATED;
}

const char *unw_stop_name(enum unw_stop stop)
{
	static const char *const names[UNW_STOP_NREASONS] = {
		[UNW_STOP_ROOT] = "root",
		[UNW_STOP_TRUNCATED] = "truncated",
		[UNW_STOP_MAX_FRAMES] = "max-frames",
		[UNW_STOP_NO_MAP] = "no-mapping",
		[UNW_STOP_NO_CFI] = "no-cfi",
		[UNW_STOP_BAD_RULE] = "unsupported-rule",
		[UNW_STOP_BAD_READ] = "bad-read",
		[UNW_STOP_SHORT_COPY] = "short-copy",
		[UNW_STOP_NO_PROGRESS] = "no-progress",
	};
	return (unsigned)stop < UNW_STOP_NREASONS ? names[stop] : "?";
}
