/* cmd_nowq.c: nowq start|stop|env|status: a personal cluster in one directory.
 *
 * A personal cluster is one qmaster and its execds. */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/common.h"
#include "client/client.h"

static int nowq_run(int argc, char **argv);

const struct cmd cmd_nowq = {
	"nowq",
	"nowq start [--dir DIR] [--slots N] [--execds N] [--port PORT] [--masters 1|2]\n"
	"       nowq stop [--dir DIR]\n"
	"       nowq env [--dir DIR]\n"
	"       nowq status [--dir DIR]\n"
	"       nowq fetch [-d DIR] JOB_ID...   (a job's staged outputs, into DIR or here)\n"
	"       nowq COMMAND [args...]   (qsub, qstat, qdel, qhold, qrls, qhost, qacct, qalter,\n"
	"                                qconf, qmod, qselect, qwait, qrsh, reserve, unreserve)\n"
	"DIR defaults to $NOWQ_DIR, else ~/.nowq.\n",
	nowq_run,
};

/* Longer unix socket paths do not fit in sun_path on every system. */
#define NOWQ_SOCK_MAX     100
#define NOWQ_STOP_WAIT_MS 10000
#define NOWQ_MAX_EXECDS   64

struct nowq_args {
	char *dir;
	int   slots;      /* 0: the number of CPUs */
	int   execds;     /* 0: as many as configured, at least 1 */
	int   port;       /* 0: a free one */
	int   masters;    /* 2: a primary and a hot standby */
};

/* What nowq needs of qmaster.conf, read by the master's own parser. */
struct nowq_master {
	char *conf_path;
	char *listen;
	char *unix_socket;
	char *spool_dir;
	char *pid_file;
	char *log_file;
};

static void
say(const char *fmt, ...) NOWQ_ATTR_PRINTF(1, 2);

/* Progress goes to stderr so that eval "$(nowq start)" sees only the export. */
static void
say(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "nowq: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static char *
default_dir(void)
{
	const char *d = getenv("NOWQ_DIR"), *home;
	struct passwd *pw;

	if (d && *d)
		return xstrdup(d);
	home = getenv("HOME");
	if ((!home || !*home) && (pw = getpwuid(getuid())) != NULL)
		home = pw->pw_dir;
	if (!home || !*home)
		client_die("neither $NOWQ_DIR nor $HOME is set; use --dir DIR");
	return xasprintf("%s/.nowq", home);
}

static char *
absolute(const char *path)
{
	char cwd[PATH_MAX];
	if (path[0] == '/')
		return xstrdup(path);
	if (!getcwd(cwd, sizeof cwd))
		client_die("cannot tell the current directory: %s", strerror(errno));
	return xasprintf("%s/%s", cwd, path);
}

static int
parse_count(const char *opt, const char *v, int lo, int hi)
{
	char *end;
	long n;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || end == v || *end || n < lo || n > hi)
		client_die("%s wants a number from %d to %d, not \"%s\"", opt, lo, hi, v);
	return (int)n;
}

static void
parse_args(int argc, char **argv, bool is_start, struct nowq_args *a)
{
	memset(a, 0, sizeof *a);
	for (int k = 2; k < argc; k++) {
		const char *o = argv[k], *v = NULL, *eq = strchr(o, '=');
		char name[32];
		size_t n = eq ? (size_t)(eq - o) : strlen(o);

		snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), o);
		if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
			client_usage(&cmd_nowq, stdout);
			exit(0);
		}
		if (strcmp(name, "--dir") != 0 && (!is_start || (strcmp(name, "--slots") != 0 &&
		    strcmp(name, "--execds") != 0 && strcmp(name, "--port") != 0 &&
		    strcmp(name, "--masters") != 0))) {
			client_errx("unknown option \"%s\"", o);
			client_usage(&cmd_nowq, stderr);
			exit(1);
		}
		if (eq)
			v = eq + 1;
		else if (k + 1 < argc)
			v = argv[++k];
		else
			client_die("option \"%s\" needs an argument", o);
		if (strcmp(name, "--dir") == 0) {
			free(a->dir);
			a->dir = xstrdup(v);
		} else if (strcmp(name, "--slots") == 0)
			a->slots = parse_count("--slots", v, 1, 100000);
		else if (strcmp(name, "--execds") == 0)
			a->execds = parse_count("--execds", v, 1, NOWQ_MAX_EXECDS);
		else if (strcmp(name, "--masters") == 0)
			a->masters = parse_count("--masters", v, 1, 2);
		else
			a->port = parse_count("--port", v, 1, 65535);
	}
	if (!a->dir)
		a->dir = default_dir();
	if (!*a->dir)
		client_die("--dir wants a directory");
	{
		char *abs = absolute(a->dir);
		free(a->dir);
		a->dir = abs;
	}
}

