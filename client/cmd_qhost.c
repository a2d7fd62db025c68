/* cmd_qhost.c: qhost: the exec hosts, their slots, load and state (-F attributes, -j jobs, -q queues, -xml). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "client/client.h"
#include "common/msg_req.h"

static int qhost_run(int argc, char **argv);

const struct cmd cmd_qhost = {
	"qhost",
	"qhost [-h hostlist] [-F [attr,...]] [-j] [-q] [-xml|--json]\n",
	qhost_run,
};

static int
qhost_run(int argc, char **argv)
{
	struct qhost_view view = { 0 };
	struct msg_hosts_reply hr;
	bool as_json = false, as_xml = false;
	json_t *req, *rep;
	int rc = 1;

	for (int k = 1; k < argc; k++) {
		if (strcmp(argv[k], "-help") == 0 || strcmp(argv[k], "--help") == 0) {
			client_usage(&cmd_qhost, stdout);
			rc = 0;
			goto out;
		} else if (strcmp(argv[k], "--json") == 0 || strcmp(argv[k], "-json") == 0)
			as_json = true;
		else if (strcmp(argv[k], "-xml") == 0)
			as_xml = true;
		else if (strcmp(argv[k], "-j") == 0)
			view.jobs = true;
		else if (strcmp(argv[k], "-q") == 0)
			view.queues = true;
		else if (strcmp(argv[k], "-F") == 0) {
			/* As in Grid Engine, the list is optional. */
			view.attrs = true;
			if (k + 1 < argc && argv[k + 1][0] != '-')
				client_add_words(&view.attr_names, argv[++k]);
		} else if (strcmp(argv[k], "-h") == 0) {
			if (++k >= argc) {
				client_errx("option \"-h\" needs a list of hosts");
				goto usage;
			}
			client_add_words(&view.hosts, argv[k]);
		} else if (strcmp(argv[k], "-l") == 0 || strcmp(argv[k], "-u") == 0 ||
		    strcmp(argv[k], "-ncb") == 0 || strcmp(argv[k], "-cb") == 0) {
			/* Grid Engine's, which nowq's hosts cannot answer yet. */
			client_errx("option \"%s\" is not supported by nowq", argv[k]);
			goto usage;
		} else {
			client_errx(CLIENT_UNSUPPORTED, argv[k]);
			goto usage;
		}
	}
	req = msg_hosts_pack(&(struct msg_hosts){ .jobs = view.jobs });
	if ((rep = client_request_ok(req, "")) == NULL)
		goto out;
	msg_hosts_reply_unpack(rep, &hr);
	if (as_json) {
		json_t *all = hr.hosts, *sel = json_array(), *h;
		size_t i;
		/* -h selects in JSON too; -F and -j are in the document anyway. */
		json_array_foreach(all, i, h) {
			struct msg_host_row row;
			bool keep = !view.hosts;

			msg_host_row_unpack(h, &row);
			for (char **p = view.hosts; p && *p && row.name; p++)
				keep |= strcmp(*p, row.name) == 0;
			msg_host_row_clear(&row);
			if (keep)
				json_array_append(sel, h);
		}
		client_print_json("hosts", sel);
		json_decref(sel);
	} else if (as_xml)
		qhost_xml(stdout, hr.hosts, &view);
	else
		qhost_print(stdout, hr.hosts, &view);
	json_decref(rep);
	rc = 0;
	goto out;
usage:
	client_usage(&cmd_qhost, stderr);
out:
	strv_free(view.hosts);
	strv_free(view.attr_names);
	return rc;
}
