/* nodeset.c: node-set expressions, parsed once to a tree and tested one host at a time.
 *
 * Host, alias and reservation names, @all, | & - ! and parentheses; names
 * resolve through the caller's resolver. */
#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"

/*
 * Grammar, loosest first; "|" and "-" share a level and group left to right,
 * so "a | b - c" is "(a | b) - c":
 *
 *	expr   := term { ("|" | "-") term }
 *	term   := factor { "&" factor }
 *	factor := "!" factor | "(" expr ")" | "@all" | NAME
 *
 * A NAME starts with a letter, digit, "_" or "." and may hold "-" after
 * that, so "node-1" is one host; the difference operator is a "-" that does
 * not continue a name ("a - b", "(a)-b", "a -b").
 */
enum ns_op { NS_NAME, NS_ALL, NS_NOT, NS_AND, NS_OR, NS_DIFF };

struct nodeset {
	enum ns_op      op;
	char           *name;       /* NS_NAME */
	struct nodeset *l, *r;      /* r unused by NS_NOT */
};

#define NODESET_MAX_LEN   4096
#define NODESET_MAX_DEPTH 64

struct ns_parser {
	const char *s;
	const char *p;
	int         depth;
	char       *err;
	size_t      errlen;
	bool        failed;
};

static void ns_fail(struct ns_parser *ps, const char *fmt, ...) NOWQ_ATTR_PRINTF(2, 3);

/* The character an error quotes: all of a UTF-8 character, whose first
 * byte alone would not be text; one byte of anything else. */
static int
ns_char_len(const char *p)
{
	size_t n = utf8_char_len(p);
	return n ? (int)n : 1;
}

static void
ns_fail(struct ns_parser *ps, const char *fmt, ...)
{
	va_list ap;
	if (ps->failed)
		return;
	ps->failed = true;
	va_start(ap, fmt);
	vsnprintf(ps->err, ps->errlen, fmt, ap);
	va_end(ap);
}

static struct nodeset *
ns_node(enum ns_op op, struct nodeset *l, struct nodeset *r)
{
	struct nodeset *n = xcalloc(1, sizeof *n);
	n->op = op;
	n->l = l;
	n->r = r;
	return n;
}

static void
ns_skip(struct ns_parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t')
		ps->p++;
}

static bool
ns_name_start(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.';
}

static struct nodeset *ns_expr(struct ns_parser *ps);

static struct nodeset *
ns_factor(struct ns_parser *ps)
{
	struct nodeset *n;
	const char *b;

	ns_skip(ps);
	if (++ps->depth > NODESET_MAX_DEPTH) {
		ns_fail(ps, "expression nested deeper than %d", NODESET_MAX_DEPTH);
		return NULL;
	}
	if (*ps->p == '!') {
		ps->p++;
		n = ns_factor(ps);
		ps->depth--;
		return n ? ns_node(NS_NOT, n, NULL) : NULL;
	}
	if (*ps->p == '(') {
		ps->p++;
		n = ns_expr(ps);
		/* A failed inner expression may stop at the end of the text:
		 * stepping over a ")" there would read past it. */
		if (!n)
			return NULL;
		ns_skip(ps);
		if (*ps->p != ')') {
			ns_fail(ps, "missing \")\" at offset %d", (int)(ps->p - ps->s));
			nodeset_free(n);
			return NULL;
		}
		ps->p++;
		ps->depth--;
		return n;
	}
	b = ps->p;
	if (*ps->p == '@')
		ps->p++;
	if (!ns_name_start(*ps->p)) {
		if (*ps->p)
			ns_fail(ps, "unexpected \"%.*s\" at offset %d", ns_char_len(ps->p), ps->p,
			    (int)(ps->p - ps->s));
		else
			ns_fail(ps, "a host name is missing at the end");
		return NULL;
	}
	while (ns_name_start(*ps->p) || *ps->p == '-')
		ps->p++;
	ps->depth--;
	if (*b == '@') {
		if ((size_t)(ps->p - b) == 4 && strncmp(b, "@all", 4) == 0)
			return ns_node(NS_ALL, NULL, NULL);
		ns_fail(ps, "unknown host group \"%.*s\" (only @all exists)", (int)(ps->p - b), b);
		return NULL;
	}
	n = ns_node(NS_NAME, NULL, NULL);
	n->name = xasprintf("%.*s", (int)(ps->p - b), b);
	return n;
}

