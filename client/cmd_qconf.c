/* cmd_qconf.c: qconf: show and manage the cluster's configuration and its masters.
 *
 * It shows the queues and parallel environments as configured, makes the
 * master re-read qmaster.conf, manages host aliases, users and owners, shows
 * the masters and forces a standby's takeover; qconf_show.c has Grid
 * Engine's other read-only views. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/common.h"
#include "common/msg.h"
#include "client/client.h"
#include "common/msg_req.h"

static int qconf_run(int argc, char **argv);

const struct cmd cmd_qconf = {
	"qconf",
	"qconf -sql | -sq queue[,queue]... | -spl | -sp pe_name | -sc | -reload | -smasters [--json] | -takeover\n"
	"      -sm | -so | -sel | -sh | -ss | -sconf [global] | -shgrpl | -shgrp @name | -sul | -su name\n"
	"      -sprjl | -sprj name\n"
	"      -aalias NAME HOSTEXPR | -dalias NAME | -salias [NAME] | -sexpr HOSTEXPR\n"
	"      -mhost HOST [users=U1,U2...] [owners=U1,U2...] | -se HOST\n",
	qconf_run,
};

/* -sql, -spl: the queues, or the parallel environments. */
static int
qconf_list(bool pes)
{
	json_t *rep = client_request_ok(msg_conf_pack(&(struct msg_conf){ .op = "list" }), "");
	struct msg_conf_reply cr;
	json_t *v;
	size_t i;

	if (!rep)
		return 1;
	msg_conf_reply_unpack(rep, &cr);
	json_array_foreach(pes ? cr.pes : cr.queues, i, v)
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
		json_t *rep = client_request(msg_conf_pack(&(struct msg_conf){ .op = "show", .queue = q }));
		if (!client_reply_ok(rep)) {
			/* Grid Engine's words for a queue it does not know. */
			fprintf(stderr, "%s\n", client_reply_message(rep));
			rc = 1;
		} else
			qconf_print_text(rep);
		json_decref(rep);
	}
	free(names);
	return rc;
}

static int
qconf_show_pe(const char *name)
{
	json_t *rep = client_request(msg_conf_pack(&(struct msg_conf){ .op = "show", .pe = name }));
	int rc = 0;

	if (!client_reply_ok(rep)) {
		fprintf(stderr, "%s\n", client_reply_message(rep));
		rc = 1;
	} else
		qconf_print_text(rep);
	json_decref(rep);
	return rc;
}

static int
qconf_reload(void)
{
	json_t *rep = client_request_ok(msg_conf_pack(&(struct msg_conf){ .op = "reload" }), "");

	if (!rep)
		return 1;
	printf("%s\n", client_reply_message(rep));
	json_decref(rep);
	return 0;
}

/* -smasters: the masters, as the first one that answers sees them (Grid
 * Engine's -sm is its managers). */
static int
qconf_masters(bool as_json)
{
	struct msg_masters_reply mr;
	json_t *rep, *m;
	size_t i;

	client_any_master = true;
	if (!(rep = client_request_ok(msg_masters_pack(&(struct msg_bare){ 0 }), "")))
		return 1;
	msg_masters_reply_unpack(rep, &mr);
	if (as_json) {
		/* One versioned document, as every --json (doc/json.md). */
		json_t *doc = json_pack("{s:i, s:O?}", "schema", 1, "masters", mr.masters);
		char *t = json_dumps(doc, JSON_INDENT(2));
		json_decref(doc);
		printf("%s\n", t);
		free(t);
		json_decref(rep);
		return 0;
	}
	printf("%-24s %-12s %6s %10s %6s %-20s %s\n", "master", "role", "epoch", "seq", "lag", "since", "state");
	json_array_foreach(mr.masters, i, m) {
		char since[32] = "-", epoch[24] = "-", seq[24] = "-", lag[24] = "-";
		struct msg_master_row r;

		msg_master_row_unpack(m, &r);
		if (r.since > 0) {
			time_t tt = (time_t)(r.since / 1000);
			strftime(since, sizeof since, "%Y-%m-%d %H:%M:%S", localtime(&tt));
		}
		if (r.has_epoch)
			snprintf(epoch, sizeof epoch, "%lld", (long long)r.epoch);
		if (r.has_seq)
			snprintf(seq, sizeof seq, "%lld", (long long)r.seq);
		if (r.has_lag)
			snprintf(lag, sizeof lag, "%lld", (long long)r.lag);
		printf("%-24s %-12s %6s %10s %6s %-20s %s%s\n", r.name ? r.name : "?", r.role ? r.role : "?",
		    epoch, seq, lag, since, r.state ? r.state : r.in_sync ? "in sync" : "",
		    r.self ? " (answered)" : "");
	}
	json_decref(rep);
	return 0;
}

static void
print_list(const char *label, const json_t *a)
{
	size_t i;
	json_t *v;
	printf("%-10s", label);
	if (json_array_size(a) == 0)
		printf(" NONE");
	json_array_foreach(a, i, v)
		printf("%s%s", i ? "," : " ", json_string_value(v));
	printf("\n");
}

/* ALIAS requests; a refusal is printed and gives NULL. */
static json_t *
alias_call(json_t *req)
{
	return client_request_ok(req, "");
}

