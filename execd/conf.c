/* conf.c: reads execd.ini with inih and checks every value before execd uses it. */
#include "config.h"

#include <errno.h>
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <ini.h>

#include "execd/execd.h"

/* inih reports only the line of its own syntax errors; counting the lines
 * it reads lets a rejected value name its line too. */
struct conf_parse {
	struct execd_conf *c;
	FILE              *fp;
	int                line;
	char               err[512];  /* the first problem, without file and line */
	int                err_line;
};

static int
conf_bad(struct conf_parse *p, const char *fmt, ...) NOWQ_ATTR_PRINTF(2, 3);

/* inih reads at most num - 1 bytes a line and would take the rest of a
 * longer line for a line of its own: say so instead. */
static char *
conf_reader(char *str, int num, void *arg)
{
	struct conf_parse *p = arg;
	char *s = fgets(str, num, p->fp);
	size_t n;
	int c;

	if (!s)
		return NULL;
	p->line++;
	n = strlen(s);
	if (n == (size_t)num - 1 && s[n - 1] != '\n') {
		while ((c = fgetc(p->fp)) != EOF && c != '\n')
			;
		conf_bad(p, "line is longer than %d characters", num - 3);
	}
	return s;
}

static int
conf_bad(struct conf_parse *p, const char *fmt, ...)
{
	va_list ap;
	if (p->err[0])
		return 0;
	va_start(ap, fmt);
	vsnprintf(p->err, sizeof p->err, fmt, ap);
	va_end(ap);
	p->err_line = p->line;
	return 0;
}

static bool
conf_int(const char *v, long lo, long hi, int *out)
{
	char *end;
	long n;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || end == v || *end || n < lo || n > hi)
		return false;
	*out = (int)n;
	return true;
}

static bool
conf_master_ok(const char *m)
{
	char *host;
	int port;
	if (strncmp(m, "unix:", 5) == 0)
		return m[5] == '/' && strlen(m + 5) < sizeof(((struct sockaddr_un *)0)->sun_path);
	if (parse_hostport(m, &host, &port) < 0)
		return false;
	free(host);
	return true;
}

static bool
conf_key_ok(const char *w)
{
	return req_valid_key(w);
}

static bool
conf_mount_ok(const char *w)
{
	return w[0] == '/' && strlen(w) < 1024;
}

/*
 * A list of words separated by commas or blanks, each checked by ok
 * ("what" says what a word should be, for the error); at most 256 words,
 * and at least one unless may_be_empty.  Replaces *dst.
 */
static int
conf_list(struct conf_parse *p, const char *key, const char *v, bool (*ok)(const char *),
    const char *what, bool may_be_empty, char ***dst)
{
	char *copy = xstrdup(v), *tok, *save = NULL;
	char **list = NULL;
	size_t n = 0;

	for (tok = strtok_r(copy, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		if (!ok(tok) || n >= 256) {
			if (n >= 256)
				conf_bad(p, "%s: more than 256 entries", key);
			else
				conf_bad(p, "%s: \"%s\" is not %s", key, tok, what);
			strv_free(list);
			free(copy);
			return 0;
		}
		list = xrealloc(list, (n + 2) * sizeof *list);
		list[n++] = xstrdup(tok);
		list[n] = NULL;
	}
	free(copy);
	if (n == 0 && !may_be_empty)
		return conf_bad(p, "%s is empty: it wants at least one entry, each %s", key, what);
	strv_free(*dst);
	*dst = list;
	return 1;
}

static int
conf_path(struct conf_parse *p, const char *key, const char *v, char **dst)
{
	if (v[0] != '/')
		return conf_bad(p, "%s \"%s\" is not an absolute path", key, v);
	if (strlen(v) > PATH_MAX / 4)
		return conf_bad(p, "%s is too long", key);
	free(*dst);
	*dst = xstrdup(v);
	/* Trailing slashes would double up in the paths built from it. */
	for (size_t n = strlen(*dst); n > 1 && (*dst)[n - 1] == '/'; n--)
		(*dst)[n - 1] = '\0';
	return 1;
}

/* yes/no the way inih users write it. */
static int
conf_bool(const char *v)
{
	if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcasecmp(v, "on") || !strcmp(v, "1"))
		return 1;
	if (!strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcasecmp(v, "off") || !strcmp(v, "0"))
		return 0;
	return -1;
}

