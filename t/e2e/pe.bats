#!/usr/bin/env bats
# pe.bats: parallel jobs on three execds: -pe runs its script once on the master host and qrsh -inherit starts tasks on the granted hosts (compared with Grid Engine's t/sge/mpi), -n runs one copy per host with NOWQ_VNN; NSLOTS, NHOSTS, PE and PE_HOSTFILE; waiting reasons; a failing part and qdel end every part and task; serial jobs run while a parallel job waits.

load helpers

ini_name() { awk -F' *= *' '$1 == "name" { print $2 }' "$CLUSTER/execd-$1.ini"; }

setup_file() {
	EXECDS=3 SLOTS=1 cluster_start
	nowq stop --dir "$CLUSTER" >/dev/null
	H1=$(ini_name 1)
	H2=$(ini_name 2)
	H3=$(ini_name 3)
	export H1 H2 H3
	cat >> "$CLUSTER/qmaster.conf" <<-CONF
	pe "mpi" { slots = 64  allocation_rule = "\$round_robin"  control_slaves = true  job_is_first_task = false }
	pe "smp" { slots = 8  allocation_rule = "\$fill_up" }
	pe "two" { allocation_rule = "2" }
	pe "first" { allocation_rule = "\$fill_up"  control_slaves = true }
	CONF
	nowq start --dir "$CLUSTER" >/dev/null
	WORK=$(mktemp -d /tmp/nowq-work.XXXXXX)
	chmod 777 "$WORK"
	export WORK
	wait_until 20 hosts_up
	# Each part writes what it saw, named by its NOWQ_VNN.
	cat > "$WORK/part.sh" <<-'SH'
	#!/bin/sh
	d=$WORK_DIR/$JOB_ID
	mkdir -p "$d"
	{
		echo "host=$HOSTNAME"
		echo "nslots=$NSLOTS"
		echo "nhosts=$NHOSTS"
		echo "pe=$PE"
		echo "vnn=$NOWQ_VNN"
		echo "hostfile_in_tmpdir=$(case $PE_HOSTFILE in "$TMPDIR"/*) echo yes;; *) echo no;; esac)"
	} > "$d/env.$NOWQ_VNN"
	cp "$PE_HOSTFILE" "$d/hostfile.$NOWQ_VNN"
	echo $$ > "$d/pid.$NOWQ_VNN"
	if [ "$NOWQ_VNN" = "${FAIL_VNN:-none}" ]; then
		sleep 1
		exit 3
	fi
	# GO: the test ends the part by creating this file, so no timing is assumed.
	if [ -n "${GO:-}" ]; then
		while [ ! -e "$WORK_DIR/$GO" ]; do sleep 0.1; done
		exit 0
	fi
	exec sleep "${SLEEP:-0}"
	SH
	chmod 755 "$WORK/part.sh"
	# A task qrsh -inherit starts: what it saw, named by its host.
	cat > "$WORK/task.sh" <<-'SH'
	#!/bin/sh
	d=$WORK_DIR/$JOB_ID
	mkdir -p "$d"
	{
		echo "host=$HOSTNAME"
		echo "vnn=$NOWQ_VNN"
		echo "nslots=$NSLOTS"
		echo "pe=$PE"
		echo "uid=$(id -u)"
	} > "$d/task.$HOSTNAME.$1"
	echo $$ > "$d/taskpid.$HOSTNAME.$1"
	exec sleep "${TASK_SLEEP:-0}"
	SH
	chmod 755 "$WORK/task.sh"
	# The job script that starts one task on each host of PE_HOSTFILE.
	cat > "$WORK/spread.sh" <<-'SH'
	#!/bin/sh
	d=$WORK_DIR/$JOB_ID
	mkdir -p "$d"
	echo $$ > "$d/pid.script"
	n=0
	for h in $(awk '{ print $1 }' "$PE_HOSTFILE"); do
		n=$((n + 1))
		qrsh -inherit -V "$h" "$WORK_DIR/task.sh" $n > "$d/qrsh.$n.out" 2>&1 &
	done
	wait
	echo done > "$d/script.done"
	exec sleep "${SLEEP:-0}"
	SH
	chmod 755 "$WORK/spread.sh"
}

