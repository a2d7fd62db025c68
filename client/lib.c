/* lib.c: the client library: messages, and finding and talking to a master. */
#include "config.h"

#include <sys/types.h>
#include <sys/random.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"
#include "common/msg.h"
#include "client/client.h"
#include "common/msg_req.h"

#define CLIENT_DEFAULT_MASTERS  "unix:/run/nowq/qmaster.sock,localhost:7444"
#define CLIENT_CONNECT_MS       5000     /* per TCP address */
#define CLIENT_FAILOVER_MS      15000    /* how long redirects are followed */
/* Between rounds of a failover: from a few ms, doubling, since a standby
 * that sees its primary's process gone is primary within tens of ms. */
#define CLIENT_ROUND_MIN_MS     4
#define CLIENT_ROUND_MAX_MS     100
/* The query endpoint's connect and HELLO: past this, the port answers. */
#define CLIENT_QUERY_MS         2000
/* A master answers HELLO in well under a millisecond.  One that has not
 * within this while another master could be asked is frozen (its listen
 * backlog still accepts) or badly overloaded: the others are asked first,
 * and it again later with twice the wait, so a busy master is still
 * waited for, up to CLIENT_REPLY_MS. */
#define CLIENT_HELLO_MS         1000
/* The first wait for the reply to a request that carries a key (a SUBMIT):
 * past it the other masters are asked and the request sent again, which
 * the master that has the key answers with what the first one did. */
#define CLIENT_RESEND_MS        5000

const char *client_prog = "nowq";
bool client_any_master;

static void client_vmsg(const char *, const char *, va_list) NOWQ_ATTR_PRINTF(2, 0);

static void
client_vmsg(const char *kind, const char *fmt, va_list ap)
{
	char raw[4096], msg[8192];

	/* One error, one line, whatever the master or an argument put in it. */
	vsnprintf(raw, sizeof raw, fmt, ap);
	text_oneline_to(msg, sizeof msg, raw);
	fprintf(stderr, "%s: %s%s\n", client_prog, kind, msg);
}

void
client_warnx(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	client_vmsg("warning: ", fmt, ap);
	va_end(ap);
}

void
client_errx(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	client_vmsg("error: ", fmt, ap);
	va_end(ap);
}

void
client_die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	client_vmsg("error: ", fmt, ap);
	va_end(ap);
	exit(1);
}

void
client_usage(const struct cmd *c, FILE *fp)
{
	fprintf(fp, "usage: %s", c->usage);
}

static bool progress_shown;

