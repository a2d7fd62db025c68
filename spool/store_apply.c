/* store_apply.c: the standby's applier of the primary's changesets. */
#include "config.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spool/store_int.h"

/*
 * The standby's applier.  sqlite3changeset_apply prepares its statements
 * and reads the table's columns anew at every call, and its PRAGMA
 * defer_foreign_keys makes every statement of the connection prepare
 * again.  Here the statements live
 * as long as the store, and what counts as a conflict is what
 * sqlite3changeset_apply finds (any conflict abandons the changeset: the
 * standby then asks for a snapshot): a row to update or delete that is
 * not there or differs, a row to insert whose key is taken.  A change that
 * fails another constraint is tried again once the rest of its table is
 * in, as there (INSERT OR REPLACE into accounting can come as the new row
 * before the old one's delete); one that fails a foreign key is tried
 * again at the end of the changeset, which is what deferring foreign keys
 * while applying amounts to, without the pragma.
 */

enum apply_res { AP_DONE, AP_RETRY, AP_CONFLICT, AP_ERROR };

/* A change that failed a constraint, its values copied to try it again. */
struct apply_retry {
	struct apply_tab *t;
	int               ncs, op, rc;
	sqlite3_value    *old[APPLY_MAXCOL], *new[APPLY_MAXCOL];
};

static void
apply_tab_reset(struct apply_tab *t, int ncs)
{
	sqlite3_finalize(t->ins);
	sqlite3_finalize(t->del);
	for (int i = 0; i < t->nup; i++)
		sqlite3_finalize(t->up[i]);
	t->ins = t->del = NULL;
	t->nup = t->upnext = 0;
	t->ncs = ncs;
}

void
apply_free(struct store *st)
{
	struct apply_tab *t;

	while ((t = st->apply) != NULL) {
		st->apply = t->next;
		apply_tab_reset(t, 0);
		sqlite3_finalize(t->sel);
		for (int i = 0; i < t->ncol; i++)
			sqlite3_free(t->col[i]);
		free(t->name);
		free(t);
	}
}

/* The table's columns, read from the schema once per store; NULL with *rc
 * SQLITE_OK when there is no such table. */
struct apply_tab *
apply_tab(struct store *st, const char *name, int *rc)
{
	struct apply_tab *t;
	sqlite3_stmt *s;
	char *sql;

	for (t = st->apply; t; t = t->next)
		if (strcmp(t->name, name) == 0)
			return t;
	if (!(sql = sqlite3_mprintf("PRAGMA main.table_info(%Q)", name))) {
		*rc = SQLITE_NOMEM;
		return NULL;
	}
	*rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	sqlite3_free(sql);
	if (*rc != SQLITE_OK)
		return NULL;
	t = xcalloc(1, sizeof *t);
	while ((*rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *c = (const char *)sqlite3_column_text(s, 1);

		/* The tables are ours: a wider one needs wider sets. */
		assert(t->ncol < APPLY_MAXCOL);
		if (!c || !(t->col[t->ncol] = sqlite3_mprintf("\"%w\"", c))) {
			*rc = SQLITE_NOMEM;
			break;
		}
		if (sqlite3_column_int(s, 5) > 0) {
			t->pk |= 1ULL << t->ncol;
			t->pkpos[t->ncol] = (unsigned char)sqlite3_column_int(s, 5);
		}
		t->ncol++;
	}
	sqlite3_finalize(s);
	/* AUTOINCREMENT's record has no key, but one row per table: keyed by
	 * name, it travels with the rest (apply_autoinc), so ids a standby
	 * never saw (a job made and deleted in one transaction) are not given
	 * again after a failover. */
	if (*rc == SQLITE_DONE && strcmp(name, "sqlite_sequence") == 0 && t->ncol == 2 && !t->pk) {
		t->pk = 1;
		t->pkpos[0] = 1;
		t->autoinc = true;
	}
	if (*rc != SQLITE_DONE || t->ncol == 0) {
		if (*rc == SQLITE_DONE)
			*rc = SQLITE_OK;
		for (int i = 0; i < t->ncol; i++)
			sqlite3_free(t->col[i]);
		free(t);
		return NULL;
	}
	*rc = SQLITE_OK;
	t->name = xstrdup(name);
	t->next = st->apply;
	st->apply = t;
	return t;
}

/* sqlite3changeset_apply's test of a table: the changeset may lack columns
 * added since (they take their defaults), never have more, and has the
 * same primary key, which a table needs to take changes at all. */
static bool
apply_fits(const struct apply_tab *t, int ncs, const unsigned char *pk)
{
	uint64_t k = 0;

	if (ncs < 1 || ncs > t->ncol)
		return false;
	for (int i = 0; i < ncs; i++)
		if (pk[i])
			k |= 1ULL << i;
	return k != 0 && k == t->pk;
}

static sqlite3_stmt *
apply_prepare(struct store *st, sqlite3_str *q, int *rc)
{
	sqlite3_stmt *s = NULL;
	char *sql = sqlite3_str_finish(q);

	if (!sql) {
		*rc = SQLITE_NOMEM;
		return NULL;
	}
	*rc = sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, NULL);
	sqlite3_free(sql);
	return *rc == SQLITE_OK ? s : NULL;
}

