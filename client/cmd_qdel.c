/* cmd_qdel.c: qdel: delete jobs by id, name or owner. */
#include "config.h"

#include "common/common.h"
#include "client/client.h"

static int qdel_run(int argc, char **argv);

const struct cmd cmd_qdel = {
	"qdel",
	"qdel [-f] job[.task][,job]... [-t first-last:step] | -u user[,user]...\n",
	qdel_run,
};

static int
qdel_run(int argc, char **argv)
{
	return client_job_op(&cmd_qdel, "DELETE", argc, argv);
}