void
client_progress(const char *fmt, ...)
{
	static int tty = -1;
	va_list ap;

	if (tty < 0)
		tty = isatty(STDERR_FILENO);
	if (!tty)
		return;
	fprintf(stderr, "\r%s: ", client_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\033[K", stderr);
	fflush(stderr);
	progress_shown = true;
}

void
client_progress_clear(void)
{
	if (!progress_shown)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	progress_shown = false;
}

#define CLIENT_JSON_FLAGS	(JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9))

void
client_print_json(const char *key, json_t *value)
{
	json_t *doc = json_pack("{s:i, s:O}", "schema", CLIENT_JSON_SCHEMA, key, value);

	json_dumpf(doc, stdout, CLIENT_JSON_FLAGS);
	fputc('\n', stdout);
	json_decref(doc);
}

/* What jansson writes before the list's first item. */
static void
json_list_head(const char *key)
{
	json_t *k = json_string(key);
	char *text = json_dumps(k, JSON_ENCODE_ANY);

	printf("{\n  \"schema\": %d,\n  %s: [", CLIENT_JSON_SCHEMA, text ? text : "\"\"");
	free(text);
	json_decref(k);
}

void
client_print_json_item(const char *key, const json_t *item, size_t *n)
{
	char *text = json_dumps(item, CLIENT_JSON_FLAGS | JSON_ENCODE_ANY);

	if ((*n)++ == 0)
		json_list_head(key);
	else
		putchar(',');
	/* The item sits two levels deep: four more blanks on each of its
	 * lines (a JSON string holds no raw newline). */
	fputs("\n    ", stdout);
	for (const char *p = text ? text : "null"; *p; p++) {
		putchar(*p);
		if (*p == '\n')
			fputs("    ", stdout);
	}
	free(text);
}

void
client_print_json_end(const char *key, size_t n)
{
	if (n == 0) {
		json_list_head(key);
		fputs("]\n}\n", stdout);
	} else
		fputs("\n  ]\n}\n", stdout);
}

char **
client_masters_parse(const char *s)
{
	char **v = xcalloc(1, sizeof *v);
	size_t n = 0;

	while (*s) {
		size_t len;
		s += strspn(s, ", \t\r\n");
		len = strcspn(s, ", \t\r\n");
		if (len == 0)
			break;
		v = xrealloc(v, (n + 2) * sizeof *v);
		if ((v[n] = strndup(s, len)) == NULL)
			fatalx("out of memory");
		v[++n] = NULL;
		s += len;
	}
	if (n == 0) {
		free(v);
		return NULL;
	}
	return v;
}

char **
client_masters(void)
{
	const char *env = getenv("NOWQ_MASTER");
	const char *why;
	char *text, **v;

	if (env && (v = client_masters_parse(env)) != NULL)
		return v;
	/* Comment lines let a site annotate the file. */
	if ((text = read_file(SYSCONFDIR "/nowq/master", 65536, NULL, &why)) != NULL) {
		for (char *p = text; *p; ) {
			char *eol = p + strcspn(p, "\n");
			if (*p == '#')
				memset(p, ' ', (size_t)(eol - p));
			p = *eol ? eol + 1 : eol;
		}
		v = client_masters_parse(text);
		free(text);
		if (v)
			return v;
	}
	return client_masters_parse(CLIENT_DEFAULT_MASTERS);
}

/* The one connection of this process, or of each thread: libdrmaa's
 * threads each talk to the master on their own, so one's drmaa_wait
 * never holds up another's drmaa_run_job. */
static __thread struct {
	int      fd;
	int64_t  seq;
	char    *addr;
	char    *raw;       /* the raw bytes after the last reply, STAGE_CHUNK */
	size_t   raw_len;
} conn = { -1, 0, NULL, NULL, 0 };

/* A thread's connection is closed when the thread ends (libdrmaa's
 * threads connect on their own); the process's own ends with it. */
static pthread_key_t conn_key;
static pthread_once_t conn_once = PTHREAD_ONCE_INIT;

static void
conn_thread_end(void *arg)
{
	(void)arg;
	client_disconnect();
	free(conn.raw);
	conn.raw = NULL;
}

static void
conn_key_make(void)
{
	if (pthread_key_create(&conn_key, conn_thread_end) != 0)
		abort();
}

static int
connect_unix(const char *path, const char **why)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof sun.sun_path) {
		*why = "socket path too long";
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) {
		*why = strerror(errno);
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&sun, sizeof sun) < 0) {
		*why = strerror(errno);
		close(fd);
		return -1;
	}
	return fd;
}

static int
connect_tcp(const char *hostport, int timeout_ms, const char **why)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res, *ai;
	char *host, portstr[16];
	int port, fd = -1, rc;

	if (parse_hostport(hostport, &host, &port) < 0) {
		*why = "not unix:PATH or HOST:PORT";
		return -1;
	}
	snprintf(portstr, sizeof portstr, "%d", port);
	rc = getaddrinfo(host, portstr, &hints, &res);
	free(host);
	if (rc != 0) {
		*why = gai_strerror(rc);
		return -1;
	}
	for (ai = res; ai && fd < 0; ai = ai->ai_next)
		fd = connect_timed(ai, timeout_ms, why);
	freeaddrinfo(res);
	return fd;
}

static int
connect_one(const char *addr, int timeout_ms, const char **why)
{
	if (strncmp(addr, "unix:", 5) == 0)
		return connect_unix(addr + 5, why);
	return connect_tcp(addr, timeout_ms, why);
}

/* Where a master answers listings in a thread of their own, without its
 * loop seeing them (qmaster/reader.c): port + 1, or the unix socket's
 * path + ".query".  NULL for an address that is neither. */
static char *
query_addr(const char *addr)
{
	char *host, *q;
	int port;

	if (strncmp(addr, "unix:", 5) == 0)
		return xasprintf("%s.query", addr);
	if (parse_hostport(addr, &host, &port) < 0)
		return NULL;
	if (port == 65535) {
		free(host);
		return NULL;
	}
	q = xasprintf(strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port + 1);
	free(host);
	return q;
}

