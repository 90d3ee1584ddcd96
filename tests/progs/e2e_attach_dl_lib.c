/* A library a process loads while attached (t333): built with the hooks. */
static volatile unsigned long sink;

__attribute__((noinline)) static void dl_step(unsigned long i)
{
	sink += i;
}

void dl_work(void)
{
	for (unsigned long i = 0; i < 10; i++)
		dl_step(i);
}
