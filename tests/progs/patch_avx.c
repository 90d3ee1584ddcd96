/*
 * 256-bit values live across patched calls (t701): with -mavx2 -O2 the
 * compiler keeps acc, k and keep in ymm registers across the calls of
 * step, tiny and tiny2 (-fipa-ra: it knows they leave them alone) and
 * passes acc and k to step in ymm0/ymm1.  Under run-time patching the
 * output must be the same as without: the stubs, the probes and whatever
 * they call (their first calls take the slow paths) keep the upper halves.
 * Usage: patch_avx [N]
 */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) __m256d step(__m256d a, __m256d b)
{
	return _mm256_add_pd(_mm256_mul_pd(a, b), b);
}

__attribute__((noinline)) int tiny(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) int tiny2(int x)
{
	return x ^ 0x55;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000, s = 0;
	__m256d acc = _mm256_set1_pd(1.0), k = _mm256_set_pd(0.5, 0.25, 0.125, 0.0625);
	__m256d keep = _mm256_set_pd(3.0, 5.0, 7.0, 11.0);
	double a[4], b[4];

	for (int i = 0; i < n; i++) {
		acc = step(acc, k);
		s += tiny(i);
		keep = _mm256_add_pd(keep, _mm256_set1_pd(1.0));
		s += tiny2(s);
	}
	_mm256_storeu_pd(a, acc);
	_mm256_storeu_pd(b, keep);
	printf("%g %g %g %g | %g %g %g %g | %d\n", a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3], s);
	return 0;
}
