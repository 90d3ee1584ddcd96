/*
 * rust_v0 — Rust's v0 symbol mangling ("_R...", RFC 2603) made readable.
 *
 * Why: rustc's standard library ships v0 names (std, core, alloc, the
 * panic runtime) while a program's own crate is usually still legacy
 * ("_ZN...17h<hash>E", handled in intern.c).  Without this a Rust profile
 * shows half of its rows as "_RNvNtNtCs...": perf and uftrace show
 * "std::panicking::panic_with_hook".
 *
 * The text is what rustc-demangle's alternate form prints: crate
 * disambiguators (hashes) and the instantiating crate left out, closures
 * as "{closure#N}", impls as "<T>" or "<T as Trait>", generic arguments
 * as "::<..>" in a value path and "<..>" in a type.
 *
 * The input comes from files of any origin: every read is bounded by the
 * string's end, recursion is bounded (backreferences only point backwards,
 * but may fan out), and the output is capped; anything malformed or beyond
 * the caps gives NULL and the caller keeps the raw name.
 */
#include "symbols/sym_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

#define V0_MAX_DEPTH 256
#define V0_MAX_OUT   (16 * 1024)

struct v0 {
	const char *s;      /* after "_R": backreferences count from here */
	size_t len, pos;
	char *out;
	size_t out_len, out_cap;
	int depth;
	unsigned bound_lifetimes;   /* lifetimes bound by enclosing binders */
	bool bad;
};

static void put_n(struct v0 *p, const char *s, size_t n)
{
	if (p->bad)
		return;
	if (p->out_len + n >= V0_MAX_OUT) {
		p->bad = true;
		return;
	}
	if (p->out_len + n + 1 > p->out_cap) {
		p->out_cap = (p->out_len + n + 1) * 2;
		p->out = xrealloc(p->out, p->out_cap);
	}
	memcpy(p->out + p->out_len, s, n);
	p->out_len += n;
	p->out[p->out_len] = 0;
}

static void put(struct v0 *p, const char *s)
{
	put_n(p, s, strlen(s));
}

static char peek(const struct v0 *p)
{
	return p->pos < p->len ? p->s[p->pos] : 0;
}

static bool eat(struct v0 *p, char c)
{
	if (peek(p) != c)
		return false;
	p->pos++;
	return true;
}

static char next(struct v0 *p)
{
	if (p->pos >= p->len) {
		p->bad = true;
		return 0;
	}
	return p->s[p->pos++];
}

/* <base-62-number>: "_" is 0, digits then "_" are the value plus one */
static uint64_t base62(struct v0 *p)
{
	uint64_t v = 0;

	if (eat(p, '_'))
		return 0;
	for (;;) {
		char c = next(p);
		unsigned d;

		if (c == '_')
			break;
		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'z')
			d = 10 + (unsigned)(c - 'a');
		else if (c >= 'A' && c <= 'Z')
			d = 36 + (unsigned)(c - 'A');
		else {
			p->bad = true;
			return 0;
		}
		if (v > (UINT64_MAX - d) / 62) {
			p->bad = true;
			return 0;
		}
		v = v * 62 + d;
	}
	if (v == UINT64_MAX) {
		p->bad = true;
		return 0;
	}
	return v + 1;
}

/* ["s" <base-62-number>]: 0 when absent, else the number plus one */
static uint64_t disambiguator(struct v0 *p)
{
	if (!eat(p, 's'))
		return 0;
	uint64_t v = base62(p);
	return v == UINT64_MAX ? v : v + 1;
}

static uint64_t decimal(struct v0 *p)
{
	uint64_t v = 0;
	char c = peek(p);

	if (c < '0' || c > '9') {
		p->bad = true;
		return 0;
	}
	if (c == '0') {               /* no leading zeros */
		p->pos++;
		return 0;
	}
	while ((c = peek(p)) >= '0' && c <= '9') {
		if (v > (UINT64_MAX - 9) / 10) {
			p->bad = true;
			return 0;
		}
		v = v * 10 + (uint64_t)(c - '0');
		p->pos++;
	}
	return v;
}

/* <undisambiguated-identifier>: ["u"] <decimal> ["_"] <bytes>; a
 * punycode (non-ASCII) name is shown encoded, marked as such */
struct ident { const char *s; size_t n; bool puny; };

