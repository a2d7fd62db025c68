#!/bin/bash
# record-gaps.sh: records what Grid Engine 8.1.9 does for the last gaps of the drop-in into t/sge/gaps/: unknown -l names, qstat -j -xml and -r of a job with predecessors, queues and mail, qsub -b y's arguments, s_rt then h_rt, libdrmaa's rusage names and qacct's groupings.
#
# Run once as root where Grid Engine runs (queue all.q) and a user cloudsdk
# exists; it changes nothing of Grid Engine's configuration.  Each case CASE
# leaves CASE.out (stdout), CASE.err (stderr) and CASE.rc (exit status);
# job ids are written as names (ID, PA, PB) so the tests can compare.
set -u
export SGE_ROOT=${SGE_ROOT:-/var/lib/gridengine} SGE_CELL=${SGE_CELL:-default}
B=/usr/bin
U=cloudsdk
out=$(cd "$(dirname "$0")" && pwd)/gaps
mkdir -p "$out"
work=$(mktemp -d /tmp/record-gaps.XXXXXX)
chmod 777 "$work"
cd "$work" || exit 1

as_user() { su -s /bin/bash "$U" -c "cd $work && SGE_ROOT=$SGE_ROOT SGE_CELL=$SGE_CELL $*"; }
# rec CASE CMD...: runs CMD as the user, keeping its stdout, stderr and exit status.
rec() {
	local c=$1
	shift
	as_user "$@" > "$out/$c.out" 2> "$out/$c.err"
	echo $? > "$out/$c.rc"
}
wait_acct() {
	until $B/qacct -j "$1" >/dev/null 2>&1; do sleep 1; done
}

# 1. A -l name that is neither in the complex list nor anything else.
rec qsub-unknown $B/qsub -l foo=1 -b y /bin/true
rec qsub-unknown-bare $B/qsub -l foo -b y /bin/true
rec qsub-unknown-soft $B/qsub -soft -l foo=1 -b y /bin/true
rec qsub-unknown-wn $B/qsub -w n -l h_rt=10,foo=1 -b y /bin/true
rec qrsh-unknown $B/qrsh -l foo=1 /bin/true
held=$(as_user $B/qsub -terse -h -b y /bin/true)
rec qalter-unknown $B/qalter -l foo=1 "$held"
$B/qdel "$held" >/dev/null

# 2, 3. A held job waiting for two others, with two mail addresses and a
# queue: qstat -j -xml, qstat -j and qstat -r.
pa=$(as_user $B/qsub -terse -h -N pa -b y /bin/true)
pb=$(as_user $B/qsub -terse -h -N pb -b y /bin/true)
id=$(as_user $B/qsub -terse -h -N gj -hold_jid "$pa,$pb" -q all.q -M "$U@localhost,other@localhost" \
    -m be -b y /bin/true)
rec qstat-j-xml $B/qstat -j "$id" -xml
rec qstat-j $B/qstat -j "$id"
rec qstat-r $B/qstat -r -u "$U"
for f in qstat-j-xml.out qstat-j.out qstat-r.out; do
	sed -i -E "s/\b$id\b/ID/g; s/\b$pa\b/PA/g; s/\b$pb\b/PB/g" "$out/$f"
done
$B/qdel "$id" "$pa" "$pb" >/dev/null
# The kept options in -xml: an account, a project (p1 exists), -M without a
# host and a binding.
id=$(as_user $B/qsub -terse -h -N kept -A acct1 -P p1 -M bob -binding linear:1 -b y /bin/true)
rec qstat-j-kept-xml $B/qstat -j "$id" -xml
sed -i -E "s/\b$id\b/ID/g" "$out/qstat-j-kept-xml.out"
$B/qdel "$id" >/dev/null

# 5. qsub -b y: how the words reach the job (with and without -shell n).
as_user $B/qsub -terse -b y -o "$work/args.o" -j y echo "'a  b'" c "'\$HOME'" "'x;echo y'" > id.args
as_user $B/qsub -terse -b y -shell n -o "$work/argsn.o" -j y echo "'a  b'" c "'\$HOME'" "'x;echo y'" > id.argsn
wait_acct "$(cat id.args)"
wait_acct "$(cat id.argsn)"
sed "s#/home/$U#HOME#g" args.o > "$out/qsub-b-args.out"
sed "s#/home/$U#HOME#g" argsn.o > "$out/qsub-b-args-shell-n.out"

