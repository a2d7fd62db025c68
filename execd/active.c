/* active.c: the job attempts this host holds, each a folder in SPOOL/active/, and its shepherd. */
#include "config.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/queue.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/msg.h"
#include "execd/execd.h"

/* Exit status reported for an attempt that never ran (the shell's "cannot
 * execute"); the master keys on "failed", not on this number. */
#define ACTIVE_FAILED_STATUS 127

struct attempt {
	TAILQ_ENTRY(attempt) entry;
	char     key[ATTEMPT_KEY_MAX];
	int64_t  id;
	int      task, attempt;
	int      petask;     /* a qrsh -inherit task of the attempt's part, or 0 */
	int      slots;      /* a parallel job's part may hold several; its tasks none */
	pid_t    shepherd;     /* its pid (our child if we started it or a dead starter
	                        * left it to us); 0 if unknown (an earlier execd's) */
	int      pending_sig;  /* a SIGNAL that came before the job had started */
	bool     ended;        /* the shepherd has recorded the end */
	bool     owner_stopped;  /* SIGSTOPped by owner_returns = suspend */
	bool     vacating;       /* SIGTERMed by owner_returns = vacate */
	struct event *kill_ev;   /* the SIGKILL at the end of vacate_grace */
};

static void active_check_one(struct attempt *a, pid_t shepherd);

static TAILQ_HEAD(, attempt) attempts = TAILQ_HEAD_INITIALIZER(attempts);
static int nattempts;
static int nslots_used;

static struct attempt *
active_find(const char *key)
{
	struct attempt *a;
	TAILQ_FOREACH(a, &attempts, entry)
		if (strcmp(a->key, key) == 0)
			return a;
	return NULL;
}

static struct attempt *
active_add(const struct akey *k)
{
	struct attempt *a = xcalloc(1, sizeof *a);
	a->id = k->id;
	a->task = k->task;
	a->attempt = k->attempt;
	a->petask = k->petask;
	/* A task runs in the slots its job holds here. */
	a->slots = k->petask ? 0 : 1;
	active_key(a->key, sizeof a->key, k->id, k->task, k->attempt, k->petask);
	TAILQ_INSERT_TAIL(&attempts, a, entry);
	nattempts++;
	nslots_used += a->slots;
	return a;
}

static void
active_forget(struct attempt *a)
{
	TAILQ_REMOVE(&attempts, a, entry);
	nattempts--;
	nslots_used -= a->slots;
	if (a->kill_ev)
		event_free(a->kill_ev);
	free(a);
}

int
active_count(void)
{
	return nattempts;
}

int
active_free_slots(void)
{
	return conf->slots > nslots_used ? conf->slots - nslots_used : 0;
}

void
active_free_all(void)
{
	struct attempt *a;
	while ((a = TAILQ_FIRST(&attempts)) != NULL)
		active_forget(a);
}

json_t *
active_jobs_json(void)
{
	json_t *arr = json_array();
	struct attempt *a;
	/* A task lives and dies with its part, which the master knows. */
	TAILQ_FOREACH(a, &attempts, entry)
		if (!a->petask)
			json_array_append_new(arr, msg_attempt_pack(&(struct msg_attempt){ a->id, a->task,
			    a->attempt }));
	return arr;
}

/* The attempts owner_returns = suspend holds stopped, for every LOAD: the
 * master shows them T instead of r. */
json_t *
active_stopped_json(void)
{
	json_t *arr = json_array();
	struct attempt *a;
	TAILQ_FOREACH(a, &attempts, entry)
		if (a->owner_stopped && !a->ended && !a->petask)
			json_array_append_new(arr, msg_attempt_pack(&(struct msg_attempt){ a->id, a->task,
			    a->attempt }));
	return arr;
}

/* Records an end without a run: the durable CHILD_TERM carrying the reason,
 * for the master's Eqw.  Like a shepherd's, that event is the one record of
 * the end. */
static void
active_fail(const char *key, const char *reason)
{
	json_t *term;

	term = outbox_term_msg(key, &(struct msg_child_term){ .exit_status = ACTIVE_FAILED_STATUS,
	    .end_time = now_ms(), .failed = reason });
	outbox_write(key, OUTBOX_TERM, term, true);
	json_decref(term);
}

