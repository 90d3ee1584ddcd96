/*
 * test_symbols — symbolization against real programs built at test time.
 *
 * The programs (tests/progs/sym_*) print their own mappings, dladdr bases
 * and "marks": addresses of instructions on known lines of known functions
 * (see tests/progs/sym_mark.h).  Each is resolved the way a report would,
 * from SC_REC_MODULE-style mappings after the program has exited, and the
 * function, module, file and line are compared with what the program said.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "symbols/symbols.h"
#include "symbols/sym_int.h"
#include "util/util.h"

static char tmp[PATH_MAX];     /* this run's scratch directory */
static char progs[PATH_MAX];   /* tests/progs */

struct mark {
	char name[256];
	uint64_t pc;
	unsigned line;
};

struct run_out {
	struct mark marks[16];
	int nmarks;
	struct mark fns[8];        /* name, address, line of definition */
	int nfns;
	struct {
		char path[PATH_MAX];
		uint64_t start, end, pgoff;
	} maps[32];
	int nmaps;
	struct {
		char tag[16];
		uint64_t base;
	} bases[8];
	int nbases;
	unsigned inline_line, inline2_line, ret_line;
	uint64_t retaddr;
};

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char *cmd;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	if (vasprintf(&cmd, fmt, ap) < 0)
		abort();
	va_end(ap);
	rc = system(cmd);
	if (rc != 0)
		tap_diag("command failed (%d): %s", rc, cmd);
	free(cmd);
	return rc;
}

static int run_prog(const char *cmd, struct run_out *o)
{
	char line[PATH_MAX + 128];
	FILE *f = popen(cmd, "r");
	int rc;

	memset(o, 0, sizeof(*o));
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *bar1, *bar2;
		line[strcspn(line, "\n")] = '\0';
		if ((!strncmp(line, "mark ", 5) || !strncmp(line, "fn ", 3)) &&
		    (bar1 = strchr(line, '|')) && (bar2 = strchr(bar1 + 1, '|'))) {
			bool is_mark = line[0] == 'm';
			struct mark *m = is_mark ? &o->marks[o->nmarks++]
						 : &o->fns[o->nfns++];
			*bar1 = '\0';
			snprintf(m->name, sizeof(m->name), "%s",
				 line + (is_mark ? 5 : 3));
			m->pc = strtoull(bar1 + 1, NULL, 16);
			m->line = (unsigned)atoi(bar2 + 1);
		} else if (!strncmp(line, "map ", 4) && o->nmaps < 32) {
			unsigned long long s, e, off;
			int n = 0;
			if (sscanf(line, "map %llx %llx %llx %n", &s, &e, &off,
				   &n) == 3 && n) {
				o->maps[o->nmaps].start = s;
				o->maps[o->nmaps].end = e;
				o->maps[o->nmaps].pgoff = off;
				snprintf(o->maps[o->nmaps].path, PATH_MAX, "%s",
					 line + n);
				o->nmaps++;
			}
		} else if (!strncmp(line, "base ", 5) &&
			   (bar1 = strchr(line, '|'))) {
			*bar1 = '\0';
			snprintf(o->bases[o->nbases].tag, 16, "%.15s", line + 5);
			o->bases[o->nbases++].base = strtoull(bar1 + 1, NULL, 16);
		} else if (!strncmp(line, "inline2 ", 8)) {
			o->inline2_line = (unsigned)atoi(line + 8);
		} else if (!strncmp(line, "inline ", 7)) {
			o->inline_line = (unsigned)atoi(line + 7);
		} else if (!strncmp(line, "ret ", 4)) {
			o->ret_line = (unsigned)atoi(line + 4);
		} else if (!strncmp(line, "retaddr ", 8)) {
			o->retaddr = strtoull(line + 8, NULL, 16);
		}
	}
	rc = pclose(f);
	return rc;
}

static const struct mark *find_mark(const struct run_out *o, const char *name)
{
	for (int i = 0; i < o->nmarks; i++) {
		if (!strcmp(o->marks[i].name, name))
			return &o->marks[i];
	}
	return NULL;
}

static const struct mark *find_fn(const struct run_out *o, const char *name)
{
	for (int i = 0; i < o->nfns; i++) {
		if (!strcmp(o->fns[i].name, name))
			return &o->fns[i];
	}
	return NULL;
}

static uint64_t find_base(const struct run_out *o, const char *tag)
{
	for (int i = 0; i < o->nbases; i++) {
		if (!strcmp(o->bases[i].tag, tag))
			return o->bases[i].base;
	}
	return 0;
}

static void add_map(struct sym_session *s, uint32_t proc, uint64_t start,
		    uint64_t end, uint64_t pgoff, uint32_t flags,
		    const uint8_t *bid, unsigned bid_len, const char *path)
{
	struct sc_rec_module m;

	memset(&m, 0, sizeof(m));
	m.proc_id = proc;
	m.start = start;
	m.end = end;
	m.pgoff = pgoff;
	m.flags = flags;
	m.build_id_len = bid_len;
	if (bid_len)
		memcpy(m.build_id, bid, bid_len);
	sym_add_module(s, &m, path);
}

/* The program's mappings, as /proc/PID/maps gives them (path mapped). */
static void add_maps(struct sym_session *s, uint32_t proc,
		     const struct run_out *o, const char *from, const char *to)
{
	for (int i = 0; i < o->nmaps; i++) {
		const char *p = o->maps[i].path;
		if (from && !strcmp(p, from))
			p = to;
		add_map(s, proc, o->maps[i].start, o->maps[i].end,
			o->maps[i].pgoff, SC_MOD_EXEC, NULL, 0, p);
	}
}

static const char *base_name(const char *p)
{
	const char *b = p ? strrchr(p, '/') : NULL;
	return b ? b + 1 : p;
}

/* Resolve a mark: one frame, the named function, at the mark's line. */
static void check_mark(struct sym_session *s, uint32_t proc,
		       const struct run_out *o, const char *name,
		       const char *module, const char *file, const char *what)
{
	const struct mark *m = find_mark(o, name);
	struct sym_frame f[8];
	int n;

	if (!ok(m != NULL, "%s: program printed mark %s", what, name))
		return;
	n = sym_resolve(s, proc, m->pc, false, f, 8);
	is_u64(n, 1, "%s: %s is one frame", what, name);
	is_str(f[0].function, name, "%s: %s function", what, name);
	is_str(f[0].module, module, "%s: %s module", what, name);
	if (file) {
		is_str(base_name(f[0].file), file, "%s: %s file", what, name);
		is_u64(f[0].line, m->line, "%s: %s line", what, name);
	}
	ok(!f[0].inlined, "%s: %s not inlined", what, name);
}

/* The C program: leaf, inline, return address, function entries, libs. */
static void check_c_prog(struct sym_session *s, uint32_t proc,
			 const struct run_out *o, const char *exe,
			 const char *lib, const char *dl, bool lines,
			 const char *what)
{
	const struct mark *m;
	struct sym_frame f[8];
	int n;

	check_mark(s, proc, o, "sym_leaf", exe, lines ? "sym_prog.c" : NULL, what);
	check_mark(s, proc, o, "symlib_work", lib, lines ? "sym_lib.c" : NULL, what);
	check_mark(s, proc, o, "symdl_work", dl, lines ? "sym_lib.c" : NULL, what);
	/* gcc: in "sym_split.cold"; named after the function when DWARF says
	 * so, by its symbol (the part's own) without. */
	if (lines)
		check_mark(s, proc, o, "sym_split", exe, "sym_prog.c", what);

	m = find_mark(o, "sym_deep");
	if (ok(m != NULL, "%s: inline mark printed", what)) {
		n = sym_resolve(s, proc, m->pc, false, f, 8);
		if (lines) {
			is_u64(n, 3, "%s: pc in two nested inlines gives three frames", what);
			is_str(f[0].function, "sym_deep", "%s: innermost frame is the inner inlined function", what);
			ok(f[0].inlined, "%s: innermost frame marked inlined", what);
			is_u64(f[0].line, m->line, "%s: innermost frame at the line inside it", what);
			is_str(base_name(f[0].file), "sym_prog.c", "%s: inlined frame file", what);
			is_str(f[1].function, "sym_inlined", "%s: middle frame is the outer inlined function", what);
			ok(f[1].inlined, "%s: middle frame marked inlined", what);
			is_u64(f[1].line, o->inline2_line, "%s: middle frame at the line of its inline call", what);
			is_str(f[2].function, "sym_outer", "%s: outer frame is the real function", what);
			ok(!f[2].inlined, "%s: outer frame not inlined", what);
			is_u64(f[2].line, o->inline_line, "%s: outer frame at the call site line", what);
			is_str(f[2].module, exe, "%s: outer frame module", what);
			n = sym_resolve(s, proc, m->pc, false, f, 1);
			is_u64(n, 1, "%s: max 1 gives one frame", what);
			is_str(f[0].function, "sym_deep", "%s: innermost first", what);
		} else {
			is_u64(n, 1, "%s: no DWARF: one frame", what);
			is_str(f[0].function, "sym_outer", "%s: no DWARF: symbol of the holder", what);
		}
	}

	n = sym_resolve(s, proc, o->retaddr, true, f, 8);
	is_u64(n, 1, "%s: return address: one frame", what);
	is_str(f[0].function, "sym_outer", "%s: return address resolves in the caller", what);
	if (lines)
		is_u64(f[0].line, o->ret_line, "%s: return address at the call's line", what);

	for (int i = 0; i < o->nfns; i++) {
		n = sym_resolve(s, proc, o->fns[i].pc, false, f, 8);
		is_str(f[0].function, o->fns[i].name, "%s: entry of %s", what, o->fns[i].name);
		if (lines)
			is_u64(f[0].line, o->fns[i].line, "%s: entry line of %s", what, o->fns[i].name);
	}
}

