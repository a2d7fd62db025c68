#!/usr/bin/env bats
# resend.bats: a client that loses the reply to a keyed request (qsub's SUBMIT) sends it again, to the next master or to the same one after a reconnect, and reports one outcome: the job made once.

load helpers

WIRE="$BATS_TEST_DIRNAME/wire.py"

setup() {
	cluster_start
	FAKE_SOCK="$CLUSTER/fake.sock"
}

teardown() {
	[ -z "${FAKE:-}" ] || kill "$FAKE" 2>/dev/null || true
	cluster_stop
}

# fake_start drop|hold N [UPSTREAM]: a master at $FAKE_SOCK that answers the
# HELLO of N connections, reads each one's request (passing it on to
# UPSTREAM when given) and closes without a reply (drop) or holds the
# connection unanswered (hold); it prints each request's type and key.
fake_start() {
	local how=$1
	shift
	timeout 60 python3 "$WIRE" "$how" "unix:$FAKE_SOCK" "$@" > "$CLUSTER/dropped" &
	FAKE=$!
	wait_until 20 test -S "$FAKE_SOCK"
}

jobs_named() { qstat -u '*' -s prz | awk -v n="$1" 'NR > 2 && $3 == n' | wc -l; }

@test "a master that reads a SUBMIT and closes before its reply: qsub asks the next master, and the job is made once" {
	fake_start drop 1
	NOWQ_MASTER="unix:$FAKE_SOCK,$NOWQ_MASTER" run timeout 20 qsub -terse -h -N lost1 -b y true
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^[0-9]+$ ]]
	[ "$(cut -d' ' -f1 "$CLUSTER/dropped")" = SUBMIT ]
	[ "$(jobs_named lost1)" = 1 ]
}

@test "a master that commits a SUBMIT and loses its reply: the resent SUBMIT, with the same key, gets the same job" {
	fake_start drop 1 "${NOWQ_MASTER%%,*}"
	NOWQ_MASTER="unix:$FAKE_SOCK,$NOWQ_MASTER" run timeout 20 qsub -terse -h -N lost2 -b y true
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^[0-9]+$ ]]
	[ "$(jobs_named lost2)" = 1 ]
	[ "$(qstat -u '*' -s prz | awk -v n=lost2 'NR > 2 && $3 == n { print $1 }')" = "$output" ]
}

@test "the only master loses every reply: qsub sends the same SUBMIT again after reconnecting, then gives one error saying the outcome is unknown" {
	fake_start drop 1000
	t0=$(date +%s)
	NOWQ_MASTER="unix:$FAKE_SOCK" run timeout 40 qsub -terse -h -N lost3 -b y true
	t1=$(date +%s)
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == "qsub: error: "*"whether it took effect is unknown" ]]
	# Bounded: the failover time after the loss, not forever.
	[ $((t1 - t0)) -le 25 ]
	# Sent again, each time with the one key.
	[ "$(wc -l < "$CLUSTER/dropped")" -ge 2 ]
	[ "$(sort -u "$CLUSTER/dropped" | wc -l)" -eq 1 ]
	# A request without a key is never sent twice.
	: > "$CLUSTER/dropped"
	NOWQ_MASTER="unix:$FAKE_SOCK" run timeout 20 qhold 1
	[ "$status" -eq 1 ]
	[[ "$output" == *"lost the connection"* ]]
	[ "$(cat "$CLUSTER/dropped")" = "HOLD " ]
}

@test "a master that reads a SUBMIT and freezes: qsub asks the next master after 5 s, not 120 s" {
	fake_start hold 1
	t0=$(date +%s)
	NOWQ_MASTER="unix:$FAKE_SOCK,$NOWQ_MASTER" run timeout 30 qsub -terse -h -N held -b y true
	t1=$(date +%s)
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^[0-9]+$ ]]
	[ $((t1 - t0)) -le 10 ]
	[ "$(jobs_named held)" = 1 ]
}
