/* simexecd.c: plays many execds over the real protocol, for dispatch rate and latency.
 *
 * It speaks HELLO, REGISTER, LOAD and PULL, and CHILD_REGISTER and CHILD_TERM
 * for each DISPATCH, and reports the dispatch rate and the submit-to-dispatch
 * latency. */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "common/msg.h"
#include "common/common.h"

/* Hosts registering at once: ten thousand HELLOs in one burst would wait
 * in the master's queue past its HELLO timeout on a loaded machine. */
#define SIM_CONNECT_WINDOW 200

static const char usage[] =
    "usage: simexecd [-n HOSTS] [-p PREFIX] [-s SLOTS] [-d DELAY_MS] [-a ARCH] [-k KEY,...]\n"
    "                [-c JOBS] [-t SECONDS] [-i SECONDS] [-o FILE] [-M MASTER] [-q]\n"
    "  -n  simulated execds (default 50), named PREFIX1 .. PREFIXN (default prefix sim)\n"
    "  -s  slots of each (default 1); -d  run time of each job in ms (default 0)\n"
    "  -a  the hosts' arch (default simarch); -k  keys they offer\n"
    "  -c  exit once this many jobs have ended (their CHILD_TERM acknowledged)\n"
    "  -t  exit after this many seconds; -i  print the rate every SECONDS\n"
    "  -o  write one line per dispatch: id task host submit_ms dispatch_us\n"
    "  -M  the master (default: the first of $NOWQ_MASTER), unix:PATH or HOST:PORT\n"
    "  -q  print only the summary\n";

/* One job of a host between its DISPATCH and its CHILD_TERM. */
struct simjob {
	struct simhost *h;
	int64_t         id;
	int             task, attempt, slots;
	struct event   *ev;       /* the end timer when -d is given */
	struct simjob  *next;
};

struct simhost {
	char               *name;
	struct bufferevent *bev;
	int64_t             seq, hello_seq, register_seq, pull_seq;
	bool                ready, pulling, hold;
	int                 free, pull_free;
	struct simjob      *jobs;
	/* CHILD_TERM seqs waiting for their ACK (ring of at most slots*2). */
	int64_t            *terms;
	int                 nterms;
};

static struct {
	struct event_base *base;
	struct simhost    *hosts;
	int                nhosts, slots, delay_ms;
	const char        *prefix, *arch, *master;
	char             **keys;
	int64_t            want_jobs;
	int                secs, every;
	FILE              *out;
	bool               quiet;
	struct sockaddr_storage ss;
	socklen_t          sslen;
	/* counters */
	int                registered, failed;
	int                connecting;  /* the next host to connect */
	int64_t            dispatched, ended, acked, last_dispatched;
	int64_t            t_first_us, t_last_us, t_start_us;
	int32_t           *lat_us;     /* submit-to-dispatch, one per job */
	size_t             nlat, caplat;
	int                status;
} S;

static int64_t
wall_us(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

static void
send_msg(struct simhost *h, json_t *msg, int64_t *seqp)
{
	const char *why;
	int64_t seq = ++h->seq;

	json_object_set_new(msg, "seq", json_integer(seq));
	if (proto_frame_append(bufferevent_get_output(h->bev), msg, PROTO_MAX_FRAME, &why) < 0)
		fatalx("%s: cannot frame %s: %s", h->name, jstr(msg, "type"), why);
	json_decref(msg);
	if (seqp)
		*seqp = seq;
}

/* As execd's link_kick: one open PULL for all free slots, renewed when the
 * count changes. */
static void
kick(struct simhost *h)
{
	if (!h->ready || h->hold || h->free <= 0 || (h->pulling && h->pull_free == h->free))
		return;
	send_msg(h, msg_pull_pack(&(struct msg_pull){ .free = h->free }), &h->pull_seq);
	h->pulling = true;
	h->pull_free = h->free;
}

static void host_connect(struct simhost *h);

static void
stop_loop(void)
{
	event_base_loopexit(S.base, NULL);
}

static void
job_end(struct simhost *h, struct simjob *sj, int sig)
{
	int64_t seq;

	send_msg(h, msg_child_term_pack(&(struct msg_child_term){ .id = sj->id, .task = sj->task,
	    .attempt = sj->attempt, .host = h->name, .exit_status = sig ? -1 : 0, .signal = sig,
	    .utime = 0.0, .stime = 0.0, .maxrss_kb = 0, .end_time = now_ms() }), &seq);
	h->terms = xrealloc(h->terms, ((size_t)h->nterms + 1) * sizeof *h->terms);
	h->terms[h->nterms++] = seq;
	S.ended++;
	h->free += sj->slots;
	for (struct simjob **p = &h->jobs; *p; p = &(*p)->next)
		if (*p == sj) {
			*p = sj->next;
			break;
		}
	if (sj->ev)
		event_free(sj->ev);
	free(sj);
	kick(h);
}

static void
job_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct simjob *sj = arg;
	job_end(sj->h, sj, 0);
}

