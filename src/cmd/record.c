/*
 * stackclock record — parse the command line and hand over to a method
 * driver (record/instrument.c or record/sample.c).
 */
#include "cmd/cmd.h"
#include "format/scdata.h"
#include "record/record.h"
#include "util/util.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char record_usage[] =
	"usage: stackclock record [-m sample|instrument] [-F HZ] [-o FILE]\n"
	"                         [--os-events=LIST] [--kernel] -- PROGRAM [ARGS...]\n"
	"       stackclock record -p PID [-F HZ] [-o FILE] [--duration SECONDS]\n"
	"\n"
	"  -m, --method M      sample (default) or instrument (needs a program\n"
	"                      built with -finstrument-functions)\n"
	"  -F, --freq HZ       sampling rate, default 999\n"
	"  -o, --output FILE   data file, default stackclock.data\n"
	"  --os-events LIST    OS events that make time non-application:\n"
	"                      switch,syscall,fault (default all), or none\n"
	"  --kernel            include kernel frames in samples\n"
	"  -p, --pid PID       attach to a running process (sampling)\n"
	"  --duration SECONDS  stop after this long (with -p, or a program)\n";

static int parse_os_events(const char *s, unsigned *mask)
{
	char *dup = xstrdup(s), *save = NULL, *tok;
	int ret = 0;

	*mask = 0;
	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "switch"))
			*mask |= SC_OS_BIT(SC_OS_SWITCH);
		else if (!strcmp(tok, "syscall"))
			*mask |= SC_OS_BIT(SC_OS_SYSCALL);
		else if (!strcmp(tok, "fault"))
			*mask |= SC_OS_BIT(SC_OS_FAULT);
		else if (!strcmp(tok, "all"))
			*mask |= SC_OS_ALL;
		else if (strcmp(tok, "none")) {
			pr_err("unknown OS event '%s' in --os-events (use switch, syscall, fault, all or none)", tok);
			ret = -EINVAL;
			break;
		}
	}
	free(dup);
	return ret;
}

static int parse_number(const char *what, const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < min || v > max) {
		pr_err("invalid %s '%s' (expected a number from %g to %g)", what, s, min, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

enum { OPT_OS_EVENTS = 256, OPT_KERNEL, OPT_DURATION };

int cmd_record(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "method", required_argument, NULL, 'm' },
		{ "freq", required_argument, NULL, 'F' },
		{ "output", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, 'p' },
		{ "os-events", required_argument, NULL, OPT_OS_EVENTS },
		{ "kernel", no_argument, NULL, OPT_KERNEL },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct record_opts o = {
		.method = SC_METHOD_SAMPLE,
		.frequency_hz = 999,
		.output = "stackclock.data",
		.os_events = SC_OS_ALL,
	};
	double v;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+m:F:o:p:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (!strcmp(optarg, "sample") || !strcmp(optarg, "sampling"))
				o.method = SC_METHOD_SAMPLE;
			else if (!strcmp(optarg, "instrument") || !strcmp(optarg, "instrumentation"))
				o.method = SC_METHOD_INSTRUMENT;
			else {
				pr_err("unknown method '%s' (use -m sample or -m instrument)", optarg);
				return 2;
			}
			break;
		case 'F':
			if (parse_number("frequency", optarg, 1, 100000, &v))
				return 2;
			o.frequency_hz = (unsigned)v;
			break;
		case 'o':
			o.output = optarg;
			break;
		case 'p':
			if (parse_number("PID", optarg, 1, 4194304, &v))
				return 2;
			o.attach_pid = (pid_t)v;
			break;
		case OPT_OS_EVENTS:
			if (parse_os_events(optarg, &o.os_events))
				return 2;
			break;
		case OPT_KERNEL:
			o.kernel = true;
			break;
		case OPT_DURATION:
			if (parse_number("duration", optarg, 0.001, 1e7, &o.duration_s))
				return 2;
			break;
		case 'h':
			fputs(record_usage, stdout);
			return 0;
		default:
			if (optopt)
				pr_err("record: unknown option '-%c' (see 'stackclock record --help')", optopt);
			else
				pr_err("record: unknown option '%s' (see 'stackclock record --help')", argv[optind - 1]);
			return 2;
		}
	}
	o.argv = argv + optind;
	o.argc = argc - optind;
	if (o.attach_pid && o.argc) {
		pr_err("record: give either -p PID or a program, not both");
		return 2;
	}
	if (!o.attach_pid && !o.argc) {
		pr_err("record: no program given (usage: stackclock record -- PROGRAM [ARGS...])");
		return 2;
	}
	if (o.attach_pid && o.method == SC_METHOD_INSTRUMENT) {
		pr_err("record: -p attaches by sampling only; drop '-m instrument'");
		return 2;
	}
	return o.method == SC_METHOD_INSTRUMENT ? record_instrument(&o) : record_sample(&o);
}
