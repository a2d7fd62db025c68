/* common.h: what every nowq program links: logging, helpers, protocol and the job record. */
#ifndef NOWQ_COMMON_H
#define NOWQ_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <jansson.h>

#define NOWQ_ATTR_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define NOWQ_NORETURN __attribute__((noreturn))

/* log.c */
enum log_level { LOG_LVL_ERR = 0, LOG_LVL_WARN, LOG_LVL_INFO, LOG_LVL_DEBUG };
void log_init(const char *tag, int level, const char *path);
/* The same, but the file is opened by the first line written: a process
 * that usually says nothing (a shepherd) never opens it. */
void log_init_lazy(const char *tag, int level, const char *path);
int  log_level_parse(const char *name); /* -1 when unknown */
void log_warn(const char *fmt, ...) NOWQ_ATTR_PRINTF(1, 2);   /* adds strerror(errno) */
void log_warnx(const char *fmt, ...) NOWQ_ATTR_PRINTF(1, 2);
void log_info(const char *fmt, ...) NOWQ_ATTR_PRINTF(1, 2);
void log_debug(const char *fmt, ...) NOWQ_ATTR_PRINTF(1, 2);
void fatal(const char *fmt, ...) NOWQ_ATTR_PRINTF(1, 2) NOWQ_NORETURN;
void fatalx(const char *fmt, ...) NOWQ_ATTR_PRINTF(1, 2) NOWQ_NORETURN;
void log_reopen(void);
/* Where fatal errors go besides the log while a daemon starts (-1: nowhere). */
void log_starter_fd(int fd);

/* util.c */
void   *xmalloc(size_t n);
void   *xcalloc(size_t n, size_t m);
void   *xrealloc(void *p, size_t n);
/* Prefaults [p, p + n) for writing when n is at least MEM_POPULATE_MIN. */
#define MEM_POPULATE_MIN (64 * 1024)
void    mem_populate(void *p, size_t n);
/* A mapping of at least n bytes in huge pages where the kernel has them,
 * for a block filled at once; *got is its size. */
void   *mem_big(size_t n, size_t *got);
void    mem_big_free(void *p, size_t got);
char   *xstrdup(const char *s);
char   *xstrndup(const char *s, size_t n);
char   *xasprintf(const char *fmt, ...) NOWQ_ATTR_PRINTF(1, 2);
/* A pseudo variable of a path and its text: the shepherd's $JOB_ID in -o,
 * libdrmaa's $drmaa_wd_ph$. */
struct str_var {
	const char *name, *value;
};
/* in with each name replaced by its value (the first of vars that matches
 * at a place).  A NULL value refuses the name: NULL, with *bad naming it. */
char   *str_expand(const char *in, const struct str_var *vars, size_t n, const char **bad);
/* v's decimal digits, written to end where buf[INT_TEXT_LEN] ends:
 * their start (no NUL).  Without printf, for listings of many numbers. */
#define INT_TEXT_LEN 24
char   *int_text(char buf[INT_TEXT_LEN], int64_t v);
int64_t now_ms(void);            /* wall clock, milliseconds since the epoch */
void    fmt_when(char *buf, size_t n, int64_t ms); /* "14:00:00" today, else with the date */
int64_t mono_ms(void);           /* monotonic clock, milliseconds */
int64_t mono_us(void);           /* monotonic clock, microseconds */
/* 1 to max characters, each a letter, a digit, - . or _ (host names,
 * aliases, reservations). */
bool    name_chars_ok(const char *s, size_t max);
int     set_nonblock(int fd);
int     set_cloexec(int fd);
uint64_t hash_fnv1a64(const void *p, size_t n);
/* Base64 of n bytes (malloc'd text); decoding gives NULL on bad input. */
char    *b64_encode(const void *data, size_t n);
void    *b64_decode(const char *s, size_t *n);
int     parse_hostport(const char *s, char **host, int *port); /* "host:port" or "[v6]:port" */
struct addrinfo;
int     resolve_hostport(const char *addr, struct addrinfo **res);
/* All N bytes to fd, going on after EINTR (and EAGAIN, by poll); 0 or -1. */
int     write_full(int fd, const void *p, size_t n);
/* A blocking TCP connection to AI, given up after timeout_ms (a dead host
 * costs that, not the kernel's minutes); -1 and *why. */
int     connect_timed(const struct addrinfo *ai, int timeout_ms, const char **why);
/* localhost, ::1 or 127.*: a listener or peer only this host reaches. */
bool    host_is_loopback(const char *host);
char   *read_file(const char *path, size_t max, size_t *len, const char **why); /* NUL-terminated */
const char *my_hostname(void);   /* short host name, cached */
/* Reads a pid file; 0 when absent or the process is gone. */
pid_t   pidfile_read_live(const char *path);
/* The length in bytes (1 to 4) of the valid UTF-8 character s starts
 * with; 0 at the end of s or when s does not start one. */
size_t  utf8_char_len(const char *s);
/* Makes s valid UTF-8 in place, as JSON needs: a character cut off at the
 * end (a truncation) is dropped, any other byte that is not UTF-8 becomes
 * '?'. */
void    utf8_scrub(char *s);
/* src with every control character, and every byte that is not UTF-8,
 * written as \n, \t, \r or \xNN, so that a text someone else chose (a job
 * name, a path, a peer's message) stays on one line of a log, an error or a
 * listing, and is valid UTF-8.  The first writes at most dstlen - 1 bytes
 * (cut, never mid-escape nor mid-character); the second allocates. */
void    text_oneline_to(char *dst, size_t dstlen, const char *src);
char   *text_oneline(const char *src);
void    strv_free(char **v);     /* NULL-terminated vector */
size_t  strv_len(char *const *v);
char  **strv_dup(char *const *v);
void    strv_push(char ***v, char *s);   /* appends s, taken over */

/* sgeroot.c: Grid Engine's names for where nowq runs: ARC and SGE_ROOT. */
const char *sge_arch(void);                   /* this host's, e.g. "lx-amd64" */
const char *sge_arch_of(const char *machine); /* uname's machine to Grid Engine's name */
char       *exe_dir(void);                    /* the running program's folder, or NULL */
char       *sge_root_find(void);              /* malloc'd; see sgeroot.c */
#define SGE_CELL_NAME "default"

/* cron.c: cron(8) schedules. */
struct cron_sched {
	uint64_t min, hour, dom, mon, dow;   /* bit per allowed value */
	bool     dom_star, dow_star;         /* the day field was "*" */
};
/* "MIN HOUR DOM MON DOW" or @hourly/@daily/@weekly/@monthly/@yearly;
 * -1 with a one-line message in err. */
