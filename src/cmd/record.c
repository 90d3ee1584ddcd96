/*
 * stackclock record — parse the command line and hand over to a method
 * driver (record/instrument.c or record/sample.c).
 *
 * Everything that can be refused is refused here, before a target runs:
 * options that the chosen method would ignore, and an output file that
 * cannot be written (found out only after the run, that would lose it).
 *
 * Unlike the other commands (cmd.h), record exits with the target's own
 * status, and with 125, 126 or 127 for its own failures, as timeout(1)
 * does (record.h): a bad option here is 125.
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
#include <unistd.h>

static const char record_usage[] =
	"usage: stackclock record [-m sample|instrument] [-F HZ] [-o FILE]\n"
	"                         [--os-events=LIST] [--patch LIST] [--libcalls=WHICH]\n"
	"                         [--kernel] [--timeline[=SIZE] [--min-time DUR]\n"
	"                         [--depth N] [--only FUNCTION]...]\n"
	"                         -- PROGRAM [ARGS...]\n"
	"       stackclock record [-m instrument] -p PID [-F HZ] [-o FILE] [--duration SECONDS]\n"
	"\n"
	"  -m, --method M      sample (default) or instrument (a program built\n"
	"                      without -finstrument-functions is patched at run time)\n"
	"  -F, --freq HZ       sampling rate, default 999; with -m instrument, of the\n"
	"                      sampled shares (SPEC section 14), 0 turns them off\n"
	"  -o, --output FILE   data file, default stackclock.data\n"
	"  --os-events LIST    instrument: OS events that make time non-application,\n"
	"                      switch,syscall,fault (default all), or none\n"
	"  --patch LIST        instrument: also patch these libraries (names such as\n"
	"                      libz.so.1 or libz, or paths, comma-separated), or all\n"
	"  --libcalls WHICH    instrument: calls into other modules as rows (SPEC\n"
	"                      section 11): program (default, the calls the\n"
	"                      instrumented code makes), all (also between\n"
	"                      libraries) or none\n"
	"  --kernel            sample: include kernel frames\n"
	"  --timeline[=SIZE]   also keep every event in order, for 'stackclock replay'\n"
	"                      and 'export --format chrome' (SPEC section 12): calls,\n"
	"                      library calls and OS events, or samples; at most SIZE\n"
	"                      per process (default 256M), what does not fit is\n"
	"                      counted as dropped\n"
	"  --min-time DUR      timeline, instrument: only calls lasting DUR or more\n"
	"                      (DUR with its unit: 500ns, 10us, 1ms)\n"
	"  --depth N           timeline, instrument: only calls less than N deep\n"
	"  --only FUNCTION     timeline, instrument: only calls of FUNCTION and what\n"
	"                      they call (repeat, or comma-separated)\n"
	"  -p, --pid PID       attach to a running process: sample it, or with\n"
	"                      -m instrument patch it in place, and put it back as it\n"
	"                      was at the end (--duration, Ctrl-C, or its end)\n"
	"  --duration SECONDS  stop after this long (sampling; -m instrument with -p)\n";

#define MAX_FREQ_HZ   100000
#define MAX_PID       4194304UL      /* PID_MAX_LIMIT on 64-bit Linux */

static int parse_os_events(const char *s, unsigned *mask)
{
	char *dup = xstrdup(s), *save = NULL, *tok;
	int ret = 0;

	*mask = 0;
	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned c;

		for (c = 0; c < SC_OS_NCAT && strcmp(tok, sc_os_cat_name(c)); c++)
			;
		if (c < SC_OS_NCAT)
			*mask |= SC_OS_BIT(c);
		else if (!strcmp(tok, "all"))
			*mask |= SC_OS_ALL;
		else if (strcmp(tok, "none")) {
			pr_err("record: unknown OS event '%s' in --os-events "
			       "(use switch, syscall, fault, all or none)", tok);
			ret = -EINVAL;
			break;
		}
	}
	free(dup);
	return ret;
}

