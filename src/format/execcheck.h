/*
 * execcheck — can the runtime be preloaded into a program about to be
 * exec'd?  Shared by the recorder (the program it starts) and the injected
 * runtime (the programs a recorded process execs, runtime/exec.c), so that
 * both give the same reason for the same file.
 *
 * The answer comes from the file's first bytes (its ELF header and program
 * headers, which sit at its start in every linker's output) and its mode
 * and owner: the loader never runs for a program without PT_INTERP
 * (statically linked); a 32-bit loader cannot load a 64-bit library (it
 * prints "wrong ELF class" into the program's stderr); a set-user-ID or
 * set-group-ID file that changes the credentials runs with AT_SECURE, and
 * the loader then ignores LD_PRELOAD (and the kernel ends the perf events
 * opened on the process, perf_event_exit_task at a credential-changing
 * exec).
 *
 * Pure functions over the caller's buffer, no libc: the runtime calls them
 * in a vfork child.
 */
#ifndef SC_FORMAT_EXECCHECK_H
#define SC_FORMAT_EXECCHECK_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* Why a program cannot be recorded (0: it can).  The values are stored in
 * the data file (struct sc_rec_unrecorded) and the runtime's image. */
enum sc_exec_why {
	SC_EXEC_OK = 0,
	SC_EXEC_STATIC = 1,       /* no program interpreter: nothing preloads */
	SC_EXEC_ELF32 = 2,        /* a 32-bit program: a 64-bit runtime cannot load */
	SC_EXEC_SETID = 3,        /* set-user-ID/set-group-ID: AT_SECURE */
	SC_EXEC_NOLOAD = 4,       /* another machine's code, or the runtime unreadable */
	SC_EXEC_NWHY
};

/* The reason in words, for the messages and the report. */
static inline const char *sc_exec_why_text(uint32_t why)
{
	switch (why) {
	case SC_EXEC_STATIC: return "statically linked";
	case SC_EXEC_ELF32: return "a 32-bit program";
	case SC_EXEC_SETID: return "set-user-ID/set-group-ID";
	case SC_EXEC_NOLOAD: return "the runtime cannot be loaded into it";
	default: return "unknown reason";
	}
}

/* The same, at more length: what the user can do. */
static inline const char *sc_exec_why_hint(uint32_t why)
{
	switch (why) {
	case SC_EXEC_STATIC:
		return "the runtime cannot be preloaded into it (link it dynamically, or record it by sampling)";
	case SC_EXEC_ELF32:
		return "the 64-bit runtime cannot be loaded into it (build it for x86-64)";
	case SC_EXEC_SETID:
		return "the loader ignores LD_PRELOAD and the kernel drops perf events when an exec changes the "
		       "credentials (run it as its owner, or without the set-ID bit)";
	case SC_EXEC_NOLOAD:
		return "not x86-64 code, or the runtime is not readable from there";
	default:
		return "";
	}
}

/* Does exec'ing a file of this mode and owner change the credentials of
 * a process with these ids (the kernel's secureexec test, without file
 * capabilities)? */
static inline int sc_exec_secure(uint32_t mode, uint32_t fuid, uint32_t fgid, uint32_t ruid, uint32_t euid,
				 uint32_t rgid, uint32_t egid)
{
	uint32_t nuid = (mode & S_ISUID) ? fuid : euid;
	uint32_t ngid = (mode & S_ISGID) && (mode & S_IXGRP) ? fgid : egid;

	return nuid != ruid || ngid != rgid;
}

/*
 * The reason from the first n bytes of the file: SC_EXEC_OK for what is
 * not an ELF file (a script: its interpreter is what runs, the caller
 * checks it) or an ELF file this cannot judge (program headers beyond
 * the bytes given).
 */
static inline enum sc_exec_why sc_exec_check_elf(const uint8_t *b, size_t n)
{
	const Elf64_Ehdr *e = (const Elf64_Ehdr *)b;
	int interp = 0;

	if (n < EI_NIDENT || b[0] != ELFMAG0 || b[1] != ELFMAG1 || b[2] != ELFMAG2 || b[3] != ELFMAG3)
		return SC_EXEC_OK;
	if (b[EI_CLASS] == ELFCLASS32)
		return SC_EXEC_ELF32;
	if (b[EI_CLASS] != ELFCLASS64 || n < sizeof(*e))
		return SC_EXEC_OK;
	if (e->e_machine != EM_X86_64)
		return SC_EXEC_NOLOAD;
	if (e->e_phentsize != sizeof(Elf64_Phdr) || e->e_phoff > n ||
	    (uint64_t)e->e_phnum * sizeof(Elf64_Phdr) > n - e->e_phoff)
		return SC_EXEC_OK;
	for (unsigned i = 0; i < e->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(b + e->e_phoff + i * sizeof(Elf64_Phdr));

		if (ph->p_type == PT_INTERP)
			interp = 1;
	}
	return interp ? SC_EXEC_OK : SC_EXEC_STATIC;
}

#endif
