/*
 * stackclock report — read a data file, group it (--by), sort it, and
 * write it as a table, CSV or JSON (src/analysis, src/output); or show
 * the call tree (--tree) or the callers and callees of a function
 * (--caller-callee), SPEC section 6.
 *
 * Options are all checked before the file is opened, so a usage error is
 * reported as such whatever the file.  --check verifies SPEC's invariants
 * on every row (before --top) and fails with the violated one: the test
 * suite runs it on every report it makes.
 */
#include "analysis/analysis.h"
#include "cmd/cmd.h"
#include "output/output.h"
#include "util/util.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char report_usage[] =
	"usage: stackclock report [-i FILE] [--by GROUP] [--format table|csv|json]\n"
	"                         [--sort COLUMN] [--top N] [--app-time=interval|exact] [--raw-times]\n"
	"                         [--check]\n"
	"                         [--tree [--threshold PCT] [--depth N] | --caller-callee FUNCTION]\n"
	"\n"
	"  -i, --input FILE    data file, default stackclock.data\n"
	"  --by GROUP          function (default), module, thread, process, line,\n"
	"                      callsite; address (sampling)\n"
	"  --format FORMAT     table (default), csv or json\n"
	"  --sort COLUMN       a JSON column name, or ei, ee, ai, ae, calls,\n"
	"                      inclusive, exclusive, function, ...\n"
	"                      (default: ei, or inclusive for sampling)\n"
	"  --top N             show the first N rows (0: all); the first N roots\n"
	"                      with --tree, N rows per list with --caller-callee\n"
	"  --app-time MODE     interval (default): an OS-bound interval is not\n"
	"                      application time; exact: only measured OS time is removed\n"
	"  --raw-times         instrumentation: the values with the probes' own cost left\n"
	"                      in (by default it is taken out); no per-call min and max\n"
	"  --width N           table width: names and modules are shortened to fit;\n"
	"                      default: the terminal's (at least 80); not a terminal:\n"
	"                      no limit, names whole\n"
	"  --check             verify the SPEC invariants; fail naming a violation\n"
	"  --tree              the call tree (--by function: merged; thread, process:\n"
	"                      one tree each), children by inclusive value, hot path marked\n"
	"  --threshold PCT     hide tree nodes below PCT % of the session total\n"
	"                      (default 0.5 for the table, 0 for CSV and JSON)\n"
	"  --depth N           show N levels of functions (0: all)\n"
	"  --caller-callee F   the function(s) named F, their callers and callees\n";

/* Functions the table's summary lists as doing most individual work. */
#define REPORT_HIGHLIGHTS 5

enum { OPT_BY = 256, OPT_FORMAT, OPT_SORT, OPT_TOP, OPT_APP_TIME, OPT_CHECK, OPT_WIDTH,
	OPT_TREE, OPT_THRESHOLD, OPT_DEPTH, OPT_CALLERS, OPT_RAW_TIMES };

struct report_opts {
	const char *input;
	const char *sort;
	const struct out_format *format;
	struct an_report_options an;
	struct out_options out;
	bool app_time_given;
	bool raw_times;
	bool check;
	bool by_given;
	bool tree;
	double threshold;         /* < 0: the format's default */
	unsigned long depth;
	bool depth_given;
	const char *callers;      /* --caller-callee */
};

