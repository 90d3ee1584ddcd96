/*
 * stackclock export — the recording in a format other tools read: pprof,
 * callgrind, folded stacks, a self-contained HTML report (src/output,
 * export.h; SPEC section 8), and its timeline as a Chrome trace (SPEC
 * section 12).
 *
 * The output is written under a temporary name beside it and renamed only
 * once it is complete, so a failed export (a full disk, a damaged data
 * file) never leaves a half-written file under the name asked for.  "-o -"
 * writes to standard output (not the binary pprof format to a terminal).
 * A damaged data file is refused: an export is read by tools that cannot
 * say that part of it is missing ('report' shows what is readable).
 */
#include "analysis/analysis.h"
#include "cmd/cmd.h"
#include "output/export.h"
#include "util/util.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char export_usage[] =
	"usage: stackclock export [-i FILE] --format pprof|callgrind|folded|html|chrome [-o OUT]\n"
	"                         [--value elapsed|application|calls] [--app-time=interval|exact]\n"
	"                         [--timeline-max N]\n"
	"\n"
	"  -i, --input FILE    data file, default stackclock.data\n"
	"  --format FORMAT     pprof      gzip-compressed profile.proto (go tool pprof,\n"
	"                                 Pyroscope, Parca, Grafana)\n"
	"                      callgrind  for KCachegrind and callgrind_annotate\n"
	"                      folded     one line per stack (flamegraph.pl, inferno,\n"
	"                                 speedscope)\n"
	"                      html       one self-contained page: summary, table,\n"
	"                                 call tree, flame graph, callers/callees,\n"
	"                                 the timeline of record --timeline\n"
	"                      chrome     the timeline (record --timeline) as a Trace\n"
	"                                 Event Format JSON: Perfetto, chrome://tracing,\n"
	"                                 speedscope\n"
	"  -o, --output OUT    default stackclock.pb.gz, callgrind.out.stackclock,\n"
	"                      stackclock.folded, stackclock.html or\n"
	"                      stackclock.trace.json; - for stdout\n"
	"  --value VALUE       folded, instrumentation: elapsed (default), application\n"
	"                      or calls (sampling: samples only, no --value)\n"
	"  --app-time MODE     instrumentation: interval (default) or exact\n"
	"  --timeline-max N    html, a recording with a timeline: embed the N longest\n"
	"                      calls (and N OS events, the first N samples); default\n"
	"                      4000000, about 15 MB of page\n";

enum { OPT_FORMAT = 256, OPT_VALUE, OPT_APP_TIME, OPT_TIMELINE_MAX };

struct export_opts {
	const char *input, *output;
	const struct exp_format *format;
	struct exp_options exp;
	bool value_given, app_time_given, timeline_max_given;
	const char *value_name;   /* --value as given */
};

static int parse_args(int argc, char **argv, struct export_opts *o)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "value", required_argument, NULL, OPT_VALUE },
		{ "app-time", required_argument, NULL, OPT_APP_TIME },
		{ "timeline-max", required_argument, NULL, OPT_TIMELINE_MAX },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	o->input = "stackclock.data";
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":i:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			o->input = optarg;
			break;
		case 'o':
			o->output = optarg;
			break;
		case OPT_FORMAT:
			o->format = exp_format_find(optarg);
			if (!o->format) {
				pr_err("export: unknown format '%s' (expected %s)", optarg,
				       exp_format_list());
				return -2;
			}
			break;
		case OPT_VALUE:
			o->value_given = true;
			o->value_name = optarg;
			if (!strcmp(optarg, "elapsed")) {
				o->exp.value = EXP_VALUE_ELAPSED;
			} else if (!strcmp(optarg, "application")) {
				o->exp.value = EXP_VALUE_APPLICATION;
			} else if (!strcmp(optarg, "calls")) {
				o->exp.value = EXP_VALUE_CALLS;
			} else {
				pr_err("export: unknown --value '%s' (expected elapsed, application or calls)",
				       optarg);
				return -2;
			}
			break;
		case OPT_APP_TIME:
			o->app_time_given = true;
			if (cmd_parse_app_time("export", optarg, &o->exp.app_time))
				return -2;
			break;
		case OPT_TIMELINE_MAX: {
			char *end;
			unsigned long long v;

			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || v == 0 || optarg[0] == '-') {
				pr_err("export: --timeline-max '%s' is not a number of calls above 0 "
				       "(e.g. --timeline-max 1000000)", optarg);
				return -2;
			}
			o->exp.timeline_max = v;
			o->timeline_max_given = true;
			break;
		}
		case 'h':
			fputs(export_usage, stdout);
			return 1;
		default:
			cmd_bad_option("export", c, argv);
			return -2;
		}
	}
	if (optind < argc) {
		pr_err("export: unexpected argument '%s' (see 'stackclock export --help')", argv[optind]);
		return -2;
	}
	if (!o->format) {
		pr_err("export: which format? give --format %s", exp_format_list());
		return -2;
	}
	if (!*o->input) {
		pr_err("export: -i needs a file name");
		return -2;
	}
	if (o->value_given && o->format != &exp_folded) {
		pr_err("export: --value applies to --format folded");
		return -2;
	}
	if (o->timeline_max_given && o->format != &exp_html) {
		pr_err("export: --timeline-max applies to --format html");
		return -2;
	}
	if (!o->output)
		o->output = o->format->default_out;
	if (!*o->output) {
		pr_err("export: -o needs a file name, or - for standard output");
		return -2;
	}
	return 0;
}

