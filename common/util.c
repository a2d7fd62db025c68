/* util.c: small helpers every program shares: checked allocation, clocks, fds, hashing, files. */
#include "config.h"

#include <assert.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		fatalx("out of memory (%zu bytes)", n);
	return p;
}

void *
xcalloc(size_t n, size_t m)
{
	void *p = calloc(n ? n : 1, m ? m : 1);
	if (!p)
		fatalx("out of memory (%zu x %zu bytes)", n, m);
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		fatalx("out of memory (%zu bytes)", n);
	return p;
}

/*
 * On this project's virtual machines a page fault traps to the hypervisor:
 * 16-17 us a page touched one by one, against 0.9 us a page populated by
 * one madvise.  A large buffer about to be written whole (a frame read)
 * is populated first.  Advice only: an old kernel's EINVAL
 * leaves the pages to fault as before.
 */
void
mem_populate(void *p, size_t n)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), a, e;

	if (n < MEM_POPULATE_MIN)
		return;
	a = ((uintptr_t)p + pg - 1) & ~(pg - 1);
	e = ((uintptr_t)p + n) & ~(pg - 1);
	if (e > a)
		(void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
}

/*
 * For the same reason, a block of a megabyte or more that a process
 * fills at once (a listing's rows) is asked in huge pages: one 2 MiB page
 * written whole costs some 0.25 ms there, against 4-8 ms for its 512 small
 * pages even populated.  The mapping is 2 MiB aligned and sized; *got is
 * its size, for mem_big_free.  Advice only: without huge pages it is a
 * mapping like malloc's.
 */
