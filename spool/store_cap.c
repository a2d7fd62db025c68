/* store_cap.c: the primary's capture of each committed transaction as a changeset for the standby. */
#include "config.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spool/store_int.h"

/* The primary's capture of a transaction (cap_hook and below). */
struct cap_buf {
	unsigned char *p;
	size_t         n, cap;
};

struct cap_row {
	struct cap_row *hnext;      /* in its hash bucket */
	struct cap_row *next;       /* its table's, in order of first change */
	uint32_t        hash;
	int             op;         /* the first change's */
	bool            indirect;
	size_t          nkey, nold;
	unsigned char  *key;        /* the key's values, a record */
	unsigned char  *old;        /* UPDATE, DELETE: the row before, a record */
};

struct cap_tab {
	struct cap_tab   *next;
	struct apply_tab *t;
	struct cap_row   *head, **tail;
	bool              inserted;  /* a row was: its AUTOINCREMENT may have moved */
};

struct capture {
	struct cap_tab  *tabs, **tail;
	struct cap_row **bucket;
	int              nbucket, nrow;
	int              err;       /* SQLite's error met in the hook */
};

/*
 * The primary's capture of each transaction as a changeset, in the format
 * of the session extension (what apply_changeset and SQLite's reader take),
 * by the session's rules but without it: a session made for a transaction
 * reads each table's columns with a PRAGMA and prepares a SELECT per table
 * for its changeset, every time; here the columns and the SELECT are the
 * store's (struct apply_tab), read and prepared once.
 * The preupdate hook notes the first change of each row in the transaction:
 * its operation and, for an UPDATE or a DELETE, the row as it was.  At the
 * commit each noted row is read as it is now: an INSERT whose row is still
 * there is an INSERT of what it holds; an UPDATE or DELETE is an UPDATE of
 * the columns that differ (none: nothing) when the row is there, else a
 * DELETE of the row as it was.  Reading at the end, as the session does,
 * leaves out what a failed statement rolled back.  Tables without a
 * primary key (sqlite_sequence) are left out, as the session leaves them.
 * Changes come table by table, each table's in the order of their first
 * change; a change made by a foreign key's action is marked indirect.
 */
static void
cap_grow(struct cap_buf *b, size_t more)
{
	if (b->n + more <= b->cap)
		return;
	b->cap = b->cap ? b->cap * 2 : 256;
	while (b->cap < b->n + more)
		b->cap *= 2;
	b->p = xrealloc(b->p, b->cap);
}

static void
cap_byte(struct cap_buf *b, unsigned char c)
{
	cap_grow(b, 1);
	b->p[b->n++] = c;
}

static void
cap_bytes(struct cap_buf *b, const void *p, size_t n)
{
	cap_grow(b, n);
	if (n)
		memcpy(b->p + b->n, p, n);
	b->n += n;
}

/* SQLite's varint, which apply_varint reads. */
static void
cap_varint(struct cap_buf *b, uint64_t v)
{
	unsigned char tmp[10];
	int n = 0;

	if (v > 0x00ffffffffffffffULL) {
		tmp[8] = (unsigned char)v;
		v >>= 8;
		for (int i = 7; i >= 0; i--) {
			tmp[i] = (unsigned char)((v & 0x7f) | 0x80);
			v >>= 7;
		}
		cap_bytes(b, tmp, 9);
		return;
	}
	do {
		tmp[n++] = (unsigned char)((v & 0x7f) | 0x80);
		v >>= 7;
	} while (v);
	tmp[0] &= 0x7f;
	for (int i = n - 1; i >= 0; i--)
		cap_byte(b, tmp[i]);
}

static void
cap_be64(struct cap_buf *b, uint64_t v)
{
	unsigned char tmp[8];

	for (int i = 7; i >= 0; i--, v >>= 8)
		tmp[i] = (unsigned char)v;
	cap_bytes(b, tmp, 8);
}

/* One value of a record: its type, then its bytes. */
static void
cap_put(struct cap_buf *b, int type, sqlite3_int64 i, double d, const void *p, int n)
{
	uint64_t u;

	cap_byte(b, (unsigned char)type);
	switch (type) {
	case SQLITE_INTEGER:
		cap_be64(b, (uint64_t)i);
		break;
	case SQLITE_FLOAT:
		memcpy(&u, &d, sizeof u);
		cap_be64(b, u);
		break;
	case SQLITE_TEXT:
	case SQLITE_BLOB:
		cap_varint(b, (uint64_t)(n > 0 ? n : 0));
		cap_bytes(b, p, (size_t)(n > 0 ? n : 0));
		break;
	default:
		break;
	}
}

