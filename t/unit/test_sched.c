/* test_sched.c: host matching and its reasons, the dispatch order, and the heap of pulling hosts. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "qmaster/qmaster.h"

/* A job and hosts for matching. */
static char *matlab_keys[] = { "matlab", NULL };
static char *fpu_keys[] = { "fpu", NULL };
static struct host_attrs big = { "x86_64", 64LL << 30, 1.0, matlab_keys, NULL };
static struct host_attrs small = { "aarch64", 4LL << 30, 2.0, fpu_keys, NULL };

static struct match_host
host(const char *name, const struct host_attrs *a)
{
	return (struct match_host){ .name = name, .attrs = a, .slots = 4, .free = 4 };
}

static void
test_match_attrs(void **state)
{
	struct job j = { .id = 1, .slots = 1, .uid = 1000, .owner = "ann" };
	struct match_host hb = host("big", &big), hs = host("small", &small);
	const char *key = NULL;
	char *keys[] = { "matlab", NULL };
	(void)state;

	assert_int_equal(match_host(&j, NULL, NULL, &hs, true, &key), MW_OK);
	j.req.mem = 8LL << 30;
	assert_int_equal(match_host(&j, NULL, NULL, &hs, false, &key), MW_MEM);
	assert_int_equal(match_host(&j, NULL, NULL, &hb, false, &key), MW_OK);
	j.req.mem = 64LL << 30;                   /* equal is enough */
	assert_int_equal(match_host(&j, NULL, NULL, &hb, false, &key), MW_OK);
	j.req.mem = 0;
	j.req.arch = "aarch64";
	assert_int_equal(match_host(&j, NULL, NULL, &hb, false, &key), MW_ARCH);
	assert_int_equal(match_host(&j, NULL, NULL, &hs, false, &key), MW_OK);
	j.req.arch = NULL;
	j.req.keys = keys;
	assert_int_equal(match_host(&j, NULL, NULL, &hs, false, &key), MW_KEY);
	assert_string_equal(key, "matlab");
	assert_int_equal(match_host(&j, NULL, NULL, &hb, false, &key), MW_OK);
	j.req.keys = NULL;
	j.slots = 5;
	assert_int_equal(match_host(&j, NULL, NULL, &hb, false, &key), MW_SLOTS);
	j.slots = 1;
	/* A personal execd runs only its own user's jobs. */
	hb.uid = 1001;
	assert_int_equal(match_host(&j, NULL, NULL, &hb, false, &key), MW_USER);
	hb.uid = 1000;
	assert_int_equal(match_host(&j, NULL, NULL, &hb, false, &key), MW_OK);
}

static void
test_match_sets_and_state(void **state)
{
	struct job j = { .id = 1, .slots = 1, .owner = "ann" };
	struct match_host hb = host("big", &big), hs = host("small", &small);
	struct qm_queue q = { .name = "gpu.q", .hosts = "big" };
	char err[64];
	struct nodeset *jn = nodeset_parse("!big", err, sizeof err);
	const char *key;
	(void)state;

	q.hosts_ns = nodeset_parse(q.hosts, err, sizeof err);
	assert_int_equal(match_host(&j, NULL, &q, &hs, false, &key), MW_QUEUE_HOSTS);
	assert_int_equal(match_host(&j, NULL, &q, &hb, false, &key), MW_OK);
	assert_int_equal(match_host(&j, jn, &q, &hb, false, &key), MW_HOSTS);
	assert_int_equal(match_host(&j, jn, NULL, &hs, false, &key), MW_OK);
	/* State counts only when asked whether it can start now. */
	hb.disabled = true;
	assert_int_equal(match_host(&j, NULL, &q, &hb, false, &key), MW_OK);
	assert_int_equal(match_host(&j, NULL, &q, &hb, true, &key), MW_DISABLED);
	hb.disabled = false;
	hb.lost = true;
	assert_int_equal(match_host(&j, NULL, &q, &hb, true, &key), MW_LOST);
	hb.lost = false;
	q.disabled = true;
	assert_int_equal(match_host(&j, NULL, &q, &hb, true, &key), MW_QUEUE_DISABLED);
	q.disabled = false;
	hb.free = 0;
	assert_int_equal(match_host(&j, NULL, &q, &hb, true, &key), MW_BUSY);
	hb.free = 3;
	hb.has_jobs = true;
	assert_int_equal(match_host(&j, NULL, &q, &hb, true, &key), MW_OK);
	j.req.exclusive = true;
	assert_int_equal(match_host(&j, NULL, &q, &hb, true, &key), MW_EXCLUSIVE);
	hb.has_jobs = false;
	assert_int_equal(match_host(&j, NULL, &q, &hb, true, &key), MW_OK);
	j.req.exclusive = false;
	hb.has_exclusive = true;
	assert_int_equal(match_host(&j, NULL, &q, &hb, true, &key), MW_EXCLUSIVE);
	nodeset_free(jn);
	nodeset_free(q.hosts_ns);
}