static struct ident ident_raw(struct v0 *p)
{
	struct ident id = { "", 0, false };
	uint64_t n;

	id.puny = eat(p, 'u');
	n = decimal(p);
	eat(p, '_');
	if (p->bad || n > p->len - p->pos) {
		p->bad = true;
		return id;
	}
	id.s = p->s + p->pos;
	id.n = (size_t)n;
	p->pos += (size_t)n;
	return id;
}

static void put_ident(struct v0 *p, struct ident id)
{
	if (id.puny) {
		put(p, "punycode{");
		put_n(p, id.s, id.n);
		put(p, "}");
		return;
	}
	put_n(p, id.s, id.n);
}

static void put_u64(struct v0 *p, uint64_t v)
{
	char b[24];

	snprintf(b, sizeof(b), "%" PRIu64, v);
	put(p, b);
}

static void path(struct v0 *p, bool in_value);
static void type(struct v0 *p);
static void konst(struct v0 *p);

/* Run fn at a backreference's target, then come back; targets lie before
 * the "B" itself, so every chain ends. */
static bool backref(struct v0 *p, void (*fn)(struct v0 *, bool), bool arg)
{
	size_t at = p->pos;
	uint64_t to;

	if (!eat(p, 'B'))
		return false;
	to = base62(p);
	if (p->bad || to >= at) {
		p->bad = true;
		return true;
	}
	size_t back = p->pos;
	p->pos = (size_t)to;
	fn(p, arg);
	p->pos = back;
	return true;
}

static void type_b(struct v0 *p, bool unused)
{
	(void)unused;
	type(p);
}

static void konst_b(struct v0 *p, bool unused)
{
	(void)unused;
	konst(p);
}

static void lifetime_name(struct v0 *p, uint64_t i)
{
	if (i == 0) {
		put(p, "'_");
		return;
	}
	if (i > p->bound_lifetimes) {
		p->bad = true;
		return;
	}
	uint64_t depth = p->bound_lifetimes - i;   /* 'a: the outermost bound */
	char b[24];

	if (depth < 26)
		snprintf(b, sizeof(b), "'%c", (char)('a' + depth));
	else
		snprintf(b, sizeof(b), "'_%" PRIu64, depth);
	put(p, b);
}

/* [<binder>]: "for<'a, 'b> " and the count of lifetimes it binds */
static uint64_t binder(struct v0 *p)
{
	uint64_t n;

	if (!eat(p, 'G'))
		return 0;
	n = base62(p) + 1;
	if (p->bad || n > 1000) {
		p->bad = true;
		return 0;
	}
	put(p, "for<");
	for (uint64_t i = 0; i < n; i++) {
		if (i)
			put(p, ", ");
		p->bound_lifetimes++;
		lifetime_name(p, 1);
	}
	put(p, "> ");
	return n;
}

static void generic_arg(struct v0 *p)
{
	if (eat(p, 'L'))
		lifetime_name(p, base62(p));
	else if (eat(p, 'K'))
		konst(p);
	else
		type(p);
}

/* { <generic-arg> } "E" */
static void generic_args(struct v0 *p)
{
	for (int i = 0; !p->bad && !eat(p, 'E'); i++) {
		if (i)
			put(p, ", ");
		generic_arg(p);
	}
}

static const char *basic_type(char c)
{
	switch (c) {
	case 'a': return "i8";
	case 'b': return "bool";
	case 'c': return "char";
	case 'd': return "f64";
	case 'e': return "str";
	case 'f': return "f32";
	case 'h': return "u8";
	case 'i': return "isize";
	case 'j': return "usize";
	case 'l': return "i32";
	case 'm': return "u32";
	case 'n': return "i128";
	case 'o': return "u128";
	case 'p': return "_";
	case 's': return "i16";
	case 't': return "u16";
	case 'u': return "()";
	case 'v': return "...";
	case 'x': return "i64";
	case 'y': return "u64";
	case 'z': return "!";
	default:  return NULL;
	}
}

