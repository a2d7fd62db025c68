/* shepherd.c: the per-job process: starts the job as its owner, waits, records its end.
 *
 * A shepherd is a fork of the host's starter (starter.c), or the program
 * nowq-shepherd started by execd where there is no starter; the job runs
 * in a session of its own. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/msg.h"
#include "execd/execd.h"

extern char **environ;

#define SHEP_FAILED_STATUS 127
#define SHEP_WHY_MAX 512
/* A limit of more seconds than this (some 30,000 years) is no limit: it
 * keeps the arithmetic on deadlines and rlimits far from overflowing. */
#define SHEP_LIMIT_MAX_SECS 1000000000000LL

struct shep {
	const char  *key;
	struct job  *j;
	char        *dir;        /* SPOOL/active/KEY */
	char        *tmpdir;     /* the job's TMPDIR, once created */
	char        *wd;         /* a staging job's fresh working directory, or NULL */
	char        *script;     /* SPOOL/active/KEY/script for script jobs */
	bool         root;       /* may (and must) switch to the job's owner */
	int          lockfd;     /* the folder, flocked: held while we live */
	char        *cgroup;     /* the job's cgroup (h_vmem), or NULL */
	char        *sge_root;   /* SGE_ROOT for the job (common/sgeroot.c) */
	struct pe_part pe;       /* a parallel job's part; pe.nhosts 0 for others */
	bool         hold;       /* a -pe job's part off the master host: it holds the
	                          * slots for qrsh -inherit and runs no script */
	struct qrsh_link *qrsh;  /* a qrsh job's streams; NULL for a batch job */
};

/* Everything the job's process needs, prepared before vfork: the child shares
 * our memory until it execs, so it allocates nothing and changes nothing of
 * ours but environ, which we restore. */
struct shep_start {
	const char  *wd;
	char        *out, *out_dir;  /* -o as given, and inside it if a folder */
	char        *err, *err_dir;  /* the same for -e, unless joined */
	char        *in;             /* -i's file for this host, absolute; NULL: /dev/null */
	char       **envp;
	size_t       env_slot[2];    /* SGE_STDOUT_PATH's and SGE_STDERR_PATH's entries */
	char        *env_out_dir, *env_err_dir;  /* their entries if -o, -e is a folder */
	char       **cmd;
	int          cgroup_fd;  /* the job's cgroup.procs, or -1 */
	struct limits_rlimit rl[LIMITS_NRLIMIT];  /* s_vmem, h_vmem without a cgroup, h_cpu, ... */
	int          nrl;
	char         why[SHEP_WHY_MAX];  /* set by a child that could not start */
};

/* ---- the job's process: from fork to exec ---- */

static void NOWQ_NORETURN
shep_child_fail(char *why, const char *fmt, ...) NOWQ_ATTR_PRINTF(2, 3);

/* The reason goes to the shepherd through the memory the vfork child shares
 * with it (SHEP_WHY_MAX bytes): a reason there means the job never started. */
static void NOWQ_NORETURN
shep_child_fail(char *why, const char *fmt, ...)
{
	char raw[SHEP_WHY_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof raw, fmt, ap);
	va_end(ap);
	/* One line, whatever the path held (no allocation: a vfork child). */
	text_oneline_to(why, SHEP_WHY_MAX, raw);
	if (!why[0])
		snprintf(why, SHEP_WHY_MAX, "the job could not start");
	_exit(SHEP_FAILED_STATUS);
}

/* Grid Engine's pseudo variables in -o and -e paths. */
static char *
shep_expand(const struct shep *s, const char *in)
{
	const struct job *j = s->j;
	char idbuf[32], taskbuf[16];
	const char *bad = NULL;
	const struct str_var vars[] = {
		{ "$HOME", j->home ? j->home : "/" },
		{ "$USER", jobenv_owner(j) },
		{ "$JOB_ID", idbuf },
		{ "$JOB_NAME", jobenv_name(j) },
		{ "$HOSTNAME", conf->name },
		{ "$TASK_ID", taskbuf },
	};

	snprintf(idbuf, sizeof idbuf, "%" PRId64, j->id);
	if (j->task > 0)
		snprintf(taskbuf, sizeof taskbuf, "%d", j->task);
	else
		snprintf(taskbuf, sizeof taskbuf, "undefined");
	return str_expand(in, vars, sizeof vars / sizeof vars[0], &bad);
}

/* -o/-e as given (expanded; relative to the working directory; a directory
 * gets the default name inside it), else Grid Engine's NAME.oID[.TASK]; made
 * absolute from wd, as SGE_STDOUT_PATH says them.  The folder test needs the
 * job's credentials, so the child makes it: *path is what to open, *dirpath
 * what to open if *path is a folder (NULL when no test is needed). */
static void
shep_out_paths(const struct shep *s, const char *wd, const char *given, char kind, char **path,
    char **dirpath)
{
	const struct job *j = s->j;
	const char *sep = wd[strlen(wd) - 1] == '/' ? "" : "/";
	char *def, *rel;

	if (j->task > 0)
		def = xasprintf("%s.%c%" PRId64 ".%d", jobenv_name(j), kind, j->id, j->task);
	else
		def = xasprintf("%s.%c%" PRId64, jobenv_name(j), kind, j->id);
	if (!given || !given[0]) {
		*path = xasprintf("%s%s%s", wd, sep, def);
		*dirpath = NULL;
		free(def);
		return;
	}
	rel = shep_expand(s, given);
	*path = rel[0] == '/' ? xstrdup(rel) : xasprintf("%s%s%s", wd, sep, rel);
	*dirpath = xasprintf("%s/%s", *path, def);
	free(rel);
	free(def);
}

/*
 * -i [[HOST]:]PATH,...: the entry naming this host, else the one naming
 * none, as Grid Engine picks; expanded and made absolute from wd.  NULL
 * with *why when the list names other hosts only.
 */