static void
record_latency(int64_t us)
{
	if (S.nlat == S.caplat) {
		S.caplat = S.caplat ? S.caplat * 2 : 4096;
		S.lat_us = xrealloc(S.lat_us, S.caplat * sizeof *S.lat_us);
	}
	S.lat_us[S.nlat++] = us < 0 ? 0 : us > INT32_MAX ? INT32_MAX : (int32_t)us;
}

static void
on_dispatch(struct simhost *h, json_t *msg)
{
	struct msg_dispatch d;
	int64_t t = wall_us();
	char err[64];
	json_t *j;
	size_t i;

	if (msg_dispatch_unpack(msg, &d, err, sizeof err) < 0)
		fatalx("%s: %s", h->name, err);
	if (h->pulling && d.seq == h->pull_seq)
		h->pulling = false;
	if (json_array_size(d.jobs) == 0)
		h->hold = true;     /* as execd: wait for the next LOAD tick */
	/* The fields a job object shares with every other: job_from_json's
	 * work would be the tool's, not the master's, on the figures. */
	json_array_foreach(d.jobs, i, j) {
		struct simjob *sj = xcalloc(1, sizeof *sj);
		int64_t submit = jint(j, "submit_time", 0);

		sj->h = h;
		sj->id = jint(j, "id", 0);
		sj->task = (int)jint(j, "task", 0);
		sj->attempt = (int)jint(j, "attempt", 0);
		sj->slots = (int)jint(j, "slots", 1);
		if (sj->slots < 1)
			sj->slots = 1;
		sj->next = h->jobs;
		h->jobs = sj;
		h->free -= sj->slots;
		if (!S.t_first_us)
			S.t_first_us = t;
		S.t_last_us = t;
		S.dispatched++;
		record_latency(t - submit * 1000);
		if (S.out)
			fprintf(S.out, "%lld %d %s %lld %lld\n", (long long)sj->id, sj->task, h->name,
			    (long long)submit, (long long)t);
		send_msg(h, msg_child_register_pack(&(struct msg_child_register){ .id = sj->id,
		    .task = sj->task, .attempt = sj->attempt, .host = h->name,
		    .pid = 1000 + (int)(S.dispatched % 30000), .start_time = now_ms() }), NULL);
		if (S.delay_ms > 0) {
			struct timeval tv = { S.delay_ms / 1000, (S.delay_ms % 1000) * 1000 };
			sj->ev = evtimer_new(S.base, job_timer_cb, sj);
			evtimer_add(sj->ev, &tv);
		} else
			job_end(h, sj, 0);
	}
	/* A benchmark script reads the lines as they come (W3 probes). */
	if (S.out)
		fflush(S.out);
	kick(h);
}

static void
on_signal(struct simhost *h, json_t *msg)
{
	struct msg_signal m;
	char err[64];

	if (msg_signal_unpack(msg, &m, err, sizeof err) < 0)
		return;
	for (struct simjob *sj = h->jobs; sj; sj = sj->next)
		if (sj->id == m.a.id && sj->task == m.a.task && sj->attempt == m.a.attempt) {
			job_end(h, sj, (int)m.signal);
			return;
		}
}

static void
on_ack(struct simhost *h, int64_t seq)
{
	for (int i = 0; i < h->nterms; i++)
		if (h->terms[i] == seq) {
			h->terms[i] = h->terms[--h->nterms];
			S.acked++;
			if (S.want_jobs && S.acked >= S.want_jobs)
				stop_loop();
			return;
		}
}

