/*
 * cmd — the subcommands of the `stackclock` tool, one file each.
 *
 * Adding a command: write cmd/<name>.c with
 *     int cmd_<name>(int argc, char **argv);
 * (argv[0] is the command name), declare it here, and add it to the
 * commands[] table in cmd/main.c.  A command returns the process exit
 * status: 0 on success (and for --help, printed on stdout), 1 for a
 * failure it has explained with one pr_err() line, 2 for bad usage
 * (one pr_err() line too; the helpers below write those).  record is the
 * exception: the target's status, and timeout(1)'s 125/126/127 for its own
 * failures (record/record.h).  Commands run
 * once per process: they may keep pointers into argv, and they leave
 * getopt's globals as they please.
 */
#ifndef SC_CMD_H
#define SC_CMD_H

#include "analysis/analysis.h"

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_replay(int argc, char **argv);

/*
 * Helpers for the commands' option parsers (cmd/main.c).  Each prints one
 * pr_err() line naming the command, the option and the way out; the caller
 * then returns 2.  Options are parsed with opterr = 0 and an optstring
 * starting with ':' (after a '+', if any), so that getopt_long() returns
 * ':' for a missing value and '?' for an unknown option.
 */
/* c is what getopt_long() returned, ':' or '?'.  Returns 2. */
int cmd_bad_option(const char *cmd, int c, char **argv);
/*
 * A whole number from min to max, in decimal, for the option described by
 * what (e.g. "frequency -F").  0 with *out set, or -EINVAL after the error.
 */
/*
 * --app-time's value, "interval" or "exact".  0 with *out set, or -EINVAL
 * after the error.
 */
int cmd_parse_app_time(const char *cmd, const char *s, enum an_app_time *out);
int cmd_parse_ulong(const char *cmd, const char *what, const char *s,
		    unsigned long min, unsigned long max, unsigned long *out);
/* A duration with its unit (500ns, 10us, 2.5ms, 1s; a bare number other
 * than 0 is refused: uftrace users read it as ns, replay's START column as
 * seconds) in ns; a point in time, seconds since the first event with or
 * without a unit (0.005 = 5ms), in ns; a size with an optional K, M or G
 * suffix (powers of 1024) in bytes.  0, or -EINVAL after a one-line error. */
int cmd_parse_duration(const char *cmd, const char *what, const char *s, uint64_t *ns);
int cmd_parse_time(const char *cmd, const char *what, const char *s, uint64_t *ns);
int cmd_parse_size(const char *cmd, const char *what, const char *s, uint64_t *bytes);

#endif
