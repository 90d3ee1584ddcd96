/*
 * Two reports of one grouping side by side (SPEC section 7).
 *
 * A row's key is built from its key columns with paths cut to their file
 * name, so two builds in different directories still match; thread rows
 * match by thread name (their tids differ from run to run), process rows
 * by executable.  Rows are combined when one side has several with one
 * key.  Work: one pass over each report plus a sort.
 */
#include "analysis/internal.h"
#include "util/util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *file_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s && s[1] ? s + 1 : path ? path : "";
}

static bool is_path(enum an_col c)
{
	return c == AN_COL_MODULE || c == AN_COL_CALLEE_MODULE || c == AN_COL_FILE ||
		c == AN_COL_EXECUTABLE;
}

/* The matching key of a row: key columns joined by a byte no name holds. */
static void row_key(const struct an_report *r, const struct an_row *row, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < r->ncols && n < len; i++) {
		enum an_col c = r->cols[i];
		const struct an_value *v = &row->v[c];

		if (!an_col_is_key(c))
			continue;
		/* a thread is its name when it has one; pids never match */
		if (c == AN_COL_PID && r->by == AN_BY_THREAD)
			continue;
		if (c == AN_COL_PID && r->by == AN_BY_PROCESS && row->v[AN_COL_EXECUTABLE].present)
			continue;
		if (c == AN_COL_TID && row->v[AN_COL_THREAD_NAME].present)
			continue;
		if (!v->present)
			n += (size_t)snprintf(buf + n, len - n, "\x01-");
		else if (an_column_info(c)->type == AN_T_STR)
			n += (size_t)snprintf(buf + n, len - n, "\x01%s", is_path(c) ? file_name(v->s) : v->s);
		else
			n += (size_t)snprintf(buf + n, len - n, "\x01%" PRIu64, v->u);
	}
}

/* Fold row b into a (one key twice on one side). */
static void combine(const struct an_report *r, struct an_row *a, const struct an_row *b)
{
	uint64_t ca = a->v[AN_COL_COMPLETED].u, cb = b->v[AN_COL_COMPLETED].u;

	for (unsigned i = 0; i < r->ncols; i++) {
		enum an_col c = r->cols[i];
		struct an_value *x = &a->v[c];
		const struct an_value *y = &b->v[c];

		if (an_col_is_key(c) || !y->present)
			continue;
		if (!x->present) {
			*x = *y;
			continue;
		}
		switch (c) {
		case AN_COL_MIN_EI:
		case AN_COL_MIN_EE:
			if (cb && (!ca || y->u < x->u))
				x->u = y->u;
			break;
		case AN_COL_MAX_EI:
		case AN_COL_MAX_EE:
			if (y->u > x->u)
				x->u = y->u;
			break;
		case AN_COL_MEAN_EI:
		case AN_COL_MEAN_EE:
			if (ca + cb)
				x->u = (x->u * ca + y->u * cb + (ca + cb) / 2) / (ca + cb);
			break;
		case AN_COL_BELOW_RES:
			break;             /* made again from the sums below */
		default:
			if (an_column_info(c)->type == AN_T_PCT)
				x->d += y->d;
			else
				x->u += y->u;
			break;
		}
	}
	if (a->v[AN_COL_BELOW_RES].present)
		an_row_set_resolution(a, &r->session);
}

int an_diff_build(const struct an_report *base, const struct an_report *new,
		  struct an_diff **out, char *err, size_t errlen)
{
	const struct an_report *side[2] = { base, new };
	struct an_strtab keys = { 0 };
	size_t arows = 0;
	enum an_col *kcols, *vcols;
	struct an_diff *d;
	char key[2048];

