/* cmd_qwait.c: qwait: wait on one connection for the named jobs, printing each end. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"
#include "client/client.h"
#include "common/msg.h"
#include "common/msg_req.h"

static int qwait_run(int argc, char **argv);

const struct cmd cmd_qwait = {
	"qwait",
	"qwait [--json] job[,job]...\n"
	"Waits until every named job has ended; prints each job's state and exit\n"
	"status as it ends.  Exit status 0 when all ended with exit status 0.\n",
	qwait_run,
};

/* One job waited for: the request that asks for it now, and whether its
 * end has been printed. */
struct waited {
	int64_t id;
	int64_t seq;     /* of the WAIT or ACCT in flight; 0 between connections */
	bool    acct;    /* the job was purged: its end comes from the accounting */
	bool    ended;
	bool    fetch;   /* it has staged outputs to bring back */
};

/* Does the ended job have --stage-out patterns? */
static bool
qwait_stages(const json_t *job)
{
	const char *why = NULL;
	struct job *j = job ? job_from_json(job, &why) : NULL;
	bool yes = j && j->stage_out;

	job_free(j);
	return yes;
}

/* Each ended job on one line: a person's sentence, or a JSON object per line
 * (the schema of doc/json.md), so a tool can read the ends as they come. */
static int
report(const struct waited *w, const char *state, const char *name, int64_t exit_status,
    int64_t sig, const char *reason, bool as_json)
{
	bool ok = strcmp(state, "done") == 0 && exit_status == 0 && sig == 0;

	client_progress_clear();
	if (as_json) {
		json_t *o = json_pack("{s:i, s:I, s:s, s:I, s:I, s:b}", "schema", CLIENT_JSON_SCHEMA,
		    "id", (json_int_t)w->id, "state", state, "exit_status", (json_int_t)exit_status,
		    "signal", (json_int_t)sig, "from_accounting", w->acct);
		if (name)
			json_object_set_new(o, "name", json_string(name));
		if (reason)
			json_object_set_new(o, "reason", json_string(reason));
		json_dumpf(o, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(o);
	} else if (sig > 0 && sigabbrev_np((int)sig))
		printf("Job %lld (\"%s\") %s: signal SIG%s\n", (long long)w->id, name ? name : "",
		    state, sigabbrev_np((int)sig));
	else
		printf("Job %lld (\"%s\") %s: exit status %lld%s%s\n", (long long)w->id,
		    name ? name : "", state, (long long)exit_status, reason ? "; " : "",
		    reason ? reason : "");
	/* A tool reading the pipe learns of each end at once. */
	fflush(stdout);
	return ok ? 0 : 1;
}

/* The WAIT reply of a job still in the job table. */
static int
report_job(const struct waited *w, const json_t *job, bool as_json)
{
	struct msg_job_end e;

	msg_job_end_unpack(job, &e);
	return report(w, e.state ? e.state : "failed", e.name, e.exit_status, e.signal, e.reason, as_json);
}

/* A purged job: its latest attempt in the accounting. */
static int
report_acct(const struct waited *w, const json_t *rows, bool as_json)
{
	struct msg_acct_row r;

	msg_acct_row_unpack(json_array_get(rows, json_array_size(rows) - 1), &r);
	return report(w, r.failed || r.exit_status ? "failed" : "done", r.name, r.exit_status, r.signal,
	    r.reason, as_json);
}

/* Sends the request each job still needs; -1 with *why when the connection
 * breaks. */
static int
send_waits(struct waited *ws, size_t n, const char **why)
{
	for (size_t i = 0; i < n; i++) {
		json_t *req;
		if (ws[i].ended || ws[i].seq)
			continue;
		req = ws[i].acct ? msg_acct_pack(&(struct msg_acct){ .id = ws[i].id }) :
		    msg_wait_pack(&(struct msg_wait){ .id = ws[i].id });
		if (client_send(req, why) < 0) {
			json_decref(req);
			return -1;
		}
		ws[i].seq = msg_seq_of(req, 0);
		json_decref(req);
	}
	return 0;
}

static int
qwait_run(int argc, char **argv)
{
	json_t *missing = json_array(), *ids, *v;
	char **lists = xcalloc((size_t)argc + 1, sizeof *lists);
	struct waited *ws;
	size_t n, left, i;
	int nlists = 0, rc = 0;
	bool as_json = false, warned = false, answered = false;

	for (int k = 1; k < argc; k++) {
		const char *a = argv[k];
		if (strcmp(a, "-help") == 0 || strcmp(a, "--help") == 0) {
			client_usage(&cmd_qwait, stdout);
			free(lists);
			json_decref(missing);
			return 0;
		} else if (strcmp(a, "--json") == 0 || strcmp(a, "-json") == 0)
			as_json = true;
		else if (a[0] == '-') {
			client_errx("unknown option \"%s\"", a);
			goto usage;
		} else
			lists[nlists++] = argv[k];
	}
	if (nlists == 0) {
		client_errx("no job ids given");
		goto usage;
	}
	ids = client_resolve_jobs(lists, nlists, "prz", missing);
	free(lists);
	json_array_foreach(missing, i, v) {
		client_errx("job \"%s\" does not exist", json_string_value(v));
		rc = 1;
	}
	json_decref(missing);
	n = left = json_array_size(ids);
	ws = xcalloc(n + 1, sizeof *ws);
	json_array_foreach(ids, i, v)
		ws[i].id = json_integer_value(v);
	json_decref(ids);

	while (left > 0) {
		const char *why = NULL;
		struct msg_reply env;
		struct msg_waited end;
		struct msg_acct_reply acct;
		json_t *rep;

		if (send_waits(ws, n, &why) < 0 ||
		    (client_progress("waiting for %zu of %zu jobs", left, n),
		    (rep = client_recv(-1, &why)) == NULL)) {
			/* WAIT is idempotent: after a lost master, ask again.
			 * A master never reached is an error, not a wait. */
			if (!answered)
				client_die("%s", why);
			if (!warned)
				client_warnx("%s; still waiting", why);
			warned = true;
			for (i = 0; i < n; i++)
				ws[i].seq = 0;
			sleep(1);
			continue;
		}
		answered = true;
		msg_reply_unpack(rep, &env, NULL, 0);
		for (i = 0; i < n; i++)
			if (ws[i].seq && ws[i].seq == env.seq)
				break;
		if (i == n) {
			json_decref(rep);
			continue;
		}
		ws[i].seq = 0;
		msg_waited_unpack(rep, &end);
		msg_acct_reply_unpack(rep, &acct);
		if (env.ok && !ws[i].acct) {
			rc |= report_job(&ws[i], end.job, as_json);
			ws[i].ended = true;
			ws[i].fetch = qwait_stages(end.job);
		} else if (env.ok && json_array_size(acct.rows)) {
			rc |= report_acct(&ws[i], acct.rows, as_json);
			ws[i].ended = true;
		} else if (!ws[i].acct && env.error && strcmp(env.error, ERR_NOENT) == 0) {
			/* Finished long enough ago to be purged from the jobs. */
			ws[i].acct = true;
		} else {
			client_progress_clear();
			if (client_reply_ok(rep))
				client_errx("job \"%lld\" does not exist", (long long)ws[i].id);
			else
				client_errx("job %lld: %s", (long long)ws[i].id, client_reply_message(rep));
			ws[i].ended = true;
			rc = 1;
		}
		if (ws[i].ended)
			left--;
		json_decref(rep);
	}
	client_progress_clear();
	/* Then the outputs, into each job's submit directory: one request
	 * at a time, so no WAIT's reply could be taken for another's. */
	for (i = 0; i < n; i++) {
		char err[512];
		if (ws[i].fetch && stage_fetch(ws[i].id, NULL, true, true, err, sizeof err) < 0) {
			client_errx("job %lld: cannot fetch its outputs: %s", (long long)ws[i].id, err);
			rc = 1;
		}
	}
	free(ws);
	return rc;
usage:
	client_usage(&cmd_qwait, stderr);
	free(lists);
	json_decref(missing);
	return 1;
}
