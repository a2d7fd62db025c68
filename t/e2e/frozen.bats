#!/usr/bin/env bats
# frozen.bats: a primary stopped by kill -STOP (its listen backlog still accepts): once the standby took over, clients and execds stop waiting for the frozen one within seconds.

load helpers

setup() {
	MASTERS=2 EXECDS=3 SLOTS=2 cluster_start
	STANDBY="unix:$CLUSTER/qmaster-2.sock"
	wait_until 10 in_sync
}

teardown() {
	# What was stopped is woken, so that nowq stop can stop it.
	[ -z "${FROZEN:-}" ] || kill -CONT $FROZEN 2>/dev/null || true
	cluster_stop
}

in_sync() { qconf -smasters | grep -q "in sync"; }
pid_of() { cat "$CLUSTER/$1/qmaster.pid"; }
execd_pid() { cat "$CLUSTER/execd-$1/execd.pid"; }
port_of() { sed -n 's/^listen *= *"127.0.0.1:\([0-9]*\)"/\1/p' "$1"; }
logged() { grep -q "$2" "$CLUSTER/execd-$1/execd.log"; }
standby_is_primary() {
	NOWQ_MASTER=$STANDBY qconf -smasters --json | python3 -c "import json,sys; m=[m for m in json.load(sys.stdin)['masters'] if m.get('self')][0]; sys.exit(m['role'] != 'primary')"
}
now_ms() { echo $(( ${EPOCHREALTIME/./} / 1000 )); }

@test "kill -STOP of the primary: after the takeover qsub, qstat and a job's run each take under 3 s, the frozen master first in NOWQ_MASTER" {
	FROZEN=$(pid_of qmaster)
	kill -STOP "$FROZEN"
	# The takeover: the standby, asked alone, takes a submission.
	NOWQ_MASTER=$STANDBY wait_until 20 qsub -h -b y true
	t0=$(now_ms)
	run timeout 30 qsub -terse -b y true
	t1=$(now_ms)
	echo "# qsub: $output in $((t1 - t0)) ms" >&3
	[ "$status" -eq 0 ]
	id=$output
	[ $((t1 - t0)) -lt 3000 ]
	t0=$(now_ms)
	run timeout 30 qstat -s prz
	t1=$(now_ms)
	echo "# qstat in $((t1 - t0)) ms" >&3
	[ "$status" -eq 0 ]
	[ $((t1 - t0)) -lt 3000 ]
	# The execds that voted wait for the candidate they voted for, not
	# for the master they voted out: one of them runs the job at once.
	t0=$(now_ms)
	NOWQ_MASTER=$STANDBY wait_until 20 job_finished "$id"
	t1=$(now_ms)
	echo "# the job finished $((t1 - t0)) ms later" >&3
	[ $((t1 - t0)) -lt 3000 ]
}

@test "an execd that voted for a candidate not yet promoted waits for it, not for the frozen master it voted out" {
	new="127.0.0.1:$(port_of "$CLUSTER/qmaster-2.conf")"
	# Two of the three execds stop with the primary: the one left votes,
	# and the candidate, one vote short of a majority, redirects it.
	FROZEN="$(pid_of qmaster) $(execd_pid 2) $(execd_pid 3)"
	kill -STOP $FROZEN
	wait_until 20 logged 1 "voted for master $new in epoch 2"
	# Long enough to be lost in the frozen master's backlog.
	sleep 1
	kill -CONT "$(execd_pid 2)"
	wait_until 20 standby_is_primary
	t0=$(now_ms)
	wait_until 20 logged 1 "registered with master $new (epoch 2)"
	t1=$(now_ms)
	echo "# execd 1 registered with the new primary $((t1 - t0)) ms after the takeover" >&3
	[ $((t1 - t0)) -lt 3000 ]
}
