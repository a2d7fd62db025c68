#!/usr/bin/env bats
# gelife.bats: a job's life as Grid Engine 8.1.9 reports it, compared with its recorded outputs (t/sge/life, made by t/sge/record-life.sh): qstat -j of ended and unknown jobs, qsub -sync y of arrays, qrsh's command through the shell, h_rt and s_rt.

load helpers

FIX="$top_srcdir/t/sge/life"

setup() {
	SLOTS=4 cluster_start
	work_start
	cd "$WORK"
}

teardown() {
	cluster_stop
	work_stop
}

# rec CASE CMD...: runs CMD as record-life.sh ran it on Grid Engine, into
# $WORK/CASE.out, .err and .rc.
rec() {
	local c=$1 rc=0
	shift
	"$@" > "$WORK/$c.out" 2> "$WORK/$c.err" || rc=$?
	echo "$rc" > "$WORK/$c.rc"
}
# ids FILE...: job ids replaced by the word ID, as the recording did.
ids() { sed -i -E 's/(job-array |Job )[0-9]+/\1ID/' "$@"; }
# same CASE [PART...]: nowq's CASE.PART equal to Grid Engine's (out err rc).
same() {
	local c=$1 p
	shift
	for p in ${*:-out err rc}; do
		diff -u "$FIX/$c.$p" "$WORK/$c.$p" || { echo "$c.$p differs from Grid Engine's" >&2; return 1; }
	done
}
# in_any_order CASE: nowq's CASE.out has Grid Engine's lines, in any order
# (tasks that end at once end in either).
in_any_order() {
	sort "$FIX/$1.out" | diff -u - <(sort "$WORK/$1.out")
}
# write_scripts: record-life.sh's trap.sh (says which signals it got) and
# plain.sh (catches none) in $WORK.
write_scripts() {
	cat > trap.sh <<-'EOF'
	#!/bin/sh
	trap 'echo got USR1; exit 7' USR1
	trap 'echo got TERM' TERM
	echo start
	i=0; while [ $i -lt 60 ]; do sleep 1; i=$((i+1)); done
	echo end
	EOF
	printf '#!/bin/sh\necho start\ni=0; while [ $i -lt 60 ]; do sleep 1; i=$((i+1)); done\necho end\n' > plain.sh
	chmod 755 trap.sh plain.sh
}
# acct_end: of qacct -j's output, the failed and exit_status lines, Grid
# Engine's words kept and what either adds in brackets (nowq's reason, its
# signal's name) left out.
acct_end() { grep -E '^(failed|exit_status) ' | sed -E 's/ *\(.*\)$//; s/ +$//'; }

@test "qstat -j of unknown jobs: Grid Engine's message on stderr, exit 1" {
	rec qstat-j-unknown qstat -j 999999
	same qstat-j-unknown
	rec qstat-j-unknown-list qstat -j 999998,999999
	same qstat-j-unknown-list
}

@test "qstat -j of an ended job: it no longer exists for qstat -j, only for qacct, qstat -s z and --json" {
	id=$(qsub -terse -o /dev/null -e /dev/null -b y /bin/true)
	qwait "$id" >/dev/null
	rec qstat-j-ended qstat -j "$id"
	sed -i "s/^$id\$/ID/" "$WORK/qstat-j-ended.err"
	same qstat-j-ended
	qacct -j "$id" | grep -q "^jobnumber *$id"
	qstat -s z | awk -v id="$id" '$1 == id' | grep -q .
	[ "$(job_json "$id" state)" = done ]
	# One job that exists is enough: no message, exit 0.
	held=$(qsub -terse -h -o /dev/null -e /dev/null -b y /bin/true)
	qstat -j "$held,999999" > /dev/null 2> "$WORK/qstat-j-some.err"
	echo $? > "$WORK/qstat-j-some.rc"
	same qstat-j-some "err rc"
	qdel "$held" >/dev/null
	# An ended job given by its name is as unknown.
	qsub -terse -N endedname -o /dev/null -e /dev/null -b y /bin/true > "$WORK/name.id"
	qwait "$(cat "$WORK/name.id")" >/dev/null
	run qstat -j endedname
	[ "$status" -eq 1 ]
	[ "$output" = "$(printf 'Following jobs do not exist: \nendedname')" ]
}

