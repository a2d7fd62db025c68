/* idle.c: decides whether this host is idle, the condition for pulling work. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "execd/execd.h"

static bool
idle_read_loadavg(double load[3])
{
	FILE *fp = fopen("/proc/loadavg", "re");
	int n;

	load[0] = load[1] = load[2] = 0;
	if (!fp)
		return false;
	n = fscanf(fp, "%lf %lf %lf", &load[0], &load[1], &load[2]);
	fclose(fp);
	return n == 3;
}

/*
 * The one verdict every policy feeds.  Today: Grid Engine's np_load_avg (the
 * 1-minute load average per CPU) below load_threshold.  Later policies
 * (console and keyboard activity, logged-in users, time windows, a site
 * command) each add one check here, and the first that says "busy" gives
 * the reason.
 */
bool
idle_check(double load[3], char *why, size_t whylen)
{
	static bool warned;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	double np;

	if (!idle_read_loadavg(load)) {
		/* Without a load figure there is nothing to hold work back for. */
		if (!warned)
			log_warn("cannot read /proc/loadavg; treating the host as idle");
		warned = true;
		snprintf(why, whylen, "load unknown");
		return true;
	}
	np = load[0] / (ncpu > 0 ? (double)ncpu : 1.0);
	if (conf->load_threshold > 0 && np >= conf->load_threshold) {
		snprintf(why, whylen, "np_load_avg %.2f is at or above load_threshold %.2f",
		    np, conf->load_threshold);
		return false;
	}
	if (conf->load_threshold > 0)
		snprintf(why, whylen, "np_load_avg %.2f is below load_threshold %.2f",
		    np, conf->load_threshold);
	else
		snprintf(why, whylen, "no load threshold");
	return true;
}
