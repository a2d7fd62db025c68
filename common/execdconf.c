/* execdconf.c: reads execd.ini with inih and checks every value before execd or nowq uses it. */
#include "config.h"

#include <errno.h>
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <ini.h>

#include "common/common.h"

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

static const char *idle_day_names[7] = { "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun" };

static int
idle_day_parse(const char *s, size_t n)
{
	if (n != 3)
		return -1;
	for (int d = 0; d < 7; d++)
		if (strncasecmp(s, idle_day_names[d], 3) == 0)
			return d;
	return -1;
}

/* "Mon", "Mon-Fri", "Fri-Mon" (wraps over the week's end): a bit set. */
static int
idle_days_parse(const char *tok, uint8_t *days)
{
	const char *dash = strchr(tok, '-');
	int a, b;

	if (!dash) {
		if ((a = idle_day_parse(tok, strlen(tok))) < 0)
			return -1;
		*days |= (uint8_t)(1u << a);
		return 0;
	}
	if ((a = idle_day_parse(tok, (size_t)(dash - tok))) < 0 ||
	    (b = idle_day_parse(dash + 1, strlen(dash + 1))) < 0)
		return -1;
	for (int d = a;; d = (d + 1) % 7) {
		*days |= (uint8_t)(1u << d);
		if (d == b)
			break;
	}
	return 0;
}

/* "H:MM" or "HH:MM", 00:00 to 24:00, in minutes of the day. */
static int
idle_clock_parse(const char *s, size_t n)
{
	int h, m;

	if (n == 4 && isdigit((unsigned char)s[0]) && s[1] == ':' &&
	    isdigit((unsigned char)s[2]) && isdigit((unsigned char)s[3]))
		h = s[0] - '0', m = (s[2] - '0') * 10 + (s[3] - '0');
	else if (n == 5 && isdigit((unsigned char)s[0]) && isdigit((unsigned char)s[1]) &&
	    s[2] == ':' && isdigit((unsigned char)s[3]) && isdigit((unsigned char)s[4]))
		h = (s[0] - '0') * 10 + (s[1] - '0'), m = (s[3] - '0') * 10 + (s[4] - '0');
	else
		return -1;
	if (m > 59 || h > 24 || (h == 24 && m != 0))
		return -1;
	return h * 60 + m;
}

static bool
idle_is_clock_range(const char *tok)
{
	return isdigit((unsigned char)tok[0]) && strchr(tok, ':') != NULL;
}

static int
idle_clock_range_parse(const char *tok, int16_t *start, int16_t *end)
{
	const char *dash = strchr(tok, '-');
	int a, b;

	if (!dash || (a = idle_clock_parse(tok, (size_t)(dash - tok))) < 0 ||
	    (b = idle_clock_parse(dash + 1, strlen(dash + 1))) < 0 || a == 24 * 60)
		return -1;
	if (a == b)
		return -2;
	*start = (int16_t)a;
	*end = (int16_t)b;
	return 0;
}

static void
idle_windows_add(struct idle_window **w, int *n, uint8_t days, int start, int end)
{
	*w = xrealloc(*w, (size_t)(*n + 1) * sizeof **w);
	(*w)[*n] = (struct idle_window){ days, (int16_t)start, (int16_t)end };
	(*n)++;
}

/*
 * Tokens are separated by commas and blanks.  Day items (Mon, Mon-Fri)
 * gather into a set; a clock range (19:00-07:00) closes a window over the
 * days gathered since the last range, or over the last range's days when
 * none were named in between, or over every day when no day was named at
 * all.  Days left at the end without a range are whole days.  So
 * "Mon-Fri 19:00-07:00, Sat-Sun" is weekday nights plus the weekend, and
 * "Mon,Wed 18:00-08:00" is two evenings, not Monday plus Wednesday evening.
 */
