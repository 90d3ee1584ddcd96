/*
 * plan_file — a patch plan as a file: what the recorder hands the injected
 * runtime, and what it keeps per build-id so that discovery runs once per
 * binary (record/discover.h builds the plan; this is its serialized form).
 *
 * Layout, little-endian, every field at its natural alignment:
 *
 *   struct plan_file_header
 *   struct plan_file_entry[nentries]   the patched functions, by addr
 *   struct plan_file_call[ncalls]      call sites, by target then site
 *
 * Only patched functions are listed; the refusals are there as counts per
 * reason (the session's JSON "unpatched").  A function too short for the
 * jmp at its entry is counted at its direct call sites instead (reason
 * call_sites): each `call rel32`, `jmp rel32` or `jcc rel32` aimed at it
 * is listed, and the runtime points its rel32 at a stub of the function.  An entry is the function's
 * link-time address and its rel_entry, which rel_entry_place() turns into a
 * trampoline with arithmetic only: reading a plan needs neither libelf nor
 * a decoder, so the runtime includes this header alone (and reloc.h).
 *
 * Compatibility: a reader refuses another magic, a version above its own,
 * or sizes that differ from its structures (plan_file_check); a refused
 * plan is rebuilt by the recorder, never patched with.
 */
#ifndef SC_PLAN_FILE_H
#define SC_PLAN_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "record/reloc.h"

#define PLAN_FILE_MAGIC    "SCPLAN\r\n"
#define PLAN_FILE_VERSION  3     /* 2: data words no longer refuse a PIE function (issue 16);
				    3: call sites of functions too short to patch (issue 18) */
#define PLAN_FILE_REASONS  32     /* room for enum patch_reason to grow */

struct plan_file_header {
	char     magic[8];
	uint32_t version;
	uint32_t header_size;         /* sizeof(struct plan_file_header) */
	uint32_t entry_size;          /* sizeof(struct plan_file_entry) */
	uint32_t nentries;
	uint32_t count[PLAN_FILE_REASONS];  /* functions per patch_reason */
	uint8_t  build_id[20];        /* of the object the plan is for */
	uint32_t build_id_len;
	uint32_t ncalls;
	uint32_t call_size;           /* sizeof(struct plan_file_call) */
};

struct plan_file_entry {
	uint64_t addr;                /* the function's first byte */
	struct rel_entry entry;
};

/*
 * A direct branch to a call_sites function: the instruction at site, len
 * bytes long, whose rel32 field at site + rel_off (the last 4 bytes) lands
 * on target.  Never inside the bytes an entry jmp replaces.
 */
struct plan_file_call {
	uint64_t site;
	uint64_t target;              /* the function's first byte */
	uint8_t  len;                 /* 5 (call, jmp) or 6 (jcc) */
	uint8_t  rel_off;             /* len - 4 */
	uint8_t  pad[6];
};

_Static_assert(sizeof(struct plan_file_header) == 184, "plan file header layout");
_Static_assert(sizeof(struct plan_file_call) == 24, "plan file call layout");
_Static_assert(sizeof(struct rel_entry) == 104, "rel_entry layout");
_Static_assert(sizeof(struct plan_file_entry) == 112, "plan file entry layout");
_Static_assert(PATCH_NREASONS <= PLAN_FILE_REASONS, "reasons fit the header");

/* Can rel_entry_place() use e without reading or writing out of bounds? */
static inline bool plan_entry_valid(const struct rel_entry *e)
{
	if (e->code_len > REL_CODE_MAX || e->nfix > REL_FIX_MAX ||
	    e->len < REL_JMP_LEN || (e->skip != 0 && e->skip != 4))
		return false;
	for (unsigned i = 0; i < e->nfix; i++) {
		unsigned w = e->fix[i].kind == REL_FIX_REL32 ? 4 :
			     e->fix[i].kind == REL_FIX_ABS64 ? 8 : 0;

		if (!w || e->fix[i].off + w > e->code_len)
			return false;
	}
	return true;
}

/* The call sites of a plan plan_file_check() accepted (h->ncalls of them). */
static inline const struct plan_file_call *plan_file_calls(const struct plan_file_header *h)
{
	return (const struct plan_file_call *)((const uint8_t *)(h + 1) +
					       (size_t)h->nentries * sizeof(struct plan_file_entry));
}

/* Is c a branch the runtime may redirect, in order after prev (or NULL)? */
static inline bool plan_call_valid(const struct plan_file_call *c, const struct plan_file_call *prev)
{
	if ((c->len != 5 && c->len != 6) || c->rel_off + 4 != c->len)
		return false;
	return !prev || c->target > prev->target || (c->target == prev->target && c->site > prev->site);
}

/*
 * The entries of the plan held in buf[0 .. size), or NULL when it is not a
 * plan this build can read or an entry or call site is damaged (*n is then
 * 0).  buf must be 8-byte aligned (a mapping is).  The entries point into
 * buf; plan_file_calls() gives the call sites.
 */
static inline const struct plan_file_entry *
plan_file_check(const void *buf, size_t size, size_t *n)
{
	const struct plan_file_header *h = buf;
	const struct plan_file_entry *v = (const struct plan_file_entry *)(h + 1);
	const struct plan_file_call *c;

	*n = 0;
	if (size < sizeof(*h) || memcmp(h->magic, PLAN_FILE_MAGIC, 8) ||
	    h->version != PLAN_FILE_VERSION || h->header_size != sizeof(*h) ||
	    h->entry_size != sizeof(struct plan_file_entry) ||
	    h->call_size != sizeof(struct plan_file_call) ||
	    (size - sizeof(*h)) / sizeof(struct plan_file_entry) < h->nentries ||
	    (size - sizeof(*h) - (size_t)h->nentries * sizeof(struct plan_file_entry)) /
	    sizeof(struct plan_file_call) < h->ncalls)
		return NULL;
	for (uint32_t i = 0; i < h->nentries; i++)
		if (!plan_entry_valid(&v[i].entry) || (i && v[i].addr <= v[i - 1].addr))
			return NULL;
	c = plan_file_calls(h);
	for (uint32_t i = 0; i < h->ncalls; i++)
		if (!plan_call_valid(&c[i], i ? &c[i - 1] : NULL))
			return NULL;
	*n = h->nentries;
	return v;
}

#endif