static void
cap_value(struct cap_buf *b, sqlite3_value *v)
{
	int type = sqlite3_value_type(v);
	const void *p = NULL;

	if (type == SQLITE_TEXT)
		p = sqlite3_value_text(v);
	else if (type == SQLITE_BLOB)
		p = sqlite3_value_blob(v);
	cap_put(b, type, type == SQLITE_INTEGER ? sqlite3_value_int64(v) : 0,
	    type == SQLITE_FLOAT ? sqlite3_value_double(v) : 0, p,
	    p ? sqlite3_value_bytes(v) : 0);
}

static void
cap_column(struct cap_buf *b, sqlite3_stmt *s, int i)
{
	int type = sqlite3_column_type(s, i);
	const void *p = NULL;

	if (type == SQLITE_TEXT)
		p = sqlite3_column_text(s, i);
	else if (type == SQLITE_BLOB)
		p = sqlite3_column_blob(s, i);
	cap_put(b, type, type == SQLITE_INTEGER ? sqlite3_column_int64(s, i) : 0,
	    type == SQLITE_FLOAT ? sqlite3_column_double(s, i) : 0, p,
	    p ? sqlite3_column_bytes(s, i) : 0);
}

/* The length of the record's value at p (records we wrote). */
static size_t
cap_vlen(const unsigned char *p)
{
	uint64_t v;
	int i = 1;

	switch (p[0]) {
	case SQLITE_INTEGER:
	case SQLITE_FLOAT:
		return 9;
	case SQLITE_TEXT:
	case SQLITE_BLOB:
		(void)apply_varint(p, 1 + 9, &i, &v);
		return (size_t)i + (size_t)v;
	default:
		return 1;
	}
}

void
cap_reset(struct capture *c)
{
	struct cap_tab *ct;
	struct cap_row *r;

	while ((ct = c->tabs) != NULL) {
		c->tabs = ct->next;
		while ((r = ct->head) != NULL) {
			ct->head = r->next;
			free(r->key);
			free(r->old);
			free(r);
		}
		free(ct);
	}
	c->tail = &c->tabs;
	if (c->nrow && c->bucket)
		memset(c->bucket, 0, (size_t)c->nbucket * sizeof *c->bucket);
	c->nrow = 0;
	c->err = 0;
}

void
cap_free(struct store *st)
{
	if (!st->cap)
		return;
	cap_reset(st->cap);
	free(st->cap->bucket);
	free(st->cap);
	st->cap = NULL;
}

