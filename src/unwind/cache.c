/*
 * cache — one unw_table per file (path + build-id), built on first use and
 * shared by every process image that maps the file (see unwind.h).
 *
 * The vdso is not a file: every process maps the same kernel image, so the
 * recorder's own copy (AT_SYSINFO_EHDR) stands for all of them.
 */
#include "unwind/unwind.h"
#include "unwind/unwind_int.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CACHE_BUCKETS 256

struct unw_cache {
	struct unw_module *buckets[CACHE_BUCKETS];
	unsigned nmodules, ntables;
	uint64_t open_ns;         /* time spent opening (indexing) tables */
};

struct unw_cache *unw_cache_new(void)
{
	return xcalloc(1, sizeof(struct unw_cache));
}

void unw_cache_free(struct unw_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < CACHE_BUCKETS; i++) {
		struct unw_module *m = c->buckets[i], *next;
		for (; m; m = next) {
			next = m->next;
			unw_table_free(m->table);
			if (m->source)
				close(m->fd);
			free(m->source);
			free(m->path);
			free(m);
		}
	}
	free(c);
}

static unsigned hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (unsigned)(h % CACHE_BUCKETS);
}

struct unw_module *unw_cache_module(struct unw_cache *c, const char *path,
				    const uint8_t *build_id, size_t build_id_len)
{
	unsigned h = hash_str(path);
	struct unw_module *m;

	if (build_id_len > sizeof(m->build_id))
		build_id_len = sizeof(m->build_id);
	for (m = c->buckets[h]; m; m = m->next)
		if (!m->private && !strcmp(m->path, path) && m->build_id_len == build_id_len &&
		    (!build_id_len || !memcmp(m->build_id, build_id, build_id_len)))
			return m;
	m = xcalloc(1, sizeof(*m));
	m->cache = c;
	m->path = xstrdup(path);
	if (build_id_len)
		memcpy(m->build_id, build_id, build_id_len);
	m->build_id_len = build_id_len;
	m->next = c->buckets[h];
	c->buckets[h] = m;
	c->nmodules++;
	return m;
}

/* Where the module's file is read: its descriptor, else its path. */
static const char *module_source(const struct unw_module *m)
{
	return m->source ? m->source : m->path;
}

struct unw_module *unw_cache_module_fd(struct unw_cache *c, const char *path, int fd)
{
	char source[64];
	uint8_t id[20];
	size_t len;
	struct unw_module *m;

	snprintf(source, sizeof(source), "/proc/self/fd/%d", fd);
	len = unw_read_build_id(source, id, sizeof(id));
	if (len) {
		m = unw_cache_module(c, path, id, len);
		if (m->source) {
			close(fd);                /* the same file, read already */
			return m;
		}
		/* Until now read at path, which may hold another file. */
		if (m->tried && !m->table)
			m->tried = false;
	} else {
		/* Nothing tells this file from another at the same path: an
		 * entry of its own, which path lookups never return. */
		unsigned h = hash_str(path);

		m = xcalloc(1, sizeof(*m));
		m->cache = c;
		m->path = xstrdup(path);
		m->private = true;
		m->id_tried = true;               /* it has no build-id */
		m->next = c->buckets[h];
		c->buckets[h] = m;
		c->nmodules++;
	}
	m->fd = fd;
	m->source = xstrdup(source);
	return m;
}

static int build_vdso(struct unw_table **out)
{
	size_t size;
	const void *image = vdso_image(&size);

	if (!image)
		return -ENOENT;
	return unw_table_build_mem(image, size, out);
}

struct unw_table *unw_module_table(struct unw_module *m)
{
	struct unw_cache *c = m->cache;
	uint64_t t0;
	int ret;

	if (m->tried)
		return m->table;
	m->tried = true;
	t0 = now_ns();
	if (!strcmp(m->path, "[vdso]"))
		ret = build_vdso(&m->table);
	else if (m->path[0] != '/')
		ret = -ENOENT;            /* [heap], //anon, memfd: no file */
	else
		ret = unw_table_build_file(module_source(m), &m->table);
	c->open_ns += now_ns() - t0;
	if (ret) {
		pr_debug("unwind: no CFI table for %s: %s", m->path, strerror(-ret));
		m->table = NULL;
		return NULL;
	}
	if (m->build_id_len && m->table->build_id_len &&
	    (m->table->build_id_len != m->build_id_len ||
	     memcmp(m->table->build_id, m->build_id, m->build_id_len))) {
		/* The file at that path was replaced since it was mapped. */
		pr_debug("unwind: %s changed on disk (build-id differs); not used", m->path);
		unw_table_free(m->table);
		m->table = NULL;
		return NULL;
	}
	c->ntables++;
	pr_debug("unwind: %s: %zu FDEs", m->path, m->table->nfdes);
	return m->table;
}

const char *unw_module_path(const struct unw_module *m)
{
	return m->path;
}

size_t unw_module_build_id(struct unw_module *m, const uint8_t **id)
{
	if (!m->build_id_len && !m->id_tried) {
		m->id_tried = true;
		if (!strcmp(m->path, "[vdso]"))
			unw_module_table(m);      /* no file: its image has the note */
		if (m->table && m->table->build_id_len) {
			memcpy(m->build_id, m->table->build_id, m->table->build_id_len);
			m->build_id_len = m->table->build_id_len;
		} else if (m->path[0] == '/') {
			m->build_id_len = unw_read_build_id(module_source(m), m->build_id,
							    sizeof(m->build_id));
		}
	}
	*id = m->build_id;
	return m->build_id_len;
}

void unw_cache_stats(const struct unw_cache *c, struct unw_cache_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->modules = c->nmodules;
	st->tables = c->ntables;
	st->build_ns = c->open_ns;
	for (size_t i = 0; i < CACHE_BUCKETS; i++) {
		for (const struct unw_module *m = c->buckets[i]; m; m = m->next) {
			if (!m->table)
				continue;
			st->fdes += m->table->nfdes;
			st->rows += m->table->nrows;
			st->bytes += unw_table_bytes(m->table);
			st->build_ns += m->table->build_ns;
		}
	}
}
