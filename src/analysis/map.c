/*
 * The analysis's hash tables: a (u64, u64) -> u32 map and a string
 * interner, both open addressing with linear probing, grown at 50% load so
 * that lookups stay O(1) however many call paths a recording holds.
 */
#include "analysis/internal.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

static size_t map_hash(uint64_t a, uint64_t b)
{
	return (size_t)hash_u64(a ^ hash_u64(b + 0x9e3779b97f4a7c15ULL));
}

static void map_grow(struct an_map *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64;
	struct an_map_slot *ns = xmalloc(ncap * sizeof(*ns));

	for (size_t i = 0; i < ncap; i++)
		ns[i].val = AN_NONE;
	for (size_t i = 0; i < m->cap; i++) {
		struct an_map_slot *s = &m->slots[i];
		size_t j;

		if (s->val == AN_NONE)
			continue;
		for (j = map_hash(s->a, s->b) & (ncap - 1); ns[j].val != AN_NONE;
		     j = (j + 1) & (ncap - 1))
			;
		ns[j] = *s;
	}
	free(m->slots);
	m->slots = ns;
	m->cap = ncap;
}

uint32_t an_map_get(const struct an_map *m, uint64_t a, uint64_t b)
{
	if (!m->cap)
		return AN_NONE;
	for (size_t j = map_hash(a, b) & (m->cap - 1);; j = (j + 1) & (m->cap - 1)) {
		const struct an_map_slot *s = &m->slots[j];

		if (s->val == AN_NONE)
			return AN_NONE;
		if (s->a == a && s->b == b)
			return s->val;
	}
}

uint32_t an_map_put(struct an_map *m, uint64_t a, uint64_t b, uint32_t val, bool *found)
{
	size_t j;

	if ((m->n + 1) * 2 > m->cap)
		map_grow(m);
	for (j = map_hash(a, b) & (m->cap - 1);; j = (j + 1) & (m->cap - 1)) {
		struct an_map_slot *s = &m->slots[j];

		if (s->val == AN_NONE)
			break;
		if (s->a == a && s->b == b) {
			if (found)
				*found = true;
			return s->val;
		}
	}
	m->slots[j].a = a;
	m->slots[j].b = b;
	m->slots[j].val = val;
	m->n++;
	if (found)
		*found = false;
	return val;
}

void an_map_set(struct an_map *m, uint64_t a, uint64_t b, uint32_t val)
{
	size_t j;

	if ((m->n + 1) * 2 > m->cap)
		map_grow(m);
	for (j = map_hash(a, b) & (m->cap - 1);; j = (j + 1) & (m->cap - 1)) {
		struct an_map_slot *s = &m->slots[j];

		if (s->val == AN_NONE) {
			s->a = a;
			s->b = b;
			m->n++;
			break;
		}
		if (s->a == a && s->b == b)
			break;
	}
	m->slots[j].val = val;
}

void an_map_release(struct an_map *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

static size_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return (size_t)hash_u64(h);
}

static void strtab_grow(struct an_strtab *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 256;
	uint32_t *ns = xmalloc(ncap * sizeof(*ns));

	for (size_t i = 0; i < ncap; i++)
		ns[i] = AN_NONE;
	for (size_t i = 0; i < t->n; i++) {
		size_t j;

		for (j = str_hash(t->str[i]) & (ncap - 1); ns[j] != AN_NONE;
		     j = (j + 1) & (ncap - 1))
			;
		ns[j] = (uint32_t)i;
	}
	free(t->slot);
	t->slot = ns;
	t->cap = ncap;
}

uint32_t an_str_intern(struct an_strtab *t, const char *s)
{
	size_t j;

	if ((t->n + 1) * 2 > t->cap)
		strtab_grow(t);
	for (j = str_hash(s) & (t->cap - 1); t->slot[j] != AN_NONE; j = (j + 1) & (t->cap - 1))
		if (!strcmp(t->str[t->slot[j]], s))
			return t->slot[j];
	ALLOC_GROW(t->str, t->n + 1, t->alloc);
	t->str[t->n] = xstrdup(s);
	t->slot[j] = (uint32_t)t->n;
	return (uint32_t)t->n++;
}

void an_strtab_release(struct an_strtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->str[i]);
	free(t->str);
	free(t->slot);
	memset(t, 0, sizeof(*t));
}