int
client_submit_key(char key[CLIENT_KEY_LEN + 1], const char **why)
{
	unsigned char r[CLIENT_KEY_LEN / 2];

	if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
		*why = "cannot read random bytes for the submission key";
		return -1;
	}
	for (size_t i = 0; i < sizeof r; i++)
		snprintf(key + 2 * i, 3, "%02x", r[i]);
	return 0;
}

const char *
client_user(void)
{
	/* In place, not allocated: each of libdrmaa's threads has one, and
	 * nothing would free it when the thread ends. */
	static __thread char cached[256];
	const char *u = getenv("LOGNAME");
	struct passwd *pw;

	if (u && *u)
		return u;
	if ((u = getenv("USER")) && *u)
		return u;
	/* One lookup per process: qsub asks twice and each reads /etc/passwd. */
	if (!cached[0]) {
		pw = getpwuid(getuid());
		snprintf(cached, sizeof cached, "%s", pw ? pw->pw_name : "");
	}
	return cached;
}

/* Appends one frame to *buf (length prefix, then the JSON text). */
static int
frame_add(char **buf, size_t *len, const json_t *msg)
{
	char *s = json_dumps(msg, JSON_COMPACT);
	size_t n;

	if (!s)
		return -1;
	n = strlen(s);
	*buf = xrealloc(*buf, *len + n + 4);
	*len += proto_frame_put(*buf + *len, s, n);
	free(s);
	return 0;
}

static int
send_all(int fd, const char *p, size_t n, const char **why)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			*why = strerror(errno);
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

void
client_disconnect(void)
{
	if (conn.fd >= 0)
		close(conn.fd);
	conn.fd = -1;
	free(conn.addr);
	conn.addr = NULL;
}

/* Reads frames until the reply to seq; anything else is not for us.  Only
 * the wait for a frame's start is bounded by wait_ms (< 0: forever): past
 * it, NULL with *late set; a frame half read would leave the connection
 * unusable anyway. */
static json_t *
recv_reply(int64_t seq, int wait_ms, const char **why, bool *late)
{
	int64_t deadline = wait_ms < 0 ? -1 : mono_ms() + wait_ms;

	*late = false;
	for (;;) {
		json_t *msg;
		if (deadline >= 0) {
			struct pollfd pfd = { .fd = conn.fd, .events = POLLIN };
			int64_t left = deadline - mono_ms();
			int r = left > 0 ? poll(&pfd, 1, (int)left) : 0;
			if (r < 0 && errno == EINTR)
				continue;
			if (r == 0) {
				*late = true;
				*why = "no reply in time";
				return NULL;
			}
		}
		if (proto_recv_fd(conn.fd, &msg, CLIENT_REPLY_MS, why) < 0)
			return NULL;
		if (msg_type_of(msg) == MSG_REPLY && msg_seq_of(msg, -1) == seq)
			return msg;
		json_decref(msg);
	}
}

/* Words the failure for a person and drops the connection, so the next
 * call starts over from the list of masters. */
static json_t *
connection_lost(const char **why)
{
	static __thread char msg[512];
	snprintf(msg, sizeof msg, "lost the connection to the master at %s: %s", conn.addr, *why);
	*why = msg;
	client_disconnect();
	return NULL;
}

static bool
is_redirect(const json_t *rep)
{
	struct msg_reply r;

	msg_reply_unpack(rep, &r, NULL, 0);
	return !r.ok && r.error && strcmp(r.error, ERR_REDIRECT) == 0;
}

/* Who we are, for the HELLO: on a unix socket the kernel says it; over TCP
 * a munge credential (MUNGE_SOCKET, else libmunge's default socket) if
 * munged gives us one, which a master with auth = munge requires; without
 * one, only the uid, which a master with auth = none checks against the
 * owner of our loopback socket.  Why munge failed goes to err. */
static void
client_auth(struct msg_hello *m, const char *addr, char **cred, char *err, size_t errlen)
{
	*cred = NULL;
	m->auth_method = "none";
	if (strncmp(addr, "unix:", 5) == 0)
		return;
	if ((*cred = auth_munge_encode(auth_munge_socket(NULL), AUTH_PAYLOAD_CLIENT, err, errlen)) != NULL)
		m->auth_method = "munge";
	m->auth_cred = *cred;
}

