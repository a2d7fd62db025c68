/* cmd_qmod.c: qmod: disable and enable queues and hosts, suspend and resume jobs.
 *
 * It also clears a job's error state (-cj). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "client/client.h"
#include "common/msg_req.h"

static int qmod_run(int argc, char **argv);

const struct cmd cmd_qmod = {
	"qmod",
	"qmod -d|-e queue|host[,...]...\n"
	"     -s|-sj|-us|-usj job[.task][,job]... | -u user[,user]...\n"
	"     -cj job[,job]... | -u user[,user]...\n",
	qmod_run,
};

/* Grid Engine's action options; -sj and -usj name jobs explicitly, -s and
 * -us take jobs here too, since nowq suspends no queues. */
static const struct {
	const char *opt;
	const char *type;
	bool        jobs;
} qmod_actions[] = {
	{ "-d",   "DISABLE",   false },
	{ "-e",   "ENABLE",    false },
	{ "-s",   "SUSPEND",   true },
	{ "-sj",  "SUSPEND",   true },
	{ "-us",  "UNSUSPEND", true },
	{ "-usj", "UNSUSPEND", true },
	{ "-cj",  "CLEAR",     true },
};

static int
qmod_targets(const char *type, int argc, char **argv)
{
	json_t *targets = json_array(), *req, *rep;
	int rc;

	for (int k = 0; k < argc; k++) {
		char *copy = xstrdup(argv[k]), *save = NULL;
		if (argv[k][0] == '-') {
			client_errx(CLIENT_UNSUPPORTED, argv[k]);
			free(copy);
			json_decref(targets);
			client_usage(&cmd_qmod, stderr);
			return 1;
		}
		for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save))
			json_array_append_new(targets, json_string(w));
		free(copy);
	}
	if (json_array_size(targets) == 0) {
		json_decref(targets);
		client_errx("no queue or host given");
		client_usage(&cmd_qmod, stderr);
		return 1;
	}
	req = msg_flags_pack(&(struct msg_flags){ .type = msg_type_lookup(type), .targets = targets });
	json_decref(targets);
	if ((rep = client_request_ok(req, "")) == NULL)
		return 1;
	rc = client_print_results(rep);
	json_decref(rep);
	return rc;
}

static int
qmod_run(int argc, char **argv)
{
	char **sub;
	int rc;

	if (argc > 1 && (strcmp(argv[1], "-help") == 0 || strcmp(argv[1], "--help") == 0)) {
		client_usage(&cmd_qmod, stdout);
		return 0;
	}
	for (size_t i = 0; argc > 1 && i < sizeof qmod_actions / sizeof qmod_actions[0]; i++) {
		if (strcmp(argv[1], qmod_actions[i].opt) != 0)
			continue;
		if (!qmod_actions[i].jobs)
			return qmod_targets(qmod_actions[i].type, argc - 2, argv + 2);
		/* The job forms share qdel's and qhold's walk: ids, names, -u. */
		sub = xcalloc((size_t)argc, sizeof *sub);
		sub[0] = argv[0];
		for (int k = 2; k < argc; k++)
			sub[k - 1] = argv[k];
		rc = client_job_op(&cmd_qmod, qmod_actions[i].type, argc - 1, sub);
		free(sub);
		return rc;
	}
	if (argc > 1)
		client_errx(CLIENT_UNSUPPORTED, argv[1]);
	else
		client_errx("no action given");
	client_usage(&cmd_qmod, stderr);
	return 1;
}