hosts_up() { [ "$(qhost | grep -c -e "$H1" -e "$H2" -e "$H3")" -ge 3 ]; }

teardown_file() {
	cluster_stop
	rm -rf "$WORK"
}

# qsub of part.sh with these options; prints the job id.
part_job() { qsub -terse -o /dev/null -e /dev/null -v WORK_DIR="$WORK" "$@" "$WORK/part.sh"; }
# qsub of spread.sh: a task on each host through qrsh -inherit.
spread_job() {
	qsub -terse -o "$WORK/spread.out" -j y -v WORK_DIR="$WORK",PATH="$PATH",NOWQ_MASTER="$NOWQ_MASTER" \
	    "$@" "$WORK/spread.sh"
}
tasks_started() { [ "$(ls "$WORK/$1"/taskpid.* 2>/dev/null | wc -l)" -eq "$2" ]; }
tasks_gone() {
	for f in "$WORK/$1"/taskpid.*; do
		! kill -0 "$(cat "$f")" 2>/dev/null || return 1
	done
}
# ge_job NAME PE SLOTS SCRIPT [qsub options]: runs t/sge/mpi/SCRIPT as
# Grid Engine's recording did, its streams in $WORK/NAME.out and .err;
# prints the job id once it has finished.
ge_job() {
	local name=$1 pe=$2 n=$3 script=$4 id
	shift 4
	id=$(qsub -terse -o "$WORK/$name.out" -e "$WORK/$name.err" -v PATH="$PATH",NOWQ_MASTER="$NOWQ_MASTER" \
	    -pe "$pe" "$n" "$@" "$top_srcdir/t/sge/mpi/$script")
	wait_until 60 job_finished "$id" >&2
	echo "$id"
}
# same_sections FIXTURE OUT: the same sections and exit codes from the first "==" on.
same_sections() { diff <(sed -n '/^== /,$p' "$1" | sge_norm) <(sed -n '/^== /,$p' "$2" | sge_norm); }
# Grid Engine's words and nowq's alike: job ids, hosts and the program
# name in front of an error go.
sge_norm() {
	sed -E -e 's/job [0-9]+/job N/g' -e 's/^qrsh: error:/error:/' -e "s/(task on )[^ ]+/\1HOST/" \
	    -e 's/^[^ ]+ [0-9]+ all\.q@[^ ]+ UNDEFINED$/HOST SLOTS all.q@HOST UNDEFINED/'
}
info() { qstat -j "$1" | sed -n 's/^scheduling info: *//p'; }
info_has() { [[ "$(info "$1")" == *"$2"* ]]; }
parts_started() { [ "$(ls "$WORK/$1"/pid.* 2>/dev/null | wc -l)" -eq "$2" ]; }
# wait_parts ID N: waits for N parts to have started; on a timeout shows why.
wait_parts() {
	wait_until 30 parts_started "$1" "$2" && return 0
	qstat -j "$1" >&2
	qhost >&2
	tail -n 20 "$CLUSTER"/qmaster/*.log "$CLUSTER"/execd-*/*.log >&2 2>/dev/null
	return 1
}
error_reason() { job_reason "$1"; }
all_gone() {
	for f in "$WORK/$1"/pid.*; do
		! kill -0 "$(cat "$f")" 2>/dev/null || return 1
	done
}