/* How a try at one master ended when it gave no reply. */
enum call_end {
	CALL_DONE,     /* a reply, or an error to report (*why) */
	CALL_NEXT,     /* unreachable, or it redirects: ask the next master */
	CALL_SLOW,     /* no reply in time: ask the others, it later */
	CALL_LOST,     /* the request went and its reply did not come */
};

/* Sending a request with the HELLO saves a round trip, but a master whose
 * HELLO reply is late is given up on with the request perhaps read: only
 * one that may be sent twice goes along (a listing, a keyed request). */
static bool
call_pipelines(const json_t *req)
{
	return req && (msg_req_keyed(req) || proto_is_listing(req));
}

/* Sends HELLO, and req with it when it may be sent twice; its reply in
 * *hello. */
static enum call_end
call_hello(bool query, json_t *req, int hello_ms, json_t **hello, char *mungeerr, size_t errlen,
    const char **why)
{
	json_t *msg;
	char *buf = NULL, *cred;
	size_t len = 0;
	int64_t hseq = ++conn.seq;
	bool late;
	struct msg_hello h = { .seq = hseq, .role = "client", .uid = getuid(), .user = client_user(),
	    .any = client_any_master };

	*hello = NULL;
	client_auth(&h, conn.addr, &cred, mungeerr, errlen);
	msg = msg_hello_pack(&h);
	free(cred);
	if (call_pipelines(req))
		msg_seq_set(req, ++conn.seq);
	if (frame_add(&buf, &len, msg) < 0 || (call_pipelines(req) && frame_add(&buf, &len, req) < 0)) {
		json_decref(msg);
		free(buf);
		*why = "cannot encode the request";
		return CALL_DONE;
	}
	json_decref(msg);
	if (send_all(conn.fd, buf, len, why) < 0) {
		free(buf);
		return CALL_NEXT;
	}
	free(buf);
	if ((*hello = recv_reply(hseq, query ? (hello_ms < CLIENT_QUERY_MS ? hello_ms : CLIENT_QUERY_MS) :
	    hello_ms, why, &late)) == NULL)
		return late ? CALL_SLOW : CALL_NEXT;
	return CALL_DONE;
}

/* Tries one master: connect, then HELLO and the request (if any), in one
 * write when the request may be sent twice, so a submission costs one
 * round trip.  Without a request, the HELLO's reply is returned.  NULL
 * with *why and *end saying what to do next.  query: addr is a query
 * endpoint (query_addr), which must say so in its HELLO's reply, and is
 * given up on quickly.  hello_ms bounds the wait for the HELLO's reply,
 * req_ms that for a keyed request's, timeout_ms that for any other. */
static json_t *
call_one(const char *addr, bool query, json_t *req, int hello_ms, int req_ms, int timeout_ms,
    const char **why, enum call_end *end)
{
	static __thread char msg[1024];
	/* Why munge gave no credential ("" if it did), for a refusal's message. */
	char mungeerr[400] = "", herr[256];
	struct msg_hello_reply hr;
	json_t *rep;
	bool keyed = msg_req_keyed(req), late;
	int fd = connect_one(addr, query ? CLIENT_QUERY_MS : CLIENT_CONNECT_MS, why);

	*end = CALL_NEXT;
	if (fd < 0)
		return NULL;
	conn.fd = fd;
	conn.addr = xstrdup(addr);
	pthread_once(&conn_once, conn_key_make);
	pthread_setspecific(conn_key, &conn);
	if ((*end = call_hello(query, req, hello_ms, &rep, mungeerr, sizeof mungeerr, why)) != CALL_DONE) {
		client_disconnect();
		return NULL;
	}
	if (!rep) {
		client_disconnect();
		return NULL;
	}
	/* Anything but a master's query endpoint letting us in: ask at the
	 * port, which says what is wrong, if anything is. */
	if (query && (msg_hello_reply_unpack(rep, &hr, herr, sizeof herr) < 0 || !hr.query)) {
		json_decref(rep);
		client_disconnect();
		*why = "no query endpoint";
		*end = CALL_NEXT;
		return NULL;
	}
	if (!client_reply_ok(rep)) {
		*end = is_redirect(rep) ? CALL_NEXT : CALL_DONE;
		snprintf(msg, sizeof msg, "the master at %s refused us: %s%s%s%s", conn.addr,
		    client_reply_message(rep), *mungeerr ? " (" : "", mungeerr, *mungeerr ? ")" : "");
		json_decref(rep);
		client_disconnect();
		*why = msg;
		return NULL;
	}
	if (!req)
		return rep;
	json_decref(rep);
	if (!call_pipelines(req)) {
		char *buf = NULL;
		size_t len = 0;
		msg_seq_set(req, ++conn.seq);
		if (frame_add(&buf, &len, req) < 0) {
			free(buf);
			client_disconnect();
			*why = "cannot encode the request";
			return NULL;
		}
		if (send_all(conn.fd, buf, len, why) < 0) {
			free(buf);
			*end = CALL_LOST;
			return connection_lost(why);
		}
		free(buf);
	}
	if ((rep = recv_reply(msg_seq_of(req, 0), keyed ? req_ms : timeout_ms, why, &late)) == NULL) {
		*end = keyed && late ? CALL_SLOW : CALL_LOST;
		return connection_lost(why);
	}
	if (is_redirect(rep)) {
		*end = CALL_NEXT;
		snprintf(msg, sizeof msg, "%s", client_reply_message(rep));
		*why = msg;
		json_decref(rep);
		client_disconnect();
		return NULL;
	}
	return rep;
}

