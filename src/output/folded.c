/*
 * --format folded: one line per distinct stack, "root;...;leaf VALUE", the
 * input of flamegraph.pl, inferno and speedscope.  VALUE is a node's own
 * value in the merged calling-context tree: exclusive samples, or elapsed
 * exclusive nanoseconds (--value application: application exclusive,
 * --value calls: calls), so the values add up to the session total.
 * Stacks whose value is 0 are left out.  A ';' inside a name (it separates
 * frames) is written as ':'.
 */
#include "output/export.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/cct.h"
#include "util/util.h"

static uint64_t node_value(const struct an_cct *c, const struct an_cct_node *nd,
			   enum exp_value v)
{
	if (an_cct_method(c) == SC_METHOD_SAMPLE)
		return nd->excl;
	switch (v) {
	case EXP_VALUE_APPLICATION: return nd->app_excl;
	case EXP_VALUE_CALLS:       return nd->calls;
	default:                    return nd->excl;
	}
}

/* Append name to the path buffer, ';' replaced. */
static void path_push(char **buf, size_t *len, size_t *cap, const char *name)
{
	size_t n = strlen(name);

	ALLOC_GROW(*buf, *len + n + 2, *cap);
	if (*len)
		(*buf)[(*len)++] = ';';
	for (size_t i = 0; i < n; i++)
		(*buf)[(*len)++] = name[i] == ';' ? ':' : name[i];
	(*buf)[*len] = '\0';
}

static int write_folded(FILE *f, struct an_profile *p, const struct exp_options *o,
			char *err, size_t errlen)
{
	const struct an_cct *c = an_profile_cct(p, AN_CCT_MERGED, o->app_time);
	const uint32_t *tops;
	size_t ntops = an_cct_tops(c, &tops);
	size_t len = 0, cap = 0, nlen = an_cct_size(c);
	size_t *mark = xmalloc((nlen ? nlen : 1) * sizeof(*mark));
	char *buf = NULL;

	(void)err;
	(void)errlen;
	ALLOC_GROW(buf, 1, cap);
	buf[0] = '\0';
	for (size_t t = 0; t < ntops; t++) {
		uint32_t id = an_cct_node(c, tops[t])->first_child, left;

		while (id != AN_CCT_NONE) {
			const struct an_cct_node *nd = an_cct_node(c, id);
			uint32_t next;
			uint64_t v;

			mark[id] = len;        /* the path's length before this frame */
			path_push(&buf, &len, &cap, an_cct_func_name(c, nd->func));
			v = node_value(c, nd, o->value);
			if (v)
				fprintf(f, "%s %" PRIu64 "\n", buf, v);
			next = an_cct_next(c, id, &left);
			for (; left; left--, id = an_cct_node(c, id)->parent)
				len = mark[id];
			buf[len] = '\0';
			id = next;
		}
	}
	free(buf);
	free(mark);
	return 0;
}

const struct exp_format exp_folded = {
	.name = "folded",
	.default_out = "stackclock.folded",
	.write = write_folded,
};
