/*
 * e2e_longlived — programs that run for a long time and keep starting
 * things:
 *
 *   threads N    N short threads (8 at a time), each calls work() 3 times
 *   reexec N F   calls work() once, then execs itself with N-1 until 0;
 *                every 1000th image appends "N NANOSECONDS" (CLOCK_MONOTONIC)
 *                to the file F
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void work(void) { sink++; }

__attribute__((noinline)) void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 3; i++)
		work();
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 100;

	if (argc > 1 && !strcmp(argv[1], "threads")) {
		pthread_t t[8];

		for (int i = 0; i < n; i += 8) {
			int k = n - i < 8 ? n - i : 8;
			for (int j = 0; j < k; j++)
				if (pthread_create(&t[j], NULL, worker, NULL))
					return 2;
			for (int j = 0; j < k; j++)
				pthread_join(t[j], NULL);
		}
		return 0;
	}
	if (argc > 3 && !strcmp(argv[1], "reexec")) {
		char next[16];

		work();
		if (n % 1000 == 0) {
			struct timespec ts;
			FILE *f = fopen(argv[3], "a");

			clock_gettime(CLOCK_MONOTONIC, &ts);
			if (f) {
				fprintf(f, "%d %lld\n", n, (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
				fclose(f);
			}
		}
		if (n <= 0)
			return 0;
		snprintf(next, sizeof(next), "%d", n - 1);
		execl("/proc/self/exe", argv[0], "reexec", next, argv[3], (char *)NULL);
		return 3;
	}
	return 2;
}
