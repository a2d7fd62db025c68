#!/usr/bin/env bats
# standby.bats: a primary and a hot standby on loopback (nowq start --masters 2): replication, failover after kill -9 during a submission storm, and resynchronisation by snapshot.

load helpers

setup() {
	CLUSTER=$(mktemp -d /tmp/nowq-e2e.XXXXXX)
	chmod 755 "$CLUSTER"
	export CLUSTER
	nowq start --dir "$CLUSTER" --masters 2 --execds 3 --slots 2 >/dev/null
	eval "$(nowq env --dir "$CLUSTER")"
	export NOWQ_MASTER
	wait_until 10 in_sync
}

teardown() {
	cluster_stop
}

in_sync() { qconf -sm | grep -q "in sync"; }
role_of() { qconf -sm --json | python3 -c "import json,sys; print([m['role'] for m in json.load(sys.stdin) if m['name'].endswith(':$1')][0])"; }
primary_is() { qconf -sm --json | python3 -c "import json,sys; m=[m for m in json.load(sys.stdin) if m.get('self')][0]; sys.exit(0 if m['role']=='primary' and m['name'].endswith(':$1') else 1)"; }
port_of() { sed -n 's/^listen *= *"127.0.0.1:\([0-9]*\)"/\1/p' "$1"; }

@test "the standby follows every commit: qconf -sm shows both in sync and a job submitted on the primary is in the standby's database" {
	run qconf -sm
	[ "$status" -eq 0 ]
	[[ "$output" == *primary* ]]
	[[ "$output" == *standby* ]]
	id=$(echo 'true' | qsub -terse -h)
	# The reply came only after the standby acknowledged: the row is there.
	run sqlite3 "$CLUSTER/qmaster-2/nowq.db" "SELECT count(*) FROM jobs WHERE id = $id"
	[ "$output" = 1 ]
	# A client that reaches the standby first is redirected to the primary.
	NOWQ_MASTER="unix:$CLUSTER/qmaster-2.sock,$NOWQ_MASTER" run qstat -j "$id"
	[ "$status" -eq 0 ]
}