/* The idle policies and what to do when the owner returns. */
static int
conf_idle(struct conf_parse *p, const char *key, const char *v)
{
	struct execd_conf *c = p->c;
	char err[256];
	int n;

	if (strcmp(key, "idle_keyboard") == 0) {
		if (strcmp(v, "none") == 0) {
			c->idle_keyboard = 0;
			return 1;
		}
		if (!conf_int(v, 1, 525600, &n))
			return conf_bad(p, "idle_keyboard \"%s\" is not a number of minutes "
			    "from 1 to 525600 or \"none\"", v);
		c->idle_keyboard = n;
	} else if (strcmp(key, "idle_devices") == 0) {
		/* /dev/input/event*, /dev/tty[0-9]*: absolute globs. */
		return conf_list(p, key, v, conf_mount_ok, "an absolute path or pattern", false,
		    &p->c->idle_devices);
	} else if (strcmp(key, "idle_no_users") == 0) {
		if ((n = conf_bool(v)) < 0)
			return conf_bad(p, "idle_no_users \"%s\" is not yes or no", v);
		c->idle_no_users = n;
	} else if (strcmp(key, "idle_windows") == 0) {
		struct idle_window *w;
		free(c->idle_windows);
		free(c->idle_windows_text);
		c->idle_windows = NULL;
		c->idle_windows_text = NULL;
		c->idle_nwindows = 0;
		if (!v[0] || strcmp(v, "none") == 0)
			return 1;
		if (strlen(v) > 200)
			return conf_bad(p, "idle_windows is longer than 200 characters");
		if (idle_windows_parse(v, &w, &n, err, sizeof err) < 0)
			return conf_bad(p, "idle_windows: %s", err);
		c->idle_windows = w;
		c->idle_nwindows = n;
		c->idle_windows_text = xstrdup(v);
	} else if (strcmp(key, "idle_command") == 0) {
		free(c->idle_command);
		c->idle_command = NULL;
		if (!v[0] || strcmp(v, "none") == 0)
			return 1;
		if (v[0] != '/')
			return conf_bad(p, "idle_command \"%s\" does not start with an absolute path", v);
		c->idle_command = xstrdup(v);
	} else if (strcmp(key, "idle_command_timeout") == 0) {
		if (!conf_int(v, 1, 3600, &n))
			return conf_bad(p, "idle_command_timeout \"%s\" is not a number of seconds "
			    "from 1 to 3600", v);
		c->idle_command_timeout = n;
	} else if (strcmp(key, "owner_returns") == 0) {
		if (strcmp(v, "finish") == 0)
			c->owner_returns = OWNER_FINISH;
		else if (strcmp(v, "suspend") == 0)
			c->owner_returns = OWNER_SUSPEND;
		else if (strcmp(v, "vacate") == 0)
			c->owner_returns = OWNER_VACATE;
		else
			return conf_bad(p, "owner_returns \"%s\" is not one of finish, suspend, vacate", v);
	} else if (strcmp(key, "vacate_grace") == 0) {
		if (!conf_int(v, 0, 86400, &n))
			return conf_bad(p, "vacate_grace \"%s\" is not a number of seconds "
			    "from 0 to 86400", v);
		c->vacate_grace = n;
	} else {
		return conf_bad(p, "unknown key \"%s\" in section [execd]", key);
	}
	return 1;
}

