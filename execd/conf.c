/* conf.c: execd's configuration at start-up, from execd.ini.
 *
 * common/execdconf.c reads it; a bad file is said on standard error. */
#include "config.h"

#include <stdio.h>

#include "execd/execd.h"

struct execd_conf *
conf_load(const char *path)
{
	char err[1024];
	struct execd_conf *c = execdconf_load(path, err, sizeof err);

	if (!c)
		fprintf(stderr, "execd: %s\n", err);
	return c;
}

void
conf_free(struct execd_conf *c)
{
	execdconf_free(c);
}
