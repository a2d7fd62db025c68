/* hostlist.c: each host's aliases, users and owners, and the names in node-set expressions.
 *
 * Also the requests of qconf that manage the three lists. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/msg_req.h"
#include "common/msg_rows.h"
#include "qmaster/qmaster.h"
#include "spool/spool.h"

bool
strv_has(char *const *v, const char *s)
{
	for (; v && *v; v++)
		if (strcmp(*v, s) == 0)
			return true;
	return false;
}

static void
strv_add(char ***v, const char *s)
{
	size_t n = strv_len(*v);
	*v = xrealloc(*v, (n + 2) * sizeof **v);
	(*v)[n] = xstrdup(s);
	(*v)[n + 1] = NULL;
}

static void
strv_del(char ***v, const char *s)
{
	size_t k = 0;
	for (size_t i = 0; *v && (*v)[i]; i++) {
		if (strcmp((*v)[i], s) == 0)
			free((*v)[i]);
		else
			(*v)[k++] = (*v)[i];
	}
	if (*v)
		(*v)[k] = NULL;
}

static int
alias_load(void *arg, const char *name, const char *host)
{
	struct exechost *h = exechost_find(host);
	(void)arg;
	/* A host the master no longer knows keeps its row for when it returns. */
	if (h && !strv_has(h->aliases, name))
		strv_add(&h->aliases, name);
	return 0;
}

void
hostlist_init(void)
{
	if (store_aliases_foreach(store, alias_load, NULL) < 0)
		fatalx("cannot read the aliases");
}

static bool
name_of(const struct exechost *h, const char *name, bool ever)
{
	if (strcmp(h->name, name) == 0 || strv_has(h->aliases, name))
		return true;
	for (int i = 0; i < h->nresv; i++)
		if ((ever || h->resv[i]->active) && strcmp(h->resv[i]->name, name) == 0)
			return true;
	return false;
}

bool
hostlist_name_now(void *arg, const char *name, const char *host)
{
	const struct exechost *h = arg ? arg : exechost_find(host);
	return h ? name_of(h, name, false) : strcmp(name, host) == 0;
}

bool
hostlist_name_ever(void *arg, const char *name, const char *host)
{
	const struct exechost *h = arg ? arg : exechost_find(host);
	return h ? name_of(h, name, true) : strcmp(name, host) == 0;
}

bool
hostlist_is_alias(const char *name)
{
	for (struct exechost *h = exechost_next(NULL); h; h = exechost_next(h))
		if (strv_has(h->aliases, name))
			return true;
	return false;
}