int    cron_parse(const char *spec, struct cron_sched *c, char *err, size_t errlen);
/* The first time after `after` the schedule fires, in local time; -1 if it
 * never does (February 30th). */
time_t cron_next(const struct cron_sched *c, time_t after);

/* mail.c: mail about jobs. */
struct job;
#define MAIL_BEGIN   0x1u   /* -m b */
#define MAIL_END     0x2u   /* -m e */
#define MAIL_ABORT   0x4u   /* -m a: failed, deleted, or requeued */
#define MAIL_SUSPEND 0x8u   /* -m s */
enum mail_event { MAIL_EV_BEGIN, MAIL_EV_END, MAIL_EV_ABORT, MAIL_EV_SUSPEND };
/* "bea", "n": -1 on another letter. */
int   mail_flags_parse(const char *s, unsigned *flags);
bool  mail_valid_address(const char *a);
/* The whole message (headers and body) for one event of j, allocated. */
char *mail_compose(enum mail_event ev, const struct job *j, const char *to, const char *from,
    int64_t now);
/* A message to the managers (admin_mail): a subject and a body. */
char *mail_compose_admin(const char *to, const char *from, const char *subject, const char *body,
    int64_t now);

/* jtext.c: JSON written straight into text, for large replies. */
struct jtext {
	char   *buf;
	size_t  len, cap;
};
void  jt_raw(struct jtext *t, const char *s, size_t n);
void  jt_lit(struct jtext *t, const char *s);
void  jt_int(struct jtext *t, int64_t v);
void  jt_str(struct jtext *t, const char *s);     /* NULL: null */
void  jt_key(struct jtext *t, const char *k, bool first);
char *jt_steal(struct jtext *t, size_t *len);    /* the text; t is empty again */

/* daemon.c: going to the background only once ready, so a starter knows it worked. */
/* Closes every descriptor but 0, 1 and 2: a daemon keeps nothing it inherited. */
/* Forks unless foreground; the child gets its own session.  Returns a token
 * to pass to daemon_ready (-1 in the foreground).  The parent waits and exits
 * 0 when the child calls daemon_ready, 1 if the child exits first. */
void daemon_close_inherited(void);
/* Freed memory stays with the daemon (up to 256 MiB) instead of the kernel. */
void daemon_malloc_keep(void);
int  daemon_begin(bool foreground);
/* Writes the pid file (if path), detaches stdio, and releases the parent. */
void daemon_ready(int token, const char *pidfile);

/* nodeset.c: node-set expressions (host, alias and reservation names,
 * @all, | & - ! and parentheses), parsed once, tested per host.  Pure: names
 * mean what the caller's resolver says. */
struct nodeset;
/* Does the name in an expression denote host?  The seam for aliases and
 * reservation names; NULL means names are host names. */
typedef bool (*nodeset_name_fn)(void *arg, const char *name, const char *host);
typedef bool (*nodeset_known_fn)(void *arg, const char *name);
/* NULL with a one-line err on a syntax error. */
struct nodeset *nodeset_parse(const char *expr, char *err, size_t errlen);
void            nodeset_free(struct nodeset *n);
bool            nodeset_is_all(const struct nodeset *n);
bool            nodeset_contains(const struct nodeset *n, const char *host, nodeset_name_fn fn, void *arg);
/* The first name known() does not know, or NULL. */
const char     *nodeset_unknown(const struct nodeset *n, nodeset_known_fn known, void *arg);
/* Does the expression name name (to find the jobs tied to a reservation)? */
bool            nodeset_names(const struct nodeset *n, const char *name);

/* qrsh.c: the stream between a qrsh client and its job's shepherd (the
 * data path of qrsh, never through the master; doc/protocol.md).  A frame
 * is a type byte, a 4-byte big-endian length and at most QRSH_PAYLOAD_MAX
 * bytes. */
#define QRSH_HEADER       5
#define QRSH_PAYLOAD_MAX  65536
#define QRSH_DATA_CHUNK   16384    /* what one read of a job's pipe or stdin takes */
/* What either end queues for the other before it stops reading its own
 * sources (the job's pipes, the local stdin): flow control. */
#define QRSH_QUEUE_MAX    (4 * QRSH_DATA_CHUNK)
#define QRSH_AUTH_PAYLOAD "nowq:qrsh:"   /* a shepherd's credential: this and the secret */
enum qrsh_frame {
	QRSH_F_HELLO  = 'H',   /* shepherd: JSON {secret, cred?, host, part, id} */
	QRSH_F_START  = 'A',   /* client: JSON {pty, rows, cols, term?}: accepted, start the job */
	QRSH_F_STDIN  = 'I',   /* client: bytes for the job's stdin */
	QRSH_F_EOF    = 'i',   /* client: stdin ended */
	QRSH_F_SIGNAL = 'S',   /* client: "SIG", a number to send to the job's process group */
	QRSH_F_WINCH  = 'W',   /* client: "ROWS COLS" of its terminal */
	QRSH_F_STDOUT = 'O',   /* shepherd: bytes the job wrote to stdout (or its pty) */
	QRSH_F_STDERR = 'E',   /* shepherd: bytes the job wrote to stderr */
	QRSH_F_EXIT   = 'X',   /* shepherd: "STATUS SIGNAL": the job ended (STATUS 128+SIG if killed) */
};
struct qrsh_buf {
	char   *p;
	size_t  len, off, cap;  /* bytes [off, len) are pending */
};
#define QRSH_PENDING(b) ((b)->len - (b)->off)
void qrsh_buf_free(struct qrsh_buf *b);
void qrsh_buf_add(struct qrsh_buf *b, const void *data, size_t n);  /* raw bytes */
void qrsh_buf_frame(struct qrsh_buf *b, int type, const void *data, size_t n);
/* Writes what is pending without blocking (fd non-blocking): 0, or -1 when
 * the peer is gone. */
int  qrsh_buf_flush(struct qrsh_buf *b, int fd);
/* One read of at most max bytes: 1 (data, or nothing yet), 0 at the end, -1 on error. */
int  qrsh_buf_fill(struct qrsh_buf *b, int fd, size_t max);
/* The next whole frame of b (data borrowed from b until its next change):
 * 1, 0 when incomplete, -1 when it announces more than QRSH_PAYLOAD_MAX. */
int  qrsh_frame_take(struct qrsh_buf *b, int *type, const char **data, size_t *n);
bool qrsh_signal_ok(int sig);
/* The JSON of a HELLO frame (packed as text); unpack borrows from o, with
 * part -1 and id 0 when absent. */
