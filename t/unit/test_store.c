/* test_store.c: unit tests of the SQLite store (spool/store*.c) and the spool-directory helpers (common/spooldir.c). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
/* The session extension's declarations, as in spool/store_int.h. */
#define SQLITE_ENABLE_SESSION 1
#define SQLITE_ENABLE_PREUPDATE_HOOK 1
#include <sqlite3.h>

#include "common/common.h"
#include "spool/spool.h"

/* Each test gets its own directory and an open store in it. */
struct fix {
	char          dir[64];
	char         *db;        /* dir/nowq.db */
	struct store *st;
};

static int
fix_setup(void **state)
{
	struct fix *f = xcalloc(1, sizeof *f);
	const char *why = NULL;

	strcpy(f->dir, "/tmp/nowq-test-store-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	f->db = xasprintf("%s/nowq.db", f->dir);
	f->st = store_open(f->dir, &why);
	if (!f->st) {
		fprintf(stderr, "store_open: %s\n", why);
		return -1;
	}
	*state = f;
	return 0;
}

static int
fix_teardown(void **state)
{
	struct fix *f = *state;

	store_close(f->st);
	spool_rmtree(f->dir);
	free(f->db);
	free(f);
	return 0;
}

/* Closes and opens the store again, as a restart of the master would. */
static void
reopen(struct fix *f)
{
	const char *why = NULL;

	store_close(f->st);
	f->st = store_open(f->dir, &why);
	assert_non_null(f->st);
}

/* A second, raw connection: the tests look at the file behind the store's back. */
static sqlite3 *
raw_open(const char *path)
{
	sqlite3 *db = NULL;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	return db;
}

static void
raw_exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("raw SQL failed: %s: %s", sql, err);
}

static int64_t
raw_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s;
	int64_t v;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		fail_msg("raw SQL failed: %s: %s", sql, sqlite3_errmsg(db));
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

/* Runs one statement on a fresh raw connection and closes it. */
static void
raw_do(struct fix *f, const char *sql)
{
	sqlite3 *db = raw_open(f->db);
	raw_exec(db, sql);
	sqlite3_close(db);
}

static int64_t
raw_get(struct fix *f, const char *sql)
{
	sqlite3 *db = raw_open(f->db);
	int64_t v = raw_int(db, sql);
	sqlite3_close(db);
	return v;
}

static char **
strv(const char *first, ...)
{
	char **v = xcalloc(16, sizeof *v);
	va_list ap;
	int n = 0;

	va_start(ap, first);
	for (const char *s = first; s; s = va_arg(ap, const char *))
		v[n++] = xstrdup(s);
	va_end(ap);
	return v;
}

/* The accounting extras of an attempt that used nothing. */
static const struct acct_info no_acct;

/* A script job with every field set to something recognisable. */
static struct job *
mkjob(const char *owner, uint32_t uid, int prio, const char *script)
{
	struct job *j = job_new();

	j->task = 0;
	j->name = xstrdup("test job");
	j->owner = xstrdup(owner);
	j->uid = uid;
	j->gid = uid + 100;
	j->groups = xcalloc(3, sizeof *j->groups);
	j->groups[0] = 10;
	j->groups[1] = 4000000000u;
	j->ngroups = 2;
	j->queue = xstrdup("all.q");
	j->prio = prio;
	j->script = xstrdup(script ? script : "#!/bin/sh\necho hello\n");
	j->args = strv("one", "two words", NULL);
	j->shell = xstrdup("/bin/bash");
	j->cwd = xstrdup("/home/u/work");
	j->home = xstrdup("/home/u");
	j->out_path = xstrdup("/tmp/o");
	j->err_path = xstrdup("/tmp/e");
	j->in_path = xstrdup("host:in.txt,/tmp/in");
	j->join = true;
	j->env = strv("A=1", "PATH=/bin:/usr/bin", "EMPTY=", "UTF8=\xc3\xa9t\xc3\xa9", NULL);
	j->submit_host = xstrdup("submitter");
	j->submit_time = 1700000000123LL;
	return j;
}

static struct job *
mkbinjob(const char *owner, uint32_t uid)
{
	struct job *j = mkjob(owner, uid, 0, NULL);

	free(j->script);
	j->script = NULL;
	strv_free(j->args);
	j->args = NULL;
	j->argv = strv("/bin/echo", "a b", "", NULL);
	return j;
}

/* Every field equal, compared through the complete JSON form. */
static void
assert_job_equal(const struct job *a, const struct job *b)
{
	json_t *ja = job_to_json(a), *jb = job_to_json(b);

	if (!json_equal(ja, jb)) {
		char *sa = json_dumps(ja, JSON_SORT_KEYS), *sb = json_dumps(jb, JSON_SORT_KEYS);
		fprintf(stderr, "want %s\ngot  %s\n", sa, sb);
		free(sa);
		free(sb);
		json_decref(ja);
		json_decref(jb);
		fail_msg("jobs differ");
	}
	json_decref(ja);
	json_decref(jb);
}

static int64_t
insert(struct fix *f, struct job *j)
{
	assert_int_equal(store_job_insert(f->st, j), 0);
	assert_true(j->id > 0);
	return j->id;
}

/* Updates j, reads it back in full and checks nothing was lost. */
static void
update_and_check(struct fix *f, struct job *j)
{
	struct job *got;

	assert_int_equal(store_job_update(f->st, j), 0);
	got = store_job_get(f->st, j->id, true);
	assert_non_null(got);
	assert_job_equal(j, got);
	job_free(got);
}

/* Collects ids from an iteration; stops after max when max > 0. */
struct ids {
	int64_t id[64];
	int     n;
	int     max;
	bool    scripts;   /* every job came with script or argv, and env */
};

static int
collect(void *arg, struct job *j)
{
	struct ids *c = arg;

	assert_true(c->n < 64);
	c->id[c->n++] = j->id;
	if (!(j->script || j->argv) || !j->env)
		c->scripts = false;
	return c->max > 0 && c->n >= c->max;
}

static void
assert_ids(const struct ids *c, int n, ...)
{
	va_list ap;

	if (c->n != n) {
		for (int i = 0; i < c->n; i++)
			fprintf(stderr, "got id %lld\n", (long long)c->id[i]);
		fail_msg("want %d ids, got %d", n, c->n);
	}
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		assert_int_equal(c->id[i], va_arg(ap, int64_t));
	va_end(ap);
}

static struct ids
list(struct fix *f, unsigned states, const char *owner, const char *host, bool with_script)
{
	struct store_job_filter flt = { states, owner, host, with_script };
	struct ids c = { .scripts = true };

	assert_int_equal(store_jobs_foreach(f->st, &flt, collect, &c), 0);
	return c;
}

static struct ids
runnable(struct fix *f, int64_t uid, int limit)
{
	struct ids c = { .scripts = true };

	assert_int_equal(store_jobs_runnable(f->st, uid, limit, collect, &c), 0);
	return c;
}

/* Grid Engine's kept options (-soft -l, -P, -A, the context, -R, -js,
 * -binding, -shell n) and the limits of -l survive the store and qalter's
 * update. */
static void
test_ge_fields_round_trip(void **state)
{
	struct fix *f = *state;
	struct job *j = mkbinjob("ann", 1000), *got;
	char err[128];
	const char *why;

	assert_int_equal(req_parse(&j->req, "vf=1G,h_data=100M,s_stack=4M,h_core=0", err, sizeof err), 0);
	assert_int_equal(req_parse(&j->soft, "hostname=vm,arch=x86_64", err, sizeof err), 0);
	j->project = xstrdup("p1");
	j->account = xstrdup("acct1");
	assert_int_equal(job_context_apply(&j->context, 'a', "a=1,b=2", &why), 0);
	j->reserve = true;
	j->js = 5;
	j->binding = xstrdup("set linear:1");
	j->noshell = true;
	insert(f, j);
	got = store_job_get(f->st, j->id, true);
	assert_non_null(got);
	assert_job_equal(j, got);
	assert_true(got->req.lim_set & (1u << REQ_H_CORE));
	assert_int_equal(got->req.lim[REQ_H_CORE], 0);
	job_free(got);
	free(j->project);
	j->project = xstrdup("p2");
	assert_int_equal(job_context_apply(&j->context, 'd', "a", &why), 0);
	req_clear(&j->soft);
	j->js = 0;
	free(j->in_path);
	j->in_path = xstrdup("altered.txt");   /* qalter -i */
	update_and_check(f, j);
	job_free(j);
}

#define ID(x) ((int64_t)(x))

/* Opening. */

static void
test_open_creates_schema(void **state)
{
	struct fix *f = *state;
	sqlite3 *db;
	sqlite3_stmt *s;

	assert_int_equal(store_schema_version(f->st), STORE_SCHEMA_VERSION);
	assert_int_equal(STORE_SCHEMA_VERSION, 19);
	db = raw_open(f->db);
	assert_int_equal(raw_int(db, "PRAGMA user_version"), 19);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
	    "name IN ('meta', 'scripts', 'jobs', 'accounting', 'hosts', 'tasks')"), 6);
	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &s, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(s, 0), "wal");
	sqlite3_finalize(s);
	sqlite3_close(db);
	/* Opening again changes nothing. */
	reopen(f);
	assert_int_equal(store_schema_version(f->st), STORE_SCHEMA_VERSION);
	assert_int_equal(store_check(f->st, stderr), 0);
}

/* Staging (schemas 16, 18): a job's inputs and patterns round-trip, its
 * outputs are rows per task with their modes that go with the job, and a
 * user's bytes and a file's uses are counted from both. */
static void
test_stage_rows(void **state)
{
	struct fix *f = *state;
	const char *h1 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
	const char *h2 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
	struct job *j = mkjob("alice", 1000, 0, NULL), *got;
	json_t *outs;

	j->stage_in = json_array();
	json_array_append_new(j->stage_in, stage_file_pack(&(struct stage_file){ .name = "in.txt",
	    .size = 100, .sha256 = h1, .mode = 0755 }));
	j->stage_out = strv("out.txt", "res/*", NULL);
	insert(f, j);
	got = store_job_get(f->st, j->id, true);
	assert_non_null(got);
	assert_job_equal(j, got);
	job_free(got);
	assert_int_equal(store_stage_user_bytes(f->st, 1000), 100);
	assert_int_equal(store_stage_user_bytes(f->st, 1001), 0);
	assert_int_equal(store_stage_uses(f->st, h1, 0), 1);
	assert_int_equal(store_stage_uses(f->st, h1, j->id), 1);
	assert_int_equal(store_stage_uses(f->st, h1, j->id + 1), 0);
	assert_int_equal(store_stage_uses(f->st, h2, 0), 0);
	assert_int_equal(store_stage_out_add(f->st, j->id, 2, "out.txt.2", 5, h2, 0), 0);
	assert_int_equal(store_stage_out_add(f->st, j->id, 1, "out.txt.1", 7, h2, 0750), 0);
	assert_int_equal(store_stage_uses(f->st, h2, j->id), 1);
	assert_int_equal(store_stage_user_bytes(f->st, 1000), 112);
	outs = store_stage_out_of(f->st, j->id);
	assert_int_equal(json_array_size(outs), 2);
	assert_string_equal(jstr(json_array_get(outs, 0), "name"), "out.txt.1");
	assert_int_equal(jint(json_array_get(outs, 0), "mode", -1), 0750);
	assert_int_equal(jint(json_array_get(outs, 1), "mode", -1), -1);
	json_decref(outs);
	j->state = JS_DONE;
	j->end_time = 10;
	assert_int_equal(store_job_update(f->st, j), 0);
	assert_int_equal(store_jobs_purge_finished(f->st, 100), 1);
	assert_int_equal(store_stage_uses(f->st, h2, 0), 0);
	assert_int_equal(store_stage_user_bytes(f->st, 1000), 0);
	assert_int_equal(store_check(f->st, stderr), 0);
	job_free(j);
}

static void
test_open_refuses_future(void **state)
{
	struct fix *f = *state;
	const char *why = NULL;
	struct store *st;

	store_close(f->st);
	f->st = NULL;
	raw_do(f, "PRAGMA user_version = 99");
	st = store_open(f->dir, &why);
	assert_null(st);
	assert_non_null(why);
	assert_non_null(strstr(why, "99"));
	assert_non_null(strstr(why, "newer"));
	/* Left as it was. */
	assert_int_equal(raw_get(f, "PRAGMA user_version"), 99);
	f->st = NULL;
	/* Teardown closes f->st; give it a valid one in a fresh directory. */
	spool_rmtree(f->dir);
	assert_int_equal(spool_mkdir_p(f->dir, 0700), 0);
	f->st = store_open(f->dir, &why);
	assert_non_null(f->st);
}

static void
test_open_refuses_garbage(void **state)
{
	struct fix *f = *state;
	const char *why = NULL;
	char junk[4096];

	store_close(f->st);
	f->st = NULL;
	spool_rmtree(f->dir);
	assert_int_equal(spool_mkdir_p(f->dir, 0700), 0);
	memset(junk, 'x', sizeof junk);
	assert_int_equal(spool_write_atomic(f->db, junk, sizeof junk, 0600), 0);
	assert_null(store_open(f->dir, &why));
	assert_non_null(why);
	fprintf(stderr, "# refused as expected: %s\n", why);
	/* A directory that does not exist. */
	why = NULL;
	assert_null(store_open("/nonexistent/nowq-test", &why));
	assert_non_null(why);
	unlink(f->db);
	f->st = store_open(f->dir, &why);
	assert_non_null(f->st);
}

/* The v1 schema exactly as migration step 0 -> 1 creates it. */
static const char *v1_schema =
	"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
	"CREATE TABLE scripts (hash TEXT PRIMARY KEY, body BLOB NOT NULL);"
	"CREATE TABLE jobs (id INTEGER PRIMARY KEY AUTOINCREMENT,"
	" task INTEGER NOT NULL DEFAULT 0, attempt INTEGER NOT NULL DEFAULT 0, name TEXT,"
	" owner TEXT, uid INTEGER NOT NULL DEFAULT 0, gid INTEGER NOT NULL DEFAULT 0,"
	" sup_groups TEXT, queue TEXT, prio INTEGER NOT NULL DEFAULT 0,"
	" script_hash TEXT REFERENCES scripts(hash), argv TEXT, args TEXT, shell TEXT,"
	" cwd TEXT, home TEXT, out_path TEXT, err_path TEXT,"
	" join_out INTEGER NOT NULL DEFAULT 0, submit_host TEXT,"
	" submit_time INTEGER NOT NULL DEFAULT 0, start_time INTEGER NOT NULL DEFAULT 0,"
	" end_time INTEGER NOT NULL DEFAULT 0, state INTEGER NOT NULL DEFAULT 0,"
	" hold INTEGER NOT NULL DEFAULT 0, error INTEGER NOT NULL DEFAULT 0,"
	" delete_req INTEGER NOT NULL DEFAULT 0, host TEXT, pid INTEGER NOT NULL DEFAULT 0,"
	" exit_status INTEGER NOT NULL DEFAULT 0, signal INTEGER NOT NULL DEFAULT 0,"
	" reason TEXT, utime REAL NOT NULL DEFAULT 0, stime REAL NOT NULL DEFAULT 0,"
	" maxrss_kb INTEGER NOT NULL DEFAULT 0, env TEXT);"
	"CREATE INDEX jobs_runnable ON jobs (prio DESC, id) WHERE state = 0 AND hold = 0 AND error = 0;"
	"CREATE INDEX jobs_runnable_uid ON jobs (uid, prio DESC, id)"
	" WHERE state = 0 AND hold = 0 AND error = 0;"
	"CREATE INDEX jobs_state ON jobs (state);"
	"CREATE INDEX jobs_host ON jobs (host, state);"
	"CREATE INDEX jobs_owner ON jobs (owner, state);"
	"CREATE INDEX jobs_finished ON jobs (end_time) WHERE state >= 3;"
	"CREATE INDEX jobs_script ON jobs (script_hash);"
	"PRAGMA user_version = 1;";

