#!/bin/sh
# record-opts.sh: records Grid Engine 8.1.9's option lists, complex list and job views into t/sge/opts/, as geopts.bats compares them.
# Run as root on a host with Son of Grid Engine running (queue all.q@vm).
# It adds project p1 if missing and submits two jobs of its own, which it
# deletes again; nothing else is changed.
# Usage: t/sge/record-opts.sh
set -eu
export SGE_ROOT=${SGE_ROOT:-/var/lib/gridengine} SGE_CELL=${SGE_CELL:-default}
out=$(cd "$(dirname "$0")" && pwd)/opts
mkdir -p "$out/help"
cd /tmp
# rec NAME CMD...: stdout to NAME, the exit code and stderr beside it.
rec() {
	name=$1; shift
	set +e
	"$@" >"$out/$name" 2>"$out/$name.err"
	echo $? >"$out/$name.rc"
	set -e
	[ -s "$out/$name.err" ] || rm -f "$out/$name.err"
}

# Every command's -help: the options the refusal test walks.
for c in qsub qrsh qalter qstat qhost qacct qdel qhold qrls qmod qconf; do
	/usr/bin/$c -help >"$out/help/$c" 2>&1 || true
done

# The default complex list: what qsub -l accepts.
rec complex /usr/bin/qconf -sc

# A project to submit to.
/usr/bin/qconf -sprjl 2>/dev/null | grep -qx p1 || {
	printf 'name p1\noticket 0\nfshare 0\nacl NONE\nxacl NONE\n' >/tmp/record-opts.prj
	/usr/bin/qconf -Aprj /tmp/record-opts.prj
	rm -f /tmp/record-opts.prj
}

# A held job with hard and soft requests and every recorded option, then
# the same after qalter's hold letters and context changes.
id=$(/usr/bin/qsub -terse -h -N optsjob -hard -l vf=1G,h_vmem=2G,s_cpu=1:00:00,h_fsize=1M,arch=lx-amd64 \
    -soft -l mf=1G,hostname=vm -P p1 -A acct1 -R y -js 5 -ac a=1,b=2 -shell n \
    -binding linear:1 -b y /bin/true)
echo "$id" >"$out/JOB"
rec qstat-j /usr/bin/qstat -j "$id"
# Not -dc: Grid Engine 8.1.9's qmaster dies on it ("lGetElemStr(VA_variable):
# run time type error" in its messages file).
rec qalter-ctx /usr/bin/qalter -ac c=3 "$id"
rec qstat-j-ac /usr/bin/qstat -j "$id"
rec qalter-sc /usr/bin/qalter -sc x=9 "$id"
rec qstat-j-altered /usr/bin/qstat -j "$id"
# Hold letters: lower case sets a hold, upper case takes it off; the job
# stays held while any is left.
state() { /usr/bin/qstat | awk -v id="$1" '$1 == id { print $5 }'; }
for h in o s U O; do
	rec "qalter-h$h" /usr/bin/qalter -h "$h" "$id"
	state "$id" >"$out/state-h$h"
done
/usr/bin/qdel "$id" >/dev/null
# What is refused, and how.
rec qsub-nonreq /usr/bin/qsub -l load_avg=1 -b y /bin/true
rec qsub-unknownres /usr/bin/qsub -l foo=1 -b y /bin/true
rec qsub-badopt /usr/bin/qsub -foo -b y /bin/true

# A job that ends, for qacct's project and account and its -P/-A filters.
id=$(/usr/bin/qsub -terse -sync y -N optsacct -P p1 -A acct1 -b y /bin/true | head -1)
echo "$id" >>"$out/JOB"
sleep 2
rec qacct-j /usr/bin/qacct -j "$id"
rec qacct-P /usr/bin/qacct -P p1
rec qacct-A /usr/bin/qacct -A acct1
rec qacct-P-none /usr/bin/qacct -P nosuchproject