static int
mkdir_p(const char *path, mode_t mode)
{
	char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, mode) < 0 && errno != EEXIST) {
			free(p);
			return -1;
		}
		*s = '/';
	}
	if (mkdir(p, mode) < 0 && errno != EEXIST) {
		free(p);
		return -1;
	}
	free(p);
	return 0;
}

static bool
exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

/* Written whole or not at all: a half-written configuration would make the
 * next start fail in a confusing way. */
static void
write_file(const char *path, const char *text)
{
	char *tmp = xasprintf("%s.tmp.%d", path, (int)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	size_t n = strlen(text), off = 0;

	if (fd < 0)
		client_die("cannot create %s: %s", tmp, strerror(errno));
	while (off < n) {
		ssize_t w = write(fd, text + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			client_die("cannot write %s: %s", tmp, strerror(errno));
		off += (size_t)w;
	}
	if (fsync(fd) < 0 || close(fd) < 0 || rename(tmp, path) < 0)
		client_die("cannot write %s: %s", path, strerror(errno));
	free(tmp);
}

/* libconfuse string: backslash and double quote escaped. */
static char *
confuse_quote(const char *s)
{
	char *q = xmalloc(strlen(s) * 2 + 3), *d = q;
	*d++ = '"';
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			*d++ = '\\';
		*d++ = *s;
	}
	*d++ = '"';
	*d = '\0';
	return q;
}

static void
master_free(struct nowq_master *m)
{
	free(m->conf_path);
	free(m->listen);
	free(m->unix_socket);
	free(m->spool_dir);
	free(m->pid_file);
	free(m->log_file);
	memset(m, 0, sizeof *m);
}

/* DIR/qmaster.conf, and DIR/qmaster-2.conf for the standby. */
static char *
master_conf_path(const char *dir, int i)
{
	return i == 1 ? xasprintf("%s/qmaster.conf", dir) : xasprintf("%s/qmaster-%d.conf", dir, i);
}

static char *
dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

/* Reads master i's configuration back; false when there is none. */
static bool
master_read_n(const char *dir, int i, struct nowq_master *m)
{
	struct qm_conf *c;
	char err[1024];

	memset(m, 0, sizeof *m);
	m->conf_path = master_conf_path(dir, i);
	if (!exists(m->conf_path)) {
		master_free(m);
		return false;
	}
	if ((c = qmconf_load(m->conf_path, err, sizeof err)) == NULL)
		client_die("%s", err);
	m->listen = dup_or_null(c->listen);
	m->unix_socket = dup_or_null(c->unix_socket);
	m->spool_dir = xstrdup(c->spool_dir);
	m->pid_file = xstrdup(c->pid_file);
	m->log_file = dup_or_null(c->log_file);
	qmconf_free(c);
	return true;
}

static bool
master_read(const char *dir, struct nowq_master *m)
{
	return master_read_n(dir, 1, m);
}

/* The TCP address a local client or execd should use for listen. */
static char *
master_tcp(const struct nowq_master *m)
{
	char *host;
	int port;
	char *s;

	if (!m->listen || parse_hostport(m->listen, &host, &port) < 0)
		return NULL;
	if (strcmp(host, "0.0.0.0") == 0 || strcmp(host, "::") == 0)
		s = xasprintf("127.0.0.1:%d", port);
	else
		s = xstrdup(m->listen);
	free(host);
	return s;
}

static char *
master_env(const struct nowq_master *m)
{
	char *tcp = master_tcp(m), *s;
	if (m->unix_socket && tcp)
		s = xasprintf("unix:%s,%s", m->unix_socket, tcp);
	else if (m->unix_socket)
		s = xasprintf("unix:%s", m->unix_socket);
	else
		s = xstrdup(tcp ? tcp : "");
	free(tcp);
	return s;
}

/* Can a listener have 127.0.0.1:port now (as the master binds it)? */
static bool
port_free(int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ok = fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &(int){ 1 }, sizeof(int)) == 0 &&
	    bind(fd, (struct sockaddr *)&sin, sizeof sin) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

/*
 * A port for a master, with port + 1 free too (its query endpoint), other
 * than avoid and avoid + 1.  Taken below the kernel's ephemeral range:
 * there every outgoing connection takes a port, and holds it in TIME_WAIT
 * for a minute after, so a port free now may not be when the master binds
 * it, and port + 1 often is not.
 */
static int
free_port(int avoid)
{
	int lo = 32768, hi = 60999;
	const char *why;
	char *text = read_file("/proc/sys/net/ipv4/ip_local_port_range", 64, NULL, &why);

	if (text && sscanf(text, "%d %d", &lo, &hi) != 2)
		lo = 32768;
	free(text);
	/* 10000 and up: below are the well-known services' ports. */
	if (lo - 2 > 10000)
		for (int tries = 0; tries < 1000; tries++) {
			int port = 10000 + (int)(random() % (lo - 2 - 10000));
			if (port + 1 >= avoid && port <= avoid + 1)
				continue;
			if (port_free(port) && port_free(port + 1))
				return port;
		}
	client_die("cannot find two free TCP ports in a row on 127.0.0.1 below %d; use --port", lo);
}

static const char *
user_name(void)
{
	struct passwd *pw = getpwuid(getuid());
	if (!pw)
		client_die("uid %u has no user name", (unsigned)getuid());
	return pw->pw_name;
}

/* Master i of n (ports[0..n-1]); with two, each lists both as masters. */
static void
write_master_conf(const char *dir, int i, int n, const int *ports)
{
	const char *sfx = i == 1 ? "" : "-2";
	char *path = master_conf_path(dir, i), *sock = xasprintf("%s/qmaster%s.sock", dir, sfx);
	char *spool = xasprintf("%s/qmaster%s", dir, sfx), *log = xasprintf("%s/qmaster%s/qmaster.log", dir, sfx);
	char *qsock, *qspool, *qlog, *quser, *text, *masters;
	int port = ports[i - 1];

	if (strlen(sock) > NOWQ_SOCK_MAX) {
		free(sock);
		sock = xasprintf("/tmp/nowq-%u-%016llx%s.sock", (unsigned)getuid(),
		    (unsigned long long)hash_fnv1a64(dir, strlen(dir)), sfx);
	}
	masters = n == 2 ? xasprintf("# A primary and a hot standby: each is one of these.\n"
	    "masters     = {\"127.0.0.1:%d\", \"127.0.0.1:%d\"}\n", ports[0], ports[1]) : xstrdup("");
	qsock = confuse_quote(sock);
	qspool = confuse_quote(spool);
	qlog = confuse_quote(log);
	quser = confuse_quote(user_name());
	text = xasprintf(
	    "# qmaster.conf: the master of the personal nowq cluster in %s.\n"
	    "# Written by \"nowq start\"; later starts use it as it is, so edit freely.\n"
	    "spool_dir   = %s\n"
	    "listen      = \"127.0.0.1:%d\"\n"
	    "unix_socket = %s\n"
	    "# Loopback only, so no munge: fine for one user's own cluster.\n"
	    "auth        = \"none\"\n"
	    "managers    = {%s}\n"
	    "log_file    = %s\n"
	    "# Jobs of root run only where this says so; a cluster root started is root's own.\n"
	    "allow_root_jobs = %s\n"
	    "%s"
	    "\n"
	    "queue \"all.q\" {\n"
	    "\tpriority = 0\n"
	    "\thosts    = \"@all\"\n"
	    "}\n", dir, qspool, port, qsock, quser, qlog, getuid() == 0 ? "true" : "false", masters);
	write_file(path, text);
	say("wrote %s", path);
	free(text);
	free(qsock);
	free(qspool);
	free(qlog);
	free(quser);
	free(masters);
	free(path);
	free(sock);
	free(spool);
	free(log);
}

static void
write_execd_ini(const char *dir, int i, int n, const char *masters, int slots)
{
	char *path = xasprintf("%s/execd-%d.ini", dir, i), *name, *text;

	name = n == 1 ? xstrdup(my_hostname()) : xasprintf("%s-%d", my_hostname(), i);
	text = xasprintf(
	    "; execd.ini: exec daemon %d of the personal nowq cluster in %s.\n"
	    "; Written by \"nowq start\"; later starts use it as it is, so edit freely.\n"
	    "[execd]\n"
	    "name = %s\n"
	    "masters = %s\n"
	    "spool_dir = %s/execd-%d\n"
	    "slots = %d\n"
	    "load_threshold = none\n"
	    "load_interval = 5\n"
	    "tmpdir = /tmp\n"
	    "auth = none\n"
	    "log_file = %s/execd-%d/execd.log\n",
	    i, dir, name, masters, dir, i, slots, dir, i);
	write_file(path, text);
	say("wrote %s", path);
	free(text);
	free(name);
	free(path);
}

/* The execd-I.ini files present, in order of I. */
static int
execd_list(const char *dir, int *nums, int max)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL && n < max) {
		int i;
		char tail[8];
		if (sscanf(e->d_name, "execd-%d.%7s", &i, tail) == 2 && strcmp(tail, "ini") == 0 &&
		    i >= 1 && i <= NOWQ_MAX_EXECDS) {
			char *canon = xasprintf("execd-%d.ini", i);
			if (strcmp(canon, e->d_name) == 0)
				nums[n++] = i;
			free(canon);
		}
	}
	closedir(d);
	for (int a = 1; a < n; a++)
		for (int b = a; b > 0 && nums[b - 1] > nums[b]; b--) {
			int t = nums[b];
			nums[b] = nums[b - 1];
			nums[b - 1] = t;
		}
	return n;
}

