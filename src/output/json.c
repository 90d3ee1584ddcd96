/*
 * --format json: {"session": {...}, "rows": [...]} with SPEC section 5's
 * names.  Times are integers in nanoseconds, percentages numbers, absent
 * values null (the file and line of a frame without line information),
 * addresses "0x..." strings (a 64-bit address does not survive a JavaScript
 * number).  One row per line, so the output also greps well.
 */
#include "format/execcheck.h"
#include "output/output.h"
#include "record/reloc.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

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
	case AN_T_BOOL:
		fputs(v->u ? "true" : "false", f);
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

/* "NAME": {...}: the session summary, for every report and view. */
static void session_obj(FILE *f, const char *name, const struct an_session *s, enum an_group by,
			size_t rows_total)
{
	bool sample = s->method == SC_METHOD_SAMPLE;

	fprintf(f, "  \"%s\": {\n    \"method\": \"%s\"", name,
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
	u64_field(f, "images", s->images);
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
		if (s->have_causes) {
			/* SPEC section 14: the first four sum to repairs, the
			 * last two (exit, kill) to open_frames */
			key(f, "repairs_by_cause");
			fputc('{', f);
			for (unsigned c = 0; c < SC_REPAIR_NCAUSE; c++)
				fprintf(f, "%s\"%s\": %" PRIu64, c ? ", " : "", sc_repair_cause_name(c),
					s->repairs_by_cause[c]);
			fputc('}', f);
		} else if (s->causes_damage) {
			key(f, "repairs_by_cause_damaged");
			out_json_string(f, s->causes_damage);
		}
		if (s->have_shares) {
			/* the program's own samples, the shares' denominator */
			u64_field(f, "samples", s->samples);
			u64_field(f, "probe_samples", s->probe_samples);
			u64_field(f, "frequency_hz", s->frequency_hz);
		} else if (s->shares_damage) {
			key(f, "sampled_shares_damaged");
			out_json_string(f, s->shares_damage);
		}
		u64_field(f, "lost_events", s->lost_events);
		u64_field(f, "lost_os_records", s->lost_os_records);
		u64_field(f, "events", s->events);
		key(f, "probe_cost_ns");
		fprintf(f, "%.3f", s->probe_cost_ns);
		u64_field(f, "probe_removed_ns", s->probe_removed_ns);
		u64_field(f, "resolution_ns", s->resolution_ns);
		key(f, "raw_times");
		fputs(s->raw_times ? "true" : "false", f);
		if (s->have_patch) {
			bool first = true;

			u64_field(f, "patched", s->patched);
			u64_field(f, "unhooked_returns", s->unhooked_returns);
			key(f, "unpatched");
			fputc('{', f);
			for (unsigned r = 1; r < PATCH_NREASONS; r++) {
				if (!s->unpatched[r])
					continue;
				fputs(first ? "" : ", ", f);
				out_json_string(f, patch_reason_name(r));
				fprintf(f, ": %" PRIu64, s->unpatched[r]);
				first = false;
			}
			fputc('}', f);
		}
	}
	key(f, "unrecorded");
	fputc('[', f);
	for (size_t i = 0; i < s->nunrecorded; i++) {
		const struct an_unrecorded *u = &s->unrecorded[i];

		fprintf(f, "%s{\"pid\": %" PRIu32 ", \"program\": ", i ? ", " : "", u->pid);
		out_json_string(f, u->path);
		fputs(", \"reason\": ", f);
		out_json_string(f, sc_exec_why_text(u->reason));
		fputc('}', f);
	}
	fputc(']', f);
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
	out_json_string(f, an_group_name(by));
	u64_field(f, "rows_total", rows_total);
	key(f, "damaged");
	if (s->damage)
		out_json_string(f, s->damage);
	else
		fputs("null", f);
	u64_field(f, "bad_records", s->bad_records);
	fputs("\n  }", f);
}

