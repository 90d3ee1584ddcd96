/*
 * kallsyms — kernel function names from /proc/kallsyms.
 *
 * Read once per session, on the first kernel address: the text symbols
 * (types t/T/w/W) sorted by address, looked up by binary search.  Without
 * the privilege to see addresses the kernel prints zeros; the table is then
 * unusable and kernel frames resolve to "[unknown]".
 */
#include "symbols/sym_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/util.h"

struct ksym {
	uint64_t addr;
	const char *raw;          /* in text */
	const char *name;         /* interned on first lookup */
};

struct sym_kallsyms {
	struct ksym *v;
	size_t n, alloc;
	char *text;               /* the file, NULs after the names */
	struct sym_intern *strings;
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
	ux = underscores(x->raw);
	uy = underscores(y->raw);
	if (ux != uy)
		return ux - uy;
	return strcmp(x->raw, y->raw);
}

/* The whole file, NUL-terminated (procfs files have no size to ask). */
static char *read_all(const char *path, size_t *len)
{
	size_t cap = 1 << 20, n = 0;
	char *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	buf = xmalloc(cap);
	for (;;) {
		ssize_t got;
		if (cap - n < 65536)
			buf = xrealloc(buf, cap *= 2);
		got = read(fd, buf + n, cap - n - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/*
 * Lines are "ADDR TYPE NAME[\t[MODULE]]".  /proc/kallsyms has ~120,000 of
 * them; parsed by hand (sscanf took 100 ms) and names interned only when
 * looked up.
 */
struct sym_kallsyms *kallsyms_load(const char *path, struct sym_intern *t)
{
	struct sym_kallsyms *k = xcalloc(1, sizeof(*k));
	bool nonzero = false;
	size_t len;
	char *p, *end;

	if (!path)
		path = "/proc/kallsyms";
	k->strings = t;
	k->text = read_all(path, &len);
	if (!k->text) {
		pr_debug("symbols: cannot read %s", path);
		return k;
	}
	for (p = k->text, end = p + len; p < end; ) {
		char *eol = memchr(p, '\n', end - p), *name;
		uint64_t addr = 0;
		int digits = 0, v;
		char type;

		if (!eol)
			eol = end;
		while (p < eol && (v = hexval(*p)) >= 0 && digits < 16) {
			addr = addr << 4 | (uint64_t)v;
			p++;
			digits++;
		}
		if (!digits || eol - p < 4 || p[0] != ' ' || p[2] != ' ' ||
		    !strchr("tTwW", (type = p[1])) || !type)
			goto next;
		name = p + 3;
		p = name + strcspn(name, " \t\n");
		if (p == name || p > eol)
			goto next;
		*p = '\0';
		nonzero |= addr != 0;
		ALLOC_GROW(k->v, k->n + 1, k->alloc);
		k->v[k->n].addr = addr;
		k->v[k->n].raw = name;
		k->v[k->n].name = NULL;
		k->n++;
next:
		p = eol + 1;
	}
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

const char *kallsyms_lookup(struct sym_kallsyms *k, uint64_t addr)
{
	size_t lo;

	if (!kallsyms_usable(k))
		return NULL;
	lo = UPPER_BOUND(k->v, k->n, addr, addr);
	if (!lo)
		return NULL;
	if (!k->v[lo - 1].name)
		k->v[lo - 1].name = intern_str(k->strings, k->v[lo - 1].raw);
	return k->v[lo - 1].name;
}

void kallsyms_free(struct sym_kallsyms *k)
{
	if (!k)
		return;
	free(k->v);
	free(k->text);
	free(k);
}
