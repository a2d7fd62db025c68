/* main.c: the one client program: the table of commands, dispatched on the name it runs as. */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/common.h"
#include "client/client.h"

/* Every command, once.  Installed as symlinks named after each entry. */
static const struct cmd *const cmds[] = {
	&cmd_qsub, &cmd_qstat, &cmd_qdel, &cmd_qhold, &cmd_qrls, &cmd_qhost, &cmd_nowq,
	&cmd_qacct, &cmd_qconf, &cmd_qalter, &cmd_qmod, &cmd_reserve, &cmd_unreserve, &cmd_qwait, &cmd_qrsh,
	&cmd_qselect,
};

static const struct cmd *
cmd_lookup(const char *name)
{
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		if (strcmp(cmds[i]->name, name) == 0)
			return cmds[i];
	return NULL;
}

/* The linker's marks of the program's code. */
extern char __executable_start[], _etext[];

/*
 * A client lives a few milliseconds and would fault its code in a few
 * pages at a time, 16-17 us a fault on this project's virtual machines:
 * mapped in one call instead (common/util.c's mem_populate says more).
 */
static void
image_prefault(void)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t t0 = (uintptr_t)__executable_start & ~(pg - 1), t1 = (uintptr_t)_etext;

	(void)madvise((void *)t0, t1 - t0, MADV_POPULATE_READ);
}

int
main(int argc, char **argv)
{
	const char *name = argc > 0 && argv[0] ? argv[0] : "nowq";
	const char *slash = strrchr(name, '/');
	const struct cmd *c;

	if (slash)
		name = slash + 1;
	image_prefault();
	/* A master that goes away must give an error, not kill us. */
	signal(SIGPIPE, SIG_IGN);
	/* jansson would read /dev/urandom to seed its hash tables; a client
	 * that lives a millisecond gains nothing from that. */
	json_object_seed(1);
	if ((c = cmd_lookup(name)) == NULL) {
		fprintf(stderr, "nowq: error: unknown command name \"%s\"; known:", name);
		for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
			fprintf(stderr, " %s", cmds[i]->name);
		fputc('\n', stderr);
		return 1;
	}
	/* "nowq qsub ..." is qsub. */
	if (c == &cmd_nowq && argc > 1) {
		const struct cmd *sub = cmd_lookup(argv[1]);
		if (sub && sub != &cmd_nowq) {
			c = sub;
			argc--;
			argv++;
		}
	}
	client_prog = c->name;
	log_init(c->name, LOG_LVL_WARN, NULL);
	return c->run(argc, argv);
}