int
idle_windows_parse(const char *text, struct idle_window **out, int *nout, char *err, size_t errlen)
{
	char *copy = xstrdup(text), *tok, *save = NULL;
	struct idle_window *w = NULL;
	uint8_t days = 0, last = IDLE_ALL_DAYS;
	bool fresh = true;    /* the next day item starts a new set */
	int n = 0, r;
	int16_t start, end;

	for (tok = strtok_r(copy, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		if (idle_is_clock_range(tok)) {
			if ((r = idle_clock_range_parse(tok, &start, &end)) < 0) {
				snprintf(err, errlen, r == -2 ? "\"%s\" is an empty time range" :
				    "\"%s\" is not a time range HH:MM-HH:MM (00:00 to 24:00)", tok);
				goto bad;
			}
			if (days)
				last = days;
			idle_windows_add(&w, &n, last, start, end);
			days = 0;
			fresh = true;
			continue;
		}
		if (fresh)
			days = 0;
		fresh = false;
		if (idle_days_parse(tok, &days) < 0) {
			snprintf(err, errlen, "\"%s\" is neither a day (Mon to Sun), a range of days "
			    "(Mon-Fri) nor a time range (19:00-07:00)", tok);
			goto bad;
		}
	}
	if (days)
		idle_windows_add(&w, &n, days, 0, 24 * 60);
	free(copy);
	if (n == 0) {
		snprintf(err, errlen, "no window given");
		return -1;
	}
	*out = w;
	*nout = n;
	return 0;
bad:
	free(copy);
	free(w);
	return -1;
}

/* How a key of execd.ini is read into struct execd_conf. */
enum ek_type {
	EK_INT,        /* int, lo to hi */
	EK_INT_NONE,   /* int, lo to hi, or "none": 0 */
	EK_PATH,       /* char *, an absolute path */
	EK_PATH_OPT,   /* char *, an absolute path; empty: NULL */
	EK_LIST,       /* char **, words each ok (conf_list) */
	EK_BOOL,       /* bool, yes or no */
	EK_FN,         /* fn reads it */
};

/* One key: its type, field and bounds; what names what a value (or a
 * list's word) should be, for the message. */
struct ek {
	const char  *key;
	enum ek_type type;
	size_t       off;
	long         lo, hi;
	const char  *what;
	bool       (*ok)(const char *);
	bool         empty_ok;   /* EK_LIST: may hold no word */
	int        (*fn)(struct conf_parse *, const char *);
};

static void
conf_set(char **dst, const char *v)
{
	free(*dst);
	*dst = v ? xstrdup(v) : NULL;
}

static int
ek_name(struct conf_parse *p, const char *v)
{
	/* The master accepts these characters in a host name. */
	if (!v[0] || strlen(v) > 255 || strspn(v, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._") != strlen(v))
		return conf_bad(p, "name \"%s\" is not a host name (letters, digits, - . _)", v);
	conf_set(&p->c->name, v);
	return 1;
}

/* A finite number in (lo, hi], or [0, hi] when zero_ok; false otherwise. */
static bool
conf_double(const char *v, bool zero_ok, double hi, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (errno || end == v || *end || !isfinite(d) || d < 0 || (d == 0 && !zero_ok) || d > hi)
		return false;
	*out = d;
	return true;
}

static int
ek_load_threshold(struct conf_parse *p, const char *v)
{
	if (strcmp(v, "none") == 0)
		p->c->load_threshold = 0;
	else if (!conf_double(v, true, INFINITY, &p->c->load_threshold))
		return conf_bad(p, "load_threshold \"%s\" is not a non-negative number or \"none\"", v);
	return 1;
}

static int
ek_rating(struct conf_parse *p, const char *v)
{
	if (!conf_double(v, false, 1e6, &p->c->attrs.rating))
		return conf_bad(p, "rating \"%s\" is not a positive number", v);
	return 1;
}

static int
ek_auth(struct conf_parse *p, const char *v)
{
	if (strcmp(v, "none") != 0 && strcmp(v, "munge") != 0)
		return conf_bad(p, "auth \"%s\" is not \"munge\" or \"none\"", v);
	conf_set(&p->c->auth, v);
	return 1;
}

static int
ek_admin_user(struct conf_parse *p, const char *v)
{
	/* Looked up once, at start: the one user besides root and our own
	 * whose credential we take as a master's. */
	struct passwd *pw = v[0] ? getpwnam(v) : NULL;
	if (v[0] && !pw)
		return conf_bad(p, "admin_user \"%s\" is not a user of this host", v);
	p->c->admin_uid = pw ? (int64_t)pw->pw_uid : -1;
	return 1;
}

static int
ek_arch(struct conf_parse *p, const char *v)
{
	if (!req_valid_key(v))
		return conf_bad(p, "arch \"%s\" is not a word (letters, digits, _ - .)", v);
	conf_set(&p->c->attrs.arch, v);
	return 1;
}

static int
ek_memory(struct conf_parse *p, const char *v)
{
	if (parse_size(v, &p->c->attrs.mem) < 0)
		return conf_bad(p, "memory \"%s\" is not a size such as 16G", v);
	return 1;
}

static int
ek_stage_cache_max(struct conf_parse *p, const char *v)
{
	if (strcmp(v, "none") == 0) {
		p->c->stage_cache_max = 0;
		return 1;
	}
	if (parse_size(v, &p->c->stage_cache_max) < 0 || p->c->stage_cache_max < 0)
		return conf_bad(p, "stage_cache_max \"%s\" is not a size such as 10G, or none", v);
	return 1;
}

static int
ek_log_level(struct conf_parse *p, const char *v)
{
	int n = log_level_parse(v);
	if (n < 0)
		return conf_bad(p, "log_level \"%s\" is not one of error, warning, info, debug", v);
	p->c->log_level = n;
	return 1;
}

static int
ek_idle_windows(struct conf_parse *p, const char *v)
{
	struct execd_conf *c = p->c;
	char err[256];

	free(c->idle_windows);
	c->idle_windows = NULL;
	c->idle_nwindows = 0;
	conf_set(&c->idle_windows_text, NULL);
	if (!v[0] || strcmp(v, "none") == 0)
		return 1;
	if (strlen(v) > 200)
		return conf_bad(p, "idle_windows is longer than 200 characters");
	if (idle_windows_parse(v, &c->idle_windows, &c->idle_nwindows, err, sizeof err) < 0)
		return conf_bad(p, "idle_windows: %s", err);
	conf_set(&c->idle_windows_text, v);
	return 1;
}

static int
ek_idle_command(struct conf_parse *p, const char *v)
{
	conf_set(&p->c->idle_command, NULL);
	if (!v[0] || strcmp(v, "none") == 0)
		return 1;
	if (v[0] != '/')
		return conf_bad(p, "idle_command \"%s\" does not start with an absolute path", v);
	conf_set(&p->c->idle_command, v);
	return 1;
}

static int
ek_owner_returns(struct conf_parse *p, const char *v)
{
	static const char *const names[] = { "finish", "suspend", "vacate" };
	static const enum owner_returns vals[] = { OWNER_FINISH, OWNER_SUSPEND, OWNER_VACATE };

	for (size_t i = 0; i < 3; i++)
		if (strcmp(v, names[i]) == 0) {
			p->c->owner_returns = vals[i];
			return 1;
		}
	return conf_bad(p, "owner_returns \"%s\" is not one of finish, suspend, vacate", v);
}

#define EC(f) offsetof(struct execd_conf, f)

static const struct ek execd_keys[] = {
	{ "name", EK_FN, 0, 0, 0, NULL, NULL, false, ek_name },
	{ "masters", EK_LIST, EC(masters), 0, 0, "HOST:PORT or unix:/PATH", conf_master_ok, false, NULL },
	{ "spool_dir", EK_PATH, EC(spool_dir), 0, 0, NULL, NULL, false, NULL },
	{ "slots", EK_INT, EC(slots), 0, 65536, "a number", NULL, false, NULL },
	{ "load_threshold", EK_FN, 0, 0, 0, NULL, NULL, false, ek_load_threshold },
	{ "load_interval", EK_INT, EC(load_interval), 1, 3600, "a number of seconds", NULL, false, NULL },
	{ "tmpdir", EK_PATH, EC(tmpdir), 0, 0, NULL, NULL, false, NULL },
	{ "auth", EK_FN, 0, 0, 0, NULL, NULL, false, ek_auth },
	{ "munge_socket", EK_PATH_OPT, EC(munge_socket), 0, 0, NULL, NULL, false, NULL },
	{ "admin_user", EK_FN, 0, 0, 0, NULL, NULL, false, ek_admin_user },
	{ "arch", EK_FN, 0, 0, 0, NULL, NULL, false, ek_arch },
	{ "memory", EK_FN, 0, 0, 0, NULL, NULL, false, ek_memory },
	{ "rating", EK_FN, 0, 0, 0, NULL, NULL, false, ek_rating },
	{ "keys", EK_LIST, EC(attrs.keys), 0, 0, "a word (letters, digits, _ - .)", conf_key_ok, true, NULL },
	{ "mounts", EK_LIST, EC(attrs.mounts), 0, 0, "an absolute path", conf_mount_ok, true, NULL },
	{ "idle_keyboard", EK_INT_NONE, EC(idle_keyboard), 1, 525600, "a number of minutes", NULL, false,
	  NULL },
	/* /dev/input/event*, /dev/tty[0-9]*: absolute globs. */
	{ "idle_devices", EK_LIST, EC(idle_devices), 0, 0, "an absolute path or pattern", conf_mount_ok,
	  false, NULL },
	{ "idle_no_users", EK_BOOL, EC(idle_no_users), 0, 0, NULL, NULL, false, NULL },
	{ "idle_windows", EK_FN, 0, 0, 0, NULL, NULL, false, ek_idle_windows },
	{ "idle_command", EK_FN, 0, 0, 0, NULL, NULL, false, ek_idle_command },
	{ "idle_command_timeout", EK_INT, EC(idle_command_timeout), 1, 3600, "a number of seconds", NULL,
	  false, NULL },
	{ "owner_returns", EK_FN, 0, 0, 0, NULL, NULL, false, ek_owner_returns },
	{ "vacate_grace", EK_INT, EC(vacate_grace), 0, 86400, "a number of seconds", NULL, false, NULL },
	{ "kill_grace", EK_INT, EC(kill_grace), 0, 3600, "a number of seconds", NULL, false, NULL },
	{ "cgroup_parent", EK_PATH_OPT, EC(cgroup_parent), 0, 0, NULL, NULL, false, NULL },
	{ "stage_cache_max", EK_FN, 0, 0, 0, NULL, NULL, false, ek_stage_cache_max },
	{ "log_level", EK_FN, 0, 0, 0, NULL, NULL, false, ek_log_level },
	{ "log_file", EK_PATH_OPT, EC(log_file), 0, 0, NULL, NULL, false, NULL },
	{ NULL, EK_FN, 0, 0, 0, NULL, NULL, false, NULL }
};

/* One key = value of the [execd] section, by its row of execd_keys. */
static int
conf_handler(void *arg, const char *section, const char *key, const char *v)
{
	struct conf_parse *p = arg;
	const struct ek *k;
	char *f;
	int n;

	if (strcmp(section, "execd") != 0)
		return conf_bad(p, "key \"%s\" is outside the [execd] section", key);
	for (k = execd_keys; k->key && strcmp(k->key, key) != 0; k++)
		;
	if (!k->key)
		return conf_bad(p, "unknown key \"%s\" in section [execd]", key);
	f = (char *)p->c + k->off;
	switch (k->type) {
	case EK_INT_NONE:
		if (strcmp(v, "none") == 0) {
			*(int *)f = 0;
			return 1;
		}
		/* FALLTHROUGH */
	case EK_INT:
		if (!conf_int(v, k->lo, k->hi, &n))
			return conf_bad(p, "%s \"%s\" is not %s from %ld to %ld%s", key, v, k->what, k->lo, k->hi,
			    k->type == EK_INT_NONE ? " or \"none\"" : "");
		*(int *)f = n;
		return 1;
	case EK_PATH_OPT:
		conf_set((char **)f, NULL);
		if (!v[0])
			return 1;
		/* FALLTHROUGH */
	case EK_PATH:
		return conf_path(p, key, v, (char **)f);
	case EK_LIST:
		return conf_list(p, key, v, k->ok, k->what, k->empty_ok, (char ***)f);
	case EK_BOOL:
		if ((n = conf_bool(v)) < 0)
			return conf_bad(p, "%s \"%s\" is not yes or no", key, v);
		*(bool *)f = n;
		return 1;
	case EK_FN:
		return k->fn(p, v);
	}
	return 1;
}

struct execd_conf *
execdconf_load(const char *path, char *err, size_t errlen)
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
	c->stage_cache_max = STAGE_CACHE_MAX_DEFAULT;
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
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		execdconf_free(c);
		return NULL;
	}
	r = ini_parse_stream(conf_reader, &p, conf_handler, &p);
	fclose(p.fp);
	if (r != 0 || p.err[0]) {
		/* inih returns the first bad line, ours or its own. */
		if (p.err[0] && (r <= 0 || r == p.err_line))
			snprintf(err, errlen, "%s:%d: %s", path, p.err_line, p.err);
		else if (r > 0)
			snprintf(err, errlen, "%s:%d: syntax error (want KEY = VALUE or [execd])", path, r);
		else
			snprintf(err, errlen, "cannot parse %s", path);
		execdconf_free(c);
		return NULL;
	}
	if (!c->masters) {
		snprintf(err, errlen, "%s: masters is not set: name at least one HOST:PORT or unix:/PATH", path);
		execdconf_free(c);
		return NULL;
	}
	if (strcmp(c->auth, "none") == 0)
		for (char **m = c->masters; *m; m++) {
			char *host;
			int port;
			if (strncmp(*m, "unix:", 5) == 0 || parse_hostport(*m, &host, &port) < 0)
				continue;
			if (!host_is_loopback(host)) {
				snprintf(err, errlen, "%s: auth = none works only with masters on loopback or "
				    "unix sockets, not %s; use auth = munge", path, *m);
				free(host);
				execdconf_free(c);
				return NULL;
			}
			free(host);
		}
	return c;
}

void
execdconf_free(struct execd_conf *c)
{
	if (!c)
		return;
	/* The table's strings and lists, but those of attrs, which
	 * host_attrs_clear frees. */
	for (const struct ek *k = execd_keys; k->key; k++) {
		char *f = (char *)c + k->off;
		if (k->off >= EC(attrs) && k->off < EC(attrs) + sizeof c->attrs)
			continue;
		if (k->type == EK_PATH || k->type == EK_PATH_OPT)
			free(*(char **)f);
		else if (k->type == EK_LIST)
			strv_free(*(char ***)f);
	}
	host_attrs_clear(&c->attrs);
	free(c->path);
	free(c->name);
	free(c->auth);
	free(c->idle_windows);
	free(c->idle_windows_text);
	free(c->idle_command);
	free(c);
}