/* Waits of a master that was late n times: twice as long each time. */
static int
call_wait(int base, int n, int most)
{
	int64_t w = (int64_t)base << (n < 16 ? n : 16);
	if (most >= 0 && w > most)
		w = most;
	return w > CLIENT_REPLY_MS ? CLIENT_REPLY_MS : (int)w;
}

/* The masters in order, following redirects.  During a failover none may
 * be writable for a few seconds: rounds go on for CLIENT_FAILOVER_MS.  A
 * master late to answer is asked after the others in the next rounds,
 * with a longer wait (rounds go on up to CLIENT_REPLY_MS).  A request
 * that carries a key and lost its reply is sent again, to the next master
 * or to the same one after a reconnect, for CLIENT_FAILOVER_MS after the
 * loss; a request without a key is never sent twice.  Without a request,
 * only the HELLO is made and its reply returned. */
static json_t *
connect_and_call(json_t *req, int timeout_ms, const char **why)
{
	static __thread char errbuf[2048], msg[sizeof errbuf + 512], lost[600];
	int64_t start = mono_ms(), deadline = start + CLIENT_FAILOVER_MS;
	int pause_ms = CLIENT_ROUND_MIN_MS;
	bool again = false, keyed = msg_req_keyed(req);
	int *nlate = NULL;
	size_t nmasters = 0;

	lost[0] = '\0';
	for (;;) {
		char **masters = client_masters();
		size_t n = strv_len(masters), off = 0;
		/* With one master there is nobody else to ask: wait for it. */
		bool alone = n == 1;

		if (n != nmasters) {
			free(nlate);
			nlate = xcalloc(n + 1, sizeof *nlate);
			nmasters = n;
		}
		errbuf[0] = '\0';
		/* Those that were never late first, then the late ones. */
		for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++) {
			const char *m = masters[i], *w = NULL;
			enum call_end end;
			char *q;
			json_t *rep = NULL;
			int hello_ms, req_ms;

			if ((nlate[i] > 0) != (pass == 1))
				continue;
			hello_ms = alone ? (timeout_ms < 0 ? CLIENT_REPLY_MS : timeout_ms) :
			    call_wait(CLIENT_HELLO_MS, nlate[i], -1);
			req_ms = alone ? timeout_ms : call_wait(CLIENT_RESEND_MS, nlate[i], timeout_ms);
			/* A listing is a read: whatever goes wrong at the query
			 * endpoint, the port is asked the same, unless another
			 * master could answer and the endpoint was late: its
			 * process is then frozen or overloaded, and the port,
			 * asked after the others in the next rounds, would be
			 * too. */
			q = req && proto_is_listing(req) && !client_any_master && nlate[i] == 0 ?
			    query_addr(m) : NULL;
			end = CALL_NEXT;
			if (q)
				rep = call_one(q, true, req, hello_ms, req_ms, timeout_ms, &w, &end);
			if (!rep && !(q && end == CALL_SLOW && !alone))
				rep = call_one(m, false, req, hello_ms, req_ms, timeout_ms, &w, &end);
			free(q);
			if (rep || end == CALL_DONE || (end == CALL_LOST && !keyed)) {
				strv_free(masters);
				free(nlate);
				*why = w;
				return rep;
			}
			if (keyed && (end == CALL_LOST || end == CALL_SLOW)) {
				/* It may have taken effect: said if nobody
				 * answers it again, which the first loss
				 * gives the failover time. */
				if (end == CALL_LOST && !lost[0] && mono_ms() + CLIENT_FAILOVER_MS > deadline)
					deadline = mono_ms() + CLIENT_FAILOVER_MS;
				snprintf(lost, sizeof lost, "the master at %s did not answer the request: %s",
				    m, w);
				again = true;
			}
			if (end == CALL_SLOW) {
				nlate[i]++;
				if (start + CLIENT_REPLY_MS > deadline)
					deadline = start + CLIENT_REPLY_MS;
				again = true;
			}
			again |= end == CALL_NEXT && w && strstr(w, "ask another") != NULL;
			off += (size_t)snprintf(errbuf + off, off < sizeof errbuf ? sizeof errbuf - off : 0,
			    "%s%s (%s)", off ? ", " : "", m, w);
			if (off >= sizeof errbuf)
				off = sizeof errbuf - 1;
		}
		strv_free(masters);
		/* Only a cluster with a standby fails over; one master that is
		 * down is reported at once. */
		if (!again || mono_ms() >= deadline)
			break;
		usleep((useconds_t)pause_ms * 1000);
		pause_ms = pause_ms * 2 > CLIENT_ROUND_MAX_MS ? CLIENT_ROUND_MAX_MS : pause_ms * 2;
	}
	free(nlate);
	if (lost[0])
		snprintf(msg, sizeof msg, "%s; no master answered it again (tried %s), so whether it "
		    "took effect is unknown", lost, errbuf);
	else
		snprintf(msg, sizeof msg, "cannot reach the master: tried %s", errbuf);
	*why = msg;
	return NULL;
}

