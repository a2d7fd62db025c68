/* cmd_reserve.c: reserve and unreserve: named sets of hosts reserved for a time window.
 *
 * As GLUnix's reserve: reserving, listing reservations, and ending one early. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/common.h"
#include "client/client.h"
#include "common/msg.h"
#include "common/msg_req.h"

static int reserve_run(int argc, char **argv);
static int unreserve_run(int argc, char **argv);

const struct cmd cmd_reserve = {
	"reserve",
	"reserve -N NAME (-n COUNT [-l ATTRS] | -H HOSTEXPR) [-s START] (-d DURATION | -e END)\n"
	"        [-u USER[,USER]...] [-m b|e|be] [-x] [-o]\n"
	"reserve -l [--json]\n"
	"  START, END: now, +DURATION, HH:MM[:SS] (today), YYYY-MM-DD[T| ]HH:MM[:SS],\n"
	"              or [[CC]YY]MMDDhhmm[.SS]; DURATION: [[HH:]MM:]SS\n"
	"  -x  exclusive: others' running jobs are vacated at the start\n"
	"  -o  overrun: jobs still running at the end are not killed\n",
	reserve_run,
};

const struct cmd cmd_unreserve = {
	"unreserve",
	"unreserve NAME | --help\n",
	unreserve_run,
};

/* A time for -s and -e, in ms since the epoch; -1 on bad input. */
static int64_t
parse_when(const char *s)
{
	time_t now = time(NULL);
	struct tm tm;
	const char *end;
	int64_t secs, ms;

	if (strcmp(s, "now") == 0)
		return (int64_t)now * 1000;
	if (*s == '+')
		return parse_duration(s + 1, &secs) < 0 ? -1 : ((int64_t)now + secs) * 1000;
	localtime_r(&now, &tm);
	tm.tm_sec = 0;
	if ((end = strptime(s, "%H:%M", &tm)) != NULL && (!*end || (*end == ':' &&
	    (end = strptime(end, ":%S", &tm)) != NULL && !*end)) && strlen(s) <= 8) {
		tm.tm_isdst = -1;
		return (int64_t)mktime(&tm) * 1000;
	}
	memset(&tm, 0, sizeof tm);
	if ((end = strptime(s, "%Y-%m-%d", &tm)) != NULL && (*end == 'T' || *end == ' ') &&
	    (end = strptime(end + 1, "%H:%M", &tm)) != NULL &&
	    (!*end || (*end == ':' && (end = strptime(end, ":%S", &tm)) != NULL && !*end))) {
		tm.tm_isdst = -1;
		return (int64_t)mktime(&tm) * 1000;
	}
	return qsub_parse_date(s, now, &ms) < 0 ? -1 : ms;
}

static void
fmt_time(char *buf, size_t n, int64_t ms)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(buf, n, "%Y-%m-%d %H:%M:%S", &tm);
}

static char *
join(const json_t *a, const char *sep)
{
	size_t i, n = 1;
	json_t *v;
	char *s;

	json_array_foreach(a, i, v)
		n += json_string_length(v) + strlen(sep);
	s = xcalloc(n, 1);
	json_array_foreach(a, i, v) {
		if (i)
			strcat(s, sep);
		strcat(s, json_string_value(v));
	}
	return s;
}

static void
print_resv(const json_t *o, bool header)
{
	struct msg_resv_row r;
	char a[32], b[32], *users, *hosts;

	msg_resv_row_unpack(o, &r);
	users = join(r.users, ",");
	hosts = join(r.hosts, " ");
	if (header)
		printf("%-12s %-10s %-8s %-19s %-19s %-12s %s\n", "name", "owner", "state", "start",
		    "end", "users", "hosts");
	fmt_time(a, sizeof a, r.start);
	fmt_time(b, sizeof b, r.end);
	printf("%-12s %-10s %-8s %-19s %-19s %-12s %s\n", r.name, r.owner, r.state, a, b,
	    *users ? users : "-", hosts);
	free(users);
	free(hosts);
}

static int
reserve_list(bool json)
{
	json_t *rep = client_request_ok(msg_reserve_pack(&(struct msg_reserve){ .op = "list" }), "");
	struct msg_reserve_reply rr;
	json_t *a, *v;
	size_t i;

	if (!rep)
		return 1;
	msg_reserve_reply_unpack(rep, &rr);
	a = rr.reservations;
	if (json) {
		char *s = json_dumps(a, JSON_INDENT(2));
		printf("%s\n", s ? s : "[]");
		free(s);
	} else
		json_array_foreach(a, i, v)
			print_resv(v, i == 0);
	json_decref(rep);
	return 0;
}