@test "qconf -spl and -sp show the parallel environments; an unknown one is refused at submit" {
	run qconf -spl
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'mpi\nsmp\ntwo\nfirst')" ]
	run qconf -sp smp
	[ "$status" -eq 0 ]
	[[ "$output" == *"pe_name            smp"* ]]
	[[ "$output" == *"slots              8"* ]]
	[[ "$output" == *"allocation_rule    \$fill_up"* ]]
	run qconf -sp nope
	[ "$status" -ne 0 ]
	[[ "$output" == *"nope"* ]]
	run qsub -pe nope 2 -b y true
	[ "$status" -ne 0 ]
	[[ "$output" == *'job rejected: the requested parallel environment "nope" does not exist'* ]]
	run qsub -pe smp 9 -b y true
	[ "$status" -ne 0 ]
	[[ "$output" == *'offers only 8 slots'* ]]
	run qsub -pe two 3 -b y true
	[ "$status" -ne 0 ]
	[[ "$output" == *'not a multiple'* ]]
	# Four distinct hosts are needed, three exist: refused unless -w n.
	run qsub -pe mpi 4 -b y true
	[ "$status" -ne 0 ]
	[[ "$output" == *'no suitable queues'*'cannot run in PE "mpi"'* ]]
	[ "$(qstat | wc -l)" -eq 0 ]
}

@test "qsub -pe mpi 3 runs its script once, on the master host; the other hosts' slots are held" {
	id=$(part_job -v GO=go2 -pe mpi 3)
	wait_parts "$id" 1
	wait_until 10 state_is "$id" r
	# While it runs: one row with 3 slots and the master host in the queue column.
	run qstat
	[ "$(echo "$output" | awk -v id="$id" '$1 == id' | wc -l)" -eq 1 ]
	row=$(echo "$output" | awk -v id="$id" '$1 == id')
	[ "$(echo "$row" | awk '{ print $9 }')" = 3 ]
	master=$(grep '^host=' "$WORK/$id/env.0" | cut -d= -f2)
	[[ "$row" == *"all.q@$master "* ]]
	hl=$(qstat -j "$id" | sed -n 's/^exec_host_list *1: *//p')
	[[ "$hl" == "$master:1, "* ]]
	for h in "$H1" "$H2" "$H3"; do [[ "$hl" == *"$h:1"* ]]; done
	# Every host's slot is taken: a serial job waits.
	[ "$(qhost | awk -v a="$H1" -v b="$H2" -v c="$H3" '$1 == a || $1 == b || $1 == c { n += $4 } END { print n }')" = 3 ]
	touch "$WORK/go2"
	wait_until 30 job_finished "$id"
	[ "$(job_field "$id" exit_status)" = 0 ]
	[ -z "$(error_reason "$id")" ]
	# The script ran once, on the master host, the first line of PE_HOSTFILE.
	[ "$(ls "$WORK/$id"/env.* | wc -l)" -eq 1 ]
	e="$WORK/$id/env.0"
	grep -qx "nslots=3" "$e"
	grep -qx "nhosts=3" "$e"
	grep -qx "pe=mpi" "$e"
	grep -qx "hostfile_in_tmpdir=yes" "$e"
	# Grid Engine's lines: host slots queue processors, master host first.
	[ "$(wc -l < "$WORK/$id/hostfile.0")" -eq 3 ]
	[ "$(head -1 "$WORK/$id/hostfile.0")" = "$master 1 all.q@$master UNDEFINED" ]
	[ "$(awk '{ print $1 }' "$WORK/$id/hostfile.0" | sort -u | wc -l)" -eq 3 ]
	# One accounting row for the attempt, with every host and the slots.
	run qacct -j "$id"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | grep -c '^jobnumber')" -eq 1 ]
	[[ "$output" == *"granted_pe   mpi"* ]]
	[ "$(echo "$output" | awk '$1 == "slots" { print $2 }')" = 3 ]
	[ "$(echo "$output" | awk '$1 == "failed" { print $2 }')" = 0 ]
	[ "$(echo "$output" | awk '$1 == "hostname" { print NF - 1 }')" = 3 ]
}