static char *
shep_in_path(const struct shep *s, const char *wd, const char **why)
{
	const char *sep = wd[strlen(wd) - 1] == '/' ? "" : "/", *p = s->j->in_path;
	char *pick = NULL, *rel, *path;

	for (size_t n; *p; p += n + (p[n] == ',')) {
		const char *colon;
		size_t h;
		n = strcspn(p, ",");
		colon = memchr(p, ':', n);
		h = colon ? (size_t)(colon - p) : 0;
		if (colon && h > 0 && memchr(p, '/', h) == NULL) {
			if (h == strlen(conf->name) && strncmp(p, conf->name, h) == 0) {
				free(pick);
				pick = xstrndup(colon + 1, n - h - 1);
				break;
			}
		} else if (!pick)
			pick = colon && h == 0 ? xstrndup(p + 1, n - 1) : xstrndup(p, n);
	}
	if (!pick || !*pick) {
		free(pick);
		*why = "its -i names no input file for this host";
		return NULL;
	}
	rel = shep_expand(s, pick);
	path = rel[0] == '/' ? xstrdup(rel) : xasprintf("%s%s%s", wd, sep, rel);
	free(rel);
	free(pick);
	return path;
}

/* The child's choice between the two candidates of shep_out_paths. */
static const char *
shep_out_pick(const char *path, const char *dirpath)
{
	struct stat st;

	if (dirpath && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return dirpath;
	return path;
}

static void
shep_open_output(char *why, const char *path, int target)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOCTTY, 0644);
	if (fd < 0)
		shep_child_fail(why, "cannot open output file %s: %s", path, strerror(errno));
	if (fd != target) {
		if (dup2(fd, target) < 0)
			shep_child_fail(why, "cannot set up output file %s: %s", path, strerror(errno));
		close(fd);
	}
}

/* A command's words joined by blanks and given to SHELL with -c: qrsh's
 * command as Grid Engine's qrsh_starter runs it (the owner's login shell),
 * and a qsub -b y command that is a shell line, so that "a; b",
 * redirections and $VARIABLES mean what they mean at a prompt. */
static char **
shep_line_command(const struct job *j, const char *shell)
{
	char **cmd = xcalloc(4, sizeof *cmd), *line;
	size_t len = 1, at = 0;

	for (size_t i = 0; j->argv[i]; i++)
		len += strlen(j->argv[i]) + 1;
	line = xcalloc(1, len);
	for (size_t i = 0; j->argv[i]; i++)
		at += (size_t)snprintf(line + at, len - at, "%s%s", i ? " " : "", j->argv[i]);
	cmd[0] = xstrdup(shell);
	cmd[1] = xstrdup("-c");
	cmd[2] = line;
	return cmd;
}

/* Whether a qsub -b y command's first word is a shell line rather than a
 * program's name: a blank or a character the shell gives a meaning, as in
 * qsub -b y "python x.py > out".  Grid Engine runs every -b y command
 * through a shell unless -shell n; nowq does so only here, where executing
 * the word could only fail, and otherwise keeps the words as they are
 * (doc/gridengine.md says why). */
static bool
shep_is_shell_line(const char *word)
{
	return word[strcspn(word, " \t\n;&|<>()$`\\\"'*?[#~")] != '\0';
}

static char **
shep_command(const struct shep *s)
{
	const struct job *j = s->j;
	size_t nargs = strv_len(j->args), n = 0;
	char **cmd;

	if (j->argv && j->qrsh && !j->noshell) {
		const struct passwd *pw = getpwuid(j->uid);

		return shep_line_command(j, pw && pw->pw_shell && *pw->pw_shell ? pw->pw_shell : "/bin/sh");
	}
	if (j->argv && !j->noshell && shep_is_shell_line(j->argv[0]))
		return shep_line_command(j, j->shell ? j->shell : "/bin/sh");
	if (j->argv)
		return j->argv;
	cmd = xcalloc(nargs + 3, sizeof *cmd);
	if (j->shell)
		cmd[n++] = j->shell;
	else if (strncmp(j->script, "#!", 2) != 0)
		cmd[n++] = (char *)"/bin/sh";
	cmd[n++] = s->script;
	for (size_t i = 0; i < nargs; i++)
		cmd[n++] = j->args[i];
	return cmd;
}

/*
 * The job's process: its own session, the owner's credentials, the working
 * directory, the output files (opened only after the switch, so a job writes
 * nowhere its owner could not), the environment, then exec.  Any failure
 * before exec is a start failure, reported in st->why.
 *
 * It runs in a vfork child on the shepherd's memory: only system calls and
 * functions that allocate nothing (vsnprintf, strerror, execvp), and the
 * credential calls go straight to the kernel, since glibc's wrappers would
 * coordinate with threads through memory we share.
 */
