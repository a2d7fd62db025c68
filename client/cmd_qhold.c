/* cmd_qhold.c: qhold: put a user hold on pending jobs. */
#include "config.h"

#include "common/common.h"
#include "client/client.h"

static int qhold_run(int argc, char **argv);

const struct cmd cmd_qhold = {
	"qhold",
	"qhold [-h u|o|s] job[.task][,job]... | -u user[,user]...\n",
	qhold_run,
};

static int
qhold_run(int argc, char **argv)
{
	return client_job_op(&cmd_qhold, "HOLD", argc, argv);
}
