/* daemon.c: a daemon's clean start, backgrounding once it is ready, and pid files.
 *
 * A clean start: no inherited descriptors. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

/*
 * Whatever the starter had open beyond 0, 1 and 2 (a shell's redirection, a
 * test harness's pipes, a terminal's extra descriptors) is not the daemon's:
 * held, it keeps files and pipes open for as long as the daemon lives and
 * reaches every child it starts.  Called first thing, before the daemon opens
 * anything of its own.
 */
void
daemon_close_inherited(void)
{
	if (close_range(3, ~0U, 0) == 0)
		return;
	/* Kernels before 5.9: one close per possible descriptor. */
	for (long fd = 3, max = sysconf(_SC_OPEN_MAX); fd < (max > 0 ? max : 1024); fd++)
		close((int)fd);
}

/*
 * glibc gives a large block back to the kernel when it is freed (by munmap,
 * or by trimming the heap), and the next listing or frame of that size
 * faults its pages in again one by one: on this project's virtual machines
 * 16-17 us a page, some 400 faults and 7 ms of every 10,000-job listing.  A
 * daemon keeps what it freed, up to a bound, and serves it again.
 */
void
daemon_malloc_keep(void)
{
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

int
daemon_begin(bool foreground)
{
	int p[2];
	pid_t pid;

	if (foreground)
		return -1;
	if (pipe2(p, O_CLOEXEC) < 0)
		fatal("pipe");
	pid = fork();
	if (pid < 0)
		fatal("fork");
	if (pid > 0) {
		/* The starter learns success only from the child's byte, so
		 * "nowq start" can report a daemon that failed to come up; what
		 * comes instead is why (its fatal error, see log_starter_fd),
		 * passed on to our stderr, since the log may be where nobody
		 * looks or on a disk that is full. */
		char buf[1024];
		ssize_t r;
		bool ready = false, first = true;

		close(p[1]);
		for (;;) {
			r = read(p[0], buf, sizeof buf);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			if (first && buf[0] == 'R') {
				ready = true;
				break;
			}
			first = false;
			if (write(2, buf, (size_t)r) < 0)
				break;
		}
		_exit(ready ? 0 : 1);
	}
	close(p[0]);
	log_starter_fd(p[1]);
	if (setsid() < 0)
		fatal("setsid");
	return p[1];
}

void
daemon_ready(int token, const char *pidfile)
{
	if (pidfile) {
		char buf[32];
		int n = snprintf(buf, sizeof buf, "%d\n", (int)getpid());
		/* Without it nobody could tell it runs, nor stop it. */
		if (spool_write_atomic(pidfile, buf, (size_t)n, 0600) < 0)
			fatal("cannot write pid file %s", pidfile);
	}
	log_starter_fd(-1);
	if (token >= 0) {
		int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (fd >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
			if (fd > 2)
				close(fd);
		}
		if (write(token, "R", 1) < 0)
			log_warn("cannot tell the starter we are ready");
		close(token);
	}
}
