/* pe_rule.c: Grid Engine's allocation rules: how many of a job's slots each host gets.
 *
 * $round_robin, $fill_up, $pe_slots and N per host; pure, so unit tests drive
 * it. */
#include "config.h"

#include <assert.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qmaster/qmaster.h"

/* Grid Engine's $round_robin: a slot on each host in turn, again and
 * again, while slots are wanted and some host has one free. */
static int
pe_round_robin(int nslots, const int *free, int nhosts, int *out)
{
	int left = nslots, used = 0;
	bool more = true;

	while (left > 0 && more) {
		more = false;
		for (int i = 0; i < nhosts && left > 0; i++)
			if (out[i] < free[i]) {
				used += out[i] == 0;
				out[i]++;
				left--;
				more = true;
			}
	}
	if (left > 0) {
		memset(out, 0, (size_t)nhosts * sizeof *out);
		return 0;
	}
	return used;
}

/*
 * $round_robin goes round the hosts a slot at a time; $fill_up fills each
 * host's free slots before the next; $pe_slots (also "pack") puts all on
 * one host; N puts exactly N on each (1: N distinct hosts, what -n means).
 */
int
pe_alloc(int rule, int nslots, const int *free, int nhosts, int *out)
{
	int left = nslots, used = 0;

	assert(nslots > 0);
	memset(out, 0, (size_t)(nhosts > 0 ? nhosts : 0) * sizeof *out);
	if (rule == PE_ROUND_ROBIN)
		return pe_round_robin(nslots, free, nhosts, out);
	for (int i = 0; i < nhosts && left > 0; i++) {
		int give;

		switch (rule) {
		case PE_FILL_UP:
			give = free[i] < left ? free[i] : left;
			break;
		case PE_PE_SLOTS:
			give = free[i] >= nslots ? nslots : 0;
			break;
		default:
			assert(rule > 0);
			if (nslots % rule != 0)
				return 0;
			give = free[i] >= rule ? rule : 0;
			break;
		}
		if (give <= 0)
			continue;
		out[i] = give;
		left -= give;
		used++;
	}
	if (left > 0) {
		memset(out, 0, (size_t)nhosts * sizeof *out);
		return 0;
	}
	return used;
}

/*
 * -pe NAME MIN-MAX: as many slots of the range as these hosts can hold at
 * once under rule (Grid Engine grants the most that can start now).  The
 * most any rule can place is the free slots together ($round_robin,
 * $fill_up), the most on one host ($pe_slots), or N on each host with N
 * free (N per host); the grant is that, within the range, placed by
 * pe_alloc.  Returns the slots granted, or 0.
 */
int
pe_grant(int rule, int min, int max, const int *free, int nhosts, int *out)
{
	long cap = 0;
	int n;

	assert(min > 0 && min <= max);
	for (int i = 0; i < nhosts; i++) {
		if (rule == PE_PE_SLOTS)
			cap = free[i] > cap ? free[i] : cap;
		else if (rule > 0)
			cap += free[i] >= rule ? rule : 0;
		else
			cap += free[i];
	}
	n = cap < max ? (int)cap : max;
	if (rule > 0)
		n -= n % rule;
	if (n < min || n <= 0) {
		memset(out, 0, (size_t)(nhosts > 0 ? nhosts : 0) * sizeof *out);
		return 0;
	}
	return pe_alloc(rule, n, free, nhosts, out) > 0 ? n : 0;
}

void
pe_rule_name(char *buf, size_t n, int rule)
{
	switch (rule) {
	case PE_ROUND_ROBIN:
		snprintf(buf, n, "$round_robin");
		break;
	case PE_FILL_UP:
		snprintf(buf, n, "$fill_up");
		break;
	case PE_PE_SLOTS:
		snprintf(buf, n, "$pe_slots");
		break;
	default:
		snprintf(buf, n, "%d", rule);
	}
}
