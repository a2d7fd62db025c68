#!/usr/bin/env bats
# pe.bats: parallel jobs (-pe, -n) on three execds: one part per host with NSLOTS, NHOSTS, PE, NOWQ_VNN and PE_HOSTFILE; waiting reasons; a failing part and qdel end every part; serial jobs run while a parallel job waits.

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
	pe "mpi" { slots = 64  allocation_rule = "\$round_robin" }
	pe "smp" { slots = 8  allocation_rule = "\$fill_up" }
	pe "two" { allocation_rule = "2" }
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
	exec sleep "${SLEEP:-0}"
	SH
	chmod 755 "$WORK/part.sh"
}

hosts_up() { [ "$(qhost | grep -c -e "$H1" -e "$H2" -e "$H3")" -ge 3 ]; }

teardown_file() {
	cluster_stop
	rm -rf "$WORK"
}

# qsub of part.sh with these options; prints the job id.
part_job() { qsub -terse -o /dev/null -e /dev/null -v WORK_DIR="$WORK" "$@" "$WORK/part.sh"; }
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
	[ "$output" = "$(printf 'mpi\nsmp\ntwo')" ]
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

@test "qsub -pe mpi 3 runs one part on each host with its environment and PE_HOSTFILE" {
	id=$(part_job -v SLEEP=3 -pe mpi 3)
	wait_parts "$id" 3
	# While it runs: one row with 3 slots and the master host in the queue column.
	run qstat
	[ "$(echo "$output" | awk -v id="$id" '$1 == id' | wc -l)" -eq 1 ]
	row=$(echo "$output" | awk -v id="$id" '$1 == id')
	[ "$(echo "$row" | awk '{ print $5 }')" = r ]
	[ "$(echo "$row" | awk '{ print $9 }')" = 3 ]
	master=$(grep '^host=' "$WORK/$id/env.0" | cut -d= -f2)
	[[ "$row" == *"all.q@$master "* ]]
	hl=$(qstat -j "$id" | sed -n 's/^exec_host_list *1: *//p')
	[ "$(echo "$hl" | tr ',' '\n' | wc -l)" -eq 3 ]
	[[ "$hl" == "$master:1, "* ]]
	for h in "$H1" "$H2" "$H3"; do [[ "$hl" == *"$h:1"* ]]; done
	wait_until 30 job_finished "$id"
	[ "$(job_field "$id" exit_status)" = 0 ]
	[ -z "$(error_reason "$id")" ]
	hosts=""
	for v in 0 1 2; do
		e="$WORK/$id/env.$v"
		grep -qx "nslots=3" "$e"
		grep -qx "nhosts=3" "$e"
		grep -qx "pe=mpi" "$e"
		grep -qx "vnn=$v" "$e"
		grep -qx "hostfile_in_tmpdir=yes" "$e"
		hosts="$hosts $(grep '^host=' "$e" | cut -d= -f2)"
		# Grid Engine's lines: host slots queue processors, master host first.
		[ "$(wc -l < "$WORK/$id/hostfile.$v")" -eq 3 ]
		[ "$(head -1 "$WORK/$id/hostfile.$v" | awk '{ print $1, $2, $3, $4 }')" = "$master 1 all.q@$master UNDEFINED" ]
		cmp "$WORK/$id/hostfile.0" "$WORK/$id/hostfile.$v"
	done
	# Three distinct hosts.
	[ "$(echo $hosts | tr ' ' '\n' | sort -u | wc -l)" -eq 3 ]
	[ "$(grep '^host=' "$WORK/$id/env.0" | cut -d= -f2)" = "$(head -1 "$WORK/$id/hostfile.0" | awk '{ print $1 }')" ]
	# One accounting row for the attempt, with every host and the slots.
	run qacct -j "$id"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | grep -c '^jobnumber')" -eq 1 ]
	[[ "$output" == *"granted_pe   mpi"* ]]
	[ "$(echo "$output" | awk '$1 == "slots" { print $2 }')" = 3 ]
	[ "$(echo "$output" | awk '$1 == "failed" { print $2 }')" = 0 ]
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
	busy=$(qsub -terse -o /dev/null -j y -l "hosts=$H1" -b y sleep 8)
	wait_until 10 state_is "$busy" r
	id=$(part_job -pe mpi 3)
	later=$(qsub -terse -o /dev/null -j y -b y true)
	sleep 1
	# H2 and H3 are idle but held for the parallel job, ahead of the later serial one.
	[ "$(job_state "$id")" = qw ]
	[ "$(job_state "$later")" = qw ]
	wait_until 10 info_has "$id" "waits for 3 slots at once"
	wait_until 30 job_finished "$id"
	[ "$(ls "$WORK/$id"/env.* | wc -l)" -eq 3 ]
	wait_until 20 job_finished "$later"
}

@test "a failing part kills the other parts and the job ends failed" {
	id=$(part_job -v FAIL_VNN=1,SLEEP=60 -pe mpi 3)
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

@test "qdel kills every part" {
	id=$(SLEEP=60 part_job -v SLEEP=60 -pe mpi 3)
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
	id=$(part_job -v SLEEP=60 -pe mpi 3)
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
	id=$(part_job -v SLEEP=3 -pe mpi 3)
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
	id=$(part_job -v SLEEP=60 -pe mpi 3)
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
