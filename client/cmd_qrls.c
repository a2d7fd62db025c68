/* cmd_qrls.c: qrls: release the user hold of jobs. */
#include "config.h"

#include "common/common.h"
#include "client/client.h"

static int qrls_run(int argc, char **argv);

const struct cmd cmd_qrls = {
	"qrls",
	"qrls [-h u|o|s] job[.task][,job]... | -u user[,user]...\n",
	qrls_run,
};

static int
qrls_run(int argc, char **argv)
{
	return client_job_op(&cmd_qrls, "RELEASE", argc, argv);
}