struct execd_info {
	char *ini;
	char *name;
	char *pid_file;
	char *log_file;
};

/* Reads execd i's configuration by execd's own parser. */
static void
execd_info_read(const char *dir, int i, struct execd_info *x)
{
	struct execd_conf *c;
	char err[1024];

	x->ini = xasprintf("%s/execd-%d.ini", dir, i);
	if ((c = execdconf_load(x->ini, err, sizeof err)) == NULL)
		client_die("%s", err);
	x->name = xstrdup(c->name);
	x->log_file = c->log_file ? xstrdup(c->log_file) : NULL;
	x->pid_file = xasprintf("%s/execd.pid", c->spool_dir);
	execdconf_free(c);
}

static void
execd_info_free(struct execd_info *x)
{
	free(x->ini);
	free(x->name);
	free(x->pid_file);
	free(x->log_file);
}

/* A live pid from the pid file, only if that process is the daemon meant:
 * a stale file may name a pid the kernel gave to something else. */
static pid_t
daemon_pid(const char *pid_file, const char *prog)
{
	pid_t pid = pidfile_read_live(pid_file);
	char *path, *cmd;
	const char *why, *base;
	size_t len;

	if (pid <= 0)
		return 0;
	path = xasprintf("/proc/%d/cmdline", (int)pid);
	cmd = read_file(path, 65536, &len, &why);
	free(path);
	if (!cmd)
		return exists("/proc/self") ? 0 : pid;
	base = strrchr(cmd, '/');
	base = base ? base + 1 : cmd;
	if (!strstr(base, prog))
		pid = 0;
	free(cmd);
	return pid;
}

