/*
 * libFuzzer harness for the code that reads ELF objects the profiled
 * program mapped: the unwinder's CFI tables (.eh_frame, .debug_frame, the
 * segments, the root functions) and the symbolizer (symbol tables, DWARF,
 * compressed DWARF read lazily or by libdw).  Any file a recording names
 * is read, so its bytes are untrusted.  Built and run by
 * tests/fuzz/run-elf-fuzz.sh.
 *
 * Each input is written to one file (both modules read objects by path),
 * then:
 *  - its CFI table is opened and rows are looked up at the start, middle
 *    and end of a spread of FDEs, then a walk runs over a fake stack whose
 *    slots point into those FDEs (so hostile rows drive real steps);
 *  - a symbolization session maps it and resolves the same addresses as
 *    pcs and as return addresses, and reads every string it returns;
 *  - the run-time patcher's discovery builds its patch plan (symbols, FDE
 *    starts, the decoder sweep, relocations, entry relocation).
 * Bit 0 of e_ident's last padding byte (offset 15, ignored by every ELF
 * reader) picks eager (libdw's own) instead of lazy reading of compressed
 * DWARF, so both are fuzzed.
 */
#include "record/discover.h"
#include "symbols/symbols.h"
#include "symbols/sym_int.h"
#include "unwind/unwind.h"
#include "unwind/unwind_int.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BASE 0x10000000000ULL     /* where the object is "mapped" */
#define SPAN 0x100000000ULL       /* the mapping's length */
#define NPCS 48
#define STACK_SLOTS 64

static char dir[] = "/tmp/sc-fuzz-elf.XXXXXX";
static char path[PATH_MAX];
static volatile size_t sink;

static void remove_files(void)
{
	unlink(path);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	if (!mkdtemp(dir))
		abort();
	atexit(remove_files);
	snprintf(path, sizeof(path), "%s/obj", dir);
	/* Debug files by build-id or debuglink are looked up in this empty
	 * directory only, never among the machine's real ones. */
	setenv("STACKCLOCK_DEBUG_ROOT", dir, 1);
	return 0;
}

static bool write_input(const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	size_t off = 0;

	if (fd < 0)
		return false;
	while (off < size) {
		ssize_t n = write(fd, data + off, size - off);
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	close(fd);
	return off == size;
}

/* Runtime addresses inside the table's FDEs (start, middle, end - 1). */
static size_t pick_pcs(const struct unw_table *t, uint64_t *pcs, uint64_t *delta)
{
	uint64_t v0;
	size_t n = 0;

	if (!unw_table_off_to_vaddr(t, 0, &v0))
		return 0;
	*delta = v0 - BASE;           /* object vaddr - runtime address */
	for (size_t i = 0; i < t->nfdes && n + 3 <= NPCS; i += 1 + t->nfdes / (NPCS / 3)) {
		const struct unw_fde *f = &t->fdes[i];
		pcs[n++] = f->lo - *delta;
		pcs[n++] = f->lo + (f->hi - f->lo) / 2 - *delta;
		pcs[n++] = f->hi - 1 - *delta;
	}
	return n;
}

static size_t fuzz_unwind(const uint8_t *data, size_t size, uint64_t *pcs)
{
	struct unw_cache *c = unw_cache_new();
	struct unw_module *m = unw_cache_module(c, path, NULL, 0);
	struct unw_table *t = unw_module_table(m);
	uint64_t delta = 0, stack[STACK_SLOTS], ips[128];
	const uint8_t *id;
	size_t n = 0;

	sink += unw_module_build_id(m, &id);
	if (t) {
		struct unw_space *s = unw_space_new();
		struct unw_result res;

		n = pick_pcs(t, pcs, &delta);
		for (size_t i = 0; i < n; i++) {
			const struct unw_row *r = unw_table_find(t, pcs[i] + delta);
			sink += r ? r->cfa_off : 0;
			sink += unw_table_is_root(t, pcs[i] + delta);
		}
		sink += unw_table_build_id(t, &id) + unw_table_nrows(t) + unw_table_bytes(t);

		/* A stack of return addresses into the FDEs, mixed with input
		 * bytes, walked from each picked pc. */
		for (size_t i = 0; i < STACK_SLOTS; i++) {
			uint64_t v;
			memcpy(&v, data + (i * 8) % (size - 7), 8);
			stack[i] = n && (v & 1) ? pcs[(v >> 8) % n] + 1 : v;
		}
		unw_space_add(s, BASE, BASE + SPAN, 0, m);
		for (size_t i = 0; i < n; i++) {
			struct unw_regs regs = { .ip = pcs[i], .sp = 0x7ff000000000ULL,
						 .bp = 0x7ff000000000ULL + 8 * (i % STACK_SLOTS) };
			struct unw_stack st = { .data = (const uint8_t *)stack, .start = regs.sp,
						.size = sizeof(stack), .full = i & 1 };

			unw_unwind(s, &regs, &st, ips, 128, &res);
			if (res.nframes > 128)
				abort();
			sink += res.nframes + res.flags;
		}
		unw_space_free(s);
	}
	unw_cache_free(c);
	return n;
}

static void fuzz_symbols(const uint64_t *pcs, size_t n)
{
	struct sym_session *s = sym_session_new();
	struct sc_rec_module m = { .proc_id = 1, .start = BASE, .end = BASE + SPAN,
				   .flags = SC_MOD_EXEC };
	struct sym_frame f[16];

	sym_add_module(s, &m, path);
	for (size_t i = 0; i < n + 2; i++) {
		/* The mapping's first bytes and an address past every FDE too. */
		uint64_t a = i < n ? pcs[i] : i == n ? BASE : BASE + SPAN - 1;

		for (int ret = 0; ret < 2; ret++) {
			int k = sym_resolve(s, 1, a, ret, f, 16);
			if (k < 1 || k > 16)
				abort();
			for (int j = 0; j < k; j++) {
				sink += strlen(f[j].function) + strlen(f[j].module);
				if (f[j].file)
					sink += strlen(f[j].file) + f[j].line;
			}
		}
	}
	sym_session_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t pcs[NPCS];
	size_t n;

	if (size < 16 || !write_input(data, size))
		return 0;
	sym_lazy_dwarf = !(data[15] & 1);
	n = fuzz_unwind(data, size, pcs);
	fuzz_symbols(pcs, n);
	{
		struct dsc_plan *p;

		if (dsc_plan_build(path, &p) == 0) {
			sink += p->nfuncs + p->count[PATCH_OK];
			dsc_plan_free(p);
		}
	}
	return 0;
}
