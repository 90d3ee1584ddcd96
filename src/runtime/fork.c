/*
 * fork — a process made by fork() is followed in the child by a new image
 * file whose forking thread starts from the parent's stack as it was at
 * the fork call (a snapshot taken before the fork, so the parent running
 * on cannot change it; inherited frames are not new calls).  A fork made
 * without libc's handlers (syscall(SYS_fork), clone() without CLONE_VM)
 * is detected at the child's first probe: a page mapped with
 * MADV_WIPEONFORK reads zero there.
 *
 * vfork — the child runs on its parent's memory, this thread's state
 * included, until it calls exec or _exit: a probe there would push the
 * child's calls onto the parent's stack of calls, left open by the exec
 * (one repair of cause "other" per child in the parent: dash, Debian's
 * /bin/sh, runs every external command so).  The runtime's vfork() turns
 * the thread's probes off before the system call (tls.t NULL, the state
 * RT_VFORK: every probe takes the cold path and leaves) and on again in
 * the parent once the child is gone, so the child's calls before its exec
 * are nobody's, and its time is the parent's, which waited for it.
 * Patched functions' returns still go through the return stack, whose
 * entries the child leaves are below the parent's stack pointer: trimmed
 * as frames gone.
 * Attached (attach.c), the runtime comes after the program's objects:
 * their vfork GOT slots are pointed at sc_w_vfork, the same code.
 */
#include "runtime/rt.h"
#include "runtime/libcall.h"

#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>

