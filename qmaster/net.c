/* net.c: the master's listeners and connections: accept, authenticate, frame, and hold replies until commit. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netdb.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "qmaster/qmaster.h"
#include "spool/spool.h"

/* A peer that has not said HELLO within this time is dropped. */
#define HELLO_TIMEOUT_S 10

TAILQ_HEAD(conn_list, conn);
static struct conn_list conns = TAILQ_HEAD_INITIALIZER(conns);

/* With auth = none, TCP is loopback only, so the kernel can still tell who
 * owns the peer's socket: /proc/net/tcp lists it (its local end is our
 * peer's address) with its owner's uid.  -1 when it is not found. */
static int64_t
loopback_peer_uid(int fd)
{
	struct sockaddr_storage me, peer;
	socklen_t ml = sizeof me, pl = sizeof peer;
	char want_local[64], want_rem[64], line[512];
	FILE *fp;
	int64_t uid = -1;

	if (getsockname(fd, (struct sockaddr *)&me, &ml) < 0 ||
	    getpeername(fd, (struct sockaddr *)&peer, &pl) < 0)
		return -1;
	if (peer.ss_family == AF_INET) {
		const struct sockaddr_in *a = (void *)&peer, *b = (void *)&me;
		snprintf(want_local, sizeof want_local, "%08X:%04X", a->sin_addr.s_addr, ntohs(a->sin_port));
		snprintf(want_rem, sizeof want_rem, "%08X:%04X", b->sin_addr.s_addr, ntohs(b->sin_port));
		fp = fopen("/proc/net/tcp", "re");
	} else if (peer.ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (void *)&peer, *b = (void *)&me;
		const uint32_t *x = (const void *)&a->sin6_addr, *y = (const void *)&b->sin6_addr;
		snprintf(want_local, sizeof want_local, "%08X%08X%08X%08X:%04X", x[0], x[1], x[2], x[3], ntohs(a->sin6_port));
		snprintf(want_rem, sizeof want_rem, "%08X%08X%08X%08X:%04X", y[0], y[1], y[2], y[3], ntohs(b->sin6_port));
		fp = fopen("/proc/net/tcp6", "re");
	} else
		return -1;
	if (!fp)
		return -1;
	while (fgets(line, sizeof line, fp)) {
		char local[64], rem[64];
		unsigned long u;
		if (sscanf(line, " %*s %63s %63s %*s %*s %*s %*s %lu", local, rem, &u) == 3 &&
		    strcmp(local, want_local) == 0 && strcmp(rem, want_rem) == 0) {
			uid = (int64_t)u;
			break;
		}
	}
	fclose(fp);
	return uid;
}

struct held {
	TAILQ_ENTRY(held) entry;
	struct conn      *c;
	int64_t           upto;     /* replication seq the standby must ack first; 0: not yet known */
	json_t           *msg;      /* or, when NULL, */
	char             *text;     /* the message as JSON text */
	size_t            len;
};
TAILQ_HEAD(held_list, held);
static struct held_list held = TAILQ_HEAD_INITIALIZER(held);

static struct evconnlistener *lis_unix, *lis_tcp;

static void conn_read_cb(struct bufferevent *bev, void *arg);
static void conn_write_cb(struct bufferevent *bev, void *arg);
static void conn_event_cb(struct bufferevent *bev, short what, void *arg);

static void
conn_release(struct conn *c)
{
	assert(c->dead);
	if (c->refs == 0) {
		free(c->user);
		free(c);
	}
}

static void
conn_write_now(struct conn *c, json_t *msg, const char *text, size_t len)
{
	struct evbuffer *out;
	const char *why;
	int rc;

	if (c->dead || !c->bev)
		return;
	out = bufferevent_get_output(c->bev);
	rc = msg ? proto_frame_append(out, msg, conf->max_frame, &why) :
	    proto_frame_append_text(out, text, len, conf->max_frame, &why);
	if (rc < 0)
		log_warnx("%s: cannot send %s: %s", c->peer, msg ? jstr(msg, "type") : "a reply", why);
}

static void
net_hold(struct conn *c, json_t *msg, char *text, size_t len)
{
	struct held *h = xmalloc(sizeof *h);
	h->c = c;
	h->msg = msg;
	h->text = text;
	h->len = len;
	/* Outside a transaction, only the changesets already sent hold it back. */
	h->upto = store_in_txn(store) ? 0 : repl_unacked();
	c->refs++;
	TAILQ_INSERT_TAIL(&held, h, entry);
}

