#!/usr/bin/env bats
# simexecd.bats: the load tool bench/simexecd against a real master: fifty simulated execds register, run 500 null jobs to completion, and honour a job's run time and a qdel.

load helpers

SIM="$top_builddir/bench/simexecd"
BULK="$top_builddir/bench/bulksub"

setup_file() {
	cluster_start
	# The real execd takes no work: every job goes to a simulated host.
	REAL=$(awk -F' *= *' '$1 == "name" { print $2 }' "$CLUSTER/execd-1.ini")
	export REAL
	qmod -d "$REAL" >/dev/null
}

# A simexecd left by a failed test exits when its master goes away.
teardown_file() { cluster_stop; }

sim_hosts() { qhost | awk '$1 ~ /^sim[0-9]+$/ { n++ } END { print n + 0 }'; }
sim_hosts_are() { [ "$(sim_hosts)" -eq "$1" ]; }

@test "50 simulated hosts run 500 null jobs to completion" {
	"$SIM" -n 50 -c 500 -o "$CLUSTER/sim.log" > "$CLUSTER/sim.out" 2>&1 &
	SIMPID=$!
	wait_until 20 sim_hosts_are 50
	qhost | awk '$1 ~ /^sim[0-9]+$/ && $NF != "idle" { exit 1 }'
	# Some by real qsub processes, the rest pipelined over one connection.
	for i in $(seq 20); do
		qsub -o /dev/null -e /dev/null -b y true >/dev/null
	done
	run "$BULK" 480 -o /dev/null -e /dev/null true
	[ "$status" -eq 0 ]
	[[ "$output" == "submitted 480 refused 0"* ]]
	# simexecd exits once it has seen 500 CHILD_TERMs acknowledged.
	wait_until 60 bash -c "! kill -0 $SIMPID"
	wait "$SIMPID"
	grep -qx 'dispatched 500 jobs' "$CLUSTER/sim.out"
	grep -qx 'ended 500 acked 500' "$CLUSTER/sim.out"
	grep -q '^dispatch_rate [0-9]* jobs/s' "$CLUSTER/sim.out"
	grep -q '^latency_ms median [0-9.]* ' "$CLUSTER/sim.out"
	# Every job once, spread over many hosts.
	[ "$(awk '{ print $1 }' "$CLUSTER/sim.log" | sort -u | wc -l)" -eq 500 ]
	[ "$(awk '{ print $3 }' "$CLUSTER/sim.log" | sort -u | wc -l)" -gt 10 ]
	# The master saw them all end well.
	[ "$(qstat -s pr | awk 'NR > 2' | wc -l)" -eq 0 ]
	[ "$(qstat -s z | awk 'NR > 2 && $5 == "z"' | wc -l)" -eq 500 ]
	[ "$(qacct -j | awk '$1 == "exit_status" && $2 == 0 { n++ } END { print n + 0 }')" -eq 500 ]
	# Fifty simulated hosts besides the real one, which is disabled.
	[ "$(sim_hosts)" -eq 50 ]
	[ "$(qhost | awk 'NR > 2' | wc -l)" -eq 51 ]
}

@test "a job with a run time shows running, and qdel ends it" {
	"$SIM" -n 2 -p slow -d 60000 > "$CLUSTER/slow.out" 2>&1 &
	SIMPID=$!
	wait_until 20 bash -c "qhost | grep -q '^slow2 '"
	id=$(qsub -terse -o /dev/null -e /dev/null -b y sleep 60)
	wait_until 20 state_is "$id" r
	host=$(qstat | awk -v id="$id" '$1 == id { print $8 }')
	[[ "$host" == all.q@slow[12] ]]
	qdel "$id"
	wait_until 20 job_finished "$id"
	[[ "$(job_reason "$id")" == *"killed by signal 9"* ]]
	kill "$SIMPID"
	wait "$SIMPID" || true
	grep -qx 'dispatched 1 jobs' "$CLUSTER/slow.out"
	SIMPID=
}
