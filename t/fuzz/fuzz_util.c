/* fuzz_util.c: the input helpers of the fuzz targets (strings, files, silence). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"
#include "t/fuzz/fuzz.h"

char *
fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = xmalloc(size + 1);
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

char *
fuzz_file(const uint8_t *data, size_t size)
{
	const char *dir = getenv("TMPDIR");
	char *path = xasprintf("%s/nowq-fuzz.XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(path);

	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		fatal("cannot write the input to %s", path);
	close(fd);
	return path;
}

void
fuzz_quiet(void)
{
	static int done;
	FILE *null;

	if (done++)
		return;
	if ((null = fopen("/dev/null", "w")) != NULL)
		stderr = null;
}
