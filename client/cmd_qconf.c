/* cmd_qconf.c: qconf: show the queues and parallel environments as configured and make the master re-read qmaster.conf. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "client/client.h"

static int qconf_run(int argc, char **argv);

const struct cmd cmd_qconf = {
	"qconf",
	"qconf -sql | -sq queue[,queue]... | -spl | -sp pe_name | -reload\n",
	qconf_run,
};

static int
qconf_list(const char *what)
{
	json_t *rep = client_request_ok(json_pack("{s:s, s:s}", "type", "CONF", "op", "list"), "");
	json_t *v;
	size_t i;

	if (!rep)
		return 1;
	json_array_foreach(json_object_get(rep, what), i, v)
		if (json_is_string(v))
			printf("%s\n", json_string_value(v));
	json_decref(rep);
	return 0;
}

static int
qconf_show(const char *list)
{
	char *names = xstrdup(list), *save = NULL, *q;
	int rc = 0;

	for (q = strtok_r(names, ",", &save); q; q = strtok_r(NULL, ",", &save)) {
		json_t *rep = client_request(json_pack("{s:s, s:s, s:s}", "type", "CONF", "op", "show",
		    "queue", q));
		if (!jbool(rep, "ok", false)) {
			/* Grid Engine's words for a queue it does not know. */
			fprintf(stderr, "%s\n", client_reply_message(rep));
			rc = 1;
		} else
			fputs(jstr(rep, "text") ? jstr(rep, "text") : "", stdout);
		json_decref(rep);
	}
	free(names);
	return rc;
}

static int
qconf_show_pe(const char *name)
{
	json_t *rep = client_request(json_pack("{s:s, s:s, s:s}", "type", "CONF", "op", "show", "pe", name));
	int rc = 0;

	if (!jbool(rep, "ok", false)) {
		fprintf(stderr, "%s\n", client_reply_message(rep));
		rc = 1;
	} else
		fputs(jstr(rep, "text") ? jstr(rep, "text") : "", stdout);
	json_decref(rep);
	return rc;
}

static int
qconf_reload(void)
{
	json_t *rep = client_request_ok(json_pack("{s:s, s:s}", "type", "CONF", "op", "reload"), "");

	if (!rep)
		return 1;
	printf("%s\n", client_reply_message(rep));
	json_decref(rep);
	return 0;
}

static int
qconf_run(int argc, char **argv)
{
	if (argc < 2) {
		client_errx("no option given");
		client_usage(&cmd_qconf, stderr);
		return 1;
	}
	if (strcmp(argv[1], "-help") == 0 || strcmp(argv[1], "--help") == 0) {
		client_usage(&cmd_qconf, stdout);
		return 0;
	}
	if (strcmp(argv[1], "-sql") == 0 && argc == 2)
		return qconf_list("queues");
	if (strcmp(argv[1], "-spl") == 0 && argc == 2)
		return qconf_list("pes");
	if (strcmp(argv[1], "-sp") == 0 && argc == 3)
		return qconf_show_pe(argv[2]);
	if (strcmp(argv[1], "-sq") == 0 && argc == 3)
		return qconf_show(argv[2]);
	if (strcmp(argv[1], "-reload") == 0 && argc == 2)
		return qconf_reload();
	if (strcmp(argv[1], "-sql") == 0 || strcmp(argv[1], "-sq") == 0 || strcmp(argv[1], "-reload") == 0 ||
	    strcmp(argv[1], "-spl") == 0 || strcmp(argv[1], "-sp") == 0) {
		client_errx("wrong arguments for \"%s\"", argv[1]);
		client_usage(&cmd_qconf, stderr);
		return 1;
	}
	if (argv[1][0] == '-') {
		/* Queues live in qmaster.conf: edit it and run qconf -reload. */
		client_errx("option \"%s\" is not supported by nowq (queues are configured in "
		    "qmaster.conf; see qconf(1))", argv[1]);
		return 1;
	}
	client_errx("invalid option argument \"%s\"", argv[1]);
	client_usage(&cmd_qconf, stderr);
	return 1;
}
