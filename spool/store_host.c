/* store_host.c: hosts, host aliases and advance reservations in the store. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "spool/store_int.h"

/* Hosts. */

int
store_host_upsert(struct store *st, const struct host_rec *h)
{
	if (!h->name) {
		log_warnx("store: host without a name");
		return -1;
	}
	return stmt_do(st, S_HOST_UPSERT, "cannot store a host", BINDS(BIND(h->name),
	    BIND(h->slots), BIND(h->load[0]), BIND(h->load[1]), BIND(h->load[2]),
	    BIND(h->last_seen), BIND(h->attrs)));
}

/* Each host row as a struct host_rec for the callback; a row without a name is skipped. */
struct host_walk {
	store_host_cb cb;
	void         *arg;
};

static int
host_row(void *arg, sqlite3_stmt *s)
{
	struct host_walk *w = arg;
	struct host_rec h;
	int stop;

	if (!(h.name = col_str(s, 0))) {
		log_warnx("store: a host row has no name; skipped");
		return 0;
	}
	h.slots = sqlite3_column_int(s, 1);
	if (h.slots < 0)
		h.slots = 0;
	h.load[0] = sqlite3_column_double(s, 2);
	h.load[1] = sqlite3_column_double(s, 3);
	h.load[2] = sqlite3_column_double(s, 4);
	h.last_seen = sqlite3_column_int64(s, 5);
	h.attrs = col_str(s, 6);
	h.users = col_strv(s, 7, 0, "hosts.users");
	h.owners = col_strv(s, 8, 0, "hosts.owners");
	stop = w->cb(w->arg, &h);
	free(h.name);
	free(h.attrs);
	strv_free(h.users);
	strv_free(h.owners);
	return stop;
}

int
store_hosts_foreach(struct store *st, store_host_cb cb, void *arg)
{
	struct host_walk w = { cb, arg };
	sqlite3_stmt *s;
	bool own;

	if (!(s = stmt_take(st, S_HOSTS_ALL, &own)))
		return -1;
	return stmt_walk(st, s, own, "cannot list hosts", host_row, &w);
}

int
store_host_lists(struct store *st, const char *host, char *const *users, char *const *owners)
{
	bool bad = false;
	char *u = strv_to_text(users, &bad), *o = strv_to_text(owners, &bad);
	int rc = -1;

	if (!bad)
		rc = stmt_do(st, S_HOST_LISTS, "cannot store a host's lists",
		    BINDS(BIND(host), BIND(u), BIND(o)));
	free(u);
	free(o);
	return rc;
}

/* Aliases. */

int
store_alias_add(struct store *st, const char *name, const char *host)
{
	return stmt_do(st, S_ALIAS_ADD, "cannot store an alias", BINDS(BIND(name), BIND(host)));
}

int
store_alias_delete(struct store *st, const char *name, const char *host)
{
	if (host)
		return stmt_do(st, S_ALIAS_DEL_HOST, "cannot delete an alias",
		    BINDS(BIND(name), BIND(host)));
	return stmt_do(st, S_ALIAS_DEL, "cannot delete an alias", BINDS(BIND(name)));
}

struct alias_walk {
	store_alias_cb cb;
	void          *arg;
};

static int
alias_row(void *arg, sqlite3_stmt *s)
{
	struct alias_walk *w = arg;
	const char *n = (const char *)sqlite3_column_text(s, 0);
	const char *h = (const char *)sqlite3_column_text(s, 1);

	return n && h && w->cb(w->arg, n, h);
}

int
store_aliases_foreach(struct store *st, store_alias_cb cb, void *arg)
{
	struct alias_walk w = { cb, arg };
	sqlite3_stmt *s;
	bool own;

	if (!(s = stmt_take(st, S_ALIASES_ALL, &own)))
		return -1;
	return stmt_walk(st, s, own, "cannot list aliases", alias_row, &w);
}

/* Reservations. */

int
store_resv_put(struct store *st, const struct resv_rec *r)
{
	bool bad = false;
	char *u = strv_to_text(r->users, &bad), *h = strv_to_text(r->hosts, &bad);
	int rc;

	if (bad || !r->name || !r->owner || !h) {
		log_warnx("store: a reservation without a name, owner or hosts");
		free(u);
		free(h);
		return -1;
	}
	rc = stmt_do(st, S_RESV_PUT, "cannot store a reservation", BINDS(BIND(r->name),
	    BIND(r->owner), BIND(r->uid), BIND(u), BIND(h), BIND(r->start), BIND(r->end),
	    BIND((int)r->flags), BIND((int)r->mail), BIND(r->state), BIND(r->created)));
	free(u);
	free(h);
	return rc;
}

int
store_resv_delete(struct store *st, const char *name)
{
	return stmt_do(st, S_RESV_DEL, "cannot delete a reservation", BINDS(BIND(name)));
}

/* Each reservation row as a struct resv_rec for the callback; a row
 * without its name, owner or hosts is skipped. */
struct resv_walk {
	store_resv_cb cb;
	void         *arg;
};

static int
resv_row(void *arg, sqlite3_stmt *s)
{
	struct resv_walk *w = arg;
	struct resv_rec r = { 0 };
	int stop = 0;

	r.name = col_str(s, 0);
	r.owner = col_str(s, 1);
	r.uid = sqlite3_column_int64(s, 2);
	r.users = col_strv(s, 3, 0, "reservations.users");
	r.hosts = col_strv(s, 4, 0, "reservations.hosts");
	r.start = sqlite3_column_int64(s, 5);
	r.end = sqlite3_column_int64(s, 6);
	r.flags = (unsigned)sqlite3_column_int(s, 7);
	r.mail = (unsigned)sqlite3_column_int(s, 8);
	r.state = sqlite3_column_int(s, 9);
	r.created = sqlite3_column_int64(s, 10);
	if (!r.name || !r.owner || !r.hosts)
		log_warnx("store: a reservation row lacks its name, owner or hosts; skipped");
	else
		stop = w->cb(w->arg, &r);
	resv_rec_clear(&r);
	return stop;
}

int
store_resv_foreach(struct store *st, store_resv_cb cb, void *arg)
{
	struct resv_walk w = { cb, arg };
	sqlite3_stmt *s;
	bool own;

	if (!(s = stmt_take(st, S_RESV_ALL, &own)))
		return -1;
	return stmt_walk(st, s, own, "cannot list reservations", resv_row, &w);
}

void
resv_rec_clear(struct resv_rec *r)
{
	free(r->name);
	free(r->owner);
	strv_free(r->users);
	strv_free(r->hosts);
	memset(r, 0, sizeof *r);
}

