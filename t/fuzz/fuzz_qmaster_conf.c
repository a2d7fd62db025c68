/* fuzz_qmaster_conf.c: fuzz target of qmaster.conf (qmaster/conf.c, with libconfuse): load a file holding the input. */
#include "config.h"

#include <stdlib.h>
#include <unistd.h>

#include "qmaster/qmaster.h"
#include "t/fuzz/fuzz.h"

/* conf.c's reload path names these; conf_load, fuzzed here, uses neither. */
struct qm_conf *conf;
void
sched_kick(void)
{
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *path;
	struct qm_conf *c;

	fuzz_quiet();
	path = fuzz_file(data, size);
	if ((c = conf_load(path)) != NULL) {
		for (int i = 0; i < c->nqueues; i++)
			free(conf_queue_text(&c->queues[i]));
		conf_free(c);
	}
	unlink(path);
	free(path);
	return 0;
}
