/*
 * kallsyms — kernel function names from /proc/kallsyms.
 *
 * Read once per session, on the first kernel address: the text symbols
 * (types t/T/w/W) sorted by address, looked up by binary search.  Without
 * the privilege to see addresses the kernel prints zeros; the table is then
 * unusable and kernel frames resolve to "[unknown]".
 */
#include "symbols/sym_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

struct ksym {
	uint64_t addr;
	const char *name;         /* interned */
};

struct sym_kallsyms {
	struct ksym *v;
	size_t n, alloc;
};

static int underscores(const char *s)
{
	int n = 0;
	while (s[n] == '_')
		n++;
	return n;
}

/* By address; among aliases the public spelling (fewer '_') first. */
static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	int ux, uy;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	ux = underscores(x->name);
	uy = underscores(y->name);
	if (ux != uy)
		return ux - uy;
	return strcmp(x->name, y->name);
}

struct sym_kallsyms *kallsyms_load(const char *path, struct sym_intern *t)
{
	struct sym_kallsyms *k = xcalloc(1, sizeof(*k));
	char line[512];
	bool nonzero = false;
	FILE *f;

	if (!path)
		path = "/proc/kallsyms";
	f = fopen(path, "re");
	if (!f) {
		pr_debug("symbols: cannot read %s", path);
		return k;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char type, name[256];
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (!strchr("tTwW", type))
			continue;
		nonzero |= addr != 0;
		ALLOC_GROW(k->v, k->n + 1, k->alloc);
		k->v[k->n].addr = addr;
		k->v[k->n].name = intern_str(t, name);
		k->n++;
	}
	fclose(f);
	if (!nonzero) {
		/* kptr_restrict: names without addresses are of no use. */
		pr_debug("symbols: %s shows no addresses", path);
		k->n = 0;
	}
	if (k->n > 1)
		qsort(k->v, k->n, sizeof(*k->v), cmp_ksym);
	size_t out = 0;
	for (size_t i = 0; i < k->n; i++) {
		if (!out || k->v[out - 1].addr != k->v[i].addr)
			k->v[out++] = k->v[i];
	}
	k->n = out;
	return k;
}

bool kallsyms_usable(const struct sym_kallsyms *k)
{
	return k && k->n > 0;
}

const char *kallsyms_lookup(const struct sym_kallsyms *k, uint64_t addr)
{
	size_t lo = 0, hi;

	if (!kallsyms_usable(k))
		return NULL;
	hi = k->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? k->v[lo - 1].name : NULL;
}

void kallsyms_free(struct sym_kallsyms *k)
{
	if (!k)
		return;
	free(k->v);
	free(k);
}
