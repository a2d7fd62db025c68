/* gone.c: asks the kernel whether nothing listens at a master's address any more (the daemons' death evidence for a fast failover).
 *
 * A TCP connection to a port nobody listens on is answered by the host
 * with a reset (ECONNREFUSED): the host is up and the process that held the
 * port is gone.  A live master, even frozen or overloaded, never causes
 * one (a full backlog drops the SYN), and neither does a cut network (the
 * connection times out or the host is unreachable), so only a refusal
 * counts; anything else is no evidence at all. */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "common.h"

struct gone_probe {
	int          fd;    /* -1: connect() answered at once, with err */
	int          err;
	gone_cb     *cb;
	void        *arg;
};

static void
gone_done(evutil_socket_t fd, short what, void *p)
{
	struct gone_probe *g = p;
	int err = 0;
	socklen_t len = sizeof err;

	if (g->fd >= 0) {
		if (!(what & EV_WRITE) || getsockopt(g->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
			err = ETIMEDOUT;
		close(g->fd);
	} else
		err = g->err;
	g->cb(g->arg, err == ECONNREFUSED);
	free(g);
}

/* cb(arg, refused) once, from the loop, never from this call: refused
 * only when addr ("host:port") answered a new connection with a reset
 * within timeout_ms.  -1 when addr does not resolve (no callback then). */
int
gone_probe(struct event_base *base, const char *addr, int timeout_ms, gone_cb *cb, void *arg)
{
	struct addrinfo *res;
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 }, zero = { 0, 0 };
	struct gone_probe *g;
	int fd;

	if (resolve_hostport(addr, &res) < 0)
		return -1;
	g = xcalloc(1, sizeof *g);
	g->cb = cb;
	g->arg = arg;
	g->fd = -1;
	fd = socket(res->ai_family, res->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, res->ai_protocol);
	if (fd < 0)
		g->err = errno;
	else if (connect(fd, res->ai_addr, res->ai_addrlen) == 0) {
		g->err = EISCONN;
		close(fd);
	} else if (errno != EINPROGRESS) {
		g->err = errno;
		close(fd);
	} else
		g->fd = fd;
	freeaddrinfo(res);
	if (g->fd >= 0)
		event_base_once(base, g->fd, EV_WRITE, gone_done, g, &tv);
	else
		event_base_once(base, -1, EV_TIMEOUT, gone_done, g, &zero);
	return 0;
}
