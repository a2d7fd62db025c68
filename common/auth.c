/* auth.c: munge credentials on a TCP connection's first frame, and other ways to know a uid.
 *
 * The others: SO_PEERCRED, and a loopback socket's owner. */
#include "config.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include <munge.h>

#include "common.h"
#include "msg.h"

const char *
auth_munge_socket(const char *configured)
{
	const char *env = getenv("MUNGE_SOCKET");

	if (configured && *configured)
		return configured;
	if (env && *env)
		return env;
	return NULL;	/* libmunge's default, /run/munge/munge.socket.2 */
}

static munge_ctx_t
auth_ctx(const char *sock, char *err, size_t errlen)
{
	munge_ctx_t ctx = munge_ctx_create();

	if (!ctx) {
		snprintf(err, errlen, "cannot create a munge context");
		return NULL;
	}
	if (sock && munge_ctx_set(ctx, MUNGE_OPT_SOCKET, sock) != EMUNGE_SUCCESS) {
		snprintf(err, errlen, "cannot use munge socket %s", sock);
		munge_ctx_destroy(ctx);
		return NULL;
	}
	return ctx;
}

char *
auth_munge_encode(const char *sock, const char *payload, char *err, size_t errlen)
{
	munge_ctx_t ctx = auth_ctx(sock, err, errlen);
	char *cred = NULL;
	munge_err_t e;

	if (!ctx)
		return NULL;
	e = munge_encode(&cred, ctx, payload, (int)strlen(payload));
	if (e != EMUNGE_SUCCESS) {
		/* The context's message names the socket and the cause. */
		snprintf(err, errlen, "cannot get a munge credential: %s",
		    munge_ctx_strerror(ctx) ? munge_ctx_strerror(ctx) : munge_strerror(e));
		free(cred);
		cred = NULL;
	}
	munge_ctx_destroy(ctx);
	return cred;
}

int
auth_munge_decode(const char *sock, const char *cred, const char *want_payload,
    uid_t *uid, gid_t *gid, char *err, size_t errlen)
{
	munge_ctx_t ctx;
	munge_err_t e;
	void *payload = NULL;
	int len = 0, rc = -1;

	if (!cred || !*cred) {
		snprintf(err, errlen, "no munge credential");
		return -1;
	}
	if (strlen(cred) > AUTH_CRED_MAX) {
		snprintf(err, errlen, "munge credential longer than %d bytes", AUTH_CRED_MAX);
		return -1;
	}
	if ((ctx = auth_ctx(sock, err, errlen)) == NULL)
		return -1;
	e = munge_decode(cred, ctx, &payload, &len, uid, gid);
	switch (e) {
	case EMUNGE_SUCCESS:
		/* A credential made for something else (another program using
		 * the same munge key) is no HELLO of ours. */
		if (want_payload && ((size_t)len != strlen(want_payload) ||
		    memcmp(payload, want_payload, (size_t)len) != 0))
			snprintf(err, errlen, "munge credential was not made for this (payload differs)");
		else
			rc = 0;
		break;
	case EMUNGE_CRED_REPLAYED:
		snprintf(err, errlen, "replayed munge credential (uid %u)", (unsigned)*uid);
		break;
	case EMUNGE_CRED_EXPIRED:
		snprintf(err, errlen, "expired munge credential (uid %u); are the clocks in step?",
		    (unsigned)*uid);
		break;
	case EMUNGE_CRED_REWOUND:
		snprintf(err, errlen, "munge credential from the future (uid %u); are the clocks in step?",
		    (unsigned)*uid);
		break;
	case EMUNGE_CRED_INVALID:
		snprintf(err, errlen, "invalid munge credential (forged, damaged, or made with another key)");
		break;
	case EMUNGE_BAD_CRED:
	case EMUNGE_BAD_VERSION:
	case EMUNGE_BAD_CIPHER:
	case EMUNGE_BAD_MAC:
	case EMUNGE_BAD_ZIP:
	case EMUNGE_BAD_REALM:
	case EMUNGE_BAD_LENGTH:
		snprintf(err, errlen, "invalid munge credential (%s)",
		    munge_ctx_strerror(ctx) ? munge_ctx_strerror(ctx) : munge_strerror(e));
		break;
	default:
		snprintf(err, errlen, "munge credential refused: %s",
		    munge_ctx_strerror(ctx) ? munge_ctx_strerror(ctx) : munge_strerror(e));
		break;
	}
	free(payload);
	munge_ctx_destroy(ctx);
	return rc;
}

