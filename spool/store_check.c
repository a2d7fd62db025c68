/* store_check.c: backup, consistency check and text dump of a store. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spool/store_int.h"

int
store_backup(struct store *st, const char *path)
{
	sqlite3 *dst = NULL;
	sqlite3_backup *b;
	int rc;

	unlink(path);
	if (sqlite3_open_v2(path, &dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
		log_warnx("store: cannot create %s: %s", path, dst ? sqlite3_errmsg(dst) : "out of memory");
		sqlite3_close(dst);
		return -1;
	}
	if (!(b = sqlite3_backup_init(dst, "main", st->db, "main"))) {
		log_warnx("store: cannot back up to %s: %s", path, sqlite3_errmsg(dst));
		sqlite3_close(dst);
		return -1;
	}
	rc = sqlite3_backup_step(b, -1);
	sqlite3_backup_finish(b);
	if (rc != SQLITE_DONE) {
		log_warnx("store: backup to %s failed: %s", path, sqlite3_errstr(rc));
		sqlite3_close(dst);
		return -1;
	}
	/* A backup of a WAL database is in WAL mode; one file is easier to ship. */
	sqlite3_exec(dst, "PRAGMA journal_mode = DELETE", NULL, NULL, NULL);
	sqlite3_close(dst);
	return 0;
}
/* Checking. */

/*
 * nowq's own invariants, each a query returning (what, detail) per broken
 * row.  json_type runs only on valid JSON (CASE evaluates lazily), since it
 * raises an error on anything else.
 */
#define BAD_LIST(col) \
	"CASE WHEN json_valid(" col ") THEN json_type(" col ") <> 'array' ELSE 1 END"
static const struct {
	const char *sql;
	const char *problem;
} store_invariants[] = {
	{ "SELECT 'job ' || id, state FROM jobs WHERE state NOT BETWEEN 0 AND 5",
	  "has an unknown state" },
	{ "SELECT 'job ' || id, state FROM jobs WHERE state IN (1, 2)"
	  " AND (host IS NULL OR host = '')",
	  "is dispatched or running but has no host" },
	{ "SELECT 'job ' || id, state FROM jobs WHERE state IN (3, 4, 5) AND end_time <= 0",
	  "has finished but has no end time" },
	{ "SELECT 'job ' || id, '' FROM jobs WHERE script_hash IS NULL AND argv IS NULL",
	  "has neither a script nor a command" },
	{ "SELECT 'job ' || id, argv FROM jobs WHERE argv IS NOT NULL AND (" BAD_LIST("argv")
	  " OR json_array_length(argv) = 0)",
	  "has a malformed command (argv)" },
	{ "SELECT 'job ' || id, args FROM jobs WHERE args IS NOT NULL AND " BAD_LIST("args"),
	  "has malformed script arguments (args)" },
	{ "SELECT 'job ' || id, '' FROM jobs WHERE env IS NOT NULL AND " BAD_LIST("env"),
	  "has a malformed environment (env)" },
	{ "SELECT 'job ' || id, sup_groups FROM jobs WHERE sup_groups IS NOT NULL AND "
	  BAD_LIST("sup_groups"),
	  "has malformed supplementary groups" },
	{ "SELECT 'job ' || id, prio FROM jobs WHERE prio NOT BETWEEN -1023 AND 1024",
	  "has a priority out of range" },
	{ "SELECT 'job ' || id, hold || '/' || error || '/' || delete_req FROM jobs"
	  " WHERE hold NOT BETWEEN 0 AND 255 OR error NOT IN (0, 1) OR delete_req NOT IN (0, 1)",
	  "has hold/error/delete flags out of range" },
	{ "SELECT 'job id sequence', seq FROM sqlite_sequence WHERE name = 'jobs'"
	  " AND seq < (SELECT max(id) FROM jobs)",
	  "is behind the largest job id, so ids could repeat" },
	{ "SELECT 'host ' || name, slots FROM hosts WHERE slots < 0",
	  "has a negative slot count" },
	{ "SELECT 'accounting row ' || id, 'job ' || job_id FROM accounting WHERE wallclock < 0"
	  " OR utime < 0 OR stime < 0 OR maxrss_kb < 0 OR ru_minflt < 0 OR ru_majflt < 0"
	  " OR ru_inblock < 0 OR ru_oublock < 0 OR ru_nvcsw < 0 OR ru_nivcsw < 0",
	  "has a negative usage" },
	{ "SELECT 'accounting row ' || id, 'job ' || job_id FROM accounting"
	  " WHERE failed_code NOT BETWEEN 0 AND 65535 OR end_time < start_time",
	  "has a failed code out of range or ends before it starts" },
	{ "SELECT 'task ' || t.job_id || '.' || t.task, 'job ' || t.job_id FROM tasks t"
	  " JOIN jobs j ON j.id = t.job_id WHERE j.t_first = 0 OR t.task < j.t_first"
	  " OR t.task > j.t_last OR (t.task - j.t_first) % j.t_step != 0",
	  "is not a task of its job's range (qsub -t)" },
	{ "SELECT 'task ' || job_id || '.' || task, state FROM tasks WHERE state NOT BETWEEN 0 AND 5"
	  " OR (state IN (1, 2) AND (host IS NULL OR host = ''))",
	  "has an unknown state, or runs without a host" },
	/* An array ends only after its last task (array_check_end). */
	{ "SELECT 'job ' || j.id, 'task ' || t.task || ' in state ' || t.state FROM jobs j"
	  " JOIN tasks t ON t.job_id = j.id WHERE j.state IN (3, 4, 5) AND t.state < 3",
	  "has finished while a task of it has not" },
	/* The runnable query refuses to run without its index; say so here first. */
	{ "WITH want (name) AS (VALUES ('jobs_runnable'), ('jobs_runnable_uid'), ('jobs_state'),"
	  " ('jobs_host'), ('jobs_owner'), ('jobs_finished'), ('jobs_script'),"
	  " ('accounting_owner'), ('accounting_end'), ('accounting_name'), ('tasks_unfinished'),"
	  " ('jobs_pending'))"
	  " SELECT 'index ' || name, '' FROM want"
	  " WHERE name NOT IN (SELECT name FROM sqlite_master WHERE type = 'index')",
	  "is missing" },
};