/* Count lines of a file holding needle. */
static int count_in_file(const char *path, const char *needle)
{
	char line[4096];
	int n = 0;
	FILE *f = fopen(path, "r");

	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	if (f)
		fclose(f);
	return n;
}

/* Run fn with stderr going to a file; returns that file's path. */
static int saved_stderr = -1;
static void stderr_to(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	fflush(stderr);
	saved_stderr = dup(2);
	dup2(fd, 2);
	close(fd);
}

static void stderr_back(void)
{
	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
}

static void build_id_of(const char *path, uint8_t *bid, unsigned *len)
{
	struct sym_intern t = { 0 };
	struct sym_obj *o = obj_open(path, "/nonexistent", &t);
	const uint8_t *b;

	*len = obj_build_id(o, &b);
	memcpy(bid, b, *len);
	obj_free(o);
	intern_release(&t);
}

static void test_shorten(void)
{
	static const struct {
		const char *in;
		unsigned width;
		const char *want;
	} cases[] = {
		{ "main", 80, "main" },
		{ "a_c_function_name", 18, "a_c_function_name" },
		{ "a_c_function_name", 17, ".._function_name" },
		{ "std::vector<int, std::allocator<int> >::push_back(int const&)", 80,
		  "std::vector<int, std::allocator<int> >::push_back(int const&)" },
		{ "std::vector<int, std::allocator<int> >::push_back(int const&)", 40,
		  "std::vector<>::push_back(int const&)" },
		{ "std::vector<int, std::allocator<int> >::push_back(int const&)", 30,
		  "std::vector<>::push_back()" },
		{ "std::vector<int, std::allocator<int> >::push_back(int const&)", 20,
		  "..push_back()" },
		{ "(anonymous namespace)::hidden(std::vector<int, std::allocator<int> >&)", 40,
		  "(anonymous namespace)::hidden()" },
		{ "std::basic_ostream<char, std::char_traits<char> >& std::operator<< "
		  "<std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> >&, char const*)", 60,
		  "std::basic_ostream<>& std::operator<< <>()" },
		{ "bool operator< <int>(Foo<int> const&, Foo<int> const&)", 30,
		  "bool operator< <>()" },
		{ "Foo<int>::operator<<(int)", 20, "Foo<>::operator<<()" },
		{ "Ptr<Node<int> >::operator->() const", 20, "..perator->() const" },
		{ "main::{lambda(int)#1}::operator()(int) const", 40,
		  "main::{lambda()#1}::operator()() const" },
		{ "f<(3>2)>(int)", 8, "f<>()" },
	};
	char buf[128];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		sym_shorten(cases[i].in, buf, cases[i].width);
		is_str(buf, cases[i].want, "shorten '%s' to %u", cases[i].in,
		       cases[i].width);
	}

	/* Never more than width bytes (NUL included), whatever the width. */
	bool fits = true;
	for (unsigned w = 1; w < 100; w++) {
		memset(buf, 'X', sizeof(buf));
		sym_shorten(cases[8].in, buf, w);
		fits &= strlen(buf) < w && buf[w] == 'X';
	}
	ok(fits, "shorten writes at most width bytes for widths 1..99");
}

/* Rust's legacy mangling (names from a rustc 1.63 binary): the hash and
 * the escapes gone, as rustc-demangle and perf show them; its v0 mangling
 * the same way; C++ names and plain ones as before. */
static void test_demangle(void)
{
	static const struct { const char *raw, *want; } v[] = {
		{ "_ZN4main5count17hcf5b50a818b4406aE", "main::count" },
		{ "_ZN40_$LT$str$u20$as$u20$core..fmt..Debug$GT$3fmt17hf646a08b5d048f3fE",
		  "<str as core::fmt::Debug>::fmt" },
		{ "_ZN3std2io5error83_$LT$impl$u20$core..fmt..Debug$u20$for$u20$std..io..error..repr_bitpacked..Repr$GT$3fmt17hb1d398e008944ac7E",
		  "std::io::error::<impl core::fmt::Debug for std::io::error::repr_bitpacked::Repr>::fmt" },
		/* C++: a name ending in what looks like a hash is left alone */
		{ "_ZN2ns17h0123456789abcdefEv", "ns::h0123456789abcdef()" },
		{ "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEC1EPKcRKS3_",
		  "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::basic_string(char const*, std::allocator<char> const&)" },
		/* LLVM's ".llvm." suffix */
		{ "_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17h54229c6c97078e41E.llvm.8409268350794057147",
		  "std::rt::lang_start::{{closure}}" },
		{ "main", "main" },
		{ "_Zfoo.llvm.12", "_Zfoo.llvm.12" },
		/* Rust's v0 mangling (rustc 1.9x's std, core and alloc; the
		 * expected text is binutils' c++filt 2.40 without the crate
		 * hashes, as rustc-demangle's alternate form prints it) */
		{ "_RNvNtNtCsjrHSEGnQ3l9_3std9panicking11panic_count8increase",
		  "std::panicking::panic_count::increase" },
		{ "_RNCNvNtCsjrHSEGnQ3l9_3std9panicking12default_hook0B5_",
		  "std::panicking::default_hook::{closure#0}" },
		{ "_RNvMs3_NtCslNYArtu3iFV_5alloc7raw_vecINtB5_6RawVecTOhFUKCBN_EuENtNtCsjrHSEGnQ3l9_3std5alloc6SystemE8grow_oneB13_",
		  "<alloc::raw_vec::RawVec<(*mut u8, unsafe extern \"C\" fn(*mut u8)), std::alloc::System>>::grow_one" },
		{ "_RNvXs1g_NtCsgEmfK2I1SDS_4core3fmtRDNtB6_5DebugEL_Bx_3fmtB8_",
		  "<&dyn core::fmt::Debug as core::fmt::Debug>::fmt" },
		{ "_RNvXs1h_NtCsgEmfK2I1SDS_4core3fmtQShNtB6_5Debug3fmtCsgY6Mt91CT9J_14rustc_demangle",
		  "<&mut [u8] as core::fmt::Debug>::fmt" },
		{ "_RNSNvYNCNvNtNtNtCsjrHSEGnQ3l9_3std3sys11personality3gcc14find_eh_action0INtNtNtCsgEmfK2I1SDS_4core3ops8function6FnOnceuE9call_once6vtableBe_",
		  "<std::sys::personality::gcc::find_eh_action::{closure#0} as core::ops::function::FnOnce<()>>::call_once::{shim:vtable#0}" },
		{ "_RINvNtCsgEmfK2I1SDS_4core6escape14escape_unicodeKja_ECsgY6Mt91CT9J_14rustc_demangle",
		  "core::escape::escape_unicode::<10>" },
		{ "_RNvXCs_3fooFG_RL0_hEuNtCs_4core5Debug3fmt", "<for<'a> fn(&'a u8) as core::Debug>::fmt" },
		{ "_RINvCs_3foo3barKb1_Kc47_Kan5_E", "foo::bar::<true, 'G', -5>" },
		{ "_RNvNtCs_3foo3bar3baz.llvm.123", "foo::bar::baz" },
		/* malformed: a backreference forwards, a name running past the
		 * end, a placeholder const's missing "E": left as they are */
		{ "_RNvB9_3foo", "_RNvB9_3foo" },
		{ "_RNvCs_3foo9bar", "_RNvCs_3foo9bar" },
		{ "_RINvCs_3foo3barKp", "_RINvCs_3foo3barKp" },
		{ "_R", "_R" },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(*v); i++) {
		char *d = sym_demangle(v[i].raw);

		ok(!strcmp(d, v[i].want), "demangled %s: %s", v[i].raw, d);
		free(d);
	}
}

