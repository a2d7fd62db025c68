#!/usr/bin/env bats
# qmod.bats: disabling queues and hosts (kept across restarts and reloads), suspending and resuming a job's whole session, who may do what; and qhost's view of it.

load helpers

setup() {
	EXECDS=2 SLOTS=2 cluster_start
	H1=$(sed -n 's/^name = //p' "$CLUSTER/execd-1.ini")
	H2=$(sed -n 's/^name = //p' "$CLUSTER/execd-2.ini")
	wait_until 10 host_state_is "$H1" idle
	wait_until 10 host_state_is "$H2" idle
	WORK="$CLUSTER/work"
	mkdir -m 777 "$WORK"
}

teardown() {
	cluster_stop
}

host_state() { qhost | awk -v h="$1" '$1 == h { print $7 }'; }
host_state_is() { [ "$(host_state "$1")" = "$2" ]; }
as_user() {
	local u=$1
	shift
	setpriv --reuid="$u" --regid="$(id -g "$u")" --clear-groups env NOWQ_MASTER="$NOWQ_MASTER" \
	    "$NOWQ_BIN/$@"
}
# The state letter (ps STAT's first) of every process of the session led by $1.
session_states() { ps -e -o sid=,stat= | awk -v s="$1" '$1 == s { print substr($2, 1, 1) }' | sort -u | tr -d '\n'; }
# How many jobs qstat shows in that queue@host or state.
count_is() { [ "$(qstat | awk -v w="$1" 'NR > 2 && ($8 == w || $5 == w)' | wc -l)" -eq "$2" ]; }
session_is() { [ "$(session_states "$1")" = "$2" ]; }

@test "qmod -d QUEUE keeps its jobs pending, through a master restart and a reload, until qmod -e" {
	run qmod -d all.q
	[ "$status" -eq 0 ]
	[[ "$output" == *'changed state of "all.q" (disabled)'* ]]
	run qmod -d all.q
	[ "$status" -eq 0 ]
	[[ "$output" == *"already in the specified state: disabled"* ]]
	id=$(qsub -terse -o /dev/null -e /dev/null -b y true)
	sleep 1.5
	state_is "$id" qw
	nowq stop --dir "$CLUSTER" >/dev/null
	nowq start --dir "$CLUSTER" >/dev/null
	sleep 1.5
	state_is "$id" qw
	kill -HUP "$(cat "$CLUSTER/qmaster/qmaster.pid")"
	sleep 1.5
	state_is "$id" qw
	run qmod -e all.q
	[ "$status" -eq 0 ]
	[[ "$output" == *'changed state of "all.q" (enabled)'* ]]
	wait_until 20 job_finished "$id"
}

@test "qmod -d HOST sends work elsewhere and qhost shows it disabled, also after a restart" {
	qmod -d "$H1"
	host_state_is "$H1" disabled
	ids=
	for i in 1 2 3 4; do
		ids="$ids $(qsub -terse -o /dev/null -e /dev/null -b y sleep 300)"
	done
	# Two slots on host 2 run two; the other two wait, though host 1 is free.
	wait_until 20 count_is "all.q@$H2" 2
	sleep 1
	count_is "all.q@$H2" 2
	count_is qw 2
	nowq stop --dir "$CLUSTER" >/dev/null
	nowq start --dir "$CLUSTER" >/dev/null
	wait_until 10 host_state_is "$H1" disabled
	wait_until 10 host_state_is "$H2" idle
	sleep 1
	count_is qw 2
	qmod -e "*@$H1"
	wait_until 10 host_state_is "$H1" idle
	wait_until 20 count_is "all.q@$H1" 2
	count_is qw 0
	qdel $ids
}

@test "qmod -d QUEUE@HOST takes the names qstat -f prints: that instance only, kept across a restart" {
	qi=$(qstat -f | awk -v h="$H1" '$1 ~ "@" h "$" { print $1 }')
	[ "$qi" = "all.q@$H1" ]
	run qmod -d "$qi"
	[ "$status" -eq 0 ]
	[[ "$output" == *"changed state of \"all.q@$H1\" (disabled)"* ]]
	qstat -f | grep "^all.q@$H1 " | grep -q " d *$"
	! qstat -f | grep "^all.q@$H2 " | grep -q " d *$" || false
	ids=
	for i in 1 2 3; do
		ids="$ids $(qsub -terse -o /dev/null -e /dev/null -b y sleep 300)"
	done
	wait_until 20 count_is "all.q@$H2" 2
	sleep 1
	count_is qw 1
	nowq stop --dir "$CLUSTER" >/dev/null
	nowq start --dir "$CLUSTER" >/dev/null
	wait_until 10 host_state_is "$H2" idle
	qstat -f | grep "^all.q@$H1 " | grep -q " d *$"
	count_is qw 1
	run qmod -d "nosuch.q@$H1"
	[ "$status" -ne 0 ]
	[[ "$output" == *"invalid queue or host \"nosuch.q@$H1\""* ]]
	qmod -e "all.q@$H1"
	wait_until 20 count_is "all.q@$H1" 1
	count_is qw 0
	qdel $ids
}

