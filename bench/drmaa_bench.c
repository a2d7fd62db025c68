/* drmaa_bench.c: a DRMAA library's submission rate (drmaa_run_job in a loop, drmaa_run_bulk_jobs) and drmaa_wait's latency from a job's end; the library is loaded by path, so nowq's and Grid Engine's run the same code. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "drmaa/drmaa.h"

/* The library's functions, found by name. */
static struct {
	int (*init)(const char *, char *, size_t);
	int (*exit_)(char *, size_t);
	int (*alloc)(drmaa_job_template_t **, char *, size_t);
	int (*set)(drmaa_job_template_t *, const char *, const char *, char *, size_t);
	int (*setv)(drmaa_job_template_t *, const char *, const char *[], char *, size_t);
	int (*run)(char *, size_t, const drmaa_job_template_t *, char *, size_t);
	int (*bulk)(drmaa_job_ids_t **, const drmaa_job_template_t *, int, int, int, char *, size_t);
	void (*release_ids)(drmaa_job_ids_t *);
	int (*control)(const char *, int, char *, size_t);
	int (*sync)(const char *[], signed long, int, char *, size_t);
	int (*wait)(const char *, char *, size_t, int *, signed long, drmaa_attr_values_t **, char *, size_t);
	int (*drm)(char *, size_t, char *, size_t);
} d;

static char diag[DRMAA_ERROR_STRING_BUFFER];

static void
need(int rc, const char *what)
{
	if (rc != DRMAA_ERRNO_SUCCESS) {
		fprintf(stderr, "drmaa_bench: %s: %d: %s\n", what, rc, diag);
		exit(1);
	}
}

static void *
sym(void *h, const char *name)
{
	void *p = dlsym(h, name);
	if (!p) {
		fprintf(stderr, "drmaa_bench: %s: %s\n", name, dlerror());
		exit(1);
	}
	return p;
}