static int
conf_handler(void *arg, const char *section, const char *key, const char *v)
{
	struct conf_parse *p = arg;
	struct execd_conf *c = p->c;
	char *end;
	double d;
	int n;

	if (strcmp(section, "execd") != 0)
		return conf_bad(p, "key \"%s\" is outside the [execd] section", key);
	if (strcmp(key, "name") == 0) {
		/* The master accepts these characters in a host name. */
		if (!v[0] || strlen(v) > 255 || strspn(v, "abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._") != strlen(v))
			return conf_bad(p, "name \"%s\" is not a host name (letters, digits, - . _)", v);
		free(c->name);
		c->name = xstrdup(v);
	} else if (strcmp(key, "masters") == 0) {
		return conf_list(p, key, v, conf_master_ok, "HOST:PORT or unix:/PATH", false, &c->masters);
	} else if (strcmp(key, "spool_dir") == 0) {
		return conf_path(p, key, v, &c->spool_dir);
	} else if (strcmp(key, "slots") == 0) {
		if (!conf_int(v, 0, 65536, &n))
			return conf_bad(p, "slots \"%s\" is not a number from 0 to 65536", v);
		c->slots = n;
	} else if (strcmp(key, "load_threshold") == 0) {
		if (strcmp(v, "none") == 0) {
			c->load_threshold = 0;
			return 1;
		}
		errno = 0;
		d = strtod(v, &end);
		if (errno || end == v || *end || !isfinite(d) || d < 0)
			return conf_bad(p, "load_threshold \"%s\" is not a non-negative number or \"none\"", v);
		c->load_threshold = d;
	} else if (strcmp(key, "load_interval") == 0) {
		if (!conf_int(v, 1, 3600, &n))
			return conf_bad(p, "load_interval \"%s\" is not a number of seconds from 1 to 3600", v);
		c->load_interval = n;
	} else if (strcmp(key, "tmpdir") == 0) {
		return conf_path(p, key, v, &c->tmpdir);
	} else if (strcmp(key, "auth") == 0) {
		if (strcmp(v, "none") != 0 && strcmp(v, "munge") != 0)
			return conf_bad(p, "auth \"%s\" is not \"munge\" or \"none\"", v);
		free(c->auth);
		c->auth = xstrdup(v);
	} else if (strcmp(key, "munge_socket") == 0) {
		free(c->munge_socket);
		c->munge_socket = NULL;
		if (v[0])
			return conf_path(p, key, v, &c->munge_socket);
	} else if (strcmp(key, "admin_user") == 0) {
		/* Looked up once, at start: the one user besides root and our own
		 * whose credential we take as a master's. */
		struct passwd *pw = v[0] ? getpwnam(v) : NULL;
		if (v[0] && !pw)
			return conf_bad(p, "admin_user \"%s\" is not a user of this host", v);
		c->admin_uid = pw ? (int64_t)pw->pw_uid : -1;
	} else if (strcmp(key, "arch") == 0) {
		if (!req_valid_key(v))
			return conf_bad(p, "arch \"%s\" is not a word (letters, digits, _ - .)", v);
		free(c->attrs.arch);
		c->attrs.arch = xstrdup(v);
	} else if (strcmp(key, "memory") == 0) {
		if (parse_size(v, &c->attrs.mem) < 0)
			return conf_bad(p, "memory \"%s\" is not a size such as 16G", v);
	} else if (strcmp(key, "rating") == 0) {
		errno = 0;
		d = strtod(v, &end);
		if (errno || end == v || *end || !isfinite(d) || d <= 0 || d > 1e6)
			return conf_bad(p, "rating \"%s\" is not a positive number", v);
		c->attrs.rating = d;
	} else if (strcmp(key, "keys") == 0 || strcmp(key, "mounts") == 0) {
		if (strcmp(key, "keys") == 0)
			return conf_list(p, key, v, conf_key_ok, "a word (letters, digits, _ - .)", true,
			    &c->attrs.keys);
		return conf_list(p, key, v, conf_mount_ok, "an absolute path", true, &c->attrs.mounts);
	} else if (strncmp(key, "idle_", 5) == 0 || strcmp(key, "owner_returns") == 0 ||
	    strcmp(key, "vacate_grace") == 0) {
		return conf_idle(p, key, v);
	} else if (strcmp(key, "kill_grace") == 0) {
		if (!conf_int(v, 0, 3600, &n))
			return conf_bad(p, "kill_grace \"%s\" is not a number of seconds from 0 to 3600", v);
		c->kill_grace = n;
	} else if (strcmp(key, "cgroup_parent") == 0) {
		free(c->cgroup_parent);
		c->cgroup_parent = NULL;
		if (v[0])
			return conf_path(p, key, v, &c->cgroup_parent);
	} else if (strcmp(key, "log_level") == 0) {
		if ((n = log_level_parse(v)) < 0)
			return conf_bad(p, "log_level \"%s\" is not one of error, warning, info, debug", v);
		c->log_level = n;
	} else if (strcmp(key, "log_file") == 0) {
		free(c->log_file);
		c->log_file = NULL;
		if (v[0])
			return conf_path(p, key, v, &c->log_file);
	} else {
		return conf_bad(p, "unknown key \"%s\" in section [execd]", key);
	}
	return 1;
}

