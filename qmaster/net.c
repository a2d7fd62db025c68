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

struct held {
	TAILQ_ENTRY(held) entry;
	struct conn      *c;
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
	c->refs++;
	TAILQ_INSERT_TAIL(&held, h, entry);
}

void
net_send(struct conn *c, json_t *msg)
{
	if (store_in_txn(store)) {
		net_hold(c, msg, NULL, 0);
		return;
	}
	conn_write_now(c, msg, NULL, 0);
	json_decref(msg);
}

void
net_send_text(struct conn *c, char *text, size_t len)
{
	if (store_in_txn(store)) {
		net_hold(c, NULL, text, len);
		return;
	}
	conn_write_now(c, NULL, text, len);
	free(text);
}

void
net_flush_held(void)
{
	struct held *h;
	while ((h = TAILQ_FIRST(&held)) != NULL) {
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
net_close(struct conn *c, const char *why)
{
	if (c->dead)
		return;
	if (why)
		log_debug("%s: closing: %s", c->peer, why);
	TAILQ_REMOVE(&conns, c, entry);
	if (c->role == ROLE_EXECD)
		exechost_conn_gone(c);
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

/* The identity of a TCP peer: from its munge credential (auth = munge), or
 * (auth = none, loopback only, refused otherwise by conf.c) the claimed uid
 * if it owns the peer's socket.  0, or -1 with the refusal in err. */
static int
conn_tcp_identity(struct conn *c, json_t *msg, bool execd, char *err, size_t errlen)
{
	json_t *auth = json_object_get(msg, "auth");
	const char *method = jstr(auth, "method");
	const struct user_cache *u;
	int64_t uid;

	if (strcmp(conf->auth, "munge") == 0) {
		if (!method || strcmp(method, "munge") != 0) {
			snprintf(err, errlen, "this master wants a munge credential (auth = munge)");
			return -1;
		}
		/* The credential is the only source: no claimed uid is read. */
		if (auth_munge_decode(auth_munge_socket(conf->munge_socket), jstr(auth, "cred"),
		    execd ? AUTH_PAYLOAD_EXECD : AUTH_PAYLOAD_CLIENT, &c->uid, &c->gid, err, errlen) < 0)
			return -1;
		return 0;
	}
	uid = jint(msg, "uid", -1);
	if (uid < 0 || uid > UINT32_MAX - 1) {
		snprintf(err, errlen, "HELLO without a valid uid");
		return -1;
	}
	/* auth = none never means "believe anyone": the claim must be the uid
	 * that owns the peer's loopback socket. */
	if (auth_loopback_peer_uid(c->fd) != uid) {
		snprintf(err, errlen, "cannot confirm uid %lld for this connection "
		    "(auth = none accepts only the owner of a loopback socket)", (long long)uid);
		return -1;
	}
	c->uid = (uid_t)uid;
	u = user_lookup(c->uid);
	c->gid = u ? u->gid : (gid_t)c->uid;
	return 0;
}

/* The master's answer to an execd's nonce: a credential of the daemon
 * identity carrying it, so the execd knows who DISPATCHes to it. */
static int
conn_prove_master(json_t *rep, json_t *msg, char *err, size_t errlen)
{
	const char *nonce = jstr(msg, "nonce");
	char *payload, *cred;

	if (!nonce || strlen(nonce) != 2 * AUTH_NONCE_BYTES || strspn(nonce, "0123456789abcdef") != strlen(nonce)) {
		snprintf(err, errlen, "an execd's HELLO needs a nonce of %d hex digits", 2 * AUTH_NONCE_BYTES);
		return -1;
	}
	payload = xasprintf("%s%s", AUTH_PAYLOAD_MASTER, nonce);
	cred = auth_munge_encode(auth_munge_socket(conf->munge_socket), payload, err, errlen);
	free(payload);
	if (!cred)
		return -1;
	json_object_set_new(rep, "auth", json_pack("{s:s, s:s}", "method", "munge", "cred", cred));
	free(cred);
	return 0;
}

/* HELLO: the identity of a peer, then its role.  On the unix socket the
 * kernel's SO_PEERCRED is the only truth; on TCP see conn_tcp_identity.
 * Every refusal is logged with the peer's address. */
static bool
conn_hello(struct conn *c, json_t *msg)
{
	int64_t seq = jint(msg, "seq", 0);
	const char *role = jstr(msg, "role");
	const struct user_cache *u;
	char err[512];
	bool execd;
	json_t *rep;

	if (jint(msg, "version", -1) != PROTO_VERSION) {
		net_send(c, proto_reply_err(seq, ERR_PROTO, "protocol version %lld is not %d",
		    (long long)jint(msg, "version", -1), PROTO_VERSION));
		return false;
	}
	if (!role || (strcmp(role, "client") != 0 && strcmp(role, "execd") != 0)) {
		net_send(c, proto_reply_err(seq, ERR_PROTO, "HELLO needs role \"client\" or \"execd\""));
		return false;
	}
	execd = strcmp(role, "execd") == 0;
	if (!c->is_unix && conn_tcp_identity(c, msg, execd, err, sizeof err) < 0) {
		log_warnx("%s: refused: %s", c->peer, err);
		net_send(c, proto_reply_err(seq, ERR_AUTH, "%s", err));
		return false;
	}
	u = user_lookup(c->uid);
	c->user = u ? xstrdup(u->name) : xasprintf("%u", (unsigned)c->uid);
	c->manager = qm_is_manager(c->user, c->uid);
	c->operator = c->manager || qm_is_operator(c->user);
	c->daemon = qm_is_daemon(c->uid);
	c->role = execd ? ROLE_EXECD : ROLE_CLIENT;
	rep = proto_reply_ok(seq);
	if (execd && !c->is_unix && strcmp(conf->auth, "munge") == 0 &&
	    conn_prove_master(rep, msg, err, sizeof err) < 0) {
		json_decref(rep);
		log_warnx("%s: refused an execd: %s", c->peer, err);
		net_send(c, proto_reply_err(seq, ERR_AUTH, "%s", err));
		return false;
	}
	/* Daemons and clients may be idle for long (WAIT, long-poll PULL). */
	bufferevent_set_timeouts(c->bev, NULL, NULL);
	json_object_set_new(rep, "master", json_string(my_hostname()));
	json_object_set_new(rep, "epoch", json_integer(1));
	json_object_set_new(rep, "uid", json_integer(c->uid));
	json_object_set_new(rep, "user", json_string(c->user));
	json_object_set_new(rep, "manager", json_boolean(c->manager));
	json_object_set_new(rep, "operator", json_boolean(c->operator));
	net_send(c, rep);
	log_debug("%s: %s %s (uid %u)%s", c->peer, role, c->user, (unsigned)c->uid,
	    c->is_unix ? "" : strcmp(conf->auth, "munge") == 0 ? " by munge" : " by loopback owner");
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
