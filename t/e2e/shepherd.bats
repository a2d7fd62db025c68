#!/usr/bin/env bats
# shepherd.bats: each job runs under a shepherd that the host's long-lived starter (the nowq-shepherd program, started by execd) forks, the starter outlives execd and is found again, and neither program starts without what it needs; a job starts with 0, 1 and 2 only, daemons keep nothing of their starter, and a job whose shepherd is killed is killed with all it left and reported so.

load helpers

setup_file() {
	cluster_start
	# A parallel environment on the one execd, for a -pe job's descriptors.
	echo 'pe "smp" { slots = 8  allocation_rule = "$pe_slots" }' >> "$CLUSTER/qmaster.conf"
	qconf -reload >/dev/null
}

teardown_file() {
	cluster_stop
}

setup() {
	work_start
}

teardown() {
	local f
	# A second cluster a test started, and the daemons jobs detached,
	# by the pids the jobs wrote down.
	[ -d "${WORK:-}/c/qmaster" ] && nowq stop --dir "$WORK/c" >/dev/null 2>&1
	for f in "${WORK:-/nonexistent}"/*.daemon; do
		[ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null
	done
	work_stop
}

reason() { job_reason "$1"; }
qacct_failed() { qacct -j "$1" | awk '$1 == "failed" { $1 = ""; sub(/^ /, ""); print }'; }
gone() { ! kill -0 "$1" 2>/dev/null; }
ini_host() { awk -F' *= *' '$1 == "name" { print $2 }' "$CLUSTER/execd-1.ini"; }
# shepherd_of ID [ATTEMPT]: the pid of the running job's shepherd.
shepherd_of() {
	local jobpid
	read -r jobpid _ < "$CLUSTER/execd-1/active/$1.0.${2:-1}/job.pid"
	ps -o ppid= -p "$jobpid" | tr -d ' '
}

@test "a job's parent is a shepherd forked by the host's starter, a child of execd, each in its own session" {
	id=$(qsub -terse -o /dev/null -e /dev/null -b y sleep 60)
	wait_until 20 state_is "$id" r
	read -r jobpid _ < "$CLUSTER/execd-1/active/$id.0.1/job.pid"
	shep=$(ps -o ppid= -p "$jobpid" | tr -d ' ')
	starter=$(cat "$CLUSTER/execd-1/starter.pid")
	# A fork of the starter, the program nowq-shepherd, not of execd.
	[ "$(basename "$(readlink "/proc/$shep/exe")")" = nowq-shepherd ]
	[ "$(ps -o comm= -p "$shep")" = nowq-shepherd ]
	[ "$(ps -o ppid= -p "$shep" | tr -d ' ')" = "$starter" ]
	[ "$(ps -o ppid= -p "$starter" | tr -d ' ')" = "$(cat "$CLUSTER/execd-1/execd.pid")" ]
	# The job, the shepherd and the starter each lead a session; the
	# shepherd holds only its folder's lock and the standard descriptors.
	[ "$(ps -o sid= -p "$jobpid" | tr -d ' ')" = "$jobpid" ]
	[ "$(ps -o sid= -p "$shep" | tr -d ' ')" = "$shep" ]
	[ "$(ps -o sid= -p "$starter" | tr -d ' ')" = "$starter" ]
	[ "$(ls "/proc/$shep/fd" | wc -l)" -eq 4 ]
	qdel "$id"
	wait_until 20 job_finished "$id"
}

@test "execd refuses to start without its shepherd program, with a clear error" {
	mkdir "$WORK/sbin"
	cp "$(readlink -f "$(command -v execd)")" "$WORK/sbin/execd"
	sed "s|^spool_dir *=.*|spool_dir = $WORK/spool|" "$CLUSTER/execd-1.ini" > "$WORK/execd.ini"
	run timeout 10 "$WORK/sbin/execd" -f -c "$WORK/execd.ini"
	echo "$output" >&3
	if [ "$status" -ne 1 ]; then
		# An installed copy was found in the configured sbin directory.
		[[ "$output" != *"cannot find the program nowq-shepherd"* ]]
		skip "a nowq-shepherd is installed where execd looks second"
	fi
	[[ "$output" == "execd: cannot find the program nowq-shepherd beside execd or in "* ]]
	[ ! -e "$WORK/spool" ]
}

@test "nowq-shepherd run by hand with bad arguments says how it is used and changes nothing" {
	shep=$(dirname "$(readlink -f "$(command -v execd)")")/nowq-shepherd
	run "$shep"
	[ "$status" -eq 2 ]
	[[ "$output" == "usage: nowq-shepherd -s SPOOL"* ]]
	run "$shep" -s "$CLUSTER/execd-1" -n x -t /tmp -L 3 -k nope -- 1.0.1
	[ "$status" -eq 2 ]
	run "$shep" -s "$CLUSTER/execd-1" -n x -t /tmp -L 3 -- ../1.0.1
	[ "$status" -eq 2 ]
	# No lock on an open folder: no job starts.
	run "$shep" -s "$CLUSTER/execd-1" -n x -t /tmp -L 9 -- 1.0.1
	[ "$status" -eq 2 ]
	run "$shep" -s "$CLUSTER/execd-1" -n x -t /tmp -L 3 -- 1.0.1 3</dev/null
	[ "$status" -eq 2 ]
	[ -z "$(ls "$CLUSTER/execd-1/outbox")" ]
}

@test "a job's start waits in the outbox as a second name of its job.pid, and what the outbox cannot read is set aside" {
	master=$(cat "$CLUSTER/qmaster/qmaster.pid")
	execd=$(cat "$CLUSTER/execd-1/execd.pid")
	# The DISPATCH waits in a stopped execd's socket: the job shows "t"
	# once the master has sent it (its loop answered qstat after that).
	# Then a stopped master ACKs nothing, so the start stays in the outbox.
	kill -STOP "$execd"
	id=$(qsub -terse -o /dev/null -e /dev/null -b y sleep 60)
	wait_until 20 state_is "$id" t
	kill -STOP "$master"
	kill -CONT "$execd"
	out="$CLUSTER/execd-1/outbox"
	act="$CLUSTER/execd-1/active/$id.0.1"
	wait_until 20 test -e "$out/$id.0.1.reg"
	# One file under two names: a job start allocates no inode of its own.
	[ "$(stat -c %i "$out/$id.0.1.reg")" = "$(stat -c %i "$act/job.pid")" ]
	[ "$(stat -c %h "$act/job.pid")" = 2 ]
	read -r pid start ms _ < "$act/job.pid"
	[ "$pid" -gt 1 ] && [ "$start" -gt 0 ] && [ "$ms" -gt 0 ]
	printf 'garbage\n' > "$out/999999.0.1.reg"
	kill -CONT "$master"
	wait_until 20 state_is "$id" r
	wait_until 20 test ! -e "$out/$id.0.1.reg"
	[ "$(stat -c %h "$act/job.pid")" = 1 ]
	# The execd's periodic flush reads the bad one and moves it aside.
	wait_until 20 test -e "$out/.bad.999999.0.1.reg"
	grep -q 'outbox event 999999.0.1.reg is unusable (not an event)' "$CLUSTER/execd-1/execd.log"
	qdel "$id"
	wait_until 20 job_finished "$id"
}

@test "a daemon keeps no descriptor it inherited from whoever started it" {
	# Captured output: a daemon (or the starter execd starts) holding the
	# pipe would keep this from returning.
	run timeout 60 nowq start --dir "$WORK/c" 7>"$WORK/held"
	[ "$status" -eq 0 ]
	qm=$(cat "$WORK/c/qmaster/qmaster.pid")
	ex=$(cat "$WORK/c/execd-1/execd.pid")
	st=$(cat "$WORK/c/execd-1/starter.pid")
	ls -l "/proc/$qm/fd" "/proc/$ex/fd" "/proc/$st/fd" >&3
	! ls -l "/proc/$qm/fd" | grep -q "$WORK/held" || false
	! ls -l "/proc/$ex/fd" | grep -q "$WORK/held" || false
	# Nor does the starter keep any of execd's: its socket, the connection
	# execd made, its signalfd and the standard descriptors.
	[ "$(ls "/proc/$st/fd" | wc -l)" -eq 6 ]
	[ "$(readlink "/proc/$st/fd/1")" = /dev/null ]
	[ "$(readlink "/proc/$st/fd/2")" = /dev/null ]
	[ "$(find "/proc/$st/fd" -mindepth 1 -lname 'socket:*' | wc -l)" -eq 2 ]
	find "/proc/$st/fd" -mindepth 1 -lname 'anon_inode:*signalfd*' | grep -q .
	nowq stop --dir "$WORK/c" >/dev/null
	# With no execd and no job left, the starter ends too.
	wait_until 20 gone "$st"
}

# The descriptors of the job's shell, as it started: sh lists its own
# (the shell opens nothing for -c), one a line.
FDS_CMD='ls /proc/$$/fd; :'

@test "a job starts with descriptors 0, 1 and 2 only: plain, array task, -pe and qrsh" {
	want=$(printf '0\n1\n2')
	plain=$(qsub -terse -o "$WORK/plain.out" -e /dev/null -b y sh -c "$FDS_CMD")
	arr=$(qsub -terse -t 1-2 -o "$WORK/arr.\$TASK_ID" -e /dev/null -b y sh -c "$FDS_CMD")
	arr=${arr%%.*}
	pe=$(qsub -terse -pe smp 2 -o "$WORK/pe.out" -e /dev/null -b y sh -c "$FDS_CMD")
	out=$(timeout 60 qrsh "$FDS_CMD")
	echo "qrsh: $out" >&3
	[ "$out" = "$want" ]
	for id in "$plain" "$arr" "$pe"; do
		wait_until 30 job_finished "$id"
	done
	for f in plain.out arr.1 arr.2 pe.out; do
		echo "$f: $(cat "$WORK/$f")" >&3
		[ "$(cat "$WORK/$f")" = "$want" ]
	done
}

@test "kill -9 of a running job's shepherd kills the job, says why, removes its TMPDIR and runs it again only with -r y" {
	cat > "$WORK/job.sh" <<-'EOF'
	#!/bin/sh
	touch "$TMPDIR/left"
	echo "$TMPDIR" > "$WORK/$JOB_ID.tmpdir"
	sleep 60
	EOF
	chmod 755 "$WORK/job.sh"
	once=$(qsub -terse -o /dev/null -e /dev/null -v WORK="$WORK" "$WORK/job.sh")
	again=$(qsub -terse -r y -o /dev/null -e /dev/null -v WORK="$WORK" "$WORK/job.sh")
	wait_until 20 test -s "$WORK/$once.tmpdir"
	wait_until 20 test -s "$WORK/$again.tmpdir"
	read -r jobpid _ < "$CLUSTER/execd-1/active/$once.0.1/job.pid"
	tmpdir=$(cat "$WORK/$once.tmpdir")
	[ -e "$tmpdir/left" ]
	kill -9 "$(shepherd_of "$once")"
	wait_until 20 job_finished "$once"
	# Killed, not left running; failed with the reason, not in Eqw.
	wait_until 10 gone "$jobpid"
	[ "$(reason "$once")" = "$(ini_host): shepherd died; the job was killed" ]
	[ "$(job_field "$once" exit_status)" = 137 ]
	[ "$(qacct_failed "$once")" = "100 : assumedly after job ($(ini_host): shepherd died; the job was killed)" ]
	[ ! -e "$tmpdir" ]
	# -r y: queued again and run as attempt 2.
	kill -9 "$(shepherd_of "$again")"
	wait_until 30 test -s "$CLUSTER/execd-1/active/$again.0.2/job.pid"
	wait_until 20 state_is "$again" r
	qdel "$again"
	wait_until 20 job_finished "$again"
	# The first ran once: one attempt in the accounting.
	[ "$(qacct -j "$once" | grep -c '^jobnumber')" = 1 ]
}

@test "a shepherd killed while execd is down: the restarted execd kills its job and reports it" {
	cat > "$WORK/job.sh" <<-'EOF'
	#!/bin/sh
	echo "$TMPDIR" > "$WORK/$JOB_ID.tmpdir"
	sleep 60
	EOF
	chmod 755 "$WORK/job.sh"
	id=$(qsub -terse -o /dev/null -e /dev/null -v WORK="$WORK" "$WORK/job.sh")
	wait_until 20 test -s "$WORK/$id.tmpdir"
	read -r jobpid _ < "$CLUSTER/execd-1/active/$id.0.1/job.pid"
	shep=$(shepherd_of "$id")
	execd=$(cat "$CLUSTER/execd-1/execd.pid")
	kill -9 "$execd"
	wait_until 10 gone "$execd"
	kill -9 "$shep"
	# Nobody's child now: only the unlocked folder says its shepherd died.
	nowq start --dir "$CLUSTER" >/dev/null
	wait_until 20 job_finished "$id"
	wait_until 10 gone "$jobpid"
	[ "$(reason "$id")" = "$(ini_host): shepherd died; the job was killed" ]
	[ ! -e "$(cat "$WORK/$id.tmpdir")" ]
}

@test "what a job detached with setsid ends with the job, with qdel and with a killed shepherd" {
	# Each job detaches a daemon, then waits (at most a minute) for the
	# test to let it end.
	cat > "$WORK/detach.sh" <<-'EOF'
	#!/bin/sh
	setsid sleep 3171 < /dev/null > /dev/null 2>&1 &
	echo $! > "$WORK/$JOB_ID.daemon"
	i=0
	while [ ! -e "$WORK/$JOB_ID.go" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	EOF
	chmod 755 "$WORK/detach.sh"
	ends=$(qsub -terse -o /dev/null -e /dev/null -v WORK="$WORK" "$WORK/detach.sh")
	deleted=$(qsub -terse -o /dev/null -e /dev/null -v WORK="$WORK" "$WORK/detach.sh")
	killed=$(qsub -terse -o /dev/null -e /dev/null -v WORK="$WORK" "$WORK/detach.sh")
	for id in "$ends" "$deleted" "$killed"; do
		wait_until 20 test -s "$WORK/$id.daemon"
		# Its own session: out of the job's group and session.
		d=$(cat "$WORK/$id.daemon")
		wait_until 10 sh -c "[ \"\$(ps -o sid= -p $d | tr -d ' ')\" = $d ]"
	done
	touch "$WORK/$ends.go"
	qdel "$deleted"
	kill -9 "$(shepherd_of "$killed")"
	for id in "$ends" "$deleted" "$killed"; do
		wait_until 20 job_finished "$id"
		wait_until 10 gone "$(cat "$WORK/$id.daemon")"
	done
	[ "$(job_field "$ends" exit_status)" = 0 ]
	[ "$(reason "$killed")" = "$(ini_host): shepherd died; the job was killed" ]
}

@test "the starter outlives a killed execd and is found again; its jobs and new ones run" {
	before=$(qsub -terse -o /dev/null -e /dev/null -b y sh -c 'sleep 4; exit 3')
	wait_until 20 state_is "$before" r
	starter=$(cat "$CLUSTER/execd-1/starter.pid")
	kill -9 "$(cat "$CLUSTER/execd-1/execd.pid")"
	sleep 0.5
	kill -0 "$starter"
	nowq start --dir "$CLUSTER" >/dev/null
	wait_until 20 grep -q "found the starter again" "$CLUSTER/execd-1/execd.log"
	after=$(qsub -terse -o /dev/null -e /dev/null -b y sh -c 'exit 4')
	wait_until 30 job_finished "$after"
	wait_until 30 job_finished "$before"
	[ "$(job_field "$before" exit_status)" = 3 ]
	[ "$(job_field "$after" exit_status)" = 4 ]
	# The same starter started the new job.
	[ "$(cat "$CLUSTER/execd-1/starter.pid")" = "$starter" ]
}

@test "kill -9 of the starter: its running jobs end and are reported, and the next job starts a new starter" {
	running=$(qsub -terse -o /dev/null -e /dev/null -b y sh -c 'sleep 3; exit 6')
	wait_until 20 state_is "$running" r
	starter=$(cat "$CLUSTER/execd-1/starter.pid")
	kill -9 "$starter"
	wait_until 20 gone "$starter"
	next=$(qsub -terse -o /dev/null -e /dev/null -b y sh -c 'exit 2')
	wait_until 30 job_finished "$next"
	wait_until 30 job_finished "$running"
	[ "$(job_field "$running" exit_status)" = 6 ]
	[ "$(job_field "$next" exit_status)" = 2 ]
	[ "$(cat "$CLUSTER/execd-1/starter.pid")" != "$starter" ]
}