static int
store_check_rows(sqlite3 *db, const char *sql, const char *problem, FILE *out)
{
	sqlite3_stmt *s;
	int n = 0, rc;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
		if (out)
			fprintf(out, "check cannot run (%s): %s\n", problem, sqlite3_errmsg(db));
		return 1;
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *what = (const char *)sqlite3_column_text(s, 0);
		const char *detail = (const char *)sqlite3_column_text(s, 1);
		if (out)
			fprintf(out, "%s %s%s%s%s\n", what ? what : "?", problem,
			    detail && *detail ? " (" : "", detail && *detail ? detail : "",
			    detail && *detail ? ")" : "");
		n++;
	}
	if (rc != SQLITE_DONE) {
		if (out)
			fprintf(out, "check stopped (%s): %s\n", problem, sqlite3_errmsg(db));
		n++;
	}
	sqlite3_finalize(s);
	return n;
}

/* Each script's key must be the hash of its text (plus a collision suffix). */
static int
store_check_scripts(sqlite3 *db, FILE *out)
{
	sqlite3_stmt *s;
	int n = 0, rc;
	char want[24];

	if (sqlite3_prepare_v2(db, "SELECT hash, body FROM scripts", -1, &s, NULL) != SQLITE_OK) {
		if (out)
			fprintf(out, "check cannot read scripts: %s\n", sqlite3_errmsg(db));
		return 1;
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *hash = (const char *)sqlite3_column_text(s, 0);
		const void *body = sqlite3_column_blob(s, 1);
		size_t len = (size_t)sqlite3_column_bytes(s, 1);

		snprintf(want, sizeof want, "%016" PRIx64, hash_fnv1a64(body ? body : "", len));
		if (!hash || strncmp(hash, want, 16) != 0 || (hash[16] && hash[16] != '-')) {
			if (out)
				fprintf(out, "script %s does not match its content (hash %s)\n",
				    hash ? hash : "NULL", want);
			n++;
		}
	}
	if (rc != SQLITE_DONE) {
		if (out)
			fprintf(out, "check stopped reading scripts: %s\n", sqlite3_errmsg(db));
		n++;
	}
	sqlite3_finalize(s);
	return n;
}

int
store_check(struct store *st, FILE *out)
{
	sqlite3_stmt *s;
	int n = 0, v, rc;

	v = store_schema_version(st);
	if (v != STORE_SCHEMA_VERSION) {
		if (out)
			fprintf(out, "schema version is %d, expected %d\n", v, STORE_SCHEMA_VERSION);
		n++;
	}
	/* integrity_check says "ok" alone when all is well, else one row per problem. */
	if (sqlite3_prepare_v2(st->db, "PRAGMA integrity_check", -1, &s, NULL) == SQLITE_OK) {
		while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
			const char *t = (const char *)sqlite3_column_text(s, 0);
			if (t && strcmp(t, "ok") == 0)
				continue;
			/* One line per problem, though SQLite's may span two. */
			if (out) {
				fputs("integrity: ", out);
				for (; t && *t; t++)
					if (*t == '\n')
						fputs("; ", out);
					else
						fputc(*t, out);
				fputc('\n', out);
			}
			n++;
		}
		if (rc != SQLITE_DONE) {
			if (out)
				fprintf(out, "integrity check stopped: %s\n", sqlite3_errmsg(st->db));
			n++;
		}
		sqlite3_finalize(s);
	} else {
		if (out)
			fprintf(out, "integrity check cannot run: %s\n", sqlite3_errmsg(st->db));
		n++;
	}
	/* Past a damaged file or another schema the queries below would only
	 * repeat the same problem. */
	if (n > 0)
		return n;
	n += store_check_rows(st->db, "SELECT \"table\" || ' row ' || rowid, 'refers to a missing "
	    "row of ' || parent FROM pragma_foreign_key_check", "breaks a foreign key", out);
	for (size_t i = 0; i < sizeof store_invariants / sizeof *store_invariants; i++)
		n += store_check_rows(st->db, store_invariants[i].sql, store_invariants[i].problem, out);
	n += store_check_scripts(st->db, out);
	return n;
}

