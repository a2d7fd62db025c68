/* complex.c: Grid Engine's default complex list, and what nowq does with each attribute a job may request.
 *
 * One table: `qsub -l` reads names and shortcuts from it, `qconf -sc` prints
 * it in Grid Engine's layout with nowq's use of each attribute beside it. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "common.h"

#define E CX_ENFORCED
#define M CX_MATCHED
#define R CX_RECORDED
#define N CX_NOT_REQUESTABLE

/* As `qconf -sc` prints it on Grid Engine 8.1.9 (t/sge/opts/complex). */
const struct cx_attr complex_attrs[] = {
	{ "arch", "a", CX_STRING, "==", true, false, "NONE", 0, M, "the host's arch", REQ_NOLIM },
	{ "calendar", "c", CX_STRING, "==", true, false, "NONE", 0, R, NULL, REQ_NOLIM },
	{ "cpu", "cpu", CX_DOUBLE, ">=", true, false, "0", 0, R, NULL, REQ_NOLIM },
	{ "display_win_gui", "dwg", CX_BOOL, "==", true, false, "0", 0, R, NULL, REQ_NOLIM },
	{ "h_core", "h_core", CX_MEMORY, "<=", true, false, "0", 0, E, "RLIMIT_CORE hard", REQ_H_CORE },
	{ "h_cpu", "h_cpu", CX_TIME, "<=", true, false, "0:0:0", 0, E, "RLIMIT_CPU hard", REQ_NOLIM },
	{ "h_data", "h_data", CX_MEMORY, "<=", true, false, "0", 0, E, "RLIMIT_DATA hard", REQ_H_DATA },
	{ "h_fsize", "h_fsize", CX_MEMORY, "<=", true, false, "0", 0, E, "RLIMIT_FSIZE hard", REQ_H_FSIZE },
	{ "h_rss", "h_rss", CX_MEMORY, "<=", true, false, "0", 0, E, "as h_vmem", REQ_NOLIM },
	{ "h_rt", "h_rt", CX_TIME, "<=", true, false, "0:0:0", 0, E, "SIGKILL at the time", REQ_NOLIM },
	{ "h_stack", "h_stack", CX_MEMORY, "<=", true, false, "0", 0, E, "RLIMIT_STACK hard", REQ_H_STACK },
	{ "h_vmem", "h_vmem", CX_MEMORY, "<=", true, false, "0", 0, E, "cgroup memory.max or RLIMIT_AS", REQ_NOLIM },
	{ "hostname", "h", CX_HOST, "==", true, false, "NONE", 0, M, "host names or a node-set", REQ_NOLIM },
	{ "load_avg", "la", CX_DOUBLE, ">=", false, false, "0", 0, N, NULL, REQ_NOLIM },
	{ "load_long", "ll", CX_DOUBLE, ">=", false, false, "0", 0, N, NULL, REQ_NOLIM },
	{ "load_medium", "lm", CX_DOUBLE, ">=", false, false, "0", 0, N, NULL, REQ_NOLIM },
	{ "load_short", "ls", CX_DOUBLE, ">=", false, false, "0", 0, N, NULL, REQ_NOLIM },
	{ "m_core", "core", CX_INT, "<=", true, false, "0", 0, R, NULL, REQ_NOLIM },
	{ "m_socket", "socket", CX_INT, "<=", true, false, "0", 0, R, NULL, REQ_NOLIM },
	{ "m_thread", "thread", CX_INT, "<=", true, false, "0", 0, R, NULL, REQ_NOLIM },
	{ "m_topology", "topo", CX_STRING, "==", true, false, "NONE", 0, R, NULL, REQ_NOLIM },
	{ "m_topology_inuse", "utopo", CX_STRING, "==", true, false, "NONE", 0, R, NULL, REQ_NOLIM },
	{ "mem_free", "mf", CX_MEMORY, "<=", true, false, "0", 0, M, "the host's memory", REQ_NOLIM },
	{ "mem_total", "mt", CX_MEMORY, "<=", true, false, "0", 0, M, "the host's memory", REQ_NOLIM },
	{ "mem_used", "mu", CX_MEMORY, ">=", true, false, "0", 0, R, NULL, REQ_NOLIM },
	{ "min_cpu_interval", "mci", CX_TIME, "<=", false, false, "0:0:0", 0, N, NULL, REQ_NOLIM },
	{ "np_load_avg", "nla", CX_DOUBLE, ">=", false, false, "0", 0, N, NULL, REQ_NOLIM },
	{ "np_load_long", "nll", CX_DOUBLE, ">=", false, false, "0", 0, N, NULL, REQ_NOLIM },
	{ "np_load_medium", "nlm", CX_DOUBLE, ">=", false, false, "0", 0, N, NULL, REQ_NOLIM },
	{ "np_load_short", "nls", CX_DOUBLE, ">=", false, false, "0", 0, N, NULL, REQ_NOLIM },
	{ "num_proc", "p", CX_INT, "==", true, false, "0", 0, R, NULL, REQ_NOLIM },
	{ "qname", "q", CX_STRING, "==", true, false, "NONE", 0, M, "the job's queue", REQ_NOLIM },
	{ "rerun", "re", CX_BOOL, "==", false, false, "0", 0, N, NULL, REQ_NOLIM },
	{ "s_core", "s_core", CX_MEMORY, "<=", true, false, "0", 0, E, "RLIMIT_CORE soft", REQ_S_CORE },
	{ "s_cpu", "s_cpu", CX_TIME, "<=", true, false, "0:0:0", 0, E, "RLIMIT_CPU soft", REQ_S_CPU },
	{ "s_data", "s_data", CX_MEMORY, "<=", true, false, "0", 0, E, "RLIMIT_DATA soft", REQ_S_DATA },
	{ "s_fsize", "s_fsize", CX_MEMORY, "<=", true, false, "0", 0, E, "RLIMIT_FSIZE soft", REQ_S_FSIZE },
	{ "s_rss", "s_rss", CX_MEMORY, "<=", true, false, "0", 0, R, NULL, REQ_NOLIM },
	{ "s_rt", "s_rt", CX_TIME, "<=", true, false, "0:0:0", 0, E, "SIGUSR1 at the time", REQ_NOLIM },
	{ "s_stack", "s_stack", CX_MEMORY, "<=", true, false, "0", 0, E, "RLIMIT_STACK soft", REQ_S_STACK },
	{ "s_vmem", "s_vmem", CX_MEMORY, "<=", true, false, "0", 0, E, "RLIMIT_AS soft", REQ_S_VMEM },
	{ "seq_no", "seq", CX_INT, "==", false, false, "0", 0, N, NULL, REQ_NOLIM },
	{ "slots", "s", CX_INT, "<=", true, true, "1", 1000, M, "slots on one host", REQ_NOLIM },
	{ "swap_free", "sf", CX_MEMORY, "<=", true, false, "0", 0, R, NULL, REQ_NOLIM },
	{ "swap_rate", "sr", CX_MEMORY, ">=", true, false, "0", 0, R, NULL, REQ_NOLIM },
	{ "swap_rsvd", "srsv", CX_MEMORY, ">=", true, false, "0", 0, R, NULL, REQ_NOLIM },
	{ "swap_total", "st", CX_MEMORY, "<=", true, false, "0", 0, R, NULL, REQ_NOLIM },
	{ "swap_used", "su", CX_MEMORY, ">=", true, false, "0", 0, R, NULL, REQ_NOLIM },
	{ "tmpdir", "tmp", CX_STRING, "==", false, false, "NONE", 0, N, NULL, REQ_NOLIM },
	{ "virtual_free", "vf", CX_MEMORY, "<=", true, false, "0", 0, M, "the host's memory", REQ_NOLIM },
	{ "virtual_total", "vt", CX_MEMORY, "<=", true, false, "0", 0, M, "the host's memory", REQ_NOLIM },
	{ "virtual_used", "vu", CX_MEMORY, ">=", true, false, "0", 0, R, NULL, REQ_NOLIM },
};
const size_t complex_nattrs = sizeof complex_attrs / sizeof complex_attrs[0];

