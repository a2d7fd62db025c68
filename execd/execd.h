/* execd.h: the exec daemon's shared declarations, sectioned by the file that defines them. */
#ifndef NOWQ_EXECD_H
#define NOWQ_EXECD_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

#include <sys/ioctl.h>

#include <jansson.h>

#include "common/common.h"

struct event_base;

/* An attempt is named ID.TASK.ATTEMPT everywhere: its active/ folder, its
 * outbox files, its TMPDIR. */
#define ATTEMPT_KEY_MAX 64

/* Seconds between safety-net scans of active/ and outbox/. */
#define EXECD_SCAN_INTERVAL 10

/* conf.c: execd.ini (common/execdconf.c reads it). */
/* Returns NULL after printing "execd: FILE:LINE: problem" on a bad file. */
struct execd_conf *conf_load(const char *path);
void               conf_free(struct execd_conf *c);

/* main.c: start-up, the event loop and the periodic duties. */
extern struct event_base *base;
extern bool   execd_idle;        /* the latest idle verdict */
extern char   execd_why[256];    /* and its reason */
/* The spool has too little room for another job: the host takes no work
 * (whatever its owner does: running jobs go on), and says why. */
extern bool   execd_full;
extern char   execd_full_why[160];
extern double execd_load[3];     /* the latest load averages */
/* Decides idleness again now, applies owner_returns to running jobs, and
 * reports LOAD when report is set or the verdict changed. */
void  execd_decide(bool report);

/* records.c: what execd and its shepherd program both write in the spool
 * (both link it; the shepherd fills conf from its arguments). */
struct sockaddr_un;
extern struct execd_conf *conf;
extern char  *execd_log_path;    /* where this process logs (NULL: stderr) */
extern int    execd_log_level;
/* SPOOL/<fmt...>, allocated. */
char *execd_path(const char *fmt, ...) NOWQ_ATTR_PRINTF(1, 2);
/* Writes a file of our own folder in one write, without a temporary name:
 * only for files nobody reads while they are written, or whose readers take
 * an empty file for an absent one.  Sets errno and returns -1 on failure. */
int   execd_write_file(const char *path, const char *text, int mode, bool durable);
/* An attempt's key ID.TASK.ATTEMPT, its folder's and its events' name;
 * parsing takes only the canonical spelling. */
/* An attempt's key ID.TASK.ATTEMPT, or ID.TASK.ATTEMPT.PETASK for a task
 * qrsh -inherit started under a parallel job's attempt. */
struct akey {
	int64_t id;
	int     task, attempt, petask;
};
bool    active_key_parse(const char *s, struct akey *k);
void    active_key(char *buf, size_t len, int64_t id, int task, int attempt, int petask);
#define OUTBOX_REG  "reg"
#define OUTBOX_TERM "term"
/* Writes SPOOL/outbox/KEY.KIND.json atomically; durable: synced too. */
int     outbox_write(const char *key, const char *kind, const json_t *msg, bool durable);
/* Syncs an event outbox_write wrote not durable; 0 also when it is gone
 * (ACKed).  Sets errno and returns -1 on failure. */
int     outbox_sync(const char *key, const char *kind);
bool    outbox_has(const char *key, const char *kind);
/* The CHILD_TERM message for an attempt, from its end: how it ended
 * (the attempt's own fields are taken from key). */
struct msg_child_term;
json_t *outbox_term_msg(const char *key, const struct msg_child_term *end);
/* A job's start is recorded once, in active/KEY/job.pid ("PID PROC_START
 * START_MS"); its outbox event SPOOL/outbox/KEY.reg is a second name of
 * that file, so a job start allocates no inode for it.  -1 (errno) when
 * the link cannot be made, e.g. an outbox on another file system. */