static void test_kernel(void)
{
	char path[PATH_MAX + 32];
	struct sym_session *s;
	struct sym_frame f[4];
	FILE *k;

	snprintf(path, sizeof(path), "%s/kallsyms", tmp);
	k = fopen(path, "w");
	fputs("ffffffff81000000 T _stext\n"
	      "ffffffff81000200 t helper_fn\n"
	      "ffffffff81000100 T startup_64\n"
	      "ffffffff81000300 D some_data\n"
	      "ffffffff81000400 T __alias_impl\n"
	      "ffffffff81000400 T alias_impl\n"
	      "ffffffffc0001000 t mod_fn\t[some_mod]\n", k);
	fclose(k);
	setenv("STACKCLOCK_KALLSYMS", path, 1);
	s = sym_session_new();
	sym_resolve(s, 1, 0xffffffff81000250ULL, false, f, 4);
	is_str(f[0].function, "helper_fn", "kernel: function from kallsyms");
	is_str(f[0].module, "[kernel]", "kernel: module [kernel]");
	sym_resolve(s, 1, 0xffffffff81000350ULL, false, f, 4);
	is_str(f[0].function, "helper_fn", "kernel: data symbols ignored");
	sym_resolve(s, 7, 0xffffffff81000401ULL, false, f, 4);
	is_str(f[0].function, "alias_impl", "kernel: aliases give the public name");
	sym_resolve(s, 1, 0xffffffff81000200ULL, true, f, 4);
	is_str(f[0].function, "startup_64", "kernel: return address looks up addr-1");
	sym_resolve(s, 1, 0xffffffffc0001010ULL, false, f, 4);
	is_str(f[0].function, "mod_fn", "kernel: module symbols");
	sym_session_free(s);

	/* Upper-half addresses where the kernel has no code (a broken
	 * unwind's garbage): not named after the last symbol below them. */
	s = sym_session_new();
	sym_resolve(s, 1, 0xffffffffffffff80ULL, false, f, 4);
	is_str(f[0].function, "0xffffffffffffff80", "kernel: no code above the modules");
	is_str(f[0].module, "[unknown]", "kernel: no code above the modules: [unknown]");
	sym_resolve(s, 1, 0xffff888000001000ULL, false, f, 4);
	is_str(f[0].function, "0xffff888000001000", "kernel: no code in the direct map");
	sym_resolve(s, 1, 0xffffffffc0001010ULL, false, f, 4);
	is_str(f[0].function, "mod_fn", "kernel: module symbols after those");
	sym_session_free(s);

	setenv("STACKCLOCK_KALLSYMS", "/nonexistent/kallsyms", 1);
	s = sym_session_new();
	sym_resolve(s, 1, 0xffffffff81000250ULL, false, f, 4);
	is_str(f[0].function, "0xffffffff81000250", "kernel unreadable: address as name");
	is_str(f[0].module, "[unknown]", "kernel unreadable: module [unknown]");
	sym_session_free(s);
	unsetenv("STACKCLOCK_KALLSYMS");
}

/* Stripped binaries: separate debug file by build-id, and by debuglink. */
static void test_debug_files(void)
{
	char dbg[PATH_MAX + 16], exe[PATH_MAX + 32], cmd[4 * PATH_MAX];
	char lib[PATH_MAX + 32], dl[PATH_MAX + 32];
	struct run_out *o = calloc(1, sizeof(*o));
	struct sym_session *s;
	struct sym_frame f[4];
	uint8_t bid[20];
	unsigned bid_len;
	int rc;

	snprintf(dbg, sizeof(dbg), "%s/debug", tmp);
	snprintf(lib, sizeof(lib), "%s/libsym_lib.so", tmp);
	snprintf(dl, sizeof(dl), "%s/sym_dl.so", tmp);

	/* By build-id, under STACKCLOCK_DEBUG_ROOT. */
	snprintf(exe, sizeof(exe), "%s/sym_strip", tmp);
	rc = sh("cd %s && gcc -O2 -g -I%s %s/sym_prog.c -o sym_strip -L. -lsym_lib "
		"-Wl,-rpath=%s -ldl && id=$(readelf -n sym_strip | awk '/Build ID/{print $3}') && "
		"mkdir -p %s/.build-id/$(echo $id | cut -c1-2) && "
		"objcopy --only-keep-debug sym_strip %s/.build-id/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-).debug && "
		"strip --strip-all sym_strip",
		tmp, progs, progs, tmp, dbg, dbg);
	ok(rc == 0, "build stripped program with a build-id debug file");
	snprintf(cmd, sizeof(cmd), "%s %s", exe, dl);
	ok(run_prog(cmd, o) == 0, "run stripped program");

	setenv("STACKCLOCK_DEBUG_ROOT", dbg, 1);
	s = sym_session_new();
	add_maps(s, 1, o, NULL, NULL);
	check_c_prog(s, 1, o, exe, lib, dl, true, "build-id debug file");
	sym_session_free(s);

	/* The file deleted since the recording, its debug file still there. */
	build_id_of(exe, bid, &bid_len);
	ok(bid_len == 20, "stripped program has a build-id");
	snprintf(cmd, sizeof(cmd), "%s/sym_gone_dbg", tmp);
	s = sym_session_new();
	for (int i = 0; i < o->nmaps; i++) {
		bool self = !strcmp(o->maps[i].path, exe);
		add_map(s, 1, o->maps[i].start, o->maps[i].end, o->maps[i].pgoff,
			SC_MOD_EXEC, self ? bid : NULL, self ? bid_len : 0,
			self ? cmd : o->maps[i].path);
	}
	check_mark(s, 1, o, "sym_leaf", cmd, "sym_prog.c", "deleted, debug file by record's build-id");
	sym_session_free(s);
	unsetenv("STACKCLOCK_DEBUG_ROOT");

	/* No debug file: a stripped library still has .dynsym, a stripped
	 * program's own functions are unknown. */
	rc = sh("cd %s && cp libsym_lib.so libsym_strip.so && strip --strip-all libsym_strip.so", tmp);
	snprintf(cmd, sizeof(cmd), "%s/libsym_strip.so", tmp);
	s = sym_session_new();
	add_maps(s, 1, o, lib, cmd);
	sym_resolve(s, 1, find_mark(o, "symlib_work")->pc, false, f, 4);
	is_str(f[0].function, "symlib_work", "stripped library: .dynsym name");
	ok(rc == 0 && f[0].file == NULL && f[0].line == 0, "stripped library: no line");
	{
		/* Named by where its CFI says its function starts, relative to
		 * the module: the same name wherever the program was loaded. */
		const struct mark *fn = find_fn(o, "sym_leaf");
		const char *slash = strrchr(exe, '/');
		uint64_t base = find_base(o, "exe");   /* dladdr's dli_fbase */
		char want[PATH_MAX + 64];

		snprintf(want, sizeof(want), "%s+0x%" PRIx64, slash + 1,
			 fn ? fn->pc - base : 0);
		sym_resolve(s, 1, find_mark(o, "sym_leaf")->pc, false, f, 4);
		is_str(f[0].function, want,
		       "stripped program, no debug file: its function's start in the module");
		ok(f[0].unnamed, "stripped program, no debug file: flagged as without symbol");
		sym_resolve(s, 1, find_mark(o, "sym_leaf")->pc + 1, false, f, 4);
		is_str(f[0].function, want, "stripped program: the next byte is the same function");
	}
	is_str(f[0].module, exe, "stripped program, no debug file: module known");
	sym_session_free(s);

	/* By .gnu_debuglink next to the file; no build-id, so the CRC decides. */
	snprintf(exe, sizeof(exe), "%s/sym_link", tmp);
	rc = sh("cd %s && gcc -O2 -g -Wl,--build-id=none -I%s %s/sym_prog.c -o sym_link "
		"-L. -lsym_lib -Wl,-rpath=%s -ldl && objcopy --only-keep-debug sym_link sym_link.debug && "
		"strip --strip-all sym_link && objcopy --add-gnu-debuglink=sym_link.debug sym_link",
		tmp, progs, progs, tmp);
	ok(rc == 0, "build stripped program with a debuglink");
	snprintf(cmd, sizeof(cmd), "%s %s", exe, dl);
	ok(run_prog(cmd, o) == 0, "run debuglink program");
	s = sym_session_new();
	add_maps(s, 1, o, NULL, NULL);
	check_c_prog(s, 1, o, exe, lib, dl, true, "debuglink");
	sym_session_free(s);

	/* A debuglink whose CRC does not match is refused. */
	rc = sh("cd %s && cp sym_link.debug sym_link.debug.orig && "
		"printf x >> sym_link.debug", tmp);
	s = sym_session_new();
	add_maps(s, 1, o, NULL, NULL);
	sym_resolve(s, 1, find_mark(o, "sym_deep")->pc, false, f, 4);
	ok(rc == 0 && f[0].file == NULL && !f[0].inlined,
	   "debuglink with a wrong CRC is not used");
	sym_session_free(s);
	free(o);
}

