/* cmd_qselect.c: qselect: the queue instances (QUEUE@HOST) that match a queue list, states and resources. */
#include "config.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "client/client.h"
#include "common/msg_req.h"

static int qselect_run(int argc, char **argv);

const struct cmd cmd_qselect = {
	"qselect",
	"qselect [-q queue[,queue]...] [-qs states] [-l arch=ARCH|hostname=HOST[,...]]\n",
	qselect_run,
};

/* What selects an instance; every part given must hold. */
struct qselect_want {
	char **queues;       /* -q: patterns of QUEUE, QUEUE@HOST */
	const char *states;  /* -qs: any of these letters */
	char **arch, **host; /* -l arch=, hostname= */
};

static bool
any_match(char **pats, const char *s)
{
	if (!pats)
		return true;
	for (; *pats; pats++)
		if (fnmatch(*pats, s, 0) == 0)
			return true;
	return false;
}

static bool
selected(const struct qselect_want *w, const struct qstat_qinst *qi)
{
	char name[512];
	const char *arch = qi->arch ? qi->arch : "";

	snprintf(name, sizeof name, "%s@%s", qi->queue, qi->host);
	if (w->queues && !any_match(w->queues, qi->queue) && !any_match(w->queues, name))
		return false;
	if (w->states && !strpbrk(qi->states, w->states))
		return false;
	return any_match(w->arch, arch) && any_match(w->host, qi->host);
}

/* -l: the attributes qselect can match here; one line for any other. */
static int
parse_resources(struct qselect_want *w, const char *list)
{
	char *copy = xstrdup(list), *save = NULL;
	int rc = 0;

	for (char *r = strtok_r(copy, ",", &save); r && rc == 0; r = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(r, '=');

		if (eq && strncmp(r, "arch=", 5) == 0)
			client_add_words(&w->arch, eq + 1);
		else if (eq && (strncmp(r, "hostname=", 9) == 0 || strncmp(r, "h=", 2) == 0))
			client_add_words(&w->host, eq + 1);
		else {
			client_errx("-l %s is not supported by nowq (qselect matches arch= and hostname=)", r);
			rc = -1;
		}
	}
	free(copy);
	return rc;
}

static int
qselect_run(int argc, char **argv)
{
	struct qselect_want w = { 0 };
	struct qstat_qinsts all = { 0 };
	struct msg_hosts_reply hr;
	json_t *rep = NULL;
	size_t shown = 0;
	int rc = 1;

	for (int k = 1; k < argc; k++) {
		const char *a = argv[k];

		if (strcmp(a, "-help") == 0 || strcmp(a, "--help") == 0) {
			client_usage(&cmd_qselect, stdout);
			rc = 0;
			goto out;
		}
		if (strcmp(a, "-pe") == 0 || strcmp(a, "-U") == 0) {
			client_errx("option \"%s\" is not supported by nowq", a);
			goto usage;
		}
		if (strcmp(a, "-q") != 0 && strcmp(a, "-qs") != 0 && strcmp(a, "-l") != 0) {
			client_errx(CLIENT_UNSUPPORTED, a);
			goto usage;
		}
		if (++k >= argc) {
			client_errx("option \"%s\" needs an argument", a);
			goto usage;
		}
		if (strcmp(a, "-q") == 0)
			client_add_words(&w.queues, argv[k]);
		else if (strcmp(a, "-qs") == 0)
			w.states = argv[k];
		else if (parse_resources(&w, argv[k]) < 0)
			goto usage;
	}
	if ((rep = client_request_ok(msg_hosts_pack(&(struct msg_hosts){ 0 }), "")) == NULL)
		goto out;
	msg_hosts_reply_unpack(rep, &hr);
	qstat_qinsts_load(&all, hr.hosts);
	for (size_t i = 0; i < all.n; i++)
		if (selected(&w, &all.qi[i])) {
			printf("%s@%s\n", all.qi[i].queue, all.qi[i].host);
			shown++;
		}
	/* Grid Engine exits 1 when no queue instance matches. */
	rc = shown > 0 ? 0 : 1;
	goto out;
usage:
	client_usage(&cmd_qselect, stderr);
out:
	qstat_qinsts_free(&all);
	json_decref(rep);
	strv_free(w.queues);
	strv_free(w.arch);
	strv_free(w.host);
	return rc;
}