@test "qmod -d and -e refuse unknown names and users who are not operators or managers" {
	run qmod -d nosuchqueue
	[ "$status" -eq 1 ]
	[[ "$output" == *'invalid queue or host "nosuchqueue"'* ]]
	run qmod -d
	[ "$status" -eq 1 ]
	[[ "$output" == *"qmod: error: no queue or host given"* ]]
	run qmod -x 1
	[ "$status" -eq 1 ]
	[[ "$output" == *'qmod: error: option "-x" is not supported by nowq'* ]]
	id -u nobody >/dev/null 2>&1 || skip "no user nobody on this machine"
	[ "$(id -u)" = 0 ] || skip "needs root to act as another user"
	run as_user nobody qmod -d all.q
	[ "$status" -eq 1 ]
	[[ "$output" == *"must be operator or manager"* ]]
	host_state_is "$H1" idle
}

@test "qmod -s stops the job's whole session (s in qstat, kept across a restart), qmod -us resumes it" {
	# A background job in a process group of its own, as a job-control shell makes.
	id=$(qsub -terse -o /dev/null -e /dev/null -b y sh -c \
	    "echo \$\$ > $WORK/leader; perl -e 'setpgrp(0, 0); exec qw(sleep 301)' & sleep 300")
	wait_until 20 state_is "$id" r
	wait_until 10 test -s "$WORK/leader"
	leader=$(cat "$WORK/leader")
	other_group() { ps -e -o sid=,pgid= | awk -v s="$leader" '$1 == s && $2 != s' | grep -q .; }
	wait_until 10 other_group
	run qmod -s "$id"
	[ "$status" -eq 0 ]
	[[ "$output" == *"suspended job $id"* ]]
	wait_until 10 state_is "$id" s
	wait_until 10 session_is "$leader" T
	nowq stop --dir "$CLUSTER" >/dev/null
	nowq start --dir "$CLUSTER" >/dev/null
	state_is "$id" s
	run qmod -us "$id"
	[ "$status" -eq 0 ]
	[[ "$output" == *"unsuspended job $id"* ]]
	wait_until 10 state_is "$id" r
	wait_until 10 session_is "$leader" S
	qdel "$id"
	wait_until 20 job_finished "$id"
}

@test "qmod -s: a pending job cannot be suspended; only its owner or a manager may suspend a job" {
	qmod -d all.q
	pending=$(qsub -terse -o /dev/null -e /dev/null -b y true)
	run qmod -s "$pending"
	[ "$status" -eq 1 ]
	[[ "$output" == *"job $pending is not running"* ]]
	qdel "$pending"
	qmod -e all.q
	id -u nobody >/dev/null 2>&1 || skip "no user nobody on this machine"
	[ "$(id -u)" = 0 ] || skip "needs root to act as another user"
	id=$(cd "$WORK" && as_user nobody qsub -terse -cwd -o /dev/null -e /dev/null -b y sleep 300)
	wait_until 20 state_is "$id" r
	run as_user daemon qmod -s "$id"
	[ "$status" -eq 1 ]
	[[ "$output" == *"do not have the necessary privileges"* ]]
	state_is "$id" r
	run as_user nobody qmod -s "$id"
	[ "$status" -eq 0 ]
	wait_until 10 state_is "$id" s
	run as_user nobody qmod -us "$id"
	[ "$status" -eq 0 ]
	wait_until 10 state_is "$id" r
	qdel "$id"
}

@test "qhost -j lists each host's jobs below it; --json is one document with state, attributes and jobs" {
	qmod -d "$H1"
	id=$(qsub -terse -o /dev/null -e /dev/null -N hostjob -b y sleep 300)
	wait_until 20 state_is "$id" r
	qhost -j | awk -v h="$H2" -v id="$id" '
		$1 == h { inhost = 1; next }
		/^[^ ]/ { inhost = 0 }
		inhost && $1 == id && $3 == "hostjob" && $9 == "MASTER" { found = 1 }
		END { exit !found }'
	qhost -j -h "$H1" | grep -vq hostjob
	qhost --json -j | python3 -c '
import json, sys
hosts = {h["name"]: h for h in json.load(sys.stdin)["hosts"]}
h1, h2 = hosts[sys.argv[1]], hosts[sys.argv[2]]
assert h1["state"] == "disabled" and h1["disabled"] and h1["jobs"] == [], h1
assert h2["state"] == "idle" and h2["used"] == 1, h2
assert [j["id"] for j in h2["jobs"]] == [int(sys.argv[3])], h2
assert h2["attrs"]["arch"] and h2["attrs"]["mem"] > 0, h2
' "$H1" "$H2" "$id"
	qhost -F arch | grep -q "^    hf:arch="
	qmod -e "$H1"
	qdel "$id"
}

@test "qhost shows a host whose execd is gone as unknown" {
	kill "$(cat "$CLUSTER/execd-2/execd.pid")"
	wait_until 10 host_state_is "$H2" unknown
	qhost | awk -v h="$H2" '$1 == h && $5 == "-"' | grep -q .
	host_state_is "$H1" idle
}