/* ---- compressed DWARF, read lazily ------------------------------------ */

/* One lookup with lazy reading of compressed DWARF on or off for objects
 * the session opens during it. */
static int resolve_as(struct sym_session *s, bool lazy, uint32_t proc,
		      uint64_t addr, bool ret, struct sym_frame *f)
{
	bool was = sym_lazy_dwarf;
	int n;

	sym_lazy_dwarf = lazy;
	n = sym_resolve(s, proc, addr, ret, f, SYM_MAX_FRAMES);
	sym_lazy_dwarf = was;
	return n;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/*
 * Resolve every step-th address of [lo, hi) of proc (as a sampled pc and as
 * a return address) in a lazy and an eager session; how many differ.
 */
static int compare_lazy(uint32_t proc, struct sym_session *lazy,
			struct sym_session *eager, uint64_t lo, uint64_t hi,
			uint64_t step, int *inlined)
{
	struct sym_frame f[SYM_MAX_FRAMES], g[SYM_MAX_FRAMES];
	int bad = 0;

	for (uint64_t a = lo; a < hi; a += step) {
		for (int ret = 0; ret < 2; ret++) {
			int n = resolve_as(lazy, true, proc, a, ret, f);
			int m = resolve_as(eager, false, proc, a, ret, g);
			bool same = n == m;
			for (int i = 0; same && i < n; i++)
				same = same_str(f[i].function, g[i].function) &&
				       same_str(f[i].module, g[i].module) &&
				       same_str(f[i].file, g[i].file) &&
				       f[i].line == g[i].line &&
				       f[i].inlined == g[i].inlined;
			if (!same && bad++ < 3)
				tap_diag("%#" PRIx64 "%s: lazy %d frames (%s %s:%u), "
					 "eager %d (%s %s:%u)", a, ret ? " (return)" : "",
					 n, f[0].function, f[0].file ? f[0].file : "?",
					 f[0].line, m, g[0].function,
					 g[0].file ? g[0].file : "?", g[0].line);
			*inlined += n > 1;
		}
	}
	return bad;
}

/* dwz: DWARF shared between files in a common file found by build-id. */
static void test_dwz(void)
{
	char dir[PATH_MAX + 16], exe[PATH_MAX + 32], cmd[4 * PATH_MAX];
	struct run_out *o;
	struct sym_session *s;
	struct sym_frame f[8];
	const struct mark *m;
	int rc, n;

	if (system("command -v dwz >/dev/null 2>&1") != 0) {
		printf("ok %d - dwz common file # SKIP dwz not installed\n", ++tap_n);
		return;
	}
	snprintf(dir, sizeof(dir), "%s/dwz", tmp);
	snprintf(exe, sizeof(exe), "%s/p1", dir);
	rc = sh("mkdir -p %s/root && cd %s && "
		"gcc -O2 -g -I%s %s/sym_prog.c -o p1 -L.. -lsym_lib -Wl,-rpath=%s -ldl && "
		"gcc -O2 -g -DSYM_TWIN -I%s %s/sym_prog.c -o p2 -L.. -lsym_lib -Wl,-rpath=%s -ldl && "
		"dwz -m common.debug -M /nonexistent/common.debug p1 p2 && "
		"id=$(readelf -n common.debug | awk '/Build ID/{print $3}') && "
		"mkdir -p root/.build-id/$(echo $id | cut -c1-2) && "
		"mv common.debug root/.build-id/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-).debug",
		dir, dir, progs, progs, tmp, progs, progs, tmp);
	if (!ok(rc == 0, "build programs sharing DWARF through dwz"))
		return;
	o = calloc(1, sizeof(*o));
	snprintf(cmd, sizeof(cmd), "%s %s/sym_dl.so", exe, tmp);
	rc = run_prog(cmd, o);
	m = find_mark(o, "sym_deep");
	snprintf(cmd, sizeof(cmd), "%s/root", dir);
	setenv("STACKCLOCK_DEBUG_ROOT", cmd, 1);
	s = sym_session_new();
	add_maps(s, 1, o, NULL, NULL);
	n = m ? sym_resolve(s, 1, m->pc, false, f, 8) : 0;
	ok(rc == 0 && n == 3 && !strcmp(f[0].function, "sym_deep") &&
	   !strcmp(f[1].function, "sym_inlined") && f[0].line == m->line,
	   "dwz: inlined names from the common file under the debug root");
	sym_session_free(s);

	/* Both compressed: the link to the common file read at once. */
	snprintf(cmd, sizeof(cmd), "%s/p1z", dir);
	rc = sh("cd %s && objcopy --compress-debug-sections=zlib p1 p1z && "
		"for f in root/.build-id/*/*.debug; do "
		"objcopy --compress-debug-sections=zlib $f $f.z && mv $f.z $f; done", dir);
	s = sym_session_new();
	add_maps(s, 1, o, exe, cmd);
	n = m ? sym_resolve(s, 1, m->pc, false, f, 8) : 0;
	ok(rc == 0 && n == 3 && !strcmp(f[0].function, "sym_deep") &&
	   !strcmp(f[1].function, "sym_inlined") && f[0].line == m->line,
	   "dwz, compressed: inlined names from the common file");
	sym_session_free(s);
	s = sym_session_new();
	struct sym_session *e = sym_session_new();
	add_maps(s, 1, o, exe, cmd);
	add_maps(e, 1, o, exe, cmd);
	int diff = 0, inl = 0;
	for (int i = 0; i < o->nmaps; i++) {
		if (!strcmp(o->maps[i].path, exe) && o->maps[i].pgoff)
			diff += compare_lazy(1, s, e, o->maps[i].start,
					     o->maps[i].end, 1, &inl);
	}
	ok(rc == 0 && diff == 0 && inl > 0,
	   "dwz, compressed: every code address as libdw resolves it");
	sym_session_free(s);
	sym_session_free(e);
	snprintf(cmd, sizeof(cmd), "%s/root", dir);
	unsetenv("STACKCLOCK_DEBUG_ROOT");
	free(o);
}

/*
 * The name docs/values.md gives an address of a file that cannot be read:
 * the file's name and the address's offset in it (through the mapping that
 * holds it in r).
 */
static void offset_name(const struct run_out *r, const char *path, uint64_t pc,
			char *buf, size_t len)
{
	const char *slash = strrchr(path, '/');

	snprintf(buf, len, "(no mapping of %#" PRIx64 ")", pc);
	for (int i = 0; i < r->nmaps; i++) {
		if (pc >= r->maps[i].start && pc < r->maps[i].end)
			snprintf(buf, len, "%s+0x%" PRIx64, slash ? slash + 1 : path,
				 pc - r->maps[i].start + r->maps[i].pgoff);
	}
}

/* Files that cannot be read: unknown names, no crash, one warning each. */
static void test_broken(const struct run_out *pie, const char *pie_path)
{
	char gone[PATH_MAX + 32], trunc[PATH_MAX + 32], err[PATH_MAX + 32];
	const struct mark *leaf = find_mark(pie, "sym_leaf");
	const struct mark *outer = find_fn(pie, "sym_outer");
	struct sym_session *s;
	struct sym_frame f[4];
	char want[PATH_MAX + 64];
	uint8_t bid[20] = { 1, 2, 3 };
	int rc;

	snprintf(gone, sizeof(gone), "%s/sym_gone", tmp);
	snprintf(trunc, sizeof(trunc), "%s/sym_trunc", tmp);
	snprintf(err, sizeof(err), "%s/stderr.txt", tmp);
	rc = sh("cp %s %s && rm %s && head -c 100 %s > %s", pie_path, gone, gone,
		pie_path, trunc);
	ok(rc == 0, "make a deleted and a truncated copy");
	if (!leaf || !outer)
		return;

	stderr_to(err);
	s = sym_session_new();
	add_maps(s, 1, pie, pie_path, gone);
	add_maps(s, 2, pie, pie_path, trunc);
	add_maps(s, 3, pie, NULL, NULL);
	for (int round = 0; round < 2; round++) {
		for (uint32_t p = 1; p <= 2; p++) {
			sym_resolve(s, p, leaf->pc, false, f, 4);
			sym_resolve(s, p, outer->pc + round, false, f, 4);
		}
	}
	stderr_back();

	offset_name(pie, gone, leaf->pc, want, sizeof(want));
	sym_resolve(s, 1, leaf->pc, false, f, 4);
	is_str(f[0].function, want, "deleted file: named by its offset in the file");
	ok(f[0].unnamed, "deleted file: the frame says it has no symbol");
	is_str(f[0].module, gone, "deleted file: module path kept");
	offset_name(pie, trunc, leaf->pc, want, sizeof(want));
	sym_resolve(s, 2, leaf->pc, false, f, 4);
	is_str(f[0].function, want, "truncated file: named by its offset in the file");
	is_str(f[0].module, trunc, "truncated file: module path kept");
	sym_resolve(s, 3, leaf->pc, false, f, 4);
	is_str(f[0].function, "sym_leaf", "the intact file still resolves");
	sym_session_free(s);

	/* /proc/PID/maps marks a replaced file " (deleted)": the name is the
	 * path, and the file there is tried (build-ids guard replacements). */
	s = sym_session_new();
	snprintf(want, sizeof(want), "%s (deleted)", pie_path);
	add_maps(s, 1, pie, pie_path, want);
	sym_resolve(s, 1, leaf->pc, false, f, 4);
	is_str(f[0].function, "sym_leaf", "\" (deleted)\" path: resolved");
	is_str(f[0].module, pie_path, "\" (deleted)\" path: module without the suffix");
	sym_session_free(s);

	is_u64(count_in_file(err, "cannot read symbols of"), 2,
	       "one warning per unreadable module");
	is_u64(count_in_file(err, "sym_gone: No such file"), 1,
	       "warning names the deleted file and why");

	/* A recorded build-id that the file on disk no longer has. */
	stderr_to(err);
	s = sym_session_new();
	for (uint32_t p = 1; p <= 2; p++) {
		for (int i = 0; i < pie->nmaps; i++)
			add_map(s, p, pie->maps[i].start, pie->maps[i].end,
				pie->maps[i].pgoff, SC_MOD_EXEC, bid, 20,
				pie->maps[i].path);
		sym_resolve(s, p, leaf->pc, false, f, 4);
	}
	stderr_back();
	offset_name(pie, pie->maps[0].path, leaf->pc, want, sizeof(want));
	is_str(f[0].function, want, "build-id differing from the file: not trusted");
	sym_session_free(s);
	is_u64(count_in_file(err, "build-id differs"), 1, "build-id mismatch warned once");
}

/* Damaged copies (truncated, bits flipped): whatever libelf/libdw make of
 * them, every lookup gives a name and a module, and nothing crashes. */
/* Damaged copies of src (pie_path's file or a variant of it). */
static void test_damaged(const struct run_out *pie, const char *pie_path,
			 const char *src, const char *what)
{
	char path[PATH_MAX + 32], err[PATH_MAX + 32];
	const struct mark *leaf = find_mark(pie, "sym_leaf");
	FILE *f = fopen(src, "rb");
	unsigned char *img, *cp;
	long size;
	bool all_named = true;

	if (!ok(f && leaf, "%s: read the PIE program", what))
		return;
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	img = malloc(size);
	cp = malloc(size);
	if (fread(img, 1, size, f) != (size_t)size)
		size = 0;
	fclose(f);
	snprintf(path, sizeof(path), "%s/sym_damaged", tmp);
	snprintf(err, sizeof(err), "%s/stderr.txt", tmp);
	srand(7);
	stderr_to(err);
	for (int it = 0; it < 60 && size > 0; it++) {
		long len = size;
		struct sym_session *s;
		struct sym_frame fr[SYM_MAX_FRAMES];

		memcpy(cp, img, size);
		if (it % 2)
			len = (long)((uint64_t)size * it / 60);
		else
			for (int k = 0; k < 1 + it; k++)
				cp[rand() % size] ^= 1 << (rand() % 8);
		f = fopen(path, "wb");
		fwrite(cp, 1, len, f);
		fclose(f);
		s = sym_session_new();
		add_maps(s, 1, pie, pie_path, path);
		for (uint64_t a = leaf->pc & ~0xfffULL; a < (leaf->pc | 0xfff); a += 5) {
			int n = sym_resolve(s, 1, a, it % 3 == 0, fr, SYM_MAX_FRAMES);
			for (int i = 0; i < n; i++)
				all_named &= fr[i].function && fr[i].module;
			all_named &= n >= 1;
		}
		sym_session_free(s);
	}
	stderr_back();
	ok(size > 0 && all_named, "%s: 60 damaged copies: every address named, no crash",
	   what);
	if (getenv("STACKCLOCK_DEBUG"))
		ok(count_in_file(err, "does not inflate") > 0,
		   "%s: among them streams that do not inflate (%d)", what,
		   count_in_file(err, "does not inflate"));
	free(img);
	free(cp);
}

/* An address from `nm` or `objdump -h` output; 0 if not found. */
static uint64_t tool_value(const char *fmt, const char *file, const char *arg)
{
	char cmd[2 * PATH_MAX], line[512];
	unsigned long long v = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), fmt, file, arg);
	p = popen(cmd, "r");
	if (p && fgets(line, sizeof(line), p))
		v = strtoull(line, NULL, 16);
	if (p)
		pclose(p);
	return v;
}
#define NM_ADDR "nm %s | awk '$3 == \"%s\" { print $1; exit }'"
#define SEC_ADDR "objdump -h %s | awk '$2 == \"%s\" { print $4; exit }'"
#define SEC_SIZE "objdump -h %s | awk '$2 == \"%s\" { print $3; exit }'"

