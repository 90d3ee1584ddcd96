/*
 * smp_noperf — a test shim, preloaded into stackclock itself: makes every
 * perf_event_open fail with EACCES, as a kernel with a strict
 * kernel.perf_event_paranoid does for an unprivileged user, so the error
 * message can be tested as root.  Other system calls pass through.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

long syscall(long nr, ...)
{
	long a[6];
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == SYS_perf_event_open) {
		errno = EACCES;
		return -1;
	}
	/* Not recursive: the raw instruction, not libc's syscall(). */
	long ret;
	register long r10 __asm__("r10") = a[3];
	register long r8 __asm__("r8") = a[4];
	register long r9 __asm__("r9") = a[5];
	__asm__ volatile("syscall" : "=a"(ret)
			 : "a"(nr), "D"(a[0]), "S"(a[1]), "d"(a[2]), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	if (ret < 0 && ret > -4096) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}