struct qrsh_hello {
	const char *secret, *host;
	const char *cred;      /* NULL: none (auth = none) */
	int64_t     part, id;
};
char *qrsh_hello_pack(const struct qrsh_hello *m);
void  qrsh_hello_unpack(const json_t *o, struct qrsh_hello *m);
/* The JSON of a START frame: a pty of rows x cols, or pipes. */
struct qrsh_start {
	bool    pty;
	bool    has_size;
	int64_t rows, cols;    /* 0 when absent */
};
char *qrsh_start_pack(const struct qrsh_start *m);
void  qrsh_start_unpack(const json_t *o, struct qrsh_start *m);

/* auth.c: how a peer's identity is known: munge credentials over TCP,
 * SO_PEERCRED on unix sockets, a loopback socket's owner for auth = none. */
#define AUTH_CRED_MAX     4096   /* longer than any munge credential of a HELLO */
#define AUTH_NONCE_BYTES  16
/* The payloads a credential must carry, so one made for another program
 * (or another step of ours) is no HELLO: */
#define AUTH_PAYLOAD_CLIENT "nowq:hello:client"
#define AUTH_PAYLOAD_EXECD  "nowq:hello:execd"     /* also an execd's witness link */
#define AUTH_PAYLOAD_PEER   "nowq:hello:peer"      /* a master to the other (replication, probes) */
#define AUTH_PAYLOAD_MASTER "nowq:master:"   /* followed by the execd's nonce */
/* The munge socket: the configured one, else $MUNGE_SOCKET, else NULL
 * (libmunge's default). */
const char *auth_munge_socket(const char *configured);
/* A credential carrying payload (allocated), or NULL with a sentence in err. */
char   *auth_munge_encode(const char *sock, const char *payload, char *err, size_t errlen);
/* Decodes cred: 0 with *uid and *gid, or -1 with a sentence in err saying
 * whether it was replayed, expired, invalid (forged or another key) or not
 * made for want_payload (NULL: any payload). */
int     auth_munge_decode(const char *sock, const char *cred, const char *want_payload,
            uid_t *uid, gid_t *gid, char *err, size_t errlen);
/* 2 * AUTH_NONCE_BYTES hex digits and a NUL, from getrandom. */
void    auth_nonce(char *buf, size_t n);
/* The uid owning the other end of a loopback TCP connection, or -1. */
int64_t auth_loopback_peer_uid(int fd);
/* Its two ways, by the connection's ends as getpeername and getsockname
 * give them (exported for t/unit/test_auth.c): the kernel's sock_diag for
 * that one socket (AUTH_UID_UNKNOWN when netlink cannot answer), and the
 * scan of /proc/net/tcp or tcp6.  Both -1 when no such socket exists. */
#define AUTH_UID_UNKNOWN    (-2)
struct sockaddr_storage;
int64_t auth_peer_uid_diag(const struct sockaddr_storage *peer, const struct sockaddr_storage *me);
int64_t auth_peer_uid_proc(const struct sockaddr_storage *peer, const struct sockaddr_storage *me);
/* The uid running the master that answered a daemon's HELLO on fd: the
 * kernel's word on a unix socket or (method none) a loopback connection,
 * else the munge credential in its reply, which must carry
 * AUTH_PAYLOAD_MASTER and our HELLO's nonce (made for this connection, not
 * replayed from another).  -1 with a sentence in err. */
int64_t auth_master_uid(int fd, bool is_unix, const char *method, const char *sock, const json_t *rep,
            const char *nonce, char *err, size_t errlen);

/* proto.c: frames are a 4-byte big-endian length and one JSON object. */
#define PROTO_VERSION       1
#define PROTO_MAX_FRAME     (16u * 1024 * 1024)
#define PROTO_DEFAULT_PORT  7444

/*
 * Message types.  Every message is a JSON object with "type"; requests carry
 * "seq", and replies ("REPLY") carry the request's "seq", "ok", and on failure
 * "error" (machine code) and "message" (a sentence for a person).  The fields
 * of each message are described in doc/protocol.md, next to this table.
 */
enum msg_type {
	MSG_UNKNOWN = 0,
	/* any peer */
	MSG_HELLO, MSG_REPLY,
	/* client requests */
	MSG_SUBMIT, MSG_STATUS, MSG_DELETE, MSG_HOLD, MSG_RELEASE, MSG_WAIT,
	MSG_HOSTS, MSG_ACCT,
	/* execd to master */
	MSG_REGISTER, MSG_LOAD, MSG_PULL, MSG_CHILD_REGISTER, MSG_CHILD_TERM,
	/* master to execd */
	MSG_DISPATCH, MSG_SIGNAL, MSG_ACK,
	/* client requests of the scheduler (qalter, qconf) */
	MSG_ALTER, MSG_CONF,
	/* cron entries (qstat --cron, qdel/qhold/qrls cN) */
	MSG_CRON,
	/* qmod */
	MSG_DISABLE, MSG_ENABLE, MSG_SUSPEND, MSG_UNSUSPEND, MSG_CLEAR,
	/* host lists and reservations */
	MSG_RESERVE, MSG_UNRESERVE, MSG_ALIAS,
	/* qrsh -inherit: a task of a running parallel job */
	MSG_INHERIT,
	/* file staging (qmaster/stage.c) */
	MSG_STAGE_PUT, MSG_STAGE_GET,
	/* replication and failover (qmaster/repl.c, qmaster/failover.c) */
	MSG_PROBE, MSG_SYNC, MSG_SNAPSHOT, MSG_CHANGESET, MSG_APPLIED, MSG_HEARTBEAT,
	MSG_VOTE_REQUEST, MSG_VOTE, MSG_MASTERS, MSG_TAKEOVER,
	/* staged files to the standby (qmaster/stage_repl.c) */
	MSG_STAGE_BLOB, MSG_STAGE_STORED, MSG_STAGE_OFFER, MSG_STAGE_WANT,
	MSG_NTYPES
};
const char     *msg_type_name(enum msg_type t);
enum msg_type   msg_type_lookup(const char *name);
enum msg_type   msg_type_of(const json_t *msg);
/* The envelope every message has: its type as sent (NULL when absent, for
 * logs), and its seq (absent when it has none). */
const char     *msg_type_text(const json_t *msg);
int64_t         msg_seq_of(const json_t *msg, int64_t absent);
void            msg_seq_set(json_t *msg, int64_t seq);
/* A job listing: a STATUS without "jobs", what qstat asks first, which a
 * master answers in its query thread (qmaster/reader.c). */
