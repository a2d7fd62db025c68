/* store_stage.c: the rows of file staging: a task's outputs, and the bytes a user's jobs hold. */
#include "config.h"

#include "spool/store_int.h"

int
store_stage_out_add(struct store *st, int64_t job, int task, const char *name, int64_t size,
    const char *sha256, int64_t mode)
{
	return stmt_do(st, S_STAGE_OUT_ADD, "cannot record a staged output",
	    BINDS(BIND(job), BIND(task), BIND(name), BIND(size), BIND(sha256), BIND(mode)));
}

json_t *
store_stage_out_of(struct store *st, int64_t job)
{
	json_t *a = json_array();
	sqlite3_stmt *s;
	bool own;
	int rc;

	if (!(s = stmt_bound(st, S_STAGE_OUT_OF, &own, BINDS(BIND(job)))))
		return a;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		json_array_append_new(a, stage_file_pack(&(struct stage_file){
		    .task = sqlite3_column_int(s, 0), .name = (const char *)sqlite3_column_text(s, 1),
		    .size = sqlite3_column_int64(s, 2), .sha256 = (const char *)sqlite3_column_text(s, 3),
		    .mode = sqlite3_column_int64(s, 4) }));
	if (rc != SQLITE_DONE)
		store_fail(st, "cannot read a job's staged outputs");
	stmt_give(s, own);
	return a;
}

int64_t
store_stage_user_bytes(struct store *st, int64_t uid)
{
	sqlite3_stmt *s;
	bool own;
	int64_t n;

	if (stmt_first(st, S_STAGE_USER_BYTES, &s, &own, "cannot add up a user's staged files",
	    BINDS(BIND(uid))) != SQLITE_ROW)
		return -1;
	n = sqlite3_column_int64(s, 0);
	stmt_give(s, own);
	return n;
}

int
store_stage_uses(struct store *st, const char *sha256, int64_t job)
{
	sqlite3_stmt *s;
	bool own;
	int v;

	if (stmt_first(st, job ? S_STAGE_USES_JOB : S_STAGE_USES, &s, &own,
	    "cannot look up a staged file", BINDS(BIND(sha256), BIND(job))) != SQLITE_ROW)
		return -1;
	v = sqlite3_column_int(s, 0) != 0;
	stmt_give(s, own);
	return v;
}
