/*
 * --format csv: one header line of SPEC section 5's column names, then one
 * line per row.  Fields are quoted as RFC 4180 says (a field holding a
 * comma, a double quote or a line break is enclosed in double quotes, its
 * quotes doubled); names are full, never shortened; absent values are
 * empty fields.  Lines end in "\n" for Unix tools (RFC 4180 readers accept
 * it).  The session summary is not repeated here: use JSON for it.
 */
#include "output/output.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void field_str(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void field(FILE *f, const struct an_value *v, enum an_col c)
{
	if (!v->present)
		return;
	switch (an_column_info(c)->type) {
	case AN_T_STR:
		field_str(f, v->s);
		break;
	case AN_T_PCT:
		fprintf(f, "%.4f", v->d);
		break;
	case AN_T_ADDR:
		fprintf(f, "0x%" PRIx64, v->u);
		break;
	case AN_T_BOOL:
		fputs(v->u ? "true" : "false", f);
		break;
	default:
		fprintf(f, "%" PRIu64, v->u);
		break;
	}
}

static void header(FILE *f, const char *prefix, const enum an_col *cols, unsigned ncols)
{
	fputs(prefix, f);
	for (unsigned c = 0; c < ncols; c++)
		fprintf(f, "%s%s", c || *prefix ? "," : "", an_column_info(cols[c])->name);
	fputc('\n', f);
}

static void fields(FILE *f, const struct an_row *row, const enum an_col *cols, unsigned ncols,
		   bool lead)
{
	for (unsigned c = 0; c < ncols; c++) {
		if (c || lead)
			fputc(',', f);
		field(f, &row->v[cols[c]], cols[c]);
	}
	fputc('\n', f);
}

static int write_csv(FILE *f, const struct an_report *r, const struct out_options *o)
{
	size_t n = out_rows_shown(r, o);

	header(f, "", r->cols, r->ncols);
	for (size_t i = 0; i < n; i++)
		fields(f, &r->rows[i], r->cols, r->ncols, false);
	return out_finish(f);
}

/*
 * The call tree, one line per shown node in depth-first order: "id" (the
 * node's id), "parent" (empty for a root), "depth" (1 for a root),
 * "hot", "hidden" (children below the threshold or --depth), then the
 * node's row fields.  The parent column rebuilds the tree.
 */
static int write_csv_tree(FILE *f, const struct an_tree *t, const struct out_options *o)
{
	struct frame {
		const uint32_t *kids;
		size_t n, next;
		uint32_t parent;
	} *st;
	size_t sp = 0, cap = 64, nroots = o->top && o->top < t->nroots ? o->top : t->nroots;
	struct an_row row;

	st = malloc(cap * sizeof(*st));
	if (!st)
		return -ENOMEM;
	header(f, "id,parent,depth,hot,hidden", t->cols, t->ncols);
	st[sp++] = (struct frame){ t->roots, nroots, 0, UINT32_MAX };
	while (sp) {
		struct frame *fr = &st[sp - 1];
		uint32_t id;
		const uint32_t *kids;
		size_t nk;

		if (fr->next == fr->n) {
			sp--;
			continue;
		}
		id = fr->kids[fr->next++];
		fprintf(f, "%u,", id);
		if (fr->parent != UINT32_MAX)
			fprintf(f, "%u", fr->parent);
		fprintf(f, ",%zu,%s,%u", sp, t->hot[id] ? "true" : "false", t->hidden[id]);
		an_tree_row(t, id, &row);
		fields(f, &row, t->cols, t->ncols, true);
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
		st[sp++] = (struct frame){ kids, nk, 0, id };
	}
	free(st);
	return out_finish(f);
}

/*
 * Callers and callees: one table, "role" (function, caller, callee) and
 * "of" (the function the line is about) before the row's fields; the
 * function's own line carries the per-call columns too.
 */
static int write_csv_callers(FILE *f, const struct an_callers *c, const struct out_options *o)
{
	header(f, "role,of", c->self_cols, c->nself_cols);
	for (size_t i = 0; i < c->nfn; i++) {
		const struct an_callers_entry *e = &c->fn[i];
		const char *of = e->self.v[AN_COL_FUNCTION].s;
		size_t ncr = o->top && o->top < e->ncallers ? o->top : e->ncallers;
		size_t nce = o->top && o->top < e->ncallees ? o->top : e->ncallees;
		const struct {
			const char *role;
			const struct an_row *rows;
			size_t n;
		} parts[3] = { { "function", &e->self, 1 }, { "caller", e->callers, ncr },
			       { "callee", e->callees, nce } };

		for (int p = 0; p < 3; p++)
			for (size_t k = 0; k < parts[p].n; k++) {
				const struct an_row *row = &parts[p].rows[k];

				fprintf(f, "%s,", parts[p].role);
				field_str(f, of);
				/* the self columns are a superset of the edge columns */
				for (unsigned col = 0; col < c->nself_cols; col++) {
					fputc(',', f);
					field(f, &row->v[c->self_cols[col]], c->self_cols[col]);
				}
				fputc('\n', f);
			}
	}
	return out_finish(f);
}

/* Diff: key columns, "status", then base_X, new_X, delta_X per value. */
static int write_csv_diff(FILE *f, const struct an_diff *d, const struct out_options *o)
{
	static const char *const part[] = { "base_", "new_", "delta_" };
	size_t n = o->top && o->top < d->nrows ? o->top : d->nrows;

	for (unsigned k = 0; k < d->nkeys; k++)
		fprintf(f, "%s,", an_column_info(d->keys[k])->name);
	fputs("status", f);
	for (unsigned k = 0; k < d->nvals; k++)
		for (int pt = 0; pt < 3; pt++)
			fprintf(f, ",%s%s", part[pt], an_column_info(d->vals[k])->name);
	fputc('\n', f);
	for (size_t i = 0; i < n; i++) {
		const struct an_diff_row *row = &d->rows[i];

		for (unsigned k = 0; k < d->nkeys; k++) {
			field(f, an_diff_key(row, d->keys[k]), d->keys[k]);
			fputc(',', f);
		}
		fputs(out_diff_status(row), f);
		for (unsigned k = 0; k < d->nvals; k++)
			for (int pt = 0; pt < 3; pt++) {
				if (an_column_info(d->vals[k])->type == AN_T_PCT)
					fprintf(f, ",%.4f", an_diff_value(row, d->vals[k], (enum an_diff_part)pt));
				else
					fprintf(f, ",%" PRId64, out_diff_int(row, d->vals[k], (enum an_diff_part)pt));
			}
		fputc('\n', f);
	}
	return out_finish(f);
}

const struct out_format out_csv = {
	"csv", write_csv, write_csv_tree, write_csv_callers, write_csv_diff,
};
