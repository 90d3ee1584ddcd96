/*
 * unload — dlclose(), watched: when the object is really unmapped, every
 * calling-context node and call-site entry holding one of its addresses
 * gets the unload's tag (shm.h), so that another object loaded at the same
 * place later gets nodes of its own.
 */
#include "runtime/rt.h"

#include <dlfcn.h>
#include <link.h>

struct obj_range {
	uint64_t bias, lo, hi;         /* load bias; mapped [lo, hi) */
	const char *name;
	int found;
};

static int find_obj(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct obj_range *r = arg;
	uint64_t lo, hi;

	(void)size;
	if (info->dlpi_addr != r->bias || !info->dlpi_name ||
	    rt_strlen(info->dlpi_name) != rt_strlen(r->name) ||
	    !rt_memeq(info->dlpi_name, r->name, rt_strlen(r->name)))
		return 0;
	load_span(info, &lo, &hi);
	r->lo = info->dlpi_addr + (lo & ~(PAGE - 1));
	r->hi = info->dlpi_addr + hi;
	r->found = 1;
	return 1;
}

static uint64_t tag_if(uint64_t addr, const struct obj_range *r, uint64_t tag)
{
	return addr >= r->lo && addr < r->hi ? addr | tag : addr;
}

/*
 * The object [r->lo, r->hi) is gone: tag every node and call-site entry of
 * every thread that holds one of its addresses (see shm.h), and its module
 * slot.  Threads run on meanwhile, but none can be in the object's code.
 */
static void retire_object(const struct obj_range *r)
{
	struct sc_shm_header *h = rt.hdr;
	uint32_t g = __atomic_add_fetch(&h->unloads, 1, __ATOMIC_RELAXED), i;
	uint64_t tag, off;

	if (g > SC_SHM_MAX_UNLOADS)
		return;
	tag = (uint64_t)g << SC_SHM_UNLOAD_SHIFT;
	for (i = 0; i < h->nmodules && i < SC_SHM_MAX_MODULES; i++)
		if (h->modules[i].valid && !h->modules[i].unloaded && h->modules[i].base >= r->lo &&
		    h->modules[i].base < r->hi)
			__atomic_store_n(&h->modules[i].unloaded, g, __ATOMIC_RELEASE);
	for (off = h->arena.threads; off && off < rt.cap;) {
		struct sc_eng_thread *t = (struct sc_eng_thread *)(rt.arena.base + off);
		uint64_t c_off = __atomic_load_n(&t->chunk_head_off, __ATOMIC_ACQUIRE), k;
		struct sc_eng_cs *cs = (struct sc_eng_cs *)(rt.arena.base + t->cs_off);

		while (c_off && c_off < rt.cap) {
			struct sc_eng_chunk *c = (struct sc_eng_chunk *)(rt.arena.base + c_off);
			struct sc_eng_node *n = (struct sc_eng_node *)(c + 1);
			uint32_t used = __atomic_load_n(&c->used, __ATOMIC_ACQUIRE);

			for (k = 0; k < used; k++)
				__atomic_store_n(&n[k].func, tag_if(n[k].func, r, tag), __ATOMIC_RELAXED);
			c_off = __atomic_load_n(&c->next_off, __ATOMIC_ACQUIRE);
		}
		for (k = 0; k <= t->cs_mask + SC_ENG_CS_PROBE; k++) {
			if (!cs[k].callee)
				continue;
			cs[k].site = tag_if(cs[k].site - 1, r, tag) + 1;
			__atomic_store_n(&cs[k].callee, tag_if(cs[k].callee, r, tag), __ATOMIC_RELAXED);
		}
		off = t->next_off;
	}
}

HOOK int dlclose(void *handle);

/*
 * dlclose(), passed on to the C library's; if the object was really
 * unmapped, its addresses are retired (another object may be loaded at the
 * same place next).
 */
int dlclose(void *handle)
{
	static int (*real)(void *);
	struct link_map *lm = NULL;
	struct obj_range r = { 0, 0, 0, NULL, 0 };
	char name[SC_SHM_PATH_MAX];
	int ret;

	if (!real)     /* the C library's: always global, dlsym() finds it */
		real = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
	if (!real)
		return -1;
	if (rt.state != RT_ON || rt.sandboxed || !*rt_alive || dlinfo(handle, RTLD_DI_LINKMAP, &lm) || !lm ||
	    !lm->l_name)
		return real(handle);
	rt_stpcpy(name, lm->l_name, sizeof(name));
	r.bias = lm->l_addr;
	r.name = name;
	dl_iterate_phdr(find_obj, &r);
	ret = real(handle);
	if (!ret && r.found) {
		struct obj_range still = r;

		still.found = 0;
		dl_iterate_phdr(find_obj, &still);
		if (!still.found) {
			retire_object(&r);
			__atomic_store_n(&rt_mods_stale, 1, __ATOMIC_RELEASE);
		}
	}
	return ret;
}