	*out = NULL;
	if (base->session.method != new->session.method) {
		snprintf(err, errlen, "cannot compare a %s recording with a %s one; "
			 "record both with the same -m",
			 base->session.method == SC_METHOD_SAMPLE ? "sampling" : "instrumentation",
			 new->session.method == SC_METHOD_SAMPLE ? "sampling" : "instrumentation");
		return -EINVAL;
	}
	if (base->by != new->by) {
		snprintf(err, errlen, "reports of different groupings");
		return -EINVAL;
	}
	d = xcalloc(1, sizeof(*d));
	d->base = base;
	d->new = new;
	kcols = xcalloc(base->ncols + 1, sizeof(*kcols));
	vcols = xcalloc(base->ncols + 1, sizeof(*vcols));
	for (unsigned i = 0; i < base->ncols; i++) {
		if (an_col_is_key(base->cols[i]))
			kcols[d->nkeys++] = base->cols[i];
		else if (an_col_is_share(base->cols[i]) && !an_report_has_col(new, base->cols[i]))
			continue;          /* one recording did not sample: no delta */
		else if (an_column_info(base->cols[i])->type != AN_T_BOOL)
			vcols[d->nvals++] = base->cols[i];   /* a mark has no delta */
	}
	d->keys = kcols;
	d->vals = vcols;
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < side[s]->nrows; i++) {
			const struct an_row *row = &side[s]->rows[i];
			struct an_diff_row *dr;
			uint32_t id;

			row_key(side[s], row, key, sizeof(key));
			/* key ids are dense in the order met: one row each */
			id = an_str_intern(&keys, key);
			if (id == d->nrows) {
				ALLOC_GROW(d->rows, d->nrows + 1, arows);
				memset(&d->rows[d->nrows], 0, sizeof(d->rows[0]));
				d->rows[d->nrows].order = (uint32_t)d->nrows;
				d->nrows++;
			}
			dr = &d->rows[id];
			if (s == 0) {
				if (dr->in_base)
					combine(base, &dr->base, row);
				else
					dr->base = *row;
				dr->in_base = true;
			} else {
				if (dr->in_new)
					combine(new, &dr->new, row);
				else
					dr->new = *row;
				dr->in_new = true;
			}
		}
	an_strtab_release(&keys);
	an_diff_sort(d, NULL);
	*out = d;
	return 0;
}

void an_diff_free(struct an_diff *d)
{
	if (!d)
		return;
	free(d->rows);
	free((void *)d->keys);
	free((void *)d->vals);
	free(d);
}

const struct an_value *an_diff_key(const struct an_diff_row *row, enum an_col c)
{
	return row->in_base ? &row->base.v[c] : &row->new.v[c];
}

static double side_value(const struct an_row *row, bool in, enum an_col c)
{
	const struct an_value *v = &row->v[c];

	if (!in || !v->present)
		return 0;
	return an_column_info(c)->type == AN_T_PCT ? v->d : (double)v->u;
}

double an_diff_value(const struct an_diff_row *row, enum an_col c, enum an_diff_part part)
{
	double b = side_value(&row->base, row->in_base, c);
	double n = side_value(&row->new, row->in_new, c);

	if (part != AN_DIFF_DELTA)
		return part == AN_DIFF_BASE ? b : n;
	/* equal percentages computed from different totals: no "-0.0000" */
	return fabs(n - b) < 1e-9 ? 0 : n - b;
}

struct sort_key {
	enum an_col col;
	enum an_diff_part part;
};

static int cmp_diff(const void *pa, const void *pb, void *arg)
{
	const struct an_diff_row *a = pa, *b = pb;
	const struct sort_key *k = arg;
	int r = 0;

	if (an_col_is_key(k->col)) {
		const struct an_value *x = an_diff_key(a, k->col), *y = an_diff_key(b, k->col);

		if (x->present != y->present)
			r = x->present ? -1 : 1;
		else if (x->present && an_column_info(k->col)->type == AN_T_STR)
			r = strcmp(x->s, y->s);
		else if (x->present)
			r = x->u < y->u ? -1 : x->u > y->u;
	} else {
		double x = an_diff_value(a, k->col, k->part), y = an_diff_value(b, k->col, k->part);

		if (k->part == AN_DIFF_DELTA) {
			x = fabs(x);
			y = fabs(y);
		}
		r = x > y ? -1 : x < y;
	}
	if (r)
		return r;
	return a->order < b->order ? -1 : a->order > b->order;
}

int an_diff_sort(struct an_diff *d, const char *name)
{
	struct sort_key k = { .part = AN_DIFF_DELTA };
	bool smp = d->base->session.method == SC_METHOD_SAMPLE;
	int c;

	if (!name) {
		k.col = smp ? AN_COL_EXCL_PCT : AN_COL_EE_PCT;
	} else {
		if (!strncmp(name, "base_", 5)) {
			k.part = AN_DIFF_BASE;
			name += 5;
		} else if (!strncmp(name, "new_", 4)) {
			k.part = AN_DIFF_NEW;
			name += 4;
		} else if (!strncmp(name, "delta_", 6)) {
			name += 6;
		}
		c = an_column_lookup_among(d->vals, d->nvals, name);
		if (c < 0)
			c = an_column_lookup_among(d->keys, d->nkeys, name);
		if (c < 0)
			return -EINVAL;
		k.col = c;
		for (unsigned i = 0; i <= d->nvals + d->nkeys; i++) {
			if (i == d->nvals + d->nkeys)
				return -EINVAL;
			if ((i < d->nvals ? d->vals[i] : d->keys[i - d->nvals]) == k.col)
				break;
		}
	}
	if (d->nrows > 1)
		qsort_r(d->rows, d->nrows, sizeof(*d->rows), cmp_diff, &k);
	d->sort_col = k.col;
	d->sort_part = k.part;
	return 0;
}
