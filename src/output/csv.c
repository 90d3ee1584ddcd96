/*
 * --format csv: one header line of SPEC section 5's column names, then one
 * line per row.  Fields are quoted as RFC 4180 says (a field holding a
 * comma, a double quote or a line break is enclosed in double quotes, its
 * quotes doubled); names are full, never shortened; absent values are
 * empty fields.  Lines end in "\n" for Unix tools (RFC 4180 readers accept
 * it).  The session summary is not repeated here: use JSON for it.
 */
#include "output/output.h"

#include <inttypes.h>
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

static int write_csv(FILE *f, const struct an_report *r, const struct out_options *o)
{
	size_t n = out_rows_shown(r, o);

	for (unsigned c = 0; c < r->ncols; c++)
		fprintf(f, "%s%s", c ? "," : "", an_column_info(r->cols[c])->name);
	fputc('\n', f);
	for (size_t i = 0; i < n; i++) {
		const struct an_row *row = &r->rows[i];

		for (unsigned c = 0; c < r->ncols; c++) {
			const struct an_value *v = &row->v[r->cols[c]];

			if (c)
				fputc(',', f);
			if (!v->present)
				continue;
			switch (an_column_info(r->cols[c])->type) {
			case AN_T_STR:
				field_str(f, v->s);
				break;
			case AN_T_PCT:
				fprintf(f, "%.4f", v->d);
				break;
			case AN_T_ADDR:
				fprintf(f, "0x%" PRIx64, v->u);
				break;
			default:
				fprintf(f, "%" PRIu64, v->u);
				break;
			}
		}
		fputc('\n', f);
	}
	return out_finish(f);
}

const struct out_format out_csv = { "csv", write_csv };