#undef E
#undef M
#undef R
#undef N

const struct cx_attr *
complex_find(const char *name)
{
	for (size_t i = 0; i < complex_nattrs; i++)
		if (strcmp(complex_attrs[i].name, name) == 0 ||
		    strcmp(complex_attrs[i].shortcut, name) == 0)
			return &complex_attrs[i];
	return NULL;
}

const struct cx_attr *
complex_of_lim(int lim)
{
	for (size_t i = 0; i < complex_nattrs; i++)
		if (complex_attrs[i].lim == lim)
			return &complex_attrs[i];
	return NULL;
}

static const char *
complex_type_name(enum cx_type t)
{
	static const char *const names[] = { "STRING", "HOST", "INT", "DOUBLE", "BOOL", "MEMORY", "TIME" };
	return names[t];
}

const char *
complex_use_name(enum cx_use u)
{
	static const char *const names[] = { "-", "enforced", "matched", "recorded" };
	return names[u];
}

/* Grid Engine's columns, then nowq's: what it does with a request of it. */
void
complex_print(FILE *fp)
{
	fprintf(fp, "%-19s %-10s %-9s %-5s %-11s %-10s %-8s %-7s %s\n", "#name", "shortcut", "type",
	    "relop", "requestable", "consumable", "default", "urgency", "nowq");
	fprintf(fp, "#%s\n", "--------------------------------------------------------------------------------------");
	for (size_t i = 0; i < complex_nattrs; i++) {
		const struct cx_attr *a = &complex_attrs[i];
		fprintf(fp, "%-19s %-10s %-9s %-5s %-11s %-10s %-8s %-7d %s%s%s%s\n", a->name, a->shortcut,
		    complex_type_name(a->type), a->relop, a->requestable ? "YES" : "NO",
		    a->consumable ? "YES" : "NO", a->deflt, a->urgency, complex_use_name(a->use),
		    a->how ? " (" : "", a->how ? a->how : "", a->how ? ")" : "");
	}
	fprintf(fp, "# >#< starts a comment but comments are not saved across edits --------\n");
}
