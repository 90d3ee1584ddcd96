/*
 * json_check.h — a strict JSON checker for the unit tests of the writers
 * (header-only): the grammar of RFC 8259, strings without raw control
 * characters, escapes well formed, UTF-8 valid (no overlongs, no
 * surrogates).  json_valid(s) is true when s holds exactly one value.
 */
#ifndef SC_JSON_CHECK_H
#define SC_JSON_CHECK_H

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

static const char *ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

static const char *j_value(const char *p, int depth);

static const char *j_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	while (*p != '"') {
		unsigned char c = (unsigned char)*p;

		if (c < 0x20)
			return NULL;            /* raw control character (or end) */
		if (c == '\\') {
			p++;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!isxdigit((unsigned char)p[i]))
						return NULL;
				p += 5;
			} else if (strchr("\"\\/bfnrt", *p) && *p) {
				p++;
			} else {
				return NULL;
			}
			continue;
		}
		if (c < 0x80) {
			p++;
			continue;
		}
		/* UTF-8: lead byte, continuation bytes, no overlongs/surrogates */
		{
			int n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 && c <= 0xef ? 3 :
				c >= 0xc2 && c <= 0xdf ? 2 : 0;
			unsigned cp = n == 4 ? c & 7 : n == 3 ? c & 15 : c & 31;

			if (!n)
				return NULL;
			for (int i = 1; i < n; i++) {
				if (((unsigned char)p[i] & 0xc0) != 0x80)
					return NULL;
				cp = cp << 6 | ((unsigned char)p[i] & 0x3f);
			}
			if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
			    (cp >= 0xd800 && cp <= 0xdfff))
				return NULL;
			p += n;
		}
	}
	return p + 1;
}

static const char *j_number(const char *p)
{
	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (isdigit((unsigned char)*p))
		while (isdigit((unsigned char)*p))
			p++;
	else
		return NULL;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return NULL;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			return NULL;
		while (isdigit((unsigned char)*p))
			p++;
	}
	return p;
}

static const char *j_value(const char *p, int depth)
{
	if (depth > 64)
		return NULL;
	p = ws(p);
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';
		bool obj = *p == '{';

		p = ws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (obj) {
				p = j_string(ws(p));
				if (!p)
					return NULL;
				p = ws(p);
				if (*p++ != ':')
					return NULL;
			}
			p = j_value(p, depth + 1);
			if (!p)
				return NULL;
			p = ws(p);
			if (*p == ',') {
				p++;
				continue;
			}
			if (*p == close)
				return p + 1;
			return NULL;
		}
	}
	if (*p == '"')
		return j_string(p);
	if (!strncmp(p, "true", 4))
		return p + 4;
	if (!strncmp(p, "false", 5))
		return p + 5;
	if (!strncmp(p, "null", 4))
		return p + 4;
	return j_number(p);
}

static bool json_valid(const char *s)
{
	const char *e = s ? j_value(s, 0) : NULL;

	return e && !*ws(e);
}

#endif