/* The fields of a row, "name": value, ... (no braces). */
static void row_fields(FILE *f, const struct an_row *row, const enum an_col *cols, unsigned ncols)
{
	for (unsigned c = 0; c < ncols; c++) {
		const struct an_column_info *ci = an_column_info(cols[c]);

		fprintf(f, "%s\"%s\": ", c ? ", " : "", ci->name);
		value(f, &row->v[cols[c]], ci->type);
	}
}

/* "name": [rows], at most n rows, one per line. */
static void row_list(FILE *f, const char *name, const struct an_row *rows, size_t n,
		     const enum an_col *cols, unsigned ncols, const char *indent)
{
	fprintf(f, "%s\"%s\": [", indent, name);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s\n%s  {", i ? "," : "", indent);
		row_fields(f, &rows[i], cols, ncols);
		fputc('}', f);
	}
	fprintf(f, n ? "\n%s]" : "]", indent);
}

/* "session": {...}, "rows": [...] of a report, its first n rows. */
static void report_fields(FILE *f, const struct an_report *r, size_t n)
{
	session_obj(f, "session", &r->session, r->by, r->nrows);
	fputs(",\n  \"rows\": [", f);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ",\n    {" : "\n    {", f);
		row_fields(f, &r->rows[i], r->cols, r->ncols);
		fputc('}', f);
	}
	fputs(n ? "\n  ]" : "]", f);
}

void out_json_report_fields(FILE *f, const struct an_report *r)
{
	report_fields(f, r, r->nrows);
}

static int write_json(FILE *f, const struct an_report *r, const struct out_options *o)
{
	fputs("{\n", f);
	report_fields(f, r, out_rows_shown(r, o));
	fputs("\n}\n", f);
	return out_finish(f);
}

/* ---- call tree: {"session": ..., "tree": [node...]} --------------------- */

static void indent(FILE *f, uint32_t depth)
{
	fputc('\n', f);
	for (uint32_t i = 0; i < 2 + 2 * depth && i < 64; i++)
		fputc(' ', f);
}

/*
 * Nodes depth first without recursion (trees can be thousands deep): a
 * node's fields, "hot", "hidden" (children below the threshold or
 * --depth) and "children"; the children array closes when its last child
 * has closed.
 */
static int write_json_tree(FILE *f, const struct an_tree *t, const struct out_options *o)
{
	struct frame {
		const uint32_t *kids;
		size_t n, next;
	} *st = NULL;
	size_t sp = 0, cap = 0, nroots = t->nroots;
	struct an_row row;

	if (o->top && o->top < nroots)
		nroots = o->top;
	fputs("{\n", f);
	session_obj(f, "session", &t->session, t->by, t->nroots);
	fprintf(f, ",\n  \"hidden_roots\": %u", t->root_hidden + (unsigned)(t->nroots - nroots));
	fputs(",\n  \"tree\": [", f);
	cap = 64;
	st = malloc(cap * sizeof(*st));
	if (!st)
		return -ENOMEM;
	st[sp++] = (struct frame){ t->roots, nroots, 0 };
	while (sp) {
		struct frame *fr = &st[sp - 1];
		uint32_t id;
		size_t nk;
		const uint32_t *kids;

		if (fr->next == fr->n) {
			sp--;
			if (sp) {
				if (fr->n)
					indent(f, (uint32_t)sp);
				fputs("]}", f);
			}
			continue;
		}
		id = fr->kids[fr->next++];
		if (fr->next > 1)
			fputc(',', f);
		indent(f, (uint32_t)sp);
		an_tree_row(t, id, &row);
		fputc('{', f);
		row_fields(f, &row, t->cols, t->ncols);
		fprintf(f, ", \"hot\": %s, \"hidden\": %u, \"children\": [",
			t->hot[id] ? "true" : "false", t->hidden[id]);
		nk = an_tree_children(t, id, &kids);
		if (sp == cap) {
			struct frame *grown = realloc(st, 2 * cap * sizeof(*st));

			if (!grown) {
				free(st);
				return -ENOMEM;
			}
			st = grown;
			cap *= 2;
		}
		st[sp++] = (struct frame){ kids, nk, 0 };
	}
	free(st);
	fputs(nroots ? "\n  ]\n}\n" : "]\n}\n", f);
	return out_finish(f);
}