/* INSERT INTO "t" ("a", "b") VALUES (?1, ?2) */
static sqlite3_stmt *
apply_insert(struct store *st, struct apply_tab *t, int *rc)
{
	sqlite3_str *q;
	int i;

	if (t->ins)
		return t->ins;
	q = sqlite3_str_new(st->db);
	sqlite3_str_appendf(q, "INSERT INTO main.\"%w\" (", t->name);
	for (i = 0; i < t->ncs; i++)
		sqlite3_str_appendf(q, "%s%s", i ? ", " : "", t->col[i]);
	sqlite3_str_appendall(q, ") VALUES (");
	for (i = 0; i < t->ncs; i++)
		sqlite3_str_appendf(q, "%s?%d", i ? ", " : "", i + 1);
	sqlite3_str_appendall(q, ")");
	return t->ins = apply_prepare(st, q, rc);
}

/* DELETE FROM "t" WHERE "k" = ?1 AND "b" IS ?2: the row must be as the
 * primary had it, every column, or it is a conflict. */
static sqlite3_stmt *
apply_delete(struct store *st, struct apply_tab *t, int *rc)
{
	sqlite3_str *q;

	if (t->del)
		return t->del;
	q = sqlite3_str_new(st->db);
	sqlite3_str_appendf(q, "DELETE FROM main.\"%w\" WHERE ", t->name);
	for (int i = 0; i < t->ncs; i++)
		sqlite3_str_appendf(q, "%s%s %s ?%d", i ? " AND " : "", t->col[i],
		    t->pk >> i & 1 ? "=" : "IS", i + 1);
	return t->del = apply_prepare(st, q, rc);
}

/* UPDATE "t" SET "b" = ?2 WHERE "k" IS ?65 AND "b" IS ?66: new values at
 * the column's number, old ones APPLY_MAXCOL further, so one statement
 * serves every change of the same columns. */
static sqlite3_stmt *
apply_update(struct store *st, struct apply_tab *t, uint64_t set, int *rc)
{
	sqlite3_stmt *s;
	sqlite3_str *q;
	const char *sep;
	int i;

	for (i = 0; i < t->nup; i++)
		if (t->upset[i] == set)
			return t->up[i];
	q = sqlite3_str_new(st->db);
	sqlite3_str_appendf(q, "UPDATE main.\"%w\" SET ", t->name);
	for (i = 0, sep = ""; i < t->ncs; i++)
		if (set >> i & 1) {
			sqlite3_str_appendf(q, "%s%s = ?%d", sep, t->col[i], i + 1);
			sep = ", ";
		}
	sqlite3_str_appendall(q, " WHERE ");
	for (i = 0, sep = ""; i < t->ncs; i++)
		if ((set | t->pk) >> i & 1) {
			sqlite3_str_appendf(q, "%s%s IS ?%d", sep, t->col[i], APPLY_MAXCOL + i + 1);
			sep = " AND ";
		}
	if (!(s = apply_prepare(st, q, rc)))
		return NULL;
	if (t->nup < APPLY_NUP)
		i = t->nup++;
	else {
		i = t->upnext;
		t->upnext = (i + 1) % APPLY_NUP;
		sqlite3_finalize(t->up[i]);
	}
	t->up[i] = s;
	t->upset[i] = set;
	return s;
}

