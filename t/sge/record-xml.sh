#!/bin/sh
# record-xml.sh: records Grid Engine 8.1.9's -xml and plain views into t/sge/xml/, as the xml tests compare them.
# Run as root on a host with Son of Grid Engine running (queue all.q, 8 slots)
# and a user cloudsdk; the jobs are that user's, so other users' jobs stay out.
# Usage: t/sge/record-xml.sh
set -eu
export SGE_ROOT=${SGE_ROOT:-/var/lib/gridengine} SGE_CELL=${SGE_CELL:-default}
out=$(cd "$(dirname "$0")" && pwd)/xml
mkdir -p "$out"
U=cloudsdk
as_user() { su -s /bin/sh "$U" -c "cd /tmp && SGE_ROOT=$SGE_ROOT SGE_CELL=$SGE_CELL $*"; }
# rec NAME CMD...: stdout to NAME, the exit code and stderr beside it.
rec() {
	name=$1; shift
	set +e
	as_user "$@" >"$out/$name" 2>"$out/$name.err"
	echo $? >"$out/$name.rc"
	set -e
	[ -s "$out/$name.err" ] || rm -f "$out/$name.err"
}

# The jobs: one that ends at once, one running, one held, one waiting for
# its start time, and an array of four with two tasks at a time.
done_id=$(as_user /usr/bin/qsub -terse -N xdone -b y /bin/true)
run_id=$(as_user /usr/bin/qsub -terse -N xrun -b y /bin/sleep 600)
hold_id=$(as_user /usr/bin/qsub -terse -N xhold -h -b y /bin/sleep 600)
pend_id=$(as_user /usr/bin/qsub -terse -N xpend -a 203001010000 -b y /bin/sleep 1)
arr_id=$(as_user /usr/bin/qsub -terse -N xarr -t 1-4 -tc 2 -b y /bin/sleep 600 | cut -d. -f1)
# A held job with most of what qstat -j and -r show: paths, requests, a
# queue, a predecessor, a shell, a variable, a priority and mail.
rich_id=$(as_user /usr/bin/qsub -terse -N xrich -h -cwd -o /tmp/xrich.o -e /tmp/xrich.e \
    -l h_vmem=1G,h_rt=1:00:00 -q all.q -hold_jid "$hold_id" -S /bin/sh -v FOO=bar -p -5 \
    -m e -M cloudsdk@localhost -b y /bin/sleep 1)
echo "jobs: done $done_id run $run_id hold $hold_id pend $pend_id array $arr_id rich $rich_id" >"$out/JOBS"
# Wait until the first has ended and the others run.
i=0
while [ $i -lt 60 ]; do
	if /usr/bin/qstat -s z -u $U | grep -q "^ *$done_id " &&
	    [ "$(/usr/bin/qstat -s r -u $U | grep -c " r ")" -ge 3 ]; then break; fi
	sleep 1; i=$((i + 1))
done

rec qstat.xml /usr/bin/qstat -xml
rec qstat-f.xml /usr/bin/qstat -f -xml
rec qstat-u.xml /usr/bin/qstat -u $U -xml
rec qstat-sp.xml /usr/bin/qstat -s p -xml
rec qstat-sr.xml /usr/bin/qstat -s r -xml
rec qstat-sh.xml /usr/bin/qstat -s h -xml
rec qstat-sz.xml /usr/bin/qstat -s z -xml
rec qstat-r.xml /usr/bin/qstat -r -xml
rec qstat-ext.xml /usr/bin/qstat -ext -xml
rec qstat-gc.xml /usr/bin/qstat -g c -xml
rec qstat-j-run.xml /usr/bin/qstat -j "$run_id" -xml
rec qstat-j-hold.xml /usr/bin/qstat -j "$hold_id" -xml
rec qstat-j-pend.xml /usr/bin/qstat -j "$pend_id" -xml
rec qstat-j-arr.xml /usr/bin/qstat -j "$arr_id" -xml
rec qstat-j-rich.xml /usr/bin/qstat -j "$rich_id" -xml
rec qstat-j-none.xml /usr/bin/qstat -j 999999 -xml
rec qhost.xml /usr/bin/qhost -xml
rec qhost-q.xml /usr/bin/qhost -q -xml
rec qhost-j.xml /usr/bin/qhost -j -xml
rec qhost-F.xml /usr/bin/qhost -F -xml

rec qstat.txt /usr/bin/qstat
rec qstat-q.txt /usr/bin/qstat -q all.q
rec qstat-q-none.txt /usr/bin/qstat -q nosuch.q
rec qstat-r.txt /usr/bin/qstat -r
rec qstat-ext.txt /usr/bin/qstat -ext
rec qstat-pri.txt /usr/bin/qstat -pri
rec qstat-gc.txt /usr/bin/qstat -g c
rec qselect.txt /usr/bin/qselect
rec qselect-q.txt /usr/bin/qselect -q all.q
rec qselect-U.txt /usr/bin/qselect -U $U
rec qselect-none.txt /usr/bin/qselect -q nosuch.q
rec qconf-sm.txt /usr/bin/qconf -sm
rec qconf-so.txt /usr/bin/qconf -so
rec qconf-sel.txt /usr/bin/qconf -sel
rec qconf-sh.txt /usr/bin/qconf -sh
rec qconf-ss.txt /usr/bin/qconf -ss
rec qconf-sconf.txt /usr/bin/qconf -sconf
rec qconf-shgrpl.txt /usr/bin/qconf -shgrpl
rec qconf-shgrp.txt /usr/bin/qconf -shgrp @allhosts
rec qconf-sul.txt /usr/bin/qconf -sul
rec qconf-su.txt /usr/bin/qconf -su arusers
rec qconf-su-none.txt /usr/bin/qconf -su nosuch
# With no project defined this printed "no project list defined" on stderr
# and exited 1 (qconf-sprjl-none.txt*, recorded before a project was added).
rec qconf-sprjl.txt /usr/bin/qconf -sprjl
rec qconf-sprj.txt /usr/bin/qconf -sprj nosuch

/usr/bin/qdel "$run_id" "$hold_id" "$pend_id" "$arr_id" "$rich_id" >/dev/null
echo "recorded into $out"