static void NOWQ_NORETURN
shep_child(const struct shep *s, struct shep_start *st)
{
	const struct job *j = s->j;
	char *why = st->why;
	const char *out, *err;
	sigset_t none;
	int fd;

	/* Caught signals are reset by exec itself; ignored ones are not, and
	 * execd starts with every signal at its default, so these are all. */
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	sigemptyset(&none);
	if (setsid() < 0)
		shep_child_fail(why, "cannot start a session: %s", strerror(errno));
	/* Limits before the switch: joining a cgroup takes our privileges, and
	 * the job may only lower what it gets, never raise it. */
	if (st->cgroup_fd >= 0 && write(st->cgroup_fd, "0", 1) != 1)
		shep_child_fail(why, "cannot move the job into its cgroup: %s", strerror(errno));
	for (int i = 0; i < st->nrl; i++)
		if (setrlimit(st->rl[i].resource, &st->rl[i].rl) < 0)
			shep_child_fail(why, "cannot set the %s limit: %s", st->rl[i].name, strerror(errno));

	/* The one place privileges are dropped, for good. */
	if (s->root) {
		if (syscall(SYS_setgroups, (size_t)j->ngroups, j->groups) < 0)
			shep_child_fail(why, "cannot set the groups of %s: %s", jobenv_owner(j), strerror(errno));
		if (syscall(SYS_setresgid, j->gid, j->gid, j->gid) < 0)
			shep_child_fail(why, "cannot set gid %u: %s", (unsigned)j->gid, strerror(errno));
		if (syscall(SYS_setresuid, j->uid, j->uid, j->uid) < 0)
			shep_child_fail(why, "cannot set uid %u: %s", (unsigned)j->uid, strerror(errno));
		if (getuid() != j->uid || geteuid() != j->uid || getgid() != j->gid ||
		    getegid() != j->gid || (j->uid != 0 && syscall(SYS_setuid, 0) == 0))
			shep_child_fail(why, "could not drop privileges to uid %u", (unsigned)j->uid);
	} else if (j->uid != geteuid()) {
		shep_child_fail(why, "this execd runs as uid %u and can run only that user's jobs, "
		    "not uid %u's", (unsigned)geteuid(), (unsigned)j->uid);
	}

	if (chdir(st->wd) < 0)
		shep_child_fail(why, "cannot change to the working directory %s: %s", st->wd,
		    strerror(errno));
	if (s->hold) {
		/* Writes nothing: the job's output is its master host's. */
		if ((fd = open("/dev/null", O_RDWR)) < 0 || dup2(fd, 0) < 0 || dup2(fd, 1) < 0 ||
		    dup2(fd, 2) < 0)
			shep_child_fail(why, "cannot open /dev/null: %s", strerror(errno));
		if (fd > 2)
			close(fd);
		goto streams_set;
	}
	if (s->qrsh) {
		/* qrsh: the streams go to the client, not to files. */
		if (qrsh_child_stdio(s->qrsh) < 0)
			shep_child_fail(why, "cannot connect the job to qrsh: %s", strerror(errno));
		goto streams_set;
	}
	if ((fd = open(st->in ? st->in : "/dev/null", O_RDONLY | O_NOCTTY)) < 0 || dup2(fd, 0) < 0)
		shep_child_fail(why, "cannot open input file %s: %s", st->in ? st->in : "/dev/null",
		    strerror(errno));
	if (fd != 0)
		close(fd);
	out = shep_out_pick(st->out, st->out_dir);
	shep_open_output(why, out, 1);
	if (out == st->out_dir) {
		st->envp[st->env_slot[0]] = st->env_out_dir;
		if (j->join)
			st->envp[st->env_slot[1]] = st->env_err_dir;
	}
	if (j->join) {
		if (dup2(1, 2) < 0)
			shep_child_fail(why, "cannot join stderr to stdout: %s", strerror(errno));
	} else {
		err = shep_out_pick(st->err, st->err_dir);
		shep_open_output(why, err, 2);
		if (err == st->err_dir)
			st->envp[st->env_slot[1]] = st->env_err_dir;
	}
streams_set:

	/* The shepherd blocked every signal around vfork; the job starts with
	 * none blocked. */
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* execvp looks the command up in the job's PATH, not ours; the
	 * shepherd puts its own environ back once we have exec'd. */
	environ = st->envp;
	execvp(st->cmd[0], st->cmd);
	shep_child_fail(why, "cannot execute %s: %s", st->cmd[0], strerror(errno));
}

static void
shep_start_prepare(const struct shep *s, struct shep_start *st)
{
	const struct job *j = s->j;

	struct jobenv e = { .j = j, .tmpdir = s->tmpdir, .script = s->script, .spool_dir = s->dir,
	    .sge_root = s->sge_root, .pe = &s->pe };
	const char *err_dir, *why;

	memset(st, 0, sizeof *st);
	st->cgroup_fd = -1;
	st->wd = j->cwd ? j->cwd : j->home ? j->home : "/";
	shep_out_paths(s, st->wd, j->out_path, 'o', &st->out, &st->out_dir);
	if (!j->join)
		shep_out_paths(s, st->wd, j->err_path, 'e', &st->err, &st->err_dir);
	/* A reason in why: the job cannot start (shep_main checks). */
	if (j->in_path && (st->in = shep_in_path(s, st->wd, &why)) == NULL)
		snprintf(st->why, sizeof st->why, "%s", why);
	e.cwd = st->wd;
	e.in = st->in;
	e.out = st->out;
	e.err = j->join ? st->out : st->err;
	st->envp = jobenv_build(&e, st->env_slot);
	if (st->out_dir)
		st->env_out_dir = xasprintf("SGE_STDOUT_PATH=%s", st->out_dir);
	err_dir = j->join ? st->out_dir : st->err_dir;
	if (err_dir)
		st->env_err_dir = xasprintf("SGE_STDERR_PATH=%s", err_dir);
	st->cmd = shep_command(s);
	if (s->hold) {
		/* This program again, which waits for the end of the job. */
		static char self[PATH_MAX], hold[] = "--hold";
		static char *cmd[] = { self, hold, NULL };
		ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
		self[n > 0 ? n : 0] = '\0';
		st->cmd = cmd;
	}
}

/*
 * vfork, not fork: the child borrows our memory until exec instead of
 * copying our page tables and faulting in copies of what it touches, which
 * would be the largest part of a short job's cost.  Every signal stays blocked
 * until the child has reset its dispositions, so no handler of ours runs on
 * the memory we share.
 */
static pid_t
shep_spawn(const struct shep *s, struct shep_start *st)
{
	char **saved_environ = environ;
	sigset_t all, old;
	pid_t pid;

	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = vfork();
	if (pid == 0)
		shep_child(s, st);
	environ = saved_environ;
	sigprocmask(SIG_SETMASK, &old, NULL);
	return pid;
}

