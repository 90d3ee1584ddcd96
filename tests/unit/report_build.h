/*
 * report_build.h — the unit tests' way to build a report: built, and its
 * SPEC invariants checked (an_report_check), each failure one TAP line
 * naming `what` and the grouping.  Include after tap.h and
 * analysis/analysis.h.
 */
#ifndef SC_TEST_REPORT_BUILD_H
#define SC_TEST_REPORT_BUILD_H

static struct an_report *build_checked(struct an_profile *p, enum an_group by, enum an_app_time mode,
				       const char *what)
{
	struct an_report_options o = { by, mode };
	struct an_report *r = NULL;
	char err[256], why[256];

	if (an_report_build(p, &o, &r, err, sizeof(err)) < 0) {
		ok(0, "%s: report by %s builds (%s)", what, an_group_name(by), err);
		return NULL;
	}
	if (an_report_check(r, why, sizeof(why)) < 0) {
		ok(0, "%s: invariants by %s: %s", what, an_group_name(by), why);
		an_report_free(r);
		return NULL;
	}
	return r;
}

#endif
