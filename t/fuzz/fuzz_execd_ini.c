/* fuzz_execd_ini.c: fuzz target of execd.ini (execd/conf.c, with inih): load a file holding the input. */
#include "config.h"

#include <stdlib.h>
#include <unistd.h>

#include "execd/execd.h"
#include "t/fuzz/fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct execd_conf *c;
	char *path;

	fuzz_quiet();
	path = fuzz_file(data, size);
	if ((c = conf_load(path)) != NULL)
		conf_free(c);
	unlink(path);
	free(path);
	return 0;
}