int     outbox_link_reg(const char *key);
/* The CHILD_REGISTER message of KEY from job.pid's text; NULL if malformed. */
json_t *outbox_reg_msg(const char *key, const char *text);
/* The wake-up socket's address, which execd binds. */
socklen_t outbox_notify_addr(struct sockaddr_un *sun);
/* Shepherd side: wakes execd (if running) with "KEY WHAT". */
void    outbox_notify(const char *key, const char *what);
/* The kernel's start time of pid (clock ticks since boot) from /proc; false
 * when the process is gone or a zombie.  Tells a live pid from a reused one. */
bool    shepherd_proc_start(pid_t pid, unsigned long long *start);
/* A started job's job.pid: "PID PROC_START START_MS SHEPHERD_PID TMPDIR"
 * (the last two absent in what older shepherds wrote). */
struct job_pid {
	pid_t               pid;        /* the job's leader: its group and session */
	unsigned long long  start;      /* its start in /proc, 0 if unknown */
	long long           start_ms;
	pid_t               shepherd;   /* 0 if unknown */
	char                tmpdir[PATH_MAX];  /* "" if unknown */
};
bool    job_pid_parse(const char *text, struct job_pid *jp);
/* A process as /proc/PID/stat names it and its kin. */
struct proc_ids {
	pid_t pid, ppid, pgrp, session;
};
/* Sends sig to every process match accepts; returns how many it reached. */
int     proc_kill_where(bool (*match)(const struct proc_ids *p, void *arg), void *arg, int sig);
/* Removes a job's TMPDIR, what is inside as the job's owner (j's ids). */
void    execd_tmpdir_remove(const char *path, const struct job *j);

/* link.c: the connection to the master: connect in order with backoff,
 * HELLO and REGISTER, LOAD, PULL, and the master's messages. */
void    link_start(void);
void    link_stop(void);
bool    link_ready(void);             /* connected and registered */
int64_t link_last_heard(void);        /* mono ms of the master's last frame */
const char *link_master(void);        /* the masters entry we are registered with, else NULL */
/* We voted for epoch: drop a link to a master of an older one and connect
 * to candidate (its masters entry) first. */
void    link_fence(int64_t epoch, const char *candidate);
/* Is the master that answered our HELLO (rep) on fd the daemon identity
 * (root, our own user or admin_user)?  Its munge credential must carry
 * nonce, our HELLO's.  0, or -1 with why.  Also for the witness links. */
int     link_master_ok(int fd, bool is_unix, const json_t *rep, const char *nonce, char *why, size_t n);
/* Sends msg (stolen) with a fresh seq; returns the seq, or -1 when down. */
int64_t link_send(json_t *msg);
/* Sends PULL if idle with free slots and no PULL (with this many free) is
 * outstanding.  Called whenever one of those may have changed. */
void    link_kick(void);
/* The LOAD timer's report, after execd_idle and execd_load were updated. */
void    link_load(void);

/* idle.c: is the host idle?  The one place idle policies are decided, as
 * pure functions of the readings, so tests can drive them with any clock. */
enum { IDLE_CMD_UNKNOWN, IDLE_CMD_IDLE, IDLE_CMD_BUSY };
struct idle_inputs {
	time_t  now;
	bool    load_known;
	double  np_load;          /* 1-minute load average per processor */
	time_t  last_input;       /* latest access of an input device; 0: none */
	int     nusers;           /* users logged in */
	char    user[64];         /* the first of them */
	int     command;          /* IDLE_CMD_*: the last finished site command */
	char    command_why[64];  /* e.g. "(exit status 1)" */
};
bool idle_decide(const struct execd_conf *c, const struct idle_inputs *in, char *why, size_t whylen);
bool idle_in_windows(const struct idle_window *w, int n, time_t now);
const char *idle_owner_returns_name(enum owner_returns o);

/* sense.c: the readers that fill struct idle_inputs from the host: the load
 * average, input devices, utmp, and the site command run in the background. */
