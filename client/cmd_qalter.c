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
	"qalter [-p priority] [-h u|n] [-N name] [-l resource=value,...] [-q queue] [-w e|n]\n"
	"       job[,job]...\n",
	qalter_run,
};

static int
qalter_run(int argc, char **argv)
{
	struct msg_alter m = { .verify = true };
	json_t *missing = json_array(), *rep, *r;
	char **jobargs = xcalloc((size_t)argc + 1, sizeof *jobargs);
	int njob = 0, rc = 1;
	bool changed = false;
	size_t i;

	for (int k = 1; k < argc; k++) {
		const char *a = argv[k], *v;
		if (strcmp(a, "-help") == 0 || strcmp(a, "--help") == 0) {
			client_usage(&cmd_qalter, stdout);
			rc = 0;
			goto out;
		}
		if (a[0] != '-' || !a[1]) {
			jobargs[njob++] = argv[k];
			continue;
		}
		if (strcmp(a, "-p") && strcmp(a, "-h") && strcmp(a, "-N") && strcmp(a, "-l") &&
		    strcmp(a, "-q") && strcmp(a, "-w")) {
			client_errx("option \"%s\" is not supported by qalter in nowq", a);
			goto usage;
		}
		if (++k >= argc) {
			client_errx("option \"%s\" needs an argument", a);
			goto usage;
		}
		v = argv[k];
		changed = true;
		if (strcmp(a, "-p") == 0) {
			char *end;
			long p = strtol(v, &end, 10);
			if (!*v || *end || p < -1023 || p > 1024) {
				client_errx("invalid priority \"%s\": must be an integer from -1023 to 1024", v);
				goto usage;
			}
			m.has_prio = true;
			m.prio = (int)p;
		} else if (strcmp(a, "-h") == 0) {
			if (strcmp(v, "u") && strcmp(v, "n")) {
				client_errx("only \"-h u\" (user hold) and \"-h n\" (no hold) exist in nowq, not \"%s\"", v);
				goto usage;
			}
			m.hold = v;
		} else if (strcmp(a, "-N") == 0) {
			m.name = v;
		} else if (strcmp(a, "-q") == 0) {
			m.queue = v;
		} else if (strcmp(a, "-w") == 0) {
			if (strcmp(v, "e") && strcmp(v, "n")) {
				client_errx("-w takes e or n here, not \"%s\"", v);
				goto usage;
			}
			m.verify = strcmp(v, "e") == 0;
		} else {
			/* -l replaces the whole request, as in Grid Engine. */
			struct job_req jr = { 0 };
			char err[256];
			if (req_parse(&jr, v, err, sizeof err) < 0) {
				req_clear(&jr);
				client_errx("%s", err);
				goto usage;
			}
			json_decref(m.req);
			m.req = req_to_json(&jr);
			req_clear(&jr);
		}
	}
	if (njob == 0) {
		client_errx("no job ids given");
		goto usage;
	}
	if (!changed) {
		client_errx("no change given");
		goto usage;
	}
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
	json_decref(m.jobs);
	json_decref(m.req);
	json_decref(missing);
	free(jobargs);
	return rc;
usage:
	client_usage(&cmd_qalter, stderr);
	rc = 1;
	goto out;
}
