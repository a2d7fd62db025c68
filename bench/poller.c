/* poller.c: plays CLIENTS qstat processes polling one master RATE times a second each.
 *
 * Paused and resumed by signals, it reports the polls' rate, reply times and
 * its own CPU; with -s it is the server that answers them doing nothing, this
 * machine's floor. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "common/common.h"

static const char usage[] =
    "usage: poller [-k] [-p] HOST:PORT CLIENTS RATE STATS_FILE\n"
    "       poller -s PORT\n"
    "  CLIENTS clients each send what a brief `qstat` sends (HELLO, then STATUS of\n"
    "  pending and running jobs) RATE times a second, and wait for the answer before\n"
    "  the next (a client whose answer is late skips its turn).  Each poll is a new\n"
    "  connection, as a qstat process makes; -k keeps one connection per client.\n"
    "  -p starts paused.  SIGUSR1 pauses the polling, SIGUSR2 resumes it, SIGTERM ends it and writes\n"
    "  \"name value unit\" lines to STATS_FILE, counting only the polling time.\n"
    "  -s: listen on 127.0.0.1:PORT and answer every frame with a bare OK, doing\n"
    "  nothing else: what the polls cost this machine whatever the master does.\n";

struct client {
	int     fd;        /* -1 between polls (without -k) */
	bool    busy;      /* a poll is out */
	bool    hello_ok;  /* -k: the connection's HELLO was answered */
	int     frames;    /* replies still awaited for this poll */
	double  t;         /* when the poll left */
	char   *buf;
	size_t  len, cap;
};

static volatile sig_atomic_t paused, stopping;
static struct sockaddr_storage addr;
static socklen_t addrlen;
static int ep;
static bool keep;
static char *hello_frame, *status_frame;
static size_t hello_len, status_len;
static double *lat;
static size_t nlat, caplat;
static unsigned long long closed_early;

static void
on_signal(int sig)
{
	if (sig == SIGUSR1)
		paused = 1;
	else if (sig == SIGUSR2)
		paused = 0;
	else
		stopping = 1;
}

static double
now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static char *
frame(json_t *msg, size_t *len)
{
	char *body = json_dumps(msg, JSON_COMPACT);
	size_t n = strlen(body);
	char *f = xmalloc(n + 4);

	*len = proto_frame_put(f, body, n);
	free(body);
	json_decref(msg);
	return f;
}

static void
drop(struct client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->busy = c->hello_ok = false;
	c->len = 0;
}

static int
open_conn(struct client *c)
{
	int one = 1;

	if ((c->fd = socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (connect(c->fd, (struct sockaddr *)&addr, addrlen) < 0 && errno != EINPROGRESS) {
		drop(c);
		return -1;
	}
	if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &(struct epoll_event){ .events = EPOLLIN,
	    .data.ptr = c }) < 0)
		fatal("epoll_ctl");
	return 0;
}

/* The request goes in one write, as qstat's does: the socket buffer of a
 * fresh loopback connection takes it even before the handshake ends. */
static void
poll_once(struct client *c)
{
	bool fresh = c->fd < 0;
	char out[4096];
	size_t n = 0;

	if (fresh && open_conn(c) < 0) {
		closed_early++;
		return;
	}
	if (fresh || !c->hello_ok) {
		memcpy(out, hello_frame, hello_len);
		n = hello_len;
	}
	memcpy(out + n, status_frame, status_len);
	n += status_len;
	if (send(c->fd, out, n, MSG_NOSIGNAL) != (ssize_t)n) {
		closed_early++;
		drop(c);
		return;
	}
	c->frames = fresh || !c->hello_ok ? 2 : 1;
	c->hello_ok = true;
	c->busy = true;
	c->t = now_s();
}

static void
on_readable(struct client *c, bool counting)
{
	ssize_t r;

	for (;;) {
		if (c->cap - c->len < 65536) {
			c->cap = c->cap ? c->cap * 2 : 131072;
			c->buf = xrealloc(c->buf, c->cap);
		}
		r = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
		if (r > 0) {
			c->len += (size_t)r;
			continue;
		}
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		closed_early++;
		drop(c);
		return;
	}
	while (c->busy && c->len >= 4) {
		uint32_t n = proto_frame_len(c->buf);
		const char *why;
		json_t *msg;

		if (c->len < 4 + (size_t)n)
			break;
		if (!(msg = proto_decode(c->buf + 4, n, &why)) || !json_is_true(json_object_get(msg, "ok")))
			fatalx("the master refused a poll: %.*s", (int)(n < 400 ? n : 400), c->buf + 4);
		json_decref(msg);
		memmove(c->buf, c->buf + 4 + n, c->len - 4 - n);
		c->len -= 4 + n;
		if (--c->frames > 0)
			continue;
		c->busy = false;
		if (counting) {
			if (nlat == caplat) {
				caplat = caplat ? caplat * 2 : 65536;
				lat = xrealloc(lat, caplat * sizeof *lat);
			}
			lat[nlat++] = now_s() - c->t;
		}
		if (!keep)
			drop(c);
	}
}

/* The server that does nothing: each whole frame gets a bare OK with its
 * sequence number, in one write per read; end of file closes. */
