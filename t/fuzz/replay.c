/* replay.c: runs every input of a fuzz target's committed corpus through the target once, printing TAP; the check without clang. */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "t/fuzz/fuzz.h"

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
main(int argc, char **argv)
{
	const char *top = getenv("top_srcdir");
	char *dir = argc > 1 ? xstrdup(argv[1]) :
	    xasprintf("%s/t/fuzz/corpus/%s", top && *top ? top : FUZZ_SRCDIR, FUZZ_TARGET);
	char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	DIR *d;

	if ((d = opendir(dir)) == NULL) {
		printf("1..1\nnot ok 1 - %s: no corpus at %s\n", FUZZ_TARGET, dir);
		return 1;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		names = xrealloc(names, (n + 1) * sizeof *names);
		names[n++] = xstrdup(de->d_name);
	}
	closedir(d);
	/* The same order on every machine, so a failure is repeatable. */
	qsort(names, n, sizeof *names, by_name);
	printf("1..%zu\n", n ? n : 1);
	if (!n) {
		printf("not ok 1 - %s: the corpus %s is empty\n", FUZZ_TARGET, dir);
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		char *path = xasprintf("%s/%s", dir, names[i]), *data, *exact;
		const char *why;
		size_t len;

		/* Printed first: a crash inside leaves the input's name last. */
		printf("# %s\n", names[i]);
		fflush(stdout);
		if ((data = read_file(path, 16u * 1024 * 1024, &len, &why)) == NULL) {
			printf("not ok %zu - %s: %s\n", i + 1, names[i], why);
			return 1;
		}
		/* An exact copy, so the sanitizers see a read past the input's end. */
		exact = xmalloc(len ? len : 1);
		memcpy(exact, data, len);
		LLVMFuzzerTestOneInput((const uint8_t *)exact, len);
		free(exact);
		printf("ok %zu - %s\n", i + 1, names[i]);
		free(data);
		free(path);
		free(names[i]);
	}
	free(names);
	free(dir);
	return 0;
}
