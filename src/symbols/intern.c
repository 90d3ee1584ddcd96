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

static const char *demangle(struct sym_intern *t, const char *name)
{
	const char *r;
	char *d;
	int status = 0;

	if (name[0] != '_' || name[1] != 'Z')
		return intern_str(t, name);
	d = __cxa_demangle(name, NULL, NULL, &status);
	if (!d || status != 0) {
		free(d);
		return intern_str(t, name);
	}
	r = intern_str(t, d);
	free(d);
	return r;
}

char *sym_demangle(const char *name)
{
	char *d;
	int status = 0;

	if (name[0] != '_' || name[1] != 'Z')
		return xstrdup(name);
	d = __cxa_demangle(name, NULL, NULL, &status);
	if (!d || status != 0) {
		free(d);
		return xstrdup(name);
	}
	return d;
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