/* ---- the shepherd itself ---- */

/* job.pid and the script need no sync: a crash of the host that would lose
 * them ends the job too.  Nor a temporary name: each is written once, with
 * one write, into our own folder (see execd_write_file). */
static int
shep_write_file(const struct shep *s, const char *name, const char *text, int mode)
{
	char *path = xasprintf("%s/%s", s->dir, name);
	int rc = execd_write_file(path, text, mode, false);

	if (rc < 0)
		log_warn("cannot write %s", path);
	free(path);
	return rc;
}

static void
shep_remove_tmpdir(const struct shep *s)
{
	if (s->tmpdir)
		execd_tmpdir_remove(s->tmpdir, s->j);
	if (s->wd)
		execd_tmpdir_remove(s->wd, s->j);
}

/*
 * The CHILD_TERM event is the one record of the end until the master has
 * committed it.  It is written, execd is woken at once to send it, and only
 * then is it synced, while execd and the master do their part: the master's
 * commit, not ours, is what the job's waiters wait for, and the two syncs
 * overlap instead of adding up.
 *
 * Why the record need not be on disk before execd sends it: an execd crash
 * or restart loses nothing of a written file (it is in the page cache,
 * which outlives every process), so the restarted execd finds and sends it.
 * Only a crash of the host itself (power, kernel) loses an unsynced file,
 * and then only before our sync or the master's commit, whichever comes
 * first; the job's end was acknowledged to nobody by then (execd removes the
 * file on the master's ACK, which follows its commit), and the attempt is
 * reported as any attempt cut by a host crash is: "shepherd died" or
 * unknown to execd, failed or, rerunnable, queued again.  Syncing first only
 * moved that window to before the sync, at the price of a sync on every
 * job's path to its waiters.  The sync is kept, after the wake-up, because
 * a master that is down keeps the event in the outbox for long, and a power
 * cut then must not lose it.  A file the master has already ACKed is gone,
 * and not synced (outbox_sync).
 *
 * If we die before the event is written, execd's safety net reports the
 * attempt as "shepherd died".  On a full spool the end stays here, and we
 * try again until it fits: while we live, execd reports nothing.
 */
static void
shep_record_end(const struct shep *s, const struct msg_child_term *end)
{
	json_t *term = outbox_term_msg(s->key, end);
	bool durable = false;

	for (int tries = 0;; tries++) {
		if (outbox_write(s->key, OUTBOX_TERM, term, durable) < 0) {
			if (errno != ENOSPC && errno != EDQUOT)
				break;
			sleep(tries < 10 ? 1 : 5);
			continue;
		}
		if (durable)
			break;
		outbox_notify(s->key, OUTBOX_TERM);
		if (outbox_sync(s->key, OUTBOX_TERM) == 0)
			break;
		/* A failed sync may have dropped the pages: write it again,
		 * synced this time, unless the master has it already. */
		log_warn("job %s: cannot sync its end in the outbox", s->key);
		if (!outbox_has(s->key, OUTBOX_TERM))
			break;
		durable = true;
	}
	json_decref(term);
}

/* execd writes "vacated" into our folder before it SIGTERMs a job whose
 * owner returned (owner_returns = vacate): the end then says so (a text
 * the caller owns). */
static void
shep_note_vacated(const struct shep *s, struct msg_child_term *end)
{
	char *path = xasprintf("%s/vacated", s->dir);
	const char *why;
	char *text = read_file(path, 512, NULL, &why);

	free(path);
	if (!text)
		return;
	text[strcspn(text, "\n")] = '\0';
	if (!text[0]) {
		free(text);
		text = xstrdup("owner returned");
	}
	end->vacated = text;
}

static void NOWQ_NORETURN
shep_failed(const struct shep *s, const char *reason)
{
	log_warnx("job %s could not start: %s", s->key, reason);
	shep_record_end(s, &(struct msg_child_term){ .exit_status = SHEP_FAILED_STATUS,
	    .end_time = now_ms(), .failed = reason });
	shep_remove_tmpdir(s);
	if (s->cgroup)
		limits_cgroup_remove(s->cgroup);
	_exit(0);
}

/* A qrsh job whose client cannot be reached or refused us, or a job whose
 * staged inputs the master cannot deliver, ends at once, failed, with the
 * reason (in the "limit" field: an end by the execd's decision that the
 * master takes as failed whatever the exit status); one whose inputs this
 * host could not take says so in "requeue" (the master runs it elsewhere). */
static void NOWQ_NORETURN
shep_end_as(const struct shep *s, bool requeue, const char *reason)
{
	log_warnx("job %s: %s", s->key, reason);
	shep_record_end(s, &(struct msg_child_term){ .exit_status = 255, .end_time = now_ms(),
	    .limit = requeue ? NULL : reason, .requeue = requeue ? reason : NULL });
	shep_remove_tmpdir(s);
	_exit(0);
}

/* The job's limits, made ready for its process to apply.  RLIMIT_CPU
 * counts per process: at h_cpu (or s_cpu) the kernel sends SIGXCPU,
 * kill_grace after h_cpu SIGKILL.  A cgroup that cannot be made costs the
 * job nothing but the OOM report: RLIMIT_AS limits it instead. */
static void
shep_limits_prepare(struct shep *s, struct shep_start *st)
{
	const struct job_req *r = &s->j->req;
	struct job_req lr = *r;   /* read only: its texts stay the job's */
	char why[SHEP_WHY_MAX];

	if (r->h_vmem > 0 && limits_cgroup_parent) {
		s->cgroup = limits_cgroup_create(limits_cgroup_parent, s->key, r->h_vmem,
		    &st->cgroup_fd, why, sizeof why);
		if (!s->cgroup)
			log_warnx("job %s: %s; limiting h_vmem with RLIMIT_AS instead", s->key, why);
	}
	if (lr.h_cpu > SHEP_LIMIT_MAX_SECS)
		lr.h_cpu = 0;
	st->nrl = limits_rlimits(&lr, s->cgroup != NULL, conf->kill_grace, st->rl);
}

