/*
 * stackclock — command dispatch, and the option-parsing helpers the
 * commands share.  See cmd.h for how to add a command.
 */
#include "cmd/cmd.h"
#include "record/record.h"
#include "runtime/patch.h"
#include "util/util.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct command commands[] = {
	{ "record", cmd_record, "run a program (or attach) and record a profile" },
	{ "report", cmd_report, "show the recorded profile as a table, CSV or JSON" },
	{ "diff",   cmd_diff,   "compare two recordings: per function base, new and delta" },
	{ "export", cmd_export, "write the recording as pprof, callgrind, folded stacks or HTML" },
	{ "replay", cmd_replay, "show the timeline: every call in order, per thread (record --timeline)" },
	{ "dump",   cmd_dump,   "show the raw records of a data file" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: stackclock <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\nrun 'stackclock <command> --help' for a command's options\n");
}

/* "record, report or dump": the commands[] names, for error messages. */
static const char *command_names(void)
{
	static char buf[128];
	size_t n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(commands) && n < sizeof(buf); i++)
		n += snprintf(buf + n, sizeof(buf) - n, "%s%s",
			      i == 0 ? "" : i + 1 == ARRAY_SIZE(commands) ? " or " : ", ",
			      commands[i].name);
	return buf;
}

int cmd_bad_option(const char *cmd, int c, char **argv)
{
	/*
	 * A long option is the argument getopt_long() just consumed (shown
	 * up to any '='); a short one is optopt, as it may sit in a cluster.
	 */
	const char *arg = argv[optind - 1];
	char opt[64];

	if (!strncmp(arg, "--", 2))
		snprintf(opt, sizeof(opt), "%.*s", (int)strcspn(arg, "="), arg);
	else
		snprintf(opt, sizeof(opt), "-%c", optopt);
	if (c == ':')
		pr_err("%s: option '%s' needs a value (see 'stackclock %s --help')", cmd, opt, cmd);
	else
		pr_err("%s: unknown option '%s' (see 'stackclock %s --help')", cmd, opt, cmd);
	return 2;
}

int cmd_parse_app_time(const char *cmd, const char *s, enum an_app_time *out)
{
	if (!strcmp(s, "interval")) {
		*out = AN_APP_INTERVAL;
	} else if (!strcmp(s, "exact")) {
		*out = AN_APP_EXACT;
	} else {
		pr_err("%s: unknown --app-time '%s' (use interval or exact)", cmd, s);
		return -EINVAL;
	}
	return 0;
}

int cmd_parse_ulong(const char *cmd, const char *what, const char *s,
		    unsigned long min, unsigned long max, unsigned long *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	/* strtoul() takes "-1" as ULONG_MAX and skips leading blanks: refuse both */
	if (errno || end == s || *end || !(*s >= '0' && *s <= '9') || v < min || v > max) {
		pr_err("%s: invalid %s '%s' (expected a whole number from %lu to %lu)",
		       cmd, what, s, min, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* A number with a unit suffix from units[] (name, multiplier; with no
 * suffix, the unit named "" if there is one, else only 0). */
struct unit { const char *name; uint64_t mul; };

static int parse_with_unit(const char *cmd, const char *what, const char *s,
			   const struct unit *units, size_t nunits, const char *expect, uint64_t *out)
{
	char *end;
	double v;
	size_t i = 0;

	errno = 0;
	v = strtod(s, &end);
	/* digits first: no sign, blank, "inf" or "nan"; then a unit or nothing */
	if (!errno && end != s && *s >= '0' && *s <= '9' &&
	    strspn(s, "0123456789.eE+-") == (size_t)(end - s)) {
		for (i = 0; i < nunits && strcasecmp(end, units[i].name); i++)
			;
		if (i == nunits && !*end && v == 0) {
			*out = 0;
			return 0;
		}
		if (i < nunits && v * (double)units[i].mul < 1.8e19) {
			*out = (uint64_t)(v * (double)units[i].mul + 0.5);
			return 0;
		}
	}
	pr_err("%s: invalid %s '%s' (expected %s)", cmd, what, s, expect);
	return -EINVAL;
}

static const struct unit time_units[] = {
	{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
	{ "sec", 1000000000 }, { "m", 60000000000ull }, { "min", 60000000000ull },
	{ "", 1000000000 },       /* cmd_parse_time only: seconds */
};

int cmd_parse_duration(const char *cmd, const char *what, const char *s, uint64_t *ns)
{
	/* a bare number is refused (but 0): uftrace reads it as ns, the
	 * START (s) column as seconds; a unit says which */
	return parse_with_unit(cmd, what, s, time_units, ARRAY_SIZE(time_units) - 1,
			       "a duration with its unit, such as 500ns, 10us, 2.5ms or 1s: "
			       "a bare number could be ns or s", ns);
}

int cmd_parse_time(const char *cmd, const char *what, const char *s, uint64_t *ns)
{
	return parse_with_unit(cmd, what, s, time_units, ARRAY_SIZE(time_units),
			       "seconds since the first event, such as 1.5 or 0.005, "
			       "or with a unit: 1.5s, 200ms, 10us, 500ns", ns);
}

int cmd_parse_size(const char *cmd, const char *what, const char *s, uint64_t *bytes)
{
	static const struct unit units[] = {
		{ "", 1 }, { "k", 1ull << 10 }, { "kb", 1ull << 10 }, { "kib", 1ull << 10 },
		{ "m", 1ull << 20 }, { "mb", 1ull << 20 }, { "mib", 1ull << 20 },
		{ "g", 1ull << 30 }, { "gb", 1ull << 30 }, { "gib", 1ull << 30 },
	};

	return parse_with_unit(cmd, what, s, units, ARRAY_SIZE(units),
			       "a size such as 64M or 1G", bytes);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		pr_err("no command given (use %s; see 'stackclock --help')", command_names());
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	/* not a user's command: the runtime asks for a program's plan */
	if (!strcmp(argv[1], SC_PATCH_PLAN_CMD))
		return argc == 3 ? record_plan_exe(argv[2]) : 2;
	if (!strcmp(argv[1], SC_PATCH_PLAN_LIB_CMD))
		return argc == 3 ? record_plan_lib(argv[2]) : 2;
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	pr_err("unknown command '%s' (use %s; see 'stackclock --help')",
	       argv[1], command_names());
	return 2;
}
