/* mail.c: mail about jobs: qsub's -m letters, addresses, and each event's message.
 *
 * The message is RFC 5322, safe against whatever a job's name or paths hold. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common.h"

int
mail_flags_parse(const char *s, unsigned *flags)
{
	unsigned f = 0;

	if (!*s)
		return -1;
	if (strcmp(s, "n") == 0) {
		*flags = 0;
		return 0;
	}
	for (; *s; s++) {
		switch (*s) {
		case 'b': f |= MAIL_BEGIN; break;
		case 'e': f |= MAIL_END; break;
		case 'a': f |= MAIL_ABORT; break;
		case 's': f |= MAIL_SUSPEND; break;
		default: return -1;
		}
	}
	*flags = f;
	return 0;
}

/*
 * A local user name or user@domain, of the characters addresses use: no
 * blanks, commas, quotes, brackets or control characters that could end a
 * header or add a recipient, and no leading '-' a mailer could take for an
 * option.
 */
bool
mail_valid_address(const char *a)
{
	size_t n = strlen(a);

	if (n == 0 || n > 254 || a[0] == '-' || a[0] == '@' || a[n - 1] == '@')
		return false;
	for (; *a; a++)
		if (!((*a >= 'a' && *a <= 'z') || (*a >= 'A' && *a <= 'Z') ||
		    (*a >= '0' && *a <= '9') || strchr(".-_+@=%", *a)))
			return false;
	return true;
}

/* Appends text with every character that could break the message's
 * structure replaced: in a header only printable text stays (no CR or LF
 * that would start a new header); in the body, newlines are kept. */
static void
put_safe(struct jtext *t, const char *s, bool header)
{
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		char c = (char)*p;
		if (*p == '\n' && !header)
			c = '\n';
		else if (*p < 0x20 || *p == 0x7f)
			c = header || *p != '\t' ? '?' : '\t';
		jt_raw(t, &c, 1);
	}
}

static void
put_time(struct jtext *t, const char *label, int64_t ms)
{
	char buf[64] = "-";
	time_t tt = (time_t)(ms / 1000);
	struct tm tm;

	if (ms > 0 && localtime_r(&tt, &tm))
		strftime(buf, sizeof buf, "%m/%d/%Y %H:%M:%S", &tm);
	jt_lit(t, label);
	jt_lit(t, buf);
	jt_lit(t, "\n");
}

static void
put_hms(struct jtext *t, const char *label, double secs)
{
	char buf[64];
	long s = secs > 0 ? (long)(secs + 0.5) : 0;

	snprintf(buf, sizeof buf, "%s%02ld:%02ld:%02ld\n", label, s / 3600, s / 60 % 60, s % 60);
	jt_lit(t, buf);
}

static const char *const kind_words[] = {
	[MAIL_EV_BEGIN] = "Started", [MAIL_EV_END] = "Complete",
	[MAIL_EV_ABORT] = "Aborted", [MAIL_EV_SUSPEND] = "Suspended",
};

/* From, To, Subject (made safe), Date, Message-ID and the MIME headers,
 * then the blank line. */
static void
put_headers(struct jtext *t, const char *to, const char *from, const char *subject,
    const char *id_part, int64_t now)
{
	char date[64], buf[128];
	time_t tt = (time_t)(now / 1000);
	struct tm tm;

	/* RFC 5322 date, in English whatever the locale. */
	static const char *const wd[] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
	static const char *const mo[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul",
		"Aug", "Sep", "Oct", "Nov", "Dec" };
	if (!localtime_r(&tt, &tm))
		memset(&tm, 0, sizeof tm);
	snprintf(date, sizeof date, "%s, %02d %s %04d %02d:%02d:%02d %+03ld%02ld", wd[tm.tm_wday % 7],
	    tm.tm_mday, mo[tm.tm_mon % 12], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec,
	    tm.tm_gmtoff / 3600, labs(tm.tm_gmtoff) / 60 % 60);
	jt_lit(t, "From: ");
	put_safe(t, from, true);
	jt_lit(t, "\nTo: ");
	put_safe(t, to, true);
	jt_lit(t, "\nSubject: ");
	put_safe(t, subject, true);
	jt_lit(t, "\nDate: ");
	jt_lit(t, date);
	snprintf(buf, sizeof buf, "\nMessage-ID: <nowq.%s.%lld@", id_part, (long long)now);
	jt_lit(t, buf);
	put_safe(t, from && strchr(from, '@') ? strchr(from, '@') + 1 : "localhost", true);
	jt_lit(t, ">\nMIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8\n"
	    "Content-Transfer-Encoding: 8bit\nAuto-Submitted: auto-generated\n\n");
}