static int
qconf_alias(int argc, char **argv)
{
	const char *opt = argv[1];
	struct msg_alias_reply ar;
	json_t *rep, *v;
	size_t i;

	if (strcmp(opt, "-aalias") == 0 && argc == 4)
		rep = alias_call(msg_alias_pack(&(struct msg_alias){ .op = "add", .name = argv[2],
		    .expr = argv[3] }));
	else if (strcmp(opt, "-dalias") == 0 && argc == 3)
		rep = alias_call(msg_alias_pack(&(struct msg_alias){ .op = "delete", .name = argv[2] }));
	else if (strcmp(opt, "-salias") == 0 && argc <= 3)
		rep = alias_call(msg_alias_pack(&(struct msg_alias){ .op = "show",
		    .name = argc == 3 ? argv[2] : NULL }));
	else if (strcmp(opt, "-sexpr") == 0 && argc == 3)
		rep = alias_call(msg_alias_pack(&(struct msg_alias){ .op = "expr", .expr = argv[2] }));
	else if (strcmp(opt, "-se") == 0 && argc == 3)
		rep = alias_call(msg_alias_pack(&(struct msg_alias){ .op = "shost", .host = argv[2] }));
	else if (strcmp(opt, "-mhost") == 0 && argc >= 4) {
		struct msg_alias m = { .op = "mhost", .host = argv[2] };
		for (int k = 3; k < argc; k++) {
			const char *eq = strchr(argv[k], '=');
			json_t **list = argv[k][0] == 'u' ? &m.users : &m.owners;
			if (!eq || (strncmp(argv[k], "users=", 6) != 0 && strncmp(argv[k], "owners=", 7) != 0)) {
				client_errx("-mhost takes users=LIST and owners=LIST, not \"%s\"", argv[k]);
				json_decref(m.users);
				json_decref(m.owners);
				return 1;
			}
			/* The last users= (owners=) counts. */
			json_decref(*list);
			*list = json_array();
			if (strcmp(eq + 1, "NONE") != 0)
				client_add_users(*list, eq + 1);
		}
		rep = alias_call(msg_alias_pack(&m));
		json_decref(m.users);
		json_decref(m.owners);
	} else {
		client_errx("wrong arguments for \"%s\"", opt);
		client_usage(&cmd_qconf, stderr);
		return 1;
	}
	if (!rep)
		return 1;
	msg_alias_reply_unpack(rep, &ar);
	if (strcmp(opt, "-aalias") == 0 || strcmp(opt, "-sexpr") == 0)
		json_array_foreach(ar.hosts, i, v)
			printf("%s\n", json_string_value(v));
	else if (strcmp(opt, "-salias") == 0)
		json_array_foreach(ar.aliases, i, v) {
			struct msg_alias_row a;
			msg_alias_row_unpack(v, &a);
			printf("%s", a.name);
			print_list("", a.hosts);
		}
	else if (strcmp(opt, "-se") == 0) {
		struct msg_host_lists h;

		msg_host_lists_unpack(ar.host, &h);
		printf("hostname   %s\n", h.name);
		print_list("aliases", h.aliases);
		print_list("users", h.users);
		print_list("owners", h.owners);
		if (h.reserved.has) {
			char when[32];
			qstat_format_time(when, sizeof when, h.reserved.end);
			printf("reserved   %s by %s until %s\n", h.reserved.name, h.reserved.owner, when);
		}
	}
	json_decref(rep);
	return 0;
}

/* -takeover: the standby becomes primary now, without votes. */
static int
qconf_takeover(void)
{
	struct msg_takeover_reply tr;
	json_t *rep;

	client_any_master = true;
	if (!(rep = client_request_ok(msg_takeover_pack(&(struct msg_bare){ 0 }),
	    "cannot take over: ")))
		return 1;
	msg_takeover_reply_unpack(rep, &tr);
	printf("standby is now primary (epoch %lld): %s\n", (long long)tr.epoch,
	    client_reply_message(rep));
	json_decref(rep);
	return 0;
}

static int
qconf_run(int argc, char **argv)
{
	int rc;

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
		return qconf_list(false);
	if (strcmp(argv[1], "-sc") == 0 && argc == 2) {
		complex_print(stdout);
		return 0;
	}
	if (strcmp(argv[1], "-spl") == 0 && argc == 2)
		return qconf_list(true);
	if (strcmp(argv[1], "-sp") == 0 && argc == 3)
		return qconf_show_pe(argv[2]);
	if (strcmp(argv[1], "-sq") == 0 && argc == 3)
		return qconf_show(argv[2]);
	if (strcmp(argv[1], "-reload") == 0 && argc == 2)
		return qconf_reload();
	if (strcmp(argv[1], "-smasters") == 0 && (argc == 2 || (argc == 3 && strcmp(argv[2], "--json") == 0)))
		return qconf_masters(argc == 3);
	if ((rc = qconf_show_view(argc, argv)) >= 0)
		return rc;
	if (strcmp(argv[1], "-takeover") == 0 && argc == 2)
		return qconf_takeover();
	if (strcmp(argv[1], "-aalias") == 0 || strcmp(argv[1], "-dalias") == 0 ||
	    strcmp(argv[1], "-salias") == 0 || strcmp(argv[1], "-sexpr") == 0 ||
	    strcmp(argv[1], "-mhost") == 0 || strcmp(argv[1], "-se") == 0)
		return qconf_alias(argc, argv);
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
