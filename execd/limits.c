/* limits.c: how this host enforces a job's limits, and how a limit's end is worded.
 *
 * h_vmem by a cgroup v2 memory.max where it can, else RLIMIT_AS; the other
 * s_ and h_ limits of Grid Engine's complex list by setrlimit. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "execd/execd.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define LIMITS_CGROUP_ROOT "/sys/fs/cgroup"

/* Set once by limits_probe in execd, inherited by every shepherd. */
const char *limits_vmem_mode = LIMITS_VMEM_RLIMIT;
char       *limits_cgroup_parent;

/* Sizes as Grid Engine users write them (2G, 500M, 2g), in the largest
 * unit that divides them, else bytes. */
void
limits_size_str(int64_t bytes, char *buf, size_t len)
{
	static const struct { int64_t unit; char c; } units[] = {
		{ 1LL << 40, 'T' }, { 1000LL * 1000 * 1000 * 1000, 't' },
		{ 1LL << 30, 'G' }, { 1000LL * 1000 * 1000, 'g' },
		{ 1LL << 20, 'M' }, { 1000LL * 1000, 'm' }, { 1LL << 10, 'K' }, { 1000, 'k' },
	};

	for (size_t i = 0; bytes > 0 && i < sizeof units / sizeof units[0]; i++)
		if (bytes % units[i].unit == 0) {
			snprintf(buf, len, "%" PRId64 "%c", bytes / units[i].unit, units[i].c);
			return;
		}
	snprintf(buf, len, "%" PRId64, bytes);
}

/* One soft/hard pair: each side as asked (soft <= hard), else as it is. */
static void
limits_pair(struct limits_rlimit *out, int resource, const char *name, bool has_soft,
    int64_t soft, bool has_hard, int64_t hard)
{
	struct rlimit now;

	if (getrlimit(resource, &now) < 0)
		now.rlim_cur = now.rlim_max = RLIM_INFINITY;
	out->resource = resource;
	out->name = name;
	out->rl.rlim_max = has_hard && (now.rlim_max == RLIM_INFINITY || (rlim_t)hard < now.rlim_max) ?
	    (rlim_t)hard : now.rlim_max;
	out->rl.rlim_cur = has_soft ? (rlim_t)soft : has_hard ? (rlim_t)hard : now.rlim_cur;
	if (out->rl.rlim_max != RLIM_INFINITY &&
	    (out->rl.rlim_cur == RLIM_INFINITY || out->rl.rlim_cur > out->rl.rlim_max))
		out->rl.rlim_cur = out->rl.rlim_max;
}

int
limits_rlimits(const struct job_req *r, bool vmem_by_cgroup, int64_t grace, struct limits_rlimit *out)
{
	static const struct { int resource, soft, hard; const char *name; } pairs[] = {
		{ RLIMIT_DATA, REQ_S_DATA, REQ_H_DATA, "h_data" },
		{ RLIMIT_STACK, REQ_S_STACK, REQ_H_STACK, "h_stack" },
		{ RLIMIT_FSIZE, REQ_S_FSIZE, REQ_H_FSIZE, "h_fsize" },
		{ RLIMIT_CORE, REQ_S_CORE, REQ_H_CORE, "h_core" },
	};
	bool s_vmem = r->lim_set & (1u << REQ_S_VMEM), s_cpu = r->lim_set & (1u << REQ_S_CPU);
	bool h_vmem = r->h_vmem > 0 && !vmem_by_cgroup, h_cpu = r->h_cpu > 0;
	int n = 0;

	if (s_vmem || h_vmem)
		limits_pair(&out[n++], RLIMIT_AS, "h_vmem", s_vmem, r->lim[REQ_S_VMEM], h_vmem, r->h_vmem);
	if (s_cpu || h_cpu) {
		limits_pair(&out[n], RLIMIT_CPU, "h_cpu", s_cpu || h_cpu,
		    s_cpu && (!h_cpu || r->lim[REQ_S_CPU] < r->h_cpu) ? r->lim[REQ_S_CPU] : r->h_cpu,
		    h_cpu, r->h_cpu + grace);
		n++;
	}
	for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
		bool s = r->lim_set & (1u << pairs[i].soft), h = r->lim_set & (1u << pairs[i].hard);
		if (s || h)
			limits_pair(&out[n++], pairs[i].resource, pairs[i].name, s, r->lim[pairs[i].soft],
			    h, r->lim[pairs[i].hard]);
	}
	return n;
}