/* The wall clock's limits, timed here since the shepherd outlives any
 * execd restart.  Deadlines are on the monotonic clock; 0 is "none". */
struct shep_clock {
	int64_t  soft_at, hard_at;
	bool     hard_sent;
};

static void
shep_clock_start(struct shep_clock *c, const struct job_req *r)
{
	int64_t t0 = mono_ms();

	memset(c, 0, sizeof *c);
	if (r->s_rt > 0 && r->s_rt <= SHEP_LIMIT_MAX_SECS)
		c->soft_at = t0 + r->s_rt * 1000;
	if (r->h_rt > 0 && r->h_rt <= SHEP_LIMIT_MAX_SECS)
		c->hard_at = t0 + r->h_rt * 1000;
}

/* Sends what is due to the job's session, as Grid Engine does: at s_rt
 * SIGUSR1, a warning the job may catch and act on as it likes (it is not
 * killed for it); at h_rt SIGKILL (limits.c says when).  Returns the ms until the next
 * deadline, or -1 when none is left. */
static int64_t
shep_clock_tick(struct shep_clock *c, const char *key, pid_t pid)
{
	int64_t now = mono_ms(), next = -1;

	if (c->hard_at && now >= c->hard_at) {
		log_info("job %s reached its h_rt limit: SIGKILL", key);
		kill(-pid, SIGKILL);
		c->hard_at = c->soft_at = 0;
		c->hard_sent = true;
	}
	if (c->soft_at && now >= c->soft_at) {
		log_info("job %s is past its s_rt limit: SIGUSR1", key);
		kill(-pid, SIGUSR1);
		c->soft_at = now + LIMITS_SOFT_RESEND_MS;
		c->hard_at = limits_rt_kill_at(c->hard_at, now);
	}
	for (int64_t *at = &c->soft_at; at <= &c->hard_at; at++)
		if (*at && (next < 0 || *at - now < next))
			next = *at - now;
	return next;
}

/* Which limit ended the job, in words for its reason; NULL when none did.
 * An RLIMIT_AS refusal is only a failed allocation to the job, which may
 * end in any way it likes: that one is not told apart. */
static char *
shep_limit_reason(const struct shep *s, const struct shep_clock *c, int status,
    const struct rusage *ru)
{
	const struct job_req *r = &s->j->req;
	int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
	double cpu = (double)ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6 +
	    (double)ru->ru_stime.tv_sec + ru->ru_stime.tv_usec / 1e6;
	char size[32];

	if (c->hard_sent)
		return xasprintf("h_rt limit (%" PRId64 " s) exceeded", r->h_rt);
	if (s->cgroup && limits_cgroup_oom(s->cgroup)) {
		limits_size_str(r->h_vmem, size, sizeof size);
		return xasprintf("h_vmem limit (%s) exceeded", size);
	}
	/* Only RLIMIT_CPU sends SIGXCPU (a shell reports a child's as 128 +
	 * SIGXCPU); a SIGKILL is the hard limit's when the CPU time, which
	 * includes the children the job waited for, is at the limit. */
	if (r->h_cpu > 0 && (sig == SIGXCPU || code == 128 + SIGXCPU ||
	    (sig == SIGKILL && cpu >= (double)r->h_cpu - 0.1)))
		return xasprintf("h_cpu limit (%" PRId64 " s) exceeded", r->h_cpu);
	return NULL;
}

/* Takes the job owner's filesystem identity (fsuid, fsgid and groups) or
 * gives it back.  Only the filesystem identity changes, which root can take
 * back; what the job runs with is set once and for all in shep_child. */
static int
shep_fs_owner(const struct shep *s, bool owner)
{
	const struct job *j = s->j;

	if (!s->root)
		return 0;
	if (!owner) {
		setfsuid(0);
		setfsgid(0);
		/* The shepherd itself needs no supplementary group. */
		return setgroups(0, NULL);
	}
	if (setgroups((size_t)j->ngroups, j->groups) < 0)
		return -1;
	setfsgid(j->gid);
	setfsuid(j->uid);
	/* setfsuid says nothing of failure: ask for the current values. */
	if ((uid_t)setfsuid((uid_t)-1) != j->uid || (gid_t)setfsgid((gid_t)-1) != j->gid) {
		shep_fs_owner(s, false);
		errno = EPERM;
		return -1;
	}
	return 0;
}

/* The job's private TMPDIR, made by its owner's filesystem identity, so it
 * is the owner's and only the owner's rights decide whether it can be made
 * there.  Its name is the attempt's key and a random part: clusters sharing a
 * machine (personal ones, tests run side by side) have the same job ids, and
 * a folder of another cluster's job 5, or one a killed shepherd left, must
 * not stop this job 5 from starting. */
static const char *
shep_make_tmpdir(struct shep *s)
{
	static char why[512];
	const struct job *j = s->j;
	/* A parallel job's parts share the key: the host name in it says which
	 * execd's part a folder is, for whoever looks in /tmp. */
	char *path = JOB_PARALLEL(j) ? xasprintf("%s/nowq.%s.%s.XXXXXX", conf->tmpdir, s->key,
	    conf->name) : xasprintf("%s/nowq.%s.XXXXXX", conf->tmpdir, s->key);
	char *made;
	int err;

	if (shep_fs_owner(s, true) < 0) {
		snprintf(why, sizeof why, "cannot take the identity of uid %u to make TMPDIR: %s",
		    (unsigned)j->uid, strerror(errno));
		free(path);
		return why;
	}
	made = mkdtemp(path);
	err = errno;
	shep_fs_owner(s, false);
	if (!made) {
		snprintf(why, sizeof why, "cannot create TMPDIR %s: %s", path, strerror(err));
		free(path);
		return why;
	}
	s->tmpdir = path;
	return NULL;
}

