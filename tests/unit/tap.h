/*
 * tap.h — a minimal TAP producer for the unit tests (header-only).
 *
 * Each check prints "ok N - name" or "not ok N - name" with the values that
 * differed; tests/run.sh counts those lines.  tap_done() returns the exit
 * status (non-zero if anything failed).
 */
#ifndef SC_TAP_H
#define SC_TAP_H

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

static inline int tap_ok(int cond, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;
	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!cond)
		tap_failed++;
	return cond;
}

#define ok(cond, ...) tap_ok(!!(cond), __VA_ARGS__)

#define is_u64(got, want, ...) do {                                          \
	uint64_t g_ = (uint64_t)(got), w_ = (uint64_t)(want);                    \
	if (!ok(g_ == w_, __VA_ARGS__))                                          \
		printf("#   got %" PRIu64 ", want %" PRIu64 "\n", g_, w_);       \
} while (0)

#define is_str(got, want, ...) do {                                          \
	const char *g_ = (got), *w_ = (want);                                    \
	if (!ok(g_ && w_ && !strcmp(g_, w_), __VA_ARGS__))                       \
		printf("#   got '%s', want '%s'\n", g_ ? g_ : "(null)", w_);     \
} while (0)

#define is_near(got, want, tol, ...) do {                                    \
	double g_ = (got), w_ = (want);                                          \
	if (!ok(fabs(g_ - w_) <= (tol), __VA_ARGS__))                            \
		printf("#   got %g, want %g +- %g\n", g_, w_, (double)(tol));    \
} while (0)

static inline void tap_diag(const char *fmt, ...)
{
	va_list ap;
	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