/* A program of many CUs with inlined helpers; main's CU first. */
static int write_many(const char *dir, int ncu, int nfn)
{
	char path[PATH_MAX + 32];
	FILE *f;

	snprintf(path, sizeof(path), "%s/main.c", dir);
	if (!(f = fopen(path, "w")))
		return -1;
	fprintf(f, "#include <stdio.h>\n#include <stdlib.h>\n");
	for (int i = 0; i < ncu; i++)
		fprintf(f, "int many_sum%d(int x);\n", i);
	fprintf(f, "int main(int argc, char **argv)\n{\n"
		   "\tint x = argc > 1 ? atoi(argv[1]) : 3, s = 0;\n");
	for (int i = 0; i < ncu; i++)
		fprintf(f, "\ts += many_sum%d(x);\n", i);
	fprintf(f, "\tprintf(\"%%d\\n\", s);\n\treturn 0;\n}\n");
	fclose(f);
	for (int i = 0; i < ncu; i++) {
		snprintf(path, sizeof(path), "%s/c%d.c", dir, i);
		if (!(f = fopen(path, "w")))
			return -1;
		fprintf(f, "#include <string.h>\nstruct rec%d { int a, b; char name[16]; };\n", i);
		/* Bulk for .debug_info (the names are shared in .debug_str). */
		fprintf(f, "struct big%d { int m0", i);
		for (int k = 1; k < 2000; k++)
			fprintf(f, ", m%d", k);
		fprintf(f, "; };\nint big%d(struct big%d *b) { return b->m0 + b->m1999; }\n", i, i);
		for (int j = 0; j < nfn; j++) {
			fprintf(f, "static inline __attribute__((always_inline)) int\n"
				   "h%d_%d(struct rec%d *r, int x)\n{\n"
				   "\tr->a += x * %d;\n\treturn r->a ^ (int)strlen(r->name);\n}\n",
				i, j, i, j + 1);
			fprintf(f, "__attribute__((noinline)) int f%d_%d(int x)\n{\n"
				   "\tstruct rec%d r = { x, %d, \"n%d\" };\n"
				   "\treturn h%d_%d(&r, x) + r.b;\n}\n", i, j, i, j, j, i, j);
		}
		fprintf(f, "int many_sum%d(int x)\n{\n\tint s = 0;\n", i);
		for (int j = 0; j < nfn; j++)
			fprintf(f, "\ts += f%d_%d(x + s);\n", i, j);
		fprintf(f, "\treturn s;\n}\n");
		fclose(f);
	}
	return 0;
}

/*
 * Debian's debug files compress their DWARF.  It is read lazily: only the
 * CUs looked up are inflated, found through .debug_aranges (without
 * aranges, or with references across units, everything), with the results
 * of libdw inflating it all.
 */
