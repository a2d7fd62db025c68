/* log.c: the one logging contract of every nowq process: tagged, levelled lines.
 *
 * Lines go to stderr or a file. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

static const char *log_tag = "nowq";
static int log_lvl = LOG_LVL_INFO;
static char *log_path;
static FILE *log_fp;
/* The starter's pipe (daemon.c) until the daemon is ready: why it could
 * not start goes there too, so the one who started it reads why. */
static int log_starter = -1;
/* qmaster's reader thread logs too: a line is never written to a FILE
 * that log_reopen is closing. */
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;

static void
log_set(const char *tag, int level, const char *path)
{
	log_tag = tag;
	log_lvl = level;
	free(log_path);
	log_path = path ? xstrdup(path) : NULL;
}

void
log_init(const char *tag, int level, const char *path)
{
	log_set(tag, level, path);
	log_reopen();
}

void
log_init_lazy(const char *tag, int level, const char *path)
{
	log_set(tag, level, path);
	log_fp = NULL;   /* a FILE of the parent's, if any, is not ours */
}

static void
log_reopen_locked(void)
{
	if (log_fp && log_fp != stderr)
		fclose(log_fp);
	log_fp = stderr;
	if (log_path) {
		/* A log names jobs, users and what went wrong with them: it is
		 * the daemon's user's alone, whatever the umask or the file's
		 * earlier mode (a file of another user's is left as it is). */
		int fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_NOCTTY | O_CLOEXEC, 0600);
		struct stat sb;
		FILE *fp;
		if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && (sb.st_mode & 077) &&
		    sb.st_uid == geteuid())
			(void)fchmod(fd, sb.st_mode & 0700);
		if (fd >= 0 && (fp = fdopen(fd, "a")) != NULL) {
			setvbuf(fp, NULL, _IOLBF, 0);
			log_fp = fp;
		} else if (fd >= 0)
			close(fd);
	}
}

/* Reopened on SIGHUP so logrotate can move the file away. */
void
log_reopen(void)
{
	pthread_mutex_lock(&log_mu);
	log_reopen_locked();
	pthread_mutex_unlock(&log_mu);
}

int
log_level_parse(const char *name)
{
	static const char *names[] = { "error", "warning", "info", "debug" };
	for (int i = 0; i < 4; i++)
		if (strcmp(name, names[i]) == 0)
			return i;
	return -1;
}

static void log_vwrite(int, const char *, const char *, va_list, int) NOWQ_ATTR_PRINTF(3, 0);

static void
log_vwrite(int lvl, const char *prefix, const char *fmt, va_list ap, int err)
{
	char ts[32], raw[2048], msg[4096];
	struct timespec now;
	struct tm tm;
	int starter;

	if (lvl > log_lvl)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	localtime_r(&now.tv_sec, &tm);
	strftime(ts, sizeof ts, "%Y-%m-%d %H:%M:%S", &tm);
	vsnprintf(raw, sizeof raw, fmt, ap);
	/* One event, one line: a job name or a path with a newline in it
	 * must not forge the next entry. */
	text_oneline_to(msg, sizeof msg, raw);
	pthread_mutex_lock(&log_mu);
	if (!log_fp)
		log_reopen_locked();
	if (err)
		fprintf(log_fp, "%s.%03ld %s[%d]: %s%s: %s\n", ts, now.tv_nsec / 1000000,
		    log_tag, (int)getpid(), prefix, msg, strerror(err));
	else
		fprintf(log_fp, "%s.%03ld %s[%d]: %s%s\n", ts, now.tv_nsec / 1000000,
		    log_tag, (int)getpid(), prefix, msg);
	/* On stderr it was seen already: the starter's stderr is ours. */
	starter = lvl == LOG_LVL_ERR && log_fp != stderr ? log_starter : -1;
	pthread_mutex_unlock(&log_mu);
	if (starter >= 0)
		dprintf(starter, "%s: %s%s%s\n", log_tag, msg, err ? ": " : "", err ? strerror(err) : "");
}

void
log_starter_fd(int fd)
{
	log_starter = fd;
}

#define LOG_FN(fn, lvl, prefix, witherr)			\
void								\
fn(const char *fmt, ...)					\
{								\
	int e = errno;						\
	va_list ap;						\
	va_start(ap, fmt);					\
	log_vwrite(lvl, prefix, fmt, ap, witherr ? e : 0);	\
	va_end(ap);						\
	errno = e;						\
}
LOG_FN(log_warn, LOG_LVL_WARN, "warning: ", 1)
LOG_FN(log_warnx, LOG_LVL_WARN, "warning: ", 0)
LOG_FN(log_info, LOG_LVL_INFO, "", 0)
LOG_FN(log_debug, LOG_LVL_DEBUG, "debug: ", 0)

void
fatal(const char *fmt, ...)
{
	int e = errno;
	va_list ap;
	va_start(ap, fmt);
	log_vwrite(LOG_LVL_ERR, "fatal: ", fmt, ap, e);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_vwrite(LOG_LVL_ERR, "fatal: ", fmt, ap, 0);
	va_end(ap);
	exit(1);
}
