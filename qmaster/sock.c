/* sock.c: the master's listening sockets: binding them, the options its TCP connections take from them, and the descriptor limit. */
#include "config.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <netdb.h>

#include "qmaster/qmaster.h"

/* The descriptors the master asks for when it may (root). */
#define NET_WANT_FDS 65536

/* Descriptors are the connections the master can hold: take all the hard
 * limit allows, and more when privileged. */
void
net_raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < NET_WANT_FDS) {
		struct rlimit want = { NET_WANT_FDS, NET_WANT_FDS };
		if (setrlimit(RLIMIT_NOFILE, &want) == 0)
			rl = want;
	}
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		log_warn("cannot raise the descriptor limit");
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		log_info("up to %llu descriptors", (unsigned long long)rl.rlim_cur);
}

/* The options of every TCP connection of the master. */
int
net_tcp_opts_set(int fd)
{
	return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &(int){ 1 }, sizeof(int)) < 0 ? -1 : 0;
}

/* Linux gives an accepted socket the options of its listening socket
 * (net_bind_tcp sets them there): two system calls fewer for each of the
 * thousands of qstat connections a minute.  The first connection checks;
 * a kernel that does not pass them on has them set on every connection. */
bool
net_tcp_opts_needed(int fd)
{
	static int needed = -1;
	int v = 0;
	socklen_t len = sizeof v;

	if (needed < 0) {
		needed = getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, &len) < 0 || !v;
		if (needed)
			log_info("accepted sockets do not inherit TCP_NODELAY here; setting it on each");
	}
	return needed;
}

void
net_peer_name(const struct sockaddr_storage *ss, socklen_t len, char *buf, size_t n)
{
	char host[48], port[8];

	snprintf(buf, n, "unix");
	if (ss->ss_family != AF_UNIX && getnameinfo((const struct sockaddr *)ss, len, host, sizeof host,
	    port, sizeof port, NI_NUMERICHOST | NI_NUMERICSERV) == 0)
		snprintf(buf, n, "%s:%s", host, port);
}

int
net_bind_unix(const char *path, int backlog)
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
	if (listen(fd, backlog) < 0) {
		log_warn("cannot listen on unix socket %s", path);
		close(fd);
		return -1;
	}
	return fd;
}

int
net_bind_tcp(const char *host, int port, int backlog)
{
	struct addrinfo hints, *res;
	char portstr[16];
	int rc, fd;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	snprintf(portstr, sizeof portstr, "%d", port);
	if ((rc = getaddrinfo(host, portstr, &hints, &res)) != 0) {
		log_warnx("cannot resolve listen address %s: %s", host, gai_strerror(rc));
		return -1;
	}
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	/* A restarted master takes its port back at once (TIME_WAIT). */
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &(int){ 1 }, sizeof(int)) < 0 ||
	    bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, backlog) < 0) {
		log_warn("cannot listen on %s:%d", host, port);
		freeaddrinfo(res);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	freeaddrinfo(res);
	/* Passed on to the accepted sockets (net_tcp_opts_needed). */
	if (net_tcp_opts_set(fd) < 0) {
		log_warn("cannot set TCP_NODELAY and SO_KEEPALIVE on %s:%d", host, port);
		close(fd);
		return -1;
	}
	return fd;
}