static double
now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU seconds (user + system) of this process, or of the process pid
 * names (NOWQ_BENCH_MASTER_PID: the master's, read from /proc); -1 when
 * there is none to read. */
static double
cpu_of(const char *pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut, st;
	struct rusage ru;
	FILE *fp;
	size_t n;

	if (!pid) {
		getrusage(RUSAGE_SELF, &ru);
		return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
		    ru.ru_stime.tv_usec / 1e6;
	}
	snprintf(path, sizeof path, "/proc/%s/stat", pid);
	if ((fp = fopen(path, "r")) == NULL)
		return -1;
	n = fread(buf, 1, sizeof buf - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	/* Fields 14 and 15, counted after the command's closing parenthesis. */
	if ((p = strrchr(buf, ')')) == NULL ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	const char *all[] = { DRMAA_JOB_IDS_SESSION_ALL, NULL };
	char id[DRMAA_JOBNAME_BUFFER], out[DRMAA_JOBNAME_BUFFER], drm[DRMAA_DRM_SYSTEM_BUFFER], stamp[4096];
	drmaa_job_template_t *held, *timed;
	drmaa_job_ids_t *ids;
	double t0, loop, bulk, *lat, cpu0, mcpu0, cpu, mcpu;
	const char *master = getenv("NOWQ_BENCH_MASTER_PID");
	int n, nbulk, nwait, stat;
	void *h;

	if (argc != 6) {
		fprintf(stderr, "usage: drmaa_bench LIBRARY JOBS BULK_TASKS WAITS STAMPDIR\n");
		return 2;
	}
	if ((h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL)) == NULL) {
		fprintf(stderr, "drmaa_bench: %s\n", dlerror());
		return 1;
	}
	n = atoi(argv[2]);
	nbulk = atoi(argv[3]);
	nwait = atoi(argv[4]);
	d.init = sym(h, "drmaa_init");
	d.exit_ = sym(h, "drmaa_exit");
	d.alloc = sym(h, "drmaa_allocate_job_template");
	d.set = sym(h, "drmaa_set_attribute");
	d.setv = sym(h, "drmaa_set_vector_attribute");
	d.run = sym(h, "drmaa_run_job");
	d.bulk = sym(h, "drmaa_run_bulk_jobs");
	d.release_ids = sym(h, "drmaa_release_job_ids");
	d.control = sym(h, "drmaa_control");
	d.sync = sym(h, "drmaa_synchronize");
	d.wait = sym(h, "drmaa_wait");
	d.drm = sym(h, "drmaa_get_DRM_system");
	need(d.init(NULL, diag, sizeof diag), "drmaa_init");
	need(d.drm(drm, sizeof drm, diag, sizeof diag), "drmaa_get_DRM_system");
	/* Held jobs: the submission alone is measured, nothing runs. */
	need(d.alloc(&held, diag, sizeof diag), "allocate");
	need(d.set(held, DRMAA_REMOTE_COMMAND, "/bin/true", diag, sizeof diag), "set");
	need(d.set(held, DRMAA_JS_STATE, DRMAA_SUBMISSION_STATE_HOLD, diag, sizeof diag), "set");
	need(d.set(held, DRMAA_OUTPUT_PATH, ":/dev/null", diag, sizeof diag), "set");
	need(d.set(held, DRMAA_JOIN_FILES, "y", diag, sizeof diag), "set");
	cpu0 = cpu_of(NULL);
	mcpu0 = master ? cpu_of(master) : -1;
	t0 = now();
	for (int i = 0; i < n; i++)
		need(d.run(id, sizeof id, held, diag, sizeof diag), "drmaa_run_job");
	loop = now() - t0;
	cpu = cpu_of(NULL) - cpu0;
	mcpu = master && mcpu0 >= 0 ? cpu_of(master) - mcpu0 : -1;
	t0 = now();
	need(d.bulk(&ids, held, 1, nbulk, 1, diag, sizeof diag), "drmaa_run_bulk_jobs");
	bulk = now() - t0;
	d.release_ids(ids);
	need(d.control(DRMAA_JOB_IDS_SESSION_ALL, DRMAA_CONTROL_TERMINATE, diag, sizeof diag), "terminate");
	need(d.sync(all, DRMAA_TIMEOUT_WAIT_FOREVER, 1, diag, sizeof diag), "synchronize");
	/* A job that writes the time as its last act: the wait's return
	 * minus that time is the latency from the job's end.  The shell
	 * execs date, so the job ends when date does, not after a shell
	 * that forked it has been woken to exit in turn. */
	snprintf(stamp, sizeof stamp, "exec date +%%s.%%N > %s/stamp", argv[5]);
	need(d.alloc(&timed, diag, sizeof diag), "allocate");
	need(d.set(timed, DRMAA_REMOTE_COMMAND, "/bin/sh", diag, sizeof diag), "set");
	need(d.setv(timed, DRMAA_V_ARGV, (const char *[]){ "-c", stamp, NULL }, diag, sizeof diag), "setv");
	need(d.set(timed, DRMAA_OUTPUT_PATH, ":/dev/null", diag, sizeof diag), "set");
	need(d.set(timed, DRMAA_JOIN_FILES, "y", diag, sizeof diag), "set");
	lat = calloc((size_t)nwait + 1, sizeof *lat);
	for (int i = 0; i < nwait; i++) {
		char path[4200];
		double end = 0, back;
		FILE *fp;
		need(d.run(id, sizeof id, timed, diag, sizeof diag), "drmaa_run_job");
		need(d.wait(id, out, sizeof out, &stat, DRMAA_TIMEOUT_WAIT_FOREVER, NULL, diag, sizeof diag), "drmaa_wait");
		back = now();
		snprintf(path, sizeof path, "%s/stamp", argv[5]);
		if ((fp = fopen(path, "r")) == NULL || fscanf(fp, "%lf", &end) != 1) {
			fprintf(stderr, "drmaa_bench: the job wrote no time in %s\n", path);
			return 1;
		}
		fclose(fp);
		lat[i] = (back - end) * 1000;
	}
	qsort(lat, (size_t)nwait, sizeof *lat, cmp);
	printf("%s: run_job %.0f jobs/s (%d in %.2f s); run_bulk_jobs %.0f tasks/s (%d in %.3f s); "
	    "drmaa_wait after the job's end: median %.1f ms, p90 %.1f ms, max %.1f ms (%d jobs)\n",
	    drm, n / loop, n, loop, nbulk / bulk, nbulk, bulk, lat[nwait / 2], lat[nwait * 9 / 10],
	    lat[nwait - 1], nwait);
	printf("%s: CPU per drmaa_run_job: session %.0f us", drm, cpu / n * 1e6);
	if (mcpu >= 0)
		printf(", master %.0f us", mcpu / n * 1e6);
	printf("\n");
	need(d.exit_(diag, sizeof diag), "drmaa_exit");
	return 0;
}