bool            proto_is_listing(const json_t *msg);

/* Error codes carried in a REPLY's "error". */
#define ERR_PROTO     "protocol"
#define ERR_AUTH      "auth"
#define ERR_PERM      "permission"
#define ERR_NOENT     "noent"
#define ERR_INVAL     "invalid"
#define ERR_LIMIT     "limit"
#define ERR_INTERNAL  "internal"
/* Not the writable master: ask the next one (reply field "master" may name it). */
#define ERR_REDIRECT  "redirect"
/* The master's spool is full: nothing of the request was kept; try again later. */
#define ERR_NOSPACE   "nospace"
#define ERR_NOSPACE_MSG "no space left on the master's spool"

struct evbuffer;
struct event_base;
/* gone.c: is nothing listening at a master's "host:port" any more?  cb
 * once, from the loop, refused true only when the host reset a new
 * connection (its process is gone); -1 when addr does not resolve. */
typedef void gone_cb(void *arg, bool refused);
int gone_probe(struct event_base *base, const char *addr, int timeout_ms, gone_cb *cb, void *arg);
/* Encodes msg as one frame appended to buf; -1 (and *why) when too large. */
int proto_frame_append(struct evbuffer *buf, const json_t *msg, size_t max, const char **why);
/* The same for a message already written as JSON text (n bytes at s). */
int proto_frame_append_text(struct evbuffer *buf, const char *s, size_t n, size_t max, const char **why);
/* The same for a text of malloc's, taken: sent in place, not copied (a
 * listing's megabyte), and freed once written (at once when refused). */
int proto_frame_append_taken(struct evbuffer *buf, char *s, size_t n, size_t max, const char **why);
/* Takes one whole frame off buf: 1 and *msg when one was there, 0 when more
 * bytes are needed, -1 with *why when the stream is broken (oversized frame,
 * malformed JSON, not an object, no type).  Never allocates more than max. */
int proto_frame_take(struct evbuffer *buf, json_t **msg, size_t max, const char **why);
/* Blocking I/O for clients: whole frames on a socket; timeout_ms < 0 waits forever. */
int proto_send_fd(int fd, const json_t *msg);
int proto_recv_fd(int fd, json_t **msg, int timeout_ms, const char **why);
/* n raw bytes into p (those after a frame that announces them, msg_raw_bytes). */
int proto_recv_raw(int fd, void *p, size_t n, int timeout_ms, const char **why);
/* A frame in memory: the 4-byte big-endian length of n, then s, written at
 * dst (n + 4 bytes); returns n + 4. */
size_t   proto_frame_put(char *dst, const char *s, size_t n);
/* The payload length a frame's 4-byte prefix at p says. */
uint32_t proto_frame_len(const void *p);
/* Decodes one frame's payload; NULL with *why unless it is an object with a type. */
json_t *proto_decode(const char *data, size_t n, const char **why);
/* The same for a frame of proto_frame_buf's, which it takes (a brief
 * listing's rows may keep it: msg_job_rows_decode). */
json_t *proto_decode_taken(char *data, size_t n, const char **why);
/* Room for a frame's n bytes and the NUL after them, which ends a brief
 * listing's scans; a large one in huge pages.  Freed by
 * proto_frame_buf_free only. */
char   *proto_frame_buf(size_t n);
void    proto_frame_buf_free(char *data);
/* Builders for replies. */
json_t *proto_reply_ok(int64_t seq);
json_t *proto_reply_err(int64_t seq, const char *code, const char *fmt, ...) NOWQ_ATTR_PRINTF(3, 4);
/* An ERR_REDIRECT refusal naming the primary (master may be NULL). */
json_t *proto_reply_redirect(int64_t seq, const char *master, const char *fmt, ...) NOWQ_ATTR_PRINTF(3, 4);
/* A JSON string of s made valid UTF-8 (utf8_scrub), for texts that quote
 * users' input: never NULL, as json_string of a cut character would be. */
json_t *proto_text(const char *s);

/* json accessors that tolerate absent fields (input is never trusted). */
const char *jstr(const json_t *o, const char *key);          /* NULL unless a string */
int64_t     jint(const json_t *o, const char *key, int64_t dflt);
bool        jbool(const json_t *o, const char *key, bool dflt);
/* A NULL-terminated string list as a JSON array (NULL: empty).  A string
 * that is not UTF-8 is left out with skip_bad, else it is *bad and the
 * result NULL. */
json_t     *strv_json(char *const *v, bool skip_bad, const char **bad);

/* job.c: the job record as the master stores it and as it travels. */
enum job_state {
	JS_PENDING = 0,     /* qw: waiting for a host */
	JS_DISPATCHED = 1,  /* t: sent to an execd, not yet confirmed started */
	JS_RUNNING = 2,     /* r */
	JS_DONE = 3,        /* ended with exit status 0 */
	JS_FAILED = 4,      /* ended non-zero, by signal, or could not start */
	JS_DELETED = 5,     /* removed by qdel before or while running */
};
#define JS_FINISHED(s) ((s) >= JS_DONE)
#define HOLD_USER 0x1u   /* qhold, qsub -h */
#define HOLD_DEP  0x2u   /* waits for other jobs (-hold_jid, -W depend) */
#define HOLD_TIME 0x4u   /* waits for its start time (qsub -a) */
#define HOLD_OPERATOR 0x8u  /* qalter -h o: an operator's hold */
#define HOLD_SYSTEM 0x10u   /* qalter -h s: a manager's hold */

/* complex.c: Grid Engine's default complex list and nowq's use of each
 * attribute.  The limits a request may set with setrlimit, by index: */
enum req_lim {
	REQ_S_VMEM, REQ_S_DATA, REQ_H_DATA, REQ_S_STACK, REQ_H_STACK, REQ_S_FSIZE,
	REQ_H_FSIZE, REQ_S_CORE, REQ_H_CORE, REQ_S_CPU, REQ_NLIM, REQ_NOLIM = -1
};
enum cx_type { CX_STRING, CX_HOST, CX_INT, CX_DOUBLE, CX_BOOL, CX_MEMORY, CX_TIME };
/* Enforced on the host, used to pick the host, or only kept and shown. */
enum cx_use { CX_NOT_REQUESTABLE, CX_ENFORCED, CX_MATCHED, CX_RECORDED };
struct cx_attr {
	const char  *name, *shortcut;
	enum cx_type type;
	const char  *relop;
	bool         requestable, consumable;
	const char  *deflt;
	int          urgency;
	enum cx_use  use;
	const char  *how;        /* how it is enforced or matched; NULL: recorded */
	int          lim;        /* its enum req_lim, or REQ_NOLIM */
};
extern const struct cx_attr complex_attrs[];
extern const size_t complex_nattrs;
/* By name or shortcut; NULL for a name the list lacks. */
const struct cx_attr *complex_find(const char *name);
const struct cx_attr *complex_of_lim(int lim);
const char *complex_use_name(enum cx_use u);
/* qconf -sc: Grid Engine's layout, with a last column saying nowq's use. */
void complex_print(FILE *fp);

