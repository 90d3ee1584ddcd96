/* stackclock — command dispatch.  See cmd.h for how to add a command. */
#include "cmd/cmd.h"
#include "util/util.h"

#include <stdio.h>
#include <string.h>

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct command commands[] = {
	{ "record", cmd_record, "run a program (or attach) and record a profile" },
	{ "report", cmd_report, "show the recorded profile as a table, CSV or JSON" },
	{ "dump",   cmd_dump,   "show the raw records of a data file" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: stackclock <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\nrun 'stackclock <command> --help' for a command's options\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	pr_err("unknown command '%s' (try 'stackclock --help')", argv[1]);
	return 2;
}