static int parse_args(int argc, char **argv, struct report_opts *o)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "by", required_argument, NULL, OPT_BY },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "app-time", required_argument, NULL, OPT_APP_TIME },
		{ "raw-times", no_argument, NULL, OPT_RAW_TIMES },
		{ "width", required_argument, NULL, OPT_WIDTH },
		{ "check", no_argument, NULL, OPT_CHECK },
		{ "tree", no_argument, NULL, OPT_TREE },
		{ "threshold", required_argument, NULL, OPT_THRESHOLD },
		{ "depth", required_argument, NULL, OPT_DEPTH },
		{ "caller-callee", required_argument, NULL, OPT_CALLERS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long v;
	int c, g;

	opterr = 0;     /* our own one-line messages */
	optind = 1;
	while ((c = getopt_long(argc, argv, ":i:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			o->input = optarg;
			break;
		case OPT_BY:
			g = an_group_lookup(optarg);
			if (g < 0) {
				pr_err("report: unknown --by '%s' (use function, module, thread, process, "
				       "callsite, line or address)", optarg);
				return -EINVAL;
			}
			o->an.by = g;
			o->by_given = true;
			break;
		case OPT_FORMAT:
			o->format = out_format_find(optarg);
			if (!o->format) {
				pr_err("report: unknown --format '%s' (use %s)", optarg, out_format_list());
				return -EINVAL;
			}
			break;
		case OPT_SORT:
			/* aliases are resolved against the report's columns later */
			if (!an_column_known(optarg)) {
				pr_err("report: unknown --sort column '%s' (use a JSON column name such as "
				       "elapsed_inclusive_ns, or ei, ee, ai, ae, calls, inclusive, "
				       "exclusive, function)", optarg);
				return -EINVAL;
			}
			o->sort = optarg;
			break;
		case OPT_TOP:
			if (cmd_parse_ulong("report", "--top", optarg, 0, 1000000000UL, &v))
				return -EINVAL;
			o->out.top = v;
			break;
		case OPT_WIDTH:
			/* a table needs at least 60 columns */
			if (cmd_parse_ulong("report", "--width", optarg, 60, 1000, &v))
				return -EINVAL;
			o->out.width = (unsigned)v;
			break;
		case OPT_APP_TIME:
			if (cmd_parse_app_time("report", optarg, &o->an.app_time))
				return -EINVAL;
			o->app_time_given = true;
			break;
		case OPT_RAW_TIMES:
			o->raw_times = true;
			break;
		case OPT_CHECK:
			o->check = true;
			break;
		case OPT_TREE:
			o->tree = true;
			break;
		case OPT_THRESHOLD: {
			char *end;

			errno = 0;
			o->threshold = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o->threshold >= 0 && o->threshold <= 100)) {
				pr_err("report: --threshold '%s' is not a percentage from 0 to 100", optarg);
				return -EINVAL;
			}
			break;
		}
		case OPT_DEPTH:
			if (cmd_parse_ulong("report", "--depth", optarg, 0, 1000000UL, &o->depth))
				return -EINVAL;
			o->depth_given = true;
			break;
		case OPT_CALLERS:
			o->callers = optarg;
			break;
		case 'h':
			fputs(report_usage, stdout);
			return 1;
		default:
			cmd_bad_option("report", c, argv);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		pr_err("report: unexpected argument '%s' (the data file is given with -i)", argv[optind]);
		return -EINVAL;
	}
	if (o->tree && o->callers) {
		pr_err("report: --tree and --caller-callee are two views; give one");
		return -EINVAL;
	}
	if (!o->tree && (o->threshold >= 0 || o->depth_given)) {
		pr_err("report: --threshold and --depth apply to the call tree; add --tree");
		return -EINVAL;
	}
	if (o->tree && o->sort) {
		pr_err("report: --sort does not apply to --tree (children are ordered by inclusive value); "
		       "drop it");
		return -EINVAL;
	}
	if (o->callers && o->by_given && o->an.by != AN_BY_FUNCTION) {
		pr_err("report: --caller-callee shows functions; drop --by %s", an_group_name(o->an.by));
		return -EINVAL;
	}
	if (o->tree && o->an.by != AN_BY_FUNCTION && o->an.by != AN_BY_THREAD &&
	    o->an.by != AN_BY_PROCESS) {
		pr_err("report: --tree is by function (merged), thread or process (one tree each), "
		       "not by %s", an_group_name(o->an.by));
		return -EINVAL;
	}
	return 0;
}

/* "function, module, calls, ...": the report's columns, for --sort's error. */
static const char *column_names(const struct an_report *r, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (unsigned i = 0; i < r->ncols && n < len; i++)
		n += snprintf(buf + n, len - n, "%s%s", i ? ", " : "",
			      an_column_info(r->cols[i])->name);
	return buf;
}

static int report_tree(struct an_profile *p, const struct report_opts *o)
{
	struct an_tree_options to = {
		.by = o->an.by,
		.app_time = o->an.app_time,
		.threshold_pct = o->threshold >= 0 ? o->threshold : o->format == &out_table ? 0.5 : 0,
		.max_depth = (uint32_t)o->depth,
	};
	struct an_tree *t = NULL;
	char err[512], why[512];
	int ret, status = 1;

	ret = an_tree_build(p, &to, &t, err, sizeof(err));
	if (ret < 0) {
		pr_err("report: %s: %s", o->input, err);
		return 1;
	}
	ret = o->format->write_tree(stdout, t, &o->out);
	if (ret < 0) {
		pr_err("report: writing the tree failed: %s", strerror(-ret));
		goto out;
	}
	if (o->check && an_tree_check(t, why, sizeof(why)) < 0) {
		pr_err("report: %s: SPEC invariant violated: %s", o->input, why);
		goto out;
	}
	status = 0;
out:
	an_tree_free(t);
	return status;
}