/* The columns an UPDATE sets: those with a new value, but the key, which
 * sqlite3changeset_apply never sets either. */
static uint64_t
apply_set(const struct apply_tab *t, int ncs, sqlite3_value **new)
{
	uint64_t set = 0;

	for (int i = 0; i < ncs; i++)
		if (new[i] && !(t->pk >> i & 1))
			set |= 1ULL << i;
	return set;
}

/* The values of the change at it.  A changeset is input: one without the
 * values its operation needs is corrupt, as sqlite3changeset_apply has it. */
static int
apply_read(sqlite3_changeset_iter *it, const struct apply_tab *t, int ncs, int op,
    sqlite3_value **old, sqlite3_value **new)
{
	uint64_t need;
	int i;

	for (i = 0; i < ncs; i++) {
		old[i] = new[i] = NULL;
		if ((op == SQLITE_DELETE || op == SQLITE_UPDATE) &&
		    sqlite3changeset_old(it, i, &old[i]) != SQLITE_OK)
			return SQLITE_CORRUPT;
		if ((op == SQLITE_INSERT || op == SQLITE_UPDATE) &&
		    sqlite3changeset_new(it, i, &new[i]) != SQLITE_OK)
			return SQLITE_CORRUPT;
	}
	need = ~0ULL;
	if (op == SQLITE_UPDATE && (need = apply_set(t, ncs, new)) == 0)
		return SQLITE_CORRUPT;
	if (op == SQLITE_UPDATE)
		need |= t->pk;
	for (i = 0; i < ncs; i++)
		if ((op == SQLITE_INSERT ? !new[i] : !old[i]) && need >> i & 1)
			return SQLITE_CORRUPT;
	return SQLITE_OK;
}

/* Applies one change; *rc has SQLite's error when it did not. */
static enum apply_res
apply_one(struct store *st, struct apply_tab *t, int ncs, int op, sqlite3_value **old,
    sqlite3_value **new, int *rc)
{
	sqlite3_stmt *s;
	uint64_t set = 0;
	int i, changes;

	if (t->ncs != ncs)
		apply_tab_reset(t, ncs);
	*rc = SQLITE_OK;
	if (op == SQLITE_INSERT) {
		if (!(s = apply_insert(st, t, rc)))
			return AP_ERROR;
		for (i = 0; i < ncs && *rc == SQLITE_OK; i++)
			*rc = sqlite3_bind_value(s, i + 1, new[i]);
	} else if (op == SQLITE_DELETE) {
		if (!(s = apply_delete(st, t, rc)))
			return AP_ERROR;
		for (i = 0; i < ncs && *rc == SQLITE_OK; i++)
			*rc = sqlite3_bind_value(s, i + 1, old[i]);
	} else {
		assert(op == SQLITE_UPDATE);
		set = apply_set(t, ncs, new);
		if (!(s = apply_update(st, t, set, rc)))
			return AP_ERROR;
		for (i = 0; i < ncs && *rc == SQLITE_OK; i++) {
			if (set >> i & 1)
				*rc = sqlite3_bind_value(s, i + 1, new[i]);
			if (*rc == SQLITE_OK && (set | t->pk) >> i & 1)
				*rc = sqlite3_bind_value(s, APPLY_MAXCOL + i + 1, old[i]);
		}
	}
	if (*rc == SQLITE_OK && (*rc = sqlite3_step(s)) == SQLITE_DONE)
		*rc = SQLITE_OK;
	changes = sqlite3_changes(st->db);
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (*rc == SQLITE_OK) {
		if (op == SQLITE_INSERT || changes == 1)
			return AP_DONE;
		log_debug("store: applying a changeset: the %s of a row of %s finds it missing "
		    "or different", op == SQLITE_DELETE ? "delete" : "update", t->name);
		*rc = SQLITE_ABORT;
		return AP_CONFLICT;
	}
	if ((*rc & 0xff) != SQLITE_CONSTRAINT)
		return AP_ERROR;
	if (*rc == SQLITE_CONSTRAINT_PRIMARYKEY) {
		log_debug("store: applying a changeset: a row of %s is there already", t->name);
		*rc = SQLITE_ABORT;
		return AP_CONFLICT;
	}
	return AP_RETRY;
}

