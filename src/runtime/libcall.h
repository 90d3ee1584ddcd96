/*
 * libcall — calls from instrumented objects into other objects as rows of
 * their own (SPEC section 11), by hooking the callers' global offset
 * table slots (libcall.c says which and how).
 *
 * Environment (see shm.h's list): STACKCLOCK_LIBCALLS is "program" (the
 * recorder's default: the calls the objects with probes make), "all"
 * (also the calls between libraries) or "none"; absent means none.
 *
 * Both functions run under patch.c's lock: sc_libcall_start() once from
 * sc_patch_start(), sc_libcall_loaded() after patching at start and after
 * every dlopen() (slots hooked before are recognised and left alone).
 */
#ifndef SC_RUNTIME_LIBCALL_H
#define SC_RUNTIME_LIBCALL_H

#define SC_LIBCALL_ENV "STACKCLOCK_LIBCALLS"

enum { SC_LIBCALL_NONE, SC_LIBCALL_PROGRAM, SC_LIBCALL_ALL };

extern int sc_libcall_mode;

void sc_libcall_start(char **envp);
void sc_libcall_loaded(void);
/* A forked child's new image: the names of the rows hooked so far. */
void sc_libcall_republish(void);

#endif
