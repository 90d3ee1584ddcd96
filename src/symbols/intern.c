/*
 * intern — the session's string table.  Every string the symbolizer hands
 * out lives here exactly once, so equal names are equal pointers and callers
 * can group rows by pointer.  Strings are copied into large arena blocks
 * (no per-string malloc) and live until intern_release().
 */
#include "symbols/sym_int.h"

#include <stdlib.h>
#include <string.h>

#include "util/util.h"

#define INTERN_BLOCK (64 * 1024)

struct demangled {
	const char *raw;
	const char *name;
};

static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static char *arena_copy(struct sym_intern *t, const char *s, size_t len)
{
	char *p;

	if (len + 1 > t->block_size - t->block_used) {
		size_t size = len + 1 > INTERN_BLOCK ? len + 1 : INTERN_BLOCK;
		ALLOC_GROW(t->blocks, t->nblocks + 1, t->ablocks);
		t->block = xmalloc(size);
		t->blocks[t->nblocks++] = t->block;
		t->block_size = size;
		t->block_used = 0;
	}
	p = t->block + t->block_used;
	memcpy(p, s, len);
	p[len] = '\0';
	t->block_used += len + 1;
	return p;
}

static void intern_grow(struct sym_intern *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024;
	const char **slots = xcalloc(cap, sizeof(*slots));

	for (size_t i = 0; i < t->cap; i++) {
		const char *s = t->slots[i];
		size_t j;
		if (!s)
			continue;
		j = hash_bytes(s, strlen(s)) & (cap - 1);
		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = s;
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
}

const char *intern_strn(struct sym_intern *t, const char *s, size_t len)
{
	size_t i;

	if (2 * (t->n + 1) > t->cap)
		intern_grow(t);
	i = hash_bytes(s, len) & (t->cap - 1);
	for (;; i = (i + 1) & (t->cap - 1)) {
		const char *e = t->slots[i];
		if (!e)
			break;
		if (!strncmp(e, s, len) && e[len] == '\0')
			return e;
	}
	t->slots[i] = arena_copy(t, s, len);
	t->n++;
	return t->slots[i];
}

const char *intern_str(struct sym_intern *t, const char *s)
{
	return intern_strn(t, s, strlen(s));
}

void intern_release(struct sym_intern *t)
{
	for (size_t i = 0; i < t->nblocks; i++)
		free(t->blocks[i]);
	free(t->blocks);
	free(t->slots);
	free(t->dm);
	memset(t, 0, sizeof(*t));
}

/* libstdc++'s demangler (the build links -lstdc++); C linkage by the ABI. */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len,
			    int *status);

/*
 * Rust's legacy mangling is the C++ ABI's, with a hash as the last name
 * ("17h" and 16 hex digits) and punctuation escaped ("$LT$", "$u20$", ".."
 * for "::"): the C++ demangler leaves both, rustc-demangle (and perf)
 * show neither.  d, demangled, rewritten in place.
 */
static void rust_legacy(const char *mangled, char *d)
{
	static const struct { const char *esc; char c; } esc[] = {
		{ "$SP$", '@' }, { "$BP$", '*' }, { "$RF$", '&' }, { "$LT$", '<' }, { "$GT$", '>' },
		{ "$LP$", '(' }, { "$RP$", ')' }, { "$C$", ',' }, { "$u7e$", '~' }, { "$u20$", ' ' },
		{ "$u27$", '\'' }, { "$u22$", '"' }, { "$u2b$", '+' }, { "$u3b$", ';' },
		{ "$u5b$", '[' }, { "$u5d$", ']' }, { "$u7b$", '{' }, { "$u7d$", '}' },
	};
	size_t n = strlen(mangled), k = strlen(d);
	char *w = d;
	const char *r = d;

	/* ..17h0123456789abcdefE, and ::h0123456789abcdef at the end */
	if (n < 21 || mangled[n - 1] != 'E' || strncmp(mangled + n - 20, "17h", 3) || k < 19 ||
	    strncmp(d + k - 19, "::h", 3) || strspn(d + k - 16, "0123456789abcdef") != 16)
		return;
	d[k - 19] = 0;
	while (*r) {
		size_t i;

		if (r[0] == '.' && r[1] == '.') {
			*w++ = ':';
			*w++ = ':';
			r += 2;
			continue;
		}
		if (r[0] == '_' && r[1] == '$' && (r == d || r[-1] == ':')) {
			r++;                       /* "_$": a name starting with an escape */
			continue;
		}
		for (i = 0; r[0] == '$' && i < sizeof(esc) / sizeof(*esc); i++)
			if (!strncmp(r, esc[i].esc, strlen(esc[i].esc)))
				break;
		if (r[0] == '$' && i < sizeof(esc) / sizeof(*esc)) {
			*w++ = esc[i].c;
			r += strlen(esc[i].esc);
			continue;
		}
		*w++ = *r++;
	}
	*w = 0;
}

/* name demangled (malloc'd), or NULL if it is not a mangled name */
static char *demangle_alloc(const char *name)
{
	char *d;
	int status = 0;

	if (name[0] == '_' && name[1] == 'R')
		return rust_v0_demangle(name);      /* (NULL: malformed) */
	if (name[0] != '_' || name[1] != 'Z')
		return NULL;
	d = __cxa_demangle(name, NULL, NULL, &status);
	if (!d || status != 0) {
		/* LLVM's suffix of a function made local across modules
		 * (".llvm." and digits), which the demangler refuses */
		const char *x = strstr(name, ".llvm.");
		char *base;

		free(d);
		if (!x || !x[6] || strspn(x + 6, "0123456789") != strlen(x + 6))
			return NULL;
		base = xmalloc((size_t)(x - name) + 1);
		memcpy(base, name, (size_t)(x - name));
		base[x - name] = 0;
		d = demangle_alloc(base);
		free(base);
		return d;
	}
	rust_legacy(name, d);
	return d;
}

static const char *demangle(struct sym_intern *t, const char *name)
{
	char *d = demangle_alloc(name);
	const char *r;

	if (!d)
		return intern_str(t, name);
	r = intern_str(t, d);
	free(d);
	return r;
}

char *sym_demangle(const char *name)
{
	char *d = demangle_alloc(name);

	return d ? d : xstrdup(name);
}

/* Demangling dominates DWARF lookups of C++ code (every inlined frame names
 * a function), so each raw name is demangled once. */
const char *intern_demangled(struct sym_intern *t, const char *name)
{
	size_t i;

	if (2 * (t->dm_n + 1) > t->dm_cap) {
		size_t cap = t->dm_cap ? t->dm_cap * 2 : 1024;
		struct demangled *v = xcalloc(cap, sizeof(*v));
		for (i = 0; i < t->dm_cap; i++) {
			size_t j;
			if (!t->dm[i].raw)
				continue;
			j = hash_u64((uintptr_t)t->dm[i].raw) & (cap - 1);
			while (v[j].raw)
				j = (j + 1) & (cap - 1);
			v[j] = t->dm[i];
		}
		free(t->dm);
		t->dm = v;
		t->dm_cap = cap;
	}
	i = hash_u64((uintptr_t)name) & (t->dm_cap - 1);
	for (; t->dm[i].raw; i = (i + 1) & (t->dm_cap - 1)) {
		if (t->dm[i].raw == name)
			return t->dm[i].name;
	}
	t->dm[i].raw = name;
	t->dm[i].name = demangle(t, name);
	t->dm_n++;
	return t->dm[i].name;
}