# 4. s_rt then h_rt: when the job gets SIGUSR1 and SIGKILL, seconds from
# its start (Grid Engine's execd checks once a second or so).
cat > srthrt.sh <<'SH'
#!/bin/sh
t0=$(date +%s)
trap 'echo "USR1 at $(( $(date +%s) - t0 ))"' USR1
echo start
i=0; while [ $i -lt 400 ]; do sleep 1; i=$((i+1)); done
echo end
SH
chmod 755 srthrt.sh
srt=$(as_user $B/qsub -terse -o "$work/srthrt.o" -j y -l s_rt=0:0:5,h_rt=0:0:10 "$work/srthrt.sh")
wait_acct "$srt"
cp srthrt.o "$out/srt-hrt.job"
$B/qacct -j "$srt" | grep -E '^(failed|exit_status|ru_wallclock) ' > "$out/srt-hrt.acct"

# 6. The rusage names Grid Engine's libdrmaa gives for an ended job.
cat > ru.c <<'C'
#include <stdio.h>
#include <drmaa.h>
int main(void) {
	char e[DRMAA_ERROR_STRING_BUFFER], id[DRMAA_JOBNAME_BUFFER], out[DRMAA_JOBNAME_BUFFER], v[256];
	const char *args[] = { "0", NULL };
	drmaa_job_template_t *jt; drmaa_attr_values_t *ru; int st;
	if (drmaa_init(NULL, e, sizeof e)) { fprintf(stderr, "%s\n", e); return 1; }
	drmaa_allocate_job_template(&jt, e, sizeof e);
	drmaa_set_attribute(jt, DRMAA_REMOTE_COMMAND, "/bin/sleep", e, sizeof e);
	drmaa_set_vector_attribute(jt, DRMAA_V_ARGV, args, e, sizeof e);
	drmaa_set_attribute(jt, DRMAA_OUTPUT_PATH, ":/dev/null", e, sizeof e);
	drmaa_set_attribute(jt, DRMAA_JOIN_FILES, "y", e, sizeof e);
	if (drmaa_run_job(id, sizeof id, jt, e, sizeof e)) { fprintf(stderr, "%s\n", e); return 1; }
	if (drmaa_wait(id, out, sizeof out, &st, DRMAA_TIMEOUT_WAIT_FOREVER, &ru, e, sizeof e)) {
		fprintf(stderr, "%s\n", e); return 1; }
	while (drmaa_get_next_attr_value(ru, v, sizeof v) == DRMAA_ERRNO_SUCCESS)
		printf("%s\n", v);
	drmaa_release_attr_values(ru);
	drmaa_exit(e, sizeof e);
	return 0;
}
C
cc -o ru -I/usr/lib/gridengine-drmaa/include ru.c -L/usr/lib/gridengine-drmaa/lib -ldrmaa \
    -Wl,-rpath,/usr/lib/gridengine-drmaa/lib && chmod 755 ru
as_user ./ru > ru.out 2> "$out/drmaa-rusage.err"
sed 's/=.*//' ru.out > "$out/drmaa-rusage.names"
sed -E 's/^(ru_wallclock|start_time|end_time|submission_time)=.*/\1=T/' ru.out > "$out/drmaa-rusage.out"

# 7. qacct's groupings nowq lacked; the values are this cluster's, the
# layout (titles, widths) is what the tests compare.
for o in -g -pe -slots -D -ar; do
	n=qacct${o}
	$B/qacct $o > "$out/$n.out" 2> "$out/$n.err"
	echo $? > "$out/$n.rc"
done
$B/qacct -g "$U" > "$out/qacct-g-user.out" 2>&1
$B/qacct -slots 1 > "$out/qacct-slots-1.out" 2>&1
$B/qacct -pe NONE > "$out/qacct-pe-none.out" 2>&1
$B/qacct -o "$U" -g > "$out/qacct-o-g.out" 2>&1
$B/qacct -f /nonexistent > "$out/qacct-f-none.out" 2>&1
echo $? > "$out/qacct-f-none.rc"
find "$out" -name '*.err' -size 0 -delete
cd / && rm -rf "$work"
echo "recorded into $out"