static uint32_t
cap_hash(const struct apply_tab *t, const unsigned char *p, size_t n)
{
	uint32_t h = 2166136261u ^ (uint32_t)(uintptr_t)t;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static void
cap_rehash(struct capture *c)
{
	int n = c->nbucket ? c->nbucket * 2 : 256;
	struct cap_row **b = xcalloc((size_t)n, sizeof *b), *r, *next;

	for (int i = 0; i < c->nbucket; i++)
		for (r = c->bucket[i]; r; r = next) {
			next = r->hnext;
			r->hnext = b[r->hash & (uint32_t)(n - 1)];
			b[r->hash & (uint32_t)(n - 1)] = r;
		}
	free(c->bucket);
	c->bucket = b;
	c->nbucket = n;
}

/* Notes one change (op) of the row whose values get() gives. */
static void
cap_note(struct store *st, struct apply_tab *t, int op, int (*get)(sqlite3 *, int, sqlite3_value **))
{
	struct capture *c = st->cap;
	struct cap_buf key = { 0 }, old = { 0 };
	struct cap_tab *ct;
	struct cap_row *r;
	sqlite3_value *v;
	bool indirect = sqlite3_preupdate_depth(st->db) > 0;
	uint32_t h;

	for (int i = 0; i < t->ncol; i++)
		if (t->pk >> i & 1) {
			if (get(st->db, i, &v) != SQLITE_OK) {
				c->err = SQLITE_ERROR;
				free(key.p);
				return;
			}
			cap_value(&key, v);
		}
	h = cap_hash(t, key.p, key.n);
	if (c->nbucket)
		for (r = c->bucket[h & (uint32_t)(c->nbucket - 1)]; r; r = r->hnext)
			if (r->hash == h && r->nkey == key.n && memcmp(r->key, key.p, key.n) == 0) {
				/* The session's rule: direct once, direct. */
				if (!indirect)
					r->indirect = false;
				free(key.p);
				return;
			}
	if (op != SQLITE_INSERT)
		for (int i = 0; i < t->ncol; i++) {
			if (sqlite3_preupdate_old(st->db, i, &v) != SQLITE_OK) {
				c->err = SQLITE_ERROR;
				free(key.p);
				free(old.p);
				return;
			}
			cap_value(&old, v);
		}
	for (ct = c->tabs; ct && ct->t != t; ct = ct->next)
		;
	if (!ct) {
		ct = xcalloc(1, sizeof *ct);
		ct->t = t;
		ct->tail = &ct->head;
		*c->tail = ct;
		c->tail = &ct->next;
	}
	ct->inserted |= op == SQLITE_INSERT;
	r = xcalloc(1, sizeof *r);
	r->hash = h;
	r->op = op;
	r->indirect = indirect;
	r->key = key.p;
	r->nkey = key.n;
	r->old = old.p;
	r->nold = old.n;
	*ct->tail = r;
	ct->tail = &r->next;
	if (++c->nrow > c->nbucket)
		cap_rehash(c);
	r->hnext = c->bucket[h & (uint32_t)(c->nbucket - 1)];
	c->bucket[h & (uint32_t)(c->nbucket - 1)] = r;
}

static void
cap_hook(void *arg, sqlite3 *db, int op, const char *zdb, const char *ztab, sqlite3_int64 k1,
    sqlite3_int64 k2)
{
	struct store *st = arg;
	struct apply_tab *t;
	int rc;

	(void)db;
	/* Only inside store_begin's transactions, as the session made per
	 * transaction had it. */
	if (!st->capture || !st->in_txn || st->cap->err || strcmp(zdb, "main") != 0)
		return;
	if (!(t = apply_tab(st, ztab, &rc))) {
		st->cap->err = rc != SQLITE_OK ? rc : SQLITE_ERROR;
		return;
	}
	if (!t->pk)
		return;
	if (sqlite3_preupdate_count(st->db) != t->ncol) {
		/* The table changed under a store that read its columns. */
		st->cap->err = SQLITE_SCHEMA;
		return;
	}
	/* A new rowid is a row of its own: the old one goes, as the session
	 * has it. */
	if (op == SQLITE_UPDATE && k1 != k2) {
		cap_note(st, t, SQLITE_DELETE, sqlite3_preupdate_old);
		cap_note(st, t, SQLITE_INSERT, sqlite3_preupdate_new);
		return;
	}
	cap_note(st, t, op, op == SQLITE_INSERT ? sqlite3_preupdate_new : sqlite3_preupdate_old);
}

/* The capture's read of one row of t by its key: SELECT * with the key's
 * columns compared by IS, as the session's. */
static sqlite3_stmt *
cap_select(struct store *st, struct apply_tab *t)
{
	sqlite3_str *q;
	const char *sep = " WHERE ";
	char *sql;
	int n = 0;

	if (t->sel)
		return t->sel;
	q = sqlite3_str_new(st->db);
	sqlite3_str_appendf(q, "SELECT * FROM main.\"%w\"", t->name);
	for (int i = 0; i < t->ncol; i++)
		if (t->pk >> i & 1) {
			sqlite3_str_appendf(q, "%s%s IS ?%d", sep, t->col[i], ++n);
			sep = " AND ";
		}
	if (!(sql = sqlite3_str_finish(q)))
		return NULL;
	if (sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &t->sel, NULL) != SQLITE_OK)
		t->sel = NULL;
	sqlite3_free(sql);
	return t->sel;
}