static const char *
shep_write_script(struct shep *s)
{
	const struct job *j = s->j;

	s->script = xasprintf("%s/script", s->dir);
	if (shep_write_file(s, "script", j->script, 0700) < 0)
		return "cannot write the job script to the spool";
	if (s->root && chown(s->script, j->uid, j->gid) < 0)
		return "cannot give the job script to its owner";
	return NULL;
}

/* Everything execd had open (its lock, the master connection, the event
 * loop) belongs to execd: a shepherd holding the lock would lock out the next
 * execd for as long as the job runs.  Only keep, our folder's lock, stays. */
static void
shep_close_fds(int keep)
{
	if (keep > 3 && close_range(3, (unsigned)keep - 1, 0) < 0)
		for (int fd = 3; fd < keep; fd++)
			close(fd);
	if (close_range((unsigned)keep + 1, ~0U, 0) < 0)
		for (int fd = keep + 1; fd < 1024; fd++)
			close(fd);
}

static bool
shep_is_child(const struct proc_ids *p, void *arg)
{
	return p->ppid == *(pid_t *)arg;
}

/*
 * What the job left behind once it ended: processes that called setsid
 * escaped its process group, and orphans of its own went to the nearest
 * subreaper, which we are (PR_SET_CHILD_SUBREAPER).  So every one of them is
 * a child of ours by now or will be once its parent dies: killing our
 * children until none is left ends them all, however deep.  Bounded, since a
 * process stuck in the kernel (a dead NFS server) may not die: the end is
 * recorded already, and a stuck shepherd must not hold TMPDIR forever.
 */
static void
shep_end_leftovers(const char *key)
{
	int64_t give_up = mono_ms() + 10000;
	struct timespec ts = { 0, 100 * 1000 * 1000 };
	pid_t self = getpid(), r;
	sigset_t chld;
	int status;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (;;) {
		while ((r = waitpid(-1, &status, WNOHANG)) > 0)
			;
		if (r < 0 && errno != EINTR)
			return;    /* ECHILD: nothing is left */
		if (mono_ms() >= give_up) {
			log_warnx("job %s: processes it left do not die; leaving them", key);
			return;
		}
		if (r == 0)
			proc_kill_where(shep_is_child, &self, SIGKILL);
		sigtimedwait(&chld, NULL, &ts);
	}
}

/* The shepherd's own session, descriptors and signals: what it is before
 * it touches the job.  waitset: the signals it takes by sigtimedwait. */
static void
shep_become(const char *key, int lockfd, sigset_t *waitset)
{
	int fd;

	setsid();
	assert(lockfd >= 3);
	shep_close_fds(lockfd);
	/* The lock says we live: the job must not inherit it, or a job
	 * whose shepherd was killed would pass for supervised until it
	 * ended.  execd cleared close-on-exec only to hand it to us. */
	set_cloexec(lockfd);
	/* Orphans of the job, setsid daemons included, become ours, so
	 * its end ends them too (shep_end_leftovers). */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		log_warn("job %s: cannot become a subreaper; what the job detaches may outlive it", key);
	/* Each page of code a shepherd runs is a page fault of its own, so
	 * the usual run writes no log: execd logs the start and the end as
	 * it sends them, and the file is opened only for a problem. */
	log_init_lazy("shepherd", execd_log_level, execd_log_path);
	if ((fd = open("/dev/null", O_RDONLY)) >= 0 && fd != 0) {
		dup2(fd, 0);
		close(fd);
	}
	/* A SIGTERM for the shepherd is passed on to the job, terminal
	 * signals are not ours.  SIGTERM and SIGCHLD stay blocked and are
	 * taken by sigtimedwait, which also times the wall-clock limits: no
	 * handler, no race with the wait.  (execd starts us with every
	 * signal blocked; this is our mask from here on.) */
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGCHLD, SIG_DFL);
	sigemptyset(waitset);
	sigaddset(waitset, SIGTERM);
	sigaddset(waitset, SIGCHLD);
	sigprocmask(SIG_SETMASK, waitset, NULL);
}

/* The job runs: job.pid for execd, and CHILD_REGISTER for the master. */
static void
shep_register(struct shep *s, pid_t pid, int64_t start_ms)
{
	unsigned long long start;
	char *pidline;
	json_t *msg;

	/* Started: the job's pid is its process group, for SIGNAL; its start
	 * time tells it from a later process given the same pid. */
	if (!shepherd_proc_start(pid, &start))
		start = 0;
	/* Our pid and TMPDIR tell execd what to clean up should we be
	 * killed: the job's cgroup bears our pid in its name. */
	if (asprintf(&pidline, "%d %llu %lld %d %s\n", (int)pid, start, (long long)start_ms,
	    (int)getpid(), s->tmpdir) < 0)
		fatalx("out of memory");
	/* Not synced: if the host crashes, the durable active/ folder makes
	 * execd report the attempt as lost ("shepherd died").  The
	 * outbox's CHILD_REGISTER is job.pid under a second name; only where
	 * the two folders cannot share the file is it a file of its own. */
	if (shep_write_file(s, "job.pid", pidline, 0600) < 0 || outbox_link_reg(s->key) < 0) {
		msg = outbox_reg_msg(s->key, pidline);
		assert(msg);
		outbox_write(s->key, OUTBOX_REG, msg, false);
		json_decref(msg);
	}
	outbox_notify(s->key, OUTBOX_REG);
}

/* Waits for the job's end, passing on a SIGTERM and enforcing the wall
 * clock; its wait status, and its usage in *ru. */