/* Replication and election traffic (to the standby, to witnesses, the
 * execds' HEARTBEATs) is what releases held replies: it never waits
 * behind them. */
void
net_send_now(struct conn *c, json_t *msg)
{
	conn_write_now(c, msg, NULL, 0);
	json_decref(msg);
}

void
net_send(struct conn *c, json_t *msg)
{
	if (c->role & (ROLE_PEER | ROLE_WITNESS)) {
		net_send_now(c, msg);
		return;
	}
	if (store_in_txn(store) || repl_unacked()) {
		net_hold(c, msg, NULL, 0);
		return;
	}
	conn_write_now(c, msg, NULL, 0);
	json_decref(msg);
}

void
net_send_text(struct conn *c, char *text, size_t len)
{
	if (store_in_txn(store) || repl_unacked()) {
		net_hold(c, NULL, text, len);
		return;
	}
	conn_write_now(c, NULL, text, len);
	free(text);
}

void
net_hold_tag(int64_t seq)
{
	struct held *h;
	TAILQ_FOREACH_REVERSE(h, &held, held_list, entry) {
		if (h->upto)
			break;
		h->upto = seq;
	}
}

/* Messages go in the order they were queued: the first one still waiting
 * for a later acknowledgement stops the walk. */
void
net_release(int64_t acked)
{
	struct held *h;
	while ((h = TAILQ_FIRST(&held)) != NULL && (acked < 0 || (h->upto && h->upto <= acked))) {
		TAILQ_REMOVE(&held, h, entry);
		conn_write_now(h->c, h->msg, h->text, h->len);
		json_decref(h->msg);
		free(h->text);
		h->c->refs--;
		if (h->c->dead)
			conn_release(h->c);
		free(h);
	}
}

void
net_flush_held(void)
{
	net_release(-1);
}

/* The one place that decides whether a peer speaks for a daemon of this
 * cluster (a standby, or an execd casting a vote): root or the master's own
 * uid.  Munge authentication fills c->uid from the credential; this check
 * stays as it is. */
bool
net_is_daemon(const struct conn *c)
{
	return c->uid == 0 || c->uid == geteuid();
}

void
net_close(struct conn *c, const char *why)
{
	if (c->dead)
		return;
	if (why)
		log_debug("%s: closing: %s", c->peer, why);
	TAILQ_REMOVE(&conns, c, entry);
	if (c->role == ROLE_EXECD)
		exechost_conn_gone(c);
	if (c->role == ROLE_PEER || c->role == ROLE_WITNESS)
		repl_conn_gone(c);
	request_conn_gone(c);
	bufferevent_free(c->bev);
	c->bev = NULL;
	c->dead = true;
	conn_release(c);
}

/* Sends what is queued, then closes: used after a protocol error reply. */
static void
conn_close_after_flush(struct conn *c, const char *why)
{
	log_info("%s: %s", c->peer, why);
	c->closing = true;
	bufferevent_disable(c->bev, EV_READ);
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0 && c->refs == 0)
		net_close(c, why);
}

static void
conn_new(int fd, bool is_unix, const char *peer)
{
	struct conn *c = xcalloc(1, sizeof *c);
	struct timeval tv = { HELLO_TIMEOUT_S, 0 };

	c->fd = fd;
	c->is_unix = is_unix;
	snprintf(c->peer, sizeof c->peer, "%s", peer);
	if (is_unix) {
		struct ucred cred;
		socklen_t len = sizeof cred;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
			log_warn("SO_PEERCRED");
			close(fd);
			free(c);
			return;
		}
		c->uid = cred.uid;
		c->gid = cred.gid;
		snprintf(c->peer, sizeof c->peer, "unix:pid %d uid %u", (int)cred.pid, (unsigned)cred.uid);
	} else {
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
	}
	c->bev = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (!c->bev)
		fatalx("bufferevent_socket_new failed");
	bufferevent_setcb(c->bev, conn_read_cb, conn_write_cb, conn_event_cb, c);
	bufferevent_set_timeouts(c->bev, &tv, NULL);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	TAILQ_INSERT_TAIL(&conns, c, entry);
}