static void test_compressed(const struct run_out *pie, const char *pie_path,
			    const struct run_out *cr, const char *cl_path,
			    const char *lib, const char *dl)
{
	static const struct {
		const char *name, *flags;
	} variants[] = {
		{ "DWARF 5", "-O2 -g" },
		{ "DWARF 4", "-O2 -gdwarf-4" },
		{ "LTO", "-O2 -g -flto=1" },    /* refs across units */
	};
	char zpie[PATH_MAX + 16], zcl[PATH_MAX + 16], dir[PATH_MAX + 16];
	char exe[PATH_MAX + 32];
	struct sym_session *s, *e;
	unsigned long long before;
	uint64_t lo = 0, hi = 0;
	int rc, inl = 0;

	snprintf(zpie, sizeof(zpie), "%s/zpie", tmp);
	snprintf(zcl, sizeof(zcl), "%s/zclang", tmp);
	rc = sh("objcopy --compress-debug-sections=zlib %s %s && "
		"objcopy --compress-debug-sections=zlib %s %s && "
		"readelf -SW %s | grep -q ' .debug_info .* C '",
		pie_path, zpie, cl_path, zcl, zpie);
	if (!ok(rc == 0, "compress a program's DWARF"))
		return;

	/* The marks, read lazily. */
	before = sym_stat_inflated;
	s = sym_session_new();
	add_maps(s, 1, pie, pie_path, zpie);
	add_maps(s, 6, cr, cl_path, zcl);
	check_c_prog(s, 1, pie, zpie, lib, dl, true, "compressed DWARF");
	check_c_prog(s, 6, cr, zcl, lib, dl, true, "compressed DWARF without aranges");
	ok(sym_stat_inflated > before, "compressed DWARF inflated by lazydw");
	sym_session_free(s);
	/* Through lazydw's reading of damaged streams (its debug lines say
	 * which did not inflate). */
	setenv("STACKCLOCK_DEBUG", "1", 1);
	test_damaged(pie, pie_path, zpie, "compressed DWARF");
	unsetenv("STACKCLOCK_DEBUG");

	/* Every address of both programs' code: the same as libdw's. */
	for (int p = 0; p < 2; p++) {
		const struct run_out *o = p ? cr : pie;
		s = sym_session_new();
		e = sym_session_new();
		add_maps(s, 1, o, p ? cl_path : pie_path, p ? zcl : zpie);
		add_maps(e, 1, o, p ? cl_path : pie_path, p ? zcl : zpie);
		for (int i = 0; i < o->nmaps; i++) {
			if (!strcmp(o->maps[i].path, p ? cl_path : pie_path) &&
			    o->maps[i].pgoff) {   /* the code segment */
				lo = o->maps[i].start;
				hi = o->maps[i].end;
				break;
			}
		}
		before = sym_stat_inflated;
		rc = compare_lazy(1, s, e, lo, hi, 1, &inl);
		is_u64(rc, 0, "%s: every code address as libdw resolves it (%" PRIu64
		       " addresses)", p ? "clang" : "gcc", hi - lo);
		sym_session_free(s);
		sym_session_free(e);
	}

	/* Many CUs: one looked up inflates little; DWARF 4; LTO. */
	snprintf(dir, sizeof(dir), "%s/many", tmp);
	if (!ok(mkdir(dir, 0755) == 0 && write_many(dir, 4, 20) == 0,
		"write a program of many CUs"))
		return;
	/* The three builds side by side: compiling is most of this test. */
	rc = sh("cd %s && for v in 0 1 2; do mkdir v$v; done && "
		"(gcc %s main.c c?.c -o v0/many.raw & gcc %s main.c c?.c -o v1/many.raw & "
		"gcc %s main.c c?.c -o v2/many.raw & wait) && "
		"for v in 0 1 2; do objcopy --compress-debug-sections=zlib v$v/many.raw v$v/many; done",
		dir, variants[0].flags, variants[1].flags, variants[2].flags);
	for (size_t v = 0; v < sizeof(variants) / sizeof(variants[0]); v++) {
		const uint64_t base = 0x560000000000ULL;
		uint64_t text, size, mainpc, f5;
		unsigned long long one, all;
		int diff;

		snprintf(exe, sizeof(exe), "%s/v%zu/many", dir, v);
		if (!ok(rc == 0 && access(exe, R_OK) == 0,
			"%s: build the program of many CUs", variants[v].name))
			continue;
		text = tool_value(SEC_ADDR, exe, ".text");
		size = tool_value(SEC_SIZE, exe, ".text");
		mainpc = tool_value(NM_ADDR, exe, "main");
		f5 = tool_value(NM_ADDR, exe, "f3_19");
		s = sym_session_new();
		e = sym_session_new();
		add_map(s, 1, base, 0, 0, SC_MOD_BASE, NULL, 0, exe);
		add_map(e, 1, base, 0, 0, SC_MOD_BASE, NULL, 0, exe);
		struct sym_frame f[SYM_MAX_FRAMES];
		before = sym_stat_inflated;
		resolve_as(s, true, 1, base + mainpc, false, f);
		one = sym_stat_inflated - before;
		is_str(f[0].function, "main", "%s: main named", variants[v].name);
		is_str(base_name(f[0].file), "main.c", "%s: main's file", variants[v].name);
		inl = 0;
		diff = compare_lazy(1, s, e, base + text, base + text + size, 1, &inl);
		all = sym_stat_inflated - before;
		is_u64(diff, 0, "%s: every code address as libdw resolves it",
		       variants[v].name);
		ok(inl > 100, "%s: inlined frames among them (%d)", variants[v].name, inl);
		tap_diag("%s: %llu KB inflated for main, %llu KB for all",
			 variants[v].name, one >> 10, all >> 10);
		if (v == 0)
			ok(one * 3 < all, "%s: main's CU alone inflates a third at most",
			   variants[v].name);
		sym_session_free(s);
		sym_session_free(e);

		/* The last CU first, in a new session. */
		s = sym_session_new();
		add_map(s, 1, base, 0, 0, SC_MOD_BASE, NULL, 0, exe);
		int n = resolve_as(s, true, 1, base + f5 + 8, false, f);
		ok(f5 && n >= 1 && (!strcmp(f[n - 1].function, "f3_19") ||
				    (n > 1 && !strcmp(f[0].function, "h3_19"))),
		   "%s: the last CU's function", variants[v].name);
		sym_session_free(s);
	}
}

/* The C library's own debug file (libc6-dbg), when installed. */
static void test_compressed_libc(void)
{
	char line[PATH_MAX + 128], path[PATH_MAX] = "", dbg[PATH_MAX + 64];
	struct sym_session *s, *e;
	uint64_t lo = 0, hi = 0;
	unsigned long long before;
	uint8_t bid[20];
	unsigned bid_len = 0;
	FILE *maps = fopen("/proc/self/maps", "r");
	int inl = 0, bad;

	s = sym_session_new();
	e = sym_session_new();
	while (maps && fgets(line, sizeof(line), maps)) {
		unsigned long long a, b, off;
		char perms[8], p[PATH_MAX];
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &a, &b, perms,
			   &off, p) != 5 || !strstr(p, "/libc.so"))
			continue;
		add_map(s, 1, a, b, off, SC_MOD_EXEC, NULL, 0, p);
		add_map(e, 1, a, b, off, SC_MOD_EXEC, NULL, 0, p);
		if (perms[2] == 'x') {
			lo = a;
			hi = b;
			snprintf(path, sizeof(path), "%s", p);
		}
	}
	if (maps)
		fclose(maps);
	if (*path)
		build_id_of(path, bid, &bid_len);
	snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%02x/", bid[0]);
	for (unsigned i = 1; i < bid_len; i++)
		snprintf(dbg + strlen(dbg), 3, "%02x", bid[i]);
	strcat(dbg, ".debug");
	if (!bid_len || access(dbg, R_OK) != 0) {
		printf("ok %d - libc's compressed DWARF # SKIP no debug file for %s\n",
		       ++tap_n, *path ? path : "libc");
		sym_session_free(s);
		sym_session_free(e);
		return;
	}
	before = sym_stat_inflated;
	bad = compare_lazy(1, s, e, lo, hi, (hi - lo) / 1500 | 1, &inl);
	is_u64(bad, 0, "libc: 1500 addresses as libdw resolves them");
	ok(inl > 0, "libc: inlined frames among them (%d)", inl);
	ok(sym_stat_inflated > before, "libc: its debug file read lazily");
	sym_session_free(s);
	sym_session_free(e);
}

/* A versioned definition: .symtab says "sym_versioned@@SYMV_1". */
static void test_versioned(void)
{
	char lib[PATH_MAX + 32], line[PATH_MAX + 64];
	struct sym_session *s;
	struct sym_frame f[4];
	uint64_t addr = 0, base = 0x7f0000000000ULL;
	FILE *nm;
	int rc;

	snprintf(lib, sizeof(lib), "%s/libsym_ver.so", tmp);
	rc = sh("cd %s && echo 'SYMV_1 { global: sym_versioned; local: *; };' > ver.map && "
		"gcc -O2 -g -shared -fPIC %s/sym_ver.c -Wl,--version-script=ver.map -o %s",
		tmp, progs, lib);
	snprintf(line, sizeof(line), "nm %s", lib);
	nm = popen(line, "r");
	while (nm && fgets(line, sizeof(line), nm)) {
		if (strstr(line, " sym_versioned_impl"))
			addr = strtoull(line, NULL, 16);
	}
	if (nm)
		pclose(nm);
	if (!ok(rc == 0 && addr, "build a library with a versioned symbol"))
		return;
	s = sym_session_new();
	add_map(s, 1, base, 0, 0, SC_MOD_BASE, NULL, 0, lib);
	sym_resolve(s, 1, base + addr + 1, false, f, 4);
	is_str(f[0].function, "sym_versioned", "symbol version not part of the name");
	sym_session_free(s);
}

