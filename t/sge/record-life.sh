#!/bin/bash
# record-life.sh: records how Grid Engine 8.1.9 reports a job's life (qstat -j
# of ended jobs, qsub -sync y of arrays, qrsh's shell, h_rt and s_rt) into
# t/sge/life/.
#
# Run once as root where Grid Engine runs (queue all.q); it changes nothing
# of Grid Engine's configuration.  Each case CASE leaves CASE.out (stdout),
# CASE.err (stderr) and CASE.rc (exit status); t/e2e/gelife.bats compares
# nowq's with them after replacing job ids by ID.
set -u
export SGE_ROOT=${SGE_ROOT:-/var/lib/gridengine} SGE_CELL=${SGE_CELL:-default}
B=/usr/bin
out=$(cd "$(dirname "$0")" && pwd)/life
mkdir -p "$out"
work=$(mktemp -d /tmp/record-life.XXXXXX)
chmod 755 "$work"
cd "$work" || exit 1

# rec CASE CMD...: runs CMD, keeping its stdout, stderr and exit status.
rec() {
	local c=$1
	shift
	"$@" > "$out/$c.out" 2> "$out/$c.err"
	echo $? > "$out/$c.rc"
}
# wait_acct ID: until the job's accounting record is written.
wait_acct() {
	until $B/qacct -j "$1" >/dev/null 2>&1; do sleep 1; done
}
# acct CASE ID: the lines of qacct -j that say how the job ended.
acct() {
	$B/qacct -j "$2" | grep -E '^(failed|exit_status) ' > "$out/$1.acct"
}

# qstat -j knows only jobs that have not ended.
rec qstat-j-unknown $B/qstat -j 999999
rec qstat-j-unknown-list $B/qstat -j 999998,999999
id=$($B/qsub -terse -o /dev/null -e /dev/null -b y /bin/true)
wait_acct "$id"
rec qstat-j-ended $B/qstat -j "$id"
sed -i "s/\b$id\b/ID/g" "$out/qstat-j-ended.err"
held=$($B/qsub -terse -h -o /dev/null -e /dev/null -b y /bin/true)
$B/qstat -j "$held,999999" > /dev/null 2> "$out/qstat-j-some.err"
echo $? > "$out/qstat-j-some.rc"
$B/qdel "$held" > /dev/null

# qsub -sync y of an array: one line per task as it ends; exit status the
# first failed task's.
rec sync-array-ok $B/qsub -sync y -t 1-2 -o /dev/null -e /dev/null -b y /bin/true
printf '#!/bin/sh\n[ "$SGE_TASK_ID" = 2 ] && exit 3\nexit 0\n' > task2.sh
rec sync-array-fail $B/qsub -sync y -t 1-3 -o /dev/null -e /dev/null task2.sh
# Tasks 1 and 2 fail, task 2 first: qsub exits with task 2's status.
printf '#!/bin/sh\ncase $SGE_TASK_ID in 1) sleep 4; exit 5;; 2) exit 3;; esac\nexit 0\n' > first.sh
rec sync-array-first $B/qsub -sync y -t 1-3 -o /dev/null -e /dev/null first.sh
for c in sync-array-ok sync-array-fail sync-array-first; do
	sed -i -E 's/(job-array |Job )[0-9]+/\1ID/' "$out/$c.out" "$out/$c.err"
done

# qrsh runs its command line through the user's shell.
rec qrsh-shell $B/qrsh "echo a; echo b > $work/qrsh.x; cat $work/qrsh.x"
rec qrsh-args $B/qrsh echo '$HOME' '|' wc -c
rec qrsh-exit $B/qrsh 'exit 3'
# -noshell: the words are executed as they are.
rec qrsh-noshell $B/qrsh -noshell echo '$HOME' 'a;b'

# h_rt and s_rt.  trap.sh says which signals it got; plain.sh says nothing.
cat > trap.sh <<'SH'
#!/bin/sh
trap 'echo got USR1; exit 7' USR1
trap 'echo got TERM' TERM
echo start
i=0; while [ $i -lt 60 ]; do sleep 1; i=$((i+1)); done
echo end
SH
printf '#!/bin/sh\necho start\ni=0; while [ $i -lt 60 ]; do sleep 1; i=$((i+1)); done\necho end\n' > plain.sh
chmod 755 trap.sh plain.sh
hrt=$($B/qsub -terse -o "$out/hrt-trap.job" -j y -l h_rt=0:0:5 "$work/trap.sh")
srt=$($B/qsub -terse -o "$out/srt-trap.job" -j y -l s_rt=0:0:5 "$work/trap.sh")
srtp=$($B/qsub -terse -o "$out/srt-plain.job" -j y -l s_rt=0:0:5 "$work/plain.sh")
wait_acct "$hrt"; wait_acct "$srt"; wait_acct "$srtp"
acct hrt-trap "$hrt"
acct srt-trap "$srt"
acct srt-plain "$srtp"
cd / && rm -rf "$work"
