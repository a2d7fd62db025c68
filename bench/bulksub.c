/* bulksub.c: submits COUNT copies of one job over one connection, pipelined, and reports the rate.
 *
 * The job takes qsub's options; the rate counts acknowledged, that is
 * committed, submissions. */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "client/client.h"

extern char **environ;

static const char usage[] =
    "usage: bulksub [-w WINDOW] [-r RATE] [-q] [-t] COUNT QSUB_OPTION... [COMMAND ARG...]\n"
    "  submits COUNT copies of the job qsub would build from the options (-b y given,\n"
    "  so the command is a program), at most WINDOW (default 2000) unanswered at once\n"
    "  and, with -r, RATE per second, over the first entry of $NOWQ_MASTER; prints\n"
    "  the rate of acknowledged ones; -t also prints \"first ID US\": the first job's id\n"
    "  and the wall clock (microseconds) just before its SUBMIT was written\n";

static int
connect_master(const char *spec)
{
	char *first = xstrdup(spec), *host;
	int fd = -1, port;

	first[strcspn(first, ", ")] = '\0';
	if (strncmp(first, "unix:", 5) == 0) {
		struct sockaddr_un sun = { .sun_family = AF_UNIX };
		snprintf(sun.sun_path, sizeof sun.sun_path, "%s", first + 5);
		if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
		    connect(fd, (struct sockaddr *)&sun, sizeof sun) < 0)
			fatal("%s", first);
	} else if (parse_hostport(first, &host, &port) == 0) {
		struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV }, *res;
		char p[16];
		int one = 1;
		snprintf(p, sizeof p, "%d", port);
		if (getaddrinfo(host, p, &hints, &res) != 0)
			fatalx("cannot resolve %s", host);
		if ((fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
		    connect(fd, res->ai_addr, res->ai_addrlen) < 0)
			fatal("%s", first);
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		freeaddrinfo(res);
		free(host);
	} else
		fatalx("%s: not unix:PATH or HOST:PORT", first);
	free(first);
	return fd;
}

/* Appends one frame of text to buf. */
static void
frame(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
	if (*len + n + 4 > *cap) {
		*cap = (*len + n + 4) * 2;
		*buf = xrealloc(*buf, *cap);
	}
	*len += proto_frame_put(*buf + *len, s, n);
}

int
main(int argc, char **argv)
{
	struct qsub_opts o;
	struct qsub_env env;
	struct passwd *pw = getpwuid(getuid());
	char cwd[PATH_MAX], err[512], *jobtext, *buf = NULL, *end;
	const char *master = getenv("NOWQ_MASTER"), *why = NULL;
	size_t len = 0, cap = 0;
	long long count, window = 2000, rate = 0, sent = 0, acked = 0, refused = 0;
	int64_t t0, t1;
	json_t *job, *hello, *rep;
	int fd, ai = 1;
	bool quiet = false, stamp = false;
	long long first_id = 0, first_us = 0;

	while (ai < argc && argv[ai][0] == '-' && strchr("wrqt", argv[ai][1]) && argv[ai][1] && !argv[ai][2]) {
		long long *v = argv[ai][1] == 'w' ? &window : &rate;
		if (argv[ai][1] == 'q' || argv[ai][1] == 't') {
			*(argv[ai][1] == 'q' ? &quiet : &stamp) = true;
			ai++;
			continue;
		}
		if (ai + 1 >= argc || (*v = strtoll(argv[ai + 1], &end, 10)) < 1 || *end) {
			fputs(usage, stderr);
			return 2;
		}
		ai += 2;
	}
	if (ai >= argc || (count = strtoll(argv[ai], &end, 10)) < 1 || *end) {
		fputs(usage, stderr);
		return 2;
	}
	ai++;
	log_init("bulksub", LOG_LVL_WARN, NULL);
	if (!master || !*master)
		fatalx("set NOWQ_MASTER (nowq env)");
	qsub_opts_init(&o);
	/* Always a program: there is no script file to read COUNT times. */
	{
		char **v = xcalloc((size_t)(argc - ai) + 3, sizeof *v);
		int n = 0;
		v[n++] = "-b";
		v[n++] = "y";
		for (int i = ai; i < argc; i++)
			v[n++] = argv[i];
		if (qsub_opts_parse_argv(&o, n, v) < 0)
			fatalx("%s", o.err);
		free(v);
	}
	if (!getcwd(cwd, sizeof cwd) || !pw)
		fatalx("cannot tell the current directory or user");
	env = (struct qsub_env){ environ, cwd, my_hostname(), pw->pw_name };
	if ((job = qsub_job_json(&o, NULL, &env, err, sizeof err)) == NULL)
		fatalx("%s", err);
	jobtext = json_dumps(job, JSON_COMPACT);
	json_decref(job);

	fd = connect_master(master);
	hello = json_pack("{s:s, s:i, s:i, s:s, s:{s:s}, s:I}", "type", "HELLO", "seq", 0,
	    "version", PROTO_VERSION, "role", "client", "auth", "method", "none",
	    "uid", (json_int_t)getuid());
	if (proto_send_fd(fd, hello) < 0 || proto_recv_fd(fd, &rep, 10000, &why) < 0)
		fatalx("HELLO: %s", why ? why : strerror(errno));
	if (!jbool(rep, "ok", false))
		fatalx("HELLO refused: %s", jstr(rep, "message") ? jstr(rep, "message") : "?");
	json_decref(hello);
	json_decref(rep);

	t0 = mono_us();
	while (acked + refused < count) {
		/* As many as the window and the pace allow, in one write; then
		 * the replies that have come, waiting only when nothing else can
		 * be done. */
		long long allowed = rate ? (long long)((double)(mono_us() - t0) / 1e6 * (double)rate) + 1 : count;
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		if (allowed > count)
			allowed = count;
		len = 0;
		while (sent < allowed && sent - acked - refused < window && len < (1u << 20)) {
			char *s = xasprintf("{\"type\":\"SUBMIT\",\"seq\":%lld,\"job\":%s}", sent + 1, jobtext);
			frame(&buf, &len, &cap, s, strlen(s));
			free(s);
			sent++;
		}
		if (!first_us) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			first_us = (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
		}
		for (size_t off = 0; off < len; ) {
			ssize_t w = write(fd, buf + off, len - off);
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				fatal("write");
			off += (size_t)w;
		}
		while (acked + refused < count &&
		    poll(&pfd, 1, sent == count || sent - acked - refused >= window ? 60000 :
		    rate ? 1 : 0) > 0) {
			if (proto_recv_fd(fd, &rep, 60000, &why) < 0)
				fatalx("reply: %s", why);
			if (jbool(rep, "ok", false)) {
				if (acked++ == 0)
					first_id = jint(rep, "id", 0);
			} else if (refused++ == 0)
				log_warnx("refused: %s", jstr(rep, "message") ? jstr(rep, "message") : "?");
			json_decref(rep);
			if (rate && sent < count && sent - acked - refused < window)
				break;
		}
	}
	t1 = mono_us();
	if (!quiet)
		printf("submitted %lld refused %lld in %.3f s: %.0f jobs/s\n", acked, refused,
		    (double)(t1 - t0) / 1e6, (double)acked / ((double)(t1 - t0) / 1e6));
	if (stamp)
		printf("first %lld %lld\n", first_id, first_us);
	close(fd);
	free(buf);
	free(jobtext);
	qsub_opts_free(&o);
	return refused ? 1 : 0;
}
