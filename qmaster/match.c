/* match.c: whether an exec host can run a job, why not in words, and the dispatch order.
 *
 * Pure functions over plain structs. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "qmaster/qmaster.h"

static bool
has_key(char *const *keys, const char *k)
{
	for (; keys && *keys; keys++)
		if (strcmp(*keys, k) == 0)
			return true;
	return false;
}

bool
match_resv_admits(const struct match_resv *r, const struct job *j)
{
	return j->owner && (strcmp(r->owner, j->owner) == 0 || has_key(r->users, j->owner));
}

static const struct match_resv *
resv_named(const struct match_host *h, const char *name)
{
	for (int i = 0; i < h->nresv; i++)
		if (strcmp(h->resv[i]->name, name) == 0)
			return h->resv[i];
	return NULL;
}

enum match_why
match_host(const struct job *j, const struct nodeset *job_hosts, const struct qm_queue *q,
    const struct match_host *h, bool now, const char **key)
{
	const struct host_attrs *a = h->attrs;
	const struct match_resv *ar = NULL;
	int slots = j->slots > 0 ? j->slots : 1;

	/* A personal execd runs only its own user's jobs. */
	if (h->uid != 0 && h->uid != j->uid)
		return MW_USER;
	if (slots > h->slots)
		return MW_SLOTS;
	if (j->req.arch && (!a || !a->arch || strcmp(a->arch, j->req.arch) != 0))
		return MW_ARCH;
	if (j->req.mem > 0 && (!a || a->mem < j->req.mem))
		return MW_MEM;
	for (char **k = j->req.keys; k && *k; k++)
		if (!a || !has_key(a->keys, *k)) {
			*key = *k;
			return MW_KEY;
		}
	if (q && q->hosts_ns && !nodeset_contains(q->hosts_ns, h->name, h->names, h->names_arg))
		return MW_QUEUE_HOSTS;
	if (job_hosts && !nodeset_contains(job_hosts, h->name, h->names, h->names_arg))
		return MW_HOSTS;
	if (j->req.ar && (ar = resv_named(h, j->req.ar)) == NULL) {
		*key = j->req.ar;
		return MW_AR;
	}
	if (h->users && h->users[0] && (!j->owner || !has_key(h->users, j->owner)))
		return MW_HOST_USERS;
	if (!now)
		return MW_OK;
	if (h->lost)
		return MW_LOST;
	if (h->disabled)
		return MW_DISABLED;
	if (q && q->disabled)
		return MW_QUEUE_DISABLED;
	if (q && has_key(h->qdisabled, q->name))
		return MW_DISABLED;
	if (ar && !ar->active) {
		*key = ar->name;
		return MW_AR_WAIT;
	}
	/* A reservation's own users may use its hosts; others may not while
	 * it is open, nor start anything whose wall-clock limit (none is
	 * forever) would run into its window. */
	for (int i = 0; i < h->nresv; i++) {
		const struct match_resv *r = h->resv[i];
		if (match_resv_admits(r, j))
			continue;
		if (r->active) {
			*key = r->name;
			return MW_RESERVED;
		}
		if (r->end > h->now && (!j->req.h_rt || h->now + j->req.h_rt * 1000 > r->start)) {
			*key = r->name;
			return MW_RESV_SOON;
		}
	}
	if (h->has_exclusive || (j->req.exclusive && h->has_jobs))
		return MW_EXCLUSIVE;
	if (slots > h->free)
		return MW_BUSY;
	return MW_OK;
}

int
match_soft_score(const struct job *j, const struct nodeset *soft_hosts, const struct match_host *h)
{
	const struct job_req *s = &j->soft;
	const struct host_attrs *a = h->attrs;
	int score = 0;

	if (s->arch && a && a->arch && strcmp(a->arch, s->arch) == 0)
		score++;
	if (s->mem > 0 && a && a->mem >= s->mem)
		score++;
	for (char **k = s->keys; k && *k; k++)
		if (a && has_key(a->keys, *k))
			score++;
	if (soft_hosts && nodeset_contains(soft_hosts, h->name, h->names, h->names_arg))
		score++;
	return score;
}

const char *
match_key_nowhere(char *const *keys, char **const *hosts_keys, size_t nhosts)
{
	for (char *const *k = keys; k && *k; k++) {
		bool somewhere = false;
		for (size_t i = 0; i < nhosts && !somewhere; i++)
			somewhere = has_key(hosts_keys[i], *k);
		if (!somewhere)
			return *k;
	}
	return NULL;
}