void
auth_nonce(char *buf, size_t n)
{
	unsigned char raw[AUTH_NONCE_BYTES];

	assert(n >= 2 * sizeof raw + 1);
	if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
		fatal("getrandom");
	for (size_t i = 0; i < sizeof raw; i++)
		snprintf(buf + 2 * i, 3, "%02x", raw[i]);
}

/* The uid of a unix socket's peer (SO_PEERCRED), or -1. */
static int64_t
auth_peercred_uid(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof cred;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return -1;
	return (int64_t)cred.uid;
}

/* A v4-mapped IPv6 address as the IPv4 one it stands for. */
static void
auth_unmap(struct sockaddr_storage *ss)
{
	struct sockaddr_in6 a6 = *(struct sockaddr_in6 *)ss;
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = a6.sin6_port };

	memcpy(&a4.sin_addr, &a6.sin6_addr.s6_addr[12], sizeof a4.sin_addr);
	memset(ss, 0, sizeof *ss);
	memcpy(ss, &a4, sizeof a4);
}

/*
 * The owner of the socket at the other end of a loopback TCP connection.
 * The kernel's sock_diag answers for that one socket, named by its four
 * ends (its local end is our peer's address): one round trip however
 * many sockets the host has.  Reading /proc/net/tcp instead costs a line
 * per socket, so a HELLO would slow with every connection held open; it
 * stays as the fallback where netlink is not allowed (some sandboxes).
 */
int64_t
auth_loopback_peer_uid(int fd)
{
	struct sockaddr_storage me, peer;
	socklen_t ml = sizeof me, pl = sizeof peer;
	int64_t uid;

	if (getsockname(fd, (struct sockaddr *)&me, &ml) < 0 ||
	    getpeername(fd, (struct sockaddr *)&peer, &pl) < 0)
		return -1;
	if (peer.ss_family != me.ss_family ||
	    (peer.ss_family != AF_INET && peer.ss_family != AF_INET6))
		return -1;
	/* On a dual-stack listener (qrsh's) an IPv4 peer has a mapped IPv6
	 * address, but its socket is an IPv4 one, listed as such. */
	if (peer.ss_family == AF_INET6 &&
	    IN6_IS_ADDR_V4MAPPED(&((struct sockaddr_in6 *)&peer)->sin6_addr) &&
	    IN6_IS_ADDR_V4MAPPED(&((struct sockaddr_in6 *)&me)->sin6_addr)) {
		auth_unmap(&peer);
		auth_unmap(&me);
	}
	if ((uid = auth_peer_uid_diag(&peer, &me)) == AUTH_UID_UNKNOWN)
		uid = auth_peer_uid_proc(&peer, &me);
	return uid;
}

/* A sock_diag request by the four ends, without the DUMP flag, finds one
 * socket (inet_diag_find_one_icsk); sockets the kernel does not know get
 * an error reply, ENOENT.  The netlink socket stays open for the next
 * HELLO (a master sees thousands of qstat connections a minute), one per
 * thread (the master's query thread checks its own clients); each
 * request has its own sequence number, and an answer with another one (a
 * stale answer, which should not exist) is skipped, never believed. */
