/*
 * cmd — the subcommands of the `stackclock` tool, one file each.
 *
 * Adding a command: write cmd/<name>.c with
 *     int cmd_<name>(int argc, char **argv);
 * (argv[0] is the command name), declare it here, and add it to the
 * commands[] table in cmd/main.c.  A command returns the process exit
 * status: 0 on success, 1 for a failure it has explained with one pr_err()
 * line, 2 for bad usage.
 */
#ifndef SC_CMD_H
#define SC_CMD_H

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_dump(int argc, char **argv);

#endif