@test "qrsh -inherit starts a task on each granted host, as the job's owner, accounted to the job" {
	id=$(spread_job -pe mpi 3)
	wait_until 40 job_finished "$id"
	[ "$(job_field "$id" exit_status)" = 0 ]
	[ -f "$WORK/$id/script.done" ]
	for n in 1 2 3; do [ ! -s "$WORK/$id/qrsh.$n.out" ]; done
	# One task on each host, with the job's id, slots, PE and its host's NOWQ_VNN.
	[ "$(ls "$WORK/$id"/task.* | wc -l)" -eq 3 ]
	for h in "$H1" "$H2" "$H3"; do
		f=$(ls "$WORK/$id"/task."$h".*)
		grep -qx "host=$h" "$f"
		grep -qx "nslots=3" "$f"
		grep -qx "pe=mpi" "$f"
		grep -qx "uid=$(id -u)" "$f"
	done
	vnns=$(cat "$WORK/$id"/task.* | sed -n 's/^vnn=//p' | sort | tr '\n' ' ')
	[ "$vnns" = "0 1 2 " ]
	run qacct -j "$id"
	[ "$(echo "$output" | grep -c '^jobnumber')" -eq 1 ]
	[ "$(echo "$output" | awk '$1 == "failed" { print $2 }')" = 0 ]
	grep -q "job $id: task 3 sent to" "$CLUSTER/qmaster/qmaster.log"
}

@test "qrsh -inherit accepts and refuses what Grid Engine does, in its words" {
	fix="$top_srcdir/t/sge/mpi"
	id=$(ge_job ge mpi 2 job.sh)
	# stdout: the same sections and exit codes, after the header lines.
	same_sections "$fix/pe-2.out" "$WORK/ge.out"
	grep -qx 'HOST SLOTS all.q@HOST UNDEFINED' <(sge_norm < "$WORK/ge.out")
	# stderr: a line for each refusal, Grid Engine's sentence up to the reason.
	[ "$(wc -l < "$WORK/ge.err")" -eq "$(wc -l < "$fix/pe-2.err")" ]
	diff <(sge_norm < "$fix/pe-2.err" | cut -d: -f1-2) <(sge_norm < "$WORK/ge.err" | cut -d: -f1-2)
	sge_norm < "$WORK/ge.err" | grep -qxF "$(tail -1 "$fix/pe-2.err")"
	grep -q "executing task of job $id failed: host nosuchhost.example was not granted to job $id" "$WORK/ge.err"
	# Outside any job, as Grid Engine says.
	run env -u JOB_ID qrsh -inherit "$H1" echo no
	[ "$status" -eq 1 ]
	[ "$(echo "$output" | sge_norm)" = "$(sed -n 1p "$fix/inherit-outside.out")" ]
}

