/* sgeroot.c: Grid Engine's names for where nowq runs: the architecture (ARC) and SGE_ROOT.
 *
 * Tools decide that they run under Grid Engine by SGE_ROOT and find its
 * commands as $SGE_ROOT/bin/$ARC/NAME (Open MPI's qrsh, for one).  nowq's
 * SGE_ROOT is a folder whose bin/ARC holds the client commands: "sge" beside
 * the program's own folder (the build tree, t/stage), else the installed
 * SGE_ROOT_DIR ($(pkgdatadir)/sge). */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common.h"

/* Grid Engine's util/arch names for Linux, by uname's machine. */
static const struct {
	const char *machine, *arch;
} sge_arches[] = {
	{ "x86_64", "lx-amd64" }, { "i386", "lx-x86" }, { "i486", "lx-x86" },
	{ "i586", "lx-x86" }, { "i686", "lx-x86" }, { "aarch64", "lx-arm64" },
	{ "armv6l", "lx-arm" }, { "armv7l", "lx-arm" }, { "ppc64le", "lx-ppc64le" },
	{ "ppc64", "lx-ppc64" }, { "s390x", "lx-s390x" }, { "riscv64", "lx-riscv64" },
	{ "ia64", "lx-ia64" },
};

const char *
sge_arch_of(const char *machine)
{
	static char other[64];

	for (size_t i = 0; i < sizeof sge_arches / sizeof sge_arches[0]; i++)
		if (strcmp(machine, sge_arches[i].machine) == 0)
			return sge_arches[i].arch;
	snprintf(other, sizeof other, "lx-%s", machine);
	return other;
}

const char *
sge_arch(void)
{
	static char arch[64];
	struct utsname un;

	if (!arch[0])
		snprintf(arch, sizeof arch, "%s", uname(&un) == 0 ? sge_arch_of(un.machine) :
		    "lx-unknown");
	return arch;
}

char *
exe_dir(void)
{
	char self[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);

	if (n <= 0)
		return NULL;
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) == NULL)
		return NULL;
	*slash = '\0';
	return xstrdup(self);
}

char *
sge_root_find(void)
{
	char *dir = exe_dir(), *cand;
	struct stat st;

	if (dir) {
		cand = xasprintf("%s/../sge", dir);
		free(dir);
		if (stat(cand, &st) == 0 && S_ISDIR(st.st_mode)) {
			char *real = realpath(cand, NULL);
			free(cand);
			if (real)
				return real;
		} else
			free(cand);
	}
	return xstrdup(SGE_ROOT_DIR);
}
