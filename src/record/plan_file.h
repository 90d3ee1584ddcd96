/*
 * plan_file — a patch plan as a file: what the recorder hands the injected
 * runtime, and what it keeps per build-id so that discovery runs once per
 * binary (record/discover.h builds the plan; this is its serialized form).
 *
 * Layout, little-endian, every field at its natural alignment:
 *
 *   struct plan_file_header
 *   struct plan_file_entry[nentries]   the patched functions, by addr
 *
 * Only patched functions are listed; the refusals are there as counts per
 * reason (the session's JSON "unpatched").  An entry is the function's
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
#define PLAN_FILE_VERSION  2     /* 2: data words no longer refuse a PIE function (issue 16) */
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
};

struct plan_file_entry {
	uint64_t addr;                /* the function's first byte */
	struct rel_entry entry;
};

_Static_assert(sizeof(struct plan_file_header) == 176, "plan file header layout");
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

/*
 * The entries of the plan held in buf[0 .. size), or NULL when it is not a
 * plan this build can read or an entry is damaged (*n is then 0).  buf
 * must be 8-byte aligned (a mapping is).  The entries point into buf.
 */
static inline const struct plan_file_entry *
plan_file_check(const void *buf, size_t size, size_t *n)
{
	const struct plan_file_header *h = buf;
	const struct plan_file_entry *v = (const struct plan_file_entry *)(h + 1);

	*n = 0;
	if (size < sizeof(*h) || memcmp(h->magic, PLAN_FILE_MAGIC, 8) ||
	    h->version != PLAN_FILE_VERSION || h->header_size != sizeof(*h) ||
	    h->entry_size != sizeof(struct plan_file_entry) ||
	    (size - sizeof(*h)) / sizeof(struct plan_file_entry) < h->nentries)
		return NULL;
	for (uint32_t i = 0; i < h->nentries; i++)
		if (!plan_entry_valid(&v[i].entry) || (i && v[i].addr <= v[i - 1].addr))
			return NULL;
	*n = h->nentries;
	return v;
}

#endif