static void
test_migrate_v1(void **state)
{
	struct fix *f = *state;
	const char *why = NULL;
	struct job *j;
	sqlite3 *db;
	char *sql;

	store_close(f->st);
	f->st = NULL;
	spool_rmtree(f->dir);
	assert_int_equal(spool_mkdir_p(f->dir, 0700), 0);
	db = raw_open(f->db);
	raw_exec(db, "PRAGMA journal_mode = WAL");
	raw_exec(db, v1_schema);
	sql = xasprintf("INSERT INTO scripts VALUES ('%016llx', CAST('echo old' AS BLOB));"
	    "INSERT INTO jobs (id, name, owner, uid, gid, sup_groups, prio, script_hash,"
	    " args, env, submit_time, start_time, state, host, pid, attempt)"
	    " VALUES (41, 'old job', 'alice', 1000, 1000, '[1000,27]', 5, '%016llx',"
	    " '[\"x\"]', '[\"A=1\"]', 1000, 2000, 2, 'node1', 4242, 1)",
	    (unsigned long long)hash_fnv1a64("echo old", 8),
	    (unsigned long long)hash_fnv1a64("echo old", 8));
	raw_exec(db, sql);
	free(sql);
	raw_exec(db, "INSERT INTO meta VALUES ('cluster', 'c1')");
	assert_int_equal(raw_int(db, "PRAGMA user_version"), 1);
	sqlite3_close(db);

	f->st = store_open(f->dir, &why);
	assert_non_null(f->st);
	assert_int_equal(store_schema_version(f->st), STORE_SCHEMA_VERSION);
	assert_int_equal(raw_get(f, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	j = store_job_get(f->st, 41, true);
	/* v3's columns have their defaults: a serial job with no request. */
	assert_int_equal(j->slots, 1);
	assert_int_equal(j->rerun, -1);
	assert_int_equal(j->t_first, 0);
	assert_true(req_empty(&j->req));
	assert_non_null(j);
	assert_string_equal(j->name, "old job");
	assert_string_equal(j->owner, "alice");
	assert_int_equal(j->uid, 1000);
	assert_int_equal(j->ngroups, 2);
	assert_int_equal(j->groups[1], 27);
	assert_int_equal(j->prio, 5);
	assert_string_equal(j->script, "echo old");
	assert_string_equal(j->args[0], "x");
	assert_string_equal(j->env[0], "A=1");
	assert_int_equal(j->state, JS_RUNNING);
	assert_string_equal(j->host, "node1");
	assert_int_equal(j->pid, 4242);
	assert_int_equal(j->attempt, 1);
	assert_int_equal(j->start_time, 2000);
	/* The tables of v2 work. */
	j->state = JS_DONE;
	j->end_time = 3000;
	assert_int_equal(store_job_update(f->st, j), 0);
	assert_int_equal(store_acct_insert(f->st, j, &no_acct), 0);
	assert_int_equal(store_host_upsert(f->st, &(struct host_rec){ "node1", 4, { 0 }, 5 }), 0);
	job_free(j);
	/* The id sequence carried over: new ids come after 41. */
	j = mkjob("bob", 1001, 0, NULL);
	assert_true(insert(f, j) > 41);
	job_free(j);
	assert_int_equal(store_check(f->st, stderr), 0);
}

/* Jobs. */

static void
test_job_roundtrip(void **state)
{
	struct fix *f = *state;
	struct job *j = mkjob("alice", 1000, -17, NULL), *b = mkbinjob("bob", 1001), *got;

	insert(f, j);
	insert(f, b);
	assert_true(b->id > j->id);

	got = store_job_get(f->st, j->id, true);
	assert_non_null(got);
	assert_job_equal(j, got);
	job_free(got);

	/* Without the script: no script text, no env, but everything else. */
	got = store_job_get(f->st, j->id, false);
	assert_non_null(got);
	assert_null(got->script);
	assert_null(got->env);
	assert_string_equal(got->args[1], "two words");
	assert_int_equal(got->groups[1], 4000000000u);
	assert_int_equal(got->prio, -17);
	job_free(got);

	/* A binary job: argv always comes back, since it is the command. */
	got = store_job_get(f->st, b->id, false);
	assert_non_null(got);
	assert_null(got->script);
	assert_non_null(got->argv);
	assert_string_equal(got->argv[0], "/bin/echo");
	assert_string_equal(got->argv[1], "a b");
	assert_string_equal(got->argv[2], "");
	assert_null(got->argv[3]);
	job_free(got);
	got = store_job_get(f->st, b->id, true);
	assert_job_equal(b, got);
	job_free(got);

	/* NULL and empty lists stay apart; a job with few fields set survives. */
	job_free(j);
	j = job_new();
	j->owner = xstrdup("carol");
	j->script = xstrdup("");
	j->env = xcalloc(1, sizeof *j->env);
	insert(f, j);
	got = store_job_get(f->st, j->id, true);
	assert_job_equal(j, got);
	assert_non_null(got->env);
	assert_null(got->env[0]);
	assert_string_equal(got->script, "");
	assert_null(got->args);
	assert_null(got->groups);
	job_free(got);

	assert_null(store_job_get(f->st, 999999, true));
	assert_null(store_job_get(f->st, 999999, false));
	job_free(j);
	job_free(b);
}

static void
test_job_states(void **state)
{
	struct fix *f = *state;
	struct job *j = mkjob("alice", 1000, 0, NULL);
	struct job *k = mkjob("alice", 1000, 0, NULL);
	struct job *d = mkjob("alice", 1000, 0, NULL);

	insert(f, j);
	insert(f, k);
	insert(f, d);

	/* held, released */
	j->hold = HOLD_USER;
	update_and_check(f, j);
	j->hold = 0;
	update_and_check(f, j);
	/* dispatched */
	j->state = JS_DISPATCHED;
	j->attempt = 1;
	j->host = xstrdup("node7");
	update_and_check(f, j);
	/* running */
	j->state = JS_RUNNING;
	j->pid = 31337;
	j->start_time = 1700000001000LL;
	update_and_check(f, j);
	/* delete asked while running */
	j->delete_req = true;
	update_and_check(f, j);
	/* done */
	j->delete_req = false;
	j->state = JS_DONE;
	j->end_time = 1700000002000LL;
	j->exit_status = 0;
	j->utime = 1.25;
	j->stime = 0.5;
	j->maxrss_kb = 12345;
	j->prio = 100;
	free(j->name);
	j->name = xstrdup("renamed");
	update_and_check(f, j);

	/* error, with a reason, then cleared; then failed by a signal */
	k->error = true;
	k->reason = xstrdup("cannot chdir to /nowhere");
	update_and_check(f, k);
	k->error = false;
	free(k->reason);
	k->reason = NULL;
	update_and_check(f, k);
	k->state = JS_FAILED;
	k->attempt = 2;
	k->host = xstrdup("node2");
	k->exit_status = 137;
	k->signal = 9;
	k->start_time = 5;
	k->end_time = 6;
	k->reason = xstrdup("killed by signal 9");
	update_and_check(f, k);

	/* deleted while pending */
	d->state = JS_DELETED;
	d->end_time = 7;
	update_and_check(f, d);

	/* The letters Grid Engine tools read. */
	j->state = JS_RUNNING;
	j->delete_req = true;
	update_and_check(f, j);
	{
		struct job *got = store_job_get(f->st, j->id, false);
		assert_string_equal(job_state_letters(got), "dr");
		job_free(got);
	}

	/* An update of a job that is not there fails. */
	j->id = 999999;
	assert_int_equal(store_job_update(f->st, j), -1);
	job_free(j);
	job_free(k);
	job_free(d);
}

static void
test_job_delete(void **state)
{
	struct fix *f = *state;
	struct job *j = mkjob("alice", 1000, 0, "unique script\n");

	insert(f, j);
	assert_int_equal(raw_get(f, "SELECT count(*) FROM scripts"), 1);
	assert_int_equal(store_job_delete(f->st, j->id), 0);
	assert_null(store_job_get(f->st, j->id, false));
	/* Its script went with it. */
	assert_int_equal(raw_get(f, "SELECT count(*) FROM scripts"), 0);
	assert_int_equal(store_job_delete(f->st, j->id), 0);
	job_free(j);
}

static void
test_ids_never_repeat(void **state)
{
	struct fix *f = *state;
	int64_t last = 0;

	for (int i = 0; i < 3; i++) {
		struct job *j = mkjob("alice", 1000, 0, NULL);
		assert_true(insert(f, j) > last);
		last = j->id;
		j->state = JS_DONE;
		j->end_time = 10;
		assert_int_equal(store_job_update(f->st, j), 0);
		job_free(j);
	}
	assert_int_equal(store_jobs_purge_finished(f->st, 100), 3);
	assert_int_equal(store_jobs_count(f->st, 0), 0);
	reopen(f);
	{
		struct job *j = mkjob("alice", 1000, 0, NULL);
		assert_true(insert(f, j) > last);
		last = j->id;
		/* Deleting the newest job does not free its id either. */
		assert_int_equal(store_job_delete(f->st, j->id), 0);
		assert_true(insert(f, j) > last);
		job_free(j);
	}
}

static void
test_scripts_stored_once(void **state)
{
	struct fix *f = *state;
	struct job *j;
	char *hash;

	for (int i = 0; i < 10; i++) {
		j = mkjob("alice", 1000, 0, "#!/bin/sh\nsleep 1\n");
		insert(f, j);
		job_free(j);
	}
	j = mkjob("alice", 1000, 0, "#!/bin/sh\nsleep 2\n");
	insert(f, j);
	job_free(j);
	j = mkbinjob("alice", 1000);
	insert(f, j);
	job_free(j);
	assert_int_equal(raw_get(f, "SELECT count(*) FROM scripts"), 2);
	assert_int_equal(raw_get(f, "SELECT count(DISTINCT script_hash) FROM jobs"), 2);

	/* A collision: the key of a text is taken by another text. */
	hash = xasprintf("%016llx", (unsigned long long)hash_fnv1a64("echo collide\n", 13));
	{
		char *sql = xasprintf("INSERT INTO scripts VALUES ('%s', CAST('not the same' AS BLOB))", hash);
		raw_do(f, sql);
		free(sql);
	}
	j = mkjob("alice", 1000, 0, "echo collide\n");
	insert(f, j);
	{
		struct job *got = store_job_get(f->st, j->id, true);
		assert_string_equal(got->script, "echo collide\n");
		job_free(got);
	}
	{
		char *sql = xasprintf("SELECT count(*) FROM jobs WHERE script_hash = '%s-1'", hash);
		assert_int_equal(raw_get(f, sql), 1);
		free(sql);
	}
	/* The same text again finds its suffixed row. */
	insert(f, j);
	assert_int_equal(raw_get(f, "SELECT count(*) FROM scripts"), 4);
	job_free(j);
	free(hash);
}

static void
test_runnable(void **state)
{
	struct fix *f = *state;
	int64_t id[9];
	struct ids c;
	struct job *j;
	/* prio, uid, what */
	static const struct { int prio; uint32_t uid; int what; } spec[9] = {
		{ 0, 1000, 0 },     /* 1: plain */
		{ 10, 1000, 0 },    /* 2: higher */
		{ 10, 1001, 0 },    /* 3: same prio, later */
		{ -5, 1001, 0 },    /* 4: low */
		{ 50, 1000, 1 },    /* 5: held */
		{ 50, 1000, 2 },    /* 6: in error */
		{ 50, 1000, 3 },    /* 7: running */
		{ 50, 1000, 4 },    /* 8: done */
		{ 1024, 1002, 0 },  /* 9: top */
	};

	for (int i = 0; i < 9; i++) {
		j = i == 3 ? mkbinjob("u", spec[i].uid) : mkjob("u", spec[i].uid, spec[i].prio, NULL);
		j->prio = spec[i].prio;
		id[i] = insert(f, j);
		switch (spec[i].what) {
		case 1: j->hold = HOLD_USER; break;
		case 2: j->error = true; break;
		case 3: j->state = JS_RUNNING; j->host = xstrdup("n"); break;
		case 4: j->state = JS_DONE; j->end_time = 1; break;
		}
		assert_int_equal(store_job_update(f->st, j), 0);
		job_free(j);
	}
	c = runnable(f, -1, 100);
	assert_ids(&c, 5, id[8], id[1], id[2], id[0], id[3]);
	assert_true(c.scripts);
	c = runnable(f, -1, 2);
	assert_ids(&c, 2, id[8], id[1]);
	c = runnable(f, -1, 0);
	assert_ids(&c, 0);
	c = runnable(f, 1000, 100);
	assert_ids(&c, 2, id[1], id[0]);
	c = runnable(f, 1001, 100);
	assert_ids(&c, 2, id[2], id[3]);
	c = runnable(f, 4242, 100);
	assert_ids(&c, 0);
	/* The callback may stop early. */
	c = (struct ids){ .max = 3 };
	assert_int_equal(store_jobs_runnable(f->st, -1, 100, collect, &c), 0);
	assert_ids(&c, 3, id[8], id[1], id[2]);

	/* Releasing the hold makes it the best. */
	j = store_job_get(f->st, id[4], false);
	j->hold = 0;
	assert_int_equal(store_job_update(f->st, j), 0);
	job_free(j);
	c = runnable(f, -1, 1);
	assert_ids(&c, 1, id[8]);
	c = runnable(f, 1000, 1);
	assert_ids(&c, 1, id[4]);
}

/* The scheduler dispatches inside the callback, as sched.c does. */
static int
dispatch_cb(void *arg, struct job *j)
{
	struct store *st = arg;

	j->state = JS_DISPATCHED;
	j->attempt++;
	free(j->host);
	j->host = xstrdup("node1");
	assert_int_equal(store_job_update(st, j), 0);
	return 0;
}

static void
test_runnable_dispatch_in_callback(void **state)
{
	struct fix *f = *state;
	struct ids c;

	for (int i = 0; i < 10; i++) {
		struct job *j = mkjob("u", 1000, i % 3, NULL);
		insert(f, j);
		job_free(j);
	}
	assert_int_equal(store_begin(f->st), 0);
	assert_int_equal(store_jobs_runnable(f->st, -1, 4, dispatch_cb, f->st), 0);
	assert_int_equal(store_commit(f->st), 0);
	assert_int_equal(store_jobs_count(f->st, 1u << JS_DISPATCHED), 4);
	assert_int_equal(store_jobs_count(f->st, 1u << JS_PENDING), 6);
	c = list(f, 1u << JS_DISPATCHED, NULL, "node1", false);
	assert_int_equal(c.n, 4);
	assert_int_equal(store_jobs_runnable(f->st, -1, 100, dispatch_cb, f->st), 0);
	assert_int_equal(store_jobs_count(f->st, 1u << JS_PENDING), 0);
	assert_int_equal(store_jobs_count(f->st, 0), 10);
}

/* A runnable query that cannot use its index does not run at all. */
static void
test_runnable_needs_index(void **state)
{
	struct fix *f = *state;
	struct ids c = { 0 };

	store_close(f->st);
	f->st = NULL;
	raw_do(f, "DROP INDEX jobs_runnable");
	reopen(f);
	assert_int_equal(store_jobs_runnable(f->st, -1, 10, collect, &c), -1);
	assert_int_equal(store_check(f->st, NULL), 1);
}

/* What the planner does with the indexes, for the queries store.c runs. */
static void
assert_plan(sqlite3 *db, const char *sql, const char *want)
{
	char *q = xasprintf("EXPLAIN QUERY PLAN %s", sql);
	sqlite3_stmt *s;
	bool found = false;

	assert_int_equal(sqlite3_prepare_v2(db, q, -1, &s, NULL), SQLITE_OK);
	while (sqlite3_step(s) == SQLITE_ROW) {
		const char *d = (const char *)sqlite3_column_text(s, 3);
		if (strstr(d, want))
			found = true;
		if (strncmp(d, "SCAN ", 5) == 0 && !strstr(d, "USING INDEX"))
			fail_msg("%s: full scan: %s", sql, d);
	}
	sqlite3_finalize(s);
	free(q);
	if (!found)
		fail_msg("%s: does not use %s", sql, want);
}

static void
test_indexes(void **state)
{
	struct fix *f = *state;
	sqlite3 *db = raw_open(f->db);

	assert_plan(db, "SELECT id FROM jobs j INDEXED BY jobs_runnable WHERE j.state = 0"
	    " AND j.hold = 0 AND j.error = 0 ORDER BY j.prio DESC, j.id LIMIT 5", "jobs_runnable");
	assert_plan(db, "SELECT id FROM jobs j WHERE j.state IN (0, 1) AND j.host = 'x' ORDER BY j.id",
	    "jobs_host");
	assert_plan(db, "SELECT id FROM jobs j WHERE j.state IN (0, 1) AND j.owner = 'x' ORDER BY j.id",
	    "jobs_owner");
	assert_plan(db, "SELECT id FROM jobs j WHERE j.state IN (0, 1) ORDER BY j.id", "jobs_state");
	assert_plan(db, "DELETE FROM jobs WHERE state >= 3 AND end_time < 5 RETURNING script_hash",
	    "jobs_finished");
	assert_plan(db, "SELECT 1 FROM jobs WHERE script_hash = 'x'", "jobs_script");
	/* The arrays with a task still pending (SQL_PENDING_TASKS): the
	 * tasks in flight, not every task that ran. */
	assert_plan(db, "SELECT job_id FROM tasks WHERE state < 3 AND state = 0", "tasks_active");
	/* Accounting: store.c's ACCT_PAGE after each key, and the sums. */
#define PAGE " AND end_time >= 0 AND (end_time, id) > (-1, -1) ORDER BY end_time, id LIMIT 5"
	assert_plan(db, "SELECT * FROM accounting WHERE job_id = 3" PAGE, "sqlite_autoindex_accounting");
	assert_plan(db, "SELECT * FROM accounting WHERE name = 'x'" PAGE, "accounting_name");
	assert_plan(db, "SELECT * FROM accounting WHERE owner = 'x'" PAGE, "accounting_owner");
	assert_plan(db, "SELECT * FROM accounting WHERE NULL IS NULL" PAGE, "accounting_end");
	assert_plan(db, "SELECT count(*), sum(utime) FROM accounting WHERE owner = 'x'"
	    " AND end_time >= 5", "accounting_owner");
	assert_plan(db, "SELECT count(*), sum(utime) FROM accounting WHERE end_time >= 5",
	    "accounting_end");
#undef PAGE
	sqlite3_close(db);
}

static int
nested_cb(void *arg, struct job *j)
{
	struct fix *f = arg;
	struct ids c = list(f, 0, NULL, NULL, false);

	/* A listing inside a listing sees the whole table. */
	assert_int_equal(c.n, 4);
	return 0;
}

static void
test_foreach_filters(void **state)
{
	struct fix *f = *state;
	int64_t id[4];
	struct ids c;
	struct job *j;
	static const char *owner[4] = { "alice", "bob", "alice", "bob" };
	static const enum job_state st[4] = { JS_PENDING, JS_RUNNING, JS_RUNNING, JS_FAILED };
	static const char *host[4] = { NULL, "n1", "n2", "n1" };

	for (int i = 0; i < 4; i++) {
		j = mkjob(owner[i], 1000 + (uint32_t)i, 0, NULL);
		id[i] = insert(f, j);
		j->state = st[i];
		j->host = host[i] ? xstrdup(host[i]) : NULL;
		j->end_time = st[i] == JS_FAILED ? 9 : 0;
		assert_int_equal(store_job_update(f->st, j), 0);
		job_free(j);
	}
	c = list(f, 0, NULL, NULL, false);
	assert_ids(&c, 4, id[0], id[1], id[2], id[3]);
	assert_false(c.scripts);
	c = list(f, 0, NULL, NULL, true);
	assert_ids(&c, 4, id[0], id[1], id[2], id[3]);
	assert_true(c.scripts);
	c = list(f, 1u << JS_RUNNING, NULL, NULL, false);
	assert_ids(&c, 2, id[1], id[2]);
	c = list(f, 1u << JS_PENDING | 1u << JS_FAILED, NULL, NULL, false);
	assert_ids(&c, 2, id[0], id[3]);
	c = list(f, 1u << JS_DONE, NULL, NULL, false);
	assert_ids(&c, 0);
	c = list(f, 0, "alice", NULL, false);
	assert_ids(&c, 2, id[0], id[2]);
	c = list(f, 0, "nobody", NULL, false);
	assert_ids(&c, 0);
	c = list(f, 0, NULL, "n1", false);
	assert_ids(&c, 2, id[1], id[3]);
	c = list(f, 1u << JS_RUNNING, NULL, "n1", false);
	assert_ids(&c, 1, id[1]);
	c = list(f, 1u << JS_RUNNING, "alice", "n2", true);
	assert_ids(&c, 1, id[2]);
	assert_true(c.scripts);
	c = list(f, 1u << JS_RUNNING, "alice", "n1", false);
	assert_ids(&c, 0);
	/* Bits beyond the known states select nothing. */
	c = list(f, 1u << 20, NULL, NULL, false);
	assert_ids(&c, 0);
	/* Stopping early. */
	c = (struct ids){ .max = 1 };
	assert_int_equal(store_jobs_foreach(f->st, &(struct store_job_filter){ 0 }, collect, &c), 0);
	assert_ids(&c, 1, id[0]);
	/* Re-entering the store from the callback. */
	assert_int_equal(store_jobs_foreach(f->st, &(struct store_job_filter){ 0 }, nested_cb, f), 0);

	assert_int_equal(store_jobs_count(f->st, 0), 4);
	assert_int_equal(store_jobs_count(f->st, 1u << JS_RUNNING), 2);
	assert_int_equal(store_jobs_count(f->st, 1u << JS_RUNNING | 1u << JS_PENDING), 3);
	assert_int_equal(store_jobs_count(f->st, 1u << JS_DELETED), 0);
	/* All states in one query (/metrics), agreeing with the one by one. */
	{
		int64_t n[JS_DELETED + 1];
		assert_int_equal(store_jobs_count_by_state(f->st, n), 0);
		for (int s = JS_PENDING; s <= JS_DELETED; s++)
			assert_int_equal(n[s], store_jobs_count(f->st, 1u << s));
		assert_int_equal(n[JS_RUNNING], 2);
		assert_int_equal(n[JS_PENDING], 1);
	}
}

static void
test_purge_finished(void **state)
{
	struct fix *f = *state;
	static const struct { enum job_state s; int64_t end; bool gone; } spec[] = {
		{ JS_DONE, 100, true },
		{ JS_FAILED, 199, true },
		{ JS_DELETED, 150, true },
		{ JS_DONE, 200, false },     /* not before the cutoff */
		{ JS_DONE, 5000, false },
		{ JS_RUNNING, 0, false },    /* never purged while alive */
		{ JS_PENDING, 0, false },
	};
	int n = sizeof spec / sizeof *spec;
	int64_t id[8];

	for (int i = 0; i < n; i++) {
		/* Jobs 0 and 3 share a script; 1 has its own. */
		struct job *j = mkjob("alice", 1000, 0, i == 1 ? "own script" :
		    i == 0 || i == 3 ? "shared" : "common");
		id[i] = insert(f, j);
		j->state = spec[i].s;
		j->end_time = spec[i].end;
		if (spec[i].s == JS_RUNNING)
			j->host = xstrdup("n");
		assert_int_equal(store_job_update(f->st, j), 0);
		assert_int_equal(store_acct_insert(f->st, j, &no_acct), 0);
		job_free(j);
	}
	assert_int_equal(raw_get(f, "SELECT count(*) FROM scripts"), 3);
	assert_int_equal(store_jobs_purge_finished(f->st, 200), 3);
	for (int i = 0; i < n; i++) {
		struct job *j = store_job_get(f->st, id[i], false);
		if (spec[i].gone)
			assert_null(j);
		else
			assert_non_null(j);
		job_free(j);
	}
	/* "own script" had no other user; "shared" still has job 3. */
	assert_int_equal(raw_get(f, "SELECT count(*) FROM scripts"), 2);
	assert_int_equal(raw_get(f, "SELECT count(*) FROM scripts WHERE body = CAST('own script' AS BLOB)"), 0);
	{
		struct job *j = store_job_get(f->st, id[3], true);
		assert_string_equal(j->script, "shared");
		job_free(j);
	}
	assert_int_equal(store_jobs_purge_finished(f->st, 200), 0);
	/* Accounting is kept forever. */
	assert_int_equal(raw_get(f, "SELECT count(*) FROM accounting"), n);
	assert_int_equal(store_check(f->st, stderr), 0);
}

static void
test_accounting(void **state)
{
	struct fix *f = *state;
	struct job *j = mkjob("alice", 1000, 0, NULL);
	struct acct_info a;
	sqlite3 *db;

	memset(&a, 0, sizeof a);
	a.group = "users";
	a.ru.utime = 0.75;
	a.ru.stime = 0.25;
	a.ru.maxrss = 2048;
	a.ru.nivcsw = 7;

	insert(f, j);
	j->attempt = 1;
	j->state = JS_FAILED;
	j->host = xstrdup("node3");
	j->start_time = 10;
	j->end_time = 20;
	j->exit_status = 3;
	j->reason = xstrdup("exit status 3");
	j->utime = 0.75;
	j->stime = 0.25;
	j->maxrss_kb = 2048;
	assert_int_equal(store_acct_insert(f->st, j, &a), 0);
	db = raw_open(f->db);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM accounting"), 1);
	{
		char *sql = xasprintf("SELECT count(*) FROM accounting WHERE job_id = %lld AND task = 0"
		    " AND attempt = 1 AND name = 'test job' AND owner = 'alice' AND uid = 1000"
		    " AND gid = 1100 AND queue = 'all.q' AND host = 'node3' AND submit_time = %lld"
		    " AND start_time = 10 AND end_time = 20 AND exit_status = 3 AND signal = 0"
		    " AND failed = 'exit status 3' AND utime = 0.75 AND stime = 0.25"
		    " AND maxrss_kb = 2048 AND ru_nivcsw = 7 AND group_name = 'users'"
		    " AND wallclock = 0.01 AND failed_code = 0 AND state = %d", (long long)j->id,
		    (long long)j->submit_time, JS_FAILED);
		assert_int_equal(raw_int(db, sql), 1);
		free(sql);
	}
	/* The same attempt again (a resent CHILD_TERM) keeps one row; a new attempt adds one. */
	assert_int_equal(store_acct_insert(f->st, j, &a), 0);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM accounting"), 1);
	j->attempt = 2;
	j->state = JS_DONE;
	j->exit_status = 0;
	assert_int_equal(store_acct_insert(f->st, j, &a), 0);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM accounting"), 2);
	assert_int_equal(raw_int(db, "SELECT exit_status FROM accounting WHERE attempt = 2"), 0);
	sqlite3_close(db);
	job_free(j);
}

/* A v3 database as that release wrote it: v1 plus its two migrations. */
static const char v3_upgrade[] =
	"CREATE TABLE accounting (id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL,"
	" task INTEGER NOT NULL DEFAULT 0, attempt INTEGER NOT NULL DEFAULT 0, name TEXT,"
	" owner TEXT, uid INTEGER, gid INTEGER, queue TEXT, host TEXT, submit_time INTEGER,"
	" start_time INTEGER, end_time INTEGER, state INTEGER, exit_status INTEGER,"
	" signal INTEGER, failed TEXT, utime REAL, stime REAL, maxrss_kb INTEGER,"
	" UNIQUE (job_id, task, attempt));"
	"CREATE INDEX accounting_owner ON accounting (owner, end_time);"
	"CREATE INDEX accounting_end ON accounting (end_time);"
	"CREATE TABLE hosts (name TEXT PRIMARY KEY, slots INTEGER NOT NULL DEFAULT 0,"
	" load1 REAL NOT NULL DEFAULT 0, load5 REAL NOT NULL DEFAULT 0,"
	" load15 REAL NOT NULL DEFAULT 0, last_seen INTEGER NOT NULL DEFAULT 0);"
	"ALTER TABLE jobs ADD COLUMN req TEXT;"
	"ALTER TABLE jobs ADD COLUMN rerun INTEGER NOT NULL DEFAULT -1;"
	"ALTER TABLE jobs ADD COLUMN pe TEXT;"
	"ALTER TABLE jobs ADD COLUMN slots INTEGER NOT NULL DEFAULT 1;"
	"ALTER TABLE jobs ADD COLUMN t_first INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE jobs ADD COLUMN t_last INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE jobs ADD COLUMN t_step INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE jobs ADD COLUMN tc INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE jobs ADD COLUMN suspended INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE hosts ADD COLUMN attrs TEXT;"
	"PRAGMA user_version = 3;";

/* Collects ACCT rows (or sums) as JSON. */
static int
acct_cb(void *arg, json_t *row)
{
	json_array_append(arg, row);
	return 0;
}

static json_t *
acct_list(struct fix *f, const struct store_acct_filter *flt)
{
	json_t *a = json_array();
	assert_int_equal(store_acct_foreach(f->st, flt, acct_cb, a), 0);
	return a;
}

static json_t *
acct_row(json_t *rows, int64_t job)
{
	size_t i;
	json_t *r;
	json_array_foreach(rows, i, r)
		if (jint(r, "id", 0) == job)
			return r;
	fail_msg("no accounting row for job %lld", (long long)job);
	return NULL;
}

static void
test_migrate_v3_accounting(void **state)
{
	struct fix *f = *state;
	const char *why = NULL;
	struct store_acct_filter all = { .after_end = -1, .after_row = -1 };
	json_t *rows, *r;
	sqlite3 *db;

	store_close(f->st);
	f->st = NULL;
	spool_rmtree(f->dir);
	assert_int_equal(spool_mkdir_p(f->dir, 0700), 0);
	db = raw_open(f->db);
	raw_exec(db, "PRAGMA journal_mode = WAL");
	raw_exec(db, v1_schema);
	raw_exec(db, v3_upgrade);
	raw_exec(db, "INSERT INTO jobs (id, name, owner, argv, prio, state, end_time, pe, slots)"
	    " VALUES (7, 'done', 'alice', '[\"true\"]', -5, 3, 3000, NULL, 1)");
	/* 7: ran and exited 3; 8: killed by qdel; 9: deleted before it ran;
	 * 10: could not start (Eqw); 11: lost with its host. */
	raw_exec(db, "INSERT INTO accounting (job_id, attempt, name, owner, uid, gid, queue, host,"
	    " submit_time, start_time, end_time, state, exit_status, signal, failed, utime, stime,"
	    " maxrss_kb) VALUES"
	    " (7, 1, 'done', 'alice', 1000, 100, 'all.q', 'n1', 500, 1000, 3500, 4, 3, 0, NULL,"
	    "  1.5, 0.25, 4096),"
	    " (8, 1, 'killed', 'bob', 1001, 100, 'all.q', 'n1', 500, 1000, 2000, 5, 137, 9, NULL,"
	    "  0, 0, 0),"
	    " (9, 0, 'never', 'bob', 1001, 100, 'all.q', NULL, 500, 0, 2000, 5, 0, 0,"
	    "  'deleted by bob', 0, 0, 0),"
	    " (10, 1, 'eqw', 'alice', 1000, 100, 'all.q', 'n2', 500, 2000, 2000, 0, 127, 0,"
	    "  'n2: cannot chdir', 0, 0, 0),"
	    " (11, 1, 'lost', 'alice', 1000, 100, 'all.q', 'n3', 500, 1000, 9000, 4, -1, 0,"
	    "  'lost: execd on n3 no longer knows the job', 0, 0, 0)");
	assert_int_equal(raw_int(db, "PRAGMA user_version"), 3);
	sqlite3_close(db);

	f->st = store_open(f->dir, &why);
	assert_non_null(f->st);
	assert_int_equal(store_schema_version(f->st), STORE_SCHEMA_VERSION);
	assert_int_equal(store_check(f->st, stderr), 0);
	rows = acct_list(f, &all);
	/* The job deleted before it ran has no record any more. */
	assert_int_equal(json_array_size(rows), 4);
	r = acct_row(rows, 7);
	assert_int_equal(jint(r, "failed", -1), 0);
	assert_int_equal(jint(r, "exit_status", -1), 3);
	assert_int_equal(jint(r, "prio", 0), -5);
	assert_int_equal(jint(r, "slots", 0), 1);
	assert_true(json_real_value(json_object_get(r, "ru_wallclock")) == 2.5);
	assert_true(json_real_value(json_object_get(json_object_get(r, "rusage"), "ru_utime")) == 1.5);
	assert_int_equal(jint(json_object_get(r, "rusage"), "ru_maxrss", 0), 4096);
	assert_int_equal(jint(json_object_get(r, "rusage"), "ru_nivcsw", -1), 0);
	assert_string_equal(json_string_value(json_array_get(json_object_get(r, "hosts"), 0)), "n1");
	assert_int_equal(jint(acct_row(rows, 8), "failed", -1), ACCT_FAILED_AFTER);
	assert_int_equal(jint(acct_row(rows, 10), "failed", -1), ACCT_FAILED_BEFORE);
	assert_string_equal(jstr(acct_row(rows, 10), "reason"), "n2: cannot chdir");
	assert_int_equal(jint(acct_row(rows, 11), "failed", -1), ACCT_FAILED_AFTER);
	/* A job gone from the jobs table keeps the defaults. */
	assert_int_equal(jint(acct_row(rows, 8), "prio", 1), 0);
	json_decref(rows);
}

static void
test_acct_queries(void **state)
{
	struct fix *f = *state;
	struct store_acct_filter flt;
	struct acct_info a;
	json_t *rows, *r;
	int64_t ids[6];
	size_t i;

	memset(&a, 0, sizeof a);
	a.group = "staff";
	/* Six attempts: alice's "a" ends at 100, 200, 300; bob's "b" at 150,
	 * 250; alice's job 0 again (attempt 2) at 400. */
	for (int k = 0; k < 5; k++) {
		struct job *j = mkjob(k == 1 || k == 3 ? "bob" : "alice", 1000, 0, NULL);
		free(j->name);
		j->name = xstrdup(k == 1 || k == 3 ? "b" : "a");
		ids[k] = insert(f, j);
		j->attempt = 1;
		j->state = JS_DONE;
		j->host = xstrdup("n1 n2");
		j->start_time = 50;
		j->end_time = 100 + 50 * k;
		a.ru.utime = k + 1;
		a.ru.stime = 0.5;
		for (int n = 0; n < RUSAGE_NINT; n++)
			rusage_set_int(&a.ru, n, 1000 * k + n);
		assert_int_equal(store_acct_insert(f->st, j, &a), 0);
		if (k == 0) {
			j->attempt = 2;
			j->end_time = 400;
			assert_int_equal(store_acct_insert(f->st, j, &a), 0);
		}
		job_free(j);
	}
	ids[5] = ids[0];

	/* By job: both attempts, in end order, with every field back. */
	flt = (struct store_acct_filter){ .job_id = ids[0], .after_end = -1, .after_row = -1 };
	rows = acct_list(f, &flt);
	assert_int_equal(json_array_size(rows), 2);
	r = json_array_get(rows, 0);
	assert_int_equal(jint(r, "attempt", 0), 1);
	assert_int_equal(jint(json_array_get(rows, 1), "attempt", 0), 2);
	assert_string_equal(jstr(r, "group"), "staff");
	assert_string_equal(jstr(r, "owner"), "alice");
	assert_string_equal(jstr(r, "queue"), "all.q");
	assert_string_equal(jstr(r, "state"), "done");
	assert_int_equal(json_array_size(json_object_get(r, "hosts")), 2);
	assert_string_equal(json_string_value(json_array_get(json_object_get(r, "hosts"), 1)), "n2");
	assert_true(json_real_value(json_object_get(r, "ru_wallclock")) == 0.05);
	for (int n = 0; n < RUSAGE_NINT; n++)
		assert_int_equal(jint(json_object_get(r, "rusage"), rusage_int_names[n], -1), n);
	json_decref(rows);
	/* The owner filter applies to a job too. */
	flt.owner = "bob";
	rows = acct_list(f, &flt);
	assert_int_equal(json_array_size(rows), 0);
	json_decref(rows);

	/* By name, by owner, by end time. */
	flt = (struct store_acct_filter){ .name = "b", .after_end = -1, .after_row = -1 };
	rows = acct_list(f, &flt);
	assert_int_equal(json_array_size(rows), 2);
	json_decref(rows);
	flt = (struct store_acct_filter){ .owner = "alice", .since = 300, .after_end = -1, .after_row = -1 };
	rows = acct_list(f, &flt);
	assert_int_equal(json_array_size(rows), 2);
	assert_int_equal(jint(json_array_get(rows, 0), "end_time", 0), 300);
	assert_int_equal(jint(json_array_get(rows, 1), "end_time", 0), 400);
	json_decref(rows);

	/* Pages of two, following the cursor, see every row once, in order. */
	{
		int64_t seen = 0, last = -1;
		flt = (struct store_acct_filter){ .after_end = -1, .after_row = -1, .limit = 2 };
		for (;;) {
			rows = acct_list(f, &flt);
			if (json_array_size(rows) == 0) {
				json_decref(rows);
				break;
			}
			assert_true(json_array_size(rows) <= 2);
			json_array_foreach(rows, i, r) {
				assert_true(jint(r, "end_time", 0) > last);
				last = jint(r, "end_time", 0);
				seen++;
			}
			r = json_array_get(rows, json_array_size(rows) - 1);
			flt.after_end = jint(r, "end_time", 0);
			flt.after_row = jint(r, "row", 0);
			json_decref(rows);
		}
		assert_int_equal(seen, 6);
	}

	/* Sums: in total, per owner, for one owner, since a time. */
	rows = json_array();
	flt = (struct store_acct_filter){ 0 };
	assert_int_equal(store_acct_summary(f->st, &flt, 0, acct_cb, rows), 0);
	assert_int_equal(json_array_size(rows), 1);
	assert_int_equal(jint(json_array_get(rows, 0), "jobs", 0), 6);
	/* utime: 1 + 2 + 3 + 4 + 5 + 1 (job 0's second attempt) */
	assert_true(json_real_value(json_object_get(json_array_get(rows, 0), "ru_utime")) == 16);
	json_array_clear(rows);
	assert_int_equal(store_acct_summary(f->st, &flt, ACCT_BY_OWNER, acct_cb, rows), 0);
	assert_int_equal(json_array_size(rows), 2);
	assert_string_equal(jstr(json_array_get(rows, 0), "owner"), "alice");
	assert_int_equal(jint(json_array_get(rows, 0), "jobs", 0), 4);
	assert_string_equal(jstr(json_array_get(rows, 1), "owner"), "bob");
	assert_true(json_real_value(json_object_get(json_array_get(rows, 1), "ru_utime")) == 6);
	json_array_clear(rows);
	flt.owner = "bob";
	flt.since = 200;
	assert_int_equal(store_acct_summary(f->st, &flt, ACCT_BY_OWNER, acct_cb, rows), 0);
	assert_int_equal(json_array_size(rows), 1);
	assert_int_equal(jint(json_array_get(rows, 0), "jobs", 0), 1);
	json_array_clear(rows);
	/* Grouped by queue and owner; an owner with no row has no sum. */
	flt = (struct store_acct_filter){ 0 };
	assert_int_equal(store_acct_summary(f->st, &flt, ACCT_BY_QUEUE | ACCT_BY_OWNER, acct_cb, rows), 0);
	assert_int_equal(json_array_size(rows), 2);
	assert_non_null(jstr(json_array_get(rows, 0), "queue"));
	assert_null(jstr(json_array_get(rows, 0), "host"));
	json_array_clear(rows);
	flt.owner = "nobody";
	assert_int_equal(store_acct_summary(f->st, &flt, ACCT_BY_OWNER, acct_cb, rows), 0);
	assert_int_equal(json_array_size(rows), 0);
	/* A range of start times that holds none. */
	flt = (struct store_acct_filter){ .from = 1, .to = 2, .after_end = -1, .after_row = -1 };
	json_decref(rows);
	rows = acct_list(f, &flt);
	assert_int_equal(json_array_size(rows), 0);
	json_decref(rows);
}

struct hosts_seen {
	char    names[8][32];
	int     slots[8];
	double  load5[8];
	int64_t seen[8];
	char    attrs[8][64];
	int     n;
	int     max;
};

static int
host_cb(void *arg, const struct host_rec *h)
{
	struct hosts_seen *hs = arg;

	assert_true(hs->n < 8);
	snprintf(hs->names[hs->n], sizeof hs->names[0], "%s", h->name);
	hs->slots[hs->n] = h->slots;
	hs->load5[hs->n] = h->load[1];
	hs->seen[hs->n] = h->last_seen;
	snprintf(hs->attrs[hs->n], sizeof hs->attrs[0], "%s", h->attrs ? h->attrs : "-");
	hs->n++;
	return hs->max && hs->n >= hs->max;
}

static void
test_hosts(void **state)
{
	struct fix *f = *state;
	struct hosts_seen hs = { 0 };

	assert_int_equal(store_hosts_foreach(f->st, host_cb, &hs), 0);
	assert_int_equal(hs.n, 0);
	assert_int_equal(store_host_upsert(f->st, &(struct host_rec){ "nodeB", 4, { 1, 2, 3 }, 100,
	    "{\"arch\":\"x\"}" }), 0);
	assert_int_equal(store_host_upsert(f->st, &(struct host_rec){ "nodeA", 8, { 0.5, 0.25, 0 }, 200 }), 0);
	assert_int_equal(store_host_upsert(f->st, &(struct host_rec){ "nodeB", 16, { 4, 5, 6 }, 300 }), 0);
	assert_int_equal(store_host_upsert(f->st, &(struct host_rec){ NULL, 1, { 0 }, 0 }), -1);
	reopen(f);
	assert_int_equal(store_hosts_foreach(f->st, host_cb, &hs), 0);
	assert_int_equal(hs.n, 2);
	assert_string_equal(hs.names[0], "nodeA");
	assert_int_equal(hs.slots[0], 8);
	assert_true(hs.load5[0] == 0.25);
	assert_int_equal(hs.seen[0], 200);
	assert_string_equal(hs.names[1], "nodeB");
	assert_int_equal(hs.slots[1], 16);
	assert_true(hs.load5[1] == 5);
	assert_int_equal(hs.seen[1], 300);
	/* An update without attributes keeps the ones known. */
	assert_string_equal(hs.attrs[0], "-");
	assert_string_equal(hs.attrs[1], "{\"arch\":\"x\"}");
	hs = (struct hosts_seen){ .max = 1 };
	assert_int_equal(store_hosts_foreach(f->st, host_cb, &hs), 0);
	assert_int_equal(hs.n, 1);
}

static int
lists_cb(void *arg, const struct host_rec *h)
{
	char *out = arg;
	size_t n = strlen(out);
	snprintf(out + n, 256 - n, "%s:%s/%s;", h->name, h->users ? h->users[0] ? h->users[0] : "" : "-",
	    h->owners ? h->owners[0] ? h->owners[0] : "" : "-");
	return 0;
}

static int
alias_cb(void *arg, const char *name, const char *host)
{
	char *out = arg;
	size_t n = strlen(out);
	snprintf(out + n, 256 - n, "%s=%s;", name, host);
	return 0;
}

static int
resv_cb(void *arg, const struct resv_rec *r)
{
	char *out = arg;
	size_t n = strlen(out);
	snprintf(out + n, 256 - n, "%s:%s:%s:%s:%lld-%lld:%u:%u:%d;", r->name, r->owner,
	    r->users ? r->users[0] : "-", r->hosts[1], (long long)r->start, (long long)r->end,
	    r->flags, r->mail, r->state);
	return 0;
}

/* Host users and owners, aliases and reservations survive a reopen; the
 * upsert of a REGISTER leaves the lists alone. */
static void
test_host_lists(void **state)
{
	struct fix *f = *state;
	char *alice[] = { "alice", NULL }, *bob[] = { "bob", NULL }, *none[] = { NULL };
	char *hosts[] = { "nodeA", "nodeB", NULL };
	char out[256] = "";
	struct resv_rec r = { "maint", "bob", 7, alice, hosts, 1000, 2000, 1, 2, 0, 5 };

	assert_int_equal(store_host_upsert(f->st, &(struct host_rec){ "nodeA", 8, { 0 }, 1 }), 0);
	assert_int_equal(store_host_upsert(f->st, &(struct host_rec){ "nodeB", 8, { 0 }, 1 }), 0);
	assert_int_equal(store_host_lists(f->st, "nodeA", alice, bob), 0);
	assert_int_equal(store_host_lists(f->st, "nodeB", none, NULL), 0);
	assert_int_equal(store_host_upsert(f->st, &(struct host_rec){ "nodeA", 4, { 0 }, 2 }), 0);
	assert_int_equal(store_alias_add(f->st, "fast", "nodeA"), 0);
	assert_int_equal(store_alias_add(f->st, "fast", "nodeB"), 0);
	assert_int_equal(store_alias_add(f->st, "fast", "nodeB"), 0);
	assert_int_equal(store_alias_add(f->st, "gpu", "nodeB"), 0);
	assert_int_equal(store_alias_delete(f->st, "fast", "nodeA"), 0);
	assert_int_equal(store_resv_put(f->st, &r), 0);
	r.state = 1;
	assert_int_equal(store_resv_put(f->st, &r), 0);
	r.name = "gone";
	assert_int_equal(store_resv_put(f->st, &r), 0);
	assert_int_equal(store_resv_delete(f->st, "gone"), 0);
	reopen(f);
	assert_int_equal(store_hosts_foreach(f->st, lists_cb, out), 0);
	assert_string_equal(out, "nodeA:alice/bob;nodeB:/-;");
	out[0] = '\0';
	assert_int_equal(store_aliases_foreach(f->st, alias_cb, out), 0);
	assert_string_equal(out, "fast=nodeB;gpu=nodeB;");
	out[0] = '\0';
	assert_int_equal(store_resv_foreach(f->st, resv_cb, out), 0);
	assert_string_equal(out, "maint:bob:alice:nodeB:1000-2000:1:2:1;");
	assert_int_equal(store_alias_delete(f->st, "fast", NULL), 0);
	out[0] = '\0';
	assert_int_equal(store_aliases_foreach(f->st, alias_cb, out), 0);
	assert_string_equal(out, "gpu=nodeB;");
}

struct dep_seen {
	int64_t id[8];
	int     kind[8];
	int     n;
};

static int
dep_cb(void *arg, int64_t id, int kind)
{
	struct dep_seen *d = arg;

	assert_true(d->n < 8);
	d->id[d->n] = id;
	d->kind[d->n++] = kind;
	return 0;
}

static void
test_deps(void **state)
{
	struct fix *f = *state;
	struct dep_seen d = { 0 };
	struct job *j;

	assert_int_equal(store_dep_add(f->st, 10, 3, 2), 0);
	assert_int_equal(store_dep_add(f->st, 10, 4, 4), 0);
	assert_int_equal(store_dep_add(f->st, 10, 4, 4), 0);   /* the same row once */
	assert_int_equal(store_dep_add(f->st, 11, 4, 1), 0);
	reopen(f);
	assert_int_equal(store_deps_count(f->st, 10), 2);
	assert_int_equal(store_deps_of(f->st, 10, dep_cb, &d), 0);
	assert_int_equal(d.n, 2);
	assert_int_equal(d.id[0], 3);
	assert_int_equal(d.kind[0], 2);
	assert_int_equal(d.id[1], 4);
	d = (struct dep_seen){ 0 };
	assert_int_equal(store_dependents(f->st, 4, dep_cb, &d), 0);
	assert_int_equal(d.n, 2);
	assert_int_equal(d.id[0], 10);
	assert_int_equal(d.id[1], 11);
	assert_int_equal(d.kind[1], 1);
	assert_int_equal(store_dep_remove(f->st, 10, 3, 2), 0);
	assert_int_equal(store_deps_count(f->st, 10), 1);
	assert_int_equal(store_deps_count(f->st, 12), 0);

	/* Jobs held for a start time come due by time, not before. */
	j = mkjob("ann", 1000, 0, NULL);
	j->hold = HOLD_TIME;
	j->begin_time = 5000;
	insert(f, j);
	d = (struct dep_seen){ 0 };
	assert_int_equal(store_jobs_begin_due(f->st, 4999, dep_cb, &d), 0);
	assert_int_equal(d.n, 0);
	assert_int_equal(store_jobs_begin_due(f->st, 5000, dep_cb, &d), 0);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.id[0], j->id);
	j->hold = 0;
	assert_int_equal(store_job_update(f->st, j), 0);
	d = (struct dep_seen){ 0 };
	assert_int_equal(store_jobs_begin_due(f->st, 9999, dep_cb, &d), 0);
	assert_int_equal(d.n, 0);
	job_free(j);
}

static int
cron_seen(void *arg, struct cron_rec *r)
{
	int64_t *ids = arg;
	ids[ids[0]++ + 1] = r->id;
	return 0;
}

static void
test_cron_entries(void **state)
{
	struct fix *f = *state;
	struct cron_rec a = { 0, "ann", 1000, "* * * * *", "{\"name\":\"x\"}", 5000, 0, false, 1 };
	struct cron_rec b = { 0, "bob", 1001, "@daily", "{}", 9000, 0, false, 2 };
	struct cron_rec *r;
	int64_t ids[8] = { 0 };

	assert_int_equal(store_cron_insert(f->st, &a), 0);
	assert_int_equal(store_cron_insert(f->st, &b), 0);
	assert_true(b.id > a.id);
	reopen(f);
	r = store_cron_get(f->st, a.id);
	assert_non_null(r);
	assert_string_equal(r->owner, "ann");
	assert_string_equal(r->spec, "* * * * *");
	assert_string_equal(r->job, "{\"name\":\"x\"}");
	assert_int_equal(r->next_run, 5000);
	cron_rec_free(r);
	assert_null(store_cron_get(f->st, 999));
	/* Due: not before its time, and never while held. */
	assert_int_equal(store_cron_due(f->st, 4999, cron_seen, ids), 0);
	assert_int_equal(ids[0], 0);
	assert_int_equal(store_cron_due(f->st, 9000, cron_seen, ids), 0);
	assert_int_equal(ids[0], 2);
	assert_int_equal(ids[1], a.id);
	b.hold = true;
	b.last_job = 77;
	assert_int_equal(store_cron_update(f->st, &b), 0);
	memset(ids, 0, sizeof ids);
	assert_int_equal(store_cron_due(f->st, 99999, cron_seen, ids), 0);
	assert_int_equal(ids[0], 1);
	r = store_cron_get(f->st, b.id);
	assert_true(r->hold);
	assert_int_equal(r->last_job, 77);
	cron_rec_free(r);
	assert_int_equal(store_cron_delete(f->st, a.id), 0);
	memset(ids, 0, sizeof ids);
	assert_int_equal(store_cron_foreach(f->st, cron_seen, ids), 0);
	assert_int_equal(ids[0], 1);
	assert_int_equal(ids[1], b.id);
}

static void
test_meta(void **state)
{
	struct fix *f = *state;
	char *v = (char *)"untouched";

	assert_int_equal(store_meta_get(f->st, "epoch", &v), 1);
	assert_null(v);
	assert_int_equal(store_meta_set(f->st, "epoch", "1"), 0);
	assert_int_equal(store_meta_set(f->st, "cluster", "c-42"), 0);
	assert_int_equal(store_meta_set(f->st, "epoch", "2"), 0);
	reopen(f);
	assert_int_equal(store_meta_get(f->st, "epoch", &v), 0);
	assert_string_equal(v, "2");
	free(v);
	assert_int_equal(store_meta_get(f->st, "cluster", &v), 0);
	assert_string_equal(v, "c-42");
	free(v);
	assert_int_equal(store_meta_set(f->st, "cluster", NULL), 0);
	assert_int_equal(store_meta_get(f->st, "cluster", &v), 1);
	assert_int_equal(store_meta_set(f->st, "empty", ""), 0);
	assert_int_equal(store_meta_get(f->st, "empty", &v), 0);
	assert_string_equal(v, "");
	free(v);
}

static void
test_txn_commit_rollback(void **state)
{
	struct fix *f = *state;
	struct job *a = mkjob("alice", 1000, 0, "script a"), *b = mkjob("alice", 1000, 0, "script b");
	char *v;

	assert_false(store_in_txn(f->st));
	assert_int_equal(store_begin(f->st), 0);
	assert_true(store_in_txn(f->st));
	assert_int_equal(store_begin(f->st), -1);   /* no nesting */
	insert(f, a);
	assert_int_equal(store_meta_set(f->st, "k", "committed"), 0);
	assert_int_equal(store_commit(f->st), 0);
	assert_false(store_in_txn(f->st));

	assert_int_equal(store_begin(f->st), 0);
	insert(f, b);
	assert_int_equal(store_meta_set(f->st, "k", "rolled back"), 0);
	a->state = JS_DELETED;
	a->end_time = 5;
	assert_int_equal(store_job_update(f->st, a), 0);
	/* Inside the transaction its own changes are visible. */
	assert_int_equal(store_jobs_count(f->st, 0), 2);
	store_rollback(f->st);
	assert_false(store_in_txn(f->st));

	reopen(f);
	{
		struct job *got = store_job_get(f->st, a->id, true);
		assert_non_null(got);
		assert_int_equal(got->state, JS_PENDING);
		assert_string_equal(got->script, "script a");
		job_free(got);
	}
	assert_null(store_job_get(f->st, b->id, false));
	assert_int_equal(raw_get(f, "SELECT count(*) FROM scripts"), 1);
	assert_int_equal(store_meta_get(f->st, "k", &v), 0);
	assert_string_equal(v, "committed");
	free(v);
	/* Commit and rollback outside a transaction are harmless. */
	assert_int_equal(store_commit(f->st), 0);
	store_rollback(f->st);
	/* A transaction left open at close is discarded. */
	assert_int_equal(store_begin(f->st), 0);
	insert(f, b);
	reopen(f);
	assert_null(store_job_get(f->st, b->id, false));
	job_free(a);
	job_free(b);
}

static void
test_check(void **state)
{
	struct fix *f = *state;
	struct job *j = mkjob("alice", 1000, 0, NULL), *b = mkbinjob("bob", 1001);
	char *buf = NULL, *sql;
	size_t len = 0;
	FILE *out;

	insert(f, j);
	insert(f, b);
	j->state = JS_RUNNING;
	j->host = xstrdup("n1");
	assert_int_equal(store_job_update(f->st, j), 0);
	assert_int_equal(store_host_upsert(f->st, &(struct host_rec){ "n1", 2, { 0 }, 1 }), 0);
	assert_int_equal(store_check(f->st, stderr), 0);

	/* Running without a host, finished without an end time. */
	sql = xasprintf("UPDATE jobs SET host = NULL WHERE id = %lld;"
	    "UPDATE jobs SET state = 3, end_time = 0 WHERE id = %lld",
	    (long long)j->id, (long long)b->id);
	raw_do(f, sql);
	free(sql);
	out = open_memstream(&buf, &len);
	assert_int_equal(store_check(f->st, out), 2);
	fclose(out);
	fprintf(stderr, "%s", buf);
	sql = xasprintf("job %lld is dispatched or running but has no host", (long long)j->id);
	assert_non_null(strstr(buf, sql));
	free(sql);
	free(buf);

	/* Other kinds of damage each count. */
	raw_do(f, "UPDATE jobs SET host = 'n1', end_time = 1");
	assert_int_equal(store_check(f->st, NULL), 0);
	raw_do(f, "UPDATE jobs SET prio = 5000, argv = '[]' WHERE argv IS NOT NULL");
	assert_int_equal(store_check(f->st, NULL), 2);
	raw_do(f, "UPDATE jobs SET prio = 0, argv = '[\"x\"]'");
	raw_do(f, "PRAGMA foreign_keys = OFF; UPDATE jobs SET script_hash = 'nope' WHERE script_hash IS NOT NULL");
	assert_int_equal(store_check(f->st, NULL), 1);
	raw_do(f, "UPDATE jobs SET script_hash = NULL");
	assert_int_equal(store_check(f->st, NULL), 0);
	raw_do(f, "UPDATE scripts SET body = CAST('tampered' AS BLOB)");
	assert_int_equal(store_check(f->st, NULL), 1);
	/* Accounting rows: usage below zero, a start after the end. */
	raw_do(f, "DELETE FROM scripts");
	assert_int_equal(store_check(f->st, NULL), 0);
	j->end_time = 20;
	j->start_time = 10;
	assert_int_equal(store_acct_insert(f->st, j, &no_acct), 0);
	assert_int_equal(store_check(f->st, NULL), 0);
	raw_do(f, "UPDATE accounting SET ru_nivcsw = -1");
	assert_int_equal(store_check(f->st, NULL), 1);
	raw_do(f, "UPDATE accounting SET ru_nivcsw = 0, start_time = 30");
	assert_int_equal(store_check(f->st, NULL), 1);
	job_free(j);
	job_free(b);
}

/* Bad values in the file are clamped or skipped, never trusted. */
static void
test_corrupt_values(void **state)
{
	struct fix *f = *state;
	struct job *j = mkjob("alice", 1000, 0, NULL), *got;
	char *sql;
	struct ids c;

	insert(f, j);
	sql = xasprintf("UPDATE jobs SET state = 42, prio = 99999, uid = -5, hold = 1000,"
	    " signal = 'x', argv = 'not json', args = '[1, 2]', env = '{\"a\": 1}',"
	    " sup_groups = '[1, \"x\", -3, 5]', exit_status = 1e12 WHERE id = %lld", (long long)j->id);
	raw_do(f, sql);
	free(sql);
	got = store_job_get(f->st, j->id, true);
	assert_non_null(got);
	assert_int_equal(got->state, JS_FAILED);
	assert_int_equal(got->prio, 1024);
	assert_int_equal(got->uid, 0);
	assert_int_equal(got->hold, 0xff);
	assert_null(got->argv);
	assert_null(got->args);
	assert_null(got->env);
	assert_int_equal(got->ngroups, 2);
	assert_int_equal(got->groups[0], 1);
	assert_int_equal(got->groups[1], 5);
	assert_int_equal(got->exit_status, 65535);
	{
		json_t *o = job_to_json(got);   /* must not trip the state assertion */
		assert_non_null(o);
		json_decref(o);
	}
	job_free(got);
	c = list(f, 0, NULL, NULL, true);
	assert_int_equal(c.n, 1);
	c = list(f, 1u << JS_FAILED, NULL, NULL, false);
	assert_int_equal(c.n, 0);   /* the stored state is 42, not failed */
	assert_true(store_check(f->st, NULL) > 0);
	/* A missing script body. */
	raw_do(f, "PRAGMA foreign_keys = OFF; UPDATE jobs SET state = 0, prio = 0, hold = 0, uid = 1,"
	    " signal = 0, exit_status = 0; DELETE FROM scripts");
	got = store_job_get(f->st, j->id, true);
	assert_non_null(got);
	assert_null(got->script);
	job_free(got);
	c = runnable(f, -1, 10);
	assert_int_equal(c.n, 1);
	job_free(j);
}

/* spooldir.c */

static void
test_spool_write_atomic(void **state)
{
	struct fix *f = *state;
	char *path = xasprintf("%s/sub/file", f->dir), *data, *tmp;
	const char *why;
	struct stat sb;
	size_t n;
	mode_t old = umask(077);

	assert_int_equal(spool_write_atomic(path, "x", 1, 0644), -1);   /* no directory */
	assert_int_equal(errno, ENOENT);
	assert_int_equal(spool_mkdir_p(path, 0755), 0);
	assert_int_equal(spool_write_atomic(path, "x", 1, 0644), -1);   /* a directory is in the way */
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(spool_write_atomic(path, "first", 5, 0644), 0);
	assert_int_equal(spool_write_atomic(path, "second\n", 7, 0640), 0);
	data = read_file(path, 1024, &n, &why);
	assert_non_null(data);
	assert_int_equal(n, 7);
	assert_string_equal(data, "second\n");
	free(data);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0640);   /* the umask does not change it */
	tmp = xasprintf("%s.tmp.%d", path, (int)getpid());
	assert_int_equal(access(tmp, F_OK), -1);
	/* The temporary name is never followed if it is a link. */
	{
		char *victim = xasprintf("%s/victim", f->dir);
		assert_int_equal(spool_write_atomic(victim, "keep", 4, 0600), 0);
		assert_int_equal(symlink(victim, tmp), 0);
		assert_int_equal(spool_write_atomic(path, "x", 1, 0644), -1);
		assert_int_equal(stat(victim, &sb), 0);
		assert_int_equal(sb.st_size, 4);
		unlink(tmp);
		free(victim);
	}
	assert_int_equal(spool_write_atomic(path, "", 0, 0600), 0);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_size, 0);
	assert_int_equal(spool_fsync_dir(f->dir), 0);
	assert_int_equal(spool_fsync_dir(path), -1);
	umask(old);
	free(tmp);
	free(path);
}

