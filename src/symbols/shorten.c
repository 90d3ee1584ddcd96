/*
 * shorten — fit a demangled C++ name into a table column.
 *
 * Steps, each taken only while the name is still too long:
 *   1. template arguments dropped:  std::vector<int, ...>::push_back(int)
 *                                -> std::vector<>::push_back(int)
 *   2. parameter lists emptied:     std::vector<>::push_back()
 *   3. the tail kept behind "..", from a "::" if one comes early in it:
 *                                   ..push_back()
 * The tail is what tells functions apart (the method, the lambda number).
 * Operator names (operator<<, operator(), operator->) and "(anonymous
 * namespace)" are copied literally so their brackets do not count.
 */
#include "symbols/symbols.h"

#include <ctype.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* Length of "operator<sym>" at s when <sym> holds brackets, else 0. */
static size_t operator_len(const char *start, const char *s)
{
	static const char *const toks[] = {
		"<<=", ">>=", "<=>", "->*", "<<", ">>", "<=", ">=", "->",
		"()", "<", ">", NULL
	};
	size_t n = 8;

	if (strncmp(s, "operator", 8) || (s > start && ident_char(s[-1])))
		return 0;
	if (s[n] == ' ')
		n++;
	for (int i = 0; toks[i]; i++) {
		size_t l = strlen(toks[i]);
		if (!strncmp(s + n, toks[i], l))
			return n + l;
	}
	return 0;
}

/* Copy in to out, emptying every outermost open...close pair. */
static void strip_pairs(const char *in, char *out, char open, char close)
{
	static const char anon[] = "(anonymous namespace)";
	int depth = 0, parens = 0;
	const char *p = in;

	while (*p) {
		size_t n;
		if (depth == 0) {
			n = operator_len(in, p);
			if (!n && open == '(' && !strncmp(p, anon, sizeof(anon) - 1))
				n = sizeof(anon) - 1;
			if (n) {
				memcpy(out, p, n);
				out += n;
				p += n;
				continue;
			}
			if (*p == open)
				depth = 1;
			*out++ = *p++;
			continue;
		}
		/* Inside: a '>' in parentheses or in "->" closes nothing. */
		if (open == '<' && *p == '(') {
			parens++;
		} else if (open == '<' && *p == ')') {
			if (parens)
				parens--;
		} else if (open == '<' && p[0] == '-' && p[1] == '>') {
			p++;
		} else if (!parens && *p == open) {
			depth++;
		} else if (!parens && *p == close && --depth == 0) {
			*out++ = close;
		}
		p++;
	}
	*out = '\0';
}

void sym_shorten(const char *name, char *buf, unsigned width)
{
	size_t len = strlen(name);
	char *a, *b;

	if (!width)
		return;
	if (len < width) {
		memcpy(buf, name, len + 1);
		return;
	}
	a = xmalloc(len + 1);
	b = xmalloc(len + 1);
	strip_pairs(name, a, '<', '>');
	if (strlen(a) >= width) {
		strip_pairs(a, b, '(', ')');
		memcpy(a, b, strlen(b) + 1);
	}
	len = strlen(a);
	if (len < width) {
		memcpy(buf, a, len + 1);
	} else if (width > 3) {
		/* The tail, from a scope boundary if one comes early in it. */
		const char *t = a + len - (width - 3), *q = strstr(t, "::");
		if (q && q - t <= (ptrdiff_t)(width - 3) / 2)
			t = q + 2;
		memcpy(buf, "..", 2);
		memcpy(buf + 2, t, strlen(t) + 1);
	} else {
		memcpy(buf, a, width - 1);
		buf[width - 1] = '\0';
	}
	free(a);
	free(b);
}
