/* e2e_exec_target — what e2e_procs execs: one function to find in the report. */
static volatile unsigned long sink;

__attribute__((noinline)) void exec_target_work(void)
{
	for (int i = 0; i < 1000; i++)
		sink += i;
}

int main(void)
{
	exec_target_work();
	return 0;
}