static void
accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int len, void *arg)
{
	char peer[64] = "unix";
	bool is_unix = sa->sa_family == AF_UNIX;

	if (!is_unix) {
		char host[48], port[8];
		if (getnameinfo(sa, (socklen_t)len, host, sizeof host, port, sizeof port,
		    NI_NUMERICHOST | NI_NUMERICSERV) == 0)
			snprintf(peer, sizeof peer, "%s:%s", host, port);
	}
	conn_new(fd, is_unix, peer);
}

static void
accept_error_cb(struct evconnlistener *l, void *arg)
{
	/* EMFILE and friends: keep serving the connections we have. */
	log_warn("accept");
}

/* HELLO: the identity of a peer, then its role.  On the unix socket the
 * kernel's SO_PEERCRED is the only truth; on TCP with auth none (loopback
 * only, refused otherwise by conf.c) the claimed uid is taken. */
static bool
conn_hello(struct conn *c, json_t *msg)
{
	int64_t seq = jint(msg, "seq", 0);
	const char *role = jstr(msg, "role");
	json_t *auth = json_object_get(msg, "auth");
	const char *method = jstr(auth, "method");
	const struct user_cache *u;
	json_t *rep;

	if (jint(msg, "version", -1) != PROTO_VERSION) {
		net_send(c, proto_reply_err(seq, ERR_PROTO, "protocol version %lld is not %d",
		    (long long)jint(msg, "version", -1), PROTO_VERSION));
		return false;
	}
	if (!role || (strcmp(role, "client") != 0 && strcmp(role, "execd") != 0 &&
	    strcmp(role, "peer") != 0 && strcmp(role, "witness") != 0)) {
		net_send(c, proto_reply_err(seq, ERR_PROTO, "HELLO needs role \"client\", \"execd\", "
		    "\"peer\" or \"witness\""));
		return false;
	}
	if (!method || strcmp(method, conf->auth) != 0) {
		net_send(c, proto_reply_err(seq, ERR_AUTH, "this master wants auth method \"%s\"", conf->auth));
		return false;
	}
	if (!c->is_unix) {
		int64_t uid = jint(msg, "uid", -1);
		if (uid < 0 || uid > UINT32_MAX - 1) {
			net_send(c, proto_reply_err(seq, ERR_AUTH, "HELLO without a valid uid"));
			return false;
		}
		/* auth = none never means "believe anyone": the claim must be
		 * the uid that owns the peer's loopback socket. */
		if (loopback_peer_uid(c->fd) != uid) {
			log_warnx("%s: refused: claims uid %lld, which does not own its socket", c->peer, (long long)uid);
			net_send(c, proto_reply_err(seq, ERR_AUTH, "cannot confirm uid %lld for this connection "
			    "(auth = none accepts only the owner of a loopback socket)", (long long)uid));
			return false;
		}
		c->uid = (uid_t)uid;
		u = user_lookup(c->uid);
		c->gid = u ? u->gid : (gid_t)c->uid;
	} else
		u = user_lookup(c->uid);
	c->user = u ? xstrdup(u->name) : xasprintf("%u", (unsigned)c->uid);
	c->manager = qm_is_manager(c->user, c->uid);
	c->role = strcmp(role, "execd") == 0 ? ROLE_EXECD : strcmp(role, "peer") == 0 ? ROLE_PEER :
	    strcmp(role, "witness") == 0 ? ROLE_WITNESS : ROLE_CLIENT;
	if ((c->role == ROLE_PEER || c->role == ROLE_WITNESS) && !net_is_daemon(c)) {
		log_warnx("%s: refused: uid %u is not a daemon identity of this cluster", c->peer,
		    (unsigned)c->uid);
		net_send(c, proto_reply_err(seq, ERR_AUTH, "only the daemon identity may connect as %s", role));
		return false;
	}
	/* A standby serves only the replication link, the execds' votes and
	 * the requests that say they want whichever master (qconf -sm, -takeover). */
	if ((c->role == ROLE_CLIENT || c->role == ROLE_EXECD) && !repl_writable() &&
	    !(c->role == ROLE_CLIENT && jbool(msg, "any", false))) {
		rep = proto_reply_err(seq, ERR_REDIRECT, "this master is %s; ask another", repl_role_name());
		if (repl_primary_addr())
			json_object_set_new(rep, "master", json_string(repl_primary_addr()));
		net_send(c, rep);
		return false;
	}
	/* Daemons and clients may be idle for long (WAIT, long-poll PULL). */
	bufferevent_set_timeouts(c->bev, NULL, NULL);
	rep = proto_reply_ok(seq);
	json_object_set_new(rep, "master", json_string(my_hostname()));
	json_object_set_new(rep, "epoch", json_integer(repl_epoch()));
	json_object_set_new(rep, "failover_timeout", json_integer(conf->failover_timeout_ms));
	json_object_set_new(rep, "uid", json_integer(c->uid));
	json_object_set_new(rep, "user", json_string(c->user));
	json_object_set_new(rep, "manager", json_boolean(c->manager));
	net_send(c, rep);
	return true;
}