static int parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	/* written so that NaN fails too */
	if (errno || end == s || *end || !(v >= 0.001 && v <= 1e7)) {
		pr_err("record: invalid --duration '%s' (expected seconds, from 0.001 to 10000000)", s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/*
 * Can the data file be written where the user asked?  The same way it will
 * be (util.h, outfile: a temporary file beside it, created and removed
 * here), so that a directory without write permission is found before the
 * run, not after it.
 */
static int check_output(const char *path)
{
	int err = outfile_probe(path);

	if (err)
		pr_err("record: cannot write the data file '%s': %s (choose another with -o FILE)",
		       path, outfile_strerror(err));
	return err;
}

enum { OPT_OS_EVENTS = 256, OPT_KERNEL, OPT_DURATION, OPT_PATCH, OPT_LIBCALLS, OPT_TIMELINE,
       OPT_MIN_TIME, OPT_DEPTH, OPT_ONLY };

/* An option the method would silently ignore is a mistake: say so. */
static int check_method_options(const struct record_opts *o, bool freq_given, bool os_given)
{
	const char *misplaced = NULL;

	if (!o->timeline && (o->tl_min_ns || o->tl_depth || o->tl_only)) {
		misplaced = o->tl_min_ns ? "--min-time" : o->tl_depth ? "--depth" : "--only";
		pr_err("record: %s filters the timeline; add --timeline, or drop %s", misplaced, misplaced);
		return -EINVAL;
	}
	if (o->method == SC_METHOD_INSTRUMENT) {
		if (o->kernel)
			misplaced = "--kernel";
		else if (o->duration_s > 0 && !o->attach_pid)
			misplaced = "--duration";
		if (misplaced) {
			pr_err("record: %s is for sampling (or, with -m instrument, for -p PID); drop it, or "
			       "drop '-m instrument'", misplaced);
			return -EINVAL;
		}
	} else if (o->frequency_hz == 0) {
		pr_err("record: -F 0 turns off the sampled shares of '-m instrument'; sampling needs a rate of 1 Hz or more");
		return -EINVAL;
	} else if (os_given || o->patch || o->libcalls || o->tl_min_ns || o->tl_depth || o->tl_only) {
		misplaced = os_given ? "--os-events" : o->patch ? "--patch" : o->libcalls ? "--libcalls"
			: o->tl_min_ns ? "--min-time" : o->tl_depth ? "--depth" : "--only";
		pr_err("record: %s is for '-m instrument'; add that, or drop %s", misplaced, misplaced);
		return -EINVAL;
	}
	return 0;
}

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
		{ "patch", required_argument, NULL, OPT_PATCH },
		{ "libcalls", required_argument, NULL, OPT_LIBCALLS },
		{ "timeline", optional_argument, NULL, OPT_TIMELINE },
		{ "min-time", required_argument, NULL, OPT_MIN_TIME },
		{ "depth", required_argument, NULL, OPT_DEPTH },
		{ "only", required_argument, NULL, OPT_ONLY },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct record_opts o = {
		.method = SC_METHOD_SAMPLE,
		.frequency_hz = 999,
		.output = "stackclock.data",
		.os_events = SC_OS_ALL,
	};
	bool freq_given = false, os_given = false;
	unsigned long v;
	int c;

	optind = 1;
	opterr = 0;
	/* '+': the target's own options after PROGRAM are not ours */
	while ((c = getopt_long(argc, argv, "+:m:F:o:p:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (!strcmp(optarg, "sample") || !strcmp(optarg, "sampling"))
				o.method = SC_METHOD_SAMPLE;
			else if (!strcmp(optarg, "instrument") || !strcmp(optarg, "instrumentation"))
				o.method = SC_METHOD_INSTRUMENT;
			else {
				pr_err("record: unknown method '%s' (use -m sample or -m instrument)", optarg);
				return RECORD_EXIT_FAILED;
			}
			break;
		case 'F':
			if (cmd_parse_ulong("record", "frequency -F", optarg, 0, MAX_FREQ_HZ, &v))
				return RECORD_EXIT_FAILED;
			o.frequency_hz = (unsigned)v;
			freq_given = true;
			break;
		case 'o':
			o.output = optarg;
			break;
		case 'p':
			if (cmd_parse_ulong("record", "PID -p", optarg, 1, MAX_PID, &v))
				return RECORD_EXIT_FAILED;
			o.attach_pid = (pid_t)v;
			break;
		case OPT_OS_EVENTS:
			if (parse_os_events(optarg, &o.os_events))
				return RECORD_EXIT_FAILED;
			os_given = true;
			break;
		case OPT_KERNEL:
			o.kernel = true;
			break;
		case OPT_PATCH:
			if (!*optarg) {
				pr_err("record: --patch needs library names, paths or 'all'");
				return RECORD_EXIT_FAILED;
			}
			o.patch = optarg;
			break;
		case OPT_LIBCALLS:
			if (strcmp(optarg, "program") && strcmp(optarg, "all") && strcmp(optarg, "none")) {
				pr_err("record: unknown --libcalls '%s' (use program, all or none)", optarg);
				return RECORD_EXIT_FAILED;
			}
			o.libcalls = optarg;
			break;
		case OPT_DURATION:
			if (parse_seconds(optarg, &o.duration_s))
				return RECORD_EXIT_FAILED;
			break;
		case OPT_TIMELINE:
			o.timeline = true;
			o.tl_size = RECORD_TL_SIZE_DEFAULT;
			if (optarg && (cmd_parse_size("record", "--timeline size", optarg, &o.tl_size) ||
				       o.tl_size < 4096)) {
				if (o.tl_size < 4096)
					pr_err("record: --timeline=%s is too small (at least 4K)", optarg);
				return RECORD_EXIT_FAILED;
			}
			break;
		case OPT_MIN_TIME:
			if (cmd_parse_duration("record", "--min-time", optarg, &o.tl_min_ns))
				return RECORD_EXIT_FAILED;
			break;
		case OPT_DEPTH:
			if (cmd_parse_ulong("record", "--depth", optarg, 1, 1u << 20, &v))
				return RECORD_EXIT_FAILED;
			o.tl_depth = (unsigned)v;
			break;
		case OPT_ONLY:
			if (!*optarg || strchr(optarg, '=')) {
				pr_err("record: --only needs function names ('--only main,parse')");
				return RECORD_EXIT_FAILED;
			}
			if (o.tl_only) {
				char *both = xasprintf("%s,%s", o.tl_only, optarg);

				free(o.tl_only);
				o.tl_only = both;
			} else {
				o.tl_only = xstrdup(optarg);
			}
			break;
		case 'h':
			fputs(record_usage, stdout);
			return 0;
		default:
			cmd_bad_option("record", c, argv);
			return RECORD_EXIT_FAILED;
		}
	}
	o.argv = argv + optind;
	o.argc = argc - optind;
	if (o.attach_pid && o.argc) {
		pr_err("record: give either -p PID or a program, not both");
		return RECORD_EXIT_FAILED;
	}
	if (!o.attach_pid && !o.argc) {
		pr_err("record: no program given (usage: stackclock record [OPTIONS] -- PROGRAM [ARGS...])");
		return RECORD_EXIT_FAILED;
	}
	if (check_method_options(&o, freq_given, os_given))
		return RECORD_EXIT_FAILED;
	if (check_output(o.output))
		return RECORD_EXIT_FAILED;
	return o.method == SC_METHOD_INSTRUMENT ? record_instrument(&o) : record_sample(&o);
}