enum match_why
match_keys_apart(const struct job *j, char **const *hosts_keys, size_t nhosts, const char **key)
{
	const char *k = match_key_nowhere(j->req.keys, hosts_keys, nhosts);
	size_t n = 0;

	if (k) {
		*key = k;
		return MW_KEY;
	}
	while (j->req.keys && j->req.keys[n])
		n++;
	return n > 1 ? MW_KEYS_APART : MW_KEY;
}

void
match_fmt_size(char *buf, size_t n, int64_t b)
{
	static const char units[] = "KMGT";
	int u = -1;

	while (u < 3 && b >= 1024 && b % 1024 == 0) {
		b /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, n, "%lld", (long long)b);
	else
		snprintf(buf, n, "%lld%c", (long long)b, units[u]);
}

void
match_fmt_time(char *buf, size_t n, int64_t s)
{
	snprintf(buf, n, "%lld:%02lld:%02lld", (long long)(s / 3600), (long long)(s / 60 % 60),
	    (long long)(s % 60));
}

void
match_reason(char *buf, size_t n, enum match_why why, const struct job *j,
    const struct qm_queue *q, const char *key, const char *who)
{
	char v[32];

	switch (why) {
	case MW_OK:
		snprintf(buf, n, "a %s fits", who);
		break;
	case MW_USER:
		snprintf(buf, n, "no %s runs jobs of user %s", who, j->owner ? j->owner : "?");
		break;
	case MW_HOST_USERS:
		snprintf(buf, n, "no %s lets user %s run jobs there (the host's users list)", who,
		    j->owner ? j->owner : "?");
		break;
	case MW_AR:
		snprintf(buf, n, "no %s is in reservation %s", who, key ? key : "?");
		break;
	case MW_AR_WAIT:
		snprintf(buf, n, "reservation %s has not started yet", key ? key : "?");
		break;
	case MW_RESERVED:
		snprintf(buf, n, "every matching host is reserved for others (reservation %s)", key ? key : "?");
		break;
	case MW_RESV_SOON:
		snprintf(buf, n, "every matching host has a reservation (%s) that the job's wall-clock "
		    "limit (h_rt%s) would run into", key ? key : "?", j->req.h_rt ? "" : ": none given");
		break;
	case MW_SLOTS:
		snprintf(buf, n, "no %s has %d slots", who, j->slots);
		break;
	case MW_ARCH:
		snprintf(buf, n, "no %s has arch %s", who, j->req.arch);
		break;
	case MW_MEM:
		match_fmt_size(v, sizeof v, j->req.mem);
		snprintf(buf, n, "no %s has %s of memory", who, v);
		break;
	case MW_KEY:
		snprintf(buf, n, "no %s has key %s", who, key ? key : "?");
		break;
	case MW_KEYS_APART: {
		/* Each key is on some host, none has them together. */
		int len = snprintf(buf, n, "no %s has %s keys ", who, j->req.keys[2] ? "all the" : "both");
		for (char **k = j->req.keys; *k && len >= 0 && (size_t)len < n; k++)
			len += snprintf(buf + len, n - (size_t)len, "%s%s", *k, !k[1] ? "" : !k[2] ? " and " : ", ");
		if (len >= 0 && (size_t)len < n)
			snprintf(buf + len, n - (size_t)len, " together (each is on some host)");
		break;
	}
	case MW_QUEUE_HOSTS:
		snprintf(buf, n, "no %s in the host set of queue %s (%s)", who, q ? q->name : "?",
		    q ? q->hosts : "?");
		break;
	case MW_HOSTS:
		snprintf(buf, n, "no %s in hosts=%s", who, j->req.hosts);
		break;
	case MW_LOST:
		snprintf(buf, n, "every matching host is lost (no load report)");
		break;
	case MW_DISABLED:
		snprintf(buf, n, "every matching host is disabled");
		break;
	case MW_QUEUE_DISABLED:
		snprintf(buf, n, "queue %s is disabled", q ? q->name : "?");
		break;
	case MW_EXCLUSIVE:
		snprintf(buf, n, "no matching host is free of other jobs (exclusive)");
		break;
	case MW_BUSY:
		snprintf(buf, n, "every matching host is busy or not idle");
		break;
	}
}

int
match_job_cmp(const struct job *a, int qa, const struct job *b, int qb)
{
	if (qa != qb)
		return qa > qb ? -1 : 1;
	if (a->prio != b->prio)
		return a->prio > b->prio ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

int
match_host_cmp(double la, double ra, double lb, double rb)
{
	double a = la / (ra > 0 ? ra : 1), b = lb / (rb > 0 ? rb : 1);
	return a < b ? -1 : a > b;
}