/* ---- callers and callees ------------------------------------------------ */

static void callers_entry(FILE *f, const struct an_callers *c, const struct an_callers_entry *e,
			  const struct out_options *o, const char *ind)
{
	size_t ncr = o->top && o->top < e->ncallers ? o->top : e->ncallers;
	size_t nce = o->top && o->top < e->ncallees ? o->top : e->ncallees;

	fprintf(f, "%s\"function\": {", ind);
	row_fields(f, &e->self, c->self_cols, c->nself_cols);
	fputs("},\n", f);
	row_list(f, "callers", e->callers, ncr, c->cols, c->ncols, ind);
	fputs(",\n", f);
	row_list(f, "callees", e->callees, nce, c->cols, c->ncols, ind);
}

/*
 * SPEC's shape, {"session", "function", "callers", "callees"}, for one
 * function; when the name matches several (one per module), the same
 * objects without the session in "functions": [...].
 */
static int write_json_callers(FILE *f, const struct an_callers *c, const struct out_options *o)
{
	fputs("{\n", f);
	session_obj(f, "session", &c->session, AN_BY_FUNCTION, c->nfn);
	fputs(",\n", f);
	if (c->nfn == 1) {
		callers_entry(f, c, &c->fn[0], o, "  ");
	} else {
		fputs("  \"functions\": [", f);
		for (size_t i = 0; i < c->nfn; i++) {
			fputs(i ? ",\n    {\n" : "\n    {\n", f);
			callers_entry(f, c, &c->fn[i], o, "      ");
			fputs("\n    }", f);
		}
		fputs("\n  ]", f);
	}
	fputs("\n}\n", f);
	return out_finish(f);
}

/* ---- diff: {"base": session, "new": session, "rows": [...]} -------------- */

static void diff_value(FILE *f, const struct an_diff_row *row, enum an_col c, enum an_diff_part part)
{
	if (an_column_info(c)->type == AN_T_PCT)
		fprintf(f, "%.4f", an_diff_value(row, c, part));
	else
		fprintf(f, "%" PRId64, out_diff_int(row, c, part));
}

static int write_json_diff(FILE *f, const struct an_diff *d, const struct out_options *o)
{
	static const char *const part[] = { "base_", "new_", "delta_" };
	size_t n = o->top && o->top < d->nrows ? o->top : d->nrows;

	fputs("{\n", f);
	session_obj(f, "base", &d->base->session, d->base->by, d->base->nrows);
	fputs(",\n", f);
	session_obj(f, "new", &d->new->session, d->new->by, d->new->nrows);
	fputs(",\n  \"rows\": [", f);
	for (size_t i = 0; i < n; i++) {
		const struct an_diff_row *row = &d->rows[i];

		fputs(i ? ",\n    {" : "\n    {", f);
		for (unsigned k = 0; k < d->nkeys; k++) {
			const struct an_column_info *ci = an_column_info(d->keys[k]);

			fprintf(f, "\"%s\": ", ci->name);
			value(f, an_diff_key(row, d->keys[k]), ci->type);
			fputs(", ", f);
		}
		fprintf(f, "\"status\": \"%s\"", out_diff_status(row));
		for (unsigned k = 0; k < d->nvals; k++)
			for (int pt = 0; pt < 3; pt++) {
				fprintf(f, ", \"%s%s\": ", part[pt], an_column_info(d->vals[k])->name);
				diff_value(f, row, d->vals[k], (enum an_diff_part)pt);
			}
		fputc('}', f);
	}
	fputs(n ? "\n  ]\n}\n" : "]\n}\n", f);
	return out_finish(f);
}

const struct out_format out_json = {
	"json", write_json, write_json_tree, write_json_callers, write_json_diff,
};
