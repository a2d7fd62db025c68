/* qconf_show.c: qconf's read-only views of Grid Engine's objects (-sm -so -sel -sh -ss -sconf -shgrp -sul -su -sprj) as it prints them. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "client/client.h"
#include "common/msg_req.h"

/* A list one name a line; Grid Engine's "no X defined" on stderr and
 * exit 1 when it is empty. */
static int
print_names(const json_t *a, const char *none)
{
	const json_t *v;
	size_t i, n = 0;

	json_array_foreach(a, i, v)
		if (json_is_string(v)) {
			printf("%s\n", json_string_value(v));
			n++;
		}
	if (n == 0) {
		fprintf(stderr, "%s\n", none);
		return 1;
	}
	return 0;
}

/* -sm, -so: the managers (root always) and operators of qmaster.conf. */
static int
show_conf_list(bool operators, const char *none)
{
	json_t *rep = client_request_ok(msg_conf_pack(&(struct msg_conf){ .op = "list" }), "");
	struct msg_conf_reply cr;
	int rc;

	if (!rep)
		return 1;
	msg_conf_reply_unpack(rep, &cr);
	rc = print_names(operators ? cr.operators : cr.managers, none);
	json_decref(rep);
	return rc;
}

/* -sel, -sh, -ss: the exec hosts.  nowq takes administration and
 * submissions from any host that can reach the master (who may do what
 * is by user), so its admin and submit hosts are its hosts. */
static int
show_hosts(void)
{
	json_t *rep = client_request_ok(msg_hosts_pack(&(struct msg_hosts){ 0 }), "");
	json_t *names = json_array();
	struct msg_hosts_reply hr;
	struct msg_host_row *hosts;
	size_t i, n;
	int rc;

	if (!rep)
		return 1;
	msg_hosts_reply_unpack(rep, &hr);
	hosts = msg_host_rows_unpack(hr.hosts, &n);
	for (i = 0; i < n; i++)
		if (hosts[i].name)
			json_array_append_new(names, json_string(hosts[i].name));
	rc = print_names(names, "no execution host defined");
	msg_host_rows_free(hosts, n);
	json_decref(names);
	json_decref(rep);
	return rc;
}

void
qconf_print_text(const json_t *rep)
{
	struct msg_conf_reply cr;

	msg_conf_reply_unpack(rep, &cr);
	fputs(cr.text ? cr.text : "", stdout);
}

static int
show_global(void)
{
	json_t *rep = client_request_ok(msg_conf_pack(&(struct msg_conf){ .op = "global" }), "");

	if (!rep)
		return 1;
	qconf_print_text(rep);
	json_decref(rep);
	return 0;
}

/* nowq has no host groups (its aliases, qconf -salias, name host sets),
 * usersets (queues name their users) or projects: Grid Engine's words
 * for none, on stderr, and exit 1. */
static const struct {
	const char *opt;
	int         argc;
	const char *pre, *post;   /* the words before and after the name asked for */
} none_views[] = {
	{ "-shgrpl", 2, "no host group list defined", "" },
	{ "-shgrp", 3, "Host group \"", "\" does not exist" },
	{ "-sul", 2, "no userset list defined", "" },
	{ "-su", 3, "denied: access list \"", "\" does not exist" },
	{ "-sprjl", 2, "no project list defined", "" },
	{ "-sprj", 3, "", " is not known as a project" },
};

int
qconf_show_view(int argc, char **argv)
{
	const char *o = argv[1];

	if (argc == 2 && strcmp(o, "-sm") == 0)
		return show_conf_list(false, "no manager defined");
	if (argc == 2 && strcmp(o, "-so") == 0)
		return show_conf_list(true, "no operator defined");
	if (argc == 2 && (strcmp(o, "-sel") == 0 || strcmp(o, "-sh") == 0 || strcmp(o, "-ss") == 0))
		return show_hosts();
	if (argc == 2 && strcmp(o, "-sconf") == 0)
		return show_global();
	if (argc == 3 && strcmp(o, "-sconf") == 0 && strcmp(argv[2], "global") == 0)
		return show_global();
	for (size_t i = 0; i < sizeof none_views / sizeof none_views[0]; i++)
		if (argc == none_views[i].argc && strcmp(o, none_views[i].opt) == 0) {
			fprintf(stderr, "%s%s%s\n", none_views[i].pre, argc == 3 ? argv[2] : "",
			    none_views[i].post);
			return 1;
		}
	return -1;
}