struct execd_conf *
conf_load(const char *path)
{
	struct execd_conf *c = xcalloc(1, sizeof *c);
	struct conf_parse p;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct utsname un;
	int r;

	c->path = xstrdup(path);
	c->name = xstrdup(my_hostname());
	c->spool_dir = xstrdup("/var/spool/nowq/execd");
	c->slots = ncpu > 0 ? (int)ncpu : 1;
	c->load_threshold = 1.75;
	c->load_interval = 5;
	c->tmpdir = xstrdup("/tmp");
	c->auth = xstrdup("munge");
	c->admin_uid = -1;
	c->log_level = LOG_LVL_INFO;
	c->kill_grace = LIMITS_KILL_GRACE;
	if (uname(&un) == 0)
		c->attrs.arch = xstrdup(un.machine);
	if (sysconf(_SC_PHYS_PAGES) > 0 && sysconf(_SC_PAGESIZE) > 0)
		c->attrs.mem = (int64_t)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE);
	c->attrs.rating = 1.0;
	c->idle_devices = xcalloc(3, sizeof *c->idle_devices);
	c->idle_devices[0] = xstrdup("/dev/input/event*");
	c->idle_devices[1] = xstrdup("/dev/tty[0-9]*");
	c->idle_command_timeout = 10;
	c->owner_returns = OWNER_FINISH;
	c->vacate_grace = 10;

	memset(&p, 0, sizeof p);
	p.c = c;
	if ((p.fp = fopen(path, "re")) == NULL) {
		fprintf(stderr, "execd: cannot read %s: %s\n", path, strerror(errno));
		conf_free(c);
		return NULL;
	}
	r = ini_parse_stream(conf_reader, &p, conf_handler, &p);
	fclose(p.fp);
	if (r != 0 || p.err[0]) {
		/* inih returns the first bad line, ours or its own. */
		if (p.err[0] && (r <= 0 || r == p.err_line))
			fprintf(stderr, "execd: %s:%d: %s\n", path, p.err_line, p.err);
		else if (r > 0)
			fprintf(stderr, "execd: %s:%d: syntax error (want KEY = VALUE or [execd])\n", path, r);
		else
			fprintf(stderr, "execd: cannot parse %s\n", path);
		conf_free(c);
		return NULL;
	}
	if (!c->masters) {
		fprintf(stderr, "execd: %s: masters is not set: name at least one HOST:PORT or unix:/PATH\n", path);
		conf_free(c);
		return NULL;
	}
	if (strcmp(c->auth, "none") == 0)
		for (char **m = c->masters; *m; m++) {
			char *host;
			int port;
			if (strncmp(*m, "unix:", 5) == 0 || parse_hostport(*m, &host, &port) < 0)
				continue;
			if (!host_is_loopback(host)) {
				fprintf(stderr, "execd: %s: auth = none works only with masters on loopback or "
				    "unix sockets, not %s; use auth = munge\n", path, *m);
				free(host);
				conf_free(c);
				return NULL;
			}
			free(host);
		}
	return c;
}

void
conf_free(struct execd_conf *c)
{
	if (!c)
		return;
	free(c->path);
	free(c->name);
	strv_free(c->masters);
	free(c->spool_dir);
	free(c->tmpdir);
	free(c->auth);
	free(c->munge_socket);
	free(c->log_file);
	free(c->cgroup_parent);
	host_attrs_clear(&c->attrs);
	strv_free(c->idle_devices);
	free(c->idle_windows);
	free(c->idle_windows_text);
	free(c->idle_command);
	free(c);
}