/* Fills load[3] and returns the verdict, with a sentence in why. */
bool idle_check(double load[3], char *why, size_t whylen);
/* Starts the site command unless a run is under way. */
void sense_command_start(void);
/* SIGCHLD: true if pid was the site command (its verdict is taken). */
bool sense_command_reaped(pid_t pid, int status);
/* Whether pid is the site command under way. */
bool sense_command_is(pid_t pid);
/* False until the site command (if any) has answered once. */
bool sense_ready(void);
void sense_stop(void);

/* active.c: the attempts this host holds, one folder each in SPOOL/active/. */
struct job;
int     active_init(void);            /* first scan at start-up */
void    active_free_all(void);
int     active_count(void);
int     active_free_slots(void);
/* A job object from DISPATCH: spool it, then start its shepherd. */
void    active_start(const json_t *jobj);
void    active_signal(int64_t id, int task, int attempt, int sig);
/* Notes from a shepherd: its job has started ("reg") or ended ("term");
 * from the starter: a shepherd ended abnormally ("gone"). */
void    active_note(const char *key, const char *what);
/* The master holds the attempt's CHILD_TERM: forget it, the slot is free. */
void    active_remove(const char *key);
/* SIGCHLD: true if pid was a shepherd that is our child (one we started,
 * or one a dead starter left us); its job is checked. */
bool    active_reaped(pid_t pid, int status);
/* Kills every child of execd that is neither a shepherd nor the site
 * command: what the job of a dead shepherd left (execd is a subreaper). */
void    active_kill_strays(void);
/* Safety net: dead shepherds without an exit, exits without a term event. */
void    active_check(void);
/* Applies owner_returns to every running job after a verdict: suspend or
 * vacate while busy, continue suspended ones when idle again. */
void    active_owner(bool idle, const char *why);
json_t *active_jobs_json(void);       /* [{id, task, attempt}, ...] for REGISTER */
json_t *active_stopped_json(void);    /* the same, of those owner_returns holds stopped, for LOAD */
/* Adds the SHA-256 of every staged input of the attempts held to need. */
void    active_stage_needs(json_t *need);

/* cache.c: SPOOL/stage/, the host's cache of staged inputs, kept within
 * stage_cache_max (doc/staging.md).  The shepherd holds STAGE_CACHE_LOCK
 * shared while it fetches and places its inputs; execd trims under it
 * exclusive. */
#define STAGE_CACHE_LOCK "stage/cache.lock"
void    cache_trim(void);

/* shepherd.c: a job's shepherd (the program nowq-shepherd, whose main
 * says what it is given), forked by the starter or started by execd. */
#define SHEPHERD_PROGRAM "nowq-shepherd"
/* Runs one job's shepherd from its arguments; lockfd: the attempt's flocked
 * folder, or -1 to take it from -L. */
void    shepherd_run(int argc, char **argv, int lockfd) NOWQ_NORETURN;
void    shepherd_usage(void) NOWQ_NORETURN;
int     shepherd_int_arg(const char *s, int lo, int hi);

/* starter.c: the starter (nowq-shepherd --starter), one per host, which
 * forks each job's shepherd on execd's order through SPOOL/starter.sock. */
#define STARTER_OPTION    "--starter"
#define STARTER_SOCKET    "starter.sock"
#define STARTER_PID       "starter.pid"
#define STARTER_ARGS_MAX  32
#define STARTER_MSG_MAX   8192
/* The note a shepherd's abnormal end sends execd (see active_note). */
#define STARTER_NOTE_GONE "gone"
void    starter_main(int argc, char **argv) NOWQ_NORETURN;

/* spawn.c: execd's side: the starter, found again or started, and each
 * job's shepherd started through it (else by vfork and exec). */
/* Finds the shepherd program beside execd's own, else in SBINDIR; -1
 * after printing why when there is none. */