/*
 * Write the export into a temporary file beside path, put in place only
 * once complete (util.h, outfile): a failure leaves what path held.
 */
static int export_to_file(struct an_profile *p, const struct export_opts *o)
{
	char err[512] = "";
	struct outfile out;
	int ret = outfile_open(&out, o->output);
	FILE *f;

	if (ret) {
		pr_err("export: cannot write %s: %s (choose another place with -o)", o->output,
		       outfile_strerror(ret));
		return 1;
	}
	f = fdopen(out.fd, "w");
	if (!f) {
		outfile_discard(&out);
		pr_err("export: out of memory");
		return 1;
	}
	ret = o->format->write(f, p, &o->exp, err, sizeof(err));
	if (ret == 0 && (fflush(f) != 0 || ferror(f)))
		ret = errno ? -errno : -EIO;
	/* the stream's buffer is written; the descriptor stays open for the commit */
	out.fd = dup(fileno(f));
	fclose(f);
	if (ret == 0 && out.fd < 0)
		ret = -errno;
	if (ret == 0)
		ret = outfile_commit(&out);
	else
		outfile_discard(&out);
	if (ret == -ENODATA && *err)
		pr_err("export: %s: %s", o->input, err);
	else if (ret < 0)
		pr_err("export: cannot write %s: %s", o->output, *err ? err : strerror(-ret));
	return ret < 0;
}

int cmd_export(int argc, char **argv)
{
	struct export_opts o = { 0 };
	struct an_profile *p;
	const char *damaged = NULL;
	char err[512] = "";
	int ret, status = 1;

	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret > 0 ? 0 : 2;
	if (!strcmp(o.output, "-") && o.format->binary && isatty(STDOUT_FILENO)) {
		pr_err("export: %s is binary; give -o FILE or redirect standard output", o.format->name);
		return 2;
	}
	p = an_profile_new(NULL);
	ret = an_profile_load(p, o.input, &damaged, err, sizeof(err));
	if (ret < 0) {
		pr_err("export: cannot read %s", err);
		goto out;
	}
	if (damaged) {
		pr_err("export: %s is damaged (%s); nothing exported ('stackclock report' shows what is readable)",
		       o.input, damaged);
		goto out;
	}
	if (!an_profile_method(p)) {
		pr_err("export: %s holds no profile data (record one with 'stackclock record')", o.input);
		goto out;
	}
	if (o.value_given && an_profile_method(p) == SC_METHOD_SAMPLE) {
		/* sampling has samples only: a value asked for would be ignored */
		pr_err("export: --value %s needs an instrumentation recording; %s holds samples "
		       "(drop --value: the folded values are samples)", o.value_name, o.input);
		goto out;
	}
	if (o.app_time_given && an_profile_method(p) == SC_METHOD_SAMPLE) {
		pr_err("export: --app-time applies to instrumentation recordings; %s holds samples", o.input);
		goto out;
	}
	if (!strcmp(o.output, "-")) {
		ret = o.format->write(stdout, p, &o.exp, err, sizeof(err));
		if (ret == 0 && fflush(stdout) != 0)
			ret = -errno;
		if (ret == -ENODATA && *err)
			pr_err("export: %s: %s", o.input, err);
		else if (ret < 0)
			pr_err("export: cannot write to standard output: %s",
			       *err ? err : strerror(-ret));
		status = ret < 0;
	} else {
		status = export_to_file(p, &o);
	}
out:
	an_profile_free(p);
	return status;
}