/* Host users, reservations open and coming, -ar and the h_rt guard. */
static void
test_match_reservations(void **state)
{
	struct job j = { .id = 1, .slots = 1, .owner = "ann" };
	struct match_host h = host("big", &big);
	char *bob[] = { "bob", NULL }, *ann[] = { "ann", NULL };
	struct match_resv r = { "maint", "bob", NULL, 10000, 20000, false };
	const struct match_resv *rv[] = { &r };
	const char *key = NULL;
	char buf[200];
	(void)state;

	h.users = bob;
	assert_int_equal(match_host(&j, NULL, NULL, &h, false, &key), MW_HOST_USERS);
	match_reason(buf, sizeof buf, MW_HOST_USERS, &j, NULL, key, "host");
	assert_string_equal(buf, "no host lets user ann run jobs there (the host's users list)");
	h.users = ann;
	assert_int_equal(match_host(&j, NULL, NULL, &h, true, &key), MW_OK);
	h.users = NULL;
	/* Waiting: a job without h_rt would run into it; one with a short
	 * limit fits before it; one that would overlap does not. */
	h.resv = rv;
	h.nresv = 1;
	h.now = 1000;
	assert_int_equal(match_host(&j, NULL, NULL, &h, false, &key), MW_OK);
	assert_int_equal(match_host(&j, NULL, NULL, &h, true, &key), MW_RESV_SOON);
	assert_string_equal(key, "maint");
	j.req.h_rt = 9;
	assert_int_equal(match_host(&j, NULL, NULL, &h, true, &key), MW_OK);
	j.req.h_rt = 10;
	assert_int_equal(match_host(&j, NULL, NULL, &h, true, &key), MW_RESV_SOON);
	/* Open: others wait, its users do not. */
	r.active = true;
	h.now = 15000;
	j.req.h_rt = 1;
	assert_int_equal(match_host(&j, NULL, NULL, &h, true, &key), MW_RESERVED);
	match_reason(buf, sizeof buf, MW_RESERVED, &j, NULL, key, "idle host");
	assert_string_equal(buf, "every matching host is reserved for others (reservation maint)");
	r.users = ann;
	assert_int_equal(match_host(&j, NULL, NULL, &h, true, &key), MW_OK);
	/* -ar: only hosts of that reservation, once it is open. */
	j.req.ar = "maint";
	assert_int_equal(match_host(&j, NULL, NULL, &h, true, &key), MW_OK);
	r.active = false;
	h.now = 1000;
	assert_int_equal(match_host(&j, NULL, NULL, &h, false, &key), MW_OK);
	assert_int_equal(match_host(&j, NULL, NULL, &h, true, &key), MW_AR_WAIT);
	h.nresv = 0;
	assert_int_equal(match_host(&j, NULL, NULL, &h, false, &key), MW_AR);
	match_reason(buf, sizeof buf, MW_AR, &j, NULL, key, "host");
	assert_string_equal(buf, "no host is in reservation maint");
	j.req.ar = NULL;
	j.req.h_rt = 0;
}

static void
test_match_reasons(void **state)
{
	struct job j = { .id = 1, .slots = 1, .owner = "ann" };
	struct qm_queue q = { .name = "all.q", .hosts = "@all" };
	char buf[160];
	(void)state;

	match_reason(buf, sizeof buf, MW_KEY, &j, &q, "matlab", "idle host");
	assert_string_equal(buf, "no idle host has key matlab");
	j.req.mem = 64LL << 30;
	match_reason(buf, sizeof buf, MW_MEM, &j, &q, NULL, "host");
	assert_string_equal(buf, "no host has 64G of memory");
	j.req.arch = "sparc";
	match_reason(buf, sizeof buf, MW_ARCH, &j, &q, NULL, "host");
	assert_string_equal(buf, "no host has arch sparc");
	match_reason(buf, sizeof buf, MW_QUEUE_DISABLED, &j, &q, NULL, "host");
	assert_string_equal(buf, "queue all.q is disabled");
	match_fmt_size(buf, sizeof buf, 1000);
	assert_string_equal(buf, "1000");
	match_fmt_size(buf, sizeof buf, 512LL << 20);
	assert_string_equal(buf, "512M");
	match_fmt_time(buf, sizeof buf, 3723);
	assert_string_equal(buf, "1:02:03");
}

