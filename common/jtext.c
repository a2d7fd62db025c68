/* jtext.c: a growing text buffer with JSON value writers, for replies too large for jansson. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static void
jt_reserve(struct jtext *t, size_t more)
{
	if (t->len + more + 1 <= t->cap)
		return;
	t->cap = t->cap ? t->cap : 256;
	while (t->len + more + 1 > t->cap)
		t->cap *= 2;
	t->buf = xrealloc(t->buf, t->cap);
}

void
jt_raw(struct jtext *t, const char *s, size_t n)
{
	jt_reserve(t, n);
	memcpy(t->buf + t->len, s, n);
	t->len += n;
	t->buf[t->len] = '\0';
}

void
jt_lit(struct jtext *t, const char *s)
{
	jt_raw(t, s, strlen(s));
}

/* Digits by hand: a listing writes a dozen numbers a row, and snprintf
 * was a tenth of the master's time serving one. */
void
jt_int(struct jtext *t, int64_t v)
{
	char b[INT_TEXT_LEN], *p = int_text(b, v);

	jt_raw(t, p, (size_t)(b + sizeof b - p));
}

/* Text from the database was checked as UTF-8 when it came in; only the
 * characters JSON reserves are escaped. NULL is written as null.  Room
 * for the plain text is made once: a listing writes five texts a row. */
void
jt_str(struct jtext *t, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p;
	char *q;

	if (!s) {
		jt_raw(t, "null", 4);
		return;
	}
	jt_reserve(t, strlen(s) + 2);
	q = t->buf + t->len;
	*q++ = '"';
	for (p = (const unsigned char *)s; *p; p++) {
		if (*p != '"' && *p != '\\' && *p >= 0x20) {
			*q++ = (char)*p;
			continue;
		}
		t->len = (size_t)(q - t->buf);
		jt_reserve(t, 6 + strlen((const char *)p + 1) + 1);
		q = t->buf + t->len;
		if (*p == '"' || *p == '\\') {
			*q++ = '\\';
			*q++ = (char)*p;
		} else {
			memcpy(q, "\\u00", 4);
			q[4] = hex[*p >> 4];
			q[5] = hex[*p & 0xf];
			q += 6;
		}
	}
	*q++ = '"';
	*q = '\0';
	t->len = (size_t)(q - t->buf);
}

/* "key": with the comma that separates it from a previous member. */
void
jt_key(struct jtext *t, const char *k, bool first)
{
	if (!first)
		jt_raw(t, ",", 1);
	jt_str(t, k);
	jt_raw(t, ":", 1);
}

char *
jt_steal(struct jtext *t, size_t *len)
{
	char *s = t->buf ? t->buf : xstrdup("");
	if (len)
		*len = t->len;
	memset(t, 0, sizeof *t);
	return s;
}