/* ---- the vdso ---------------------------------------------------------- */

struct vdso_note {
	uint8_t bid[SYM_BUILD_ID_MAX];
	unsigned len;
};

/* The vdso's build-id from its PT_NOTE, as the dynamic linker sees it. */
static int vdso_note_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct vdso_note *out = data;

	if (!info->dlpi_name || strcmp(info->dlpi_name, "linux-vdso.so.1"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		const char *end = p + ph->p_memsz;

		if (ph->p_type != PT_NOTE)
			continue;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const void *)p;
			const char *desc = p + sizeof(*nh) + ((nh->n_namesz + 3) & ~3u);

			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(p + sizeof(*nh), "GNU", 4) &&
			    nh->n_descsz <= SYM_BUILD_ID_MAX) {
				memcpy(out->bid, desc, nh->n_descsz);
				out->len = nh->n_descsz;
				return 1;
			}
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	return 1;
}

/*
 * "[vdso]" mappings are no file: named from this process's own vdso (the
 * same kernel image every process maps) when the recorded build-id matches
 * or none was recorded; left as addresses when it differs (another kernel).
 * The addresses of __vdso_clock_gettime and __vdso_gettimeofday come from
 * the dynamic linker, the build-id from the image's note.
 */
static void test_vdso(void)
{
	void *h = dlopen("linux-vdso.so.1", RTLD_LAZY | RTLD_NOLOAD);
	uint64_t cg = (uint64_t)(uintptr_t)(h ? dlsym(h, "__vdso_clock_gettime") : NULL);
	uint64_t gt = (uint64_t)(uintptr_t)(h ? dlsym(h, "__vdso_gettimeofday") : NULL);
	uint64_t start = 0, end = 0;
	struct vdso_note note = { .len = 0 };
	struct sym_frame f[8];
	char line[512], hex[32];
	FILE *maps = fopen("/proc/self/maps", "r");
	int n;

	while (maps && fgets(line, sizeof(line), maps)) {
		unsigned long long a, b;
		if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &a, &b) == 2) {
			start = a;
			end = b;
		}
	}
	if (maps)
		fclose(maps);
	dl_iterate_phdr(vdso_note_cb, &note);
	if (!ok(start && cg >= start && cg < end && gt >= start && gt < end,
		"this process has a vdso with clock_gettime and gettimeofday"))
		return;

	for (int pass = 0; pass < 2; pass++) {
		struct sym_session *s = sym_session_new();
		const char *how = pass ? "with its build-id" : "without a build-id";

		if (pass && !note.len) {
			ok(1, "# SKIP the vdso has no build-id");
			sym_session_free(s);
			continue;
		}
		add_map(s, 1, start, end, 0, SC_MOD_EXEC, note.bid, pass ? note.len : 0,
			"[vdso]");
		n = sym_resolve(s, 1, cg + 4, false, f, 8);
		ok(n >= 1 && strstr(f[0].function, "clock_gettime") && !strcmp(f[0].module, "[vdso]"),
		   "vdso %s: clock_gettime+4 named (%s in %s)", how, f[0].function, f[0].module);
		n = sym_resolve(s, 1, gt + 1, true, f, 8);
		ok(n >= 1 && strstr(f[0].function, "gettimeofday"),
		   "vdso %s: a return address into gettimeofday named (%s)", how, f[0].function);
		sym_session_free(s);
	}

	/* Recorded under another kernel: an address, never a wrong name. */
	{
		struct sym_session *s = sym_session_new();
		uint8_t other[SYM_BUILD_ID_MAX] = { 0xde, 0xad };

		add_map(s, 1, start, end, 0, SC_MOD_EXEC, other, 20, "[vdso]");
		sym_resolve(s, 1, cg + 4, false, f, 8);
		snprintf(hex, sizeof(hex), "[vdso]+0x%" PRIx64, cg + 4 - start);
		is_str(f[0].function, hex, "vdso of another build-id: its offset, never a wrong name");
		is_str(f[0].module, "[vdso]", "vdso of another build-id: module kept");
		sym_session_free(s);
	}
	if (h)
		dlclose(h);
}

static void test_unmapped(const struct run_out *pie)
{
	struct sym_session *s = sym_session_new();
	struct sym_frame f[4], g[4];
	int n;

	add_map(s, 1, 0x7fff00000000ULL, 0x7fff00002000ULL, 0, SC_MOD_EXEC, NULL, 0, "[vdso]");
	add_map(s, 1, 0x7ffe00000000ULL, 0x7ffe00001000ULL, 0, SC_MOD_EXEC, NULL, 0, "//anon");
	add_map(s, 1, 0x7ffd00000000ULL, 0x7ffd00001000ULL, 0, SC_MOD_EXEC, NULL, 0, "");
	n = sym_resolve(s, 1, 0x7fff00000123ULL, false, f, 4);
	is_u64(n, 1, "vdso: one frame");
	is_str(f[0].function, "[vdso]+0x123", "vdso that cannot be read: offset as name");
	is_str(f[0].module, "[vdso]", "vdso: module as given");
	sym_resolve(s, 1, 0x7ffe00000010ULL, false, f, 4);
	is_str(f[0].module, "//anon", "anonymous: module as given");
	sym_resolve(s, 1, 0x7ffd00000010ULL, false, f, 4);
	is_str(f[0].module, "[unknown]", "nameless mapping: [unknown]");
	sym_resolve(s, 1, 0x1234, false, f, 4);
	is_str(f[0].function, "0x1234", "unmapped: address as name");
	is_str(f[0].module, "[unknown]", "unmapped: [unknown]");
	sym_resolve(s, 99, 0x7fff00000123ULL, false, f, 4);
	is_str(f[0].module, "[unknown]", "unknown process image: [unknown]");
	is_u64(sym_resolve(s, 1, 0x1234, false, f, 0), 0, "max 0 gives nothing");
	sym_resolve(s, 1, 0x7fff00000123ULL, false, f, 4);
	sym_resolve(s, 1, 0x7fff00000123ULL, false, g, 4);
	ok(f[0].function == g[0].function && f[0].module == g[0].module,
	   "repeated lookup: identical pointers");
	sym_resolve(s, 1, 0x7fff00000124ULL, false, g, 4);
	ok(f[0].function != g[0].function && f[0].module == g[0].module,
	   "another address: its own name, the same module");
	sym_session_free(s);
	sym_session_free(NULL);
	(void)pie;
}

static void copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ssize_t n;

	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			break;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
}

/* ~10k distinct addresses of this test's own binary (it has DWARF). */
static void test_speed(void)
{
	char line[PATH_MAX + 128], self[PATH_MAX], copy[PATH_MAX + 16];
	struct sym_session *s = sym_session_new();
	uint64_t lo = 0, hi = 0, t0, t1, t2;
	struct sym_frame f[SYM_MAX_FRAMES];
	FILE *maps = fopen("/proc/self/maps", "r");
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int named = 0, lined = 0, total = 0;

	self[len > 0 ? len : 0] = '\0';
	/* Read our own code from a private copy: a concurrent "make" may be
	 * relinking the file at our path. */
	snprintf(copy, sizeof(copy), "%s/self_copy", tmp);
	copy_file("/proc/self/exe", copy);
	while (maps && fgets(line, sizeof(line), maps)) {
		unsigned long long a, b, off;
		char perms[8], path[PATH_MAX];
		bool own;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &a, &b, perms,
			   &off, path) != 5 || perms[2] != 'x')
			continue;
		own = !strncmp(line + strcspn(line, "/"), self, strlen(self));
		add_map(s, 1, a, b, off, SC_MOD_EXEC, NULL, 0, own ? copy : path);
		if (own) {
			lo = a;
			hi = b;
		}
	}
	if (maps)
		fclose(maps);
	if (!ok(hi > lo, "found own code mapping"))
		return;
	uint64_t step = (hi - lo) / 10000 ? (hi - lo) / 10000 : 1;
	t0 = now_ns();
	for (uint64_t a = lo; a < hi && total < 10000; a += step, total++) {
		int n = sym_resolve(s, 1, a, false, f, SYM_MAX_FRAMES);
		named += f[0].function[0] != '0';
		lined += f[n - 1].line != 0;
	}
	t1 = now_ns();
	for (uint64_t a = lo, i = 0; a < hi && i < 10000; a += step, i++)
		sym_resolve(s, 1, a, false, f, SYM_MAX_FRAMES);
	t2 = now_ns();
	tap_diag("%d distinct addresses: %.1f ms first, %.1f ms cached; "
		 "%d named, %d with lines", total, (t1 - t0) / 1e6,
		 (t2 - t1) / 1e6, named, lined);
	ok(named > total * 9 / 10, "most addresses of own code named (%d/%d)", named, total);
	ok(lined > total / 2, "most addresses of own code have lines (%d/%d)", lined, total);
	sym_session_free(s);
}