/* Dumping. */

/* One value on one line: text escaped so that rows stay lines, reals with
 * every digit, blobs (scripts) by length and hash to keep the dump small;
 * their content is what the check verifies against the key. */
static void
store_dump_value(sqlite3_stmt *s, int i, FILE *out)
{
	const unsigned char *t;
	int n;

	switch (sqlite3_column_type(s, i)) {
	case SQLITE_NULL:
		fputs("NULL", out);
		break;
	case SQLITE_INTEGER:
		fprintf(out, "%lld", (long long)sqlite3_column_int64(s, i));
		break;
	case SQLITE_FLOAT:
		fprintf(out, "%.17g", sqlite3_column_double(s, i));
		break;
	case SQLITE_BLOB: {
		const void *b = sqlite3_column_blob(s, i);
		n = sqlite3_column_bytes(s, i);
		fprintf(out, "blob(%d,%016" PRIx64 ")", n, hash_fnv1a64(b ? b : "", (size_t)n));
		break;
	}
	default:
		t = sqlite3_column_text(s, i);
		n = sqlite3_column_bytes(s, i);
		fputc('"', out);
		for (int k = 0; k < n; k++) {
			unsigned char c = t[k];
			if (c == '"' || c == '\\')
				fprintf(out, "\\%c", c);
			else if (c == '\n')
				fputs("\\n", out);
			else if (c < 0x20 || c == 0x7f)
				fprintf(out, "\\x%02x", c);
			else
				fputc(c, out);
		}
		fputc('"', out);
	}
}

/* The columns of table in order, and the ORDER BY of its primary key
 * (rowid for a table without one declared, all columns for one without
 * rowid either: sqlite_sequence). */
static int
store_dump_table(sqlite3 *db, const char *table, FILE *out)
{
	sqlite3_stmt *s;
	char *cols = NULL, *order = NULL, *sql;
	int rc, ncol, npk = 0, ret = -1;
	bool rowid;

	/* Names come from the file, which may be anyone's: quoted, never pasted. */
	sql = sqlite3_mprintf("SELECT name, pk FROM pragma_table_info(%Q) ORDER BY pk = 0, pk, cid", table);
	rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(s, 0);
		char *q = sqlite3_mprintf("\"%w\"", name), *t;
		t = cols ? xasprintf("%s, %s", cols, q) : xstrdup(q);
		free(cols);
		cols = t;
		if (sqlite3_column_int(s, 1) > 0) {
			t = order ? xasprintf("%s, %s", order, q) : xstrdup(q);
			free(order);
			order = t;
			npk++;
		}
		sqlite3_free(q);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE || !cols)
		goto out;
	/* A rowid table's order is its rowid when no key is declared. */
	sql = sqlite3_mprintf("SELECT 1 FROM sqlite_master WHERE name = %Q AND sql LIKE '%%WITHOUT ROWID%%'",
	    table);
	rowid = store_query_int(db, sql) != 1 && strcmp(table, "sqlite_sequence") != 0;
	sqlite3_free(sql);
	if (!npk) {
		free(order);
		order = xstrdup(rowid ? "rowid" : cols);
	}
	/* Column names go in the table's line, so a column added on one side
	 * alone shows in the diff. */
	sql = sqlite3_mprintf("SELECT %s FROM \"%w\" ORDER BY %s", cols, table, order);
	rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK)
		goto out;
	fprintf(out, "table %s (%s)\n", table, cols);
	ncol = sqlite3_column_count(s);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		for (int i = 0; i < ncol; i++) {
			if (i)
				fputc('|', out);
			store_dump_value(s, i, out);
		}
		fputc('\n', out);
	}
	sqlite3_finalize(s);
	ret = rc == SQLITE_DONE ? 0 : -1;
out:
	free(cols);
	free(order);
	return ret;
}

int
store_dump(struct store *st, FILE *out)
{
	sqlite3_stmt *s;
	int rc, ret = 0;

	fprintf(out, "nowq database, schema version %d\n", store_schema_version(st));
	/* Every table, in name order: a table added by a later migration is
	 * dumped (and compared) without a word here.  Indexes are derived. */
	if (sqlite3_prepare_v2(st->db, "SELECT name FROM sqlite_master WHERE type = 'table'"
	    " AND name NOT LIKE 'sqlite_stat%' ORDER BY name", -1, &s, NULL) != SQLITE_OK)
		return store_fail(st, "cannot list the tables");
	while (ret == 0 && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(s, 0);
		if (store_dump_table(st->db, name, out) < 0) {
			log_warnx("store: cannot dump table %s: %s", name, sqlite3_errmsg(st->db));
			ret = -1;
		}
	}
	if (ret == 0 && rc != SQLITE_DONE)
		ret = store_fail(st, "cannot list the tables");
	sqlite3_finalize(s);
	return ret;
}