static void
test_order(void **state)
{
	struct job a = { .id = 1, .prio = 0 }, b = { .id = 2, .prio = 0 }, c = { .id = 3, .prio = 10 };
	(void)state;
	/* Submission order among equals. */
	assert_true(match_job_cmp(&a, 0, &b, 0) < 0);
	assert_true(match_job_cmp(&b, 0, &a, 0) > 0);
	assert_int_equal(match_job_cmp(&a, 0, &a, 0), 0);
	/* Job priority before submission order. */
	assert_true(match_job_cmp(&c, 0, &a, 0) < 0);
	/* Queue priority before job priority. */
	assert_true(match_job_cmp(&b, 5, &c, 0) < 0);
	assert_true(match_job_cmp(&c, -1, &a, 0) > 0);
	/* Hosts: load per rating, lower first. */
	assert_true(match_host_cmp(1.0, 2.0, 0.8, 1.0) < 0);   /* 0.5 before 0.8 */
	assert_true(match_host_cmp(0.8, 1.0, 1.0, 2.0) > 0);
	assert_int_equal(match_host_cmp(1.0, 1.0, 2.0, 2.0), 0);
	assert_true(match_host_cmp(0.5, 0, 1.0, 0) < 0);       /* no rating counts as 1 */
}

/* Sorted as a pass took them before pullq.c: load per rating, then the
 * PULL's arrival. */
static int
pulled_cmp(const void *a, const void *b)
{
	const struct exechost *x = *(struct exechost *const *)a, *y = *(struct exechost *const *)b;
	int c = match_host_cmp(x->load[0], x->attrs.rating, y->load[0], y->attrs.rating);
	return c ? c : (x->pull_order > y->pull_order) - (x->pull_order < y->pull_order);
}

/* The heap of pulling hosts, after PULLs, LOADs, answered PULLs and
 * disabled hosts in random order, gives the eligible hosts in exactly the
 * sorted order, with their free slots summed, and again once put back. */
static void
test_pullq_order(void **state)
{
	enum { N = 300 };
	static struct exechost h[N];
	struct exechost *want[N], *got[N];
	int n, sum;
	(void)state;

	srand(26);
	for (int i = 0; i < N; i++)
		h[i] = (struct exechost){ .slots = 4, .attrs.rating = 1 + rand() % 2 };
	for (int step = 0; step < 5000; step++) {
		struct exechost *x = &h[rand() % N];
		switch (rand() % 4) {
		case 0:
			if (!x->pulling)
				pullq_add(x, step, 1 + rand() % 4);
			break;
		case 1:
			pullq_cancel(x);
			break;
		case 2:
			x->load[0] = rand() % 4;   /* ties are common */
			pullq_sync(x);
			break;
		default:
			x->disabled = rand() % 5 == 0;
			pullq_sync(x);
		}
	}
	for (int round = 0; round < 2; round++) {
		n = sum = 0;
		for (int i = 0; i < N; i++)
			if (h[i].pulling && !h[i].disabled) {
				want[n++] = &h[i];
				sum += h[i].pull_free;
			}
		qsort(want, (size_t)n, sizeof *want, pulled_cmp);
		assert_int_equal(pullq_count(), n);
		assert_int_equal(pullq_free(), sum);
		for (int i = 0; i < n; i++)
			got[i] = pullq_take();
		assert_null(pullq_take());
		assert_int_equal(pullq_free(), 0);
		for (int i = 0; i < n; i++)
			assert_ptr_equal(got[i], want[i]);
		for (int i = 0; i < n; i++)
			pullq_sync(got[i]);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match_attrs),
		cmocka_unit_test(test_match_sets_and_state),
		cmocka_unit_test(test_match_reservations),
		cmocka_unit_test(test_match_reasons),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_pullq_order),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("sched", tests, NULL, NULL);
}