int     spawn_find(void);
void    spawn_init(void);            /* finds or starts the starter */
void    spawn_stop(void);
/* The shepherd's pid for the attempt whose folder dirfd is (flocked): > 0;
 * 0 when the starter went away before answering (the lock tells whether
 * the shepherd runs); -1 when it could not be started. */
pid_t   spawn_shepherd(const char *key, int dirfd);
bool    spawn_is_starter(pid_t pid);
/* SIGCHLD: true if pid was the starter we started. */
bool    spawn_reaped(pid_t pid, int status);

/* qrsh.c: a qrsh job's streams (job.qrsh set): the shepherd connects back
 * to the waiting client, proves itself (the job's secret, and a munge
 * credential with auth = munge), takes its START (pty or pipes, window
 * size), and relays between the client and the job until the job ends. */
struct qrsh_link {
	int64_t        id;
	int            sock;          /* to the client; -1 once it is gone */
	int            in_fd;         /* the job's stdin (pipe, or the pty master) */
	int            pty_fd;        /* the pty master, open until the job has ended; else -1 */
	int            out_fd, err_fd;/* the job's stdout and stderr; -1 at their end */
	int            child[3];      /* the job's ends, until it started */
	int            sigfd;         /* SIGCHLD and SIGTERM */
	bool           pty, in_eof, gone;
	bool           eof_typed;     /* pty: the end of stdin went in as its EOF character */
	int            in_last;       /* pty: the last byte of stdin so far, -1 before any */
	pid_t          pid;
	struct winsize ws;
	struct qrsh_buf tx, rx, in;   /* to the client, from it, for the job's stdin */
};
/* Connects and handshakes; -1 with why when the client cannot be reached or
 * refuses us (the job must not start then). */
int  qrsh_open(struct qrsh_link *q, const struct job *j, int part, bool root, char *why, size_t whylen);
/* In the job's (vfork) child, after setsid: the streams become 0, 1, 2. */
int  qrsh_child_stdio(const struct qrsh_link *q);
void qrsh_started(struct qrsh_link *q, pid_t pid);
/* The shepherd's wait for the job, relaying meanwhile: returns SIGCHLD or
 * SIGTERM when one came, 0 after timeout_ms (< 0: none). */
int  qrsh_wait(struct qrsh_link *q, int64_t timeout_ms);
/* After the job's end: the rest of its output, then its exit for the client. */
void qrsh_finish(struct qrsh_link *q, int exit_status, int sig);

/* limits.c: h_vmem by cgroup v2 or RLIMIT_AS, and the words of a limit's end. */
#define LIMITS_VMEM_CGROUP  "cgroup"
#define LIMITS_VMEM_RLIMIT  "rlimit"
extern const char *limits_vmem_mode;   /* one of the two, for REGISTER */
extern char       *limits_cgroup_parent; /* set when the mode is "cgroup" */
/* At start-up: chooses the mode (see limits.c); why says how or why not. */
const char *limits_probe(const char *parent, char *why, size_t whylen);
void    limits_size_str(int64_t bytes, char *buf, size_t len);
int64_t limits_oom_count(const char *events);
/* PARENT/nowq.KEY.PID with memory.max; *procs_fd open on its cgroup.procs. */
char   *limits_cgroup_create(const char *parent, const char *key, int64_t bytes,
            int *procs_fd, char *why, size_t whylen);
bool    limits_cgroup_oom(const char *dir);
int64_t limits_cgroup_peak(const char *dir);
/* The setrlimit calls a request asks for: its s_ and h_ pairs of complex.c
 * (RLIMIT_AS from s_vmem, and h_vmem unless a cgroup takes it; RLIMIT_CPU
 * from s_cpu and h_cpu, whose hard side comes grace seconds late so SIGXCPU
 * is sent first).  A side not asked keeps the current value, so an
 * unprivileged execd never tries to raise one.  How many were written. */