/* Binds the key's record to s's parameters 1, 2, ... */
static int
cap_bind_key(sqlite3_stmt *s, const unsigned char *p, size_t n)
{
	uint64_t u;
	double d;
	int k = 0, rc = SQLITE_OK, i;
	size_t at = 0;

	while (at < n && rc == SQLITE_OK) {
		const unsigned char *v = p + at;
		size_t len = cap_vlen(v);

		u = 0;
		if (v[0] == SQLITE_INTEGER || v[0] == SQLITE_FLOAT)
			for (i = 1; i <= 8; i++)
				u = u << 8 | v[i];
		switch (v[0]) {
		case SQLITE_INTEGER:
			rc = sqlite3_bind_int64(s, ++k, (sqlite3_int64)u);
			break;
		case SQLITE_FLOAT:
			memcpy(&d, &u, sizeof d);
			rc = sqlite3_bind_double(s, ++k, d);
			break;
		case SQLITE_TEXT:
		case SQLITE_BLOB: {
			uint64_t m;
			int j = 1;
			(void)apply_varint(v, 10, &j, &m);
			rc = v[0] == SQLITE_TEXT ?
			    sqlite3_bind_text(s, ++k, (const char *)v + j, (int)m, SQLITE_STATIC) :
			    sqlite3_bind_blob(s, ++k, v + j, (int)m, SQLITE_STATIC);
			break;
		}
		default:
			rc = sqlite3_bind_null(s, ++k);
			break;
		}
		at += len;
	}
	return rc;
}

/* The change of one noted row, as the row is now; cur holds its record. */
static int
cap_emit(struct cap_buf *out, struct apply_tab *t, struct cap_row *r, sqlite3_stmt *s,
    struct cap_buf *cur, bool *hdr)
{
	const unsigned char *o, *nw;
	size_t ol, nl;
	bool there;
	int rc;
	uint64_t diff = 0;

	if ((rc = cap_bind_key(s, r->key, r->nkey)) != SQLITE_OK)
		return rc;
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return rc;
	there = rc == SQLITE_ROW;
	cur->n = 0;
	if (there)
		for (int i = 0; i < t->ncol; i++)
			cap_column(cur, s, i);
	rc = sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc != SQLITE_OK)
		return rc;
	if (r->op == SQLITE_INSERT && !there)
		return SQLITE_OK;
	if (r->op != SQLITE_INSERT && there) {
		/* The columns that differ; none but the key: nothing to say. */
		o = r->old;
		nw = cur->p;
		for (int i = 0; i < t->ncol; i++, o += ol, nw += nl) {
			ol = cap_vlen(o);
			nl = cap_vlen(nw);
			if (!(t->pk >> i & 1) && (ol != nl || memcmp(o, nw, ol) != 0))
				diff |= 1ULL << i;
		}
		if (!diff)
			return SQLITE_OK;
	}
	if (!*hdr) {
		cap_byte(out, 'T');
		cap_varint(out, (uint64_t)t->ncol);
		cap_bytes(out, t->pkpos, (size_t)t->ncol);
		cap_bytes(out, t->name, strlen(t->name) + 1);
		*hdr = true;
	}
	if (r->op == SQLITE_INSERT) {
		cap_byte(out, SQLITE_INSERT);
		cap_byte(out, r->indirect);
		cap_bytes(out, cur->p, cur->n);
	} else if (!there) {
		cap_byte(out, SQLITE_DELETE);
		cap_byte(out, r->indirect);
		cap_bytes(out, r->old, r->nold);
	} else {
		/* The old record: the key and the changed columns' old values;
		 * the new one: the changed columns' new values; 0 elsewhere. */
		cap_byte(out, SQLITE_UPDATE);
		cap_byte(out, r->indirect);
		o = r->old;
		for (int i = 0; i < t->ncol; i++, o += ol) {
			ol = cap_vlen(o);
			if (t->pk >> i & 1 || diff >> i & 1)
				cap_bytes(out, o, ol);
			else
				cap_byte(out, 0);
		}
		nw = cur->p;
		for (int i = 0; i < t->ncol; i++, nw += nl) {
			nl = cap_vlen(nw);
			if (diff >> i & 1)
				cap_bytes(out, nw, nl);
			else
				cap_byte(out, 0);
		}
	}
	return SQLITE_OK;
}