#define MEM_BIG_ALIGN ((size_t)2 << 20)
void *
mem_big(size_t n, size_t *got)
{
	size_t size = (n + MEM_BIG_ALIGN - 1) & ~(MEM_BIG_ALIGN - 1);
	char *p, *a;

	p = mmap(NULL, size + MEM_BIG_ALIGN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		fatalx("out of memory (%zu bytes)", size);
	a = (char *)(((uintptr_t)p + MEM_BIG_ALIGN - 1) & ~(uintptr_t)(MEM_BIG_ALIGN - 1));
	if (a > p)
		(void)munmap(p, (size_t)(a - p));
	(void)munmap(a + size, MEM_BIG_ALIGN - (size_t)(a - p));
	(void)madvise(a, size, MADV_HUGEPAGE);
	*got = size;
	return a;
}

void
mem_big_free(void *p, size_t got)
{
	if (p)
		(void)munmap(p, got);
}

char *
xstrdup(const char *s)
{
	char *d = strdup(s);
	if (!d)
		fatalx("out of memory");
	return d;
}

char *
xstrndup(const char *s, size_t n)
{
	char *d = strndup(s, n);
	if (!d)
		fatalx("out of memory");
	return d;
}

char *
xasprintf(const char *fmt, ...)
{
	char *s;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		fatalx("out of memory");
	va_end(ap);
	return s;
}

char *
int_text(char buf[INT_TEXT_LEN], int64_t v)
{
	char *p = buf + INT_TEXT_LEN;
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

	do
		*--p = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		*--p = '-';
	return p;
}

int64_t
now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* "14:00:00" today, else "2026-11-24 14:00:00", in local time: for
 * messages people read, where epoch milliseconds say nothing. */
void
fmt_when(char *buf, size_t n, int64_t ms)
{
	time_t t = (time_t)(ms / 1000), now = time(NULL);
	struct tm a, b;

	if (!localtime_r(&t, &a) || !localtime_r(&now, &b))
		snprintf(buf, n, "%lld", (long long)ms);
	else if (a.tm_year == b.tm_year && a.tm_yday == b.tm_yday)
		strftime(buf, n, "%H:%M:%S", &a);
	else
		strftime(buf, n, "%Y-%m-%d %H:%M:%S", &a);
}

int64_t
mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
mono_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int
set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

int
set_cloexec(int fd)
{
	int fl = fcntl(fd, F_GETFD);
	return fl < 0 ? -1 : fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
}

uint64_t
hash_fnv1a64(const void *p, size_t n)
{
	const unsigned char *c = p;
	uint64_t h = 0xcbf29ce484222325ULL;
	while (n--) {
		h ^= *c++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

bool
host_is_loopback(const char *host)
{
	return strcmp(host, "localhost") == 0 || strcmp(host, "::1") == 0 || strncmp(host, "127.", 4) == 0;
}

/* "host:port" to the addresses getaddrinfo gives for a stream socket
 * (free with freeaddrinfo); -1 on a malformed address or one that does
 * not resolve. */
int
resolve_hostport(const char *addr, struct addrinfo **res)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
	    .ai_flags = AI_NUMERICSERV };
	char *host, port[16];
	int p, rc;

	if (parse_hostport(addr, &host, &p) < 0)
		return -1;
	snprintf(port, sizeof port, "%d", p);
	rc = getaddrinfo(host, port, &hints, res);
	free(host);
	return rc == 0 ? 0 : -1;
}

static bool
self_connected(int fd)
{
	struct sockaddr_storage me, peer;
	socklen_t ml = sizeof me, pl = sizeof peer;

	return getsockname(fd, (struct sockaddr *)&me, &ml) == 0 &&
	    getpeername(fd, (struct sockaddr *)&peer, &pl) == 0 && ml == pl && memcmp(&me, &peer, ml) == 0;
}

/* A connect that gives up after timeout_ms, so a dead host in the list
 * costs seconds rather than the kernel's minutes. */
int
connect_timed(const struct addrinfo *ai, int timeout_ms, const char **why)
{
	struct pollfd pfd;
	int fd, err = 0, one = 1;
	socklen_t len = sizeof err;

	if ((fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    ai->ai_protocol)) < 0) {
		*why = strerror(errno);
		return -1;
	}
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		if (errno != EINPROGRESS) {
			*why = strerror(errno);
			close(fd);
			return -1;
		}
		pfd.fd = fd;
		pfd.events = POLLOUT;
		if (poll(&pfd, 1, timeout_ms) <= 0) {
			*why = "connection timed out";
			close(fd);
			return -1;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err) {
			*why = strerror(err ? err : errno);
			close(fd);
			return -1;
		}
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
		*why = strerror(errno);
		close(fd);
		return -1;
	}
	/* A loopback port in the ephemeral range with nothing listening can
	 * be given to us as our own end: TCP then connects us to ourselves,
	 * and we would read our own requests. */
	if (self_connected(fd)) {
		*why = strerror(ECONNREFUSED);
		close(fd);
		return -1;
	}
	/* Requests are single small frames: send each at once. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return fd;
}

int
parse_hostport(const char *s, char **host, int *port)
{
	const char *colon;
	char *end;
	long p;

	if (s[0] == '[') {
		const char *rb = strchr(s, ']');
		if (!rb || rb[1] != ':')
			return -1;
		*host = strndup(s + 1, (size_t)(rb - s - 1));
		colon = rb + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || colon == s)
			return -1;
		*host = strndup(s, (size_t)(colon - s));
	}
	errno = 0;
	p = strtol(colon + 1, &end, 10);
	if (errno || *end || p <= 0 || p > 65535 || end == colon + 1) {
		free(*host);
		*host = NULL;
		return -1;
	}
	*port = (int)p;
	return 0;
}

char *
read_file(const char *path, size_t max, size_t *len, const char **why)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	size_t cap = 4096, n = 0;
	char *buf;

	if (fd < 0) {
		*why = strerror(errno);
		return NULL;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		*why = "is a directory";
		return NULL;
	}
	buf = xmalloc(cap + 1);
	for (;;) {
		ssize_t r;
		if (n == cap) {
			if (cap > max) {
				free(buf);
				close(fd);
				*why = "file too large";
				return NULL;
			}
			cap *= 2;
			buf = xrealloc(buf, cap + 1);
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			*why = strerror(errno);
			free(buf);
			close(fd);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (n > max) {
		free(buf);
		*why = "file too large";
		return NULL;
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

const char *
my_hostname(void)
{
	static __thread char name[256];
	if (!name[0]) {
		if (gethostname(name, sizeof name - 1) < 0)
			strcpy(name, "localhost");
		name[strcspn(name, ".")] = '\0';
	}
	return name;
}

void
strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

size_t
strv_len(char *const *v)
{
	size_t n = 0;
	while (v && v[n])
		n++;
	return n;
}

char **
strv_dup(char *const *v)
{
	size_t n = strv_len(v);
	char **d;
	if (!v)
		return NULL;
	d = xcalloc(n + 1, sizeof *d);
	for (size_t i = 0; i < n; i++)
		d[i] = xstrdup(v[i]);
	return d;
}

void
strv_push(char ***v, char *s)
{
	size_t n = strv_len(*v);
	*v = xrealloc(*v, (n + 2) * sizeof **v);
	(*v)[n] = s;
	(*v)[n + 1] = NULL;
}

pid_t
pidfile_read_live(const char *path)
{
	const char *why;
	char *s = read_file(path, 64, NULL, &why);
	long pid;

	if (!s)
		return 0;
	pid = strtol(s, NULL, 10);
	free(s);
	if (pid <= 0 || (kill((pid_t)pid, 0) < 0 && errno == ESRCH))
		return 0;
	return (pid_t)pid;
}

bool
name_chars_ok(const char *s, size_t max)
{
	size_t n = s ? strlen(s) : 0;

	if (n == 0 || n > max)
		return false;
	for (; *s; s++)
		if (!(*s == '-' || *s == '.' || *s == '_' || (*s >= '0' && *s <= '9') ||
		    (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
			return false;
	return true;
}

/* RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF. */
size_t
utf8_char_len(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;
	uint32_t cp;

	if (p[0] < 0x80)
		return p[0] ? 1 : 0;
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		n = 2;
		cp = p[0] & 0x1f;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		n = 3;
		cp = p[0] & 0x0f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4;
		cp = p[0] & 0x07;
	} else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