#define LIMITS_NRLIMIT 6
struct limits_rlimit {
	int           resource;
	const char   *name;      /* "h_vmem", for a failure's words */
	struct rlimit rl;
};
int     limits_rlimits(const struct job_req *r, bool vmem_by_cgroup, int64_t grace,
            struct limits_rlimit *out);
void    limits_cgroup_remove(const char *dir);
/* Grid Engine's wall clock signals: SIGUSR1 at s_rt and again every
 * LIMITS_SOFT_RESEND_MS while the job runs; SIGKILL at h_rt, but never
 * within LIMITS_SOFT_RESEND_MS of the last SIGUSR1 (ms, one clock). */
#define LIMITS_SOFT_RESEND_MS (90 * 1000)
int64_t limits_rt_kill_at(int64_t hard_at, int64_t last_usr1);

/* outbox.c: CHILD_REGISTER/CHILD_TERM events, kept as files until ACKed
 * (records.c writes them). */
int     outbox_init(void);            /* binds the wake-up socket */
void    outbox_shutdown(void);
void    outbox_flush(void);           /* sends what the master has not got yet */
void    outbox_ack(int64_t seq);
void    outbox_link_down(void);

/* witness.c: the failover witness: votes for a standby that lost the primary. */
void    witness_start(void);
void    witness_stop(void);
int64_t witness_epoch(void);          /* the highest epoch voted for; 0: none */
/* The primary's heartbeat named its last sequence: a candidate for a later
 * epoch must have it (the primary may have acknowledged it without a standby). */
void    witness_saw_seq(int64_t seq);
void    witness_alive(const char *addr);  /* heard master addr on the registered link */
int64_t witness_heard(void);          /* the highest sequence a primary announced */       /* what was in flight must be sent again */

/* pe.c: a parallel job's part on this host. */
struct pe_part {
	int   part;      /* NOWQ_VNN: 0 on the master host */
	int   nhosts;
	int   slots;     /* the job's slots on this host */
	int   petask;    /* a qrsh -inherit task's number, or 0 for the part */
	char *hostfile;  /* TMPDIR/pe_hostfile */
};
/* Reads part and pe_hosts from the attempt's job.json in dir and writes
 * the PE_HOSTFILE into tmpdir; a reason when it cannot. */
const char *pe_part_prepare(const char *dir, const struct job *j, const char *tmpdir, bool root,
    struct pe_part *pp);

/* jobenv.c: a job's environment, with Grid Engine's variables (qsub(1)). */
struct jobenv {
	const struct job     *j;
	const char           *tmpdir, *script, *spool_dir, *cwd, *sge_root;
	const char           *out, *err;   /* SGE_STDOUT_PATH, SGE_STDERR_PATH (out when joined) */
	const char           *in;          /* SGE_STDIN_PATH: -i's file; NULL: /dev/null */
	const struct pe_part *pe;          /* nhosts 0: not a parallel job's part */
};
/* NULL-terminated; out_slot: the indexes of the SGE_STDOUT_PATH and
 * SGE_STDERR_PATH entries. */
char      **jobenv_build(const struct jobenv *e, size_t out_slot[2]);
const char *jobenv_owner(const struct job *j);  /* the owner's name, else the uid */
const char *jobenv_name(const struct job *j);   /* the job's name, else "nowq" */

/* stage.c: the shepherd's file staging (doc/staging.md). */
/* The inputs fetched (through the host's cache) into a fresh working
 * directory, *wd, the job owner's; NULL, or why the job cannot start,
 * with *host_fault set when this host is to blame (its cache, its disk,
 * its link to the master) rather than the master (a file missing or
 * corrupt there). */
const char *stage_in_run(const struct job *j, const char *key, bool root, char **wd,
    bool *host_fault);
/* The --stage-out patterns (and the default output files) sent to the
 * master; exit gets staged_out, and limit on a refusal. */
void        stage_out_run(const struct job *j, const char *wd, bool root, struct msg_child_term *end);

#endif