static void
on_reply(struct simhost *h, json_t *msg)
{
	int64_t seq = jint(msg, "seq", -1);
	struct msg_reply r;

	msg_reply_unpack(msg, &r, NULL, 0);
	if (!r.ok) {
		log_warnx("%s: request %lld refused: %s", h->name, (long long)seq, r.message ? r.message : "?");
		if (seq == h->hello_seq || seq == h->register_seq) {
			S.failed++;
			S.status = 1;
			stop_loop();
		} else if (seq == h->pull_seq) {
			h->pulling = false;
			h->hold = true;
		}
		return;
	}
	if (seq == h->register_seq) {
		h->ready = true;
		S.registered++;
		if (S.connecting < S.nhosts)
			host_connect(&S.hosts[S.connecting++]);
		if (S.registered == S.nhosts && !S.quiet)
			printf("registered %d hosts in %.2f s\n", S.nhosts,
			    (double)(wall_us() - S.t_start_us) / 1e6);
		fflush(stdout);
		kick(h);
	}
}

static void
read_cb(struct bufferevent *bev, void *arg)
{
	struct simhost *h = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	const char *why;
	json_t *msg;
	int r;

	while ((r = proto_frame_take(in, &msg, PROTO_MAX_FRAME, &why)) != 0) {
		if (r < 0)
			fatalx("%s: bad frame from the master: %s", h->name, why);
		switch (msg_type_of(msg)) {
		case MSG_REPLY:
			on_reply(h, msg);
			break;
		case MSG_DISPATCH:
			on_dispatch(h, msg);
			break;
		case MSG_SIGNAL:
			on_signal(h, msg);
			break;
		case MSG_ACK: {
			struct msg_ack a;
			msg_ack_unpack(msg, &a, NULL, 0);
			on_ack(h, a.seq);
			break;
		}
		default:
			break;
		}
		json_decref(msg);
	}
}

static void
event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct simhost *h = arg;

	if (what & BEV_EVENT_CONNECTED) {
		struct msg_register r = { .host = h->name, .slots = S.slots, .uid = geteuid(), .idle = true,
		    .attrs = { .arch = (char *)S.arch, .mem = 16LL << 30, .rating = 1.0, .keys = S.keys } };

		if (S.ss.ss_family != AF_UNIX) {
			int one = 1;
			setsockopt(bufferevent_getfd(bev), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		}
		send_msg(h, msg_hello_pack(&(struct msg_hello){ .role = "execd", .auth_method = "none",
		    .uid = geteuid() }), &h->hello_seq);
		send_msg(h, msg_register_pack(&r), &h->register_seq);
		send_msg(h, msg_load_pack(&(struct msg_load){ .idle = true }), NULL);
		return;
	}
	log_warnx("%s: connection to the master %s", h->name,
	    what & BEV_EVENT_EOF ? "closed" : strerror(EVUTIL_SOCKET_ERROR()));
	S.status = 1;
	stop_loop();
}


static void
retry_cb(evutil_socket_t fd, short what, void *arg)
{
	host_connect(arg);
}

static void
host_connect(struct simhost *h)
{
	int fd = socket(S.ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		fatal("socket (host %s)", h->name);
	h->bev = bufferevent_socket_new(S.base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (!h->bev)
		fatalx("bufferevent_socket_new failed");
	bufferevent_setcb(h->bev, read_cb, NULL, event_cb, h);
	bufferevent_enable(h->bev, EV_READ | EV_WRITE);
	if (bufferevent_socket_connect(h->bev, (struct sockaddr *)&S.ss, (int)S.sslen) < 0) {
		/* A full listen queue (EAGAIN on a unix socket) while a
		 * thousand hosts call at once: call again a little later. */
		struct timeval tv = { 0, 20000 + random() % 30000 };
		if (errno != EAGAIN)
			fatal("connect to %s (host %s)", S.master, h->name);
		bufferevent_free(h->bev);
		h->bev = NULL;
		event_base_once(S.base, -1, EV_TIMEOUT, retry_cb, h, &tv);
	}
}

/* Every few seconds, as execd's LOAD tick: a sign of life (the master loses
 * a host silent for host_timeout), and a new PULL after an empty DISPATCH. */
static void
load_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	for (int i = 0; i < S.nhosts; i++) {
		struct simhost *h = &S.hosts[i];
		if (!h->ready)
			continue;
		send_msg(h, msg_load_pack(&(struct msg_load){ .idle = true }), NULL);
		h->hold = false;
		kick(h);
	}
}

static void
report_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	int64_t d = S.dispatched - S.last_dispatched;
	S.last_dispatched = S.dispatched;
	printf("t=%.1f s dispatched %lld (%.0f/s) ended %lld acked %lld\n",
	    (double)(wall_us() - S.t_start_us) / 1e6, (long long)S.dispatched, (double)d / S.every,
	    (long long)S.ended, (long long)S.acked);
	fflush(stdout);
}

