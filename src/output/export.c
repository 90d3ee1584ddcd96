/*
 * The table of export formats (export.h): adding one is a new file with its
 * struct exp_format and a line here.
 */
#include "output/export.h"

#include <string.h>

static const struct exp_format *const exp_formats[] = {
	&exp_pprof, &exp_callgrind, &exp_folded, &exp_html, &exp_chrome,
};

const struct exp_format *exp_format_find(const char *name)
{
	for (size_t i = 0; i < sizeof(exp_formats) / sizeof(exp_formats[0]); i++)
		if (!strcmp(exp_formats[i]->name, name))
			return exp_formats[i];
	return NULL;
}

const char *exp_format_list(void)
{
	return "pprof|callgrind|folded|html|chrome";
}