int
client_send(json_t *req, const char **why)
{
	return client_send_raw(req, NULL, 0, why);
}

/* req's frame on the connection (made first when there is none). */
static int
send_frame(json_t *req, const char **why)
{
	char *buf = NULL;
	size_t len = 0;

	/* The HELLO is answered first, so that a standby's redirect is
	 * followed before anything is pipelined. */
	if (conn.fd < 0) {
		json_t *hello = connect_and_call(NULL, CLIENT_REPLY_MS, why);
		if (!hello)
			return -1;
		json_decref(hello);
	}
	msg_seq_set(req, ++conn.seq);
	if (frame_add(&buf, &len, req) < 0) {
		*why = "cannot encode the request";
		return -1;
	}
	if (send_all(conn.fd, buf, len, why) < 0) {
		free(buf);
		connection_lost(why);
		return -1;
	}
	free(buf);
	return 0;
}

int
client_send_raw(json_t *req, const void *raw, size_t rawlen, const char **why)
{
	if (send_frame(req, why) < 0)
		return -1;
	if (rawlen && send_all(conn.fd, raw, rawlen, why) < 0) {
		connection_lost(why);
		return -1;
	}
	return 0;
}

/* The kernel moves the bytes from the file to the socket (sendfile): they
 * are not copied through this process, but for a file system that cannot
 * (read and sent, then). */
int
client_send_file(json_t *req, int fd, int64_t off, size_t len, const char **why)
{
	static __thread char *buf;

	if (send_frame(req, why) < 0)
		return -1;
	while (len > 0) {
		off_t o = (off_t)off;
		ssize_t w = sendfile(conn.fd, fd, &o, len);
		if (w < 0 && (errno == EINVAL || errno == ENOSYS)) {
			if (!buf)
				buf = xmalloc(STAGE_CHUNK);
			w = pread(fd, buf, len < STAGE_CHUNK ? len : STAGE_CHUNK, (off_t)off);
			if (w > 0 && send_all(conn.fd, buf, (size_t)w, why) < 0) {
				connection_lost(why);
				return -1;
			}
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			*why = w == 0 ? "the file ended early (it changed while it was sent)" : strerror(errno);
			connection_lost(why);
			return -1;
		}
		off += w;
		len -= (size_t)w;
	}
	return 0;
}

