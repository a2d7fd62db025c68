/* rusage.c: a finished job's resource usage from wait4 (and its peak memory), and its JSON in CHILD_TERM and ACCT. */
#include "config.h"

#include <math.h>
#include <string.h>
#include <sys/resource.h>

#include "common/common.h"

/* The integer fields, in getrusage(2)'s (and Grid Engine's accounting) order;
 * the names are the JSON keys and the accounting table's columns. */
#define RU_INT_FIELD(X) \
	X(maxrss) X(ixrss) X(ismrss) X(idrss) X(isrss) X(minflt) X(majflt) \
	X(nswap) X(inblock) X(oublock) X(msgsnd) X(msgrcv) X(nsignals) \
	X(nvcsw) X(nivcsw)

const char *const rusage_int_names[RUSAGE_NINT] = {
#define X_NAME(f) "ru_" #f,
	RU_INT_FIELD(X_NAME)
#undef X_NAME
};

static int64_t *
ru_int_slot(struct job_rusage *ru, int i)
{
	int64_t *slots[RUSAGE_NINT] = {
#define X_PTR(f) &ru->f,
		RU_INT_FIELD(X_PTR)
#undef X_PTR
	};
	return slots[i];
}

int64_t
rusage_int(const struct job_rusage *ru, int i)
{
	return *ru_int_slot((struct job_rusage *)ru, i);
}

void
rusage_set_int(struct job_rusage *ru, int i, int64_t v)
{
	*ru_int_slot(ru, i) = v;
}

void
rusage_from_sys(struct job_rusage *dst, const struct rusage *ru)
{
	memset(dst, 0, sizeof *dst);
	dst->utime = (double)ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6;
	dst->stime = (double)ru->ru_stime.tv_sec + ru->ru_stime.tv_usec / 1e6;
	/* Linux's struct rusage has no ru_ismrss (Grid Engine's field from
	 * other systems); it stays 0, as Grid Engine's qacct shows it there. */
#define X_COPY(f) dst->f = ru->ru_##f < 0 ? 0 : (int64_t)ru->ru_##f;
	X_COPY(maxrss) X_COPY(ixrss) X_COPY(idrss) X_COPY(isrss) X_COPY(minflt)
	X_COPY(majflt) X_COPY(nswap) X_COPY(inblock) X_COPY(oublock) X_COPY(msgsnd)
	X_COPY(msgrcv) X_COPY(nsignals) X_COPY(nvcsw) X_COPY(nivcsw)
#undef X_COPY
}

json_t *
rusage_to_json(const struct job_rusage *ru)
{
	json_t *o = json_object();

	json_object_set_new(o, "ru_utime", json_real(ru->utime));
	json_object_set_new(o, "ru_stime", json_real(ru->stime));
	for (int i = 0; i < RUSAGE_NINT; i++)
		json_object_set_new(o, rusage_int_names[i], json_integer(rusage_int(ru, i)));
	json_object_set_new(o, "maxvmem", json_integer(ru->maxvmem));
	return o;
}

/* A CPU time above a century is a broken clock or a forged message. */
#define RU_MAX_SECS	(100.0 * 365 * 86400)

int
rusage_from_json(struct job_rusage *dst, const json_t *o, const char **why)
{
	struct job_rusage ru;
	const char *k;
	json_t *v;

	memset(&ru, 0, sizeof ru);
	if (!json_is_object(o)) {
		*why = "rusage is not an object";
		return -1;
	}
	json_object_foreach((json_t *)o, k, v) {
		int i;

		if (strcmp(k, "ru_utime") == 0 || strcmp(k, "ru_stime") == 0) {
			double d = json_is_number(v) ? json_number_value(v) : -1;
			if (!isfinite(d) || d < 0 || d > RU_MAX_SECS) {
				*why = "rusage: a CPU time is not a number of seconds";
				return -1;
			}
			*(k[3] == 'u' ? &ru.utime : &ru.stime) = d;
			continue;
		}
		if (strcmp(k, "maxvmem") == 0) {
			if (!json_is_integer(v) || json_integer_value(v) < 0) {
				*why = "rusage: maxvmem is not a non-negative integer";
				return -1;
			}
			ru.maxvmem = json_integer_value(v);
			continue;
		}
		for (i = 0; i < RUSAGE_NINT; i++)
			if (strcmp(k, rusage_int_names[i]) == 0)
				break;
		/* A newer execd may report more; what we do not know we skip. */
		if (i == RUSAGE_NINT)
			continue;
		if (!json_is_integer(v) || json_integer_value(v) < 0) {
			*why = "rusage: a counter is not a non-negative integer";
			return -1;
		}
		*ru_int_slot(&ru, i) = json_integer_value(v);
	}
	*dst = ru;
	return 0;
}