/* req.c: a job's resource request (qsub -l) and Grid Engine's notations. */
struct job_req {
	int64_t   mem;           /* mem=: bytes of host memory at least; 0: any */
	char     *arch;          /* arch=: the host's architecture */
	char    **keys;          /* words the host must declare (-l matlab) */
	char     *hosts;         /* hosts=: a node-set expression */
	bool      exclusive;     /* exclusive: the whole host */
	int64_t   h_rt, s_rt;    /* wall clock, seconds; 0: none */
	int64_t   h_cpu;         /* CPU seconds; 0: none */
	int64_t   h_vmem;        /* bytes of address space; 0: none */
	char     *ar;            /* qsub -ar: the reservation the job runs in */
	char     *qname;         /* q=: the queue asked in the request (qsub makes it the job's) */
	char     *hard_queue;    /* -q as given (QUEUE, QUEUE@HOSTS): Grid Engine's hard requested queue */
	int       slots;         /* slots=N: the job's N slots all on one host; 0: not asked */
	int64_t   lim[REQ_NLIM]; /* s_vmem, h_data, ...: setrlimit values */
	unsigned  lim_set;       /* bit 1 << REQ_*: lim[i] was asked (0 is a limit too) */
	char    **asked;         /* "NAME=VALUE" as asked, Grid Engine's full names, for qstat -j */
};
/* Sizes: bytes, or k/m/g/t (powers of 1000) and K/M/G/T (of 1024). */
int     parse_size(const char *s, int64_t *out);
/* Times: seconds, or [[HH:]MM:]SS. */
int     parse_duration(const char *s, int64_t *out);
void    req_clear(struct job_req *r);
bool    req_empty(const struct job_req *r);
bool    req_valid_key(const char *k);
/* Adds one -l list to r (later values replace earlier ones, keys add up);
 * -1 with a one-line message in err. */
int     req_parse(struct job_req *r, const char *list, char *err, size_t errlen);
json_t *req_to_json(const struct job_req *r);
/* Fills r (zeroed by the caller) from o; NULL or absent is an empty request. */
int     req_from_json(struct job_req *r, const json_t *o, const char **why);
/* What an exec host offers, from its execd.ini, as REGISTER carries it. */
struct host_attrs {
	char    *arch;           /* uname's machine unless configured */
	int64_t  mem;            /* bytes of memory */
	double   rating;         /* relative speed; load is divided by it */
	char   **keys;           /* free words: fpu, matlab */
	char   **mounts;         /* file systems mounted there: /data */
};
void    host_attrs_clear(struct host_attrs *a);
json_t *host_attrs_to_json(const struct host_attrs *a);
/* Fills a (zeroed by the caller) from o; -1 with *why on bad input. */
int     host_attrs_from_json(struct host_attrs *a, const json_t *o, const char **why);

struct job {
	int64_t   id;
	int       task;          /* 0: not an array task (SGE_TASK_ID=undefined) */
	int       attempt;       /* increments at every dispatch */
	char     *name;
	char     *owner;         /* user name */
	uint32_t  uid, gid;
	gid_t    *groups;        /* supplementary groups, from the master */
	int       ngroups;
	char     *queue;
	int       prio;          /* -1023..1024, as qsub -p */
	char     *script;        /* script text; NULL when argv is set (qsub -b y) */
	char    **argv;          /* binary job: argv exactly as given, NULL-terminated */
	char    **args;          /* script job: the script's arguments ($1...), or NULL */
	char     *shell;         /* -S; NULL: use the script's #! line, else /bin/sh */
	char     *cwd;           /* working directory; NULL: owner's home */
	char     *home;          /* owner's home directory, from the master */
	char     *out_path;      /* -o; NULL: default NAME.oID */
	char     *err_path;      /* -e; NULL: default NAME.eID */
	char     *in_path;       /* -i: the job's standard input; NULL: /dev/null */
	bool      join;          /* -j y */
	char    **env;           /* "NAME=VALUE" entries from -V/-v and SGE_O_* */
	char     *submit_host;
	int64_t   submit_time;   /* ms since the epoch */
	int64_t   start_time;
	int64_t   end_time;
	enum job_state state;
	unsigned  hold;          /* HOLD_* bits */
	bool      error;         /* Eqw: could not be started, see reason */
	bool      delete_req;    /* dr: deletion asked while running */
	char     *host;          /* where the current attempt runs or ran */
	int       pid;           /* the job's process (and process group) */
	int       exit_status;   /* exit code, or 128+signal */
	int       signal;        /* terminating signal, 0 if none */
	char     *reason;        /* why it failed or is in error, for people */
	double    utime, stime;  /* seconds */
	int64_t   maxrss_kb;
	/* Scheduling. */
	struct job_req req;      /* -l */
	int       rerun;         /* -r: 1 yes, 0 no, -1 the queue's default */
	char     *pe;            /* -pe NAME; NULL for a serial job */
	int       slots;         /* slots wanted: 1, or N of -pe / -n; granted, once dispatched */
	int       slots_min;     /* -pe NAME MIN-MAX: MIN (slots is MAX until dispatched); 0: no range */
	int       t_first, t_last, t_step; /* -t; t_first 0: not an array job */
	int       tc;            /* -tc: most tasks running at once; 0: no limit */
	unsigned  suspended;     /* SUSP_* bits: who stopped it on its host */
	int64_t   begin_time;    /* qsub -a: not before this (ms); 0: now */
	unsigned  mail;          /* qsub -m: MAIL_* bits */
	char     *mail_to;       /* qsub -M: addresses, comma-separated; NULL: the owner */
	char     *qrsh;          /* qrsh: "HOST PORT SECRET", where the job's streams go; NULL: a batch job */
	/* Grid Engine's options that are kept and shown (qstat -j, qacct). */
	struct job_req soft;     /* -soft -l: hosts meeting more of it are preferred */
	char     *project;       /* -P */
	char     *account;       /* -A */
	char    **context;       /* -ac, -dc, -sc: "NAME=VALUE" entries in order */
	bool      reserve;       /* -R y */
	int       js;            /* -js: job share, 0 or more */
	char     *binding;       /* -binding, as given: nowq binds nothing */
	bool      noshell;       /* -shell n */
	/* File staging (doc/staging.md). */
	json_t   *stage_in;      /* [{name, size, sha256}] sent ahead; NULL: none */
	char    **stage_out;     /* patterns brought back; NULL: none */
	json_t   *staged_out;    /* [{task, name, size, sha256}] that came back (read only) */
};
/* -ac NAME=VALUE,... (op 'a': add or replace), -dc NAME,... ('d'), -sc
 * NAME=VALUE,... ('s': the whole context), applied to *ctx as Grid Engine
 * does.  -1 with *why on a malformed list, *ctx unchanged. */
