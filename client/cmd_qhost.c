/* cmd_qhost.c: qhost: the exec hosts, their slots, load and whether they are up. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "common/common.h"
#include "client/client.h"

static int qhost_run(int argc, char **argv);

const struct cmd cmd_qhost = {
	"qhost",
	"qhost [--json]\n",
	qhost_run,
};

static int
qhost_run(int argc, char **argv)
{
	bool as_json = false;
	json_t *req, *rep;

	for (int k = 1; k < argc; k++) {
		if (strcmp(argv[k], "-help") == 0 || strcmp(argv[k], "--help") == 0) {
			client_usage(&cmd_qhost, stdout);
			return 0;
		} else if (strcmp(argv[k], "--json") == 0 || strcmp(argv[k], "-json") == 0)
			as_json = true;
		else {
			client_errx("unknown option \"%s\"", argv[k]);
			client_usage(&cmd_qhost, stderr);
			return 1;
		}
	}
	req = json_pack("{s:s}", "type", "HOSTS");
	if ((rep = client_request_ok(req, "")) == NULL)
		return 1;
	if (as_json) {
		json_dumpf(json_object_get(rep, "hosts"), stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
		fputc('\n', stdout);
	} else
		qhost_print_table(stdout, json_object_get(rep, "hosts"));
	json_decref(rep);
	return 0;
}