int64_t
auth_peer_uid_diag(const struct sockaddr_storage *peer, const struct sockaddr_storage *me)
{
	static _Thread_local int s = -1;
	static _Thread_local uint32_t seq;
	struct {
		struct nlmsghdr         nlh;
		struct inet_diag_req_v2 r;
	} req;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	union {
		struct nlmsghdr nlh;
		char            buf[8192];
	} rep;
	const struct nlmsghdr *h;
	ssize_t n;
	int64_t uid = AUTH_UID_UNKNOWN;

	memset(&req, 0, sizeof req);
	req.nlh.nlmsg_len = sizeof req;
	req.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.nlh.nlmsg_flags = NLM_F_REQUEST;
	req.nlh.nlmsg_seq = ++seq;
	req.r.sdiag_family = (uint8_t)peer->ss_family;
	req.r.sdiag_protocol = IPPROTO_TCP;
	req.r.idiag_states = ~0u;
	req.r.id.idiag_cookie[0] = req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	if (peer->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const void *)peer, *b = (const void *)me;
		req.r.id.idiag_sport = a->sin_port;
		req.r.id.idiag_dport = b->sin_port;
		memcpy(req.r.id.idiag_src, &a->sin_addr, sizeof a->sin_addr);
		memcpy(req.r.id.idiag_dst, &b->sin_addr, sizeof b->sin_addr);
	} else {
		const struct sockaddr_in6 *a = (const void *)peer, *b = (const void *)me;
		req.r.id.idiag_sport = a->sin6_port;
		req.r.id.idiag_dport = b->sin6_port;
		memcpy(req.r.id.idiag_src, &a->sin6_addr, sizeof a->sin6_addr);
		memcpy(req.r.id.idiag_dst, &b->sin6_addr, sizeof b->sin6_addr);
	}
	if (s < 0 && (s = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG)) < 0)
		return AUTH_UID_UNKNOWN;
	if (sendto(s, &req, sizeof req, 0, (struct sockaddr *)&kernel, sizeof kernel) != (ssize_t)sizeof req)
		goto fail;
	/* The kernel answers while handling sendto, so this does not wait. */
again:
	do
		n = recv(s, &rep, sizeof rep, MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		goto fail;
	for (h = &rep.nlh; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
		if (h->nlmsg_seq != seq)
			goto again;
		if (h->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(h);
			/* No such socket: the /proc scan would not find it either. */
			if (h->nlmsg_len >= NLMSG_LENGTH(sizeof *e) && e->error == -ENOENT)
				uid = -1;
			break;
		}
		if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY &&
		    h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct inet_diag_msg))) {
			const struct inet_diag_msg *m = NLMSG_DATA(h);
			uid = (int64_t)m->idiag_uid;
			break;
		}
	}
	return uid;
fail:
	/* A fresh socket next time, with nothing left in it. */
	close(s);
	s = -1;
	return AUTH_UID_UNKNOWN;
}

/* The kernel lists every TCP socket with its owner in /proc/net/tcp; the
 * one whose local end is our peer's address is the peer's. */
int64_t
auth_peer_uid_proc(const struct sockaddr_storage *peer, const struct sockaddr_storage *me)
{
	char want_local[64], want_rem[64], line[512];
	FILE *fp;
	int64_t uid = -1;

	if (peer->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const void *)peer, *b = (const void *)me;
		snprintf(want_local, sizeof want_local, "%08X:%04X", a->sin_addr.s_addr, ntohs(a->sin_port));
		snprintf(want_rem, sizeof want_rem, "%08X:%04X", b->sin_addr.s_addr, ntohs(b->sin_port));
		fp = fopen("/proc/net/tcp", "re");
	} else if (peer->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const void *)peer, *b = (const void *)me;
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

int64_t
auth_master_uid(int fd, bool is_unix, const char *method, const char *sock, const json_t *rep,
    const char *nonce, char *err, size_t errlen)
{
	const char *cred = json_string_value(json_object_get(json_object_get(rep, "auth"), "cred"));
	char *want;
	uid_t uid;
	gid_t gid;
	int rc;

	if (is_unix || strcmp(method, "none") == 0) {
		int64_t u = is_unix ? auth_peercred_uid(fd) : auth_loopback_peer_uid(fd);
		if (u < 0)
			snprintf(err, errlen, "cannot tell which user runs it");
		return u;
	}
	if (!cred) {
		snprintf(err, errlen, "its HELLO reply has no munge credential");
		return -1;
	}
	want = xasprintf("%s%s", AUTH_PAYLOAD_MASTER, nonce);
	rc = auth_munge_decode(sock, cred, want, &uid, &gid, err, errlen);
	free(want);
	return rc < 0 ? -1 : (int64_t)uid;
}

void
auth_hello_daemon(struct msg_hello *m, const char *method, const char *sock, const char *payload,
    char **cred)
{
	char err[512];

	*cred = NULL;
	m->auth_method = "none";
	m->auth_cred = NULL;
	if (strcmp(method, "munge") != 0)
		return;
	/* Without a credential the HELLO still says munge: the master then
	 * refuses it with its reason. */
	m->auth_method = "munge";
	if ((*cred = auth_munge_encode(sock, payload, err, sizeof err)) == NULL)
		log_warnx("%s", err);
	m->auth_cred = *cred;
}