const void *
client_raw(size_t *len)
{
	*len = conn.raw_len;
	return conn.raw_len ? conn.raw : NULL;
}

int
client_fd(void)
{
	return conn.fd;
}

json_t *
client_recv(int timeout_ms, const char **why)
{
	for (;;) {
		struct pollfd pfd;
		json_t *msg;
		int64_t raw;
		int r;

		if (conn.fd < 0) {
			*why = "not connected";
			return NULL;
		}
		/* Only the wait for a frame's start times out: a frame
		 * half read would leave the connection unusable. */
		pfd.fd = conn.fd;
		pfd.events = POLLIN;
		if ((r = poll(&pfd, 1, timeout_ms)) == 0 || (r < 0 && errno == EINTR)) {
			*why = NULL;
			return NULL;
		}
		if (proto_recv_fd(conn.fd, &msg, CLIENT_REPLY_MS, why) < 0)
			return connection_lost(why);
		/* Read at once, whoever wants them: the stream stays in step. */
		conn.raw_len = 0;
		raw = msg_raw_bytes(msg);
		if (raw < 0 || raw > STAGE_CHUNK) {
			json_decref(msg);
			*why = "the master announced raw bytes other than 0 to 1 MiB";
			return connection_lost(why);
		}
		if (raw > 0) {
			if (!conn.raw)
				conn.raw = xmalloc(STAGE_CHUNK);
			if (proto_recv_raw(conn.fd, conn.raw, (size_t)raw, CLIENT_REPLY_MS, why) < 0) {
				json_decref(msg);
				return connection_lost(why);
			}
			conn.raw_len = (size_t)raw;
		}
		if (msg_type_of(msg) != MSG_REPLY) {
			json_decref(msg);
			continue;
		}
		return msg;
	}
}

json_t *
client_call(json_t *req, int timeout_ms, const char **why)
{
	char *buf = NULL;
	size_t len = 0;
	json_t *rep;
	bool late;

	if (conn.fd < 0)
		return connect_and_call(req, timeout_ms, why);
	msg_seq_set(req, ++conn.seq);
	if (frame_add(&buf, &len, req) < 0) {
		*why = "cannot encode the request";
		return NULL;
	}
	if (send_all(conn.fd, buf, len, why) < 0) {
		free(buf);
		goto broken;
	}
	free(buf);
	if ((rep = recv_reply(msg_seq_of(req, 0), timeout_ms, why, &late)) == NULL)
		goto broken;
	if (is_redirect(rep)) {
		/* This master stepped down or lost its majority: the request
		 * did nothing here; ask the masters again. */
		json_decref(rep);
		client_disconnect();
		return connect_and_call(req, timeout_ms, why);
	}
	return rep;
broken:
	/* A request that carries an idempotency key may be sent again: the
	 * master that has it already answers with what the first one did. */
	if (msg_req_keyed(req)) {
		client_disconnect();
		return connect_and_call(req, timeout_ms, why);
	}
	return connection_lost(why);
}

json_t *
client_request(json_t *req)
{
	const char *why = NULL;
	json_t *rep = client_call(req, CLIENT_REPLY_MS, &why);
	json_decref(req);
	if (!rep)
		client_die("%s", why);
	return rep;
}

json_t *
client_request_ok(json_t *req, const char *what)
{
	json_t *rep = client_request(req);

	if (client_reply_ok(rep))
		return rep;
	client_errx("%s%s", what, client_reply_message(rep));
	json_decref(rep);
	return NULL;
}

const char *
client_reply_message(const json_t *rep)
{
	struct msg_reply r;

	msg_reply_unpack(rep, &r, NULL, 0);
	return r.message && *r.message ? r.message : "the master refused the request without saying why";
}

bool
client_reply_ok(const json_t *rep)
{
	struct msg_reply r;

	msg_reply_unpack(rep, &r, NULL, 0);
	return r.ok;
}

void
client_add_words(char ***v, const char *list)
{
	char *copy = xstrdup(list), *save = NULL;
	size_t n = strv_len(*v);

	for (char *w = strtok_r(copy, ", ", &save); w; w = strtok_r(NULL, ", ", &save)) {
		*v = xrealloc(*v, (n + 2) * sizeof **v);
		(*v)[n++] = xstrdup(w);
		(*v)[n] = NULL;
	}
	free(copy);
}