/* Before fork(), in the forking thread: its stack, into private memory. */
void rt_atfork_prepare(void)
{
	struct sc_eng_thread *t = rt_thread();
	struct rt_snap *s;
	uint64_t depth, i, n = 0, len;
	long map;
	int fd;

	tls.snap = NULL;
	tls.spare = 0;
	if (rt.state != RT_ON || rt.sandboxed)
		return;
	fd = __atomic_exchange_n(&rt.spare_fd, -1, __ATOMIC_ACQ_REL);
	if (fd >= 0 && !rt_ext()) {
		rt_close(fd);              /* no memory to note it in: the child goes without */
		fd = -1;
	}
	if (fd >= 0) {
		rt_stpcpy(tls.x->spare_name, rt.spare_name, sizeof(tls.x->spare_name));
		tls.x->spare_id[0] = rt.spare_id[0];
		tls.x->spare_id[1] = rt.spare_id[1];
		tls.spare = fd + 1;
	}
	if (!t)
		return;
	depth = (uint64_t)(t->top - t->stack);
	len = (sizeof(*s) + depth * sizeof(s->fs[0]) + PAGE - 1) & ~(PAGE - 1);
	map = rt_sys6(SYS_mmap, 0, (long)len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (rt_mmap_failed(map))
		return;
	s = (struct rt_snap *)map;
	for (i = 1; i <= depth; i++) {
		if (t->stack[i].node->func == SC_ENG_DROP_FUNC)
			continue;
		s->fs[n][0] = t->stack[i].node->func;
		s->fs[n][1] = t->stack[i].cs->site;
		s->fs[n][2] = t->stack[i].cfa;
		s->fs[n][3] = t->stack[i].pc;
		n++;
	}
	s->n = n;
	s->map_len = len;
	tls.snap = s;
}

static void snap_free(void)
{
	if (tls.snap)
		rt_sys2(SYS_munmap, tls.snap, tls.snap->map_len);
	tls.snap = NULL;
}

void rt_atfork_parent(void)
{
	snap_free();
	if (tls.spare) {               /* the child's now */
		spare_drop();
		spare_make();
	}
}

/*
 * The first moment in a new process (the child of fork, or of a clone
 * without CLONE_VM, which ran no handler): the parent's file, ring and perf
 * fds are not ours.  Start a new file for this image and give the forking
 * thread its stack as it was at the fork (the snapshot, or for a raw fork
 * the shared stack as the child finds it), as frames that are open but not
 * new calls; the other threads do not exist here.  A clone child that runs
 * on a stack of its own (sp far from this thread's) starts empty.  Only
 * system calls and the engine: fork may have left locks held.
 */
void child_start(uintptr_t sp)
{
	struct sc_eng_arena old_arena = rt.arena;
	struct sc_eng_thread *old_t = rt_thread(), *t = NULL;
	struct sc_shm_header *old_hdr = rt.hdr;
	char old_name[256];
	uint64_t off, now, i;
	int old_fd = rt.fd, own_stack, room;
	struct rlimit lim;
	struct stat st;

	if (rt.state != RT_ON || rt.pid == rt_getpid()) {
		snap_free();
		return;
	}
	/* the other threads' states are the parent's: not this process's */
	for (i = 0; i < RT_EXT_MAX; i++)
		if (rt_exts[i] && rt_exts[i] != tls.x)
			rt_exts[i] = NULL;
	if (rt.attached) {             /* attached to the parent only (attach.c) */
		sc_attach_child();
		return;
	}
	if (rt.sandboxed)
		spare_drop();
	if (rt.sandboxed) {            /* the sandbox is inherited: no calls of ours */
		rt.state = RT_OFF;
		tls.state = RT_OFF;
		tls.t = NULL;
		return;
	}
	own_stack = !tls.snap && tls.sp_first &&
		    (sp > tls.sp_first || tls.sp_first - sp > (64ul << 20));
	if (rt_sys2(SYS_fstat, old_fd, &st) || st.st_dev != rt.dev || st.st_ino != rt.ino)
		old_fd = -1;               /* closed by the program: not ours now */
	memcpy(old_name, rt.name, sizeof(old_name));
	/* the parent's ending threads live in the parent's file: not ours */
	memset(rt.ending, 0, sizeof(rt.ending));
	if (tls.x)                                     /* the ring was not inherited */
		memset(&tls.x->ring, 0, sizeof(tls.x->ring));
	tls.ring_head = &tls.ring_seen;
	tls.t = NULL;
	tls.t_notsc = NULL;
	tls.npending = 0;
	tls.busy = 0;
	for (off = old_hdr->arena.threads; off && off < old_arena.size;) {
		struct sc_eng_thread *o = (struct sc_eng_thread *)(old_arena.base + off);
		uint64_t ids[2 * NEV];

		/* close the inherited fds, but leave the parent's records alone */
		memcpy(ids, o->user, sizeof(ids));
		close_events(o);
		memcpy(o->user, ids, sizeof(ids));
		off = o->next_off;
	}
	rt.fds_held = 0;
	rt.rings_big = 0;
	rt.hdr = NULL;
	rt.why = 0;
	room = fd_room_begin(&lim);
	rt.spare_fd = -1;              /* the parent's; a copy of it is its own */
	if (image_open(old_hdr)) {
		fd_room_end(room, &lim);
		spare_drop();
		/* said in the parent's image, which the recorder reads */
		__atomic_fetch_or(&old_hdr->lost_why, SC_SHM_WHY_CHILD, __ATOMIC_RELAXED);
		rt.state = RT_OFF;
		tls.state = RT_OFF;
		rt_sys2(SYS_munmap, old_arena.base, old_arena.size);
		if (old_fd >= 0)
			rt_close(old_fd);
		snap_free();
		return;
	}
	rt_stpcpy(rt.hdr->parent_file, old_name, sizeof(rt.hdr->parent_file));
	for (i = 0; i < old_hdr->nmodules && i < SC_SHM_MAX_MODULES; i++)
		if (old_hdr->modules[i].valid)
			module_add(old_hdr->modules[i].base,
				   (const char *)old_arena.base + old_hdr->modules[i].path_off);
	now = rt_clock();
	if (old_t) {
		t = sc_eng_thread_new(&rt.arena, (uint32_t)rt_gettid(), now);
		if (t)
			rt_thread_setup(t);
		if (t) {
			rt.rebuilding = 1;
			if (tls.snap) {
				for (i = 0; i < tls.snap->n; i++)
					sc_eng_inherit(t, tls.snap->fs[i][0], tls.snap->fs[i][1], now,
						       tls.snap->fs[i][2], tls.snap->fs[i][3]);
			} else if (!own_stack) {
				for (i = 1; old_t->stack + i <= old_t->top; i++)
					if (old_t->stack[i].node->func != SC_ENG_DROP_FUNC)
						sc_eng_inherit(t, old_t->stack[i].node->func,
							       old_t->stack[i].cs->site, now,
							       old_t->stack[i].cfa, old_t->stack[i].pc);
			}
			rt.rebuilding = 0;
			memcpy(t->name, old_t->name, sizeof(t->name));
		}
	}
	snap_free();
	rt_sys2(SYS_munmap, old_arena.base, old_arena.size);
	if (old_fd >= 0)
		rt_close(old_fd);
	alive_arm();
	sc_libcall_republish();        /* the library calls' names, in this image */
	tls.state = t ? RT_ON : RT_NEW;
	if (t) {
		pthread_setspecific(rt.key, t);
		os_open(t);
		tls.t = t;
		if (own_stack)
			tls.sp_first = sp;
		if (sc_rt_clk.off) {    /* inherited: the child has no clock either */
			sc_rt_clk.off = 0;
			tsc_off();
		}
	}
	fd_room_end(room, &lim);
	spare_make();                  /* for its own children */
}

void rt_atfork_child(void)
{
	sc_exec_atfork_child();
	child_start(stack_pointer());
}

/* vfork(): its own system call, the probes off around it (see the top). */
void sc_rt_vfork_pre(void)
{
	struct rt_tls_ext *x;

	if (rt.state != RT_ON || (tls.state != RT_ON && tls.state != RT_NEW) || tls.busy || !(x = rt_ext()))
		return;
	x->vfork.t = tls.t;
	x->vfork.t_notsc = tls.t_notsc;
	x->vfork.state = tls.state;
	tls.t = NULL;
	tls.t_notsc = NULL;
	barrier();
	tls.state = RT_VFORK;
}

void sc_rt_vfork_post(void)
{
	if (tls.state != RT_VFORK || !tls.x)
		return;
	if (rt.state != RT_ON) {
		/* detached while the child ran (attach.c): the thread's
		 * extension is unmapped, its probes are gone */
		tls.t = tls.t_notsc = NULL;
		barrier();
		tls.state = RT_OFF;
		return;
	}
	tls.t = tls.x->vfork.t;
	tls.t_notsc = tls.x->vfork.t_notsc;
	barrier();
	tls.state = tls.x->vfork.state;
}

/*
 * The system call made here, as glibc's vfork makes it: the return address
 * popped before it (the child's calls would overwrite it on the shared
 * stack) and pushed again after, in both processes.  The child returns
 * with the probes off; the parent, resumed once the child called exec or
 * _exit, turns them on, and on a failure sets errno.  __vfork is the same.
 */
__asm__(".text\n"
	".globl vfork\n"
	".type vfork, @function\n"
	".globl __vfork\n"
	".type __vfork, @function\n"
	".globl sc_w_vfork\n"
	".hidden sc_w_vfork\n"
	"vfork:\n"
	"__vfork:\n"
	"sc_w_vfork:\n"
	"\tendbr64\n"
	"\tsub $8, %rsp\n"                  /* the call's alignment */
	"\tcall sc_rt_vfork_pre\n"
	"\tadd $8, %rsp\n"
	"\tpop %rsi\n"
	"\tmov $58, %eax\n"                 /* SYS_vfork */
	"\tsyscall\n"
	"\tpush %rsi\n"
	"\ttest %rax, %rax\n"
	"\tjz 2f\n"                         /* the child */
	"\tpush %rax\n"
	"\tcall sc_rt_vfork_post\n"
	"\tpop %rax\n"
	"\tcmp $-4096, %rax\n"
	"\tja 1f\n"
	"2:\n"
	"\tret\n"
	"1:\n"                               /* -errno */
	"\tneg %eax\n"
	"\tpush %rax\n"
	"\tcall __errno_location@PLT\n"
	"\tpop %rcx\n"
	"\tmov %ecx, (%rax)\n"
	"\tmov $-1, %eax\n"
	"\tret\n"
	".size vfork, .-vfork\n"
	".size __vfork, .-__vfork\n");