static void
apply_retry_free(struct apply_retry *r)
{
	for (int i = 0; i < r->ncs; i++) {
		sqlite3_value_free(r->old[i]);
		sqlite3_value_free(r->new[i]);
	}
}

/* Keeps the change for another try; its values live only until the
 * iterator moves on. */
static int
apply_keep(struct apply_retry **rv, int *nrv, struct apply_tab *t, int ncs, int op, int rc,
    sqlite3_value **old, sqlite3_value **new)
{
	struct apply_retry *r;

	*rv = xrealloc(*rv, (size_t)(*nrv + 1) * sizeof **rv);
	r = &(*rv)[(*nrv)++];
	memset(r, 0, sizeof *r);
	r->t = t;
	r->ncs = ncs;
	r->op = op;
	r->rc = rc;
	for (int i = 0; i < ncs; i++)
		if ((old[i] && !(r->old[i] = sqlite3_value_dup(old[i]))) ||
		    (new[i] && !(r->new[i] = sqlite3_value_dup(new[i]))))
			return SQLITE_NOMEM;
	return SQLITE_OK;
}

/* Tries the kept changes again, round after round while a round applies
 * any.  At a table's end what still fails a constraint other than a
 * foreign key is a conflict; at the changeset's end anything is. */
static enum apply_res
apply_retry(struct store *st, struct apply_retry *rv, int *nrv, bool last, int *rc)
{
	enum apply_res res = AP_DONE, r;
	bool progress = true;
	int i, kept, n = *nrv;

	while (n > 0 && progress && res == AP_DONE) {
		progress = false;
		for (i = kept = 0; i < n; i++) {
			if (res == AP_DONE) {
				r = apply_one(st, rv[i].t, rv[i].ncs, rv[i].op, rv[i].old,
				    rv[i].new, &rv[i].rc);
				if (r == AP_DONE) {
					apply_retry_free(&rv[i]);
					progress = true;
					continue;
				}
				if (r != AP_RETRY) {
					res = r;
					*rc = rv[i].rc;
				}
			}
			if (kept != i)
				rv[kept] = rv[i];
			kept++;
		}
		n = kept;
	}
	*nrv = n;
	if (res != AP_DONE)
		return res;
	for (i = 0; i < n; i++)
		if (last || rv[i].rc != SQLITE_CONSTRAINT_FOREIGNKEY) {
			log_debug("store: applying a changeset: a change of %s fails: %s",
			    rv[i].t->name, sqlite3_errstr(rv[i].rc));
			*rc = rv[i].rc;
			return AP_CONFLICT;
		}
	return AP_DONE;
}

/* An SQLite varint at *i, all of it inside the n bytes. */
bool
apply_varint(const unsigned char *p, int n, int *i, uint64_t *v)
{
	*v = 0;
	for (int k = 0; k < 9; k++) {
		if (*i >= n)
			return false;
		if (k == 8) {
			*v = *v << 8 | p[(*i)++];
			return true;
		}
		*v = *v << 7 | (p[*i] & 0x7f);
		if (!(p[(*i)++] & 0x80))
			return true;
	}
	return true;
}

/*
 * Whether the changeset has a changeset's shape: table headers ('T', the
 * number of columns, a key flag per column, the name and its NUL) each
 * followed by changes (the operation, the indirect flag, the old and the
 * new record as the operation has them, a type byte per value and the
 * value's bytes).  SQLite 3.40's reader never returns from a header that
 * runs past the end, and reads a varint or a value past it, so a
 * changeset, which is input, is walked once before it is read.
 */