/* The open transaction's changeset, into st->cs. */
static int
cap_changeset(struct store *st)
{
	struct capture *c = st->cap;
	struct cap_buf out = { 0 }, cur = { 0 };
	struct cap_tab *ct;
	struct cap_row *r;
	sqlite3_stmt *s;
	int rc = c->err;

	for (ct = c->tabs; ct && rc == SQLITE_OK; ct = ct->next) {
		bool hdr = false;

		if (!(s = cap_select(st, ct->t))) {
			rc = SQLITE_ERROR;
			break;
		}
		for (r = ct->head; r && rc == SQLITE_OK; r = r->next)
			rc = cap_emit(&out, ct->t, r, s, &cur, &hdr);
	}
	/* SQLite writes sqlite_sequence without the preupdate hook: the
	 * record of each table that had rows inserted goes as an INSERT,
	 * which apply_autoinc takes as "at least this". */
	if (rc == SQLITE_OK) {
		struct apply_tab *seqt = NULL;
		bool hdr = false;

		for (ct = c->tabs; ct && rc == SQLITE_OK; ct = ct->next) {
			struct cap_buf key = { 0 };
			struct cap_row row = { .op = SQLITE_INSERT };

			if (!ct->inserted)
				continue;
			if (!seqt && (!(seqt = apply_tab(st, "sqlite_sequence", &rc)) ||
			    !(s = cap_select(st, seqt)))) {
				rc = rc != SQLITE_OK ? rc : SQLITE_ERROR;
				break;
			}
			cap_put(&key, SQLITE_TEXT, 0, 0, ct->t->name, (int)strlen(ct->t->name));
			row.key = key.p;
			row.nkey = key.n;
			rc = cap_emit(&out, seqt, &row, s, &cur, &hdr);
			free(key.p);
		}
	}
	free(cur.p);
	if (rc != SQLITE_OK) {
		free(out.p);
		return -1;
	}
	st->cs = out.p;
	st->ncs = (int)out.n;
	return 0;
}

/* Inside the transaction about to commit: when it changed anything, the
 * next sequence number goes into meta (so the standby records it in the
 * same transaction that applies the changes) and the changeset is kept. */
int
store_capture_end(struct store *st)
{
	char v[32];

	free(st->cs);
	st->cs = NULL;
	st->ncs = 0;
	if (!st->capture || !st->cap)
		return 0;
	if (st->cap->nrow > 0) {
		snprintf(v, sizeof v, "%lld", (long long)(st->seq + 1));
		if (store_meta_set(st, "repl.seq", v) < 0)
			return -1;
		if (cap_changeset(st) < 0)
			return store_fail(st, "cannot take the changeset for the standby");
		st->cs_seq = st->seq + 1;
	}
	cap_reset(st->cap);
	return 0;
}
/* Replication. */

void
store_capture(struct store *st, bool on)
{
	assert(!st->in_txn);
	st->capture = on;
	if (on && !st->cap) {
		st->cap = xcalloc(1, sizeof *st->cap);
		st->cap->tail = &st->cap->tabs;
	}
	sqlite3_preupdate_hook(st->db, on ? cap_hook : NULL, st);
	/* A standby's rows change only by changesets, which hold what the
	 * primary's foreign keys did (a job's tasks deleted with it): its own
	 * cascades would do it twice and fail the changeset. */
	if (store_exec(st->db, on ? "PRAGMA foreign_keys = ON" : "PRAGMA foreign_keys = OFF") != SQLITE_OK)
		log_warnx("store: cannot switch foreign keys %s: %s", on ? "on" : "off", sqlite3_errmsg(st->db));
}

const void *
store_changeset(struct store *st, int *n, int64_t *seq)
{
	*n = st->ncs;
	*seq = st->cs_seq;
	return st->cs;
}

void
store_changeset_done(struct store *st)
{
	free(st->cs);
	st->cs = NULL;
	st->ncs = 0;
}

sqlite3 *
store_sqlite(struct store *st)
{
	return st->db;
}

int64_t
store_repl_seq(const struct store *st)
{
	return st->seq;
}

int64_t
store_epoch(struct store *st)
{
	char *v = NULL;
	int64_t e = 1;
	if (store_meta_get(st, "epoch", &v) == 0)
		e = strtoll(v, NULL, 10);
	free(v);
	return e > 0 ? e : 1;
}

int
store_set_epoch(struct store *st, int64_t epoch)
{
	char v[32];
	snprintf(v, sizeof v, "%lld", (long long)epoch);
	return store_meta_set(st, "epoch", v);
}