#define JOB_MAX_CONTEXT 256
int         job_context_apply(char ***ctx, char op, const char *list, const char **why);
/* Why a running job is stopped, as Grid Engine tells them apart: qmod -s
 * shows s, the exec host's idle policy (its owner came back) shows T. */
#define SUSP_USER 0x1
#define SUSP_HOST 0x2
struct job *job_new(void);
void        job_free(struct job *j);
/* A job as just submitted at now: pending, never run, no outcome; only a
 * user hold stays. */
void        job_fresh(struct job *j, int64_t now);
const char *job_state_letters(const struct job *j); /* qw, hqw, Eqw, t, r, dr, z */
/* What a listing shows of a job (its brief row), its texts borrowed: read
 * straight from the store's row for a listing, or pointing into a struct
 * job (job_brief_of). */
struct job_brief {
	int64_t   id, submit_time, start_time;
	int       task, prio, slots, t_first, t_last, t_step;
	enum job_state state;
	unsigned  hold, suspended;
	bool      error, delete_req;
	const char *name, *owner, *queue, *host;
};
void        job_brief_of(const struct job *j, struct job_brief *b);
const char *job_brief_letters(const struct job_brief *b);
const char *job_state_name(enum job_state s);        /* "pending", ... */
/* Full record to JSON and back; job_from_json checks every field's type and
 * range and returns NULL with *why on bad input. */
json_t     *job_to_json(const struct job *j);
struct job *job_from_json(const json_t *o, const char **why);
/* A qrsh job's "HOST PORT SECRET" (job.qrsh): the client's listening address
 * and the one-time secret the shepherd proves itself with.  -1 when s is not
 * of that form (host a name or address of at most 255 bytes, port 1..65535,
 * secret QRSH_SECRET_LEN hex digits). */
#define QRSH_SECRET_LEN 32
struct qrsh_addr {
	char host[256];
	int  port;
	char secret[QRSH_SECRET_LEN + 1];
};
int         job_qrsh_parse(const char *s, struct qrsh_addr *a);
/* A job object shown to people (STATUS, WAIT, HOSTS): qrsh becomes true,
 * since its secret is for the job's shepherd only. */
void        job_json_public(json_t *o);
/* A public job object (job_json_public) shown to someone who may not see
 * its private details (perm_job_private): no script, and of env only the
 * SGE_O_* entries. */
void        job_json_private_drop(json_t *o);

/* spooldir.c: durable files in spool directories, for both daemons: write
 * temp + fsync + rename + fsync dir. */
int  spool_write_atomic(const char *path, const void *data, size_t n, int mode);
/* The same, all or nothing for readers; synced only when durable: files
 * that describe running processes need not outlive a crash of the host. */
int  spool_write_file(const char *path, const void *data, size_t n, int mode, bool durable);
int  spool_fsync_dir(const char *dir);
int  spool_mkdir_p(const char *path, int mode);
/* Makes the spool dir (and missing parents, 0755) private to the daemon's
 * user, whatever the umask and whatever an earlier nowq left: dir and the
 * folders under it keep no permission bit beyond dirmode, files none for
 * group or others.  The number of entries tightened (for the log), or -1
 * with a sentence in why. */
int  spool_make_private(const char *dir, int dirmode, char *why, size_t whylen);
/* Removes a tree without following symlinks. */
int  spool_rmtree(const char *path);

/* rusage.c: what wait4 says a finished job used, as CHILD_TERM carries it
 * (an object of ru_utime, ru_stime in seconds and the integer ru_* fields),
 * and maxvmem, the shepherd's own measure of its peak memory. */
#define RUSAGE_NINT 15
struct job_rusage {
	double   utime, stime;   /* seconds */
	int64_t  maxrss, ixrss, ismrss, idrss, isrss, minflt, majflt, nswap,
	         inblock, oublock, msgsnd, msgrcv, nsignals, nvcsw, nivcsw;
	int64_t  maxvmem;        /* bytes: the cgroup's memory.peak, else ru_maxrss */
};
struct rusage;
/* "ru_maxrss" ... "ru_nivcsw", in getrusage(2)'s order; rusage_int reads the i-th. */
extern const char *const rusage_int_names[RUSAGE_NINT];
int64_t rusage_int(const struct job_rusage *ru, int i);
void    rusage_set_int(struct job_rusage *ru, int i, int64_t v);
void    rusage_from_sys(struct job_rusage *dst, const struct rusage *ru);
json_t *rusage_to_json(const struct job_rusage *ru);
/* Checks every field (numbers, non-negative, times finite and bounded);
 * unknown fields are skipped.  -1 with *why, dst untouched, on bad input. */
int     rusage_from_json(struct job_rusage *dst, const json_t *o, const char **why);

/* tasks.c: array job task ranges (qsub -t, qdel -t). */
struct task_range {
	int first, last, step;
};
/* "N", "N-M" or "N-M:S" with 1 <= N <= M <= JOB_MAX_TASKS; last becomes the
 * last task the step reaches.  -1 on bad input. */
int     task_range_parse(const char *s, struct task_range *r);
bool    task_in_range(const struct task_range *r, int t);
int64_t task_range_count(const struct task_range *r);
/* taken: the sorted task ids that left the pending state (ids outside r are
 * ignored).  The first pending task after `after` (0: from the start), 0
 * when none is left. */
int     task_next(const struct task_range *r, const int *taken, size_t n, int after);
int64_t task_pending_count(const struct task_range *r, const int *taken, size_t n);
/* Grid Engine's compact text of the pending tasks: "1-999:2", "3,7-9:2";
 * "" when none are left.  Costs the taken ids, not the tasks. */
char   *task_pending_format(const struct task_range *r, const int *taken, size_t n);
/* The same text of a sorted list of tasks of r ("2,3", "5-9:2"). */
char   *task_list_format(const struct task_range *r, const int *ids, size_t n);

