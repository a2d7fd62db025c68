/* test_auth.c: the owner of a loopback TCP peer (auth = none), by sock_diag and by /proc/net/tcp, on real sockets of this user and of another. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/common.h"

/* A listener on the loopback address of family af, port chosen by the
 * kernel; -1 when this host has no such loopback (no IPv6). */
static int
listener(int af)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len;
	int s = socket(af, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		return -1;
	if (af == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;
		a->sin_family = AF_INET;
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof *a;
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
		a->sin6_family = AF_INET6;
		a->sin6_addr = in6addr_loopback;
		len = sizeof *a;
	}
	if (bind(s, (struct sockaddr *)&ss, len) < 0 || listen(s, 4) < 0) {
		close(s);
		return -1;
	}
	return s;
}

/* Connects to the listener ls, as uid (if not -1) in a child process that
 * holds its end open until the parent closes the pipe; returns the
 * accepted socket, with *child the child's pid (or 0). */
static int
connect_as(int ls, uid_t uid, pid_t *child, int *hold)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	int p[2], c, fd;
	char b;

	assert_int_equal(getsockname(ls, (struct sockaddr *)&ss, &len), 0);
	assert_int_equal(pipe(p), 0);
	*child = fork();
	assert_true(*child >= 0);
	if (*child == 0) {
		close(p[1]);
		if (uid != (uid_t)-1 && (setgid(65534) < 0 || setuid(uid) < 0))
			_exit(2);
		if ((c = socket(ss.ss_family, SOCK_STREAM, 0)) < 0 ||
		    connect(c, (struct sockaddr *)&ss, len) < 0)
			_exit(3);
		/* Hold the connection until the parent has looked. */
		(void)read(p[0], &b, 1);
		_exit(0);
	}
	close(p[0]);
	*hold = p[1];
	fd = accept(ls, NULL, NULL);
	assert_true(fd >= 0);
	return fd;
}

static void
check_owner(int af, uid_t uid, int64_t want)
{
	struct sockaddr_storage me, peer;
	socklen_t ml = sizeof me, pl = sizeof peer;
	int ls = listener(af), fd, hold, st;
	int64_t diag;
	pid_t child;

	if (ls < 0)
		skip();
	fd = connect_as(ls, uid, &child, &hold);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&me, &ml), 0);
	assert_int_equal(getpeername(fd, (struct sockaddr *)&peer, &pl), 0);
	assert_int_equal(auth_loopback_peer_uid(fd), want);
	assert_int_equal(auth_peer_uid_proc(&peer, &me), want);
	/* Where netlink is refused the fallback alone answers. */
	diag = auth_peer_uid_diag(&peer, &me);
	if (diag != AUTH_UID_UNKNOWN)
		assert_int_equal(diag, want);
	/* The listener's own end is no peer's socket: the ends swapped name
	 * our accepted socket, owned by us, which must not pass for it. */
	if (want != (int64_t)getuid()) {
		assert_int_not_equal(auth_peer_uid_proc(&me, &peer), want);
		if (diag != AUTH_UID_UNKNOWN)
			assert_int_not_equal(auth_peer_uid_diag(&me, &peer), want);
	}
	close(hold);
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(fd);
	close(ls);
}

static void
test_own_ipv4(void **state)
{
	(void)state;
	check_owner(AF_INET, (uid_t)-1, (int64_t)getuid());
}

static void
test_own_ipv6(void **state)
{
	(void)state;
	check_owner(AF_INET6, (uid_t)-1, (int64_t)getuid());
}

/* The uid that matters: another user's socket must give that user. */
static void
test_other_user(void **state)
{
	struct passwd *pw = getpwnam("nobody");

	(void)state;
	if (getuid() != 0 || !pw)
		skip();
	check_owner(AF_INET, pw->pw_uid, (int64_t)pw->pw_uid);
	check_owner(AF_INET6, pw->pw_uid, (int64_t)pw->pw_uid);
}

/* A connection that no longer exists has no owner, by either way. */
static void
test_gone(void **state)
{
	struct sockaddr_storage me, peer;
	socklen_t ml = sizeof me, pl = sizeof peer;
	int ls = listener(AF_INET), fd, hold, st;
	int64_t diag;
	pid_t child;

	(void)state;
	assert_true(ls >= 0);
	fd = connect_as(ls, (uid_t)-1, &child, &hold);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&me, &ml), 0);
	assert_int_equal(getpeername(fd, (struct sockaddr *)&peer, &pl), 0);
	close(hold);
	assert_int_equal(waitpid(child, &st, 0), child);
	close(fd);
	close(ls);
	/* Closed on both sides: at most a TIME_WAIT entry, which has no
	 * owner (uid 0 in /proc), so look for a port never used instead. */
	((struct sockaddr_in *)&peer)->sin_port = 0;
	assert_int_equal(auth_peer_uid_proc(&peer, &me), -1);
	diag = auth_peer_uid_diag(&peer, &me);
	assert_true(diag == -1 || diag == AUTH_UID_UNKNOWN);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_ipv4),
		cmocka_unit_test(test_own_ipv6),
		cmocka_unit_test(test_other_user),
		cmocka_unit_test(test_gone),
	};

	signal(SIGPIPE, SIG_IGN);
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
