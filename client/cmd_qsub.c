/* cmd_qsub.c: qsub: submit a script or a command (-b y), waiting for its end with -sync y. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"
#include "client/client.h"
#include "common/msg.h"
#include "common/msg_req.h"

extern char **environ;

static int qsub_run(int argc, char **argv);

const struct cmd cmd_qsub = {
	"qsub",
	"qsub [options] [script [script_args...]]\n"
	"       qsub [options] -b y command [args...]\n"
	"options: -N name  -q queue  -o path  -e path  -i [[host]:]path,...  -j y|n  -cwd\n"
	"         -wd dir  -V  -v var[=value],...  -h  -p priority  -terse  -sync y|n  -S shell\n"
	"         -b y|n  -C prefix  -l resource=value,...  -w e|n  -a [[CC]YY]MMDDhhmm[.SS]\n"
	"         -hold_jid job,...  -hold_jid_ad job,...  -W depend=kind:id[:id...][,...]\n"
	"         -pe name slots  -n slots\n"
	"         --cron \"min hour dom mon dow\"|@daily|...  -m b|e|a|s|n  -M addr,...\n"
	"         -t task_id_range  -tc max_running_tasks  -r y|n  -ar reservation  -notify  -help\n"
	"         -hard  -soft  -P project  -A account  -ac|-sc name=value,...  -dc name,...\n"
	"         -R y|n  -js share  -binding [env|pe|set] strategy  -shell y|n\n"
	"         --stage-in path,...  --stage-out pattern,...  -W stagein=...|stageout=...\n"
	"Without a script, or with \"-\", the script is read from standard input.\n",
	qsub_run,
};

/* Standard input, bounded like a script file. */
static char *
read_stdin(size_t max, size_t *len, const char **why)
{
	size_t cap = 65536, n = 0;
	char *buf = xmalloc(cap + 1);

	for (;;) {
		ssize_t r;
		if (n == cap) {
			if (cap > max)
				break;
			cap *= 2;
			buf = xrealloc(buf, cap + 1);
		}
		r = read(0, buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			*why = strerror(errno);
			free(buf);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (n > max) {
		*why = "the script is larger than 1 MiB";
		free(buf);
		return NULL;
	}
	if (n == 0) {
		*why = "no input read from stdin";
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* Grid Engine's wording for a script it cannot read, on one line. */
static char *
read_script(const char *path, size_t *len)
{
	const char *why = NULL;
	char *s;

	if (!path || strcmp(path, "-") == 0) {
		if ((s = read_stdin(JOB_MAX_SCRIPT, len, &why)) == NULL)
			client_errx("Unable to read script file because of error: %s", why);
		return s;
	}
	if ((s = read_file(path, JOB_MAX_SCRIPT, len, &why)) == NULL) {
		if (strcmp(why, "file too large") == 0)
			why = "larger than 1 MiB";
		client_errx("Unable to read script file because of error: error opening %s: %s",
		    path, why);
	}
	return s;
}

/* Grid Engine's line for a job or task -sync y waited for (what: "7" or
 * "7.2"): an exit status of 0 on stdout, anything else on stderr, a signal
 * without a full stop, as it writes them.  Returns the job's exit status
 * for qsub's own, 1 for a signal or a job that never ran. */
static int
report_one(const char *what, bool ran, int sig, int code)
{
	const char *abbrev = sig > 0 ? sigabbrev_np(sig) : NULL;

	fflush(stdout);
	if (!ran) {
		printf("Unable to run job %s.\n", what);
		return 1;
	}
	if (sig > 0 && abbrev)
		fprintf(stderr, "Job %s exited because of signal SIG%s\n", what, abbrev);
	else if (sig > 0)
		fprintf(stderr, "Job %s exited because of signal %d\n", what, sig);
	else
		fprintf(code ? stderr : stdout, "Job %s exited with exit code %d.\n", what, code);
	return sig > 0 ? 1 : code & 0xff;
}

static int
task_end_cmp(const void *a, const void *b)
{
	const struct msg_task_row *x = a, *y = b;

	if (x->end_time != y->end_time)
		return x->end_time < y->end_time ? -1 : 1;
	return x->task < y->task ? -1 : 1;
}

/* An array's tasks, one line each in the order they ended, as Grid
 * Engine reports them while they end; qsub exits 0 when every task did,
 * else with the status of the first that failed. */
static int
report_tasks(int64_t id)
{
	json_t *rep = client_request_ok(msg_status_pack_one(id), "");
	struct msg_job_detail d;
	const json_t *tasks;
	struct msg_task_row *order;
	size_t n, i;
	int rc = 0;

	if (!rep)
		return 1;
	msg_job_detail_unpack(msg_status_reply_one(rep), &d);
	tasks = d.tasks;
	n = json_array_size(tasks);
	order = xcalloc(n + 1, sizeof *order);
	for (i = 0; i < n; i++)
		msg_task_row_unpack(json_array_get(tasks, i), &order[i]);
	qsort(order, n, sizeof *order, task_end_cmp);
	for (i = 0; i < n; i++) {
		char what[48];
		int st;
		snprintf(what, sizeof what, "%lld.%lld", (long long)id, (long long)order[i].task);
		st = report_one(what, order[i].start_time > 0, (int)order[i].signal, (int)order[i].exit_status);
		if (st != 0 && rc == 0)
			rc = st;
	}
	free(order);
	json_decref(rep);
	return rc;
}

/* What -sync y says once the job ended; returns qsub's exit status. */
static int
report_end(int64_t id, const json_t *job)
{
	struct msg_job_end e;
	char what[24];

	msg_job_end_unpack(job, &e);
	if (e.t_first > 0)
		return report_tasks(id);
	snprintf(what, sizeof what, "%lld", (long long)id);
	return report_one(what, e.start_time > 0, (int)e.signal, (int)e.exit_status);
}

/* The progress line of qsub -sync y on a terminal: the job's state from
 * its latest STATUS and how long qsub has waited. */
static void
show_progress(int64_t id, const char *state, const char *host, int64_t t0)
{
	int64_t s = (mono_ms() - t0) / 1000;

	client_progress("job %lld is %s%s%s, waited %lld:%02lld", (long long)id, state,
	    *host ? " on " : "", host, (long long)(s / 60), (long long)(s % 60));
}

/* Sends req and returns its seq; 0 with *why when the connection broke. */
static int64_t
send_req(json_t *req, const char **why)
{
	int64_t seq = client_send(req, why) < 0 ? 0 : msg_seq_of(req, 0);
	json_decref(req);
	return seq;
}

/* WAIT is idempotent, so a lost master is simply asked again.  On a
 * terminal, a STATUS every two seconds on the same connection keeps the
 * progress line current. */
static int
wait_for(int64_t id)
{
	bool warned = false, tty = isatty(STDERR_FILENO);
	int64_t t0 = mono_ms(), wseq = 0, sseq = 0, next_status = 0;
	char state[16] = "qw", host[64] = "";

	fflush(stdout);
	for (;;) {
		const char *why = NULL;
		struct msg_reply env;
		struct msg_waited end;
		json_t *rep;
		int rc;

		if (!wseq && (wseq = send_req(msg_wait_pack(&(struct msg_wait){ .id = id }), &why)) == 0)
			goto lost;
		if (tty && !sseq && mono_ms() >= next_status) {
			if ((sseq = send_req(msg_status_pack_one(id), &why)) == 0)
				goto lost;
			next_status = mono_ms() + 2000;
		}
		if (tty)
			show_progress(id, state, host, t0);
		if ((rep = client_recv(tty ? 1000 : -1, &why)) == NULL) {
			if (!why)
				continue;
			goto lost;
		}
		msg_reply_unpack(rep, &env, NULL, 0);
		if (sseq && env.seq == sseq) {
			/* A single-job STATUS answers with the whole job. */
			const json_t *job = msg_status_reply_one(rep);
			if (job) {
				struct msg_job_row r;
				msg_job_row_unpack(job, &r);
				snprintf(state, sizeof state, "%s", r.state_letters ? r.state_letters : "");
				snprintf(host, sizeof host, "%s", r.host ? r.host : "");
			}
			json_decref(rep);
			sseq = 0;
			continue;
		}
		if (env.seq != wseq) {
			json_decref(rep);
			continue;
		}
		client_progress_clear();
		if (!env.ok) {
			if (env.error && strcmp(env.error, ERR_NOENT) == 0)
				printf("No information available on job %lld's exit status.\n",
				    (long long)id);
			else
				client_errx("%s", client_reply_message(rep));
			json_decref(rep);
			return 1;
		}
		msg_waited_unpack(rep, &end);
		rc = report_end(id, end.job);
		json_decref(rep);
		return rc;
lost:
		client_progress_clear();
		if (!warned)
			client_warnx("%s; still waiting for job %lld", why, (long long)id);
		warned = true;
		wseq = sseq = 0;
		sleep(1);
	}
}

static int
qsub_run(int argc, char **argv)
{
	struct qsub_opts cl, o;
	struct qsub_env env;
	char *script = NULL, cwd[PATH_MAX], err[512];
	const char *script_path = NULL;
	size_t len = 0;
	json_t *job, *req, *rep, *deps;
	struct msg_submitted done;
	const char *name, *why = NULL;
	char key[CLIENT_KEY_LEN + 1];
	int64_t id;
	int rc = 1;

	qsub_opts_init(&cl);
	qsub_opts_init(&o);
	if (qsub_opts_parse_argv(&cl, argc - 1, argv + 1) < 0) {
		client_errx("%s", cl.err);
		goto out;
	}
	if (cl.help) {
		client_usage(&cmd_qsub, stdout);
		rc = 0;
		goto out;
	}
	/* Directives first, then the command line over them. */
	if (cl.binary != 1) {
		script_path = cl.operands ? cl.operands[0] : NULL;
		if ((script = read_script(script_path, &len)) == NULL)
			goto out;
		if (memchr(script, '\0', len)) {
			client_errx("Unable to read script file because of error: %s holds NUL "
			    "bytes; submit a program with -b y", script_path ? script_path : "STDIN");
			goto out;
		}
		if (qsub_opts_parse_script(&o, script,
		    cl.prefix ? cl.prefix : QSUB_DEFAULT_PREFIX) < 0) {
			client_errx("%s", o.err);
			goto out;
		}
	}
	if (qsub_opts_parse_argv(&o, argc - 1, argv + 1) < 0) {
		client_errx("%s", o.err);
		goto out;
	}
	if (!getcwd(cwd, sizeof cwd)) {
		client_errx("cannot tell the current directory: %s", strerror(errno));
		goto out;
	}
	env.envp = environ;
	env.cwd = cwd;
	env.host = my_hostname();
	env.user = client_user();
	if ((job = qsub_job_json(&o, script, &env, err, sizeof err)) == NULL) {
		client_errx("%s", err);
		goto out;
	}
	free(script);
	script = NULL;
	if (o.stage_in) {
		json_t *in = stage_inputs_send(o.stage_in, err, sizeof err);
		if (!in) {
			client_errx("Unable to run job: %s", err);
			json_decref(job);
			goto out;
		}
		json_object_set_new(job, "stage_in", in);
	}
	/* -w n: accept a job no registered host could run (yet). */
	if (!o.cron && client_submit_key(key, &why) < 0)
		client_die("%s", why);
	deps = o.deps ? qsub_deps_json(&o) : NULL;
	req = msg_submit_pack(&(struct msg_submit){ .job = job, .verify = o.verify != 'n', .deps = deps,
	    .cron = o.cron, .key = o.cron ? NULL : key });
	json_decref(job);
	json_decref(deps);
	if ((rep = client_request_ok(req, "Unable to run job: ")) == NULL)
		goto out;
	msg_submitted_unpack(rep, &done);
	name = done.name ? done.name : "";
	id = done.id;
	if (o.cron) {
		char when[32];
		qstat_format_time(when, sizeof when, done.next_run);
		if (o.terse)
			printf("c%lld\n", (long long)done.cron);
		else
			printf("Your cron entry c%lld (\"%s\") has been submitted; it runs next at %s\n",
			    (long long)done.cron, name, when);
		json_decref(rep);
		rc = 0;
		goto out;
	}
	if (o.t_first) {
		char tasks[64];
		snprintf(tasks, sizeof tasks, "%d-%d:%d", o.t_first, o.t_last, o.t_step);
		if (o.terse)
			printf("%lld.%s\n", (long long)id, tasks);
		else
			printf("Your job-array %lld.%s (\"%s\") has been submitted\n", (long long)id, tasks, name);
	} else if (o.terse)
		printf("%lld\n", (long long)id);
	else
		printf("Your job %lld (\"%s\") has been submitted\n", (long long)id, name);
	json_decref(rep);
	rc = o.sync == 1 ? wait_for(id) : 0;
	/* -sync y brings the outputs back into the submit directory. */
	if (o.sync == 1 && o.stage_out && stage_fetch(id, NULL, false, true, err, sizeof err) < 0) {
		client_errx("job %lld: cannot fetch its outputs: %s", (long long)id, err);
		if (rc == 0)
			rc = 1;
	}
out:
	free(script);
	qsub_opts_free(&cl);
	qsub_opts_free(&o);
	return rc;
}