static int report_callers(struct an_profile *p, const struct report_opts *o)
{
	struct an_callers *c = NULL;
	char err[1024], why[512];
	int ret, status = 1;

	ret = an_callers_build(p, o->callers, o->an.app_time, &c, err, sizeof(err));
	if (ret < 0) {
		pr_err("report: %s: %s", o->input, err);
		return 1;
	}
	if (o->sort) {
		int col = an_column_lookup_among(c->cols, c->ncols, o->sort);

		if (col < 0 || an_callers_sort(c, col) < 0) {
			pr_err("report: --sort %s: callers and callees have no such column "
			       "(use a value column such as %s)", o->sort,
			       an_column_info(c->cols[2])->name);
			status = 2;
			goto out;
		}
	}
	ret = o->format->write_callers(stdout, c, &o->out);
	if (ret < 0) {
		pr_err("report: writing the callers and callees failed: %s", strerror(-ret));
		goto out;
	}
	if (o->check && an_callers_check(c, why, sizeof(why)) < 0) {
		pr_err("report: %s: SPEC invariant violated: %s", o->input, why);
		goto out;
	}
	status = 0;
out:
	an_callers_free(c);
	return status;
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o = {
		.input = "stackclock.data",
		.format = &out_table,
		.an = { .by = AN_BY_FUNCTION, .app_time = AN_APP_INTERVAL },
		.threshold = -1,
	};
	struct an_profile *p = NULL;
	struct an_report *r = NULL;
	struct an_highlights *h = NULL;
	const char *damaged = NULL;
	char err[512], why[512], names[1024];
	int ret, status = 1;

	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret > 0 ? 0 : 2;

	p = an_profile_new(NULL);
	an_profile_set_raw_times(p, o.raw_times);
	ret = an_profile_load(p, o.input, &damaged, err, sizeof(err));
	if (ret < 0) {
		/* err names the file, the problem and what to do (a missing file:
		 * record one with 'stackclock record') */
		pr_err("report: cannot read %s", err);
		goto out;
	}
	if (damaged)
		pr_warn("%s is damaged (%s); showing the data read before the damage",
			o.input, damaged);
	{
		/* SPEC section 14's records that do not add up: said once here
		 * for every format (the table's summary and JSON say it too) */
		struct an_session ss;

		an_profile_session(p, &ss);
		if (ss.shares_damage)
			pr_warn("%s: sampled shares left out, their records do not add up: %s",
				o.input, ss.shares_damage);
		if (ss.causes_damage)
			pr_warn("%s: repairs by cause left out, their records do not add up: %s",
				o.input, ss.causes_damage);
	}
	if (o.app_time_given && an_profile_method(p) == SC_METHOD_SAMPLE) {
		pr_err("report: --app-time applies to instrumentation recordings; %s holds samples", o.input);
		goto out;
	}
	if (o.raw_times && an_profile_method(p) == SC_METHOD_SAMPLE) {
		pr_err("report: --raw-times applies to instrumentation recordings; %s holds samples", o.input);
		goto out;
	}
	if (o.raw_times && (o.an.by == AN_BY_CALLSITE || o.an.by == AN_BY_LINE)) {
		pr_err("report: call sites (which --by %s is made of) are kept only with the probes' "
		       "cost taken out; drop --raw-times, or use --by function", an_group_name(o.an.by));
		goto out;
	}
	if (!o.out.width)
		o.out.width = out_terminal_width(STDOUT_FILENO);
	if (o.tree || o.callers) {
		status = o.tree ? report_tree(p, &o) : report_callers(p, &o);
		goto out;
	}
	ret = an_report_build(p, &o.an, &r, err, sizeof(err));
	if (ret < 0) {
		pr_err("report: %s: %s", o.input, err);
		goto out;
	}
	if (o.sort && an_report_sort_by_name(r, o.sort) < 0) {
		pr_err("report: --sort %s: no such column in a %s report by %s (use one of: %s)",
		       o.sort, r->session.method == SC_METHOD_SAMPLE ? "sampling" : "instrumentation",
		       an_group_name(r->by), column_names(r, names, sizeof(names)));
		status = 2;
		goto out;
	}
	/* the table's first screen says where the work is (highlights) */
	if (o.format == &out_table && an_highlights_build(p, o.an.app_time, REPORT_HIGHLIGHTS,
							   &h, err, sizeof(err)) == 0)
		o.out.highlights = h;
	ret = o.format->write(stdout, r, &o.out);
	if (ret < 0) {
		pr_err("report: writing the report failed: %s", strerror(-ret));
		goto out;
	}
	if (o.check && !r->nrows && (damaged || !r->session.argc)) {
		pr_err("report: --check: nothing in %s could be read (%s); record it again", o.input,
		       damaged ? damaged : "no session record");
		goto out;
	}
	if (o.check && an_report_check(r, why, sizeof(why)) < 0) {
		pr_err("report: %s: SPEC invariant violated: %s", o.input, why);
		goto out;
	}
	status = 0;
out:
	an_highlights_free(h);
	an_report_free(r);
	an_profile_free(p);
	return status;
}