static bool
apply_shape_ok(const unsigned char *p, int n)
{
	uint64_t v;
	int i = 0, ncol = 0, nval;
	const unsigned char *nul;

	while (i < n) {
		switch (p[i++]) {
		case 'T':
			/* SQLite's own bound on a header's columns. */
			if (!apply_varint(p, n, &i, &v) || v == 0 || v > 65536 ||
			    v > (uint64_t)(n - i))
				return false;
			ncol = (int)v;
			i += ncol;
			if (!(nul = memchr(p + i, 0, (size_t)(n - i))))
				return false;
			i = (int)(nul - p) + 1;
			continue;
		case SQLITE_INSERT:
		case SQLITE_DELETE:
			nval = ncol;
			break;
		case SQLITE_UPDATE:
			nval = 2 * ncol;
			break;
		default:
			return false;
		}
		if (ncol == 0 || i++ >= n)
			return false;
		while (nval-- > 0) {
			if (i >= n)
				return false;
			switch (p[i++]) {
			case 0:			/* not in the record */
			case SQLITE_NULL:
				break;
			case SQLITE_INTEGER:
			case SQLITE_FLOAT:
				if (n - i < 8)
					return false;
				i += 8;
				break;
			case SQLITE_TEXT:
			case SQLITE_BLOB:
				if (!apply_varint(p, n, &i, &v) || v > (uint64_t)(n - i))
					return false;
				i += (int)v;
				break;
			default:
				return false;
			}
		}
	}
	return true;
}

/* A change of sqlite_sequence raises the standby's to the primary's, never
 * lowers it: the standby's own inserts of the primary's rows move it too,
 * so its old value is no test of a conflict.  Its ins and del statements
 * are the raise's two halves. */
static enum apply_res
apply_autoinc(struct store *st, struct apply_tab *t, int op, sqlite3_value **old,
    sqlite3_value **new, int *rc)
{
	sqlite3_value *name = op == SQLITE_INSERT ? new[0] : old[0];

	*rc = SQLITE_OK;
	if (op == SQLITE_DELETE || !new[1])
		return AP_DONE;
	if (!t->ins && (*rc = sqlite3_prepare_v3(st->db, "INSERT INTO sqlite_sequence (name, seq)"
	    " SELECT ?1, ?2 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = ?1)", -1,
	    SQLITE_PREPARE_PERSISTENT, &t->ins, NULL)) != SQLITE_OK)
		return AP_ERROR;
	if (!t->del && (*rc = sqlite3_prepare_v3(st->db, "UPDATE sqlite_sequence SET seq = ?2"
	    " WHERE name = ?1 AND seq < ?2", -1, SQLITE_PREPARE_PERSISTENT, &t->del, NULL)) != SQLITE_OK)
		return AP_ERROR;
	for (int k = 0; k < 2; k++) {
		sqlite3_stmt *s = k ? t->del : t->ins;

		sqlite3_bind_value(s, 1, name);
		sqlite3_bind_value(s, 2, new[1]);
		*rc = sqlite3_step(s);
		sqlite3_reset(s);
		sqlite3_clear_bindings(s);
		if (*rc != SQLITE_DONE)
			return AP_ERROR;
	}
	*rc = SQLITE_OK;
	return AP_DONE;
}