static bool
is_executable(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* The daemons: $NOWQ_SBINDIR, else beside this program, else the build
 * tree's layout (client/../qmaster/qmaster), else SBINDIR. */
static char *
find_daemon(const char *prog)
{
	char tried[4 * PATH_MAX] = "", *self;
	const char *env = getenv("NOWQ_SBINDIR");
	char *cand[3];
	int n = 0;

	if (env && *env)
		cand[n++] = xasprintf("%s/%s", env, prog);
	else {
		if ((self = exe_dir()) != NULL) {
			cand[n++] = xasprintf("%s/%s", self, prog);
			cand[n++] = xasprintf("%s/../%s/%s", self, prog, prog);
			free(self);
		}
		cand[n++] = xasprintf("%s/%s", SBINDIR, prog);
	}
	for (int i = 0; i < n; i++) {
		if (is_executable(cand[i])) {
			char *found = cand[i];
			for (int k = i + 1; k < n; k++)
				free(cand[k]);
			return found;
		}
		snprintf(tried + strlen(tried), sizeof tried - strlen(tried), "%s%s", i ? ", " : "",
		    cand[i]);
		free(cand[i]);
	}
	client_die("cannot find the %s program (tried %s); build it (make %s/%s) or set "
	    "NOWQ_SBINDIR to the directory that holds it", prog, tried, prog, prog);
}

/* Runs PROG -c CONF; the daemons go to the background themselves and exit
 * 0 only once they are ready, so the status says whether it worked. */
static int
run_daemon(const char *prog, const char *conf)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		client_die("fork: %s", strerror(errno));
	if (pid == 0) {
		int fd = open("/dev/null", O_RDONLY);
		if (fd >= 0) {
			dup2(fd, 0);
			close(fd);
		}
		execl(prog, prog, "-c", conf, (char *)NULL);
		fprintf(stderr, "nowq: error: cannot run %s: %s\n", prog, strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			client_die("waitpid: %s", strerror(errno));
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

static pid_t
wait_pid_file(const char *pid_file, const char *prog)
{
	for (int i = 0; i < 50; i++) {
		pid_t pid = daemon_pid(pid_file, prog);
		if (pid > 0)
			return pid;
		usleep(20000);
	}
	return 0;
}

static void
start_master(const struct nowq_master *m, const char *what, char **prog)
{
	pid_t pid;
	int st;

	if ((pid = daemon_pid(m->pid_file, "qmaster")) > 0) {
		say("%s is already running (pid %d)", what, (int)pid);
		return;
	}
	if (!*prog)
		*prog = find_daemon("qmaster");
	if (mkdir_p(m->spool_dir, 0755) < 0)
		client_die("cannot create %s: %s", m->spool_dir, strerror(errno));
	if ((st = run_daemon(*prog, m->conf_path)) != 0)
		client_die("%s did not start (exit status %d); see %s", what, st,
		    m->log_file && *m->log_file ? m->log_file : "the messages above");
	pid = wait_pid_file(m->pid_file, "qmaster");
	say("started %s (pid %d): configuration %s, log %s", what, (int)pid, m->conf_path,
	    m->log_file && *m->log_file ? m->log_file : "none (log_file is unset)");
}

/* How many masters DIR has: 2 when qmaster-2.conf exists. */
static int
master_count(const char *dir)
{
	char *p = master_conf_path(dir, 2);
	int n = exists(p) ? 2 : 1;
	free(p);
	return n;
}

/* NOWQ_MASTER: every master, in order; clients follow redirects. */
static char *
masters_env(const char *dir, int n)
{
	char *env = xstrdup("");
	for (int i = 1; i <= n; i++) {
		struct nowq_master m;
		char *e, *t;
		if (!master_read_n(dir, i, &m))
			continue;
		e = master_env(&m);
		t = xasprintf("%s%s%s", env, *env ? "," : "", e);
		free(env);
		free(e);
		env = t;
		master_free(&m);
	}
	return env;
}

static int
nowq_start(const struct nowq_args *a)
{
	struct nowq_master m, m2;
	int nums[NOWQ_MAX_EXECDS], have, want, ncpu, nmasters, rc = 0;
	char *masters, *env, *qmaster_prog = NULL, *execd_prog = NULL;
	pid_t pid;

	if (mkdir_p(a->dir, 0755) < 0)
		client_die("cannot create %s: %s", a->dir, strerror(errno));
	nmasters = master_count(a->dir);
	if (!master_read(a->dir, &m)) {
		int ports[2];
		nmasters = a->masters ? a->masters : 1;
		srandom((unsigned)getpid() ^ (unsigned)mono_ms());
		ports[0] = a->port ? a->port : free_port(-10);
		ports[1] = free_port(ports[0]);
		for (int i = 1; i <= nmasters; i++)
			write_master_conf(a->dir, i, nmasters, ports);
		if (!master_read(a->dir, &m))
			client_die("cannot read back %s/qmaster.conf", a->dir);
	} else {
		if (a->masters && a->masters != nmasters)
			client_die("%s already holds a cluster of %d master%s; --masters %d needs a new "
			    "directory", a->dir, nmasters, nmasters == 1 ? "" : "s", a->masters);
		if (a->port) {
			char *tcp = master_tcp(&m);
			char *want_tcp = xasprintf("127.0.0.1:%d", a->port);
			if (!tcp || strcmp(tcp, want_tcp) != 0)
				client_warnx("%s exists and listens on %s; --port %d is ignored", m.conf_path,
				    tcp ? tcp : "no TCP port", a->port);
			free(tcp);
			free(want_tcp);
		}
	}
	if ((masters = master_tcp(&m)) == NULL)
		client_die("%s has no TCP listen address for the execds", m.conf_path);
	if (nmasters == 2) {
		char *t2, *both;
		if (!master_read_n(a->dir, 2, &m2) || (t2 = master_tcp(&m2)) == NULL)
			client_die("cannot read the standby's %s/qmaster-2.conf", a->dir);
		both = xasprintf("%s, %s", masters, t2);
		free(masters);
		free(t2);
		masters = both;
	}
	have = execd_list(a->dir, nums, NOWQ_MAX_EXECDS);
	want = a->execds ? a->execds : have ? nums[have - 1] : 1;
	ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	for (int i = 1; i <= want; i++) {
		char *ini = xasprintf("%s/execd-%d.ini", a->dir, i);
		if (!exists(ini))
			write_execd_ini(a->dir, i, want, masters, a->slots ? a->slots :
			    ncpu > 0 ? ncpu : 1);
		free(ini);
	}
	free(masters);

	/* The masters first (the first listed becomes primary, the second
	 * its standby): execds connect to them. */
	start_master(&m, nmasters == 2 ? "qmaster 1" : "qmaster", &qmaster_prog);
	if (nmasters == 2) {
		start_master(&m2, "qmaster 2", &qmaster_prog);
		master_free(&m2);
	}
	for (int i = 1; i <= want; i++) {
		struct execd_info x = { 0 };
		int st;

		execd_info_read(a->dir, i, &x);
		if ((pid = daemon_pid(x.pid_file, "execd")) > 0)
			say("execd %s is already running (pid %d)", x.name ? x.name : x.ini, (int)pid);
		else {
			char *spool = xstrdup(x.pid_file), *slash = strrchr(spool, '/');
			if (slash)
				*slash = '\0';
			if (!execd_prog)
				execd_prog = find_daemon("execd");
			if (mkdir_p(spool, 0755) < 0)
				client_die("cannot create %s: %s", spool, strerror(errno));
			free(spool);
			if ((st = run_daemon(execd_prog, x.ini)) != 0) {
				client_errx("execd %s did not start (exit status %d); see %s",
				    x.name ? x.name : x.ini, st, x.log_file && *x.log_file ?
				    x.log_file : "the messages above");
				rc = 1;
			} else {
				pid = wait_pid_file(x.pid_file, "execd");
				say("started execd %s (pid %d): configuration %s, log %s", x.name ? x.name : "",
				    (int)pid, x.ini, x.log_file && *x.log_file ? x.log_file :
				    "none (log_file is unset)");
			}
		}
		execd_info_free(&x);
	}
	env = masters_env(a->dir, nmasters);
	printf("export NOWQ_MASTER=%s\n", env);
	free(env);
	free(qmaster_prog);
	free(execd_prog);
	master_free(&m);
	return rc;
}

/* SIGTERM, then up to 10 s for it to go, then SIGKILL. */
static void
stop_daemon(const char *what, const char *pid_file, const char *prog)
{
	pid_t pid = daemon_pid(pid_file, prog);
	int64_t deadline;

	if (pid <= 0) {
		say("%s was not running", what);
		return;
	}
	if (kill(pid, SIGTERM) < 0) {
		client_errx("cannot stop %s (pid %d): %s", what, (int)pid, strerror(errno));
		return;
	}
	deadline = mono_ms() + NOWQ_STOP_WAIT_MS;
	while (mono_ms() < deadline) {
		if (kill(pid, 0) < 0 && errno == ESRCH) {
			say("stopped %s (pid %d)", what, (int)pid);
			return;
		}
		usleep(20000);
	}
	kill(pid, SIGKILL);
	for (int i = 0; i < 100 && !(kill(pid, 0) < 0 && errno == ESRCH); i++)
		usleep(10000);
	say("killed %s (pid %d): it did not stop within %d s", what, (int)pid,
	    NOWQ_STOP_WAIT_MS / 1000);
}

static int
nowq_stop(const struct nowq_args *a)
{
	struct nowq_master m;
	int nums[NOWQ_MAX_EXECDS], n;

	if (!master_read(a->dir, &m))
		client_die("no personal cluster in %s (no qmaster.conf)", a->dir);
	/* The execds first, so none is left calling a master that is gone. */
	n = execd_list(a->dir, nums, NOWQ_MAX_EXECDS);
	for (int i = 0; i < n; i++) {
		struct execd_info x = { 0 };
		char *what;
		execd_info_read(a->dir, nums[i], &x);
		what = xasprintf("execd %s", x.name ? x.name : x.ini);
		stop_daemon(what, x.pid_file, "execd");
		free(what);
		execd_info_free(&x);
	}
	/* The standby before the primary, so it does not campaign. */
	if (master_count(a->dir) == 2) {
		struct nowq_master m2;
		if (master_read_n(a->dir, 2, &m2)) {
			stop_daemon("qmaster 2", m2.pid_file, "qmaster");
			master_free(&m2);
		}
	}
	stop_daemon("qmaster", m.pid_file, "qmaster");
	master_free(&m);
	return 0;
}

/* libdrmaa.so.1 as DRMAA tools load it: beside this program (an install's
 * ../lib, a build tree's lib/), else LIBDIR; NULL when none is there. */
static char *
find_drmaa(void)
{
	char self[PATH_MAX], *cand[3];
	ssize_t r;
	int n = 0;

	if ((r = readlink("/proc/self/exe", self, sizeof self - 1)) > 0) {
		self[r] = '\0';
		if (strrchr(self, '/'))
			*strrchr(self, '/') = '\0';
		cand[n++] = xasprintf("%s/../lib", self);
	}
	cand[n++] = xstrdup(LIBDIR);
	for (int i = 0; i < n; i++) {
		/* The folder made plain, the name kept: the soname's link
		 * follows upgrades. */
		char *dir = realpath(cand[i], NULL), *lib = dir ? xasprintf("%s/libdrmaa.so.1", dir) : NULL;
		free(dir);
		free(cand[i]);
		if (lib && access(lib, R_OK) == 0) {
			for (int k = i + 1; k < n; k++)
				free(cand[k]);
			return lib;
		}
		free(lib);
	}
	return NULL;
}

static int
nowq_env(const struct nowq_args *a)
{
	struct nowq_master m;
	char *env, *lib;

	if (!master_read(a->dir, &m))
		client_die("no personal cluster in %s (no qmaster.conf); run \"nowq start\"", a->dir);
	env = masters_env(a->dir, master_count(a->dir));
	printf("export NOWQ_MASTER=%s\n", env);
	free(env);
	/* Tools that look for Grid Engine before they submit find it by
	 * these, as the jobs do (qsub(1), ENVIRONMENT). */
	env = sge_root_find();
	printf("export SGE_ROOT='");
	for (const char *p = env; *p; p++)
		if (*p == '\'')
			fputs("'\\''", stdout);
		else
			putchar(*p);
	printf("'\nexport SGE_CELL=%s\n", SGE_CELL_NAME);
	free(env);
	/* DRMAA tools (python3-drmaa and those built on it) load the library
	 * DRMAA_LIBRARY_PATH names (doc/drmaa.md). */
	if ((lib = find_drmaa()) != NULL)
		printf("export DRMAA_LIBRARY_PATH=%s\n", lib);
	free(lib);
	master_free(&m);
	return 0;
}

static int
nowq_status(const struct nowq_args *a)
{
	struct nowq_master m;
	int nums[NOWQ_MAX_EXECDS], n, down = 0;
	pid_t pid;
	char *env;

	if (!master_read(a->dir, &m))
		client_die("no personal cluster in %s (no qmaster.conf); run \"nowq start\"", a->dir);
	for (int i = 1; i <= master_count(a->dir); i++) {
		struct nowq_master mi;
		const char *what = master_count(a->dir) == 1 ? "qmaster" : i == 1 ? "qmaster 1" : "qmaster 2";
		if (!master_read_n(a->dir, i, &mi))
			continue;
		if ((pid = daemon_pid(mi.pid_file, "qmaster")) > 0)
			printf("%s: running (pid %d)\n", what, (int)pid);
		else {
			printf("%s: not running\n", what);
			down++;
		}
		master_free(&mi);
	}
	n = execd_list(a->dir, nums, NOWQ_MAX_EXECDS);
	for (int i = 0; i < n; i++) {
		struct execd_info x = { 0 };
		execd_info_read(a->dir, nums[i], &x);
		if ((pid = daemon_pid(x.pid_file, "execd")) > 0)
			printf("execd %s: running (pid %d)\n", x.name ? x.name : x.ini, (int)pid);
		else {
			printf("execd %s: not running\n", x.name ? x.name : x.ini);
			down++;
		}
		execd_info_free(&x);
	}
	env = masters_env(a->dir, master_count(a->dir));
	printf("export NOWQ_MASTER=%s\n", env);
	free(env);
	master_free(&m);
	return down ? 1 : 0;
}

static int
nowq_run(int argc, char **argv)
{
	struct nowq_args a;
	int rc;

	if (argc < 2 || strcmp(argv[1], "-help") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		client_usage(&cmd_nowq, argc < 2 ? stderr : stdout);
		return argc < 2 ? 1 : 0;
	}
	if (strcmp(argv[1], "fetch") == 0)
		return stage_fetch_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "start") == 0) {
		parse_args(argc, argv, true, &a);
		rc = nowq_start(&a);
	} else if (strcmp(argv[1], "stop") == 0) {
		parse_args(argc, argv, false, &a);
		rc = nowq_stop(&a);
	} else if (strcmp(argv[1], "env") == 0) {
		parse_args(argc, argv, false, &a);
		rc = nowq_env(&a);
	} else if (strcmp(argv[1], "status") == 0) {
		parse_args(argc, argv, false, &a);
		rc = nowq_status(&a);
	} else {
		client_errx("unknown command \"%s\"", argv[1]);
		client_usage(&cmd_nowq, stderr);
		return 1;
	}
	free(a.dir);
	return rc;
}