static void
conn_read_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	json_t *msg;
	const char *why;
	int r;

	while (!c->dead && !c->closing &&
	    (r = proto_frame_take(in, &msg, conf->max_frame, &why)) != 0) {
		if (r < 0) {
			net_send(c, proto_reply_err(0, ERR_PROTO, "%s", why));
			conn_close_after_flush(c, why);
			return;
		}
		if (c->role == ROLE_NONE) {
			bool ok = msg_type_of(msg) == MSG_HELLO && conn_hello(c, msg);
			if (!ok && msg_type_of(msg) != MSG_HELLO)
				net_send(c, proto_reply_err(jint(msg, "seq", 0), ERR_AUTH,
				    "the first message must be HELLO"));
			json_decref(msg);
			if (!ok) {
				conn_close_after_flush(c, "refused before authentication");
				return;
			}
			continue;
		}
		request_dispatch(c, msg);
		json_decref(msg);
	}
}

static void
conn_write_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;
	if (c->closing && c->refs == 0)
		net_close(c, "closed after error");
}

static void
conn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;
	if (what & BEV_EVENT_TIMEOUT)
		net_close(c, "said nothing in time");
	else if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		net_close(c, "peer closed");
}

static int
listen_unix(const char *path)
{
	struct sockaddr_un sun;
	int fd;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path);
	/* The spool lock guarantees no other master of ours owns this path. */
	unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof sun) < 0) {
		log_warn("cannot bind unix socket %s", path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	chmod(path, 0666);
	lis_unix = evconnlistener_new(base, accept_cb, NULL,
	    LEV_OPT_CLOSE_ON_FREE, 128, fd);
	if (!lis_unix)
		fatalx("evconnlistener_new failed");
	evconnlistener_set_error_cb(lis_unix, accept_error_cb);
	return 0;
}

static int
listen_tcp(const char *host, int port)
{
	struct addrinfo hints, *res;
	char portstr[16];
	int rc;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	snprintf(portstr, sizeof portstr, "%d", port);
	if ((rc = getaddrinfo(host, portstr, &hints, &res)) != 0) {
		log_warnx("cannot resolve listen address %s: %s", host, gai_strerror(rc));
		return -1;
	}
	lis_tcp = evconnlistener_new_bind(base, accept_cb, NULL,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC, 512,
	    res->ai_addr, (int)res->ai_addrlen);
	freeaddrinfo(res);
	if (!lis_tcp) {
		log_warn("cannot listen on %s:%d", host, port);
		return -1;
	}
	evconnlistener_set_error_cb(lis_tcp, accept_error_cb);
	return 0;
}

int
net_listen(void)
{
	if (conf->unix_socket && listen_unix(conf->unix_socket) < 0)
		return -1;
	if (conf->listen && listen_tcp(conf->listen_host, conf->listen_port) < 0)
		return -1;
	return 0;
}

void
net_shutdown(void)
{
	struct conn *c;
	if (lis_unix)
		evconnlistener_free(lis_unix);
	if (lis_tcp)
		evconnlistener_free(lis_tcp);
	lis_unix = lis_tcp = NULL;
	if (conf->unix_socket)
		unlink(conf->unix_socket);
	while ((c = TAILQ_FIRST(&conns)) != NULL)
		net_close(c, "shutting down");
}

struct conn *
net_next(struct conn *c)
{
	return c ? TAILQ_NEXT(c, entry) : TAILQ_FIRST(&conns);
}
