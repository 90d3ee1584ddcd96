/*
 * export — the profile in the formats other tools read (`stackclock export`,
 * SPEC section 8): pprof, callgrind, folded stacks, a self-contained HTML
 * report; and the timeline (SPEC section 12) as a Chrome trace.
 *
 * Each format is one file holding one struct exp_format and one line in the
 * exp_formats[] table of export.c; a writer walks the profile's
 * calling-context tree (analysis/cct.h) and writes to the FILE it is given,
 * so every export carries the numbers of the report: pprof's flat and cum
 * are the exclusive and inclusive values, callgrind's totals the session
 * totals, the folded values add up to the session total.
 *
 * Contract for writers: write only to f; never change the profile beyond
 * building its tree (an_profile_cct); return 0, or -errno with a one-line
 * reason in err (the caller names the output file and removes it);
 * -ENODATA when the recording lacks what the format needs (chrome: a
 * timeline), err then saying what to record.
 * Nothing is allocated that outlives a call.  Not thread-safe.
 */
#ifndef SC_OUTPUT_EXPORT_H
#define SC_OUTPUT_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/analysis.h"

/* Which instrumentation value the folded stacks carry (--value). */
enum exp_value {
	EXP_VALUE_ELAPSED,        /* elapsed exclusive ns (default) */
	EXP_VALUE_APPLICATION,    /* application exclusive ns */
	EXP_VALUE_CALLS,          /* calls */
};

struct exp_options {
	enum exp_value value;
	enum an_app_time app_time;
	uint64_t timeline_max;    /* html: most calls (and OS events, samples) of
				     the timeline embedded; 0: EXP_TIMELINE_MAX */
};

/* The HTML page's default: the 4,000,000 longest calls (about 15 MB). */
#define EXP_TIMELINE_MAX 4000000u

struct exp_format {
	const char *name;         /* --format NAME */
	const char *default_out;  /* -o when not given */
	bool binary;              /* not for a terminal */
	int (*write)(FILE *f, struct an_profile *p, const struct exp_options *o,
		     char *err, size_t errlen);
};

extern const struct exp_format exp_pprof, exp_callgrind, exp_folded, exp_html, exp_chrome;

/* The format called name, or NULL; "pprof|callgrind|folded|html|chrome". */
const struct exp_format *exp_format_find(const char *name);
const char *exp_format_list(void);

#endif
