/*
 * attach_lib — the library the tracee tests load into attach_loop:
 * sc_test_entry(arg) appends arg and a newline to the file named arg,
 * sets errno (the caller's must come back unchanged) and returns 42.  Its constructor touches malloc and stdio, so a call
 * made while another thread held a lock would hang, not pass.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *seen;

__attribute__((constructor)) static void init(void)
{
	seen = malloc(64);
	if (seen)
		strcpy(seen, "loaded");
}

int sc_test_entry(const char *arg)
{
	FILE *f = fopen(arg, "a");
	if (!f)
		return -1;
	fprintf(f, "%s %s\n", arg, seen ? seen : "?");
	fclose(f);
	errno = 77;
	return 42;
}
