/*
 * stackclock diff BASE NEW — two recordings of one method side by side
 * (SPEC section 7): per row of the grouping, base, new and delta of every
 * value, matched by function and module file name so that two builds in
 * different directories still match; rows present on one side only are
 * shown as new or vanished.
 */
#include "analysis/analysis.h"
#include "cmd/cmd.h"
#include "output/output.h"
#include "util/util.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char diff_usage[] =
	"usage: stackclock diff BASE NEW [--by GROUP] [--format table|csv|json]\n"
	"                       [--sort COLUMN] [--top N] [--app-time=interval|exact]\n"
	"\n"
	"  BASE, NEW           two data files of the same method\n"
	"  --by GROUP          function (default), module, thread, process, line,\n"
	"                      callsite; address (sampling)\n"
	"  --format FORMAT     table (default), csv or json\n"
	"  --sort COLUMN       delta_X, base_X or new_X for a column X (a bare X or\n"
	"                      alias sorts by its delta); deltas by absolute value\n"
	"                      (default: delta of the exclusive percentage); the\n"
	"                      table shows X in place of the inclusive percentage\n"
	"  --top N             show the first N rows (0: all)\n"
	"  --app-time MODE     interval (default) or exact, for instrumentation\n"
	"  --width N           table width: names are shortened to fit; default: the\n"
	"                      terminal's (at least 80); not a terminal: names whole\n";

enum { OPT_BY = 256, OPT_FORMAT, OPT_SORT, OPT_TOP, OPT_APP_TIME, OPT_WIDTH };

struct diff_opts {
	const char *path[2];
	const char *sort;
	const struct out_format *format;
	struct an_report_options an;
	struct out_options out;
};

static int parse_args(int argc, char **argv, struct diff_opts *o)
{
	static const struct option longopts[] = {
		{ "by", required_argument, NULL, OPT_BY },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "app-time", required_argument, NULL, OPT_APP_TIME },
		{ "width", required_argument, NULL, OPT_WIDTH },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long v;
	int c, g, npath = 0;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_BY:
			g = an_group_lookup(optarg);
			if (g < 0) {
				pr_err("diff: unknown --by '%s' (use function, module, thread, process, "
				       "callsite, line or address)", optarg);
				return -EINVAL;
			}
			o->an.by = g;
			break;
		case OPT_FORMAT:
			o->format = out_format_find(optarg);
			if (!o->format || !o->format->write_diff) {
				pr_err("diff: unknown --format '%s' (use table, csv or json)", optarg);
				return -EINVAL;
			}
			break;
		case OPT_SORT:
			o->sort = optarg;
			break;
		case OPT_TOP:
			if (cmd_parse_ulong("diff", "--top", optarg, 0, 1000000000UL, &v))
				return -EINVAL;
			o->out.top = v;
			break;
		case OPT_WIDTH:
			if (cmd_parse_ulong("diff", "--width", optarg, 60, 1000, &v))
				return -EINVAL;
			o->out.width = (unsigned)v;
			break;
		case OPT_APP_TIME:
			if (cmd_parse_app_time("diff", optarg, &o->an.app_time))
				return -EINVAL;
			break;
		case 'h':
			fputs(diff_usage, stdout);
			return 1;
		default:
			cmd_bad_option("diff", c, argv);
			return -EINVAL;
		}
	}
	for (; optind < argc; optind++) {
		if (npath == 2) {
			pr_err("diff: unexpected argument '%s' (give two data files: BASE NEW)", argv[optind]);
			return -EINVAL;
		}
		o->path[npath++] = argv[optind];
	}
	if (npath != 2) {
		pr_err("diff: give two data files, BASE and NEW (stackclock diff old.data new.data)");
		return -EINVAL;
	}
	return 0;
}

static const char *method_name(enum sc_method m)
{
	return m == SC_METHOD_SAMPLE ? "sampling" : "instrumentation";
}

static const char *a_method(enum sc_method m)
{
	return m == SC_METHOD_SAMPLE ? "a sampling" : "an instrumentation";
}

int cmd_diff(int argc, char **argv)
{
	struct diff_opts o = {
		.format = &out_table,
		.an = { .by = AN_BY_FUNCTION, .app_time = AN_APP_INTERVAL },
	};
	struct an_profile *p[2] = { NULL, NULL };
	struct an_report *r[2] = { NULL, NULL };
	struct an_diff *d = NULL;
	const char *damaged;
	char err[512];
	int ret, status = 1;

	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret > 0 ? 0 : 2;
	for (int i = 0; i < 2; i++) {
		p[i] = an_profile_new(NULL);
		if (an_profile_load(p[i], o.path[i], &damaged, err, sizeof(err)) < 0) {
			pr_err("diff: cannot read %s", err);
			goto out;
		}
		if (damaged)
			pr_warn("%s is damaged (%s); comparing the data read before the damage",
				o.path[i], damaged);
	}
	if (an_profile_method(p[0]) && an_profile_method(p[1]) &&
	    an_profile_method(p[0]) != an_profile_method(p[1])) {
		pr_err("diff: %s holds %s recording and %s %s one; compare two recordings of the "
		       "same method (record both with the same -m)", o.path[0],
		       a_method(an_profile_method(p[0])), o.path[1],
		       a_method(an_profile_method(p[1])));
		goto out;
	}
	for (int i = 0; i < 2; i++) {
		if (an_report_build(p[i], &o.an, &r[i], err, sizeof(err)) < 0) {
			pr_err("diff: %s: %s", o.path[i], err);
			goto out;
		}
	}
	if (an_diff_build(r[0], r[1], &d, err, sizeof(err)) < 0) {
		pr_err("diff: %s", err);
		goto out;
	}
	if (o.sort && an_diff_sort(d, o.sort) < 0) {
		pr_err("diff: --sort %s: no such column in a diff of %s recordings by %s (use delta_X, "
		       "base_X or new_X with X a report column, e.g. delta_%s)", o.sort,
		       method_name(r[0]->session.method), an_group_name(o.an.by),
		       r[0]->session.method == SC_METHOD_SAMPLE ? "exclusive_pct" :
		       "elapsed_exclusive_pct");
		status = 2;
		goto out;
	}
	if (!o.out.width)
		o.out.width = out_terminal_width(STDOUT_FILENO);
	ret = o.format->write_diff(stdout, d, &o.out);
	if (ret < 0) {
		pr_err("diff: writing the comparison failed: %s", strerror(-ret));
		goto out;
	}
	status = 0;
out:
	an_diff_free(d);
	for (int i = 0; i < 2; i++) {
		an_report_free(r[i]);
		an_profile_free(p[i]);
	}
	return status;
}