static void
test_spool_mkdir_rmtree(void **state)
{
	struct fix *f = *state;
	char *deep = xasprintf("%s/a//b/c/", f->dir), *file, *outside, *keep, *link;
	struct stat sb;
	int fd;

	assert_int_equal(spool_mkdir_p(deep, 0700), 0);
	assert_int_equal(spool_mkdir_p(deep, 0700), 0);   /* exists: fine */
	assert_int_equal(stat(deep, &sb), 0);
	assert_true(S_ISDIR(sb.st_mode));
	file = xasprintf("%s/a/file", f->dir);
	fd = open(file, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	{
		char *under = xasprintf("%s/x", file);
		assert_int_equal(spool_mkdir_p(under, 0700), -1);
		assert_int_equal(errno, ENOTDIR);
		free(under);
	}
	/* A link to a directory outside the tree: removing the tree leaves it. */
	outside = xasprintf("%s-outside", f->dir);
	assert_int_equal(spool_mkdir_p(outside, 0700), 0);
	keep = xasprintf("%s/keep", outside);
	fd = open(keep, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	link = xasprintf("%s/a/b/link", f->dir);
	assert_int_equal(symlink(outside, link), 0);
	{
		char *top = xasprintf("%s/a", f->dir);
		assert_int_equal(spool_rmtree(top), 0);
		assert_int_equal(lstat(top, &sb), -1);
		assert_int_equal(spool_rmtree(top), 0);   /* already gone: fine */
		free(top);
	}
	assert_int_equal(access(keep, F_OK), 0);
	/* A link given as the top is removed itself, not its target. */
	free(link);
	link = xasprintf("%s/toplink", f->dir);
	assert_int_equal(symlink(outside, link), 0);
	assert_int_equal(spool_rmtree(link), 0);
	assert_int_equal(lstat(link, &sb), -1);
	assert_int_equal(access(keep, F_OK), 0);
	assert_int_equal(spool_rmtree(outside), 0);
	assert_int_equal(access(outside, F_OK), -1);
	free(deep);
	free(file);
	free(outside);
	free(keep);
	free(link);
}

/* Array tasks: rows only for tasks out of pending, views with the
 * parent's fields and the task's own, counts, and rows going with the job. */
static int
collect_tasks(void *arg, struct job *j)
{
	struct ids *c = arg;
	c->id[c->n++] = j->task;
	assert_string_equal(j->name, "test job");   /* the parent's */
	return 0;
}

static void
test_tasks(void **state)
{
	struct fix *f = *state;
	struct job *j = mkjob("alice", 1000, 0, NULL), *t, *got;
	struct store_task_counts c;
	struct ids ids = { 0 };
	size_t n;
	int *taken;
	int64_t id;

	j->t_first = 1;
	j->t_last = 1000000;
	j->t_step = 1;
	j->tc = 2;
	id = insert(f, j);
	taken = store_task_ids(f->st, id, 0, &n);
	assert_non_null(taken);
	assert_int_equal(n, 0);
	free(taken);
	assert_int_equal(raw_get(f, "SELECT count(*) FROM tasks"), 0);

	/* A task view written through store_job_update lands in tasks only. */
	t = store_job_get(f->st, id, false);
	t->task = 7;
	t->attempt = 1;
	t->state = JS_RUNNING;
	t->host = xstrdup("node7");
	t->pid = 4242;
	t->start_time = 5000;
	assert_int_equal(store_job_update(f->st, t), 0);
	t->task = 3;
	t->state = JS_DONE;
	t->end_time = 6000;
	t->exit_status = 0;
	t->utime = 1.5;
	assert_int_equal(store_job_update(f->st, t), 0);
	t->task = 9;
	t->state = JS_FAILED;
	t->exit_status = 2;
	t->reason = xstrdup("exit 2");
	assert_int_equal(store_job_update(f->st, t), 0);
	job_free(t);
	assert_int_equal(raw_get(f, "SELECT count(*) FROM tasks"), 3);
	got = store_job_get(f->st, id, false);
	assert_int_equal(got->state, JS_PENDING);     /* the parent is untouched */
	assert_null(got->host);
	job_free(got);

	got = store_task_get(f->st, id, 7, true);
	assert_non_null(got);
	assert_int_equal(got->task, 7);
	assert_int_equal(got->state, JS_RUNNING);
	assert_string_equal(got->host, "node7");
	assert_int_equal(got->pid, 4242);
	assert_int_equal(got->t_last, 1000000);
	assert_int_equal(got->tc, 2);
	assert_string_equal(got->script, "#!/bin/sh\necho hello\n");
	/* Updating again replaces the row. */
	got->state = JS_DONE;
	got->end_time = 7000;
	assert_int_equal(store_job_update(f->st, got), 0);
	job_free(got);
	got = store_task_get(f->st, id, 7, false);
	assert_int_equal(got->state, JS_DONE);
	assert_int_equal(got->end_time, 7000);
	job_free(got);
	assert_null(store_task_get(f->st, id, 8, false));

	/* A task held on its own (schema 17): a pending row with its hold,
	 * read back as the task's, not its array's. */
	t = store_job_get(f->st, id, false);
	t->task = 8;
	t->hold = HOLD_USER;
	assert_int_equal(store_job_update(f->st, t), 0);
	job_free(t);
	got = store_task_get(f->st, id, 8, false);
	assert_int_equal(got->state, JS_PENDING);
	assert_int_equal(got->hold, HOLD_USER);
	job_free(got);
	got = store_job_get(f->st, id, false);
	assert_int_equal(got->hold, 0);
	job_free(got);
	got = store_task_get(f->st, id, 7, false);
	assert_int_equal(got->hold, 0);
	job_free(got);
	assert_int_equal(store_task_delete(f->st, id, 8), 0);

	taken = store_task_ids(f->st, id, 0, &n);
	assert_int_equal(n, 3);
	assert_int_equal(taken[0], 3);
	assert_int_equal(taken[1], 7);
	assert_int_equal(taken[2], 9);
	free(taken);
	taken = store_task_ids(f->st, id, 4, &n);
	assert_int_equal(n, 2);
	assert_int_equal(taken[0], 7);
	free(taken);
	assert_int_equal(store_array_next(f->st, id), 0);
	assert_int_equal(store_array_set_next(f->st, id, 10), 0);
	assert_int_equal(store_array_next(f->st, id), 10);
	assert_int_equal(store_task_counts(f->st, id, &c), 0);
	assert_int_equal(c.unfinished, 0);
	assert_int_equal(c.failed, 1);

	/* One running task, seen by the active walk with its host. */
	t = store_task_get(f->st, id, 9, false);
	t->task = 11;
	t->state = JS_DISPATCHED;
	assert_int_equal(store_job_update(f->st, t), 0);
	job_free(t);
	assert_int_equal(store_task_counts(f->st, id, &c), 0);
	assert_int_equal(c.unfinished, 1);
	assert_int_equal(c.active, 1);
	assert_int_equal(store_tasks_active(f->st, NULL, collect_tasks, &ids), 0);
	assert_int_equal(ids.n, 1);
	assert_int_equal(ids.id[0], 11);
	ids.n = 0;
	assert_int_equal(store_tasks_active(f->st, "elsewhere", collect_tasks, &ids), 0);
	assert_int_equal(ids.n, 0);
	assert_int_equal(store_tasks_foreach(f->st, id, 1u << JS_DONE, collect_tasks, &ids), 0);
	assert_int_equal(ids.n, 2);
	assert_int_equal(ids.id[0], 3);
	assert_int_equal(ids.id[1], 7);
	ids.n = 0;
	assert_int_equal(store_tasks_foreach(f->st, id, 0, collect_tasks, &ids), 0);
	assert_int_equal(ids.n, 4);

	/* A row outside the job's range is a problem --check names. */
	assert_int_equal(store_check(f->st, stderr), 0);
	raw_do(f, "UPDATE tasks SET task = 2000000 WHERE task = 3");
	assert_int_equal(store_check(f->st, stderr), 1);
	raw_do(f, "UPDATE tasks SET task = 3 WHERE task = 2000000");
	/* An array that ended while task 11 is still dispatched is another. */
	assert_int_equal(store_check(f->st, NULL), 0);
	raw_do(f, "UPDATE jobs SET state = 3, end_time = 1 WHERE id = (SELECT job_id FROM tasks LIMIT 1)");
	assert_int_equal(store_check(f->st, stderr), 1);
	/* The rows go with their job. */
	assert_int_equal(store_job_delete(f->st, id), 0);
	assert_int_equal(raw_get(f, "SELECT count(*) FROM tasks"), 0);
	assert_int_equal(store_check(f->st, stderr), 0);
	job_free(j);
}

/* An array whose other tasks all left the pending state runs, yet a task
 * held on its own or waiting in error keeps a pending row: the listing's
 * pending walks (order "prio", and states "p" alone) read that array, for
 * that task's line.  Task 2 is held (hold) or in error (error). */
static int64_t
mkarray(struct fix *f, int prio, enum job_state state, bool hold, bool error)
{
	struct job *j = mkjob("alice", 1000, prio, NULL), *t;
	int64_t id;

	j->t_first = 1;
	j->t_last = 3;
	j->t_step = 1;
	id = insert(f, j);
	j->state = state;
	assert_int_equal(store_job_update(f->st, j), 0);
	for (int task = 1; task <= 3 && state != JS_PENDING; task++) {
		t = store_job_get(f->st, id, false);
		t->task = task;
		t->state = (hold || error) && task == 2 ? JS_PENDING : JS_RUNNING;
		t->hold = hold && task == 2 ? HOLD_USER : 0;
		t->error = error && task == 2;
		assert_int_equal(store_job_update(f->st, t), 0);
		job_free(t);
	}
	job_free(j);
	return id;
}

static struct ids
by_prio(struct fix *f, int64_t after_prio, int64_t after_id, int max)
{
	struct ids c = { .max = max };

	assert_int_equal(store_pending_by_prio(f->st, after_prio, after_id, collect, NULL, &c), 0);
	return c;
}

static void
test_pending_walk_held_tasks(void **state)
{
	struct fix *f = *state;
	struct job *j = mkjob("alice", 1000, 0, NULL);
	int64_t a = insert(f, j);
	int64_t b = mkarray(f, 0, JS_RUNNING, true, false);    /* runs, task 2 held */
	int64_t c = mkarray(f, 0, JS_RUNNING, false, false);   /* runs, none waits */
	int64_t d = mkarray(f, -5, JS_PENDING, false, false);  /* waits whole */
	int64_t e = mkarray(f, 10, JS_RUNNING, false, true);   /* task 2 in error */
	struct ids got;
	struct store_job_filter pf = { .states = 1u << JS_PENDING | 1u << JS_DISPATCHED | 1u << JS_RUNNING,
		.running_pending_tasks_only = true };

	(void)c;
	/* Priority down, then id, from each cursor, a page at a time. */
	got = by_prio(f, INT64_MAX, 0, 0);
	assert_ids(&got, 4, e, a, b, d);
	got = by_prio(f, INT64_MAX, 0, 2);
	assert_ids(&got, 2, e, a);
	got = by_prio(f, 0, a, 0);
	assert_ids(&got, 2, b, d);
	got = by_prio(f, 10, e, 1);
	assert_ids(&got, 1, a);
	got = by_prio(f, 0, b, 0);
	assert_ids(&got, 1, d);
	/* The same jobs by id, as STATUS of states "p" reads them. */
	got = (struct ids){ 0 };
	assert_int_equal(store_jobs_foreach(f->st, &pf, collect, &got), 0);
	assert_ids(&got, 4, a, b, d, e);
	/* Released, the task has no row and the array leaves both walks. */
	assert_int_equal(store_task_delete(f->st, b, 2), 0);
	got = by_prio(f, INT64_MAX, 0, 0);
	assert_ids(&got, 3, e, a, d);
	got = (struct ids){ 0 };
	assert_int_equal(store_jobs_foreach(f->st, &pf, collect, &got), 0);
	assert_ids(&got, 3, a, d, e);
	job_free(j);
}

/* qmaster --dump of the database in dir, through a read-only connection
 * beside the fixture's open one, as beside a live master. */
static char *
dump_of(const char *dir)
{
	char *path = xasprintf("%s/nowq.db", dir), *text = NULL;
	size_t len = 0;
	const char *why;
	struct store *ro = store_open_readonly(path, &why);
	FILE *out = open_memstream(&text, &len);

	assert_non_null(ro);
	assert_non_null(out);
	assert_int_equal(store_check(ro, stderr), 0);
	assert_int_equal(store_dump(ro, out), 0);
	fclose(out);
	store_close(ro);
	free(path);
	return text;
}

/* The two databases dump alike; context, if any, says when they did not. */
static void
assert_same_dump(const char *a, const char *b, const char *context)
{
	char *d1 = dump_of(a), *d2 = dump_of(b);

	if (context && strcmp(d1, d2) != 0)
		print_error("%s\n", context);
	assert_string_equal(d1, d2);
	free(d1);
	free(d2);
}

/* One changeset of the primary, kept as the standby would receive it. */
struct shipped {
	void    *cs;
	int      n;
	int64_t  seq;
};

/* Commits the primary's open transaction and keeps its changeset. */
static void
ship(struct fix *f, struct shipped *s)
{
	const void *cs;

	assert_int_equal(store_commit(f->st), 0);
	assert_non_null(cs = store_changeset(f->st, &s->n, &s->seq));
	s->cs = xmalloc((size_t)s->n);
	memcpy(s->cs, cs, (size_t)s->n);
	store_changeset_done(f->st);
}

/* Applies s to the copy and commits; the copy's answer. */
static int
land(struct store *copy, struct shipped *s)
{
	char err[256];

	if (store_apply(copy, s->cs, s->n, s->seq, err, sizeof err) < 0)
		return -1;
	assert_int_equal(store_apply_commit(copy, err, sizeof err), 0);
	return 0;
}

static void
ship_and_land(struct fix *f, struct store *copy)
{
	struct shipped s;

	ship(f, &s);
	assert_int_equal(land(copy, &s), 0);
	free(s.cs);
}

/* How many changes of op on table s holds; *first and *firstop receive
 * the first change's table and operation. */
static int
ops_in(const struct shipped *s, const char *table, int op, char *first, size_t firstlen,
    int *firstop)
{
	sqlite3_changeset_iter *it;
	const char *tab;
	int n = 0, ncol, o;

	assert_int_equal(sqlite3changeset_start(&it, s->n, s->cs), SQLITE_OK);
	first[0] = '\0';
	while (sqlite3changeset_next(it) == SQLITE_ROW) {
		assert_int_equal(sqlite3changeset_op(it, &tab, &ncol, &o, NULL), SQLITE_OK);
		if (!first[0]) {
			snprintf(first, firstlen, "%s", tab);
			*firstop = o;
		}
		n += strcmp(tab, table) == 0 && o == op;
	}
	assert_int_equal(sqlite3changeset_finalize(it), SQLITE_OK);
	return n;
}

/* The same changes in the order of SQLite's changegroup (its hash's). */
static void
regroup(struct shipped *s)
{
	sqlite3_changegroup *g;
	void *out;
	int n;

	assert_int_equal(sqlite3changegroup_new(&g), SQLITE_OK);
	assert_int_equal(sqlite3changegroup_add(g, s->n, s->cs), SQLITE_OK);
	assert_int_equal(sqlite3changegroup_output(g, &n, &out), SQLITE_OK);
	sqlite3changegroup_delete(g);
	free(s->cs);
	s->cs = xmalloc((size_t)n);
	memcpy(s->cs, out, (size_t)n);
	s->n = n;
	sqlite3_free(out);
}

/* Changes one job on the copy behind the standby's back. */
static void
raw_set(sqlite3 *db, int64_t id, const char *set)
{
	char *sql = xasprintf("UPDATE jobs SET %s WHERE id = %lld", set, (long long)id);

	raw_exec(db, sql);
	free(sql);
}

/* A changeset that does not apply to the copy changes nothing there. */
static void
refused(struct store *copy, const char *copydir, struct shipped *s)
{
	char *before = dump_of(copydir), *after;
	int64_t seq = store_repl_seq(copy);

	assert_int_equal(land(copy, s), -1);
	assert_int_equal(store_repl_seq(copy), seq);
	after = dump_of(copydir);
	assert_string_equal(before, after);
	free(before);
	free(after);
}

/* The standby's applier on changes of every kind: updates of different
 * columns of one table (one statement each), deletes, rows that differ on
 * the copy (conflicts that change nothing), changes that fail a constraint
 * until later ones of the changeset are in, and a corrupt changeset. */
static void
replication_changes(struct fix *f)
{
	char copydir[64], first[32], *path;
	struct job *a = mkjob("dave", 1003, 0, "#!/bin/sh\necho a\n"), *b, *c, *d;
	struct store *copy;
	struct shipped s;
	struct acct_info ai;
	const char *why;
	sqlite3 *raw;
	bool reordered = false;
	int op;

	/* A standby starts from a snapshot of the primary. */
	strcpy(copydir, "/tmp/nowq-test-copy-XXXXXX");
	assert_non_null(mkdtemp(copydir));
	path = xasprintf("%s/nowq.db", copydir);
	assert_int_equal(store_backup(f->st, path), 0);
	assert_non_null(copy = store_open(copydir, &why));
	assert_int_equal(store_repl_seq(copy), store_repl_seq(f->st));

	assert_int_equal(store_begin(f->st), 0);
	insert(f, a);
	ship_and_land(f, copy);

	/* An update of a few columns, then of others, then of the first
	 * ones again. */
	a->state = JS_RUNNING;
	a->host = xstrdup("node1");
	a->pid = 42;
	a->start_time = 1700000001000LL;
	assert_int_equal(store_begin(f->st), 0);
	assert_int_equal(store_job_update(f->st, a), 0);
	ship(f, &s);
	assert_int_equal(ops_in(&s, "jobs", SQLITE_UPDATE, first, sizeof first, &op), 1);
	assert_int_equal(land(copy, &s), 0);
	free(s.cs);
	a->prio = 5;
	free(a->name);
	a->name = xstrdup("renamed");
	assert_int_equal(store_begin(f->st), 0);
	assert_int_equal(store_job_update(f->st, a), 0);
	ship_and_land(f, copy);
	a->pid = 43;
	free(a->host);
	a->host = xstrdup("node2");
	assert_int_equal(store_begin(f->st), 0);
	assert_int_equal(store_job_update(f->st, a), 0);
	ship_and_land(f, copy);
	assert_non_null(b = store_job_get(copy, a->id, true));
	assert_job_equal(a, b);
	job_free(b);

	/* A column an update changes differs on the copy: a conflict. */
	raw = raw_open(path);
	raw_set(raw, a->id, "name = 'tampered'");
	free(a->name);
	a->name = xstrdup("renamed again");
	assert_int_equal(store_begin(f->st), 0);
	assert_int_equal(store_job_update(f->st, a), 0);
	ship(f, &s);
	refused(copy, copydir, &s);
	raw_set(raw, a->id, "name = 'renamed'");
	assert_int_equal(land(copy, &s), 0);
	free(s.cs);

	/* Each column of a deleted row must be as it was. */
	raw_set(raw, a->id, "cwd = '/elsewhere'");
	assert_int_equal(store_begin(f->st), 0);
	assert_int_equal(store_job_delete(f->st, a->id), 0);
	ship(f, &s);
	assert_int_equal(ops_in(&s, "jobs", SQLITE_DELETE, first, sizeof first, &op), 1);
	assert_int_equal(ops_in(&s, "scripts", SQLITE_DELETE, first, sizeof first, &op), 1);
	refused(copy, copydir, &s);
	raw_set(raw, a->id, "cwd = '/home/u/work'");
	assert_int_equal(land(copy, &s), 0);
	free(s.cs);
	assert_null(store_job_get(copy, a->id, false));

	/* An accounting row written again replaces the old one.  The capture
	 * puts the old one's delete first; in a changeset in another order
	 * (SQLite's changegroup writes its hash's) the new one fails the
	 * unique (job_id, task, attempt) until the old one is gone. */
	memset(&ai, 0, sizeof ai);
	b = mkjob("erin", 1004, 0, NULL);
	assert_int_equal(store_begin(f->st), 0);
	insert(f, b);
	ship_and_land(f, copy);
	b->state = JS_FAILED;
	b->end_time = 20;
	for (int i = 0; i < 64 && !reordered; i++) {
		b->exit_status = i;
		assert_int_equal(store_begin(f->st), 0);
		assert_int_equal(store_acct_insert(f->st, b, &ai), 0);
		ship(f, &s);
		if (i > 0) {
			assert_int_equal(ops_in(&s, "accounting", SQLITE_DELETE, first, sizeof first,
			    &op), 1);
			assert_string_equal(first, "accounting");
			assert_int_equal(op, SQLITE_DELETE);
			regroup(&s);
			assert_int_equal(ops_in(&s, "accounting", SQLITE_DELETE, first, sizeof first,
			    &op), 1);
			reordered = op == SQLITE_INSERT;
		}
		assert_int_equal(land(copy, &s), 0);
		free(s.cs);
	}
	assert_true(reordered);
	/* A row only the copy has holds the unique key for good: refused. */
	raw_exec(raw, "INSERT INTO accounting (job_id, task, attempt) VALUES (999999, 0, 0)");
	c = mkjob("erin", 1004, 0, NULL);
	c->id = 999999;
	assert_int_equal(store_begin(f->st), 0);
	assert_int_equal(store_acct_insert(f->st, c, &ai), 0);
	ship(f, &s);
	refused(copy, copydir, &s);
	raw_exec(raw, "DELETE FROM accounting WHERE job_id = 999999");
	assert_int_equal(land(copy, &s), 0);
	free(s.cs);
	job_free(c);

	/* Foreign keys hold at the end of a changeset, not at each change:
	 * jobs come before scripts when a job was changed first... */
	c = mkjob("erin", 1004, 0, "#!/bin/sh\necho c\n");
	assert_int_equal(store_begin(f->st), 0);
	b->prio = 7;
	assert_int_equal(store_job_update(f->st, b), 0);
	insert(f, c);
	ship(f, &s);
	assert_int_equal(ops_in(&s, "scripts", SQLITE_INSERT, first, sizeof first, &op), 1);
	assert_string_equal(first, "jobs");
	assert_int_equal(land(copy, &s), 0);
	free(s.cs);
	/* ...and a script goes before the job using it when scripts were
	 * changed first. */
	d = mkjob("erin", 1004, 0, "#!/bin/sh\necho d\n");
	assert_int_equal(store_begin(f->st), 0);
	insert(f, d);
	assert_int_equal(store_job_delete(f->st, c->id), 0);
	ship(f, &s);
	assert_int_equal(ops_in(&s, "scripts", SQLITE_DELETE, first, sizeof first, &op), 1);
	assert_string_equal(first, "scripts");
	assert_int_equal(land(copy, &s), 0);
	free(s.cs);

	assert_same_dump(f->dir, copydir, NULL);

	/* A changeset damaged on its way is refused, whatever the damage,
	 * or applies as some other changeset would; never a crash. */
	d->prio = 9;
	assert_int_equal(store_begin(f->st), 0);
	assert_int_equal(store_job_update(f->st, d), 0);
	assert_int_equal(store_key_put(f->st, "0:damaged", d->id, 5), 0);
	ship(f, &s);
	{
		unsigned char *bad = xmalloc((size_t)s.n);
		char err[256];

		for (int k = 0; k < s.n; k++) {
			if (store_apply(copy, s.cs, k, s.seq, err, sizeof err) == 0)
				store_rollback(copy);
			memcpy(bad, s.cs, (size_t)s.n);
			bad[k] ^= 0x5a;
			if (store_apply(copy, bad, s.n, s.seq, err, sizeof err) == 0)
				store_rollback(copy);
			bad[k] = 0xff;
			if (store_apply(copy, bad, s.n, s.seq, err, sizeof err) == 0)
				store_rollback(copy);
		}
		free(bad);
	}
	assert_int_equal(land(copy, &s), 0);
	free(s.cs);
	assert_same_dump(f->dir, copydir, NULL);

	sqlite3_close(raw);
	store_close(copy);
	spool_rmtree(copydir);
	free(path);
	job_free(a);
	job_free(b);
	job_free(c);
	job_free(d);
}

/* Replication: a transaction's changeset, applied to a copy made by the
 * online backup, reproduces it there with its sequence number; one out of
 * order or one that conflicts changes nothing. */
static void
test_replication(void **state)
{
	struct fix *f = *state;
	char copydir[64], err[256], *path, *d1, *d2;
	struct store *copy;
	const char *why;
	struct shipped one;
	int n;
	int64_t seq;
	struct job *j = mkjob("alice", 1000, 0, NULL), *got;

	strcpy(copydir, "/tmp/nowq-test-copy-XXXXXX");
	assert_non_null(mkdtemp(copydir));
	path = xasprintf("%s/nowq.db", copydir);
	assert_int_equal(store_backup(f->st, path), 0);
	assert_non_null(copy = store_open(copydir, &why));
	assert_int_equal(store_repl_seq(copy), 0);

	store_capture(f->st, true);
	assert_int_equal(store_begin(f->st), 0);
	insert(f, j);
	ship(f, &one);
	assert_int_equal(one.seq, 1);
	assert_int_equal(store_repl_seq(f->st), 1);

	/* Out of order: refused. */
	assert_int_equal(store_apply(copy, one.cs, one.n, 2, err, sizeof err), -1);
	assert_null(store_job_get(copy, j->id, false));
	/* The dumps tell the copy one transaction behind... */
	d1 = dump_of(f->dir);
	d2 = dump_of(copydir);
	assert_string_not_equal(d1, d2);
	free(d2);
	assert_int_equal(store_apply(copy, one.cs, one.n, 1, err, sizeof err), 0);
	assert_int_equal(store_repl_seq(copy), 1);
	assert_int_equal(store_apply_commit(copy, err, sizeof err), 0);
	/* ...and the same once it applied it (meta repl.seq included). */
	d2 = dump_of(copydir);
	assert_string_equal(d1, d2);
	assert_non_null(strstr(d1, "\n\"repl.seq\"|\"1\"\n"));
	free(d1);
	free(d2);
	assert_non_null(got = store_job_get(copy, j->id, true));
	assert_job_equal(j, got);
	job_free(got);
	/* Again as seq 2: the row exists, a conflict, nothing changes. */
	assert_int_equal(store_apply(copy, one.cs, one.n, 2, err, sizeof err), -1);
	assert_int_equal(store_repl_seq(copy), 1);

	/* A transaction that changes nothing has no changeset and no number. */
	assert_int_equal(store_begin(f->st), 0);
	assert_int_equal(store_commit(f->st), 0);
	assert_null(store_changeset(f->st, &n, &seq));
	assert_int_equal(store_repl_seq(f->st), 1);

	/* Two more, for a standby that applies them in one transaction. */
	{
		struct job *j2 = mkjob("bob", 1001, 0, NULL), *j3 = mkjob("carol", 1002, 0, NULL);
		struct shipped s2, s3;

		assert_int_equal(store_begin(f->st), 0);
		insert(f, j2);
		ship(f, &s2);
		assert_int_equal(s2.seq, 2);
		assert_int_equal(store_repl_seq(f->st), 2);
		assert_int_equal(store_begin(f->st), 0);
		insert(f, j3);
		ship(f, &s3);
		assert_int_equal(s3.seq, 3);

		/* A standby applies both in one transaction; when the second
		 * does not apply (here: applied twice), neither is kept. */
		assert_int_equal(store_apply(copy, s2.cs, s2.n, 2, err, sizeof err), 0);
		assert_int_equal(store_apply(copy, s2.cs, s2.n, 3, err, sizeof err), -1);
		assert_int_equal(store_repl_seq(copy), 1);
		assert_null(store_job_get(copy, j2->id, false));
		assert_int_equal(store_apply(copy, s2.cs, s2.n, 2, err, sizeof err), 0);
		assert_int_equal(store_apply(copy, s3.cs, s3.n, 3, err, sizeof err), 0);
		assert_int_equal(store_apply_commit(copy, err, sizeof err), 0);
		assert_int_equal(store_repl_seq(copy), 3);
		assert_same_dump(f->dir, copydir, NULL);

		free(s2.cs);
		free(s3.cs);
		job_free(j2);
		job_free(j3);
	}
	replication_changes(f);

	/* Submission keys. */
	assert_int_equal(store_key_job(f->st, "0:abc"), 0);
	assert_int_equal(store_key_put(f->st, "0:abc", j->id, 5), 0);
	assert_int_equal(store_key_job(f->st, "0:abc"), j->id);
	assert_int_equal(store_key_purge(f->st, 6), 0);
	assert_int_equal(store_key_job(f->st, "0:abc"), 0);

	free(one.cs);
	store_close(copy);
	spool_rmtree(copydir);
	free(path);
	job_free(j);
}

/* One value of a change, as text: its type and its value; "-" when the
 * change does not hold it. */
static void
canon_value(FILE *out, sqlite3_value *v)
{
	if (!v) {
		fputs(" -", out);
		return;
	}
	switch (sqlite3_value_type(v)) {
	case SQLITE_INTEGER:
		fprintf(out, " i%lld", (long long)sqlite3_value_int64(v));
		break;
	case SQLITE_FLOAT:
		fprintf(out, " f%.17g", sqlite3_value_double(v));
		break;
	case SQLITE_TEXT:
		fprintf(out, " t'%s'", (const char *)sqlite3_value_text(v));
		break;
	case SQLITE_BLOB:
		fprintf(out, " b%d", sqlite3_value_bytes(v));
		break;
	default:
		fputs(" n", out);
		break;
	}
}

static int
canon_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A changeset as its changes, one line each (table, operation, indirect
 * flag, old and new values), sorted: what it says, whatever its order.
 * skip: a table left out. */
static char *
canon_changes(const void *cs, int n, const char *skip)
{
	sqlite3_changeset_iter *it;
	char **lines = NULL, *text = NULL;
	size_t len = 0;
	int nl = 0, ncol, op, ind;
	const char *tab;
	FILE *out;

	assert_int_equal(sqlite3changeset_start(&it, n, (void *)cs), SQLITE_OK);
	while (sqlite3changeset_next(it) == SQLITE_ROW) {
		char *line = NULL;
		size_t ll = 0;
		FILE *l;

		assert_int_equal(sqlite3changeset_op(it, &tab, &ncol, &op, &ind), SQLITE_OK);
		if (skip && strcmp(tab, skip) == 0)
			continue;
		assert_non_null(l = open_memstream(&line, &ll));
		fprintf(l, "%s %d %d |", tab, op, ind);
		for (int i = 0; i < ncol; i++) {
			sqlite3_value *v = NULL;
			if (op != SQLITE_INSERT)
				assert_int_equal(sqlite3changeset_old(it, i, &v), SQLITE_OK);
			canon_value(l, v);
		}
		fputs(" |", l);
		for (int i = 0; i < ncol; i++) {
			sqlite3_value *v = NULL;
			if (op != SQLITE_DELETE)
				assert_int_equal(sqlite3changeset_new(it, i, &v), SQLITE_OK);
			canon_value(l, v);
		}
		fclose(l);
		lines = xrealloc(lines, (size_t)(nl + 1) * sizeof *lines);
		lines[nl++] = line;
	}
	assert_int_equal(sqlite3changeset_finalize(it), SQLITE_OK);
	if (nl)
		qsort(lines, (size_t)nl, sizeof *lines, canon_cmp);
	assert_non_null(out = open_memstream(&text, &len));
	for (int i = 0; i < nl; i++) {
		fprintf(out, "%s\n", lines[i]);
		free(lines[i]);
	}
	fclose(out);
	free(lines);
	return text;
}

/* The capture against the truth: transactions of random changes on the
 * primary (jobs inserted, changed, deleted, purged; scripts shared and
 * dropped; accounting rows written again; dependencies and submission
 * keys; several changes of one row in one transaction, rows made and
 * removed in it), each shipped and applied to a copy, which must then dump
 * as the primary does.  A twin store takes the same changes under
 * SQLite's own session, whose changeset must say what the capture's says
 * (but sqlite_sequence, which the session leaves out). */
/* The same change on the primary and on its twin. */
#define TWICE(call) do { \
		for (int w_ = 0; w_ < 2; w_++) { \
			st = w_ ? twin : f->st; \
			assert_int_equal((call), 0); \
		} \
	} while (0)

static void
test_capture_random(void **state)
{
	struct fix *f = *state;
	char copydir[64], *path, key[32], ctx[80];
	const char *why, *scripts[] = { NULL, "#!/bin/sh\necho a\n", "#!/bin/sh\necho b\n" };
	char twindir[64], *twinpath;
	struct store *copy, *twin, *st;
	struct job *live[64];
	struct acct_info ai;
	int nlive = 0, nops = 0, compared = 0;
	unsigned seed = 20261124;
	sqlite3_session *sess;

	memset(&ai, 0, sizeof ai);
	strcpy(copydir, "/tmp/nowq-test-copy-XXXXXX");
	assert_non_null(mkdtemp(copydir));
	path = xasprintf("%s/nowq.db", copydir);
	assert_int_equal(store_backup(f->st, path), 0);
	assert_non_null(copy = store_open(copydir, &why));
	strcpy(twindir, "/tmp/nowq-test-twin-XXXXXX");
	assert_non_null(mkdtemp(twindir));
	twinpath = xasprintf("%s/nowq.db", twindir);
	assert_int_equal(store_backup(f->st, twinpath), 0);
	assert_non_null(twin = store_open(twindir, &why));
	store_capture(f->st, true);
	for (int t = 0; t < 150; t++) {
		int n = 1 + (int)(rand_r(&seed) % 6);
		struct shipped sh;
		void *scs;
		int sn;
		char *c1, *c2;

		assert_int_equal(store_begin(f->st), 0);
		assert_int_equal(store_begin(twin), 0);
		assert_int_equal(sqlite3session_create(store_sqlite(twin), "main", &sess), SQLITE_OK);
		assert_int_equal(sqlite3session_attach(sess, NULL), SQLITE_OK);
		for (int k = 0; k < n; k++, nops++) {
			int what = (int)(rand_r(&seed) % 9), i = nlive ? (int)(rand_r(&seed) % (unsigned)nlive) : -1;
			struct job *j;

			if (what <= 1 || i < 0) {
				if (nlive == 64)
					continue;
				j = rand_r(&seed) % 3 == 0 ? mkbinjob("bin", 1001) :
				    mkjob("alice", 1000, (int)(rand_r(&seed) % 5),
				    scripts[1 + rand_r(&seed) % 2]);
				insert(f, j);
				{
					int64_t id = j->id;
					assert_int_equal(store_job_insert(twin, j), 0);
					assert_int_equal(j->id, id);
				}
				live[nlive++] = j;
				continue;
			}
			j = live[i];
			switch (what) {
			case 2:
			case 3:
				/* What store_check holds a job to: a host while it
				 * runs, an end time once it ended. */
				j->state = (enum job_state)(rand_r(&seed) % (JS_DELETED + 1));
				free(j->host);
				j->host = j->state == JS_DISPATCHED || j->state == JS_RUNNING ||
				    rand_r(&seed) % 2 ? xstrdup("h1") : NULL;
				free(j->reason);
				j->reason = rand_r(&seed) % 2 ? xasprintf("why %u", rand_r(&seed)) : NULL;
				j->utime = rand_r(&seed) % 2 ? rand_r(&seed) / 7.0 : j->utime;
				j->end_time = JS_FINISHED(j->state) ? rand_r(&seed) % 2 ? 5 : 500 : 0;
				TWICE(store_job_update(st, j));
				break;
			case 4:
				/* The same values again: a change of nothing. */
				TWICE(store_job_update(st, j));
				break;
			case 5:
				TWICE(store_job_delete(st, j->id));
				job_free(j);
				live[i] = live[--nlive];
				break;
			case 6:
				j->exit_status = (int)(rand_r(&seed) % 3);
				TWICE(store_acct_insert(st, j, &ai));
				break;
			case 7:
				if (nlive > 1) {
					int64_t other = live[(i + 1) % nlive]->id;
					if (rand_r(&seed) % 2)
						TWICE(store_dep_add(st, j->id, other, 1));
					else
						TWICE(store_dep_remove(st, j->id, other, 1));
				}
				break;
			default:
				snprintf(key, sizeof key, "0:k%u", rand_r(&seed) % 8);
				TWICE(store_key_put(st, key, j->id, t));
				if (rand_r(&seed) % 4 == 0)
					TWICE(store_key_purge(st, t - 3));
				break;
			}
		}
		/* Now and then the purge: finished jobs go, with their scripts. */
		if (rand_r(&seed) % 10 == 0) {
			assert_true(store_jobs_purge_finished(f->st, 100) >= 0);
			assert_true(store_jobs_purge_finished(twin, 100) >= 0);
			for (int i = 0; i < nlive; i++)
				if (JS_FINISHED(live[i]->state) && live[i]->end_time < 100 &&
				    !store_job_get(f->st, live[i]->id, false)) {
					job_free(live[i]);
					live[i--] = live[--nlive];
				}
		}
		assert_int_equal(store_commit(f->st), 0);
		assert_int_equal(sqlite3session_changeset(sess, &sn, &scs), SQLITE_OK);
		sqlite3session_delete(sess);
		assert_int_equal(store_commit(twin), 0);
		if (!store_changeset(f->st, &sh.n, &sh.seq)) {
			assert_int_equal(sn, 0);
			sqlite3_free(scs);
			continue;
		}
		/* The session never saw the numbering: repl.seq is the capture's. */
		c1 = canon_changes(store_changeset(f->st, &sh.n, &sh.seq), sh.n, "sqlite_sequence");
		c2 = canon_changes(scs, sn, NULL);
		sqlite3_free(scs);
		{
			char *m = strstr(c1, "meta ");
			assert_non_null(m);
			memmove(m, strchr(m, '\n') + 1, strlen(strchr(m, '\n') + 1) + 1);
		}
		assert_string_equal(c1, c2);
		compared += c2[0] != '\0';
		free(c1);
		free(c2);
		sh.cs = xmalloc((size_t)sh.n);
		memcpy(sh.cs, store_changeset(f->st, &sh.n, &sh.seq), (size_t)sh.n);
		store_changeset_done(f->st);
		assert_int_equal(land(copy, &sh), 0);
		free(sh.cs);
		snprintf(ctx, sizeof ctx, "after transaction %d (%d changes in all)", t, nops);
		assert_same_dump(f->dir, copydir, ctx);
	}
	print_message("# %d transactions said the same as the session's, %d changes in all\n",
	    compared, nops);
	assert_true(compared > 100);
	for (int i = 0; i < nlive; i++)
		job_free(live[i]);
	store_close(copy);
	spool_rmtree(copydir);
	free(path);
	store_close(twin);
	spool_rmtree(twindir);
	free(twinpath);
}

/* The scheduler's usage walk: the running jobs' owner, queue, host, slots,
 * PE and requests (exclusive), and none of the text it would decode for
 * nothing at every pass. */
static int
usage_check(void *arg, struct job *j)
{
	int *n = arg;

	(*n)++;
	assert_string_equal(j->owner, "alice");
	assert_string_equal(j->queue, "all.q");
	assert_string_equal(j->host, "h1 h2");
	assert_string_equal(j->pe, "mpi");
	assert_int_equal(j->slots, 4);
	assert_true(j->req.exclusive);
	assert_int_equal(j->state, JS_RUNNING);
	assert_null(j->argv);
	assert_null(j->env);
	assert_null(j->cwd);
	return 0;
}

static void
test_usage_walk(void **state)
{
	struct fix *f = *state;
	struct job *j = mkbinjob("alice", 1001), *pend = mkjob("bob", 1002, 0, NULL);
	struct store_job_filter flt = { .states = 1u << JS_DISPATCHED | 1u << JS_RUNNING,
		.usage = true };
	int n = 0;

	j->pe = xstrdup("mpi");
	j->slots = 4;
	j->req.exclusive = true;
	insert(f, j);
	insert(f, pend);
	j->state = JS_RUNNING;
	j->host = xstrdup("h1 h2");
	update_and_check(f, j);
	assert_int_equal(store_jobs_foreach(f->st, &flt, usage_check, &n), 0);
	assert_int_equal(n, 1);
	job_free(j);
	job_free(pend);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fix_setup, fix_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_open_creates_schema),
		T(test_stage_rows),
		T(test_ge_fields_round_trip),
		T(test_replication),
		T(test_capture_random),
		T(test_open_refuses_future),
		T(test_open_refuses_garbage),
		T(test_migrate_v1),
		T(test_job_roundtrip),
		T(test_usage_walk),
		T(test_job_states),
		T(test_job_delete),
		T(test_ids_never_repeat),
		T(test_scripts_stored_once),
		T(test_runnable),
		T(test_runnable_dispatch_in_callback),
		T(test_runnable_needs_index),
		T(test_indexes),
		T(test_foreach_filters),
		T(test_purge_finished),
		T(test_accounting),
		T(test_migrate_v3_accounting),
		T(test_acct_queries),
		T(test_hosts),
		T(test_host_lists),
		T(test_deps),
		T(test_cron_entries),
		T(test_meta),
		T(test_txn_commit_rollback),
		T(test_check),
		T(test_corrupt_values),
		T(test_spool_write_atomic),
		T(test_spool_mkdir_rmtree),
		T(test_tasks),
		T(test_pending_walk_held_tasks),
	};

	log_init("test_store", LOG_LVL_WARN, NULL);
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
