#!/usr/bin/env bats
# crash.bats: kill -9 of the master or an execd loses no acknowledged job, runs none twice, and loses no exit status.

load helpers

setup() {
	cluster_start
}

teardown() {
	cluster_stop
}

qmaster_pid() { cat "$CLUSTER/qmaster/qmaster.pid"; }
execd_pid() { cat "$CLUSTER/execd-1/execd.pid"; }

@test "kill -9 of qmaster during a burst of 200 submissions: every acknowledged job survives and runs exactly once" {
	ran="$CLUSTER/ran"
	: > "$ran"
	chmod 666 "$ran"
	acked="$CLUSTER/acked"
	# Each submission records its id only after qsub printed it: that is the acknowledgement.
	(
		for i in $(seq 1 200); do
			id=$(qsub -terse -o /dev/null -e /dev/null -b y sh -c "echo \$JOB_ID >> $ran") || continue
			echo "$id" >> "$acked"
		done
	) &
	burst=$!
	# Kill the master in the middle of the burst: a count, not a rate, so
	# a loaded machine (a sanitizer build at load 15 acknowledged about one
	# a second) only takes longer.
	acked_at_least() { [ "$(wc -l < "$acked" 2>/dev/null || echo 0)" -ge "$1" ]; }
	wait_until 300 acked_at_least 30
	kill -9 "$(qmaster_pid)"
	sleep 0.3
	nowq start --dir "$CLUSTER" >/dev/null
	wait "$burst" || true
	n=$(wc -l < "$acked")
	echo "acknowledged: $n" >&3
	[ "$n" -ge 30 ]
	# Wait until every acknowledged job has finished, then compare.
	all_done() { [ -z "$(qstat -s pr | awk 'NR > 2')" ]; }
	wait_until 300 all_done
	sort -n "$acked" > "$CLUSTER/acked.sorted"
	sort -n "$ran" > "$CLUSTER/ran.sorted"
	# Every acknowledged job ran, and no job ran twice.
	[ -z "$(comm -23 "$CLUSTER/acked.sorted" "$CLUSTER/ran.sorted")" ]
	[ -z "$(uniq -d "$CLUSTER/ran.sorted")" ]
	for id in $(head -5 "$CLUSTER/acked.sorted"); do
		job_finished "$id"
	done
}

@test "kill -9 of execd while a job runs: the job goes on and its exit status reaches the master" {
	# The job ends when the test says so, not after a time a loaded
	# machine could use up before the test looks.
	id=$(qsub -terse -o /dev/null -e /dev/null -b y sh -c "while [ ! -e $CLUSTER/go7 ]; do sleep 0.1; done; exit 7")
	wait_until 20 state_is "$id" r
	kill -9 "$(execd_pid)"
	sleep 0.5
	# The job is still running without its execd.
	pgrep -f "go7" >/dev/null
	touch "$CLUSTER/go7"
	nowq start --dir "$CLUSTER" >/dev/null
	wait_until 30 job_finished "$id"
	[ "$(job_field "$id" exit_status)" = 7 ]
}

@test "a job that ends while its execd is down is reported when the execd comes back" {
	id=$(qsub -terse -o /dev/null -e /dev/null -b y sh -c "while [ ! -e $CLUSTER/go5 ]; do sleep 0.1; done; exit 5")
	wait_until 20 state_is "$id" r
	kill -9 "$(execd_pid)"
	touch "$CLUSTER/go5"
	wait_until 20 eval '! pgrep -f go5 >/dev/null'
	[ "$(job_state "$id")" = r ]
	nowq start --dir "$CLUSTER" >/dev/null
	wait_until 30 job_finished "$id"
	[ "$(job_field "$id" exit_status)" = 5 ]
}

@test "with the master down, execd keeps its job and delivers the end once the master is back" {
	id=$(qsub -terse -o /dev/null -e /dev/null -b y sh -c "while [ ! -e $CLUSTER/go4 ]; do sleep 0.1; done; exit 4")
	wait_until 20 state_is "$id" r
	kill -9 "$(qmaster_pid)"
	touch "$CLUSTER/go4"
	wait_until 20 eval '! pgrep -f go4 >/dev/null'
	nowq start --dir "$CLUSTER" >/dev/null
	wait_until 30 job_finished "$id"
	[ "$(job_field "$id" exit_status)" = 4 ]
}

@test "qdel of a running job while its execd is down takes effect when the execd comes back" {
	id=$(qsub -terse -o /dev/null -e /dev/null -b y sleep 300)
	wait_until 20 state_is "$id" r
	kill -9 "$(execd_pid)"
	run qdel "$id"
	[ "$status" -eq 0 ]
	[ "$(job_state "$id")" = dr ]
	nowq start --dir "$CLUSTER" >/dev/null
	wait_until 30 job_finished "$id"
}