/*
 * DISPATCH of one job.  The attempt's folder and job.json exist before
 * anything runs, so an execd restarted at any moment knows the attempt, and
 * a job cannot start without its host being able to report it.  They are
 * not synced: they only need to outlive execd, not the host.  A host that
 * crashes takes its jobs with it, and whether the folder made it to disk
 * only decides how the master hears of the loss: "shepherd died" from the
 * folder, or "execd no longer knows it" when REGISTER does not list the
 * attempt; either way the attempt is requeued or failed.  What must
 * survive the host is the end of a job that did run: the CHILD_TERM event,
 * which is synced.  job.json needs no temporary name: its folder is new and
 * nobody reads the file before the shepherd.
 *
 * The folder is flocked before the shepherd starts and the shepherd inherits
 * the lock (through the starter, or directly: see spawn.c), and keeps it
 * from its job (close-on-exec), so "locked" means "its shepherd lives" with
 * no pid file and no moment in which a live shepherd has not said so yet.
 */
void
active_start(const json_t *jobj)
{
	char key[ATTEMPT_KEY_MAX], *dir, *path, *text;
	const char *why = NULL;
	struct msg_dispatch_job dj;
	struct attempt *a = NULL;
	struct job *j;
	pid_t pid = -1;
	int dirfd = -1;

	msg_dispatch_job_unpack(jobj, &dj, &why);
	j = dj.job;
	if (!j) {
		int64_t id = dj.a.id, task = dj.a.task, attempt = dj.a.attempt;
		if (id < 0 || task < 0 || task > INT32_MAX || attempt < 0 || attempt > INT32_MAX) {
			log_warnx("DISPATCH carries a job this host cannot identify: %s", why);
			return;
		}
		active_key(key, sizeof key, id, (int)task, (int)attempt, (int)dj.pe.petask);
		log_warnx("job %s from the master is unusable: %s", key, why);
		if (!active_find(key))
			active_fail(key, why);
		outbox_flush();
		return;
	}
	active_key(key, sizeof key, j->id, j->task, j->attempt, (int)dj.pe.petask);
	if (active_find(key)) {
		/* Running an attempt twice is the one thing never allowed. */
		log_warnx("job %s is already on this host; ignoring the repeated DISPATCH", key);
		job_free(j);
		return;
	}
	if (active_free_slots() <= 0 && !dj.pe.petask)
		log_warnx("job %s dispatched with no free slot (%d slots); starting it anyway",
		    key, conf->slots);

	dir = execd_path("active/%s", key);
	if (mkdir(dir, 0711) < 0) {
		bool dup = errno == EEXIST;
		log_warn("cannot create %s", dir);
		if (!dup)
			active_fail(key, "cannot create the job's spool folder");
		goto out;
	}
	a = active_add(&(struct akey){ j->id, j->task, j->attempt, (int)dj.pe.petask });
	if (JOB_PARALLEL(j) && !dj.pe.petask) {
		/* A parallel job's part holds its slots on this host. */
		struct msg_pe_host ph;
		const json_t *h;
		size_t i;
		json_array_foreach(dj.pe.pe_hosts, i, h) {
			msg_pe_host_unpack(h, &ph);
			if (ph.host && strcmp(ph.host, conf->name) == 0 && ph.slots > 1 && ph.slots <= JOB_MAX_SLOTS) {
				nslots_used += (int)ph.slots - 1;
				a->slots = (int)ph.slots;
			}
		}
	}
	if ((dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    flock(dirfd, LOCK_EX | LOCK_NB) < 0) {
		log_warn("cannot lock %s", dir);
		active_fail(key, "cannot lock the job's spool folder");
		goto out;
	}
	path = execd_path("active/%s/job.json", key);
	text = json_dumps(jobj, JSON_COMPACT);
	if (!text || execd_write_file(path, text, 0600, false) < 0) {
		log_warn("cannot write %s", path);
		active_fail(key, "cannot write the job to the spool");
		free(text);
		free(path);
		goto out;
	}
	free(text);
	free(path);

	if ((pid = spawn_shepherd(key, dirfd)) < 0) {
		active_fail(key, "cannot start the shepherd");
		goto out;
	}
	a->shepherd = pid;
	log_info("job %s (%s, owner %s) handed to shepherd %d", key,
	    j->name ? j->name : "-", j->owner ? j->owner : "-", (int)pid);
out:
	if (dirfd >= 0)
		close(dirfd);
	/* A starter that died with the order: only the lock can tell
	 * whether the shepherd runs. */
	if (dirfd >= 0 && pid == 0)
		active_check_one(a, 0);
	outbox_flush();
	job_free(j);
	free(dir);
}

/* The attempt's job.pid, written by its shepherd once the job started. */
static bool
active_job_pid(const char *key, struct job_pid *jp)
{
	char *path = execd_path("active/%s/job.pid", key);
	const char *why;
	char *text = read_file(path, PATH_MAX + 128, NULL, &why);
	bool ok = text && job_pid_parse(text, jp);

	free(path);
	free(text);
	return ok;
}

/* The job's process group, once its shepherd has seen it start; 0 before,
 * or when its leader's pid now belongs to another process. */
static pid_t
active_job_pgid(const char *key)
{
	struct job_pid jp;
	unsigned long long have;

	if (!active_job_pid(key, &jp))
		return 0;
	/* A dead leader is fine: its group lives on in what it left behind,
	 * and the kernel reuses no pid that still names a group. */
	if (jp.start && shepherd_proc_start(jp.pid, &have) && have != jp.start)
		return 0;
	return jp.pid;
}

static bool
active_in_session(const struct proc_ids *p, void *arg)
{
	pid_t sid = *(pid_t *)arg;
	return p->session == sid && p->pgrp != sid;
}

/* The processes of session sid outside its leader's process group: a job
 * whose shell runs pipelines with job control puts them in groups of their
 * own, and qmod -s must stop those too. */
static void
active_kill_session(pid_t sid, int sig)
{
	proc_kill_where(active_in_session, &sid, sig);
}

static void
active_kill(struct attempt *a, int sig)
{
	pid_t pgid = active_job_pgid(a->key);

	if (pgid == 0)
		return;
	/* The job leads its own session (the shepherd's setsid), so its group
	 * and session ids are its pid. */
	if (kill(-pgid, sig) < 0)
		log_warn("job %s: cannot send signal %d to process group %d", a->key, sig, (int)pgid);
	else
		log_info("job %s: sent signal %d to process group %d", a->key, sig, (int)pgid);
	active_kill_session(pgid, sig);
}

/* A SIGNAL names a part: it reaches the part's qrsh -inherit tasks too. */
void
active_signal(int64_t id, int task, int attempt, int sig)
{
	struct attempt *a;
	bool found = false;

	TAILQ_FOREACH(a, &attempts, entry) {
		if (a->id != id || a->task != task || a->attempt != attempt)
			continue;
		found = true;
		if (a->ended || outbox_has(a->key, OUTBOX_TERM)) {
			log_info("SIGNAL %d for job %s, which has already ended: ignored", sig, a->key);
			continue;
		}
		if (active_job_pgid(a->key) == 0) {
			/* Not started yet: the shepherd's "reg" note delivers it. */
			log_info("job %s has not started yet; signal %d will follow its start", a->key, sig);
			a->pending_sig = sig;
			continue;
		}
		active_kill(a, sig);
	}
	if (!found)
		log_warnx("SIGNAL %d for job %" PRId64 ".%d.%d, which is not on this host: ignored", sig,
		    id, task, attempt);
}

void
active_note(const char *key, const char *what)
{
	struct attempt *a = active_find(key);

	if (!a) {
		log_debug("note \"%s\" for job %s, which is not on this host", what, key);
		return;
	}
	if (strcmp(what, OUTBOX_REG) == 0) {
		if (a->pending_sig)
			active_kill(a, a->pending_sig);
		a->pending_sig = 0;
		/* A DISPATCH may cross a busy verdict on the wire: a job that
		 * starts on a busy host gets owner_returns at once. */
		if (!execd_idle)
			active_owner(false, execd_why);
	} else if (strcmp(what, OUTBOX_TERM) == 0) {
		a->ended = true;
		a->pending_sig = 0;
	} else if (strcmp(what, STARTER_NOTE_GONE) == 0 && !a->ended) {
		active_check_one(a, 0);
	}
}

void
active_remove(const char *key)
{
	struct attempt *a = active_find(key);
	char *dir = execd_path("active/%s", key);

	if (spool_rmtree(dir) < 0 && errno != ENOENT)
		log_warn("cannot remove %s", dir);
	free(dir);
	if (a) {
		log_debug("job %s is done on this host", key);
		active_forget(a);
		link_kick();
		/* Its inputs may go from the cache now. */
		cache_trim();
	}
}

/* The end of vacate_grace: whatever of the job ignored SIGTERM goes now. */
static void
active_vacate_kill_cb(evutil_socket_t fd, short what, void *arg)
{
	struct attempt *a = arg;

	if (a->ended || outbox_has(a->key, OUTBOX_TERM))
		return;
	log_info("job %s: still running %d s after SIGTERM; killing it", a->key, conf->vacate_grace);
	active_kill(a, SIGKILL);
}

/*
 * Vacate: the reason goes into the attempt's folder first, where the
 * shepherd finds it when the job ends and puts it in CHILD_TERM as
 * "vacated"; then SIGTERM, and SIGKILL after vacate_grace.  A job not yet
 * started gets the SIGTERM when it starts, like a SIGNAL would.
 */
static void
active_vacate(struct attempt *a, const char *why)
{
	char *path = execd_path("active/%s/vacated", a->key);
	char *text = xasprintf("owner returned (%s)", why);
	struct timeval tv = { conf->vacate_grace, 0 };

	if (execd_write_file(path, text, 0600, false) < 0)
		log_warn("cannot write %s", path);
	log_info("job %s: vacating: %s", a->key, text);
	free(path);
	free(text);
	a->vacating = true;
	if (active_job_pgid(a->key) == 0)
		a->pending_sig = SIGTERM;
	else
		active_kill(a, SIGTERM);
	if (!a->kill_ev)
		a->kill_ev = evtimer_new(base, active_vacate_kill_cb, a);
	evtimer_add(a->kill_ev, &tv);
}

/* Suspend and continue.  The mark in the folder lets an execd restarted
 * while the host is busy still continue the job when it turns idle. */
static void
active_suspend(struct attempt *a, bool stop)
{
	char *mark = execd_path("active/%s/suspended", a->key);

	if (stop) {
		if (execd_write_file(mark, "owner_returns\n", 0600, false) < 0)
			log_warn("cannot write %s", mark);
		active_kill(a, SIGSTOP);
	} else {
		active_kill(a, SIGCONT);
		if (unlink(mark) < 0 && errno != ENOENT)
			log_warn("cannot remove %s", mark);
	}
	a->owner_stopped = stop;
	free(mark);
}

void
active_owner(bool idle, const char *why)
{
	struct attempt *a;

	/* "Busy" until the site command first answers holds back new work,
	 * but must not stop or kill the jobs an execd finds when it restarts. */
	if (!idle && !sense_ready())
		return;
	TAILQ_FOREACH(a, &attempts, entry) {
		if (a->ended)
			continue;
		if (a->owner_stopped && (idle || conf->owner_returns != OWNER_SUSPEND)) {
			/* Idle again, or the policy changed across a restart. */
			log_info("job %s: continuing: host is idle again", a->key);
			active_suspend(a, false);
		}
		if (idle || conf->owner_returns == OWNER_FINISH)
			continue;
		if (conf->owner_returns == OWNER_SUSPEND && !a->owner_stopped &&
		    active_job_pgid(a->key) != 0) {
			log_info("job %s: suspending: %s", a->key, why);
			active_suspend(a, true);
		} else if (conf->owner_returns == OWNER_VACATE && !a->vacating) {
			active_vacate(a, why);
		}
	}
}

/* Alive means: a process holds the lock on the attempt's folder, which
 * only its shepherd does (see active_start).  A shepherd that is our child
 * is asked the same way: the starter's are not, and a zombie holds no lock. */
static bool
active_shepherd_alive(struct attempt *a)
{
	char *path;
	int fd;
	bool alive;

	path = execd_path("active/%s", a->key);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(path);
	if (fd < 0)
		return false;
	alive = flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK;
	close(fd);
	return alive;
}

static bool
active_is_stray(const struct proc_ids *p, void *arg)
{
	struct attempt *a;

	if (p->ppid != *(pid_t *)arg || sense_command_is(p->pid) || spawn_is_starter(p->pid))
		return false;
	TAILQ_FOREACH(a, &attempts, entry)
		if (a->shepherd == p->pid)
			return false;
	return true;
}

/*
 * execd is a subreaper (main.c), so what the job of a dead shepherd left
 * (the job itself, the daemons it detached with setsid, which its process
 * group and session no longer hold) became our children.  execd starts no
 * children but the starter, shepherds (where the starter cannot be had, and
 * a dead starter's) and the site command: any other is such a leftover.  Called at a shepherd's death and whenever such a child is
 * reaped, since each death hands us its children.  A shepherd of an earlier
 * execd is not our child, nor are its orphans: for those, only the job's
 * group, session and cgroup are killed.
 */
void
active_kill_strays(void)
{
	pid_t self = getpid();
	int n = proc_kill_where(active_is_stray, &self, SIGKILL);

	if (n > 0)
		log_info("killed %d process%s left by a job whose shepherd died", n,
		    n == 1 ? "" : "es");
}

/* The attempt's job, from its job.json; NULL with why. */
static struct job *
active_job_read(const char *key, const char **why)
{
	char *path = execd_path("active/%s/job.json", key), *text;
	json_t *jobj = NULL;
	struct job *j = NULL;

	*why = "not JSON";
	if ((text = read_file(path, PROTO_MAX_FRAME, NULL, why)) != NULL &&
	    (jobj = json_loads(text, 0, NULL)) != NULL)
		j = job_from_json(jobj, why);
	json_decref(jobj);
	free(text);
	free(path);
	return j;
}

/* Every staged input of the attempts this host holds, running or not yet
 * started, as keys of need. */
void
active_stage_needs(json_t *need)
{
	struct attempt *a;
	const char *why;
	struct stage_file f;
	size_t i;
	json_t *v;

	TAILQ_FOREACH(a, &attempts, entry) {
		struct job *j = a->petask ? NULL : active_job_read(a->key, &why);
		if (!j)
			continue;
		json_array_foreach(j->stage_in, i, v) {
			stage_file_unpack(v, &f);
			if (f.sha256)
				json_object_set_new(need, f.sha256, json_true());
		}
		job_free(j);
	}
}

/* The job's TMPDIR, removed as its owner (job.json says who); only a
 * folder where execd makes TMPDIRs is taken from job.pid. */
static void
active_remove_tmpdir(const char *key, const char *tmpdir)
{
	char *prefix = xasprintf("%s/nowq.", conf->tmpdir);
	const char *why = NULL;
	struct job *j;

	if (strncmp(tmpdir, prefix, strlen(prefix)) != 0 || strstr(tmpdir, "/../") ||
	    strchr(tmpdir + strlen(prefix), '/')) {
		log_warnx("job %s: TMPDIR %s is not execd's; leaving it", key, tmpdir);
		free(prefix);
		return;
	}
	free(prefix);
	if ((j = active_job_read(key, &why)) != NULL)
		execd_tmpdir_remove(tmpdir, j);
	else
		log_warnx("job %s: cannot read its job.json to remove its TMPDIR %s: %s", key, tmpdir,
		    why);
	job_free(j);
}

/*
 * A shepherd died before recording its job's end.  What the job left is
 * killed (its group and session, our stray children, its cgroup) and its
 * TMPDIR removed.  A job that had started ran under no supervision from
 * then on: its end is reported as killed ("lost", which the master treats
 * like a lost host's: run again only when rerunnable).  One that had not
 * started could not start ("failed").  shepherd: its pid if we reaped it.
 */
static void
active_lost(struct attempt *a, pid_t shepherd)
{
	struct job_pid jp;
	bool started = active_job_pid(a->key, &jp);
	char key[ATTEMPT_KEY_MAX];
	json_t *term;

	log_warnx("job %s: its shepherd died before recording the end%s", a->key,
	    started ? "; killing what is left of the job" : "");
	if (started)
		active_kill(a, SIGKILL);
	active_kill_strays();
	if (started && jp.shepherd)
		shepherd = jp.shepherd;
	/* Its cgroup (h_vmem) would outlive it too: the shepherd removes it
	 * at the end it never reached. */
	if (limits_cgroup_parent && shepherd > 0) {
		char *cg = xasprintf("%s/nowq.%s.%d", limits_cgroup_parent, a->key, (int)shepherd);
		if (access(cg, F_OK) == 0)
			limits_cgroup_remove(cg);
		free(cg);
	}
	if (!started) {
		active_fail(a->key, "shepherd died before the job started");
		return;
	}
	if (jp.tmpdir[0])
		active_remove_tmpdir(a->key, jp.tmpdir);
	snprintf(key, sizeof key, "%s", a->key);
	term = outbox_term_msg(key, &(struct msg_child_term){ .exit_status = 128 + SIGKILL,
	    .signal = SIGKILL, .end_time = now_ms(), .lost = "shepherd died; the job was killed" });
	outbox_write(key, OUTBOX_TERM, term, true);
	json_decref(term);
}

/* The safety net for one attempt; see active_check.  shepherd: the pid of
 * the shepherd just reaped, or 0. */
static void
active_check_one(struct attempt *a, pid_t shepherd)
{
	char *dir = execd_path("active/%s", a->key);
	struct stat st;

	if (stat(dir, &st) < 0) {
		log_warnx("job %s: its folder %s has gone; forgetting it", a->key, dir);
		free(dir);
		active_forget(a);
		return;
	}
	free(dir);
	/* The event is asked for again after the shepherd is found dead:
	 * one that wrote it and died between the two questions is no
	 * shepherd that "died before recording the end". */
	if (outbox_has(a->key, OUTBOX_TERM) || active_shepherd_alive(a) ||
	    outbox_has(a->key, OUTBOX_TERM))
		return;
	active_lost(a, shepherd);
	a->ended = true;
}

/*
 * The safety net behind the shepherds, at start-up, every
 * EXECD_SCAN_INTERVAL seconds and when a shepherd we started exits:
 *  - an attempt whose shepherd is dead and that has no CHILD_TERM event
 *    (the durable record of its end) gets one (active_lost);
 *  - one whose folder was removed by hand is forgotten (its slot is free).
 */
void
active_check(void)
{
	struct attempt *a, *next;
	for (a = TAILQ_FIRST(&attempts); a; a = next) {
		next = TAILQ_NEXT(a, entry);
		active_check_one(a, 0);
	}
}

bool
active_reaped(pid_t pid, int status)
{
	struct attempt *a;

	TAILQ_FOREACH(a, &attempts, entry)
		if (a->shepherd == pid)
			break;
	if (!a)
		return false;
	a->shepherd = 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		log_warnx("shepherd %d of job %s ended abnormally (%s %d)", (int)pid, a->key,
		    WIFSIGNALED(status) ? "signal" : "exit status",
		    WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	active_check_one(a, pid);
	outbox_flush();
	return true;
}

int
active_init(void)
{
	char *dir = execd_path("active");
	DIR *d = opendir(dir);
	struct dirent *e;
	struct attempt *a;
	char *mark;
	struct akey k;

	if (!d) {
		log_warn("cannot read %s", dir);
		free(dir);
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (!active_key_parse(e->d_name, &k)) {
			log_warnx("ignoring %s/%s: not a job attempt folder", dir, e->d_name);
			continue;
		}
		a = active_add(&k);
		log_info("job %s is still in the spool", e->d_name);
		mark = execd_path("active/%s/suspended", e->d_name);
		a->owner_stopped = access(mark, F_OK) == 0;
		free(mark);
	}
	closedir(d);
	free(dir);
	active_check();
	return 0;
}