static void
stop_cb(evutil_socket_t fd, short what, void *arg)
{
	stop_loop();
}

static int
lat_cmp(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return x < y ? -1 : x > y;
}

static double
pct(double p)
{
	size_t k = (size_t)(p * (double)(S.nlat - 1) + 0.5);
	return S.nlat ? S.lat_us[k] / 1000.0 : 0;
}

static void
summary(void)
{
	double span = (double)(S.t_last_us - S.t_first_us) / 1e6;

	qsort(S.lat_us, S.nlat, sizeof *S.lat_us, lat_cmp);
	printf("hosts %d registered %d\n", S.nhosts, S.registered);
	printf("dispatched %lld jobs\n", (long long)S.dispatched);
	printf("ended %lld acked %lld\n", (long long)S.ended, (long long)S.acked);
	printf("dispatch_rate %.0f jobs/s (first to last dispatch, %.2f s)\n",
	    span > 0 ? (double)(S.dispatched - 1) / span : 0.0, span);
	printf("latency_ms median %.1f p90 %.1f p99 %.1f max %.1f (submit_time to DISPATCH)\n",
	    pct(0.5), pct(0.9), pct(0.99), pct(1.0));
}

/* The master to call: -M, else the first entry of NOWQ_MASTER. */
static void
resolve_master(void)
{
	const char *env = S.master ? S.master : getenv("NOWQ_MASTER");
	char *first, *host;
	int port;

	if (!env || !*env)
		fatalx("no master: give -M or set NOWQ_MASTER (nowq env)");
	first = xstrdup(env);
	first[strcspn(first, ", ")] = '\0';
	S.master = first;
	memset(&S.ss, 0, sizeof S.ss);
	if (strncmp(first, "unix:", 5) == 0) {
		struct sockaddr_un *sun = (struct sockaddr_un *)&S.ss;
		sun->sun_family = AF_UNIX;
		if (strlen(first + 5) >= sizeof sun->sun_path)
			fatalx("%s: socket path too long", first);
		snprintf(sun->sun_path, sizeof sun->sun_path, "%s", first + 5);
		S.sslen = sizeof *sun;
		return;
	}
	if (parse_hostport(first, &host, &port) < 0)
		fatalx("%s: not unix:PATH or HOST:PORT", first);
	{
		struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV }, *res;
		char p[16];
		int rc;
		snprintf(p, sizeof p, "%d", port);
		if ((rc = getaddrinfo(host, p, &hints, &res)) != 0)
			fatalx("%s: %s", host, gai_strerror(rc));
		memcpy(&S.ss, res->ai_addr, res->ai_addrlen);
		S.sslen = res->ai_addrlen;
		freeaddrinfo(res);
	}
	free(host);
}

static int
count_arg(const char *opt, const char *v, int64_t lo, int64_t hi, int64_t *out)
{
	char *end;
	long long n;

	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno || end == v || *end || n < lo || n > hi) {
		fprintf(stderr, "simexecd: %s wants a number from %lld to %lld, not \"%s\"\n", opt,
		    (long long)lo, (long long)hi, v);
		return -1;
	}
	*out = n;
	return 0;
}

