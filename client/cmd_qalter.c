/* cmd_qalter.c: qalter: change priority, hold, name, resources or queue of pending jobs. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "client/client.h"
#include "common/msg_req.h"

static int qalter_run(int argc, char **argv);

const struct cmd cmd_qalter = {
	"qalter",
	"qalter [-p priority] [-h u|o|s|n|U|O|S...] [-N name] [-hard|-soft] [-l resource=value,...]\n"
	"       [-q queue] [-P project] [-A account] [-ac|-dc|-sc context] [-R y|n] [-js share]\n"
	"       [-i [[host]:]path,...] [-w e|n] job[,job]...\n",
	qalter_run,
};

/* -l under -hard (the default) or -soft: replaces that whole request, as in
 * Grid Engine. */
static int
qalter_req(json_t **dst, const char *v)
{
	struct job_req jr = { 0 };
	char err[256];

	if (req_parse(&jr, v, err, sizeof err) < 0) {
		req_clear(&jr);
		client_errx("%s", err);
		return -1;
	}
	json_decref(*dst);
	*dst = req_to_json(&jr);
	req_clear(&jr);
	return 0;
}

static int
qalter_yn(const char *a, const char *v)
{
	if (strcmp(v, "y") == 0 || strcmp(v, "yes") == 0)
		return 1;
	if (strcmp(v, "n") == 0 || strcmp(v, "no") == 0)
		return 0;
	client_errx("%s wants y or n, not \"%s\"", a, v);
	return -1;
}

/* One option a with its value v applied to m; -1 after saying why not. */
static int
qalter_opt(struct msg_alter *m, const char *a, const char *v, bool soft)
{
	char *end;
	long p;

	if (strcmp(a, "-p") == 0) {
		p = strtol(v, &end, 10);
		if (!*v || *end || p < -1023 || p > 1024) {
			client_errx("invalid priority \"%s\": must be an integer from -1023 to 1024", v);
			return -1;
		}
		m->has_prio = true;
		m->prio = (int)p;
	} else if (strcmp(a, "-h") == 0) {
		if (!*v || strspn(v, "uosnUOS") != strlen(v)) {
			client_errx("-h wants letters of u, o, s, n, U, O, S, not \"%s\"", v);
			return -1;
		}
		m->hold = v;
	} else if (strcmp(a, "-N") == 0) {
		m->name = v;
	} else if (strcmp(a, "-i") == 0) {
		if (!*v) {
			client_errx("-i needs a path");
			return -1;
		}
		m->in = v;
	} else if (strcmp(a, "-q") == 0) {
		m->queue = v;
	} else if (strcmp(a, "-P") == 0 || strcmp(a, "-A") == 0) {
		*(a[1] == 'P' ? &m->project : &m->account) = v;
	} else if (strcmp(a, "-R") == 0) {
		return (m->reserve = qalter_yn(a, v)) < 0 ? -1 : 0;
	} else if (strcmp(a, "-js") == 0) {
		p = strtol(v, &end, 10);
		if (!*v || *end || p < 0 || p > INT32_MAX) {
			client_errx("-js wants a job share of 0 or more, not \"%s\"", v);
			return -1;
		}
		m->js = (int)p;
	} else if (strcmp(a, "-ac") == 0 || strcmp(a, "-dc") == 0 || strcmp(a, "-sc") == 0) {
		char **probe = NULL;
		const char *why;
		if (job_context_apply(&probe, a[1], v, &why) < 0) {
			client_errx("%s", why);
			return -1;
		}
		strv_free(probe);
		if (!m->context)
			m->context = json_array();
		json_array_append_new(m->context, json_sprintf("%c%s", a[1], v));
	} else if (strcmp(a, "-w") == 0) {
		if (strcmp(v, "e") && strcmp(v, "n")) {
			client_errx("-w takes e or n here, not \"%s\"", v);
			return -1;
		}
		m->verify = strcmp(v, "e") == 0;
	} else
		return qalter_req(soft ? &m->soft : &m->req, v);
	return 0;
}

static int
qalter_run(int argc, char **argv)
{
	static const char *const with_arg[] = { "-p", "-h", "-N", "-l", "-q", "-w", "-P", "-A",
		"-R", "-js", "-ac", "-dc", "-sc", "-i", NULL };
	struct msg_alter m = { .verify = true, .reserve = -1, .js = -1 };
	struct job_req asked = { 0 };
	const char *why;
	json_t *missing = json_array(), *rep, *r;
	char **jobargs = xcalloc((size_t)argc + 1, sizeof *jobargs);
	int njob = 0, rc = 1;
	bool changed = false, soft = false;
	size_t i;

	for (int k = 1; k < argc; k++) {
		const char *a = argv[k];
		size_t w;
		if (strcmp(a, "-help") == 0 || strcmp(a, "--help") == 0) {
			client_usage(&cmd_qalter, stdout);
			rc = 0;
			goto out;
		}
		if (a[0] != '-' || !a[1]) {
			jobargs[njob++] = argv[k];
			continue;
		}
		if (strcmp(a, "-hard") == 0 || strcmp(a, "-soft") == 0) {
			soft = a[1] == 's';
			continue;
		}
		for (w = 0; with_arg[w] && strcmp(with_arg[w], a) != 0; w++)
			;
		if (!with_arg[w]) {
			client_errx(CLIENT_UNSUPPORTED, a);
			goto usage;
		}
		if (++k >= argc) {
			client_errx("option \"%s\" needs an argument", a);
			goto usage;
		}
		changed = true;
		if (qalter_opt(&m, a, argv[k], soft) < 0)
			goto usage;
	}
	if (njob == 0) {
		client_errx("no job ids given");
		goto usage;
	}
	if (!changed) {
		client_errx("no change given");
		goto usage;
	}
	/* -l q=QUEUE moves the job when -q does not, as qsub takes it. */
	if (!m.queue && m.req && req_from_json(&asked, m.req, &why) == 0)
		m.queue = asked.qname;
	m.jobs = client_resolve_jobs(jobargs, njob, "pr", missing);
	json_array_foreach(missing, i, r)
		printf("denied: job \"%s\" does not exist\n", json_string_value(r));
	if (json_array_size(m.jobs) == 0)
		goto out;
	rep = client_request_ok(msg_alter_pack(&m), "");
	if (!rep)
		goto out;
	rc = json_array_size(missing) ? 1 : 0;
	rc |= client_print_results(rep);
	json_decref(rep);
out:
	req_clear(&asked);
	json_decref(m.jobs);
	json_decref(m.req);
	json_decref(m.soft);
	json_decref(m.context);
	json_decref(missing);
	free(jobargs);
	return rc;
usage:
	client_usage(&cmd_qalter, stderr);
	rc = 1;
	goto out;
}