@test "qsub -sync y of an array: a line per task, exit 0 when every task exited 0" {
	rec sync-array-ok qsub -sync y -t 1-2 -o /dev/null -e /dev/null -b y /bin/true
	ids "$WORK"/sync-array-ok.*
	in_any_order sync-array-ok
	same sync-array-ok "err rc"
}

@test "qsub -sync y of an array with a failed task: its line on stderr, qsub exits with its status" {
	printf '#!/bin/sh\n[ "$SGE_TASK_ID" = 2 ] && exit 3\nexit 0\n' > task2.sh
	rec sync-array-fail qsub -sync y -t 1-3 -o /dev/null -e /dev/null task2.sh
	ids "$WORK"/sync-array-fail.*
	in_any_order sync-array-fail
	same sync-array-fail "err rc"
	# Two tasks fail: the status is the one that failed first's.  Task 1
	# ends only once task 2's process is gone.
	cat > first.sh <<-EOF
	#!/bin/sh
	case \$SGE_TASK_ID in
	1) while [ ! -s $WORK/t2.pid ]; do sleep 0.1; done
	   while kill -0 \$(cat $WORK/t2.pid) 2>/dev/null; do sleep 0.1; done
	   sleep 1; exit 5 ;;
	2) echo \$\$ > $WORK/t2.pid; exit 3 ;;
	esac
	exit 0
	EOF
	rec sync-array-first qsub -sync y -t 1-3 -o /dev/null -e /dev/null first.sh
	ids "$WORK"/sync-array-first.*
	same sync-array-first
	# A task killed by a signal: Grid Engine's words, without a full stop, exit 1.
	printf '#!/bin/sh\n[ "$SGE_TASK_ID" = 2 ] && kill -9 $$\nexit 0\n' > k.sh
	run qsub -sync y -t 1-2 -o /dev/null -e /dev/null k.sh
	[ "$status" -eq 1 ]
	grep -qx "Job [0-9]*\.2 exited because of signal SIGKILL" <<<"$output"
}

@test "qrsh runs its command line through the user's shell, as Grid Engine's qrsh" {
	rec qrsh-shell qrsh "echo a; echo b > $WORK/qrsh.x; cat $WORK/qrsh.x"
	same qrsh-shell
	# The words are joined by blanks, then the shell reads them.
	rec qrsh-args qrsh echo '$HOME' '|' wc -c
	same qrsh-args
	rec qrsh-exit qrsh 'exit 3'
	same qrsh-exit
	rec qrsh-noshell qrsh -noshell echo '$HOME' 'a;b'
	same qrsh-noshell
}

@test "h_rt: SIGKILL, no warning first; qacct's failed and exit_status as Grid Engine's" {
	write_scripts
	id=$(qsub -terse -o "$WORK/hrt-trap.job" -j y -l h_rt=2 "$WORK/trap.sh")
	qwait "$id" >/dev/null || true
	diff -u "$FIX/hrt-trap.job" "$WORK/hrt-trap.job"
	qacct -j "$id" | acct_end > "$WORK/hrt-trap.acct"
	acct_end < "$FIX/hrt-trap.acct" | diff -u - "$WORK/hrt-trap.acct"
}

@test "s_rt: SIGUSR1, which the job may catch and end as it likes, or die of" {
	write_scripts
	srt=$(qsub -terse -o "$WORK/srt-trap.job" -j y -l s_rt=2 "$WORK/trap.sh")
	srtp=$(qsub -terse -o "$WORK/srt-plain.job" -j y -l s_rt=2 "$WORK/plain.sh")
	qwait "$srt" "$srtp" >/dev/null || true
	for c in srt-trap srt-plain; do
		diff -u "$FIX/$c.job" "$WORK/$c.job"
	done
	qacct -j "$srt" | acct_end > "$WORK/srt-trap.acct"
	qacct -j "$srtp" | acct_end > "$WORK/srt-plain.acct"
	for c in srt-trap srt-plain; do
		acct_end < "$FIX/$c.acct" | diff -u - "$WORK/$c.acct"
	done
	# The job that caught it ended as it chose: with its own exit status,
	# and no limit for a reason.
	[ "$(job_json "$srt" state)" = failed ]
	[ "$(job_json "$srt" exit_status)" = 7 ]
	[ "$(job_reason "$srt")" = "" ]
}