int
main(int argc, char **argv)
{
	struct event *load_ev, *report_ev = NULL, *stop_ev = NULL, *sig_ev[2];
	struct timeval tv;
	struct rlimit rl;
	char *keys = NULL;
	int64_t v;
	int ch;

	S.nhosts = 50;
	S.slots = 1;
	S.prefix = "sim";
	S.arch = "simarch";
	while ((ch = getopt(argc, argv, "n:p:s:d:a:k:c:t:i:o:M:qh")) != -1) {
		switch (ch) {
		case 'n': if (count_arg("-n", optarg, 1, 100000, &v) < 0) return 2; S.nhosts = (int)v; break;
		case 's': if (count_arg("-s", optarg, 1, 10000, &v) < 0) return 2; S.slots = (int)v; break;
		case 'd': if (count_arg("-d", optarg, 0, 86400000, &v) < 0) return 2; S.delay_ms = (int)v; break;
		case 'c': if (count_arg("-c", optarg, 1, INT64_MAX / 2, &v) < 0) return 2; S.want_jobs = v; break;
		case 't': if (count_arg("-t", optarg, 1, 86400 * 7, &v) < 0) return 2; S.secs = (int)v; break;
		case 'i': if (count_arg("-i", optarg, 1, 3600, &v) < 0) return 2; S.every = (int)v; break;
		case 'p': S.prefix = optarg; break;
		case 'a': S.arch = optarg; break;
		case 'k': keys = optarg; break;
		case 'M': S.master = optarg; break;
		case 'q': S.quiet = true; break;
		case 'o':
			if ((S.out = fopen(optarg, "w")) == NULL) {
				fprintf(stderr, "simexecd: %s: %s\n", optarg, strerror(errno));
				return 2;
			}
			break;
		default:
			fputs(usage, ch == 'h' ? stdout : stderr);
			return ch == 'h' ? 0 : 2;
		}
	}
	if (optind != argc) {
		fputs(usage, stderr);
		return 2;
	}
	log_init("simexecd", LOG_LVL_WARN, NULL);
	if (keys) {
		size_t n = 0;
		char *k, *save = NULL, *dup = xstrdup(keys);
		for (k = strtok_r(dup, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
			S.keys = xrealloc(S.keys, (n + 2) * sizeof *S.keys);
			S.keys[n++] = xstrdup(k);
			S.keys[n] = NULL;
		}
		free(dup);
	}
	resolve_master();
	/* One descriptor per simulated host. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)S.nhosts + 64) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur < (rlim_t)S.nhosts + 64)
			fatalx("%d hosts need %d descriptors; the limit is %llu", S.nhosts, S.nhosts + 64,
			    (unsigned long long)rl.rlim_cur);
	}
	signal(SIGPIPE, SIG_IGN);
	S.base = event_base_new();
	if (!S.base)
		fatalx("event_base_new failed");
	S.t_start_us = wall_us();
	S.hosts = xcalloc((size_t)S.nhosts, sizeof *S.hosts);
	for (int i = 0; i < S.nhosts; i++) {
		S.hosts[i].name = xasprintf("%s%d", S.prefix, i + 1);
		S.hosts[i].free = S.slots;
	}
	while (S.connecting < S.nhosts && S.connecting < SIM_CONNECT_WINDOW)
		host_connect(&S.hosts[S.connecting++]);
	load_ev = event_new(S.base, -1, EV_PERSIST, load_tick_cb, NULL);
	tv = (struct timeval){ 5, 0 };
	event_add(load_ev, &tv);
	if (S.every) {
		report_ev = event_new(S.base, -1, EV_PERSIST, report_tick_cb, NULL);
		tv = (struct timeval){ S.every, 0 };
		event_add(report_ev, &tv);
	}
	if (S.secs) {
		stop_ev = evtimer_new(S.base, stop_cb, NULL);
		tv = (struct timeval){ S.secs, 0 };
		evtimer_add(stop_ev, &tv);
	}
	sig_ev[0] = evsignal_new(S.base, SIGINT, stop_cb, NULL);
	sig_ev[1] = evsignal_new(S.base, SIGTERM, stop_cb, NULL);
	event_add(sig_ev[0], NULL);
	event_add(sig_ev[1], NULL);
	event_base_dispatch(S.base);

	summary();
	if (S.out)
		fclose(S.out);
	for (int i = 0; i < S.nhosts; i++) {
		struct simhost *h = &S.hosts[i];
		while (h->jobs) {
			struct simjob *sj = h->jobs;
			h->jobs = sj->next;
			if (sj->ev)
				event_free(sj->ev);
			free(sj);
		}
		if (h->bev)
			bufferevent_free(h->bev);
		free(h->terms);
		free(h->name);
	}
	free(S.hosts);
	free(S.lat_us);
	strv_free(S.keys);
	free((char *)S.master);
	event_free(load_ev);
	if (report_ev)
		event_free(report_ev);
	if (stop_ev)
		event_free(stop_ev);
	event_free(sig_ev[0]);
	event_free(sig_ev[1]);
	event_base_free(S.base);
	return S.status;
}