static struct nodeset *
ns_term(struct ns_parser *ps)
{
	struct nodeset *l = ns_factor(ps), *r;

	while (l) {
		ns_skip(ps);
		if (*ps->p != '&')
			break;
		ps->p++;
		if ((r = ns_factor(ps)) == NULL) {
			nodeset_free(l);
			return NULL;
		}
		l = ns_node(NS_AND, l, r);
	}
	return l;
}

static struct nodeset *
ns_expr(struct ns_parser *ps)
{
	struct nodeset *l = ns_term(ps), *r;
	char op;

	while (l) {
		ns_skip(ps);
		op = *ps->p;
		if (op != '|' && op != '-')
			break;
		ps->p++;
		if ((r = ns_term(ps)) == NULL) {
			nodeset_free(l);
			return NULL;
		}
		l = ns_node(op == '|' ? NS_OR : NS_DIFF, l, r);
	}
	return l;
}

struct nodeset *
nodeset_parse(const char *expr, char *err, size_t errlen)
{
	struct ns_parser ps = { expr, expr, 0, err, errlen, false };
	struct nodeset *n;

	if (!expr || strlen(expr) > NODESET_MAX_LEN) {
		snprintf(err, errlen, "expression longer than %d bytes", NODESET_MAX_LEN);
		return NULL;
	}
	if (expr[strspn(expr, " \t")] == '\0') {
		snprintf(err, errlen, "empty expression");
		return NULL;
	}
	n = ns_expr(&ps);
	if (n) {
		ns_skip(&ps);
		if (*ps.p) {
			ns_fail(&ps, "unexpected \"%.*s\" at offset %d", ns_char_len(ps.p), ps.p,
			    (int)(ps.p - expr));
			nodeset_free(n);
			return NULL;
		}
	}
	return n;
}

void
nodeset_free(struct nodeset *n)
{
	if (!n)
		return;
	nodeset_free(n->l);
	nodeset_free(n->r);
	free(n->name);
	free(n);
}

bool
nodeset_is_all(const struct nodeset *n)
{
	return n && n->op == NS_ALL;
}

bool
nodeset_contains(const struct nodeset *n, const char *host, nodeset_name_fn fn, void *arg)
{
	if (!n)
		return false;
	switch (n->op) {
	case NS_ALL:
		return true;
	case NS_NAME:
		return fn ? fn(arg, n->name, host) : strcmp(n->name, host) == 0;
	case NS_NOT:
		return !nodeset_contains(n->l, host, fn, arg);
	case NS_AND:
		return nodeset_contains(n->l, host, fn, arg) && nodeset_contains(n->r, host, fn, arg);
	case NS_OR:
		return nodeset_contains(n->l, host, fn, arg) || nodeset_contains(n->r, host, fn, arg);
	case NS_DIFF:
		return nodeset_contains(n->l, host, fn, arg) && !nodeset_contains(n->r, host, fn, arg);
	}
	fatalx("nodeset: bad node %d", (int)n->op);
}

const char *
nodeset_unknown(const struct nodeset *n, nodeset_known_fn known, void *arg)
{
	const char *u;

	if (!n)
		return NULL;
	if (n->op == NS_NAME)
		return known(arg, n->name) ? NULL : n->name;
	if ((u = nodeset_unknown(n->l, known, arg)) != NULL)
		return u;
	return nodeset_unknown(n->r, known, arg);
}

bool
nodeset_names(const struct nodeset *n, const char *name)
{
	if (!n)
		return false;
	if (n->op == NS_NAME)
		return strcmp(n->name, name) == 0;
	return nodeset_names(n->l, name) || nodeset_names(n->r, name);
}