char *
mail_compose_admin(const char *to, const char *from, const char *subject, const char *body,
    int64_t now)
{
	struct jtext t = { 0 };

	put_headers(&t, to, from, subject, "admin", now);
	put_safe(&t, body, false);
	jt_lit(&t, "\n");
	return jt_steal(&t, NULL);
}

char *
mail_compose(enum mail_event ev, const struct job *j, const char *to, const char *from, int64_t now)
{
	struct jtext t = { 0 };
	char buf[128], id[64], *subject;

	snprintf(id, sizeof id, "%lld.%d.%d", (long long)j->id, j->attempt, (int)ev);
	subject = xasprintf("Job %lld (%s) %s", (long long)j->id, j->name ? j->name : "",
	    kind_words[ev]);
	put_headers(&t, to, from, subject, id, now);
	free(subject);

	/* The body, laid out as Grid Engine's. */
	snprintf(buf, sizeof buf, "Job %lld (", (long long)j->id);
	jt_lit(&t, buf);
	put_safe(&t, j->name, true);
	jt_lit(&t, ") ");
	jt_lit(&t, kind_words[ev]);
	jt_lit(&t, "\n User             = ");
	put_safe(&t, j->owner, true);
	jt_lit(&t, "\n Queue            = ");
	put_safe(&t, j->queue, true);
	if (j->host) {
		jt_lit(&t, "@");
		put_safe(&t, j->host, true);
	}
	jt_lit(&t, "\n Host             = ");
	put_safe(&t, j->host ? j->host : "-", true);
	jt_lit(&t, "\n");
	put_time(&t, " Start Time       = ", j->start_time);
	if (ev != MAIL_EV_BEGIN) {
		put_time(&t, " End Time         = ", j->end_time);
		put_hms(&t, " User Time        = ", j->utime);
		put_hms(&t, " System Time      = ", j->stime);
		put_hms(&t, " Wallclock Time   = ", j->start_time && j->end_time > j->start_time ?
		    (double)(j->end_time - j->start_time) / 1000 : 0);
		put_hms(&t, " CPU              = ", j->utime + j->stime);
		snprintf(buf, sizeof buf, " Max rss          = %lldK\n", (long long)j->maxrss_kb);
		jt_lit(&t, buf);
		snprintf(buf, sizeof buf, " Exit Status      = %d\n", j->exit_status);
		jt_lit(&t, buf);
		if (j->signal) {
			snprintf(buf, sizeof buf, " Signal           = %d\n", j->signal);
			jt_lit(&t, buf);
		}
		if (j->reason && j->state != JS_DONE) {
			jt_lit(&t, " Failure reason   = ");
			put_safe(&t, j->reason, true);
			jt_lit(&t, "\n");
		} else if (ev == MAIL_EV_ABORT) {
			/* An abort mail always says why, if only in general. */
			snprintf(buf, sizeof buf, " Failure reason   = %s\n", j->state == JS_DELETED ?
			    "deleted" : j->signal ? "killed by a signal" : "ended by the system");
			jt_lit(&t, buf);
		}
	}
	return jt_steal(&t, NULL);
}