/* <fn-sig> = [<binder>] ["U"] ["K" <abi>] {<type>} "E" <type> */
static void fn_sig(struct v0 *p)
{
	unsigned saved = p->bound_lifetimes;

	binder(p);
	if (eat(p, 'U'))
		put(p, "unsafe ");
	if (eat(p, 'K')) {
		put(p, "extern \"");
		if (eat(p, 'C')) {
			put(p, "C");
		} else {
			struct ident abi = ident_raw(p);
			/* the ABI's "-" is mangled as "_" */
			for (size_t i = 0; i < abi.n; i++)
				put_n(p, abi.s[i] == '_' ? "-" : abi.s + i, 1);
		}
		put(p, "\" ");
	}
	put(p, "fn(");
	for (int i = 0; !p->bad && !eat(p, 'E'); i++) {
		if (i)
			put(p, ", ");
		type(p);
	}
	put(p, ")");
	if (peek(p) == 'u') {
		p->pos++;                 /* "-> ()" is left out */
	} else {
		put(p, " -> ");
		type(p);
	}
	p->bound_lifetimes = saved;
}

/* "D" <dyn-bounds> <lifetime>: dyn Trait<Assoc = T> + Other + 'a */
static void dyn_type(struct v0 *p)
{
	unsigned saved = p->bound_lifetimes;

	put(p, "dyn ");
	binder(p);
	for (int i = 0; !p->bad && !eat(p, 'E'); i++) {
		if (i)
			put(p, " + ");
		/* a trait path whose generic list stays open for the
		 * associated type bindings that follow */
		size_t mark = p->out_len;
		path(p, false);
		bool open = p->out_len > mark && p->out[p->out_len - 1] == '>';
		bool any = false;
		while (!p->bad && eat(p, 'p')) {
			if (!any && open) {
				p->out[--p->out_len] = 0;   /* reopen "<..>" */
				put(p, ", ");
			} else if (!any) {
				put(p, "<");
			} else {
				put(p, ", ");
			}
			any = true;
			put_ident(p, ident_raw(p));
			put(p, " = ");
			type(p);
		}
		if (any)
			put(p, ">");
	}
	p->bound_lifetimes = saved;
	if (!eat(p, 'L')) {
		p->bad = true;
		return;
	}
	uint64_t l = base62(p);
	if (l) {
		put(p, " + ");
		lifetime_name(p, l);
	}
}

static void type(struct v0 *p)
{
	char c = peek(p);
	const char *basic = basic_type(c);

	if (p->bad)
		return;
	if (++p->depth > V0_MAX_DEPTH) {
		p->bad = true;
		return;
	}
	if (basic) {
		p->pos++;
		put(p, basic);
		p->depth--;
		return;
	}
	if (backref(p, type_b, false)) {
		p->depth--;
		return;
	}
	switch (c) {
	case 'A':                     /* [T; N] */
	case 'S':                     /* [T] */
		p->pos++;
		put(p, "[");
		type(p);
		if (c == 'A') {
			put(p, "; ");
			konst(p);
		}
		put(p, "]");
		break;
	case 'T': {                   /* (A, B) and (A,) */
		int n = 0;
		p->pos++;
		put(p, "(");
		for (; !p->bad && !eat(p, 'E'); n++) {
			if (n)
				put(p, ", ");
			type(p);
		}
		put(p, n == 1 ? ",)" : ")");
		break;
	}
	case 'R':                     /* &'a T */
	case 'Q':                     /* &'a mut T */
		p->pos++;
		put(p, "&");
		if (eat(p, 'L')) {
			uint64_t l = base62(p);
			if (l) {
				lifetime_name(p, l);
				put(p, " ");
			}
		}
		if (c == 'Q')
			put(p, "mut ");
		type(p);
		break;
	case 'P':
		p->pos++;
		put(p, "*const ");
		type(p);
		break;
	case 'O':
		p->pos++;
		put(p, "*mut ");
		type(p);
		break;
	case 'F':
		p->pos++;
		fn_sig(p);
		break;
	case 'D':
		p->pos++;
		dyn_type(p);
		break;
	default:
		path(p, false);
		break;
	}
	p->depth--;
}

/* <const>: a type then its value in hex ("n" for negative), or a
 * placeholder; structured values (arrays, tuples, ADTs) are not shown */
