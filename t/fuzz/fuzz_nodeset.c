/* fuzz_nodeset.c: fuzz target of node-set expressions (common/nodeset.c): parse, then test hosts and names against the tree. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "t/fuzz/fuzz.h"

/* Some names are aliases of several hosts, as reservations are. */
static bool
fuzz_alias(void *arg, const char *name, const char *host)
{
	(void)arg;
	if (strcmp(name, "even") == 0)
		return strcmp(host, "n2") == 0 || strcmp(host, "n4") == 0;
	return strcmp(name, host) == 0;
}

static bool
fuzz_known(void *arg, const char *name)
{
	(void)arg;
	return name[0] == 'n' || strcmp(name, "even") == 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const hosts[] = { "n1", "n2", "n3", "n4", "a-b.c", "" };
	char *expr = fuzz_cstr(data, size), err[256];
	struct nodeset *ns = nodeset_parse(expr, err, sizeof err);

	if (ns) {
		(void)nodeset_is_all(ns);
		(void)nodeset_unknown(ns, fuzz_known, NULL);
		for (size_t i = 0; i < sizeof hosts / sizeof *hosts; i++) {
			(void)nodeset_contains(ns, hosts[i], NULL, NULL);
			(void)nodeset_contains(ns, hosts[i], fuzz_alias, NULL);
		}
		(void)nodeset_names(ns, "even");
		nodeset_free(ns);
	}
	free(expr);
	return 0;
}