static int
shep_wait_job(struct shep *s, struct shep_clock *clock, pid_t pid, sigset_t *waitset,
    struct rusage *ru)
{
	int status = 0;
	int64_t next;
	pid_t r;

	memset(ru, 0, sizeof *ru);
	for (;;) {
		struct timespec ts;
		struct rusage oru;
		int ostatus;
		/* Orphans the job left are ours to reap too (we are their
		 * subreaper): only the job's own end and usage count. */
		while ((r = wait4(-1, &ostatus, WNOHANG, &oru)) > 0 && r != pid)
			;
		if (r == pid) {
			status = ostatus;
			*ru = oru;
			break;
		}
		if (r < 0 && errno != EINTR) {
			log_warn("lost track of job %s (pid %d)", s->key, (int)pid);
			shep_failed(s, "the shepherd lost track of the job");
		}
		next = shep_clock_tick(clock, s->key, pid);
		ts.tv_sec = next / 1000;
		ts.tv_nsec = (long)(next % 1000) * 1000000L;
		if ((s->qrsh ? qrsh_wait(s->qrsh, next) :
		    sigtimedwait(waitset, NULL, next >= 0 ? &ts : NULL)) == SIGTERM)
			kill(-pid, SIGTERM);
	}
	return status;
}

static void
shep_qrsh_finish(struct shep *s, int status)
{
	qrsh_finish(s->qrsh, WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status),
	    WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static void NOWQ_NORETURN
shepherd_main(const char *key, struct job *j, int lockfd)
{
	struct shep s = { .key = key, .j = j, .root = geteuid() == 0, .lockfd = lockfd };
	struct shep_start st;
	struct shep_clock clock;
	sigset_t waitset;
	struct rusage ru;
	struct job_rusage jru;
	char *limit;
	const char *why;
	int status;
	pid_t pid;
	int64_t start_ms;
	struct msg_child_term end;

	shep_become(key, lockfd, &waitset);

	/* No pid file: execd knows we live by the lock on our folder, which
	 * it took before starting us and which dies with us. */
	s.dir = execd_path("active/%s", key);
	s.sge_root = sge_root_find();

	if ((why = shep_make_tmpdir(&s)) != NULL)
		shep_failed(&s, why);
	if (JOB_PARALLEL(j) && (why = pe_part_prepare(s.dir, j, s.tmpdir, s.root, &s.pe)) != NULL)
		shep_failed(&s, why);
	/* A -pe job's script runs once, on the master host (Grid Engine's);
	 * -n N runs one copy per host (GLUnix's glurun). */
	s.hold = j->pe && s.pe.part > 0 && !s.pe.petask;
	if (j->script && (why = shep_write_script(&s)) != NULL)
		shep_failed(&s, why);
	/* Staging: the job runs in a fresh directory holding its inputs.  Of
	 * a parallel job, only the parts that run the script (-pe: the master
	 * host's; -n: each) get them, not the slots held for qrsh -inherit
	 * nor its tasks; part 0 alone sends outputs back (below). */
	if ((j->stage_in || j->stage_out) && !s.hold && !s.pe.petask) {
		bool host_fault = false;
		if ((why = stage_in_run(j, key, s.root, &s.wd, &host_fault)) != NULL)
			shep_end_as(&s, host_fault, why);
		free(j->cwd);
		j->cwd = xstrdup(s.wd);
	}
	if (j->qrsh) {
		/* No client, no job: it ends failed with the reason, not in Eqw,
		 * since running it again could find no client either. */
		static struct qrsh_link link;
		char qwhy[SHEP_WHY_MAX];
		if (qrsh_open(&link, j, s.pe.petask ? 0 : s.pe.part, s.root, qwhy, sizeof qwhy) < 0)
			shep_end_as(&s, false, qwhy);
		s.qrsh = &link;
	}
	shep_start_prepare(&s, &st);
	if (st.why[0])
		shep_failed(&s, st.why);
	shep_limits_prepare(&s, &st);
	start_ms = now_ms();
	shep_clock_start(&clock, &j->req);
	pid = shep_spawn(&s, &st);
	if (st.cgroup_fd >= 0)
		close(st.cgroup_fd);
	if (s.qrsh)
		qrsh_started(s.qrsh, pid);
	if (pid < 0)
		shep_failed(&s, "cannot fork the job");
	/* vfork returns once the child has exec'd or given up. */
	if (st.why[0]) {
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		shep_failed(&s, st.why);
	}

	shep_register(&s, pid, start_ms);

	status = shep_wait_job(&s, &clock, pid, &waitset, &ru);
	/* Like Grid Engine and Slurm, the job's end is the end of its whole
	 * process group: nothing it left behind keeps running. */
	kill(-pid, SIGKILL);
	limit = shep_limit_reason(&s, &clock, status, &ru);
	/* The client hears of the end before the master: qrsh's latency.  Not
	 * a qrsh -inherit task's client, which may start the next task at once,
	 * in a slot the master must know free by then. */
	if (s.qrsh && !s.pe.petask)
		shep_qrsh_finish(&s, status);

	rusage_from_sys(&jru, &ru);
	/* qacct's maxvmem: the whole job's peak where its cgroup keeps it,
	 * else the largest resident size of one of its processes (qacct(1)). */
	jru.maxvmem = s.cgroup ? limits_cgroup_peak(s.cgroup) : 0;
	if (!jru.maxvmem)
		jru.maxvmem = (int64_t)ru.ru_maxrss * 1024;
	end = (struct msg_child_term){
	    .exit_status = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status),
	    .signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0,
	    .utime = jru.utime, .stime = jru.stime, .maxrss_kb = ru.ru_maxrss,
	    .end_time = now_ms(), .rusage = rusage_to_json(&jru), .limit = limit };
	shep_note_vacated(&s, &end);
	/* Outputs are on the master before the end is in the outbox. */
	if (s.wd && s.pe.part == 0)
		stage_out_run(j, s.wd, s.root, &end);
	shep_record_end(&s, &end);
	if (s.qrsh && s.pe.petask)
		shep_qrsh_finish(&s, status);
	/* end's lists and texts are not freed: we exit, and freeing would
	 * only touch (and so fault in) pages of the heap for nothing. */
	shep_end_leftovers(key);
	shep_remove_tmpdir(&s);
	if (s.cgroup)
		limits_cgroup_remove(s.cgroup);
	_exit(0);
}

