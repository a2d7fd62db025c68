/* pullq.c: the hosts holding a PULL open, kept as a binary heap in the order the scheduler serves them.
 *
 * The heap holds the pulling hosts that may take work (not disabled, not
 * lost), least loaded first (load1 / rating), ties by the PULL's arrival:
 * a round robin among equally loaded idle hosts.  A scheduler pass takes
 * hosts off it as it needs them and puts back those it did not serve, so
 * a pass that places one job among 10,000 idle hosts costs a few heap
 * steps, not a walk and a sort of them all. */
#include "config.h"

#include <assert.h>
#include <stdlib.h>

#include "qmaster/qmaster.h"

static struct {
	struct exechost **a;
	int               n, cap;
	int               free;      /* the members' pull_free, summed */
	int               npulling;  /* pulling hosts, members or not */
	uint64_t          arrivals;  /* PULLs so far, for the ties */
} pq;

static bool
before(const struct exechost *x, const struct exechost *y)
{
	int c = match_host_cmp(x->load[0], x->attrs.rating, y->load[0], y->attrs.rating);
	return c ? c < 0 : x->pull_order < y->pull_order;
}

static void
place(int i, struct exechost *h)
{
	pq.a[i] = h;
	h->pullq_at = i + 1;
}

static void
sift_up(int i)
{
	struct exechost *h = pq.a[i];

	while (i > 0 && before(h, pq.a[(i - 1) / 2])) {
		place(i, pq.a[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	place(i, h);
}

static void
sift_down(int i)
{
	struct exechost *h = pq.a[i];

	for (;;) {
		int l = 2 * i + 1, m = l;
		if (l >= pq.n)
			break;
		if (l + 1 < pq.n && before(pq.a[l + 1], pq.a[l]))
			m = l + 1;
		if (!before(pq.a[m], h))
			break;
		place(i, pq.a[m]);
		i = m;
	}
	place(i, h);
}

static void
heap_remove(struct exechost *h)
{
	int i = h->pullq_at - 1;
	struct exechost *last;

	assert(i >= 0 && i < pq.n && pq.a[i] == h);
	pq.free -= h->pullq_free;
	h->pullq_at = 0;
	h->pullq_free = 0;
	last = pq.a[--pq.n];
	if (last == h)
		return;
	place(i, last);
	sift_down(i);
	sift_up(last->pullq_at - 1);
}

void
pullq_sync(struct exechost *h)
{
	bool member = h->pulling && !h->disabled && !h->lost;

	if (h->pullq_at && !member) {
		heap_remove(h);
		return;
	}
	if (!member)
		return;
	if (!h->pullq_at) {
		if (pq.n == pq.cap) {
			pq.cap = pq.cap ? pq.cap * 2 : 64;
			pq.a = xrealloc(pq.a, (size_t)pq.cap * sizeof *pq.a);
		}
		place(pq.n++, h);
	}
	pq.free += h->pull_free - h->pullq_free;
	h->pullq_free = h->pull_free;
	sift_up(h->pullq_at - 1);
	sift_down(h->pullq_at - 1);
}

void
pullq_add(struct exechost *h, int64_t seq, int free_slots)
{
	assert(!h->pulling);
	h->pull_seq = seq;
	h->pull_free = free_slots;
	h->pulling = true;
	h->pull_order = ++pq.arrivals;
	pq.npulling++;
	pullq_sync(h);
}

void
pullq_cancel(struct exechost *h)
{
	if (!h->pulling)
		return;
	h->pulling = false;
	pq.npulling--;
	pullq_sync(h);
}

struct exechost *
pullq_take(void)
{
	struct exechost *h = pq.n ? pq.a[0] : NULL;

	if (h)
		heap_remove(h);
	return h;
}

int
pullq_count(void)
{
	return pq.n;
}

int
pullq_free(void)
{
	return pq.free;
}

bool
pullq_any(void)
{
	return pq.npulling > 0;
}