/* The oom_kill count of a memory.events text; 0 when it has none. */
int64_t
limits_oom_count(const char *events)
{
	const char *p = events;

	while (p && *p) {
		long long n;
		if (sscanf(p, "oom_kill %lld", &n) == 1 && strncmp(p, "oom_kill ", 9) == 0)
			return n;
		if ((p = strchr(p, '\n')) != NULL)
			p++;
	}
	return 0;
}

static int
limits_write(const char *dir, const char *file, const char *text)
{
	char path[PATH_MAX];
	int fd, rc = 0;
	size_t n = strlen(text);

	snprintf(path, sizeof path, "%s/%s", dir, file);
	/* No O_CREAT: a cgroup's files are the kernel's; one missing means
	 * this is no cgroup or the controller is off. */
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return -1;
	if (write(fd, text, n) != (ssize_t)n)
		rc = -1;
	if (close(fd) < 0)
		rc = -1;
	return rc;
}

/* The execd's own cgroup v2 folder, from /proc/self/cgroup's "0::" line. */
static char *
limits_own_cgroup(void)
{
	const char *why;
	char *s = read_file("/proc/self/cgroup", 65536, NULL, &why), *p, *end, *dir;

	if (!s)
		return NULL;
	for (p = s; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, "0::", 3) == 0)
			break;
	if (!p) {
		free(s);
		return NULL;
	}
	p += 3;
	if ((end = strchr(p, '\n')) != NULL)
		*end = '\0';
	dir = xasprintf("%s%s", LIMITS_CGROUP_ROOT, strcmp(p, "/") == 0 ? "" : p);
	free(s);
	return dir;
}

/*
 * Decides, once at start-up, how h_vmem is enforced here.  A cgroup needs
 * cgroup v2 at the parent, the memory controller on for the parent's
 * children, and a child we may create: all tried for real with a probe
 * child, since permissions and delegation differ from host to host.
 * parent: execd.ini's cgroup_parent, or NULL for the execd's own cgroup.
 * Returns the mode; why says what ruled the cgroup out.
 */
const char *
limits_probe(const char *parent, char *why, size_t whylen)
{
	struct statfs sf;
	char *dir = parent ? xstrdup(parent) : limits_own_cgroup(), *probe, *text;
	char path[PATH_MAX];
	const char *rwhy;

	free(limits_cgroup_parent);
	limits_cgroup_parent = NULL;
	limits_vmem_mode = LIMITS_VMEM_RLIMIT;
	if (!dir) {
		snprintf(why, whylen, "this process is in no cgroup v2");
		return limits_vmem_mode;
	}
	if (statfs(dir, &sf) < 0 || sf.f_type != CGROUP2_SUPER_MAGIC) {
		snprintf(why, whylen, "%s is not a cgroup v2 folder", dir);
		free(dir);
		return limits_vmem_mode;
	}
	snprintf(path, sizeof path, "%s/cgroup.subtree_control", dir);
	text = read_file(path, 4096, NULL, &rwhy);
	if (!text || !strstr(text, "memory"))
		(void)limits_write(dir, "cgroup.subtree_control", "+memory");
	free(text);
	probe = xasprintf("%s/nowq.probe.%d", dir, (int)getpid());
	if (mkdir(probe, 0755) < 0 && errno != EEXIST) {
		snprintf(why, whylen, "cannot create a cgroup in %s: %s", dir, strerror(errno));
		free(probe);
		free(dir);
		return limits_vmem_mode;
	}
	snprintf(path, sizeof path, "%s/memory.max", probe);
	if (access(path, W_OK) < 0)
		snprintf(why, whylen, "the memory controller is not enabled for the children of %s", dir);
	else {
		limits_vmem_mode = LIMITS_VMEM_CGROUP;
		limits_cgroup_parent = xstrdup(dir);
		snprintf(why, whylen, "job cgroups in %s", dir);
	}
	rmdir(probe);
	free(probe);
	free(dir);
	return limits_vmem_mode;
}