@test "qrsh -inherit is refused in a PE without control_slaves, for another user's job and past the host's slots" {
	fix="$top_srcdir/t/sge/mpi"
	id=$(ge_job noctl smp 2 job.sh)
	same_sections "$fix/pe-noctl.out" "$WORK/noctl.out"
	grep -q "executing task of job $id failed: job $id is not in a parallel environment with control_slaves TRUE" "$WORK/noctl.err"
	# Four tasks at once on the master host: as many run as the job has
	# slots there (Grid Engine's: 2 of 2; here 1 of 1), the others are refused.
	[ "$(grep -c "didn't accept task" "$fix/pe-limit.err")" -eq 2 ]
	id=$(ge_job lim mpi 2 limit.sh)
	[ "$(grep -c "executing task of job $id failed: the 1 task slot of job $id on host .* is in use" "$WORK/lim.err")" -eq 3 ]
	[ "$(grep -c 'executing task of job' "$WORK/lim.err")" -eq 3 ]
	! grep -qx fourth "$WORK/lim.out" || false
	# job_is_first_task TRUE: the script is the one task of its one slot.
	printf '#!/bin/sh\nexec qrsh -inherit "$HOSTNAME" echo no\n' > "$WORK/first.sh"
	id=$(qsub -terse -o "$WORK/first.out" -e "$WORK/first.err" -v PATH="$PATH",NOWQ_MASTER="$NOWQ_MASTER" \
	    -pe first 1 -l "hosts=$H1" "$WORK/first.sh")
	wait_until 40 job_finished "$id"
	grep -q "executing task of job $id failed: job $id's slot on host $H1 is its script's (job_is_first_task)" "$WORK/first.err"
	# Another user's job: as nobody, with the job's id.
	id=$(part_job -v SLEEP=20 -pe mpi 2)
	wait_until 20 state_is "$id" r
	h=$(qstat -j "$id" | sed -n 's/^exec_host_list *1: *//p' | cut -d: -f1)
	run as_user nobody env JOB_ID="$id" NOWQ_MASTER="$NOWQ_MASTER" qrsh -inherit "$h" echo no
	[ "$status" -eq 1 ]
	[[ "$output" == *"executing task of job $id failed: no job $id of user nobody runs"* ]]
	qdel "$id"
	wait_until 20 job_finished "$id"
}

@test "the job's end ends its tasks: its script's end, and qdel" {
	id=$(spread_job -v TASK_SLEEP=60 -pe mpi 3)
	wait_until 40 tasks_started "$id" 3
	# Tasks hold the script in its wait: qdel ends all of them.
	qdel "$id"
	wait_until 20 job_finished "$id"
	wait_until 10 tasks_gone "$id"
	[[ "$(error_reason "$id")" == "deleted (qdel)"* ]]
	# A script that leaves its tasks behind: they end with it.
	cat > "$WORK/leave.sh" <<-'SH'
	#!/bin/sh
	for h in $(awk '{ print $1 }' "$PE_HOSTFILE"); do
		qrsh -inherit -V "$h" "$WORK_DIR/task.sh" 1 >/dev/null 2>&1 &
	done
	while [ "$(ls "$WORK_DIR/$JOB_ID"/taskpid.* 2>/dev/null | wc -l)" -lt 3 ]; do sleep 0.2; done
	exit 0
	SH
	chmod 755 "$WORK/leave.sh"
	id=$(qsub -terse -o /dev/null -j y -v WORK_DIR="$WORK",PATH="$PATH",NOWQ_MASTER="$NOWQ_MASTER",TASK_SLEEP=60 \
	    -pe mpi 3 "$WORK/leave.sh")
	wait_until 40 job_finished "$id"
	wait_until 10 tasks_gone "$id"
	[ "$(job_field "$id" exit_status)" = 0 ]
	[ -z "$(error_reason "$id")" ]
	# Every host is free again.
	for h in "$H1" "$H2" "$H3"; do
		s=$(qsub -terse -o /dev/null -j y -l "hosts=$h" -b y true)
		wait_until 20 job_finished "$s"
	done
}

@test "-pe NAME MIN-MAX is granted as many slots as can start now, as Grid Engine grants them" {
	fix="$top_srcdir/t/sge/mpi"
	# Grid Engine, with 8 free slots: 1-3 gives 3, and 4-2 is read as 2-4.
	grep -qx "NSLOTS=3 NHOSTS=1 PE=mpi" "$fix/pe-range.out"
	grep -qx "NSLOTS=4" "$fix/qsub-backwards.out"
	# Three idle hosts of one slot: 1-3 gives 3, 2-5 and 5-2 give 3.
	for r in 1-3 2-5 5-2; do
		id=$(part_job -pe mpi "$r")
		wait_until 30 job_finished "$id"
		grep -qx "nslots=3" "$WORK/$id/env.0"
		[ "$(wc -l < "$WORK/$id/hostfile.0")" -eq 3 ]
		[ "$(qacct -j "$id" | awk '$1 == "slots" { print $2 }')" = 3 ]
	done
	# One host busy: 1-3 starts now with the two free slots.
	busy=$(qsub -terse -o /dev/null -j y -l "hosts=$H1" -b y sh -c "while [ ! -e $WORK/free11 ]; do sleep 0.1; done")
	wait_until 10 state_is "$busy" r
	id=$(part_job -pe mpi 1-3)
	wait_until 30 job_finished "$id"
	grep -qx "nslots=2" "$WORK/$id/env.0"
	! grep -q "^$H1 " "$WORK/$id/hostfile.0" || false
	# More than the cluster ever holds at the low end: refused.
	run qsub -pe mpi 4-6 -b y true
	[ "$status" -ne 0 ]
	[[ "$output" == *'cannot run in PE "mpi"'*'needs 4 slots'* ]]
	qdel "$busy" >/dev/null 2>&1 || true
}

@test "qsub -n 2 runs on two distinct hosts without a PE" {
	id=$(part_job -n 2)
	wait_until 30 job_finished "$id"
	[ -f "$WORK/$id/env.0" ] && [ -f "$WORK/$id/env.1" ] && [ ! -f "$WORK/$id/env.2" ]
	grep -qx "nslots=2" "$WORK/$id/env.1"
	grep -qx "nhosts=2" "$WORK/$id/env.1"
	grep -qx "pe=" "$WORK/$id/env.0"
	[ "$(grep -h '^host=' "$WORK/$id"/env.* | sort -u | wc -l)" -eq 2 ]
}

@test "a one-slot -pe job is a parallel job of one part; -n 1 is a serial job" {
	id=$(part_job -pe mpi 1)
	wait_until 30 job_finished "$id"
	[ -f "$WORK/$id/env.0" ] && [ ! -f "$WORK/$id/env.1" ]
	grep -qx "nslots=1" "$WORK/$id/env.0"
	grep -qx "pe=mpi" "$WORK/$id/env.0"
	[ "$(wc -l < "$WORK/$id/hostfile.0")" -eq 1 ]
	run qacct -j "$id"
	[[ "$output" == *"granted_pe   mpi"* ]]
	id=$(qsub -terse -o /dev/null -j y -n 1 -b y sh -c 'test -z "$PE_HOSTFILE" && test "$NSLOTS" = 1')
	wait_until 30 job_finished "$id"
	[ "$(job_field "$id" exit_status)" = 0 ]
}

@test "a 4-part job on 3 hosts waits with a reason while serial jobs still run" {
	id=$(qsub -terse -w n -pe mpi 4 -b y true)
	wait_until 10 test -n "$(info "$id")"
	[[ "$(info "$id")" == *'cannot run in PE "mpi": it needs 4 slots'*'only 3 connected hosts'* ]]
	[ "$(job_state "$id")" = qw ]
	s1=$(qsub -terse -o /dev/null -j y -b y true)
	s2=$(qsub -terse -o /dev/null -j y -b y true)
	wait_until 20 job_finished "$s1"
	wait_until 20 job_finished "$s2"
	[ "$(job_state "$id")" = qw ]
	qdel "$id"
}

@test "a parallel job holds idle hosts until all its slots are free at once" {
	busy=$(qsub -terse -o /dev/null -j y -l "hosts=$H1" -b y sh -c "while [ ! -e $WORK/free11 ]; do sleep 0.1; done")
	wait_until 10 state_is "$busy" r
	id=$(part_job -n 3)
	later=$(qsub -terse -o /dev/null -j y -b y true)
	sleep 1
	# H2 and H3 are idle but held for the parallel job, ahead of the later serial one.
	[ "$(job_state "$id")" = qw ]
	[ "$(job_state "$later")" = qw ]
	wait_until 10 info_has "$id" "waits for 3 slots at once"
	touch "$WORK/free11"
	wait_until 30 job_finished "$id"
	[ "$(ls "$WORK/$id"/env.* | wc -l)" -eq 3 ]
	wait_until 20 job_finished "$later"
}

@test "a failing copy of -n kills the other parts and the job ends failed" {
	id=$(part_job -v FAIL_VNN=1,SLEEP=60 -n 3)
	wait_parts "$id" 3
	wait_until 20 job_finished "$id"
	wait_until 10 all_gone "$id"
	[[ "$(error_reason "$id")" == "part 1 on "*" exited with status 3" ]]
	run qacct -j "$id"
	[ "$(echo "$output" | grep -c '^jobnumber')" -eq 1 ]
	# Part 0 was killed: its end is the job's.
	[ "$(echo "$output" | awk '$1 == "exit_status" { print $2 }')" != 0 ]
	[ "$(echo "$output" | awk '$1 == "hostname" { print NF - 1 }')" = 3 ]
}

@test "qdel kills every part of -n" {
	id=$(SLEEP=60 part_job -v SLEEP=60 -n 3)
	wait_parts "$id" 3
	wait_until 10 state_is "$id" r
	qdel "$id"
	wait_until 20 job_finished "$id"
	wait_until 10 all_gone "$id"
	[[ "$(error_reason "$id")" == "deleted (qdel)"* ]]
	# The hosts are free again: a serial job on each runs.
	for h in "$H1" "$H2" "$H3"; do
		s=$(qsub -terse -o /dev/null -j y -l "hosts=$h" -b y true)
		wait_until 20 job_finished "$s"
	done
}

@test "a part its execd no longer knows after a restart fails the job and kills the other parts" {
	id=$(part_job -v SLEEP=60 -n 3)
	wait_parts "$id" 3
	wait_until 10 state_is "$id" r
	# The part on execd 2: its job, its shepherd and its spool folder vanish.
	vnn=$(grep -l "^host=$H2\$" "$WORK/$id"/env.* | sed 's/.*env\.//')
	pid=$(cat "$WORK/$id/pid.$vnn")
	shep=$(ps -o ppid= -p "$pid" | tr -d ' ')
	kill -9 "$(cat "$CLUSTER/execd-2/execd.pid")"
	kill -9 "$shep" "$pid"
	rm -rf "$CLUSTER/execd-2/active/$id".* "$CLUSTER/execd-2/outbox/"* "/tmp/nowq.$id.0.1.$H2".*
	nowq start --dir "$CLUSTER" >/dev/null
	wait_until 30 job_finished "$id"
	wait_until 10 all_gone "$id"
	[[ "$(error_reason "$id")" == "lost: part $vnn on $H2: execd no longer knows it" ]]
	run qacct -j "$id"
	[ "$(echo "$output" | awk '$1 == "failed" { print $2 }')" = 100 ]
}

@test "a parallel job outlives kill -9 of the master: its parts' ends are still counted" {
	id=$(part_job -v SLEEP=3 -n 3)
	wait_parts "$id" 3
	wait_until 10 state_is "$id" r
	kill -9 "$(cat "$CLUSTER/qmaster/qmaster.pid")"
	sleep 0.5
	nowq start --dir "$CLUSTER" >/dev/null
	wait_until 30 job_finished "$id"
	[ "$(job_field "$id" exit_status)" = 0 ]
	[ -z "$(error_reason "$id")" ]
	run qacct -j "$id"
	[ "$(echo "$output" | grep -c '^jobnumber')" -eq 1 ]
	[ "$(echo "$output" | awk '$1 == "hostname" { print NF - 1 }')" = 3 ]
}

@test "qdel while a part's execd is down kills that part when its execd returns" {
	id=$(part_job -v SLEEP=60 -n 3)
	wait_parts "$id" 3
	wait_until 10 state_is "$id" r
	kill -9 "$(cat "$CLUSTER/execd-3/execd.pid")"
	vnn=$(grep -l "^host=$H3\$" "$WORK/$id"/env.* | sed 's/.*env\.//')
	qdel "$id"
	sleep 1
	# The part on the execd that is down runs on.
	kill -0 "$(cat "$WORK/$id/pid.$vnn")"
	[ "$(job_state "$id")" != "" ]
	! job_finished "$id" || false
	nowq start --dir "$CLUSTER" >/dev/null
	wait_until 30 job_finished "$id"
	wait_until 10 all_gone "$id"
	[[ "$(error_reason "$id")" == "deleted (qdel)"* ]]
}