static void find_progs(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	/* build/tests/test_symbols -> the checkout's tests/progs */
	if (n > 0) {
		self[n] = '\0';
		char *d = dirname(dirname(dirname(self)));
		snprintf(progs, sizeof(progs), "%s/tests/progs", d);
	}
	if (n <= 0 || access(progs, R_OK) != 0)
		snprintf(progs, sizeof(progs), "%s", "tests/progs");
	if (realpath(progs, self))
		snprintf(progs, sizeof(progs), "%s", self);
}

int main(void)
{
	char exe[PATH_MAX + 32], nopie[PATH_MAX + 32], lib[PATH_MAX + 32];
	char dl[PATH_MAX + 32], cxx[PATH_MAX + 32], cl[PATH_MAX + 32];
	char cmd[3 * PATH_MAX];
	char templ[] = "/tmp/sc-sym.XXXXXX";
	struct run_out *pie = calloc(1, sizeof(*pie));
	struct run_out *np = calloc(1, sizeof(*np));
	struct run_out *cx = calloc(1, sizeof(*cx));
	struct run_out *cr = calloc(1, sizeof(*cr));
	struct sym_session *s;
	struct sym_frame f[8], g[8];
	unsigned long opened;
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	unsetenv("STACKCLOCK_DEBUG_ROOT");
	test_shorten();
	test_demangle();

	find_progs();
	if (!mkdtemp(templ) || !realpath(templ, tmp)) {
		ok(0, "make a temporary directory: %s", strerror(errno));
		return tap_done();
	}
	test_kernel();
	test_vdso();

	snprintf(lib, sizeof(lib), "%s/libsym_lib.so", tmp);
	snprintf(dl, sizeof(dl), "%s/sym_dl.so", tmp);
	snprintf(exe, sizeof(exe), "%s/sym_pie", tmp);
	snprintf(nopie, sizeof(nopie), "%s/sym_nopie", tmp);
	snprintf(cxx, sizeof(cxx), "%s/sym_cxx", tmp);
	snprintf(cl, sizeof(cl), "%s/sym_clang", tmp);
	rc = sh("cd %s && gcc -O2 -g -shared -fPIC -I%s %s/sym_lib.c -o libsym_lib.so && "
		"gcc -O2 -g -shared -fPIC -DSYM_DL -I%s %s/sym_lib.c -o sym_dl.so && "
		"gcc -O2 -g -fPIE -pie -I%s %s/sym_prog.c -o sym_pie -L. -lsym_lib -Wl,-rpath=%s -ldl && "
		"gcc -O2 -g -fno-pie -no-pie -I%s %s/sym_prog.c -o sym_nopie -L. -lsym_lib -Wl,-rpath=%s -ldl && "
		"g++ -O0 -g -I%s %s/sym_cxx.cc -o sym_cxx && "
		"clang -O2 -g -fPIE -pie -I%s %s/sym_prog.c -o sym_clang -L. -lsym_lib -Wl,-rpath=%s -ldl",
		tmp, progs, progs, progs, progs, progs, progs, tmp, progs, progs,
		tmp, progs, progs, progs, progs, tmp);
	if (!ok(rc == 0, "build the test programs"))
		goto out;
	snprintf(cmd, sizeof(cmd), "%s %s", exe, dl);
	ok(run_prog(cmd, pie) == 0 && pie->nmarks == 5, "run PIE program");
	snprintf(cmd, sizeof(cmd), "%s %s", nopie, dl);
	ok(run_prog(cmd, np) == 0 && np->nmarks == 5, "run non-PIE program");
	ok(run_prog(cxx, cx) == 0 && cx->nmarks == 4, "run C++ program");
	snprintf(cmd, sizeof(cmd), "%s %s", cl, dl);
	ok(run_prog(cmd, cr) == 0 && cr->nmarks == 5, "run clang-built program");

	opened = sym_stat_files_opened;
	s = sym_session_new();
	/* 1: PIE from its maps; 2: the same run from dladdr bases only;
	 * 3: non-PIE from its maps; 4: non-PIE from bases; 5: C++;
	 * 6: clang (DWARF 5 without .debug_aranges). */
	add_maps(s, 1, pie, NULL, NULL);
	add_map(s, 2, find_base(pie, "lib"), 0, 0, SC_MOD_BASE, NULL, 0, lib);
	add_map(s, 2, find_base(pie, "exe"), 0, 0, SC_MOD_BASE, NULL, 0, exe);
	add_map(s, 2, find_base(pie, "dl"), 0, 0, SC_MOD_BASE, NULL, 0, dl);
	add_maps(s, 3, np, NULL, NULL);
	add_map(s, 4, find_base(np, "exe"), 0, 0, SC_MOD_BASE, NULL, 0, nopie);
	add_map(s, 4, find_base(np, "dl"), 0, 0, SC_MOD_BASE, NULL, 0, dl);
	add_map(s, 4, find_base(np, "lib"), 0, 0, SC_MOD_BASE, NULL, 0, lib);
	add_maps(s, 5, cx, NULL, NULL);
	add_maps(s, 6, cr, NULL, NULL);

	check_c_prog(s, 1, pie, exe, lib, dl, true, "PIE maps");
	check_c_prog(s, 2, pie, exe, lib, dl, true, "PIE bases");
	check_c_prog(s, 3, np, nopie, lib, dl, true, "non-PIE maps");
	check_c_prog(s, 4, np, nopie, lib, dl, true, "non-PIE bases");
	for (int i = 0; i < cx->nmarks; i++)
		check_mark(s, 5, cx, cx->marks[i].name, cxx, "sym_cxx.cc", "C++");
	check_c_prog(s, 6, cr, cl, lib, dl, true, "clang");
	is_u64(sym_stat_files_opened - opened, 6,
	       "each ELF file opened once across process images");

	/* PLT stubs: named like objdump's "<dlopen@plt>". */
	snprintf(cmd, sizeof(cmd), "objdump -d -j .plt %s", nopie);
	FILE *od = popen(cmd, "r");
	char odl[512], stub[256] = "";
	uint64_t stub_addr = 0;
	while (od && fgets(odl, sizeof(odl), od)) {
		char *lt = strchr(odl, '<'), *gt = lt ? strstr(lt, "@plt>:") : NULL;
		if (gt && !stub_addr && gt - lt < 200) {
			stub_addr = strtoull(odl, NULL, 16);
			snprintf(stub, sizeof(stub), "%.*s@plt", (int)(gt - lt - 1), lt + 1);
		}
	}
	if (od)
		pclose(od);
	if (ok(stub_addr != 0, "objdump lists a PLT stub (%s)", stub)) {
		sym_resolve(s, 3, stub_addr + 6, false, f, 8);
		is_str(f[0].function, stub, "PLT stub named f@plt");
	}

	/* Interned: same function, same pointer, across images and lines. */
	sym_resolve(s, 1, find_mark(pie, "sym_leaf")->pc, false, f, 8);
	sym_resolve(s, 2, find_fn(pie, "sym_leaf")->pc, false, g, 8);
	ok(f[0].function == g[0].function && f[0].module == g[0].module &&
	   f[0].file == g[0].file, "strings interned (function, module, file)");
	sym_resolve(s, 1, find_mark(pie, "symlib_work")->pc, false, f, 8);
	sym_resolve(s, 3, find_mark(np, "symlib_work")->pc, false, g, 8);
	ok(f[0].function == g[0].function, "library function: one pointer in both programs");

	/* A mapping that arrives after an address was looked up. */
	const struct mark *leaf = find_mark(pie, "sym_leaf");
	sym_resolve(s, 9, leaf->pc, false, f, 8);
	is_str(f[0].module, "[unknown]", "before its mapping: unknown");
	add_maps(s, 9, pie, NULL, NULL);
	sym_resolve(s, 9, leaf->pc, false, f, 8);
	is_str(f[0].function, "sym_leaf", "after its mapping: resolved");
	sym_resolve(s, 1, leaf->pc, false, g, 8);
	is_str(g[0].function, "sym_leaf", "other images unaffected");
	sym_session_free(s);

	test_unmapped(pie);
	test_broken(pie, exe);
	test_damaged(pie, exe, exe, "plain DWARF");
	test_versioned();
	test_dwz();
	test_compressed(pie, exe, cr, cl, lib, dl);
	test_compressed_libc();
	test_debug_files();
	test_speed();
out:
	sh("rm -rf %s", tmp);
	free(pie);
	free(np);
	free(cx);
	free(cr);
	return tap_done();
}