static void konst(struct v0 *p)
{
	char t;

	if (p->bad)
		return;
	if (++p->depth > V0_MAX_DEPTH) {
		p->bad = true;
		return;
	}
	if (backref(p, konst_b, false)) {
		p->depth--;
		return;
	}
	t = next(p);
	if (t == 'p') {
		put(p, "_");
		p->depth--;
		return;
	}
	if (!strchr("abchijlmnostxy", t) || !t) {
		p->bad = true;
		return;
	}
	bool neg = eat(p, 'n');
	uint64_t v = 0;
	size_t digits = 0;
	char c;

	while ((c = next(p)) != '_' && !p->bad) {
		unsigned d;

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = 10 + (unsigned)(c - 'a');
		else {
			p->bad = true;
			break;
		}
		if (++digits > 16) {      /* beyond 64 bits: not shown */
			p->bad = true;
			break;
		}
		v = v << 4 | d;
	}
	if (p->bad)
		return;
	if (t == 'b') {
		put(p, v ? "true" : "false");
	} else if (t == 'c') {
		char b[16];
		if (v >= 0x20 && v < 0x7f && v != '\'' && v != '\\')
			snprintf(b, sizeof(b), "'%c'", (char)v);
		else
			snprintf(b, sizeof(b), "'\\u{%" PRIx64 "}'", v);
		put(p, b);
	} else {
		if (neg)
			put(p, "-");
		put_u64(p, v);
	}
	p->depth--;
}

static void path_b(struct v0 *p, bool in_value)
{
	path(p, in_value);
}

static void path(struct v0 *p, bool in_value)
{
	char c;

	if (p->bad)
		return;
	if (++p->depth > V0_MAX_DEPTH) {
		p->bad = true;
		return;
	}
	if (backref(p, path_b, in_value)) {
		p->depth--;
		return;
	}
	c = next(p);
	switch (c) {
	case 'C':                     /* crate root; its hash left out */
		disambiguator(p);
		put_ident(p, ident_raw(p));
		break;
	case 'M':                     /* <T>: an inherent impl */
	case 'X':                     /* <T as Trait>: a trait impl */
	case 'Y': {                   /* <T as Trait>: a trait's own item */
		size_t mark;

		if (c != 'Y') {
			/* the impl's own path, only there to tell impls
			 * apart: parsed, not shown */
			disambiguator(p);
			mark = p->out_len;
			path(p, false);
			if (p->out)
				p->out[p->out_len = mark] = 0;
		}
		put(p, "<");
		type(p);
		if (c != 'M') {
			put(p, " as ");
			path(p, false);
		}
		put(p, ">");
		break;
	}
	case 'N': {                   /* path::name, a closure, a shim */
		char ns = next(p);
		uint64_t dis;
		struct ident id;

		if (!((ns >= 'a' && ns <= 'z') || (ns >= 'A' && ns <= 'Z'))) {
			p->bad = true;
			break;
		}
		path(p, in_value);
		dis = disambiguator(p);
		id = ident_raw(p);
		if (ns >= 'a' && ns <= 'z') {
			if (id.n || id.puny) {
				put(p, "::");
				put_ident(p, id);
			}
			break;
		}
		put(p, "::{");
		if (ns == 'C')
			put(p, "closure");
		else if (ns == 'S')
			put(p, "shim");
		else
			put_n(p, &ns, 1);
		if (id.n) {
			put(p, ":");
			put_ident(p, id);
		}
		put(p, "#");
		put_u64(p, dis);
		put(p, "}");
		break;
	}
	case 'I':                     /* path<args> */
		path(p, in_value);
		put(p, in_value ? "::<" : "<");
		generic_args(p);
		put(p, ">");
		break;
	default:
		p->bad = true;
		break;
	}
	p->depth--;
}

char *rust_v0_demangle(const char *name)
{
	struct v0 p = { 0 };
	size_t n;

	if (strncmp(name, "_R", 2))
		return NULL;
	p.s = name + 2;
	/* a suffix after '.' (".llvm.123", ".cold") is not part of the name */
	n = strcspn(p.s, ".");
	p.len = n;
	/* an encoding version other than 0 is unknown */
	if (p.len && p.s[0] >= '0' && p.s[0] <= '9')
		return NULL;
	path(&p, true);
	/* the instantiating crate, not shown; then nothing may follow */
	if (!p.bad && p.pos < p.len) {
		size_t mark = p.out_len;
		path(&p, false);
		if (p.out)
			p.out[p.out_len = mark] = 0;
	}
	if (p.bad || p.pos != p.len || !p.out) {
		free(p.out);
		return NULL;
	}
	return p.out;
}