static enum apply_res
apply_changeset(struct store *st, const void *cs, int n, int *rc)
{
	sqlite3_changeset_iter *it = NULL;
	sqlite3_value *old[APPLY_MAXCOL], *new[APPLY_MAXCOL];
	struct apply_tab *t = NULL;
	struct apply_retry *rv = NULL;
	enum apply_res res = AP_DONE;
	unsigned char *pk;
	const char *name;
	int nrv = 0, ncs, op, npk, fk, hi;

	*rc = SQLITE_CORRUPT;
	if (n < 0 || !apply_shape_ok(cs, n) ||
	    (*rc = sqlite3changeset_start(&it, n, (void *)cs)) != SQLITE_OK)
		return AP_ERROR;
	while ((*rc = sqlite3changeset_next(it)) == SQLITE_ROW) {
		res = AP_ERROR;
		if ((*rc = sqlite3changeset_op(it, &name, &ncs, &op, NULL)) != SQLITE_OK ||
		    (*rc = sqlite3changeset_pk(it, &pk, &npk)) != SQLITE_OK)
			break;
		*rc = SQLITE_CORRUPT;
		if (!name || npk != ncs || (op != SQLITE_INSERT && op != SQLITE_DELETE &&
		    op != SQLITE_UPDATE))
			break;
		if (!t || strcmp(name, t->name) != 0 || !apply_fits(t, ncs, pk)) {
			/* The end of a table: the changes that failed a
			 * constraint get another try. */
			if (t && (res = apply_retry(st, rv, &nrv, false, rc)) != AP_DONE)
				break;
			res = AP_ERROR;
			/* sqlite_stat1 has rules of its own there; ANALYZE never runs here. */
			if (sqlite3_stricmp(name, "sqlite_stat1") == 0) {
				*rc = SQLITE_SCHEMA;
				break;
			}
			/* sqlite3changeset_apply skips such a table's
			 * changes with a log line; here a standby whose
			 * tables are not the primary's asks for a snapshot. */
			if (!(t = apply_tab(st, name, rc)) || !apply_fits(t, ncs, pk)) {
				log_debug("store: applying a changeset: table %s is not as the "
				    "primary's", name);
				if (*rc == SQLITE_OK)
					*rc = SQLITE_SCHEMA;
				break;
			}
		}
		if ((*rc = apply_read(it, t, ncs, op, old, new)) != SQLITE_OK)
			break;
		res = t->autoinc ? apply_autoinc(st, t, op, old, new, rc) :
		    apply_one(st, t, ncs, op, old, new, rc);
		if (res == AP_RETRY) {
			res = AP_DONE;
			if ((*rc = apply_keep(&rv, &nrv, t, ncs, op, *rc, old, new)) != SQLITE_OK)
				res = AP_ERROR;
		}
		if (res != AP_DONE)
			break;
	}
	if (res == AP_DONE && *rc != SQLITE_DONE)
		res = AP_ERROR;
	if (res == AP_DONE)
		res = apply_retry(st, rv, &nrv, true, rc);
	fk = sqlite3changeset_finalize(it);
	if (res == AP_DONE && fk != SQLITE_OK) {
		*rc = fk;
		res = AP_ERROR;
	}
	/* sqlite3changeset_apply's last test; no foreign key here is
	 * deferrable, so this is for one that ever is. */
	if (res == AP_DONE && (sqlite3_db_status(st->db, SQLITE_DBSTATUS_DEFERRED_FKS, &fk, &hi,
	    0) != SQLITE_OK || fk != 0)) {
		*rc = SQLITE_CONSTRAINT_FOREIGNKEY;
		res = AP_CONFLICT;
	}
	for (int i = 0; i < nrv; i++)
		apply_retry_free(&rv[i]);
	free(rv);
	return res;
}

int
store_apply(struct store *st, const void *cs, int n, int64_t seq, char *err, size_t errlen)
{
	enum apply_res res;
	int conflicts, rc;

	if (seq != st->seq + 1) {
		snprintf(err, errlen, "changeset %lld does not follow %lld", (long long)seq,
		    (long long)st->seq);
		return -1;
	}
	if (!st->in_txn && store_begin(st) < 0) {
		snprintf(err, errlen, "cannot begin: %s", sqlite3_errmsg(st->db));
		return -1;
	}
	/* Applied inside our transaction, which also holds the meta row
	 * repl.seq the changeset sets; any conflict means the standby is not
	 * the copy it claims to be, and everything since the last commit goes. */
	res = apply_changeset(st, cs, n, &rc);
	if (res != AP_DONE) {
		conflicts = res == AP_CONFLICT;
		snprintf(err, errlen, "changeset %lld does not apply (%s, %d conflict%s)", (long long)seq,
		    sqlite3_errstr(rc), conflicts, conflicts == 1 ? "" : "s");
		store_rollback(st);
		return -1;
	}
	if (store_meta_set(st, "repl.seq", NULL) == 0) {
		char v[32];
		snprintf(v, sizeof v, "%lld", (long long)seq);
		store_meta_set(st, "repl.seq", v);
	}
	st->seq = seq;
	return 0;
}

int
store_apply_commit(struct store *st, char *err, size_t errlen)
{
	int64_t seq = st->seq;

	if (store_commit(st) < 0) {
		snprintf(err, errlen, "cannot commit changesets up to %lld: %s", (long long)seq,
		    sqlite3_errmsg(st->db));
		store_rollback(st);
		return -1;
	}
	return 0;
}

