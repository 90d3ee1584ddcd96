/*
 * dynsym — see dynsym.h.
 */
#include "runtime/dynsym.h"
#include "runtime/sys.h"

#include <elf.h>

void rt_dyn_read(const struct dl_phdr_info *info, struct rt_dyn *d)
{
	const ElfW(Dyn) *p = NULL;

	*d = (struct rt_dyn){ .base = info->dlpi_addr, .soname = ~0ull };
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			p = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	d->dyn = p;
	for (; p && p->d_tag != DT_NULL; p++) {
		/* the loader made them addresses; a read-only copy keeps vaddrs */
		uint64_t v = p->d_un.d_ptr < info->dlpi_addr ? p->d_un.d_ptr + info->dlpi_addr : p->d_un.d_ptr;

		switch (p->d_tag) {
		case DT_SYMTAB:      d->symtab = (const ElfW(Sym) *)v; break;
		case DT_STRTAB:      d->strtab = (const char *)v; break;
		case DT_STRSZ:       d->strsz = p->d_un.d_val; break;
		case DT_JMPREL:      d->jmprel = (const ElfW(Rela) *)v; break;
		case DT_PLTRELSZ:    d->jmprel_sz = p->d_un.d_val; break;
		case DT_RELA:        d->rela = (const ElfW(Rela) *)v; break;
		case DT_RELASZ:      d->rela_sz = p->d_un.d_val; break;
		case DT_VERSYM:      d->versym = (const uint16_t *)v; break;
		case DT_VERNEED:     d->verneed = (const ElfW(Verneed) *)v; break;
		case DT_VERNEEDNUM:  d->verneednum = p->d_un.d_val; break;
		case DT_VERDEF:      d->verdef = (const ElfW(Verdef) *)v; break;
		case DT_VERDEFNUM:   d->verdefnum = p->d_un.d_val; break;
		case DT_GNU_HASH:
			d->gnu_hash = (const uint32_t *)v;
			d->nsyms = d->gnu_hash[1];          /* symoffset: the imports */
			break;
		case DT_HASH:
			if (!d->gnu_hash)
				d->nsyms = ((const uint32_t *)v)[1];   /* nchain */
			break;
		case DT_SONAME:      d->soname = p->d_un.d_val; break;
		case DT_PLTREL:
			if (p->d_un.d_val != DT_RELA)
				d->jmprel = NULL;       /* not x86-64's */
			break;
		default: break;
		}
	}
	if (!d->symtab || !d->strtab)
		d->jmprel = d->rela = NULL;
}

static int str_eq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

static uint32_t gnu_hash(const char *s)
{
	uint32_t h = 5381;

	for (; *s; s++)
		h = h * 33 + (uint8_t)*s;
	return h;
}

uint32_t rt_dyn_lookup(const struct rt_dyn *d, const char *name)
{
	return rt_dyn_lookup_ver(d, name, NULL);
}

const char *rt_dyn_import_version(const struct rt_dyn *d, uint32_t i)
{
	const ElfW(Verneed) *n = d->verneed;
	uint16_t v;

	if (!d->versym || !n || (v = d->versym[i] & 0x7fff) <= 1)
		return NULL;
	for (uint64_t k = 0; k < d->verneednum && k < 4096; k++) {
		const ElfW(Vernaux) *a = (const ElfW(Vernaux) *)((const char *)n + n->vn_aux);

		for (uint32_t j = 0; j < n->vn_cnt && j < 4096; j++) {
			if (a->vna_other == v)
				return a->vna_name < d->strsz ? d->strtab + a->vna_name : NULL;
			if (!a->vna_next)
				break;
			a = (const ElfW(Vernaux) *)((const char *)a + a->vna_next);
		}
		if (!n->vn_next)
			break;
		n = (const ElfW(Verneed) *)((const char *)n + n->vn_next);
	}
	return NULL;
}

/* The name of the object's version index v, or NULL. */
static const char *def_version(const struct rt_dyn *d, uint16_t v)
{
	const ElfW(Verdef) *f = d->verdef;

	for (uint64_t k = 0; f && k < d->verdefnum && k < 4096; k++) {
		if (f->vd_ndx == v) {
			const ElfW(Verdaux) *a = (const ElfW(Verdaux) *)((const char *)f + f->vd_aux);

			return a->vda_name < d->strsz ? d->strtab + a->vda_name : NULL;
		}
		if (!f->vd_next)
			break;
		f = (const ElfW(Verdef) *)((const char *)f + f->vd_next);
	}
	return NULL;
}