/*
 * The job's cgroup, PARENT/nowq.KEY.PID (the shepherd's pid: execds of
 * clusters sharing a machine, and so a parent cgroup, number their jobs
 * alike, and a job must not share another's limit or OOM count), with
 * memory.max at bytes and no swap to spill into.  *procs_fd is its
 * cgroup.procs, open for the job's process to write "0" into: it joins
 * before it execs, so nothing the job starts is ever outside.  Returns the
 * folder, or NULL with a reason in why.
 */
char *
limits_cgroup_create(const char *parent, const char *key, int64_t bytes, int *procs_fd,
    char *why, size_t whylen)
{
	char *dir = xasprintf("%s/nowq.%s.%d", parent, key, (int)getpid()), path[PATH_MAX], num[32];

	*procs_fd = -1;
	/* One that exists was left by a killed shepherd of this key and pid. */
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		snprintf(why, whylen, "cannot create the job's cgroup %s: %s", dir, strerror(errno));
		free(dir);
		return NULL;
	}
	snprintf(num, sizeof num, "%" PRId64, bytes);
	if (limits_write(dir, "memory.max", num) < 0) {
		snprintf(why, whylen, "cannot set memory.max of the job's cgroup %s: %s", dir,
		    strerror(errno));
		rmdir(dir);
		free(dir);
		return NULL;
	}
	/* Absent without swap accounting: then there is no swap to limit. */
	(void)limits_write(dir, "memory.swap.max", "0");
	snprintf(path, sizeof path, "%s/cgroup.procs", dir);
	if ((*procs_fd = open(path, O_WRONLY | O_CLOEXEC)) < 0) {
		snprintf(why, whylen, "cannot open %s: %s", path, strerror(errno));
		rmdir(dir);
		free(dir);
		return NULL;
	}
	return dir;
}

/* Whether the kernel's OOM killer struck inside the job's cgroup. */
bool
limits_cgroup_oom(const char *dir)
{
	char path[PATH_MAX], *text;
	const char *why;
	int64_t n;

	snprintf(path, sizeof path, "%s/memory.events", dir);
	if ((text = read_file(path, 4096, NULL, &why)) == NULL)
		return false;
	n = limits_oom_count(text);
	free(text);
	return n > 0;
}

/* The cgroup's peak memory in bytes (memory.peak, Linux 5.19 and later;
 * it counts all the job's processes at once, page cache included); 0 when
 * the kernel does not keep it. */
int64_t
limits_cgroup_peak(const char *dir)
{
	char path[PATH_MAX], *text, *end;
	const char *why;
	long long v;

	snprintf(path, sizeof path, "%s/memory.peak", dir);
	if ((text = read_file(path, 64, NULL, &why)) == NULL)
		return 0;
	v = strtoll(text, &end, 10);
	free(text);
	return v > 0 && end != text ? (int64_t)v : 0;
}

/* Ends whatever is left in the cgroup, even what left the job's session,
 * and removes it.  A cgroup goes only once empty; dying takes a moment. */
void
limits_cgroup_remove(const char *dir)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	(void)limits_write(dir, "cgroup.kill", "1");
	for (int i = 0; i < 100; i++) {
		if (rmdir(dir) == 0 || errno == ENOENT)
			return;
		if (errno != EBUSY)
			break;
		nanosleep(&ts, NULL);
	}
	log_warn("cannot remove the job's cgroup %s", dir);
}

/* Grid Engine's execd marks a job it signals as not to be signalled again
 * for 90 s, and checks h_rt under the same mark: a job warned by SIGUSR1
 * at s_rt gets SIGKILL at h_rt or 90 s after that warning, whichever is
 * later (s_rt=5,h_rt=10 is killed near 96 s: t/sge/gaps/srt-hrt.*).  Scripts
 * written for it count on that time to save their work. */
int64_t
limits_rt_kill_at(int64_t hard_at, int64_t last_usr1)
{
	if (hard_at && last_usr1 && hard_at < last_usr1 + LIMITS_SOFT_RESEND_MS)
		return last_usr1 + LIMITS_SOFT_RESEND_MS;
	return hard_at;
}