static int
serve(const char *port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct epoll_event evs[256];
	char *in = xmalloc(1 << 16), out[1 << 16];
	int ls, one = 1;

	sin.sin_port = htons((uint16_t)atoi(port));
	if ((ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0 ||
	    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    setsockopt(ls, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0 ||
	    bind(ls, (struct sockaddr *)&sin, sizeof sin) < 0 || listen(ls, 4096) < 0)
		fatal("cannot listen on 127.0.0.1:%s", port);
	if ((ep = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, ls, &(struct epoll_event){ .events = EPOLLIN, .data.fd = ls }) < 0)
		fatal("epoll");
	for (;;) {
		int k = epoll_wait(ep, evs, 256, -1);

		for (int i = 0; i < k; i++) {
			int fd = evs[i].data.fd, c;
			size_t n = 0, o = 0;
			ssize_t r;

			if (fd == ls) {
				while ((c = accept4(ls, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0)
					if (epoll_ctl(ep, EPOLL_CTL_ADD, c, &(struct epoll_event){ .events = EPOLLIN,
					    .data.fd = c }) < 0)
						close(c);
				continue;
			}
			/* A poll's request is a few hundred bytes, written whole. */
			if ((r = recv(fd, in, 1 << 16, 0)) <= 0) {
				if (r == 0 || (errno != EAGAIN && errno != EINTR))
					close(fd);
				continue;
			}
			while (o + 4 <= (size_t)r) {
				uint32_t len = proto_frame_len(in + o);
				const char *why;
				json_t *msg;
				char body[128];
				int m;

				if (o + 4 + len > (size_t)r)
					break;
				msg = proto_decode(in + o + 4, len, &why);
				m = snprintf(body, sizeof body, "{\"type\":\"REPLY\",\"seq\":%lld,\"ok\":true}",
				    (long long)json_integer_value(json_object_get(msg, "seq")));
				json_decref(msg);
				if (n + 4 + (size_t)m <= sizeof out)
					n += proto_frame_put(out + n, body, (size_t)m);
				o += 4 + len;
			}
			if (n && send(fd, out, n, MSG_NOSIGNAL) < 0)
				close(fd);
		}
	}
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	struct sigaction sa = { .sa_handler = on_signal };
	struct epoll_event evs[256];
	struct client *cl;
	struct rusage ru;
	double t_on = 0, active = 0, t_start;
	unsigned long long due_total = 0, sent = 0, skipped = 0;
	long clients, turn = 0;
	double rate;
	char *host, *port;
	FILE *f;
	int opt;

	while ((opt = getopt(argc, argv, "kps:")) != -1) {
		if (opt == 'k')
			keep = true;
		else if (opt == 'p')
			paused = 1;
		else if (opt == 's')
			return serve(optarg);
		else {
			fputs(usage, stderr);
			return 2;
		}
	}
	if (argc - optind != 4 || (clients = atol(argv[optind + 1])) < 1 ||
	    (rate = atof(argv[optind + 2])) <= 0 || !(port = strrchr(argv[optind], ':'))) {
		fputs(usage, stderr);
		return 2;
	}
	host = xstrndup(argv[optind], (size_t)(port - argv[optind]));
	if (getaddrinfo(host, port + 1, &hints, &ai) != 0)
		fatalx("cannot resolve %s", argv[optind]);
	memcpy(&addr, ai->ai_addr, ai->ai_addrlen);
	addrlen = ai->ai_addrlen;
	freeaddrinfo(ai);
	hello_frame = frame(json_pack("{s:s, s:i, s:i, s:s, s:{s:s}, s:I, s:s}", "type", "HELLO",
	    "seq", 1, "version", PROTO_VERSION, "role", "client", "auth", "method", "none",
	    "uid", (json_int_t)getuid(), "user", "bench"), &hello_len);
	/* What a brief `qstat` asks for (client/cmd_qstat.c). */
	status_frame = frame(json_pack("{s:s, s:i, s:s, s:b, s:i}", "type", "STATUS", "seq", 2,
	    "states", "pr", "brief", 1, "limit", 20000), &status_len);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if ((ep = epoll_create1(EPOLL_CLOEXEC)) < 0)
		fatal("epoll_create1");
	cl = xcalloc((size_t)clients, sizeof *cl);
	for (long i = 0; i < clients; i++)
		cl[i].fd = -1;
	t_start = now_s();
	while (!stopping) {
		double now = now_s();
		bool counting = !paused;
		int k;

		/* Round robin at the total rate, as in a running cluster the
		 * clients' turns fall evenly; time paused does not count. */
		if (!paused) {
			unsigned long long due;

			if (t_on == 0)
				t_on = now;
			due = (unsigned long long)((active + now - t_on) * rate * (double)clients);
			for (; due_total < due; due_total++) {
				struct client *c = &cl[turn];

				turn = (turn + 1) % clients;
				if (c->busy) {
					skipped++;
					continue;
				}
				poll_once(c);
				sent++;
			}
		} else if (t_on != 0) {
			active += now - t_on;
			t_on = 0;
		}
		k = epoll_wait(ep, evs, 256, 1);
		for (int i = 0; i < k; i++) {
			struct client *c = evs[i].data.ptr;
			if (c->fd >= 0)
				on_readable(c, counting);
		}
	}
	if (t_on != 0)
		active += now_s() - t_on;
	getrusage(RUSAGE_SELF, &ru);
	qsort(lat, nlat, sizeof *lat, cmp_double);
	if (!(f = fopen(argv[optind + 3], "w")))
		fatal("%s", argv[optind + 3]);
	fprintf(f, "poll_rate %.0f polls/s\n", active > 0 ? (double)nlat / active : 0);
	fprintf(f, "poll_reply_median %.2f ms\n", nlat ? lat[nlat / 2] * 1000 : -1);
	fprintf(f, "poll_reply_p99 %.2f ms\n", nlat ? lat[(size_t)((double)nlat * 0.99)] * 1000 : -1);
	fprintf(f, "poll_turns_skipped %llu of %llu\n", skipped, sent + skipped);
	fprintf(f, "poll_failed %llu\n", closed_early);
	/* Near 100 % would mean the rate is the poller's limit, not the master's. */
	fprintf(f, "poller_cpu %.0f %%\n", (ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	    ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6) / (now_s() - t_start) * 100);
	fclose(f);
	return 0;
}