void
utf8_scrub(char *s)
{
	char *w = s;
	size_t n;

	while (*s) {
		if ((n = utf8_char_len(s)) > 0) {
			memmove(w, s, n);
			w += n;
			s += n;
			continue;
		}
		/* The lead byte of a character the string's end cut off: a
		 * truncation, whose remains are dropped. */
		if ((unsigned char)*s >= 0xc2 && (unsigned char)*s <= 0xf4) {
			size_t k = 1;
			while (k < 4 && ((unsigned char)s[k] & 0xc0) == 0x80)
				k++;
			if (s[k] == '\0')
				break;
		}
		*w++ = '?';
		s++;
	}
	*w = '\0';
}

/* Whole characters or nothing: a cut never splits a UTF-8 character, and
 * a byte that is not UTF-8 is escaped like a control character, so the
 * result is always valid UTF-8 (which JSON needs). */
void
text_oneline_to(char *dst, size_t dstlen, const char *src)
{
	size_t n = 0, k;

	assert(dstlen > 0);
	for (; *src; src += k ? k : 1) {
		unsigned char c = (unsigned char)*src;
		char esc[5];

		if ((k = c >= 0x80 ? utf8_char_len(src) : 0) > 0) {
			if (n + k >= dstlen)
				break;
			memcpy(dst + n, src, k);
			n += k;
			continue;
		}
		if (c >= 0x20 && c != 0x7f && c < 0x80) {
			esc[0] = (char)c;
			esc[1] = '\0';
		} else if (c == '\n')
			memcpy(esc, "\\n", 3);
		else if (c == '\t')
			memcpy(esc, "\\t", 3);
		else if (c == '\r')
			memcpy(esc, "\\r", 3);
		else
			snprintf(esc, sizeof esc, "\\x%02x", c);
		if (n + strlen(esc) >= dstlen)
			break;
		memcpy(dst + n, esc, strlen(esc));
		n += strlen(esc);
	}
	dst[n] = '\0';
}

char *
text_oneline(const char *src)
{
	/* At most four bytes for each. */
	size_t cap = strlen(src) * 4 + 1;
	char *dst = xmalloc(cap);

	text_oneline_to(dst, cap, src);
	return dst;
}

/* Base64 (RFC 4648), for binary payloads in JSON frames (changesets, snapshots). */
static const char b64_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *
b64_encode(const void *data, size_t n)
{
	const unsigned char *p = data;
	char *out = xmalloc((n + 2) / 3 * 4 + 1), *o = out;

	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
		    (i + 2 < n ? p[i + 2] : 0);
		*o++ = b64_chars[v >> 18 & 63];
		*o++ = b64_chars[v >> 12 & 63];
		*o++ = i + 1 < n ? b64_chars[v >> 6 & 63] : '=';
		*o++ = i + 2 < n ? b64_chars[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

/* A character's value, -1 for one that is not base64: computed, not
 * looked up in b64_chars, since a staged file's chunk is over a million
 * characters. */
static int
b64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

void *
b64_decode(const char *s, size_t *n)
{
	size_t len = strlen(s), k = 0;
	unsigned char *out;
	uint32_t v = 0;
	int bits = 0;

	if (len % 4)
		return NULL;
	out = xmalloc(len / 4 * 3 + 1);
	for (size_t i = 0; i < len; i++) {
		int c;
		if (s[i] == '=') {
			if (i < len - 2)
				goto bad;
			break;
		}
		if ((c = b64_value((unsigned char)s[i])) < 0)
			goto bad;
		v = v << 6 | (uint32_t)c;
		if ((bits += 6) >= 8) {
			bits -= 8;
			out[k++] = (unsigned char)(v >> bits);
		}
	}
	*n = k;
	return out;
bad:
	free(out);
	return NULL;
}

char *
str_expand(const char *in, const struct str_var *vars, size_t nvars, const char **bad)
{
	size_t cap = strlen(in) + 1, n = 0;
	char *out = xmalloc(cap);

	while (*in) {
		const char *add = in;
		size_t addn = 1, skip = 1;
		for (size_t v = 0; v < nvars; v++)
			if (strncmp(in, vars[v].name, strlen(vars[v].name)) == 0) {
				if (!vars[v].value) {
					*bad = vars[v].name;
					free(out);
					return NULL;
				}
				add = vars[v].value;
				addn = strlen(add);
				skip = strlen(vars[v].name);
				break;
			}
		if (n + addn + 1 > cap) {
			cap = (n + addn + 1) * 2;
			out = xrealloc(out, cap);
		}
		memcpy(out + n, add, addn);
		n += addn;
		in += skip;
	}
	out[n] = '\0';
	return out;
}
