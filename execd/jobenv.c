/* jobenv.c: a job's environment: what it brought (-V, -v, SGE_O_*), then Grid Engine's variables.
 *
 * Each variable means what Grid Engine's execd and shepherd give it (the
 * fixtures in t/sge/envq/ are the real one's); qsub(1) lists them. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "execd/execd.h"

/* Grid Engine's, for a job that brought no PATH. */
#define JOBENV_DEFAULT_PATH "/usr/local/bin:/bin:/usr/bin"

const char *
jobenv_owner(const struct job *j)
{
	static char uidbuf[16];
	if (j->owner)
		return j->owner;
	snprintf(uidbuf, sizeof uidbuf, "%u", (unsigned)j->uid);
	return uidbuf;
}

const char *
jobenv_name(const struct job *j)
{
	return j->name ? j->name : "nowq";
}

/* The index of name's entry in envp, appending an empty one if none. */
static size_t
jobenv_slot(char ***envp, size_t *n, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < *n; i++)
		if (strncmp((*envp)[i], name, len) == 0 && (*envp)[i][len] == '=')
			return i;
	*envp = xrealloc(*envp, (*n + 2) * sizeof **envp);
	(*envp)[*n] = NULL;
	(*envp)[*n + 1] = NULL;
	return (*n)++;
}

static size_t
jobenv_set(char ***envp, size_t *n, const char *name, const char *value)
{
	size_t i = jobenv_slot(envp, n, name);

	free((*envp)[i]);
	(*envp)[i] = xasprintf("%s=%s", name, value);
	return i;
}

static const char *
jobenv_get(char **envp, const char *name)
{
	size_t len = strlen(name);
	for (size_t i = 0; envp && envp[i]; i++)
		if (strncmp(envp[i], name, len) == 0 && envp[i][len] == '=')
			return envp[i] + len + 1;
	return NULL;
}

static void
jobenv_set_int(char ***envp, size_t *n, const char *name, int64_t v)
{
	char buf[32];

	snprintf(buf, sizeof buf, "%" PRId64, v);
	jobenv_set(envp, n, name, buf);
}

/* The array's task and range, Grid Engine's "undefined" for other jobs. */
static void
jobenv_tasks(char ***envp, size_t *n, const struct job *j)
{
	static const char *const names[] = {
		"SGE_TASK_ID", "SGE_TASK_FIRST", "SGE_TASK_LAST", "SGE_TASK_STEPSIZE",
	};
	int vals[] = { j->task, j->t_first, j->t_last, j->t_step };

	for (int k = 0; k < 4; k++)
		if (j->task > 0 && (k == 0 || j->t_first > 0))
			jobenv_set_int(envp, n, names[k], vals[k]);
		else
			jobenv_set(envp, n, names[k], "undefined");
}

/* Where the job runs: the host, the queue (one queue instance per host in
 * nowq, so NQUEUES is NHOSTS), the slots and a parallel job's hosts. */
static void
jobenv_where(char ***envp, size_t *n, const struct jobenv *e)
{
	const struct job *j = e->j;
	int nhosts = e->pe && e->pe->nhosts ? e->pe->nhosts : 1;

	jobenv_set(envp, n, "HOSTNAME", conf->name);
	jobenv_set(envp, n, "QUEUE", j->queue ? j->queue : "");
	jobenv_set_int(envp, n, "NSLOTS", e->pe && e->pe->nhosts ? j->slots : 1);
	jobenv_set_int(envp, n, "NHOSTS", nhosts);
	jobenv_set_int(envp, n, "NQUEUES", nhosts);
	jobenv_set_int(envp, n, "NOWQ_VNN", e->pe ? e->pe->part : 0);
	if (e->pe && e->pe->nhosts) {
		jobenv_set(envp, n, "PE", j->pe ? j->pe : "");
		jobenv_set(envp, n, "PE_HOSTFILE", e->pe->hostfile);
	}
}

/* Grid Engine's installation as a job sees it: SGE_ROOT whose bin/ARC
 * holds the commands (common/sgeroot.c), the cell, the architecture. */
static void
jobenv_install(char ***envp, size_t *n, const struct jobenv *e)
{
	const char *arch = sge_arch();
	char *bin = xasprintf("%s/bin/%s", e->sge_root, arch);

	jobenv_set(envp, n, "SGE_ROOT", e->sge_root);
	jobenv_set(envp, n, "SGE_CELL", SGE_CELL_NAME);
	jobenv_set(envp, n, "ARC", arch);
	jobenv_set(envp, n, "SGE_ARCH", arch);
	jobenv_set(envp, n, "SGE_BINARY_PATH", bin);
	free(bin);
}

char **
jobenv_build(const struct jobenv *e, size_t out_slot[2])
{
	const struct job *j = e->j;
	char **envp = strv_dup(j->env);
	size_t n = strv_len(envp);
	char *path;

	if (!envp)
		envp = xcalloc(1, sizeof *envp);
	jobenv_set_int(&envp, &n, "JOB_ID", j->id);
	jobenv_set(&envp, &n, "JOB_NAME", jobenv_name(j));
	jobenv_set(&envp, &n, "REQUEST", jobenv_name(j));
	jobenv_set(&envp, &n, "REQNAME", jobenv_name(j));
	jobenv_where(&envp, &n, e);
	jobenv_set(&envp, &n, "HOME", j->home ? j->home : "/");
	jobenv_set(&envp, &n, "USER", jobenv_owner(j));
	jobenv_set(&envp, &n, "LOGNAME", jobenv_owner(j));
	jobenv_set(&envp, &n, "SHELL", j->shell ? j->shell : "/bin/sh");
	/* TMPDIR first in PATH, as Grid Engine puts it. */
	path = xasprintf("%s:%s", e->tmpdir, jobenv_get(envp, "PATH") ? jobenv_get(envp, "PATH") :
	    JOBENV_DEFAULT_PATH);
	jobenv_set(&envp, &n, "PATH", path);
	free(path);
	jobenv_set(&envp, &n, "TMPDIR", e->tmpdir);
	jobenv_set(&envp, &n, "TMP", e->tmpdir);
	jobenv_set(&envp, &n, "ENVIRONMENT", "BATCH");
	/* Grid Engine's: 1 when this is not the job's first run (its host was
	 * lost, it was vacated, or it exited 99), so a job can resume its work. */
	jobenv_set(&envp, &n, "RESTARTED", j->attempt > 1 ? "1" : "0");
	jobenv_tasks(&envp, &n, j);
	jobenv_set(&envp, &n, "JOB_SCRIPT", e->script ? e->script : j->argv[0]);
	jobenv_install(&envp, &n, e);
	jobenv_set(&envp, &n, "SGE_JOB_SPOOL_DIR", e->spool_dir);
	jobenv_set(&envp, &n, "SGE_ACCOUNT", j->account ? j->account : "sge");
	jobenv_set(&envp, &n, "SGE_CWD_PATH", e->cwd);
	jobenv_set(&envp, &n, "PWD", e->cwd);
	jobenv_set(&envp, &n, "SGE_STDIN_PATH", e->in ? e->in : "/dev/null");
	/* Where the output goes is known for sure only once the job's process
	 * has its owner's identity (a folder given as -o); the shepherd puts
	 * the right entry in these two slots then (shep_child). */
	out_slot[0] = jobenv_set(&envp, &n, "SGE_STDOUT_PATH", e->out);
	out_slot[1] = jobenv_set(&envp, &n, "SGE_STDERR_PATH", e->err);
	return envp;
}