void NOWQ_NORETURN
shepherd_usage(void)
{
	fprintf(stderr, "usage: " SHEPHERD_PROGRAM " -s SPOOL -n HOST -t TMPDIR -k KILL_GRACE "
	    "-v LOG_LEVEL -L LOCKFD [-a AUTH] [-m MUNGE_SOCKET] [-c CGROUP_PARENT] [-l LOG_FILE] "
	    "[-M MASTERS] -- ID.TASK.ATTEMPT\n"
	    "       " SHEPHERD_PROGRAM " " STARTER_OPTION " -s SPOOL -S LISTEN_FD [-v LOG_LEVEL] [-l LOG_FILE]\n"
	    "(started by execd; not for running by hand)\n");
	exit(2);
}

int
shepherd_int_arg(const char *s, int lo, int hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		shepherd_usage();
	return (int)v;
}

/*
 * One job's shepherd, from its arguments: what it needs of execd.ini (the
 * spool, the host name, the parent of TMPDIRs, kill_grace, the log, the
 * cgroup parent when h_vmem uses cgroups, and the auth method and munge
 * socket a qrsh job's connection back needs), the descriptor of the
 * attempt's folder that execd has flocked (-L, or lockfd when the starter
 * received it), and the attempt's key; the job is the folder's job.json,
 * which execd wrote and checked.  A job.json it cannot read is execd's
 * fault, not the job's: we exit without an end, and execd's safety net
 * reports "shepherd died".
 */
void
shepherd_run(int argc, char **argv, int lockfd)
{
	static struct execd_conf shep_conf;
	struct stat st;
	const char *why = NULL;
	char *path, *text;
	json_t *jobj;
	json_error_t jerr;
	struct job *j;
	int ch;

	conf = &shep_conf;
	shep_conf.kill_grace = LIMITS_KILL_GRACE;
	shep_conf.auth = (char *)"none";
	optind = 0;    /* the starter's child parses after the starter did */
	while ((ch = getopt(argc, argv, "s:n:t:k:v:L:a:m:c:l:M:")) != -1) {
		switch (ch) {
		case 's': shep_conf.spool_dir = optarg; break;
		case 'n': shep_conf.name = optarg; break;
		case 't': shep_conf.tmpdir = optarg; break;
		case 'k': shep_conf.kill_grace = shepherd_int_arg(optarg, 0, INT_MAX / 1000); break;
		case 'v': execd_log_level = shepherd_int_arg(optarg, 0, 100); break;
		case 'L': lockfd = shepherd_int_arg(optarg, 3, INT_MAX); break;
		case 'a':
			if (strcmp(optarg, "none") && strcmp(optarg, "munge"))
				shepherd_usage();
			shep_conf.auth = optarg;
			break;
		case 'm':
			shep_conf.munge_socket = optarg;
			setenv("MUNGE_SOCKET", optarg, 1);
			break;
		case 'M':
			/* The client library's masters: staged files' transfers. */
			if (*optarg)
				setenv("NOWQ_MASTER", optarg, 1);
			break;
		case 'c': limits_cgroup_parent = optarg; break;
		case 'l': execd_log_path = optarg; break;
		default: shepherd_usage();
		}
	}
	/* The lock must be an open folder: without it execd could not tell
	 * that we live. */
	if (optind != argc - 1 || !shep_conf.spool_dir || !shep_conf.name ||
	    !shep_conf.tmpdir || lockfd < 3 || strchr(argv[optind], '/') ||
	    strlen(argv[optind]) >= ATTEMPT_KEY_MAX || fstat(lockfd, &st) < 0 ||
	    !S_ISDIR(st.st_mode))
		shepherd_usage();

	path = execd_path("active/%s/job.json", argv[optind]);
	text = read_file(path, PROTO_MAX_FRAME, NULL, &why);
	jobj = text ? json_loads(text, 0, &jerr) : NULL;
	if (text && !jobj)
		why = jerr.text;
	j = jobj ? job_from_json(jobj, &why) : NULL;
	if (!j) {
		log_init("shepherd", execd_log_level, execd_log_path);
		fatalx("job %s: cannot use %s: %s", argv[optind], path, why ? why : "unreadable");
	}
	free(text);
	json_decref(jobj);
	free(path);
	shepherd_main(argv[optind], j, lockfd);
}

/*
 * The program nowq-shepherd: the starter (--starter, starter.c), which
 * forks a shepherd for each job execd hands it; one shepherd started by
 * execd itself where there is no starter; or, as a job's command, the
 * holder of a -pe job's slots off its master host (--hold).
 */
int
main(int argc, char **argv)
{
	/* A part that holds a -pe job's slots off its master host waits here,
	 * as the job's owner, until the job's end kills it. */
	if (argc == 2 && strcmp(argv[1], "--hold") == 0)
		for (;;)
			pause();
	/* jansson would read /dev/urandom for its hash seed; what we parse
	 * comes from execd, so any seed will do. */
	json_object_seed((size_t)getpid());
	if (argc >= 2 && strcmp(argv[1], STARTER_OPTION) == 0)
		starter_main(argc, argv);
	shepherd_run(argc, argv, -1);
	return 1;
}