/* Limits on what a client may send, all here so that qsub(1) can list them
 * (its LIMITS section) and qsub and the master refuse with the same
 * sentence: job_from_json checks every one of them (qsub runs it on its own
 * job before sending), and each has a one-line error naming the limit. */
#define JOB_MAX_SCRIPT    (1u * 1024 * 1024) /* bytes of a script */
#define JOB_MAX_ARGV      4096    /* arguments of a command (-b y) or a script */
#define JOB_MAX_ENV       4096    /* environment variables */
/* Arguments and environment together, in bytes: execve's own limit is a
 * quarter of the stack limit (2 MiB by default), so more could never start. */
#define JOB_MAX_ARG_BYTES (1u * 1024 * 1024)
#define JOB_MAX_STRING    4096    /* a path, a queue, shell or host name, mail addresses */
/* A job name: its default output file NAME.oID.TASK must fit in a file
 * name (NAME_MAX, 255 bytes) with any id and task. */
#define JOB_MAX_NAME      200
#define JOB_MAX_DEPS      10000   /* jobs one job may wait for (-hold_jid, -W depend) */
#define JOB_MAX_SLOTS     100000
/* A parallel job (-pe, or -n above 1): runs as parts, one per host. */
#define JOB_PARALLEL(j)  ((j)->slots > 1 || (j)->pe != NULL)
#define JOB_MAX_TASKS    1000000  /* largest array task id */
/* A job name: 1 to JOB_MAX_NAME bytes, no control character and none of
 * / : @ \ * ? (Grid Engine's rule; they break paths, logs and columns). */
bool job_valid_name(const char *s);
/* The same as a sentence for people ("the job name ..."), NULL if valid. */
const char *job_name_problem(const char *s);
/* "a job may wait for at most 10000 jobs, not N" when n is over the limit. */
const char *job_deps_problem(size_t n);

/* qmconf.c: qmaster.conf, read with libconfuse; the master and nowq read it. */
struct qm_queue {
	char *name;
	int   priority;
	char *hosts;           /* node-set expression */
	struct nodeset *hosts_ns;
	bool  disabled;        /* qmod -d QUEUE: nothing new starts from it */
	int   max_queued;      /* 0: no limit (pending jobs of the queue) */
	int   max_running;     /* 0: no limit */
	int   max_running_per_user;
	int64_t default_h_rt, max_h_rt;     /* seconds; 0: none */
	int64_t default_h_vmem, max_h_vmem; /* bytes; 0: none */
	char **users;          /* NULL-terminated; empty: everyone (unless groups) */
	char **groups;         /* group names, as written */
	gid_t *gids;           /* their gids */
	int    ngids;
	bool   rerun;          /* the default of a job's -r */
};

/* A parallel environment (pe "NAME" { ... }): how many slots its jobs may
 * hold at once and how a job's slots spread over hosts. */
enum pe_rule { PE_ROUND_ROBIN = -1, PE_FILL_UP = -2, PE_PE_SLOTS = -3 }; /* > 0: that many per host */
struct qm_pe {
	char *name;
	int   slots;           /* all its jobs together; 0: no limit */
	int   rule;            /* enum pe_rule, or slots per host */
	bool  control_slaves;  /* qrsh -inherit may start its jobs' tasks */
	bool  job_is_first_task;  /* the script is one of the tasks (Grid Engine's) */
	int   sched_used;      /* slots its jobs hold, as the last usage walk found */
};

#define QM_MAX_MASTERS 2

struct qm_conf {
	char            *path;
	char            *spool_dir;
	char            *listen;        /* HOST:PORT, or NULL */
	char            *listen_host;
	int              listen_port;
	char            *http_listen;   /* HOST:PORT of the status page, or NULL */
	char            *http_host;
	int              http_port;
	char            *unix_socket;   /* or NULL */
	char            *auth;          /* "none" | "munge" */
	char            *munge_socket;  /* NULL: $MUNGE_SOCKET or libmunge's default */
	char           **managers;      /* NULL-terminated */
	char           **operators;     /* NULL-terminated: may hold, release, suspend,
	                                   delete any job and disable queues and hosts */
	char            *admin_user;    /* a daemon identity besides root; NULL: none */
	uid_t            admin_uid;
	bool             allow_root_jobs;
	int              log_level;
	char            *log_file;
	char            *pid_file;
	int64_t          finished_keep_ms;
	int64_t          host_timeout_ms; /* silence after which a host is lost */
	int              client_timeout;  /* s: to say HELLO, finish a frame, read replies */
	bool             show_all_jobs;
	enum { QUERY_THREAD_IDLE, QUERY_THREAD_NORMAL, QUERY_THREAD_OFF } query_thread;
	bool             query_listen;    /* the query thread listens on port + 1 and unix_socket.query */
	size_t           max_frame;
	char            *mailer;          /* program and options; reads the message */
	int              mail_max_running; /* mailers at once */
	int              mail_timeout;    /* seconds before a mailer is killed */
	int              mail_retry;      /* seconds before the first retry; doubles */
	char           **admin_mail;      /* managers' addresses, NULL-terminated */
	char           **masters;         /* NULL-terminated HOST:PORT, or NULL: no standby */
	int              nmasters;
	int              self;            /* this master's index in masters, -1 without */
	int64_t          failover_timeout_ms;
	/* File staging's limits in bytes (0: none): one file, one job's
	 * inputs, and what one user's jobs hold in the spool. */
	int64_t          stage_max_file, stage_max_job, stage_max_user;
	struct qm_queue *queues;
	int              nqueues;
	struct qm_pe    *pes;
	int              npes;
};
/* The file's settings, each checked; NULL with the first problem in err
 * ("FILE:LINE: problem") on a bad file. */
struct qm_conf *qmconf_load(const char *path, char *err, size_t errlen);
void            qmconf_free(struct qm_conf *c);
/* "fill_up", "$round_robin", "4" ...: the rule, or 0 for a bad word. */
int             pe_rule_parse(const char *s);

/* execdconf.c: execd.ini, read with inih; execd and nowq read it. */
/* What execd does to running jobs when the host stops being idle. */
enum owner_returns {
	OWNER_FINISH,     /* let them finish, take no new work */
	OWNER_SUSPEND,    /* SIGSTOP their process groups, SIGCONT when idle again */
	OWNER_VACATE,     /* SIGTERM, vacate_grace seconds, SIGKILL */
};

/* One idle_windows entry: days (bit 0 Monday .. bit 6 Sunday) and minutes
 * of the day; start > end crosses midnight into the next day. */
struct idle_window {
	uint8_t  days;
	int16_t  start, end;
};
#define IDLE_ALL_DAYS 0x7f

