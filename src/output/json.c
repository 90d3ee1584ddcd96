/*
 * --format json: {"session": {...}, "rows": [...]} with SPEC section 5's
 * names.  Times are integers in nanoseconds, percentages numbers, absent
 * values null (the file and line of a frame without line information),
 * addresses "0x..." strings (a 64-bit address does not survive a JavaScript
 * number).  One row per line, so the output also greps well.
 */
#include "output/output.h"

#include <inttypes.h>

static void value(FILE *f, const struct an_value *v, enum an_type type)
{
	if (!v->present) {
		fputs("null", f);
		return;
	}
	switch (type) {
	case AN_T_STR:
		out_json_string(f, v->s);
		break;
	case AN_T_PCT:
		fprintf(f, "%.4f", v->d);
		break;
	case AN_T_ADDR:
		fprintf(f, "\"0x%" PRIx64 "\"", v->u);
		break;
	default:
		fprintf(f, "%" PRIu64, v->u);
		break;
	}
}

static void key(FILE *f, const char *k)
{
	fprintf(f, ",\n    \"%s\": ", k);
}

static void u64_field(FILE *f, const char *k, uint64_t v)
{
	key(f, k);
	fprintf(f, "%" PRIu64, v);
}

static void os_events(FILE *f, const struct an_session *s)
{
	bool first = true;

	key(f, "os_events");
	fputc('{', f);
	/* a category the kernel did not let us observe has no count: null */
	for (int c = 0; c < SC_OS_NCAT; c++) {
		fprintf(f, "\"%s\": ", sc_os_cat_name(c));
		if (s->os_observed & SC_OS_BIT(c))
			fprintf(f, "%" PRIu64 ", ", s->os_count[c]);
		else
			fputs("null, ", f);
	}
	fputs("\"requested\": [", f);
	for (int c = 0; c < SC_OS_NCAT; c++)
		if (s->os_requested & SC_OS_BIT(c)) {
			fprintf(f, "%s\"%s\"", first ? "" : ", ", sc_os_cat_name(c));
			first = false;
		}
	fputs("], \"not_observed\": [", f);
	first = true;
	for (int c = 0; c < SC_OS_NCAT; c++)
		if (!(s->os_observed & SC_OS_BIT(c))) {
			fprintf(f, "%s\"%s\"", first ? "" : ", ", sc_os_cat_name(c));
			first = false;
		}
	fputs("]}", f);
}

static void session(FILE *f, const struct an_report *r)
{
	const struct an_session *s = &r->session;
	bool sample = s->method == SC_METHOD_SAMPLE;

	fprintf(f, "  \"session\": {\n    \"method\": \"%s\"",
		sample ? "sampling" : "instrumentation");
	key(f, "command");
	fputc('[', f);
	for (uint32_t i = 0; i < s->argc; i++) {
		if (i)
			fputs(", ", f);
		out_json_string(f, s->argv[i]);
	}
	fputc(']', f);
	u64_field(f, "processes", s->processes);
	u64_field(f, "threads", s->threads);
	u64_field(f, "duration_ns", s->duration_ns);
	key(f, "complete");
	fputs(s->have_end ? "true" : "false", f);
	key(f, "exit_status");
	if (s->have_end)
		fprintf(f, "%d", s->exit_status);
	else
		fputs("null", f);
	key(f, "attached");
	fputs(s->attached ? "true" : "false", f);
	if (sample) {
		u64_field(f, "samples", s->samples);
		u64_field(f, "frequency_hz", s->frequency_hz);
		u64_field(f, "lost_samples", s->lost_samples);
		key(f, "root_reached_pct");
		fprintf(f, "%.4f", s->root_reached_pct);
		key(f, "truncated_pct");
		fprintf(f, "%.4f", s->truncated_pct);
		u64_field(f, "unwind_failures", s->unwind_failures);
	} else {
		u64_field(f, "elapsed_inclusive_ns", s->elapsed_inclusive_ns);
		u64_field(f, "application_inclusive_ns", s->application_inclusive_ns);
		key(f, "app_time");
		fputs(s->app_time == AN_APP_EXACT ? "\"exact\"" : "\"interval\"", f);
		os_events(f, s);
		u64_field(f, "repairs", s->repairs);
		u64_field(f, "open_frames", s->open_frames);
		u64_field(f, "lost_events", s->lost_events);
		u64_field(f, "lost_os_records", s->lost_os_records);
		u64_field(f, "events", s->events);
	}
	key(f, "unnamed_pct");
	fprintf(f, "%.4f", s->unnamed_pct);
	key(f, "unnamed_modules");
	fputc('[', f);
	for (size_t i = 0; i < s->nunnamed; i++) {
		fputs(i ? ", {\"module\": " : "{\"module\": ", f);
		out_json_string(f, s->unnamed[i].module);
		fprintf(f, ", \"%s\": %" PRIu64 ", \"pct\": %.4f, \"hint\": ",
			sample ? "exclusive_samples" : "elapsed_exclusive_ns",
			s->unnamed[i].value, s->unnamed[i].pct);
		out_json_string(f, s->unnamed[i].hint);
		fputc('}', f);
	}
	fputc(']', f);
	key(f, "by");
	out_json_string(f, an_group_name(r->by));
	u64_field(f, "rows_total", r->nrows);
	key(f, "damaged");
	if (s->damage)
		out_json_string(f, s->damage);
	else
		fputs("null", f);
	u64_field(f, "bad_records", s->bad_records);
	fputs("\n  }", f);
}

static int write_json(FILE *f, const struct an_report *r, const struct out_options *o)
{
	size_t n = out_rows_shown(r, o);

	fputs("{\n", f);
	session(f, r);
	fputs(",\n  \"rows\": [", f);
	for (size_t i = 0; i < n; i++) {
		const struct an_row *row = &r->rows[i];

		fputs(i ? ",\n    {" : "\n    {", f);
		for (unsigned c = 0; c < r->ncols; c++) {
			const struct an_column_info *ci = an_column_info(r->cols[c]);

			fprintf(f, "%s\"%s\": ", c ? ", " : "", ci->name);
			value(f, &row->v[r->cols[c]], ci->type);
		}
		fputc('}', f);
	}
	fputs(n ? "\n  ]\n}\n" : "]\n}\n", f);
	return out_finish(f);
}

const struct out_format out_json = { "json", write_json };