static int bad(const char *fmt, ...) NOWQ_ATTR_PRINTF(1, 2);

static int
bad(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	client_errx("%s", msg);
	client_usage(&cmd_reserve, stderr);
	return 1;
}

static int
reserve_run(int argc, char **argv)
{
	struct msg_reserve m = { .op = "create" };
	struct msg_reserve_reply rr;
	json_t *users = NULL, *rep;
	bool list = false, json = false;
	int64_t v;

	if (argc == 1)
		return bad("%s", "no option given");
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *a = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(o, "-help") == 0 || strcmp(o, "--help") == 0) {
			client_usage(&cmd_reserve, stdout);
			json_decref(users);
			return 0;
		}
		if (strcmp(o, "--json") == 0) {
			json = true;
			continue;
		}
		if (strcmp(o, "-l") == 0 && (!a || strcmp(a, "--json") == 0)) {
			list = true;
			continue;
		}
		if (strcmp(o, "-x") == 0) {
			m.exclusive = true;
			continue;
		}
		if (strcmp(o, "-o") == 0) {
			m.overrun = true;
			continue;
		}
		if (!a || !strchr("NnlHsdeum", o[1]) || o[0] != '-' || o[2]) {
			json_decref(users);
			return a ? bad("unknown option \"%s\"", o) : bad("option \"%s\" needs a value", o);
		}
		i++;
		switch (o[1]) {
		case 'N': m.name = a; break;
		case 'l': m.attrs = a; break;
		case 'H': m.hosts = a; break;
		case 'm': m.mail = a; break;
		case 'u':
			if (!users)
				users = json_array();
			client_add_users(users, a);
			break;
		case 'n': {
			char *end;
			long n = strtol(a, &end, 10);
			if (*end || n < 1 || n > 100000) {
				json_decref(users);
				return bad("-n wants a number of hosts, not \"%s\"", a);
			}
			m.count = n;
			break;
		}
		case 'd':
			if (parse_duration(a, &v) < 0 || v <= 0) {
				json_decref(users);
				return bad("-d wants a duration [[HH:]MM:]SS, not \"%s\"", a);
			}
			m.duration = v;
			break;
		case 's':
		case 'e':
			if ((v = parse_when(a)) < 0) {
				json_decref(users);
				return bad("not a time: \"%s\"", a);
			}
			/* "now" is the master's now: leave the start out. */
			if (o[1] == 'e')
				m.end = v;
			else
				m.start = strcmp(a, "now") != 0 ? v : 0;
			break;
		}
	}
	if (list) {
		json_decref(users);
		return reserve_list(json);
	}
	m.users = users;
	rep = client_request_ok(msg_reserve_pack(&m), "");
	json_decref(users);
	if (rep == NULL)
		return 1;
	msg_reserve_reply_unpack(rep, &rr);
	if (json) {
		char *s = json_dumps(rr.reservation, JSON_INDENT(2));
		printf("%s\n", s ? s : "{}");
		free(s);
	} else {
		struct msg_resv_row r;
		char a[32], b[32], *hosts;

		msg_resv_row_unpack(rr.reservation, &r);
		hosts = join(r.hosts, " ");
		fmt_time(a, sizeof a, r.start);
		fmt_time(b, sizeof b, r.end);
		printf("reservation %s: %s from %s to %s\n", r.name, hosts, a, b);
		free(hosts);
	}
	json_decref(rep);
	return 0;
}

static int
unreserve_run(int argc, char **argv)
{
	struct msg_reply end;
	json_t *rep;

	if (argc == 2 && (strcmp(argv[1], "-help") == 0 || strcmp(argv[1], "--help") == 0)) {
		client_usage(&cmd_unreserve, stdout);
		return 0;
	}
	if (argc != 2 || argv[1][0] == '-') {
		client_errx("give one reservation name");
		client_usage(&cmd_unreserve, stderr);
		return 1;
	}
	rep = client_request_ok(msg_unreserve_pack(&(struct msg_unreserve){ .name = argv[1] }), "");
	if (!rep)
		return 1;
	/* The master says whether it ended early or was cancelled unstarted. */
	msg_reply_unpack(rep, &end, NULL, 0);
	printf("%s\n", end.message ? end.message : "reservation ended");
	json_decref(rep);
	return 0;
}