struct execd_conf {
	char    *path;
	char    *name;            /* the host name reported to the master */
	char   **masters;         /* NULL-terminated: "HOST:PORT" or "unix:PATH" */
	char    *spool_dir;
	int      slots;
	double   load_threshold;  /* np_load_avg limit; <= 0: no load check */
	int      load_interval;   /* seconds between LOAD reports */
	char    *tmpdir;          /* parent of every job's TMPDIR */
	char    *auth;            /* "none" | "munge" */
	char    *munge_socket;    /* NULL: $MUNGE_SOCKET or libmunge's default */
	int64_t  admin_uid;       /* a master's identity besides root and ours; -1: none */
	int      log_level;
	char    *log_file;        /* NULL: standard error */
	struct host_attrs attrs;  /* arch, memory, rating, keys, mounts */
	/* Idle policies beyond the load; each is off when unset. */
	int      idle_keyboard;   /* minutes without input; 0: off */
	char   **idle_devices;    /* globs of input devices */
	bool     idle_no_users;
	struct idle_window *idle_windows;
	int      idle_nwindows;   /* 0: no windows, any time is fine */
	char    *idle_windows_text;  /* as written, for the reason */
	char    *idle_command;    /* run with /bin/sh -c; NULL: off */
	int      idle_command_timeout;  /* seconds */
	enum owner_returns owner_returns;
	int      vacate_grace;    /* seconds from SIGTERM to SIGKILL */
	int      kill_grace;      /* seconds from SIGTERM (h_rt) or SIGXCPU to SIGKILL */
	char    *cgroup_parent;   /* where job cgroups go; NULL: execd's own cgroup */
	int64_t  stage_cache_max; /* bytes of SPOOL/stage/ kept (execd/cache.c); 0: no cap */
};
#define STAGE_CACHE_MAX_DEFAULT (10LL << 30)   /* stage_cache_max's default */
#define LIMITS_KILL_GRACE   5          /* kill_grace's default */
/* The file's settings, each checked; NULL with the first problem in err
 * ("FILE:LINE: problem") on a bad file. */
struct execd_conf *execdconf_load(const char *path, char *err, size_t errlen);
void               execdconf_free(struct execd_conf *c);
/* "Mon-Fri 19:00-07:00, Sat-Sun": 0, or -1 with a sentence in err. */
int  idle_windows_parse(const char *text, struct idle_window **out, int *nout,
    char *err, size_t errlen);


/* stage.c: file staging's shared rules (qsub --stage-in, --stage-out). */
#define SHA256_HEX      64
#define STAGE_MAX_PATH  1024
#define STAGE_MAX_FILES 10000    /* files one job stages in, or one task out */
#define STAGE_CHUNK     (1024 * 1024)   /* bytes of one STAGE_PUT / STAGE_GET */
struct sha256 {
	uint32_t      h[8];
	uint64_t      len;
	unsigned char buf[64];
	size_t        nbuf;
};
void    sha256_init(struct sha256 *s);
void    sha256_update(struct sha256 *s, const void *data, size_t n);
/* Ends s; out gets 64 lower-case hex digits. */
void    sha256_hex(struct sha256 *s, char out[SHA256_HEX + 1]);
/* The hash and size of what fd holds from its offset to its end; -1 errno. */
int     sha256_fd(int fd, char out[SHA256_HEX + 1], int64_t *size);
/* Starts writing a staged file's new bytes to disk every STAGE_WRITEBACK. */
#define STAGE_WRITEBACK (8 * 1024 * 1024)
void    stage_writeback(int fd, int64_t *done, int64_t upto);
void    stage_drop_behind(int fd, int64_t upto);
bool    sha256_hex_ok(const char *s);
/* A path relative to the submit or working directory that cannot leave it:
 * not absolute, no "." or ".." component, no empty one, no control
 * character or comma; false with *why (one sentence) otherwise.  A
 * pattern is checked the same and may hold glob(7) characters. */
bool    stage_path_ok(const char *p, const char **why);
bool    stage_pattern_ok(const char *p, const char **why);
/* A list of staged files [{name, size, sha256}] of at most most entries. */
bool    stage_files_ok(const json_t *a, size_t most, const char **why);
int64_t stage_files_bytes(const json_t *a);
/* One entry of those lists: {name, size, sha256, mode}, and task in
 * staged_out; STAGE_OFFER's and STAGE_WANT's have no name. */
struct stage_file {
	const char *name, *sha256;   /* NULL when absent */
	int64_t     size;            /* -1 when absent */
	int64_t     task;            /* 0 when absent */
	int64_t     mode;            /* the file's permission bits (07777 masked out
	                              * but 0777); 0 when absent: 0600 on the exec
	                              * host, 0666 less the umask when fetched */
};
json_t *stage_file_pack(const struct stage_file *f);
void    stage_file_unpack(const json_t *o, struct stage_file *f);
/* The transfers, over the client library's connection to the master:
 * client/stage.c defines them; qsub, nowq fetch and the shepherd (which
 * links client/lib.c and client/stage.c) call them.  Each -1 with one
 * sentence in err. */
/* Sends fd's size bytes (a file of total bytes' job, for the master's
 * limits) in chunks, a few in flight, unless the master has them: a file
 * of one chunk at once, whose reply says whether the master had it; a
 * larger one from where the master says it goes on (the bytes it kept of
 * an upload cut short, else 0).  A lost master is asked again, where it
 * goes on, for 10 minutes. */
int     stage_put_fd(int fd, const char *sha, int64_t size, int64_t total, char *err, size_t n);
/* Fetches job's file sha into fd, going on after the bytes fd already
 * holds (the beginning an earlier try left there), and checks the whole
 * file's hash; a corrupt transfer is tried again from the start, twice. */
int     stage_get_fd(int64_t job, const char *sha, int64_t size, int fd, char *err, size_t n);
/* The bytes the last stage_get_fd found in fd from earlier tries and
 * did not fetch again (0: it began at the file's start). */
int64_t stage_get_resumed(void);
/* Whether the last stage_get_fd cut fd short to start it again: bytes read
 * from it before may not be the file's. */
bool    stage_get_restarted(void);
/* Whether the last stage_get_fd failed for a fault on this side: its file
 * could not be written or read back, or the master could not be reached;
 * false when the master refused (the file is not there) or sent bytes
 * that are not the file. */
bool    stage_get_host_fault(void);
/* An array task's output name: NAME.TASK, or DIR.TASK/REST (allocated). */
char   *stage_task_name(const char *name, int task);

#endif