uint32_t rt_dyn_lookup_ver(const struct rt_dyn *d, const char *name, const char *ver)
{
	const uint32_t *t = d->gnu_hash;
	uint32_t nbuckets, symoffset, bloom_size, h, i, other = 0;
	const uint32_t *buckets, *chain;

	if (!t || !d->symtab || !t[0])
		return 0;
	nbuckets = t[0];
	symoffset = t[1];
	bloom_size = t[2];
	buckets = t + 4 + bloom_size * (sizeof(ElfW(Addr)) / 4);
	chain = buckets + nbuckets;
	h = gnu_hash(name);
	i = buckets[h % nbuckets];
	if (i < symoffset)
		return 0;
	for (;; i++) {
		const ElfW(Sym) *s = &d->symtab[i];
		uint32_t c = chain[i - symoffset];
		int type = ELF64_ST_TYPE(s->st_info), bind = ELF64_ST_BIND(s->st_info);

		if ((c | 1) == (h | 1) && s->st_name < d->strsz && str_eq(d->strtab + s->st_name, name) &&
		    s->st_shndx != SHN_UNDEF && bind != STB_LOCAL &&
		    ELF64_ST_VISIBILITY(s->st_other) != STV_HIDDEN &&
		    (type == STT_FUNC || type == STT_GNU_IFUNC || type == STT_NOTYPE)) {
			uint16_t v = d->versym ? d->versym[i] : 1;
			const char *dv;

			if (!ver || !d->versym || !d->verdef) {
				if (!(v & 0x8000))
					return i;    /* the default version */
			} else if ((dv = def_version(d, v & 0x7fff)) && str_eq(dv, ver)) {
				return i;
			} else if (!(v & 0x8000) && (v & 0x7fff) <= 1 && !other) {
				other = i;           /* the loader's fallback: an */
			}                            /* unversioned definition only */
		}
		if (c & 1)
			return other;
	}
}

/* Imports are the dynamic symbols the GNU hash table leaves out (below its
 * symoffset): a walk, as no table indexes them. */
int rt_dyn_imports(const struct rt_dyn *d, const char *name)
{
	size_t len = rt_strlen(name);

	if (!d->symtab || !d->strtab)
		return 0;
	for (uint64_t i = 1; i < d->nsyms && i < (1u << 20); i++) {
		const ElfW(Sym) *s = &d->symtab[i];

		if (s->st_shndx == SHN_UNDEF && s->st_name + len < d->strsz && str_eq(d->strtab + s->st_name, name))
			return 1;
	}
	return 0;
}

const char *rt_dyn_needed(const struct rt_dyn *d, int i)
{
	if (!d->strtab)
		return NULL;
	for (const ElfW(Dyn) *p = d->dyn; p && p->d_tag != DT_NULL; p++)
		if (p->d_tag == DT_NEEDED && i-- == 0)
			return p->d_un.d_val < d->strsz ? d->strtab + p->d_un.d_val : NULL;
	return NULL;
}

int rt_dyn_is_needed(const struct rt_dyn *d, const char *path, const char *needed)
{
	const char *base = path, *q;
	int slash = 0;

	for (q = needed; *q; q++)
		slash |= *q == '/';
	if (path && str_eq(path, needed))
		return 1;
	if (slash)
		return 0;                  /* a path: only that one */
	if (d->strtab && d->soname < d->strsz && str_eq(d->strtab + d->soname, needed))
		return 1;
	for (q = path; q && *q; q++)
		if (*q == '/')
			base = q + 1;
	return base && *base && str_eq(base, needed);
}

struct elsewhere {
	const char *name;
	uint64_t self;
	int found;
	void *addr;
};

static int defines(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct elsewhere *e = arg;
	struct rt_dyn d;

	(void)size;
	for (int k = 0; k < info->dlpi_phnum; k++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[k];
		uint64_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && e->self >= lo && e->self < lo + ph->p_memsz)
			return 0;          /* this runtime: its wrappers do not count */
	}
	rt_dyn_read(info, &d);
	e->found = rt_dyn_lookup(&d, e->name) != 0;
	return e->found;
}

/* The vDSO: never a definer the runtime wants (its functions are not the
 * libraries' ones). */
static int is_vdso(const char *n)
{
	const char *v = "linux-vdso";

	while (n && *v && *n == *v)
		n++, v++;
	return n && !*v;
}

static int defines_at(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct elsewhere *e = arg;
	struct rt_dyn d;
	const ElfW(Sym) *s;
	uint32_t i;

	(void)size;
	if (is_vdso(info->dlpi_name))
		return 0;
	for (int k = 0; k < info->dlpi_phnum; k++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[k];
		uint64_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && e->self >= lo && e->self < lo + ph->p_memsz)
			return 0;          /* this runtime: its wrappers do not count */
	}
	rt_dyn_read(info, &d);
	if (!(i = rt_dyn_lookup(&d, e->name)))
		return 0;
	s = &d.symtab[i];
	e->addr = (void *)(uintptr_t)(d.base + s->st_value);
	if (ELF64_ST_TYPE(s->st_info) == STT_GNU_IFUNC)
		e->addr = ((void *(*)(void))e->addr)();   /* as the loader */
	e->found = 1;
	return 1;
}

void *rt_defined_addr(const char *name)
{
	struct elsewhere e = { name, (uint64_t)(uintptr_t)&rt_defined_addr, 0, NULL };

	dl_iterate_phdr(defines_at, &e);
	return e.addr;
}

int rt_defined_elsewhere(const char *name)
{
	struct elsewhere e = { name, (uint64_t)(uintptr_t)&rt_defined_elsewhere, 0, NULL };

	dl_iterate_phdr(defines, &e);
	return e.found;
}
