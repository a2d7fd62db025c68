/* store_host.c: hosts, host aliases and advance reservations in the store. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spool/store_int.h"

/* Hosts. */

int
store_host_upsert(struct store *st, const struct host_rec *h)
{
	sqlite3_stmt *s;
	bool own;

	if (!h->name) {
		log_warnx("store: host without a name");
		return -1;
	}
	if (!(s = stmt_take(st, S_HOST_UPSERT, &own)))
		return -1;
	sqlite3_bind_text(s, 1, h->name, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 2, h->slots);
	sqlite3_bind_double(s, 3, h->load[0]);
	sqlite3_bind_double(s, 4, h->load[1]);
	sqlite3_bind_double(s, 5, h->load[2]);
	sqlite3_bind_int64(s, 6, h->last_seen);
	bind_text(s, 7, h->attrs);
	return stmt_run(st, s, own, "cannot store a host");
}

int
store_hosts_foreach(struct store *st, store_host_cb cb, void *arg)
{
	sqlite3_stmt *s;
	bool own;
	int rc;

	if (!(s = stmt_take(st, S_HOSTS_ALL, &own)))
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct host_rec h;
		int stop;

		h.name = col_str(s, 0);
		if (!h.name) {
			log_warnx("store: a host row has no name; skipped");
			continue;
		}
		h.slots = sqlite3_column_int(s, 1);
		if (h.slots < 0)
			h.slots = 0;
		h.load[0] = sqlite3_column_double(s, 2);
		h.load[1] = sqlite3_column_double(s, 3);
		h.load[2] = sqlite3_column_double(s, 4);
		h.last_seen = sqlite3_column_int64(s, 5);
		h.attrs = col_str(s, 6);
		h.users = text_to_strv((const char *)sqlite3_column_text(s, 7), sqlite3_column_bytes(s, 7), 0, "hosts.users");
		h.owners = text_to_strv((const char *)sqlite3_column_text(s, 8), sqlite3_column_bytes(s, 8), 0, "hosts.owners");
		stop = cb(arg, &h);
		free(h.name);
		free(h.attrs);
		strv_free(h.users);
		strv_free(h.owners);
		if (stop) {
			rc = SQLITE_DONE;
			break;
		}
	}
	if (rc != SQLITE_DONE)
		store_fail(st, "cannot list hosts");
	stmt_give(s, own);
	return rc == SQLITE_DONE ? 0 : -1;
}

int
store_host_lists(struct store *st, const char *host, char *const *users, char *const *owners)
{
	sqlite3_stmt *s;
	bool own, bad = false;
	char *u = strv_to_text(users, &bad), *o = strv_to_text(owners, &bad);
	int rc;

	if (bad || !(s = stmt_take(st, S_HOST_LISTS, &own))) {
		free(u);
		free(o);
		return -1;
	}
	sqlite3_bind_text(s, 1, host, -1, SQLITE_STATIC);
	bind_text(s, 2, u);
	bind_text(s, 3, o);
	rc = stmt_run(st, s, own, "cannot store a host's lists");
	free(u);
	free(o);
	return rc;
}

/* Aliases. */

int
store_alias_add(struct store *st, const char *name, const char *host)
{
	sqlite3_stmt *s;
	bool own;

	if (!(s = stmt_take(st, S_ALIAS_ADD, &own)))
		return -1;
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, host, -1, SQLITE_STATIC);
	return stmt_run(st, s, own, "cannot store an alias");
}

int
store_alias_delete(struct store *st, const char *name, const char *host)
{
	sqlite3_stmt *s;
	bool own;

	if (!(s = stmt_take(st, host ? S_ALIAS_DEL_HOST : S_ALIAS_DEL, &own)))
		return -1;
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	if (host)
		sqlite3_bind_text(s, 2, host, -1, SQLITE_STATIC);
	return stmt_run(st, s, own, "cannot delete an alias");
}

int
store_aliases_foreach(struct store *st, store_alias_cb cb, void *arg)
{
	sqlite3_stmt *s;
	bool own;
	int rc;

	if (!(s = stmt_take(st, S_ALIASES_ALL, &own)))
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *n = (const char *)sqlite3_column_text(s, 0);
		const char *h = (const char *)sqlite3_column_text(s, 1);
		if (n && h && cb(arg, n, h)) {
			rc = SQLITE_DONE;
			break;
		}
	}
	if (rc != SQLITE_DONE)
		store_fail(st, "cannot list aliases");
	stmt_give(s, own);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Reservations. */

int
store_resv_put(struct store *st, const struct resv_rec *r)
{
	sqlite3_stmt *s;
	bool own, bad = false;
	char *u = strv_to_text(r->users, &bad), *h = strv_to_text(r->hosts, &bad);
	int rc;

	if (bad || !r->name || !r->owner || !h || !(s = stmt_take(st, S_RESV_PUT, &own))) {
		log_warnx("store: a reservation without a name, owner or hosts");
		free(u);
		free(h);
		return -1;
	}
	sqlite3_bind_text(s, 1, r->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, r->owner, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, r->uid);
	bind_text(s, 4, u);
	bind_text(s, 5, h);
	sqlite3_bind_int64(s, 6, r->start);
	sqlite3_bind_int64(s, 7, r->end);
	sqlite3_bind_int(s, 8, (int)r->flags);
	sqlite3_bind_int(s, 9, (int)r->mail);
	sqlite3_bind_int(s, 10, r->state);
	sqlite3_bind_int64(s, 11, r->created);
	rc = stmt_run(st, s, own, "cannot store a reservation");
	free(u);
	free(h);
	return rc;
}

int
store_resv_delete(struct store *st, const char *name)
{
	sqlite3_stmt *s;
	bool own;

	if (!(s = stmt_take(st, S_RESV_DEL, &own)))
		return -1;
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	return stmt_run(st, s, own, "cannot delete a reservation");
}

int
store_resv_foreach(struct store *st, store_resv_cb cb, void *arg)
{
	sqlite3_stmt *s;
	bool own;
	int rc;

	if (!(s = stmt_take(st, S_RESV_ALL, &own)))
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct resv_rec r = { 0 };
		int stop;

		r.name = col_str(s, 0);
		r.owner = col_str(s, 1);
		r.uid = sqlite3_column_int64(s, 2);
		r.users = text_to_strv((const char *)sqlite3_column_text(s, 3), sqlite3_column_bytes(s, 3), 0, "reservations.users");
		r.hosts = text_to_strv((const char *)sqlite3_column_text(s, 4), sqlite3_column_bytes(s, 4), 0, "reservations.hosts");
		r.start = sqlite3_column_int64(s, 5);
		r.end = sqlite3_column_int64(s, 6);
		r.flags = (unsigned)sqlite3_column_int(s, 7);
		r.mail = (unsigned)sqlite3_column_int(s, 8);
		r.state = sqlite3_column_int(s, 9);
		r.created = sqlite3_column_int64(s, 10);
		if (!r.name || !r.owner || !r.hosts) {
			log_warnx("store: a reservation row lacks its name, owner or hosts; skipped");
			stop = 0;
		} else
			stop = cb(arg, &r);
		resv_rec_clear(&r);
		if (stop) {
			rc = SQLITE_DONE;
			break;
		}
	}
	if (rc != SQLITE_DONE)
		store_fail(st, "cannot list reservations");
	stmt_give(s, own);
	return rc == SQLITE_DONE ? 0 : -1;
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