bool
hostlist_known(void *arg, const char *name)
{
	return exechost_find(name) || strv_has(arg, name) || hostlist_is_alias(name) || resv_find(name);
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **
hostlist_eval(const char *expr, char *err, size_t n)
{
	char perr[160];
	struct nodeset *ns = nodeset_parse(expr, perr, sizeof perr);
	const char *unk;
	char **out = xcalloc(1, sizeof *out);

	if (!ns) {
		snprintf(err, n, "%s: %s", expr, perr);
		free(out);
		return NULL;
	}
	if ((unk = nodeset_unknown(ns, hostlist_known, NULL)) != NULL) {
		snprintf(err, n, "%s: unknown host, alias or reservation \"%s\"", expr, unk);
		nodeset_free(ns);
		free(out);
		return NULL;
	}
	for (struct exechost *h = exechost_next(NULL); h; h = exechost_next(h))
		if (nodeset_contains(ns, h->name, hostlist_name_now, h))
			strv_add(&out, h->name);
	nodeset_free(ns);
	qsort(out, strv_len(out), sizeof *out, name_cmp);
	return out;
}

/* An alias or reservation name: like a host name, but it must start with a
 * letter so it never reads as a number or an operator. */
bool
hostlist_valid_name(const char *s)
{
	/* A letter first, so a name never reads as a job id or a number. */
	return name_chars_ok(s, 64) && ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z'));
}

/* A list of user names from a request: [] clears, absent leaves as is. */
static int
users_from(const json_t *a, char ***out, bool *given, const char **why)
{
	json_t *v;
	size_t i;

	*given = a != NULL;
	*out = NULL;
	if (!a)
		return 0;
	if (!json_is_array(a) || json_array_size(a) > 1000) {
		*why = "users and owners must be lists of user names";
		return -1;
	}
	*out = xcalloc(json_array_size(a) + 1, sizeof **out);
	json_array_foreach(a, i, v) {
		const char *s = json_string_value(v);
		if (!s || !*s || strlen(s) > 64 || strpbrk(s, " ,\t\n\r\"")) {
			*why = "a user name is empty, too long, or holds a blank, comma or quote";
			strv_free(*out);
			*out = NULL;
			return -1;
		}
		(*out)[i] = xstrdup(s);
	}
	return 0;
}

static json_t *
host_lists_json(const struct exechost *h)
{
	const struct match_resv *r = resv_active_on(h);
	struct msg_host_lists m = { .name = h->name, .aliases = strv_json(h->aliases, true, NULL),
	    .users = strv_json(h->users, true, NULL), .owners = strv_json(h->owners, true, NULL) };

	if (r)
		m.reserved = (struct msg_host_resv){ true, r->name, r->owner, r->start, r->end };
	return msg_host_lists_pack(&m);
}

static void
op_add(struct conn *c, int64_t seq, const char *name, const char *expr)
{
	char err[512], **hosts;
	json_t *rep;

	if (!name || !expr) {
		net_send(c, proto_reply_err(seq, ERR_INVAL, "ALIAS add needs name and expr"));
		return;
	}
	if (!hostlist_valid_name(name)) {
		net_send(c, proto_reply_err(seq, ERR_INVAL, "\"%.100s\" is not a valid alias name (a letter, "
		    "then letters, digits, - . _; at most 64)", name));
		return;
	}
	if (exechost_find(name) || resv_find(name)) {
		net_send(c, proto_reply_err(seq, ERR_INVAL, "\"%s\" is already the name of a %s", name,
		    exechost_find(name) ? "host" : "reservation"));
		return;
	}
	if ((hosts = hostlist_eval(expr, err, sizeof err)) == NULL) {
		net_send(c, proto_reply_err(seq, ERR_INVAL, "%s", err));
		return;
	}
	if (!hosts[0]) {
		strv_free(hosts);
		net_send(c, proto_reply_err(seq, ERR_INVAL, "%s denotes no host", expr));
		return;
	}
	qm_txn();
	for (char **p = hosts; *p; p++) {
		struct exechost *h = exechost_find(*p);
		if (store_alias_add(store, name, *p) < 0)
			fatalx("cannot store alias %s", name);
		if (!strv_has(h->aliases, name))
			strv_add(&h->aliases, name);
	}
	log_info("%s added alias %s for %s", c->user, name, expr);
	rep = proto_reply_ok(seq);
	msg_alias_reply_add(rep, &(struct msg_alias_reply){ .hosts = strv_json(hosts, true, NULL) });
	strv_free(hosts);
	net_send(c, rep);
	sched_kick();
}

static void
op_delete(struct conn *c, int64_t seq, const char *name)
{
	if (!name || !hostlist_is_alias(name)) {
		net_send(c, proto_reply_err(seq, ERR_NOENT, "\"%s\" is not an alias", name ? name : ""));
		return;
	}
	qm_txn();
	if (store_alias_delete(store, name, NULL) < 0)
		fatalx("cannot delete alias %s", name);
	for (struct exechost *h = exechost_next(NULL); h; h = exechost_next(h))
		strv_del(&h->aliases, name);
	log_info("%s deleted alias %s", c->user, name);
	net_send(c, proto_reply_ok(seq));
	sched_kick();
}

/* Every alias with its hosts, by name (or only name). */
static void
op_show(struct conn *c, int64_t seq, const char *name)
{
	json_t *by = json_object(), *list = json_array(), *rep, *v;
	const char *k;

	for (struct exechost *h = exechost_next(NULL); h; h = exechost_next(h))
		for (char **a = h->aliases; a && *a; a++) {
			if (name && strcmp(name, *a) != 0)
				continue;
			if (!(v = json_object_get(by, *a)))
				json_object_set_new(by, *a, v = json_array());
			json_array_append_new(v, json_string(h->name));
		}
	if (name && json_object_size(by) == 0) {
		json_decref(by);
		json_decref(list);
		net_send(c, proto_reply_err(seq, ERR_NOENT, "\"%s\" is not an alias", name));
		return;
	}
	/* jansson keeps insertion order; sort the names for people. */
	{
		size_t n = json_object_size(by), i = 0;
		const char **keys = xcalloc(n + 1, sizeof *keys);
		json_object_foreach(by, k, v)
			keys[i++] = k;
		qsort(keys, n, sizeof *keys, name_cmp);
		for (i = 0; i < n; i++)
			json_array_append_new(list, msg_alias_row_pack(&(struct msg_alias_row){ keys[i],
			    json_object_get(by, keys[i]) }));
		free(keys);
	}
	json_decref(by);
	rep = proto_reply_ok(seq);
	msg_alias_reply_add(rep, &(struct msg_alias_reply){ .aliases = list });
	net_send(c, rep);
}

static void
op_expr(struct conn *c, int64_t seq, const char *expr)
{
	char err[512], **hosts;
	json_t *rep;

	if (!expr || (hosts = hostlist_eval(expr, err, sizeof err)) == NULL) {
		net_send(c, proto_reply_err(seq, ERR_INVAL, "%s", expr ? err : "ALIAS expr needs expr"));
		return;
	}
	rep = proto_reply_ok(seq);
	msg_alias_reply_add(rep, &(struct msg_alias_reply){ .hosts = strv_json(hosts, true, NULL) });
	strv_free(hosts);
	net_send(c, rep);
}

/* qconf -mhost HOST users=... owners=...: either list, or both. */
static void
op_mhost(struct conn *c, int64_t seq, const struct msg_alias *m)
{
	const char *name = m->host, *why = NULL;
	struct exechost *h = name ? exechost_find(name) : NULL;
	char **users, **owners;
	bool gu, go;

	if (!h) {
		net_send(c, proto_reply_err(seq, ERR_NOENT, "\"%s\" is not an execution host", name ? name : ""));
		return;
	}
	if (users_from(m->users, &users, &gu, &why) < 0 || users_from(m->owners, &owners, &go, &why) < 0) {
		strv_free(users);
		net_send(c, proto_reply_err(seq, ERR_INVAL, "%s", why));
		return;
	}
	if (gu) {
		strv_free(h->users);
		h->users = users;
	}
	if (go) {
		strv_free(h->owners);
		h->owners = owners;
	}
	qm_txn();
	if (store_host_lists(store, h->name, h->users, h->owners) < 0)
		fatalx("cannot store the lists of host %s", h->name);
	log_info("%s changed the lists of host %s", c->user, h->name);
	net_send(c, proto_reply_ok(seq));
	sched_kick();
}

static void
op_shost(struct conn *c, int64_t seq, const char *name)
{
	struct exechost *h = name ? exechost_find(name) : NULL;
	json_t *rep;

	if (!h) {
		net_send(c, proto_reply_err(seq, ERR_NOENT, "\"%s\" is not an execution host", name ? name : ""));
		return;
	}
	rep = proto_reply_ok(seq);
	msg_alias_reply_add(rep, &(struct msg_alias_reply){ .host = host_lists_json(h) });
	net_send(c, rep);
}

/* ALIAS: aliases (add, delete, show), expressions (expr), and a host's users
 * and owners (mhost, shost).  Changes are for managers. */
void
hostlist_request(struct conn *c, int64_t seq, json_t *msg)
{
	struct msg_alias m;
	const char *why = NULL, *op;

	if (msg_alias_unpack(msg, &m, &why) < 0) {
		net_send(c, proto_reply_err(seq, ERR_INVAL, "%s", why));
		return;
	}
	op = m.op;
	if ((strcmp(op, "add") == 0 || strcmp(op, "delete") == 0 || strcmp(op, "mhost") == 0) &&
	    !perm_manager(c)) {
		net_send(c, proto_reply_err(seq, ERR_PERM, "%s must be manager for this operation", c->user));
		return;
	}
	if (strcmp(op, "add") == 0)
		op_add(c, seq, m.name, m.expr);
	else if (strcmp(op, "delete") == 0)
		op_delete(c, seq, m.name);
	else if (strcmp(op, "show") == 0)
		op_show(c, seq, m.name);
	else if (strcmp(op, "expr") == 0)
		op_expr(c, seq, m.expr);
	else if (strcmp(op, "mhost") == 0)
		op_mhost(c, seq, &m);
	else
		op_shost(c, seq, m.host);
}
